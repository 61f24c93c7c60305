"""``autocast-demo`` and ``autocast-demo-setup``: read the writer's input, record it, emit nodes.

The directives are cheap and pure: they validate, record a :class:`Demo` in the environment and
leave a placeholder that :mod:`.render` fills after the build has run everything.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import replace
from typing import TYPE_CHECKING, Any, ClassVar, cast

from docutils import nodes
from sphinx.util import logging
from sphinx.util.logging import is_suppressed_warning

from ..core.config import DEFAULT_CONFIG, Settings, autocast_dtype, settings
from ..core.conflines import global_setup_code
from ..core.i18n import _, __, in_console, msg, on_page
from ..core.scopes import Record
from ..core.state import doc_state, state
from ..core.subtypes import WARNING_TYPE, ours
from . import options, syntax
from .sources import SourceLines, located

# The model's types are imported where a directive is run: every build registers the
# directives, and an unchanged one runs none.
if TYPE_CHECKING:
    from collections.abc import Callable

    from ..core.config import Compare, Show
    from ..core.model import Claim, Demo

logger = logging.getLogger(__name__)

AUTOMATIC_ID = re.compile(r"^autocast-demo-\d+$")


class results_placeholder(nodes.General, nodes.Element):
    """Replaced by the results of demo ``ident`` when the doctree is resolved."""


def demo_boxes(doctree: nodes.Node) -> list[nodes.container]:
    """The box of every demo (:meth:`AutocastDemo.container`) in ``doctree``, in its order."""
    return [box for box in doctree.findall(nodes.container) if "autocast-demo" in box["classes"]]


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


class _Base(SourceLines):
    has_content = True
    table: ClassVar[tuple[options.DirectiveOption, ...]] = ()  # from options.DIRECTIVES
    known: ClassVar[tuple[str, ...]] = ()  # the table's names

    def run(self) -> list[nodes.Node]:
        try:
            self.source_map = self.read_options()
        except syntax.SyntaxProblem as exc:
            return self.problem(exc.args[0], getattr(exc, "line", None))
        problem = self.unknown_options()
        if problem:
            return self.problem(problem, self.unknown_option_line())
        return self.make()

    def make(self) -> list[nodes.Node]:
        raise NotImplementedError

    def problem(self, message: str, line: int | None = None) -> list[nodes.Node]:
        """Report a writer's mistake at its line and keep the build going: ``message`` (a
        :func:`.msg` one) in the console's language in the log, in the page's on the page."""
        from ..core.model import Finding, Location

        location = Location(self.source_path, line or self.doc_line)
        logger.warning(__("{directive}: {problem}").format(directive=self.name,
                                                           problem=in_console(message)),
                       **ours("directive"), location=str(location))
        doc_state(self.env, self.env.docname).problems.append(
            Finding(severity="error", subtype="directive", location=location,
                    message=msg("{directive}: {problem}", directive=self.name, problem=message))
        )
        warning = nodes.warning()
        warning += nodes.paragraph(text=_("This demo was not checked: {problem}").format(
            problem=on_page(message)))
        return [warning]

    def unknown_options(self) -> str | None:
        for name, value in self.options.items():
            if isinstance(value, Unknown):
                close = difflib.get_close_matches(name, self.known, n=1)
                hint = msg("; did you mean :{option}:?", option=close[0]) if close else ""
                return msg("unknown option :{option}:{hint} (options: {known})",
                            option=name, hint=hint, known=", ".join(self.known))
        return None

    def unknown_option_line(self) -> int | None:
        for name, value in self.options.items():
            if isinstance(value, Unknown):
                return self.option_line(name)
        return None



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
            return self.problem(msg("the body is empty: write the Python snippet to run under it"))
        try:
            demo = self.demo()
        except syntax.SyntaxProblem as exc:
            return self.problem(exc.args[0], getattr(exc, "line", None))
        page = doc_state(self.env, self.env.docname)
        page.demos[demo.ident] = demo
        return [self.container(demo)]

    def value(self, name: str, conf: Settings, default: Any = None) -> Any:
        """Option ``name`` read and checked as :mod:`.options` declares it, located."""
        try:
            return options.read(options.named(self.table)[name], self.options, conf, default)
        except syntax.SyntaxProblem as exc:
            raise located(exc, self.option_line(name)) from None

    def warn_never(self, expect: tuple[Record[Claim], ...]) -> None:
        """A scoped record no torch release falls in checks nothing: the writer must know,
        though the demo still runs (its other records hold or not as before)."""
        from ..core.model import Location

        for record in expect:
            if record.scope is not None and record.scope.never:
                where = Location(self.source_path, self.option_line("expect"))
                logger.warning(__("{directive}: :expect: {value}: {record} never applies: no "
                                  "torch release falls in its scope").format(
                                      directive=self.name, value=record.name, record=str(record.claim)),
                               **ours("scope"), location=str(where))

    def demo(self) -> Demo:
        from ..core.model import Demo, Tolerance

        conf = settings(self.config)
        device = self.value("device", conf)
        named = self.value("dtype", conf) if self.options.get("dtype") else ""
        dtype, dtype_from = autocast_dtype(conf, device, named)
        config = self.value("config", conf)
        try:
            variants = syntax.parse_values(self.value("values", conf), device, dtype,
                                           builtins=config == DEFAULT_CONFIG)
        except syntax.SyntaxProblem as exc:
            raise located(exc, self.option_line("values"), "values") from None
        names = tuple(v.name for v in variants)
        try:
            expect = syntax.parse_expect(self.options.get("expect", ""), names)
        except syntax.SyntaxProblem as exc:
            raise located(exc, self.option_line("expect"), "expect") from None
        self.warn_never(expect)
        try:
            expect_output = syntax.parse_expect_output(self.options.get("expect-output", ""), names)
        except syntax.SyntaxProblem as exc:
            raise located(exc, self.option_line("expect-output"), "expect-output") from None
        try:
            expect_compile = syntax.parse_expect_compile(self.options.get("expect-compile", ""), names)
        except syntax.SyntaxProblem as exc:
            raise located(exc, self.option_line("expect-compile"), "expect-compile") from None
        compare = cast("Compare", self.value("compare", conf))
        show = cast("Show", self.value("show", conf))
        if compare == "none":
            show = self.compared_with_nothing(expect, show)
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
            expect_compile=expect_compile,
            backend=self.value("backend", conf),
            device=device,
            dtype=dtype,
            dtype_from=dtype_from,
            timeout=self.value("timeout", conf),
            tolerance=Tolerance(grad=self.value("grad-tolerance", conf),
                                output=self.value("output-tolerance", conf)),
            source_map=self.source_map,
            show=show,
            compare=compare,
            global_setup=global_setup_code(*state(self.env).global_setup),
            alike="alike" in self.options,
            partial_view="partial-view" in self.options,
            continues="continues" in self.options,
        )
        # The standard values it does not name, run too so that the alike check can tell
        # whether its values differ at all; none where that check does not apply, nor where
        # conf.py silences its warning.
        if (demo.held_to_alike and config == DEFAULT_CONFIG
                and not is_suppressed_warning(WARNING_TYPE, "alike", self.config.suppress_warnings)):
            demo = replace(demo, probes=syntax.unnamed_builtins(variants, device, dtype))
        self.say_dtype(demo)
        return demo

    def compared_with_nothing(self, expect: tuple[Record[Claim], ...], show: Show) -> Show:
        """``:compare: none``: what the page shows (``record``, unless ``:show:`` says
        ``outputs``), once no record asks for a comparison that is not made."""
        for record in expect:
            if record.claim.outcome in ("matches", "differs"):
                pair = syntax.expect_text([record])
                raise located(syntax.SyntaxProblem(msg(
                    ":compare: none compares nothing with eager, so :expect: cannot record "
                    "{record}: record only raises <ExceptionName> or no-config, or leave it out",
                    record=pair)), self.option_line("expect"))
        if "show" not in self.options:
            return "record"
        if show == "table":
            raise located(syntax.SyntaxProblem(msg(
                ":show: table shows compiled against eager, which :compare: none does not "
                "compare: write :show: record or :show: outputs, or leave :show: out")),
                self.option_line("show"))
        return show

    def say_dtype(self, demo: Demo) -> None:
        """``-v``: the dtype the demo's ``autocast`` value (its own, or the one run to check
        it) casts to, and who chose it; a writer whose page is about another sees it here."""
        if not any(v.name == "autocast" and v.value == syntax.default_autocast(
                demo.device, demo.dtype)[0] for v in demo.runs):
            return
        who = {"demo": __("its :dtype:"),
               "conf": __("autocast_demo_dtype, for demos on {device}"),
               "device": __("torch's usual autocast dtype on {device}: neither :dtype: nor "
                            "autocast_demo_dtype names one for it")}[demo.dtype_from]
        logger.verbose(__("{directive}: the autocast value casts to torch.{dtype} ({who})").format(
            directive=self.name, dtype=demo.dtype, who=who.format(device=demo.device)),
                       location=str(demo.location))

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
            raise located(syntax.SyntaxProblem(msg(
                ":name: {name} gives no HTML id: use letters and digits, e.g. :name: fp16-overflow",
                name=repr(name))), self.option_line("name"))
        taken = demos.get(ident)
        if taken is None:
            return ident
        where = (msg("line {line}", line=taken.lineno) if taken.code.source == self.code().source
                 else str(taken.location))
        automatic = (msg(" (demos without :name: get autocast-demo-<n>)")
                     if AUTOMATIC_ID.match(ident) else "")
        free = next(f"{ident}-{n}" for n in range(2, len(demos) + 3) if f"{ident}-{n}" not in demos)
        if ident == name:
            taken_by = msg(
                ":name: {name} is already the id of the demo at {where}{automatic}; each demo "
                "needs its own, or one would show the other's results: choose another name, "
                "e.g. :name: {free}", name=repr(name), where=where, automatic=automatic, free=free)
        else:
            taken_by = msg(
                ":name: {name} gives the HTML id {ident}, which is already the id of the demo at "
                "{where}{automatic}; each demo needs its own, or one would show the other's "
                "results: choose another name, e.g. :name: {free}", name=repr(name),
                ident=repr(ident), where=where, automatic=automatic, free=free)
        raise located(syntax.SyntaxProblem(taken_by), self.option_line("name"))

    def container(self, demo: Demo) -> nodes.Element:
        box = nodes.container(classes=["autocast-demo"], ids=[demo.ident])
        self.set_source_info(box)
        if self.options.get("caption"):
            # Inline markup as in the page's own language (``patch`` in reST, `patch` in MyST),
            # like the captions of Sphinx's code-block.
            caption = self.options["caption"]
            parsed, messages = self.state.inline_text(caption, self.option_line("caption"))
            # A source and a line make it one of the page's messages, as a code-block's caption
            # is: -b gettext extracts it, and the project's catalog replaces it (the code and
            # the records are no messages: a translated page checks the same demos).
            title = nodes.caption(caption, "", *parsed)
            title.source, title.line = box.source, self.option_line("caption") or box.line
            box += title
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
            return self.problem(msg("the body is empty: write the setup code in it"))
        from ..core.model import Setup

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
