"""Every directive option of the extension, typed and documented in one place.

As :mod:`.config` declares the conf.py values, :data:`DIRECTIVES` declares each directive's
options: its kind (how its text is read), the conf value it mirrors (its default then, and its
choices or number rule, come from there), what to write and what it does. The directives read
and validate their options from it (:func:`read`), and the docs' reference page lists it.
"""

from __future__ import annotations

import difflib
import math
from dataclasses import dataclass
from typing import Any, Literal

from ..core.config import COMPARES, OPTIONS, PREFIX, SHOWS, Option, Settings, number_problem
from ..core.i18n import msg
from . import syntax

#: ``text``: stripped text, empty when not given; ``choice``: one of its choices; ``number``: a
#: float within its rule; ``flag``: given or not (no value).
Kind = Literal["text", "choice", "number", "flag"]


@dataclass(frozen=True)
class DirectiveOption:
    """One option of a directive: everything parsing, validation and the reference page need."""

    name: str
    kind: Kind
    syntax: str  # what to write, for the reference; empty: the choices, or the number's rule
    description: str
    mirrors: str = ""  # the Settings field it defaults to (without the conf prefix)
    value: Any = None  # the default, when it mirrors no conf value
    default: str = ""  # the default for the reference, when it is not ``value``
    choices: tuple[str, ...] = ()  # for a choice that mirrors no conf value
    # A bad number says which conf value the demo gets without the option.
    names_its_default: bool = False

    @property
    def conf(self) -> Option | None:
        """The conf.py value this option mirrors."""
        return next((o for o in OPTIONS if o.name == self.mirrors), None) if self.mirrors else None

    @property
    def allowed(self) -> tuple[str, ...]:
        """The values a choice takes: its own, or its conf value's (whose "" means "unset")."""
        conf = self.conf
        return self.choices or (tuple(c for c in conf.choices if c) if conf else ())

    @property
    def rule(self) -> str:
        conf = self.conf
        return conf.rule if conf else ""

    @property
    def shown_syntax(self) -> str:
        return self.syntax or ", ".join(f"``{c}``" for c in self.allowed)

    @property
    def shown_default(self) -> str:
        if self.mirrors:
            return f"``{PREFIX}{self.mirrors}``"
        return self.default or f"``{self.value}``"


def _choice(name: str, value: str, choices: tuple[str, ...]) -> str:
    if value not in choices:
        close = difflib.get_close_matches(value, choices, n=1)
        hint = msg(" (did you mean {word}?)", word=close[0]) if close else ""
        raise syntax.SyntaxProblem(msg(":{option}: {value} is not known{hint}; choose one of "
                                        "{choices}", option=name, value=repr(value), hint=hint,
                                        choices=", ".join(choices)))
    return value


def _number(option: DirectiveOption, raw: str, default: float) -> float:
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if number_problem(option.rule, value):
        why = (msg("; leave the option out to use {setting} ({seconds} s)",
                    setting=PREFIX + option.mirrors, seconds=format(default, "g"))
               if option.names_its_default else "")
        raise syntax.SyntaxProblem(msg(":{option}: {value} must be {rule}{why}",
                                        option=option.name, value=repr(raw), rule=option.rule,
                                        why=why))
    return value


def read(option: DirectiveOption, options: dict[str, Any], conf: Settings,
         default: Any = None) -> Any:
    """The value of ``option`` in a directive's ``options`` (as its option_spec read them):
    the mirrored conf value (or ``default``) when it is not given; a :class:`.SyntaxProblem`
    (to be located at the option's line) when it is not a value the option takes."""
    if default is None:
        default = getattr(conf, option.mirrors) if option.mirrors else option.value
    raw = options.get(option.name)
    if option.kind == "flag":
        return option.name in options
    if option.kind == "choice":
        return _choice(option.name, raw or default or "", option.allowed)
    if option.kind == "number":
        return default if raw is None else _number(option, raw, default)
    return raw or default or ""


DEMO = (
    DirectiveOption(
        "values", "text", "comma-separated values",
        "Values the demo runs under: ``same_as_forward``, ``off``, ``autocast`` (the forward's "
        "own autocast as a one-item kwargs list), ``default`` (sets nothing: torch's own "
        "default, so a page's claim about the default is checked), or ``name=<Python literal>``, "
        "e.g. ``fp16=[{\"device_type\": \"cpu\", \"dtype\": torch.float16}]``.", mirrors="values"),
    DirectiveOption(
        "expect", "text", "``value: outcome`` pairs",
        "What compiled does against eager under each value: ``matches``, ``differs`` or "
        "``raises <ExceptionName>``; ``*`` stands for every value.",
        default="none (warns with the line to add)"),
    DirectiveOption(
        "expect-output", "text", "``[value]`` blocks",
        "The printed output of the compiled run, per value (``[*]`` for all); addresses, "
        "timings and warning locations are normalised away.", default="none"),
    DirectiveOption(
        "expect-compile", "text", "``value: graphs N, breaks N, recompiles N`` pairs",
        "What ``torch.compile`` did in the compiled run, per value (``*`` for all; pairs apart by "
        "``;`` or lines): the graphs it compiled, its graph breaks, its recompilations, the "
        "frames it gave up on (skipped whole, as a generator), each count with its reasons in "
        "brackets where they matter (``breaks 1 [reason]``, ``recompiles 1 [c == 0.5]``, "
        "``skipped 1 [Attempt to trace generator]``). The page shows each break and "
        "recompilation with its line and reason; a fact that changes fails the build. A demo "
        "that records them may compile nothing (``graphs 0``).",
        default="none"),
    DirectiveOption(
        "config", "text", "dotted path",
        "Another compile-time config to vary; its values must then be written ``name=literal``.",
        mirrors="config"),
    DirectiveOption(
        "backend", "choice", "",
        "Backend for the ``torch.compile`` calls of the snippet that name none.",
        mirrors="backend"),
    DirectiveOption(
        "device", "choice", "",
        "Device of the ``autocast`` value; ``cuda`` runs in a fresh interpreter.",
        mirrors="device"),
    DirectiveOption("dtype", "choice", "", "Autocast dtype of the ``autocast`` value.",
                    mirrors="dtype"),
    DirectiveOption(
        "timeout", "number", "seconds, > 0 and at most 86400 (24 h)",
        "How long one run (one value, compiled or eager) may take.", mirrors="timeout",
        names_its_default=True),
    DirectiveOption(
        "grad-tolerance", "number", "number >= 0",
        "Gradients match when ``|c - e| <= tol * (1 + |e|)``; 0 is bitwise.",
        mirrors="grad_tolerance"),
    DirectiveOption("output-tolerance", "number", "number >= 0",
                    "The same for every other tensor.", mirrors="output_tolerance"),
    DirectiveOption(
        "group", "text", "name",
        "Run only the setup blocks of this group (and the page's ungrouped ones).",
        default="none"),
    DirectiveOption(
        "name", "text", "HTML id",
        "The demo's id: links (and the compatibility matrix) point at it.",
        default="``autocast-demo-N``"),
    DirectiveOption("caption", "text", "text",
                    "A caption shown above the code, and used by the matrix.", default="none"),
    DirectiveOption(
        "alike", "flag", "flag",
        "The demo means to show that every value gives the same outcome: no warning that its "
        "values cannot be told apart, and no runs of the standard values it does not name "
        "(made to check that).", default="off (a demo whose values, and the standard values it "
        "does not name, all give one outcome warns)"),
    DirectiveOption(
        "continues", "flag", "flag",
        "Run as a notebook's next cell: after the page's earlier demos of its group, whose code "
        "each of its runs replays first (from a clean start, their output hidden), and show and "
        "compare its bare last expression's value, as Jupyter displays it.",
        default="off (the demo runs alone, after its setups)"),
    DirectiveOption(
        "partial-view", "flag", "flag",
        "Accept a match seen in part of what a reader could observe, where the comparison had "
        "to stop (too deep, too many objects, too much printed, an object it cannot read): the "
        "row says it was partly compared, and why.", default="off (such a value is not "
        "checked: the build fails at the demo, saying what was not compared)"),
    DirectiveOption(
        "compare", "choice", "",
        "What the compiled run is compared with: the eager run, or nothing, for a demo whose "
        "point is what compiling did or printed, not its numbers (a timing, a log, a count). "
        "With ``none`` no eager run is made, ``:expect:`` records only ``raises`` or "
        "``no-config``, the demo must record ``:expect-compile:`` or ``:expect-output:`` (it "
        "warns with the record to add), and the page shows each value's outcome and whether "
        "its records hold (``:show: record``).",
        value="eager", choices=COMPARES),
    DirectiveOption(
        "show", "choice", "",
        "What the page shows of the results: the full table; only each value's outcome and "
        "whether the record holds (for a demo that is not about compiled against eager); or "
        "only what the snippet printed. The checks are the same.",
        value="table", choices=SHOWS),
)

SETUP = (
    DirectiveOption("group", "text", "name", "Run this code only before the demos of this group.",
                    default="none (every demo of the page)"),
    DirectiveOption("show", "flag", "flag", "Show the setup code in the page.", default="hidden"),
)

#: directive -> its options, in the order the reference lists them.
DIRECTIVES: dict[str, tuple[DirectiveOption, ...]] = {
    "autocast-demo": DEMO,
    "autocast-demo-setup": SETUP,
    "autocast-demo-summary": (),
}


def named(table: tuple[DirectiveOption, ...]) -> dict[str, DirectiveOption]:
    return {o.name: o for o in table}
