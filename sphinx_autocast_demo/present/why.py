"""Why a value was not checked, in the words each presenter needs (a cell, a footer, the matrix).

judge/judgement.py decides *that* a value went unchecked and names the cause; the words are
made here, in the page's language, from that cause and the runs' own facts, so that the
table, its footer and the summary matrix cannot say it three different ways.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from ..core.i18n import _, on_page

if TYPE_CHECKING:
    from ..core.model import RunRecord, VariantResult
    from ..judge.judgement import NotChecked, Value


class WhyText(NamedTuple):
    """Why a value was not checked, as each presenter says it."""

    text: str  # a table cell's: ``skipped: no CUDA on the build machine``
    sentence: str  # to follow "Not checked in this build: ": ``skipped (no CUDA on the build machine)``
    short: str  # the matrix's: ``skipped: no CUDA``


def why_words(value: Value, why: NotChecked, torch: str) -> WhyText:
    """Why ``value`` was not checked with ``torch``, in the page's language, from the
    judgement's cause and the runs' own facts (never from its English words): a cell's, a
    footer's and the matrix's."""
    vr = value.result
    kind, short = _("not run"), _("not run")
    unchecked = False  # the kind is "not checked", which a footer's sentence says already
    if why.cause == "missing":
        kind = short = _("no result")
        reason = _("none kept with these docs")
    elif why.cause == "no-cuda":
        if _stopped(vr)[1].status == "skipped":
            kind = _("skipped")
            short = _("skipped: no CUDA")
        else:
            short = _("not run: no CUDA")
        reason = _("no CUDA on the build machine")
    elif why.cause == "engine":
        reason = _("no demo can run on the build machine")
    elif why.cause == "died":
        reason = _("the build's worker stopped before it ran")
    elif why.cause == "stale":
        reason = _("execution is off and a module it imports has changed since its cached result")
    elif why.cause == "never":
        reason = _("execution is off and nothing is cached")
    elif why.cause == "refused":
        # The worker's own words (a recorded fact, as an output is): not ours to translate.
        reason = why.reason if why.reason != "refused" else _("refused")
    elif why.cause == "stopped":
        label, run = _stopped(vr)
        kind, unchecked = _("not checked"), True
        short = {"timeout": _("timed out"), "crashed": _("crashed")}.get(run.status, run.status)
        reason = (_("the compiled run {what}") if label == "compiled"
                  else _("the eager run {what}")).format(what=short)
    elif why.cause == "other-torch":
        kind, unchecked = _("not checked"), True
        short = f"torch {why.other_torch}"
        reason = _("cached result of torch {other}, not checked with the installed torch "
                   "{torch}").format(other=why.other_torch, torch=torch)
    else:  # no verdict: the comparison's note (its facts, in its words), else says so
        kind, unchecked = _("not checked"), True
        short = kind
        reason = on_page(vr.verdict.note) or _("no verdict")
    sentence = reason if unchecked else _("{kind} ({reason})").format(kind=kind, reason=reason)
    return WhyText(_("{kind}: {reason}").format(kind=kind, reason=reason), sentence, short)


def _stopped(vr: VariantResult) -> tuple[str, RunRecord]:
    """The run the judgement says did not finish (the compiled one is looked at first, as
    judge.unchecked does), with its name."""
    for run, label in vr.runs:
        if run.status not in ("ok", "raised"):
            return label, run
    return "compiled", vr.compiled
