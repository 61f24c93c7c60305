"""``autocast-demo`` and ``autocast-demo-setup``: read the writer's input, record it, emit nodes.

The directives are cheap and pure: they validate, record a :class:`Demo` in the environment and
leave a placeholder that :mod:`.render` fills after the build has run everything.
"""

from __future__ import annotations

import difflib
import math
import os
from typing import TYPE_CHECKING, Any, ClassVar

from docutils import nodes
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

from . import syntax
from .config import BACKENDS, DEVICES, DTYPES, TIMEOUT_RULE, TOLERANCE_RULE, number_problem, settings
from .model import DEFAULT_CONFIG, WARNING_TYPE, Code, Demo, Finding, Setup, Tolerance
from .state import doc_state

if TYPE_CHECKING:
    from collections.abc import Callable

logger = logging.getLogger(__name__)


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


class _Base(SphinxDirective):
    has_content = True
    known: ClassVar[tuple[str, ...]] = ()

    def problem(self, message: str, line: int | None = None) -> list[nodes.Node]:
        """Report a writer's mistake at its line and keep the build going."""
        source, lineno = self.get_source_info()
        location = f"{source}:{line or lineno}"
        logger.warning(f"{self.name}: {message}", type=WARNING_TYPE, subtype="directive",
                       location=location)
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

    def code(self) -> Code:
        items = self.content.items
        # Ask who parsed us: the offsets alone cannot tell (a MyST body right under its fence
        # has content_offset 0, like its first item's offset).
        if "myst_parser" not in type(self.state_machine).__module__:  # docutils: absolute, 0-based
            lines = tuple(offset + 1 for _source, offset in items)
        else:  # MyST: offsets count from the body, content_offset + 1 lines below the fence
            lines = tuple(self.lineno + self.content_offset + 1 + offset for _source, offset in items)
        source = self.content.items[0][0] if self.content.items else self.get_source_info()[0]
        # docutils names an included file relative to the current directory: make it absolute
        # like every other source, so locations do not depend on where sphinx-build ran.
        source = os.path.abspath(source)
        return Code(text="\n".join(self.content), source=source, lines=lines)

    @property
    def doc_line(self) -> int:
        """The directive's line in its own file (``self.lineno`` counts across included files)."""
        return self.get_source_info()[1] or self.lineno

    def option_line(self, name: str) -> int:
        """The line where ``:name:`` is written (for messages and for accept mode)."""
        for index, line in enumerate(self.block_text.splitlines()):
            stripped = line.strip()
            if stripped.startswith((f":{name}:", f"{name}:")):
                return self.doc_line + index
        if name in self.options:  # myst-parser < 5 leaves the options out of block_text
            return self._option_line_in_source(name)
        return self.doc_line

    def _option_line_in_source(self, name: str) -> int:
        source = self.get_source_info()[0]
        body = self.code().lines
        try:
            with open(source, encoding="utf-8") as f:
                lines = f.read().split("\n")
        except OSError:
            return self.doc_line
        end = body[0] - 1 if body else min(len(lines), self.doc_line + 50)
        for index in range(self.doc_line, end):  # the lines between the fence and the body
            if lines[index].strip().startswith((f":{name}:", f"{name}:")):
                return index + 1
        return self.doc_line


class AutocastDemo(_Base):
    known = (
        "values", "expect", "expect-output", "config", "backend", "device", "dtype",
        "timeout", "grad-tolerance", "output-tolerance", "group", "name", "caption",
    )
    option_spec = _OptionSpec((name, _text) for name in known)

    def run(self) -> list[nodes.Node]:
        problem = self.unknown_options()
        if problem:
            return self.problem(problem, self.unknown_option_line())
        if not "".join(self.content).strip():
            return self.problem("the body is empty: write the Python snippet to run under it")
        try:
            demo = self.demo()
        except syntax.SyntaxProblem as exc:
            return self.problem(str(exc), getattr(exc, "line", None))
        state = doc_state(self.env, self.env.docname)
        state.demos[demo.ident] = demo
        return [self.container(demo)]

    def number(self, name: str, default: float, rule: str) -> float:
        raw = self.options.get(name)
        if raw is None:
            return default
        try:
            value = float(raw)
        except ValueError:
            value = math.nan
        if number_problem(rule, value):
            why = (f"; leave the option out to use autocast_demo_timeout ({default:g} s)"
                   if name == "timeout" else "")
            raise _at(syntax.SyntaxProblem(f":{name}: {raw!r} must be {rule}{why}"),
                      self.option_line(name))
        return value

    def choice(self, name: str, default: str, choices: tuple[str, ...]) -> str:
        value = self.options.get(name) or default
        if value not in choices:
            close = difflib.get_close_matches(value, choices, n=1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            raise _at(syntax.SyntaxProblem(f":{name}: {value!r} is not known{hint}; choose one "
                                           f"of {', '.join(choices)}"),
                      self.option_line(name))
        return value

    def demo(self) -> Demo:
        conf = settings(self.config)
        device = self.choice("device", conf.device, DEVICES)
        dtype = self.choice("dtype", conf.dtype if device == conf.device else
                            ("bfloat16" if device == "cpu" else "float16"), DTYPES)
        config = self.options.get("config") or conf.config
        values_text = self.options.get("values") or ",".join(conf.values)
        try:
            variants = syntax.parse_values(values_text, device, dtype,
                                           builtins=config == DEFAULT_CONFIG)
        except syntax.SyntaxProblem as exc:
            raise _at(exc, self.option_line("values"), "values") from None
        names = tuple(v.name for v in variants)
        try:
            expect = syntax.parse_expect(self.options.get("expect", ""), names)
        except syntax.SyntaxProblem as exc:
            raise _at(exc, self.option_line("expect"), "expect") from None
        try:
            expect_output = syntax.parse_expect_output(self.options.get("expect-output", ""), names)
        except syntax.SyntaxProblem as exc:
            raise _at(exc, self.option_line("expect-output"), "expect-output") from None
        state = doc_state(self.env, self.env.docname)
        ident = self.options.get("name") or f"autocast-demo-{len(state.demos) + 1}"
        return Demo(
            docname=self.env.docname,
            ident=nodes.make_id(ident),
            lineno=self.doc_line,
            code=self.code(),
            group=self.options.get("group") or None,
            config=config,
            variants=variants,
            expect=expect,
            expect_output=expect_output,
            backend=self.choice("backend", conf.backend, BACKENDS),
            device=device,
            dtype=dtype,
            timeout=self.number("timeout", conf.timeout, TIMEOUT_RULE),
            tolerance=Tolerance(
                grad=self.number("grad-tolerance", conf.tolerance.grad, TOLERANCE_RULE),
                output=self.number("output-tolerance", conf.tolerance.output, TOLERANCE_RULE),
            ),
            expect_line=self.option_line("expect"),
            expect_output_line=self.option_line("expect-output"),
        )

    def container(self, demo: Demo) -> nodes.Element:
        box = nodes.container(classes=["autocast-demo"], ids=[demo.ident])
        self.set_source_info(box)
        if self.options.get("caption"):
            box += nodes.caption(text=self.options["caption"])
        block = nodes.literal_block(demo.code.text, demo.code.text, language="python")
        self.set_source_info(block)
        box += block
        box += results_placeholder(ident=demo.ident)
        return box


class AutocastDemoSetup(_Base):
    """Code that runs before the demos of its page (or of ``:group:``), hidden unless ``:show:``."""

    known = ("group", "show")
    option_spec = _OptionSpec((name, _text) for name in known)

    def run(self) -> list[nodes.Node]:
        problem = self.unknown_options()
        if problem:
            return self.problem(problem, self.unknown_option_line())
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
