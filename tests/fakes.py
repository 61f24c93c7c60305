"""Made-up results for the tests that need no torch (tests/unit) and for the builds that render
results from a cache they write (``fill_cache``): a demo, its runs, the environments of result
sets; what two test roots hold that a build of each layer reads (``COMPILES``,
``DIRECTIVE_MISTAKES``); a made-up module whose docstrings hold demos (``LATIN``), which
tests/unit/test_docstring_lines.py locates and tests/build/test_docstrings.py accepts; a
made-up console catalog (``Loud``); a stand-in for a module's Sphinx logger (``Logger``); and
Settings of every option's default (``settings``). Every value here is invented; nothing
imports torch."""

from __future__ import annotations

import gettext
import platform
import re
from collections.abc import Sequence
from types import SimpleNamespace

from sphinx_autocast_demo.core.config import DEFAULT_CONFIG, OPTIONS, Settings
from sphinx_autocast_demo.core.model import (
    Claim,
    Code,
    Demo,
    DemoResult,
    Environment,
    Frame,
    OptionSpan,
    RunRecord,
    SnippetError,
    SourceMap,
    TensorDiff,
    Tolerance,
    VariantResult,
    Verdict,
)
from sphinx_autocast_demo.core.scopes import Record
from sphinx_autocast_demo.judge import check
from sphinx_autocast_demo.read import syntax


class Loud(gettext.NullTranslations):
    """A console catalog that says a message back in upper case, its ``{placeholders}`` kept as
    written (what fills them is said as it is): gettext's msgid, and ngettext's singular or
    plural, chosen by ``n`` as English chooses. Other lookups are NullTranslations', unchanged."""

    def gettext(self, message: str) -> str:
        return re.sub(r"[^{}]+(?=\{|$)|(?<=\})[^{}]+", lambda m: m[0].upper(), message)

    def ngettext(self, singular: str, plural: str, n: int) -> str:
        return self.gettext(singular if n == 1 else plural)


class Logger:
    """Stands in for a module's Sphinx logger (set over its ``logger``): what it was told, as
    ``lines`` of (level, message, keyword arguments), colours taken off (a console line may
    colour its parts as Sphinx's own do)."""

    def __init__(self) -> None:
        self.lines: list[tuple[str, str, dict[str, object]]] = []

    def _say(self, level: str, message: str, kwargs: dict[str, object]) -> None:
        self.lines.append((level, re.sub(r"\x1b\[[0-9;]*m", "", message), kwargs))

    def verbose(self, message: str, **kwargs: object) -> None:
        self._say("verbose", message, kwargs)

    def info(self, message: str, **kwargs: object) -> None:
        self._say("info", message, kwargs)

    def warning(self, message: str, **kwargs: object) -> None:
        self._say("warning", message, kwargs)

    def texts(self, level: str | None = None) -> list[str]:
        """The messages told at ``level`` (None: at every level), in order."""
        return [text for said, text, _ in self.lines if level is None or said == level]


def settings(**changes: object) -> Settings:
    """Every option at its default (a list as the tuple Settings holds), but for ``changes``."""
    return Settings(**({o.name: tuple(o.default) if isinstance(o.default, list) else o.default
                        for o in OPTIONS} | changes))


TORCH = "9.9.0"  # the torch these made-up results were "checked" with


SRC = "/docs/index.rst"


# The directive of every made-up demo, as its source map records it:
#   1 .. autocast-demo::
#   2    :values: same_as_forward, off
#   3    :expect: ...
#   4
#   5    x = 1
TEXT = [".. autocast-demo::", "   :values: same_as_forward, off", "   :expect: *: matches", "",
        "   x = 1"]


WHERE = SourceMap(SRC, 1, "rst", 2, 4, (OptionSpan("values", 2, 3), OptionSpan("expect", 3, 4)))


def claims(pairs: tuple[tuple[str, str | Claim], ...]) -> tuple[Record[Claim], ...]:
    """``(("off", "raises KeyError"),)`` as the directive reads ``:expect: off: raises KeyError``."""
    read = tuple((name, text if isinstance(text, Claim) else syntax.parse_claim(text))
                 for name, text in pairs)
    assert all(claim is not None for _, claim in read), pairs
    return tuple(Record(name, claim) for name, claim in read if claim is not None)


def written(pairs: Sequence[tuple[str, Claim]] | None) -> str:
    """Records as a writer reads them in the source: ``*: matches, off: differs``."""
    return syntax.expect_text(pairs or [])


def demo(expect: tuple[tuple[str, str | Claim], ...] = (("*", "matches"),)) -> Demo:
    return Demo(
        docname="index", ident="d", lineno=1, code=Code("x = 1", SRC, (5,)), group=None,
        config=DEFAULT_CONFIG, variants=syntax.parse_values(["same_as_forward", "off"], "cpu", "bfloat16"),
        expect=claims(expect), expect_output=(), backend="aot_eager", device="cpu", dtype="bfloat16",
        timeout=120.0, tolerance=Tolerance(grad=0.0, output=1e-3), source_map=WHERE,
    )


def ran(outcome: str, output: str = "", note: str = "",
        eager_output: str | None = None) -> tuple[Verdict, RunRecord, RunRecord]:
    # A difference names its tensor, as compare.py's do: w.grad, off by 0.5.
    diffs = (TensorDiff("w.grad", "grad", "float32", "float32", False, 0.5),) if outcome == "differs" else ()
    return (Verdict(outcome=outcome, note=note, max_abs=0.5 if diffs else None, diffs=diffs),  # type: ignore[arg-type]
            RunRecord(status="ok", output=output),
            RunRecord(status="ok", output=output if eager_output is None else eager_output))


def result(the_demo: Demo, *per_value: tuple[Verdict, RunRecord, RunRecord] | VariantResult,
           torch: str = TORCH) -> DemoResult:
    variants = tuple(v if isinstance(v, VariantResult) else VariantResult(variant, *v)
                     for variant, v in zip(the_demo.variants, per_value, strict=True))
    return check.check(DemoResult(demo=the_demo, codes=(the_demo.code,), variants=variants,
                                  torch_version=torch))


def raised(kind: str = "NameError") -> tuple[Verdict, RunRecord, RunRecord]:
    error = SnippetError(type=kind, names=(kind, "Exception"), message="name 'y' is not defined",
                         frames=(Frame(part=0, line=1, function="<module>", text="x = y"),))
    record = RunRecord(status="raised", error=error)
    return Verdict(outcome="raises", exception=kind), record, record


APP = SimpleNamespace(srcdir="/docs", outdir="/out", doctreedir="/doctrees", extensions={},
                      builder=SimpleNamespace(format="html"))


HERE = Environment(f"torch {TORCH}", TORCH, "3.11.7")


LATER = Environment("torch 2.16.0", "2.16.0", "3.11.7")


MADE = "made on 2026-11-30 by tox -e results-torch216"


WHEN = "on 2026-11-30"


# A module of the writer's in Latin-1 with CRLF line endings (``latin_bytes``): demos in
# docstrings with escapes, under try/else, if and a class (its snippets name torch; nothing here
# runs them).
LATIN = '''# -*- coding: latin-1 -*-
"""Helpers written in Latin-1: caf\u00e9."""

import sys

try:
    import amp_helpers
except ImportError:
    raise
else:
    def guarded(w):
        """Defined under try/else, in caf\u00e9.

        .. autocast-demo::
           :name: latin-guarded
           :expect: off: differs

           w = torch.ones(7, requires_grad=True)
           torch.compile(amp_helpers.double)(w).backward()
        """
        return amp_helpers.double(w)


def escaped(w):
    """A tab\\there, and a line \\
joined by a backslash; na\\xefve.

    .. autocast-demo::
       :name: latin-escaped

       w = torch.ones(8, requires_grad=True)
       print("a\\tb")
       torch.compile(amp_helpers.double)(w).backward()
    """
    return amp_helpers.double(w)


if sys.version_info >= (3,):
    class Nested:
        """A class under if."""

        def run(self, w):
            """Run, d\u00e9j\u00e0.

            .. autocast-demo::
               :name: latin-nested
               :expect: off: differs

               w = torch.ones(9, requires_grad=True)
               torch.compile(amp_helpers.double)(w).backward()
            """
            return amp_helpers.double(w)
'''


def latin_bytes(text: str) -> bytes:
    return text.replace("\n", "\r\n").encode("latin-1")


# -- what two test roots hold, read by a build of each layer ------------------------------------

# tests/roots/test-directive-inputs: what its reST demos' lines add to what they print (a
# compiled run must compile something).
COMPILES = "; torch.compile(lambda t: t + 1)(torch.ones(1))"

# tests/roots/test-fault-directives: (page, the source line the message must point at, the
# message) of each mistake, for both syntaxes.
_RST, _MD = "index.rst", "bad_md.md"
_OPTIONS = ("values, expect, expect-output, expect-compile, config, backend, device, dtype, timeout, "
           "grad-tolerance, output-tolerance, group, name, caption, alike, continues, partial-view, "
           "compare, show")

# (page, the source line the message must point at, the message), for both syntaxes.
DIRECTIVE_MISTAKES = [
    *[(page, ":expcet: off: matches",
       f"autocast-demo: unknown option :expcet:; did you mean :expect:? (options: {_OPTIONS}) "
       "[autocast_demo.directive]") for page in (_RST, _MD)],
    *[(page, ":values: off, of",
       "autocast-demo: :values: unknown value 'of' (did you mean 'off'?): use one of "
       "same_as_forward, off, autocast, default, or name it, e.g. fp16=[{\"device_type\": \"cpu\", "
       "\"dtype\": torch.float16}]") for page in (_RST, _MD)],
    *[(page, ':values: off, fp16=[{"device_type": "cpu", "dtype": torch.float16]',
       "autocast-demo: :values: value fp16: '[{\"device_type\": \"cpu\", \"dtype\": torch.float16]' "
       "is not a Python literal (closing parenthesis ']' does not match opening parenthesis '{'); "
       "write a list of torch.amp.autocast kwargs dicts, e.g. "
       "fp16=[{\"device_type\": \"cpu\", \"dtype\": torch.float16}]") for page in (_RST, _MD)],
    (_RST, ':values: off, fp16=[{"device_type": "cpu", "dtype": float16}]',
     "autocast-demo: :values: value fp16: 'float16' is not allowed in a value: use strings, "
     "numbers, lists, dicts and torch dtypes such as torch.float16"),
    *[(page, ":backend: inductr",
       "autocast-demo: :backend: 'inductr' is not known (did you mean inductor?); choose one of "
       "aot_eager, inductor, eager") for page in (_RST, _MD)],
    *[(page, ":device: tpu",
       "autocast-demo: :device: 'tpu' is not known") for page in (_RST, _MD)],
    (_RST, ":expect: of: matches",
     "autocast-demo: :expect: 'of' is not a value of this demo (did you mean 'off'?) (its "
     "values: off)"),
    *[(page, ":expect: off: match",
       "autocast-demo: :expect: 'match' is not an outcome (did you mean 'matches'?): write "
       "matches, differs, raises <ExceptionName> or no-config") for page in (_RST, _MD)],
    (_RST, ":timeout: soon", "autocast-demo: :timeout: 'soon' must be a number of seconds > 0 and at "
     "most 86400 (24 h)"),
    (_RST, ":expect: off: differs",
     "autocast-demo: :compare: none compares nothing with eager, so :expect: cannot record off: "
     "differs: record only raises <ExceptionName> or no-config, or leave it out"),
    (_RST, ":show: table",
     "autocast-demo: :show: table shows compiled against eager, which :compare: none does not "
     "compare: write :show: record or :show: outputs, or leave :show: out"),
    (_RST, ":grup: a",
     "autocast-demo-setup: unknown option :grup:; did you mean :group:? (options: group, show)"),
    # MyST's YAML option block: the unknown key is reported at its own line too.
    (_MD, 'expcet: "off: matches"', "autocast-demo: unknown option :expcet:; did you mean :expect:?"),
]


def cached_by_another_build(first: object) -> tuple[str, str, str]:
    """Results cached by "another build of the installed release" (a made-up local version of
    it), stamped with what each policy compares, in the cache of the build ``first`` of
    tests/roots/test-offline: (that version, the installed torch, the cache's directory)."""
    from sphinx_autocast_demo.engine.build import build
    from sphinx_autocast_demo.plan import keys

    b = build(first.app)  # type: ignore[attr-defined]
    release = keys.torch_key(b.torch, "release")
    other = release + "+othercommit"
    fill_cache(first, other, torch_key=release)
    return other, b.torch, str(b.planner.cache.root)


def fill_cache(first: object, torch: str, torch_key: str = "") -> None:
    """Made-up results for every value of tests/roots/test-offline's demos, as if ``torch`` had
    made them, in the cache of the build ``first`` (an AppBuild)."""
    from sphinx_autocast_demo.core.state import all_docs
    from sphinx_autocast_demo.engine.build import build
    from sphinx_autocast_demo.plan.cache import Entry

    b = build(first.app)  # type: ignore[attr-defined]
    made_up = {"held": ("differs", "matches"), "stale": ("differs",), "myst-demo": ("differs",)}
    for doc in all_docs(first.app.env).values():  # type: ignore[attr-defined]
        for the_demo in doc.demos.values():
            codes = [s.code for s in doc.setups_for(the_demo)] + [the_demo.code]
            for variant, outcome in zip(the_demo.variants, made_up[the_demo.ident], strict=True):
                verdict, compiled, eager = ran(outcome)
                b.planner.cache.put(b.planner.key(the_demo, codes, variant), Entry(
                    torch, verdict, compiled, eager, python_version=platform.python_version(),
                    torch_key=torch_key, files=()))  # its runs imported none of the writer's
