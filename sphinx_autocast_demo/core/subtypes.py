"""Every warning the extension gives, declared once: its subtype, what it means, whether it fails.

Every ``logger.warning`` takes its ``type`` and ``subtype`` from :func:`ours`, and every
:class:`.model.Finding` names one of :data:`Subtype`, so that mypy refuses a subtype this table
does not hold; the reference page lists the table (docs/_ext/autocast_reference.py), so that a
writer reads the same list that ``suppress_warnings`` takes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypedDict, get_args

#: The type of every warning we emit (``suppress_warnings = ["autocast_demo.<subtype>"]``).
WARNING_TYPE = "autocast_demo"

Subtype = Literal[
    "mismatch", "default-changed", "output", "compile-facts", "snippet-error", "nothing-compared",
    "partial-view",
    "eager-compiled", "compiled-nothing", "config-set", "config-other", "no-config", "timeout", "crash",
    "directive", "missing-expectation", "alike", "scope", "scope-overlap", "not-run",
    "environment", "results", "cache", "engine", "slow", "budget", "not-checked", "accept",
]


@dataclass(frozen=True)
class SubtypeInfo:
    """What a subtype tells the writer (reST, for the reference page), and whether it is a
    failed check, which fails the build (``autocast_demo_fail_on_mismatch``), or a warning,
    which fails it only under ``-W``."""

    meaning: str
    fails: bool


#: In the order the reference page lists them: a page's records first, the build's last.
SUBTYPES: dict[Subtype, SubtypeInfo] = {
    "mismatch": SubtypeInfo("a recorded outcome no longer holds (points at the ``:expect:`` line)", True),
    "default-changed": SubtypeInfo(
        "the ``default`` row's record broke because torch's default of the config is another "
        "value than the page's records take it to be (said once, at the ``:expect:`` line, in "
        "place of that row's ``mismatch``: the new default, and the value the page records)",
        True),
    "output": SubtypeInfo("the printed output is not the recorded one", True),
    "compile-facts": SubtypeInfo(
        "what ``torch.compile`` did (graphs, graph breaks, recompilations) is not what "
        "``:expect-compile:`` records (points at that line, with each break and recompilation)",
        True),
    "snippet-error": SubtypeInfo(
        "the snippet raised an error that is not recorded (points at the failing line)", True),
    "nothing-compared": SubtypeInfo(
        "both runs finished but left nothing to compare (no tensor within reach, nothing printed): "
        "an error, never a match; the message says what to bind", True),
    "partial-view": SubtypeInfo(
        "everything compared matched, but the comparison had to stop before it saw all a reader "
        "could observe (too deep, too many objects, an object it cannot read): no verdict, unless "
        "the demo says ``:partial-view:``; a difference found in part of the view is still one",
        True),
    "eager-compiled": SubtypeInfo(
        "dynamo compiled a frame in the eager run, through an entry point the extension does not "
        "replace: no verdict (points at the line that called it)", True),
    "compiled-nothing": SubtypeInfo(
        "the compiled run compiled none of the snippet's code (``TORCH_COMPILE_DISABLE``, "
        "``torch._dynamo.config.disable``, or a snippet that never calls the compiler): no "
        "verdict (not said of a demo with ``:show: outputs``, whose point is what it prints)",
        True),
    "config-set": SubtypeInfo(
        "a setup (the page's, or ``autocast_demo_global_setup``) sets the varied config before "
        "the demo runs, so a row never ran under its own value: no verdict (points at the line "
        "that sets it)", True),
    "config-other": SubtypeInfo(
        "a compile of the compiled run read another value of the varied config than the row's, "
        "one the snippet did not write (a thread, which starts from torch's defaults; a write "
        "past the config module): no verdict of the row's value (points at the line of that "
        "compile)", True),
    "no-config": SubtypeInfo(
        "the installed torch has no config of that name and the page does not record "
        "``no-config`` for this release (points at the ``:config:`` line)", True),
    "timeout": SubtypeInfo("a run was stopped after its timeout", True),
    "crash": SubtypeInfo("a run's process died", True),
    "directive": SubtypeInfo(
        "a mistake in the directive itself (unknown option, bad value syntax)", True),
    "missing-expectation": SubtypeInfo("a demo without ``:expect:``; the message gives the line to add",
                                False),
    "alike": SubtypeInfo(
        "every value of a demo gives one verdict, so it would look the same under the wrong "
        "value (not said of a demo with ``:alike:`` or ``:show: outputs``)", False),
    "scope": SubtypeInfo(
        "a scoped record no torch release falls in (``off[torch>=2.16,<2.15]``): it never "
        "applies", False),
    "scope-overlap": SubtypeInfo(
        "an environment falls in two scoped records of one value that record different outcomes "
        "(points at the ``:expect:`` line; overlaps evident from the page are ``directive`` "
        "errors)", True),
    "not-run": SubtypeInfo(
        "a demo that could not run (no CUDA and ``cuda_unavailable = \"error\"``, ``execute = "
        "\"never\"`` without a cached result)", True),
    "environment": SubtypeInfo(
        "an environment ``autocast_demo_environments`` expects, or some of its values, has no "
        "result in the result sets (said once, at ``conf.py``; its cells say so)", False),
    "results": SubtypeInfo(
        "a result set that cannot be read or written (the pages show this build's results only), "
        "or an unreadable result in one", False),
    "cache": SubtypeInfo(
        "an unreadable cache entry (it is run again), or a cache directory the build cannot write "
        "(said before anything runs; the results render but are not kept)", False),
    "engine": SubtypeInfo(
        "the worker could not start (torch missing or broken): an error, every demo is reported "
        "not run", True),
    "slow": SubtypeInfo(
        "the runs cannot fork from a warm worker, or no kept worker serves the build: the results "
        "are the same, each run is slower (the message says why)", False),
    "budget": SubtypeInfo(
        "a demo over ``autocast_demo_budget`` or the build over ``autocast_demo_build_budget`` "
        "(naming the slowest runs)", False),
    "not-checked": SubtypeInfo(
        "a builder that checks code but runs no demo (``-b doctest``) says how many demos it did "
        "not check", False),
    "accept": SubtypeInfo(
        "``AUTOCAST_DEMO_ACCEPT`` could not rewrite a record (the message says why; nothing is "
        "written)", False),
}


class Tag(TypedDict):
    """The keyword arguments that make a log record one of ours."""

    type: str
    subtype: str


def ours(subtype: Subtype) -> Tag:
    """``logger.warning(..., **ours("scope"))``: the subtype checked by mypy."""
    return {"type": WARNING_TYPE, "subtype": subtype}


def _same(table: dict[Subtype, SubtypeInfo]) -> bool:
    return set(table) == set(get_args(Subtype))


# The Literal gives mypy its check, the mapping its meaning: both must name the same subtypes.
assert _same(SUBTYPES), set(get_args(Subtype)) ^ set(SUBTYPES)
