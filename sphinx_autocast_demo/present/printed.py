"""What a demo's runs printed, as the page shows it: a block per value, or tabs.

Apart from the results table because it is the runs' own text (published as they wrote it,
with a short traceback or how a run that did not finish ended), not a judgement of them.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from docutils import nodes

from ..core.i18n import _, on_page
from ..core.model import Frame
from ..core.printed import LOG_LINE, WARNING_LINE, holds_uncompared, writers_frames
from ..core.publish import publish
from ..engine.protocol import CODE_FILE
from ..judge.notes import compile_text
from ..judge.run_errors import how_it_ended

if TYPE_CHECKING:
    from sphinx.application import Sphinx

    from ..core.model import DemoResult, RunRecord


def printed(result: DemoResult, app: Sphinx, tabs: bool = False) -> list[nodes.Node]:
    """What each value's compiled run printed (with its short traceback), and the eager run's
    output where it is not the same.

    A run that never started printed nothing: why it did not is in the table. A value whose
    runs printed nothing says so in words, never as an empty box.
    """
    compiled = [(vr.variant.name, _run_text(result, vr.compiled, app)) for vr in result.variants]
    eager = [(name, text) for (name, ctext), vr in zip(compiled, result.variants, strict=True)
             if vr.eager is not None and not vr.eager.not_run
             and (text := _run_text(result, vr.eager, app)) != ctext]
    silent = [name for name, text in compiled if not text]
    blocks = _fold(compiled, len(result.variants))
    blocks += [(_("{value}, run eagerly").format(value=name), text)
               for name, text in _fold(eager, len(result.variants))]
    blocks = [(name, text) for name, text in blocks if text]
    if not blocks:
        return []
    # The legend's "every line the snippet printed" leaves these out: said where they show.
    uncompared = ([nodes.paragraph(text=_("Warnings and torch's log lines shown here are not "
                                          "compared with eager: the compiler prints its own "
                                          "when it compiles, not each time the code runs."),
                                   classes=["autocast-demo-silent"])]
                  if any(holds_uncompared(vr.compiled.output) for vr in result.variants) else [])
    if tabs and len(blocks) > 1:
        return [tab_set(result.demo.ident, blocks), *_silent(silent), *uncompared]
    out: list[nodes.Node] = []
    for name, text in blocks:
        box = nodes.container(classes=["autocast-demo-output"])
        box += nodes.paragraph("", "", nodes.strong(text=_("Printed under {value}:").format(value=name)))
        box += nodes.literal_block(text, text, language="none")
        out.append(box)
    return out + _silent(silent) + uncompared


def compiled(result: DemoResult) -> list[nodes.Node]:
    """For a demo that records what compiling did (``:expect-compile:``): what it did under
    each value, its breaks and recompilations at the page's lines; one line where every value
    did the same."""
    if not result.demo.expect_compile:
        return []
    said = [(vr.variant.name, on_page(compile_text(result, vr.compiled.compile)))
            for vr in result.variants if vr.compiled.compile is not None]
    def heading(name: str) -> str:
        return (_("Compiled:") if result.demo.varies_nothing
                else _("Compiled under {value}:").format(value=name))

    return [nodes.paragraph("", "", nodes.strong(text=heading(name)), nodes.Text(" " + text),
                            classes=["autocast-demo-compiled"])
            for name, text in _fold(said, len(result.variants))]


def _fold(blocks: list[tuple[str, str]], values: int) -> list[tuple[str, str]]:
    """One block for "every value" when every value printed the same (something)."""
    if 1 < values == len(blocks) and len({text for _, text in blocks}) == 1 and blocks[0][1]:
        return [(_("every value"), blocks[0][1])]
    return blocks


def readable_warnings(result: DemoResult, text: str) -> str:
    """Each warning of ``text`` as Python prints one (``file:line: Category: message``), its
    message's own line breaks back, and the writer's code named by its page and line rather
    than by the run's name for it (``<autocast-demo-0>``)."""
    def shown(found: re.Match[str]) -> str:
        category, message, place, line = found.groups()
        if place.startswith(CODE_FILE):  # <autocast-demo-N>: the demo's N-th code part
            where = result.where_frame(Frame(int(place[len(CODE_FILE):-1]), int(line), "", ""))
            place, line = where.path, str(where.line)
        message = message.replace("\\n", "\n")  # (warned.py wrote its line breaks as \n)
        return f"{place}:{line}: {category}: {message}"
    return WARNING_LINE.sub(shown, text)


def readable_logs(result: DemoResult, text: str) -> str:
    """Each of torch's log records as its message alone, without the build machine's
    timestamp, pid and path, its own line breaks back (warned.py wrote them as \n), and the
    writer's code named by its page and line."""
    text = writers_frames(LOG_LINE.sub("<log> ", text), rename=False)
    text = re.sub(r"(?m)^<log>(?: (.*))?$", lambda found: (found.group(1) or "").replace("\\n", "\n"),
                  text)
    text = re.sub(r'File "' + re.escape(CODE_FILE) + r'(\d+)>", line (\d+)',
                  lambda m: 'File "{}", line {}'.format(*_at(result, int(m.group(1)), int(m.group(2)))),
                  text)
    return re.sub(re.escape(CODE_FILE) + r"(\d+)>:(\d+)", lambda m: "{}:{}".format(
        *_at(result, int(m.group(1)), int(m.group(2)))), text)


def _at(result: DemoResult, part: int, line: int) -> tuple[str, int]:
    where = result.where_frame(Frame(part, line, "", ""))
    return where.path, where.line


def _run_text(result: DemoResult, run: RunRecord, app: Sphinx) -> str:
    text = readable_logs(result, readable_warnings(result, run.output.rstrip()))
    # (an error of a kind is the engine's finding, said in the row's cell: not printed output)
    if run.error is not None and not run.error.kind:
        text = (text + "\n" if text else "") + result.traceback(run.error)
    elif run.status in ("timeout", "crashed"):
        text = (text + "\n" if text else "") + on_page(how_it_ended(result, run))
    return publish(text, app)


def _silent(names: list[str]) -> list[nodes.Node]:
    if not names:
        return []
    return [nodes.paragraph(text=_("Nothing printed under {values}.").format(values=", ".join(names)),
                            classes=["autocast-demo-silent"])]


def use_tabs(app: Sphinx) -> bool:
    """sphinx-design is loaded and the output is HTML: its tabs have CSS and a sync script."""
    return "sphinx_design" in app.extensions and app.builder.format == "html"


def tab_set(ident: str, blocks: list[tuple[str, str]]) -> nodes.container:
    """One sphinx-design tab per value, synchronised across the site by value name.

    Built in sphinx-design's HTML form (input, label, content): its own post-transform, which
    turns tab-item directives into that form, has already run when results are rendered.
    """
    from sphinx_design.tabs import sd_tab_input, sd_tab_label

    outer = nodes.container(classes=["autocast-demo-output"])
    outer += nodes.paragraph("", "", nodes.strong(text=_("Printed under each value:")))
    box = nodes.container(classes=["sd-tab-set", "autocast-demo-tabs"])
    outer += box
    for index, (name, text) in enumerate(blocks):
        item = f"autocast-demo-{ident}-tab-{index}"
        box += sd_tab_input("", id=item, set_id=f"autocast-demo-{ident}-tabs", type="radio",
                            checked=index == 0)
        box += sd_tab_label("", name, input_id=item, classes=["sd-tab-label"],
                            sync_group="autocast-demo-value", sync_id=name,
                            aria_controls=f"{item}-content")
        content = nodes.container(classes=["sd-tab-content"], ids=[f"{item}-content"])
        content += nodes.literal_block(text, text, language="none")
        box += content
    return outer
