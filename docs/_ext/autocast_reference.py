"""``autocast-demo-reference``: the reference tables, generated from the code they describe.

``.. autocast-demo-reference:: conf`` lists :data:`sphinx_autocast_demo.config.OPTIONS`;
``.. autocast-demo-reference:: autocast-demo`` (or ``autocast-demo-setup``,
``autocast-demo-summary``) lists a directive's options from its ``known`` tuple, described by
:data:`DESCRIPTIONS` below. An option the code has and this file does not describe (or the other
way round) is a warning, and the docs build runs with ``-W``: the page cannot drift.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from docutils import nodes
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

from sphinx_autocast_demo import config, directives, summary

if TYPE_CHECKING:
    from sphinx.application import Sphinx

logger = logging.getLogger(__name__)

#: option -> (what to write, default, what it does). Defaults that follow a conf value name it.
DESCRIPTIONS: dict[str, dict[str, tuple[str, str, str]]] = {
    "autocast-demo": {
        "values": ("comma-separated values", "``autocast_demo_values``",
                   "Values the demo runs under: ``same_as_forward``, ``off``, ``autocast`` (the "
                   "forward's own autocast as a one-item kwargs list), or ``name=<Python literal>``, "
                   "e.g. ``fp16=[{\"device_type\": \"cpu\", \"dtype\": torch.float16}]``."),
        "expect": ("``value: outcome`` pairs", "none (warns with the line to add)",
                   "What compiled does against eager under each value: ``matches``, ``differs`` "
                   "or ``raises <ExceptionName>``; ``*`` stands for every value."),
        "expect-output": ("``[value]`` blocks", "none",
                          "The printed output of the compiled run, per value (``[*]`` for all); "
                          "addresses, timings and warning locations are normalised away."),
        "config": ("dotted path", "``autocast_demo_config``",
                   "Another compile-time config to vary; its values must then be written "
                   "``name=literal``."),
        "backend": ("``aot_eager``, ``inductor``, ``eager``", "``autocast_demo_backend``",
                    "Backend for the ``torch.compile`` calls of the snippet that name none."),
        "device": ("``cpu``, ``cuda``", "``autocast_demo_device``",
                   "Device of the ``autocast`` value; ``cuda`` runs in a fresh interpreter."),
        "dtype": ("``bfloat16``, ``float16``, ``float32``", "``autocast_demo_dtype``",
                  "Autocast dtype of the ``autocast`` value."),
        "timeout": ("seconds, > 0 and at most 86400 (24 h)", "``autocast_demo_timeout``",
                    "How long one run (one value, compiled or eager) may take."),
        "grad-tolerance": ("number >= 0", "``autocast_demo_grad_tolerance``",
                           "Gradients match when ``|c - e| <= tol * (1 + |e|)``; 0 is bitwise."),
        "output-tolerance": ("number >= 0", "``autocast_demo_output_tolerance``",
                             "The same for every other tensor."),
        "group": ("name", "none",
                  "Run only the setup blocks of this group (and the page's ungrouped ones)."),
        "name": ("HTML id", "``autocast-demo-N``",
                 "The demo's id: links (and the compatibility matrix) point at it."),
        "caption": ("text", "none", "A caption shown above the code, and used by the matrix."),
        "show": ("``table``, ``record``, ``outputs``", "``table``",
                 "What the page shows of the results: the full table; only each value's outcome "
                 "and whether the record holds (for a demo that is not about compiled against "
                 "eager); or only what the snippet printed. The checks are the same."),
    },
    "autocast-demo-setup": {
        "group": ("name", "none (every demo of the page)",
                  "Run this code only before the demos of this group."),
        "show": ("flag", "hidden", "Show the setup code in the page."),
    },
    "autocast-demo-summary": {},
}

CLASSES: dict[str, Any] = {
    "autocast-demo": directives.AutocastDemo,
    "autocast-demo-setup": directives.AutocastDemoSetup,
    "autocast-demo-summary": summary.AutocastDemoSummary,
}


def _plain_bars(text: str) -> str:
    """``|x|`` in help text means absolute value, not a reST substitution."""
    return text.replace("|", "\\|")


def _choices(choices: tuple[str, ...]) -> str:
    return (" One of " + ", ".join(f"``{c!r}``" for c in choices) + ".") if choices else ""


def known_options(directive: str) -> tuple[str, ...]:
    return tuple(getattr(CLASSES[directive], "known", ()) or ())


def drift(directive: str) -> list[str]:
    """Options the code and :data:`DESCRIPTIONS` disagree on, in words (empty: in sync)."""
    code, doc = set(known_options(directive)), set(DESCRIPTIONS.get(directive, {}))
    return ([f":{o}: is an option of {directive} but is not described" for o in sorted(code - doc)]
            + [f":{o}: is described but {directive} has no such option" for o in sorted(doc - code)])


class Reference(SphinxDirective):
    required_arguments = 1

    def table(self, header: list[str], rows: list[list[str]], widths: list[int]) -> nodes.table:
        # colwidths-given: the HTML writer then emits the widths, and the page wraps to them.
        table = nodes.table(classes=["autocast-demo-reference", "colwidths-given"])
        group = nodes.tgroup(cols=len(header))
        table += group
        for width in widths:
            group += nodes.colspec(colwidth=width)
        head = nodes.thead()
        group += head
        body = nodes.tbody()
        group += body
        for target, cells in ((head, header), *((body, row) for row in rows)):
            row_node = nodes.row()
            for text in cells:
                entry = nodes.entry()
                para = nodes.paragraph()
                para += self.state.inline_text(text, self.lineno)[0]
                entry += para
                row_node += entry
            target += row_node
        return table

    def run(self) -> list[nodes.Node]:
        what = self.arguments[0]
        if what == "conf":
            rows = [[f"``{config.PREFIX}{o.name}``", " or ".join(t.__name__ for t in o.types),
                     f"``{o.default!r}``", _plain_bars(o.description) + _choices(o.choices)]
                    for o in config.OPTIONS]
            return [self.table(["name", "type", "default", "what it does"], rows, [26, 10, 20, 60])]
        if what not in CLASSES:
            logger.warning(f"autocast-demo-reference: unknown argument {what!r}",
                           location=self.get_location())
            return []
        for problem in drift(what):
            logger.warning(f"autocast-demo-reference: {problem}", location=self.get_location())
        described = DESCRIPTIONS.get(what, {})
        if not known_options(what):
            return [nodes.paragraph(text=f"{what} takes no options.")]
        rows = [[f"``:{o}:``", *described.get(o, ("?", "?", "?"))] for o in known_options(what)]
        return [self.table(["option", "value", "default", "what it does"], rows, [18, 20, 22, 50])]


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_directive("autocast-demo-reference", Reference)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
