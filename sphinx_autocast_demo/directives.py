"""``autocast-demo`` and ``autocast-demo-setup``: read the writer's input, record it, emit nodes.

The directives are cheap and pure: they validate, record a :class:`Demo` in the environment and
leave a placeholder that :mod:`.render` fills after the build has run everything.
"""

from __future__ import annotations

import difflib
import os
import re
import textwrap
from dataclasses import replace
from typing import TYPE_CHECKING, Any, ClassVar, Literal, cast

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective
from sphinx.util.logging import is_suppressed_warning

from . import docstrings, options, syntax
from .config import Settings, default_dtype, settings
from .model import (
    DEFAULT_CONFIG,
    WARNING_TYPE,
    Code,
    Demo,
    Finding,
    Location,
    OptionSpan,
    Setup,
    Show,
    SourceMap,
    Tolerance,
)
from .scopes import never, split_scope
from .state import doc_state, state

if TYPE_CHECKING:
    from collections.abc import Callable

logger = logging.getLogger(__name__)

#: The opening line of a MyST directive: its fence, then any text after the directive's name.
MYST_FENCE = re.compile(r"^\s*(?:`{3,}|~{3,}|:{3,})\{[^}]*\}(.*)$")
#: A MyST fence in the file, after what nests it (indentation, a list marker, ``>``).
MYST_FENCE_AT = re.compile(r"^((?:[\s>]|[-*+](?=\s)|\d{1,9}[.)](?=\s))*)(?:`{3,}|~{3,}|:{3,})\{")
AUTOMATIC_ID = re.compile(r"^autocast-demo-\d+$")
YAML_KEY = re.compile(r"^[\"']?([\w-]+)[\"']?\s*:(?:\s|$)")


class results_placeholder(nodes.General, nodes.Element):
    """Replaced by the results of demo ``ident`` when the doctree is resolved."""


class Unknown(str):
    """The value of an option the directive does not have (kept so we can say so)."""

    __slots__ = ()


class _OptionSpec(dict[str, "Callable[[str], Any]"]):
    # docutils and MyST both look options up with [] and drop (MyST: only warn about) the
    # unknown ones; answering every name lets us report them ourselves, located, in both.
    def __missing__(self, name: str) -> Callable[[str], Any]:
        return lambda value: Unknown(value or "")


def _text(value: str | None) -> str:
    return (value or "").strip()


def _spec(table: tuple[options.DirectiveOption, ...]) -> _OptionSpec:
    # Every option is read as text (a flag's too: "given" is its being in self.options); its
    # kind is applied by options.read, so that its errors are ours, located.
    return _OptionSpec((o.name, _text) for o in table)


class _Base(SphinxDirective):
    has_content = True
    table: ClassVar[tuple[options.DirectiveOption, ...]] = ()  # from options.DIRECTIVES
    known: ClassVar[tuple[str, ...]] = ()  # the table's names
    # What to write instead of an option block that myst-parser cannot read: colon, YAML form.
    forms: ClassVar[tuple[str, str]] = ("", "")

    def run(self) -> list[nodes.Node]:
        try:
            self.source_map = self.read_options()
        except syntax.SyntaxProblem as exc:
            return self.problem(str(exc), getattr(exc, "line", None))
        problem = self.unknown_options()
        if problem:
            return self.problem(problem, self.unknown_option_line())
        return self.make()

    def make(self) -> list[nodes.Node]:
        raise NotImplementedError

    def problem(self, message: str, line: int | None = None) -> list[nodes.Node]:
        """Report a writer's mistake at its line and keep the build going."""
        location = Location(self.source_path, line or self.doc_line)
        logger.warning(f"{self.name}: {message}", type=WARNING_TYPE, subtype="directive",
                       location=str(location))
        doc_state(self.env, self.env.docname).problems.append(
            Finding(severity="error", subtype="directive", message=f"{self.name}: {message}",
                    location=location)
        )
        warning = nodes.warning()
        warning += nodes.paragraph(text=f"This demo was not checked: {message}")
        return [warning]

    def unknown_options(self) -> str | None:
        for name, value in self.options.items():
            if isinstance(value, Unknown):
                close = difflib.get_close_matches(name, self.known, n=1)
                hint = f"; did you mean :{close[0]}:?" if close else ""
                return f"unknown option :{name}:{hint} (options: {', '.join(self.known)})"
        return None

    def unknown_option_line(self) -> int | None:
        for name, value in self.options.items():
            if isinstance(value, Unknown):
                return self.option_line(name)
        return None

    @property
    def myst(self) -> bool:
        # Ask who parsed us: the offsets alone cannot tell (a MyST body right under its fence
        # has content_offset 0, like its first item's offset).
        return "myst_parser" in type(self.state_machine).__module__

    def code(self) -> Code:
        items = self.content.items
        if not self.myst:  # docutils: absolute, 0-based
            lines = tuple(offset + 1 for _source, offset in items)
        else:  # MyST: offsets count from the body, content_offset + 1 lines below the fence
            lines = tuple(self.lineno + self.content_offset + 1 + offset for _source, offset in items)
        if self.in_docstring:
            return Code(text="\n".join(self.content), source=self.source_path,
                        lines=tuple(line + self.in_docstring[1] for line in lines))
        source = self.content.items[0][0] if self.content.items else self.get_source_info()[0]
        # docutils names an included file relative to the current directory: make it absolute
        # like every other source, so locations do not depend on where sphinx-build ran.
        source = os.path.abspath(source)
        return Code(text="\n".join(self.content), source=source, lines=lines)

    @property
    def in_docstring(self) -> tuple[str, int] | None:
        """For a directive in a docstring found in its ``.py`` file: (the file, the number to
        add to a docstring line to get the file's); see :mod:`.docstrings`."""
        if not hasattr(self, "_in_docstring"):
            source, line = self.get_source_info()
            self._in_docstring = (None if self.myst else docstrings.offset(
                source, self.block_text.splitlines(), line or self.lineno))
        return self._in_docstring

    @property
    def doc_line(self) -> int:
        """The directive's line in its own file (``self.lineno`` counts across included files;
        a docstring's lines are numbered from the docstring)."""
        line = self.get_source_info()[1] or self.lineno
        return line + self.in_docstring[1] if self.in_docstring else line

    def option_line(self, name: str) -> int:
        """The line where ``:name:`` is written (for messages), else the directive's."""
        found: SourceMap | None = getattr(self, "source_map", None)  # set by run()
        return found.line_of(name) if found else self.doc_line

    def read_options(self) -> SourceMap:
        """Where each option is written; in MyST, also take the options myst-parser could not
        read."""
        if self.myst:
            return self.read_myst_options()
        # docutils has read the options (a field list that ends at the first blank line) and
        # block_text starts at the directive's line (its lines are the file's, dedented when
        # nested): find each option's lines in it.
        fields, end = syntax.option_fields(self.block_text.splitlines()[1:])
        return self.source_map_of("rst", self.doc_line + 1, fields, end)

    def source_map_of(self, style: Literal["rst", "colon"], first: int,
                      fields: list[syntax.OptionField], end: int) -> SourceMap:
        """The map of an option block whose first line is line ``first`` of the file."""
        spans: list[OptionSpan] = []
        for f in fields:
            after = first + f.line + 1 + len(f.more)
            if f.name:
                spans.append(OptionSpan(f.name, first + f.line, after))
            elif spans:  # MyST's ``:  more`` line continues the option above it
                spans[-1] = OptionSpan(spans[-1].name, spans[-1].first, after)
        return SourceMap(self.source_path, self.doc_line, style, first, first + end, tuple(spans))

    @property
    def source_path(self) -> str:
        # docutils names an included file relative to the current directory: make it absolute
        # like every other source, so locations do not depend on where sphinx-build ran.
        if self.in_docstring:
            return os.path.abspath(self.in_docstring[0])
        return os.path.abspath(self.get_source_info()[0])

    # MyST: myst-parser reads an option block as YAML. In the colon form it takes only the lines
    # that start with ":", so the indented lines that continue an option in reST would reach us
    # as code; where its YAML reader fails it drops every option with a warning and runs the
    # directive anyway. Read the block again from the source, as reST would, and say so.

    def read_myst_options(self) -> SourceMap:
        fence = self.doc_line
        head = self.myst_head()
        if head is None:
            return SourceMap(self.source_path, fence, "colon", fence + 1, fence + 1)
        if head and head[0].startswith("---"):  # myst-parser's test for a YAML block
            found, end = self.myst_yaml(head, fence)
            self.check_myst_body(head, end, fence, continued=None)
        elif "\n".join(head).lstrip().startswith(":"):  # and for the colon form
            fields, end = syntax.option_fields(head)
            self.myst_colon(head, fields, end, fence)
            found = self.source_map_of("colon", fence + 1, fields, end)
            named = [f.name for f in fields if f.name]
            self.check_myst_body(head, end, fence, continued=named[-1] if named else None)
        else:
            found = SourceMap(self.source_path, fence, "colon", fence + 1, fence + 1)
            self.check_myst_body(head, 0, fence, continued=None)
        return found

    def myst_head(self) -> list[str] | None:
        """The source lines between the directive's fence and its closing fence."""
        lines = self.block_text.splitlines()
        fence = MYST_FENCE.match(lines[0]) if lines else None
        if fence:  # myst-parser >= 5 gives the whole block
            return None if fence.group(1).strip() else lines[1:-1]
        # myst-parser < 5 gives the body only: read what lies under the fence in the file
        try:
            with open(self.get_source_info()[0], encoding="utf-8") as f:
                source = f.read().split("\n")
        except OSError:
            return None
        start = self.doc_line
        end = start + self.content_offset + len(self.content)
        if not 0 < start <= len(source):
            return None
        # In a list item or a block quote the file's lines carry the item's indentation
        # (``- ``, ``1. ``, ``> ``) that myst-parser removed from the body: remove it here too,
        # or an indented first code line looks like a continued option.
        opener = MYST_FENCE_AT.match(source[start - 1])
        return syntax.unnest(source[start:end], len(opener.group(1)) if opener else 0)

    def myst_colon(self, head: list[str], fields: list[syntax.OptionField], end: int,
                   fence: int) -> None:
        lines = [fence + 1 + f.line for f in fields]
        values = self.myst_tokens([f.text[1:] for f in fields], lines, self.forms[0])
        if any(f.more for f in fields):
            owner = ""
            for f in fields:
                owner = f.name or owner
                if f.more and owner:
                    values[owner] = (values.get(owner) or "") + "\n" + syntax.continuation(f.more)
            spec = self.option_spec
            assert spec is not None  # both directives have options
            self.options = {name: spec[name](value) for name, value in values.items()}
            start = end + 1 if end < len(head) and not head[end].strip() else end
            self.content = StringList(head[start:], self.get_source_info()[0])
            self.content_offset = start

    def myst_yaml(self, head: list[str], fence: int) -> tuple[SourceMap, int]:
        close = next((i for i in range(1, len(head)) if head[i].startswith("---")), None)
        if close is None:
            raise _at(syntax.SyntaxProblem(
                "the option block opened by --- has no closing ---, so the whole body would be "
                "read as options: put a line --- under the last option"), fence + 1)
        block = textwrap.dedent("\n".join(head[1:close])).split("\n")
        lines = [fence + 2 + i for i in range(len(block))]
        self.myst_tokens(block, lines, self.forms[1])
        keys = [(m.group(1), line) for text, line in zip(block, lines, strict=True)
                if (m := YAML_KEY.match(text))]
        end = fence + 1 + close  # the closing ---
        # A key's value runs to the next key (a ``|`` block's lines, say) or the closing ---.
        spans = tuple(OptionSpan(name, line, keys[i + 1][1] if i + 1 < len(keys) else end)
                      for i, (name, line) in enumerate(keys))
        return SourceMap(self.source_path, fence, "yaml", fence + 2, end, spans), close + 1

    def myst_tokens(self, texts: list[str], lines: list[int], form: str) -> dict[str, str]:
        """The options as myst-parser reads them; where it cannot, a located error."""
        from myst_parser.parsers.options import TokenizeError, options_to_items

        try:
            items, _state = options_to_items("\n".join(texts))
        except TokenizeError as err:
            line = lines[min(max(err.problem_mark.line, 0), len(lines) - 1)] if lines else None
            raise _at(syntax.SyntaxProblem(
                f"this option block cannot be read (myst-parser: {err.problem}), so none of "
                f"its options would apply; write it like this:\n{form}"), line or self.doc_line
            ) from None
        return dict(items)

    def check_myst_body(self, head: list[str], end: int, fence: int, continued: str | None) -> None:
        """Lines that can only be options must not become the snippet."""
        start = end
        blank = start < len(head) and not head[start].strip()
        if blank:
            start += 1  # myst-parser drops one blank line between the options and the body
        if start >= len(head):
            return
        first, line = head[start], fence + 1 + start
        if syntax.is_option_line(first) and syntax.FIELD_RE.match(first.lstrip()):
            raise _at(syntax.SyntaxProblem(
                f"{first.strip()!r} is below the blank line or --- that ends the options, so "
                "it would be read as code: move it up to the other options (no blank line "
                "between the fence and the options, or among them)"), line)
        if blank and continued and first[:1].isspace():
            raise _at(syntax.SyntaxProblem(
                f"this line is indented like a continuation of :{continued}:, but the blank "
                "line above it ends the options, so it would be read as code: remove the "
                f"blank line to continue :{continued}:, or unindent the code"), line)


class AutocastDemo(_Base):
    table = options.DIRECTIVES["autocast-demo"]
    known = tuple(o.name for o in table)
    option_spec = _spec(table)
    forms = (
        ":values: off, same_as_forward\n:expect: off: matches,\n   same_as_forward: differs\n"
        ":expect-output:\n   [off]\n   16.0",
        "---\nvalues: off, same_as_forward\nexpect: |\n  off: matches\n  same_as_forward: "
        "differs\nexpect-output: |\n  [off]\n  16.0\n---",
    )

    def make(self) -> list[nodes.Node]:
        if not "".join(self.content).strip():
            return self.problem("the body is empty: write the Python snippet to run under it")
        try:
            demo = self.demo()
        except syntax.SyntaxProblem as exc:
            return self.problem(str(exc), getattr(exc, "line", None))
        page = doc_state(self.env, self.env.docname)
        page.demos[demo.ident] = demo
        return [self.container(demo)]

    def value(self, name: str, conf: Settings, default: Any = None) -> Any:
        """Option ``name`` read and checked as :mod:`.options` declares it, located."""
        try:
            return options.read(options.named(self.table)[name], self.options, conf, default)
        except syntax.SyntaxProblem as exc:
            raise _at(exc, self.option_line(name)) from None

    def warn_never(self, expect: tuple[tuple[str, str], ...]) -> None:
        """A scoped record no torch release falls in checks nothing: the writer must know,
        though the demo still runs (its other records hold or not as before)."""
        for name, outcome in expect:
            scope = split_scope(name)[1]
            if scope and never(scope):
                where = Location(self.source_path, self.option_line("expect"))
                logger.warning(f"{self.name}: :expect: {name}: {outcome} never applies: no torch "
                               "release falls in its scope", type=WARNING_TYPE, subtype="scope",
                               location=str(where))

    def demo(self) -> Demo:
        conf = settings(self.config)
        device = self.value("device", conf)
        dtype = self.value("dtype", conf, conf.dtype if device == conf.device else
                           default_dtype(device))
        config = self.value("config", conf)
        try:
            variants = syntax.parse_values(self.value("values", conf), device, dtype,
                                           builtins=config == DEFAULT_CONFIG)
        except syntax.SyntaxProblem as exc:
            raise _at(exc, self.option_line("values"), "values") from None
        names = tuple(v.name for v in variants)
        try:
            expect = syntax.parse_expect(self.options.get("expect", ""), names)
        except syntax.SyntaxProblem as exc:
            raise _at(exc, self.option_line("expect"), "expect") from None
        self.warn_never(expect)
        try:
            expect_output = syntax.parse_expect_output(self.options.get("expect-output", ""), names)
        except syntax.SyntaxProblem as exc:
            raise _at(exc, self.option_line("expect-output"), "expect-output") from None
        demo = Demo(
            docname=self.env.docname,
            ident=self.ident(),
            lineno=self.doc_line,
            code=self.code(),
            group=self.value("group", conf) or None,
            config=config,
            variants=variants,
            expect=expect,
            expect_output=expect_output,
            backend=self.value("backend", conf),
            device=device,
            dtype=dtype,
            timeout=self.value("timeout", conf),
            tolerance=Tolerance(grad=self.value("grad-tolerance", conf),
                                output=self.value("output-tolerance", conf)),
            source_map=self.source_map,
            show=cast("Show", self.value("show", conf)),
            global_setup=state(self.env).global_setup,
            alike="alike" in self.options,
        )
        # The standard values it does not name, run too so that the alike check can tell
        # whether its values differ at all; none where that check does not apply, nor where
        # conf.py silences its warning.
        if (demo.held_to_alike and config == DEFAULT_CONFIG
                and not is_suppressed_warning(WARNING_TYPE, "alike", self.config.suppress_warnings)):
            demo = replace(demo, probes=syntax.unnamed_builtins(variants, device, dtype))
        return demo

    def ident(self) -> str:
        """The demo's HTML id, which is also the key of its result: unique on its page."""
        demos = doc_state(self.env, self.env.docname).demos
        name = self.options.get("name")
        if not name:  # the first free autocast-demo-<n>: an earlier demo may have that :name:
            number = len(demos) + 1
            while f"autocast-demo-{number}" in demos:
                number += 1
            return f"autocast-demo-{number}"
        ident = nodes.make_id(name)
        if not ident:
            raise _at(syntax.SyntaxProblem(f":name: {name!r} gives no HTML id: use letters and "
                                           "digits, e.g. :name: fp16-overflow"),
                      self.option_line("name"))
        taken = demos.get(ident)
        if taken is None:
            return ident
        where = (f"line {taken.lineno}" if taken.code.source == self.code().source
                 else str(taken.location))
        automatic = (" (demos without :name: get autocast-demo-<n>)"
                     if AUTOMATIC_ID.match(ident) else "")
        free = next(f"{ident}-{n}" for n in range(2, len(demos) + 3) if f"{ident}-{n}" not in demos)
        gives = " is" if ident == name else f" gives the HTML id {ident!r}, which is"
        raise _at(syntax.SyntaxProblem(
            f":name: {name!r}{gives} already the id of the demo at {where}{automatic}; "
            "each demo needs its own, or one would show the other's results: choose another "
            f"name, e.g. :name: {free}"), self.option_line("name"))

    def container(self, demo: Demo) -> nodes.Element:
        box = nodes.container(classes=["autocast-demo"], ids=[demo.ident])
        self.set_source_info(box)
        if self.options.get("caption"):
            # Inline markup as in the page's own language (``patch`` in reST, `patch` in MyST),
            # like the captions of Sphinx's code-block.
            caption = self.options["caption"]
            parsed, messages = self.state.inline_text(caption, self.option_line("caption"))
            box += nodes.caption(caption, "", *parsed)
            box += messages
        block = nodes.literal_block(demo.code.text, demo.code.text, language="python")
        self.set_source_info(block)
        box += block
        box += results_placeholder(ident=demo.ident)
        return box


class AutocastDemoSetup(_Base):
    """Code that runs before the demos of its page (or of ``:group:``), hidden unless ``:show:``."""

    table = options.DIRECTIVES["autocast-demo-setup"]
    known = tuple(o.name for o in table)
    option_spec = _spec(table)
    forms = (":group: fp16\n:show:", "---\ngroup: fp16\nshow:\n---")

    def make(self) -> list[nodes.Node]:
        if not "".join(self.content).strip():
            return self.problem("the body is empty: write the setup code in it")
        code = self.code()
        doc_state(self.env, self.env.docname).setups.append(
            Setup(code=code, group=self.options.get("group") or None)
        )
        if "show" not in self.options:
            return []
        block = nodes.literal_block(code.text, code.text, language="python",
                                    classes=["autocast-demo-setup"])
        self.set_source_info(block)
        return [block]


def _at(exc: syntax.SyntaxProblem, line: int, option: str = "") -> syntax.SyntaxProblem:
    if option:  # name the option: the writer sees the message away from the source
        exc = syntax.SyntaxProblem(f":{option}: {exc}")
    exc.line = line  # type: ignore[attr-defined]
    return exc
