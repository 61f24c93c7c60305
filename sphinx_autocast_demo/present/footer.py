"""A demo's footer: where its results come from, what was not checked, and how they were made.

Said in parts, each about one thing (a key), so that a page of several demos can say once,
under its first table, what every demo's footer would say alike (:func:`page_parts`), and each
footer keeps only what is its own.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, NamedTuple

from docutils import nodes

from ..core.i18n import _, n_
from .across import provenance_lines, run_where
from .cells import grads_text, records_hold
from .set_lines import dtypes
from .why import why_words

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..judge.judgement import Judgement


class Part(NamedTuple):
    """A part of a footer: a sentence about where results come from, or a fact of how they
    were made (``how``). ``key``: what it is about (the backend, an environment...), one part
    per key and demo; ``missed``: it says that a value was not checked."""

    key: str
    text: str
    missed: bool = False
    how: bool = False


def page_parts(footers: list[list[Part]]) -> list[Part]:
    """What the page says once for its demos: for each key that every demo's footer has, what
    most of them say (a demo that says otherwise keeps its own part); their gradients only
    where all say the same."""
    shared = []
    for key in [part.key for part in footers[0]]:
        parts = [part for footer in footers for part in footer if part.key == key]
        if len(parts) < len(footers):
            continue  # (a demo without it would seem to have it)
        best, count = Counter(parts).most_common(1)[0]
        # What the demos' gradients are is said once only where every demo's are alike: a
        # page-wide "no gradients" stood under a demo about a weight's gradient (issue 47).
        if count == len(footers) or (count * 2 > len(footers) and key != "grads"):
            shared.append(best)
    return shared


def footer_line(parts: Sequence[Part]) -> nodes.paragraph:
    """Parts as one line; marked unchecked when one says a value was not checked."""
    # The sentences' stops are the page language's (Chinese ends one with 。 and no space).
    sentences = _(". ").join(part.text for part in parts if not part.how)
    how = " \u00b7 ".join(part.text for part in parts if part.how)
    text = (sentences + " \u00b7 " + how if sentences and how else sentences or how) + _(".")
    unchecked = any(part.missed for part in parts)
    classes = ["autocast-demo-provenance"] + (["autocast-demo-unchecked"] if unchecked else [])
    return nodes.paragraph(text=text, classes=classes)


def provenance_parts(judged: Judgement) -> list[Part]:
    """What this build checked of the demo, with which torch, and what it did not: the
    not-checked first (what a reader must not miss), then where results come from, then how
    they were made."""
    result, here, torch = judged.result, judged.here, judged.torch
    demo = result.demo
    exact = (_("bitwise") if demo.tolerance.grad == 0
             else _("within {tolerance}").format(tolerance=f"{demo.tolerance.grad:g}"))
    # The dtypes the values themselves name (a list of autocast kwargs), not the option's
    # default: that one is true only of the built-in ``autocast`` value. A table's value cells
    # show them already, in the line that sets each value.
    named = sorted({d for vr in result.variants for d in dtypes(vr.variant.value)})
    dtype = ([("dtypes", _("autocast dtypes in the values: {dtypes}").format(dtypes=", ".join(named)))]
             if named and demo.show == "outputs" else [])
    # Always said (one way or another), so that a page may say the common one once: a demo
    # that says nothing would seem to have the page's.
    grads = {grads_text(vr) for vr in result.variants if vr.compiled.status == "ok"}
    if len(grads) > 1:
        shown = demo.show != "outputs" and not judged.several and demo.show != "record"
        same = [("grads", _("gradient dtypes differ between values (in the table)") if shown
                 else _("gradient dtypes differ between values"))]
    elif grads and "\u2014" not in grads:
        same = [("grads", _("gradient dtypes under every value: {dtypes}").format(dtypes=grads.pop()))]
    else:
        same = [("grads", _("no gradients"))]
    how = [("device", _("device {device}").format(device=demo.device)), *dtype,
           ("backend", _("backend {backend}").format(backend=demo.backend)),
           ("compare", _("compiled compared with the same code run eagerly (gradients {exact}, "
                         "other tensors within {tolerance})").format(
               exact=exact, tolerance=f"{demo.tolerance.output:g}")), *same]
    every = len(here.values)
    checked = [v for v in here.values if v.checked]
    missed = [v for v in here.values if v.why is not None]
    parts: list[Part] = []
    if checked:
        which = "" if len(checked) == every else _values([v.name for v in checked])
        cached = sum(v.result.cached for v in checked)
        # The torch that made each result, named as it was: a result cached by another build
        # that autocast_demo_cache_torch counts as this one ("release", a label) is checked,
        # but by that torch; results kept from an earlier build of the page likewise.
        made = result.torch_version
        ran = torch if result.torch_equivalent else made  # who ran what was not cached
        earlier = (_("by an earlier build (cached result: same code, torch and Python)") if made == torch
                   else _("by an earlier build (cached result of the same code and Python; "
                          "autocast_demo_cache_torch counts it as the installed torch {torch})").format(
                       torch=torch))
        if here.source != "build" and here.environment is not None:
            # Not "checked": this build ran nothing; the set's build compared compiled with
            # eager, this one only reads what it found against the page.
            label = here.environment.label
            alias = "" if label == f"torch {made}" else f" ({label})"
            source = _("Results of torch {torch}{label}, {where}; not run by this build{values}").format(
                torch=made, label=alias, where=run_where(result.when, here.environment), values=which)
        elif not cached:
            source = _("Checked at build time with torch {torch}{values}").format(torch=ran, values=which)
        elif cached == len(checked):
            source = _("Checked with torch {torch} {earlier}{values}").format(
                torch=made, earlier=earlier, values=which)
        elif ran == made:
            source = n_("Checked with torch {torch}{values}, at build time and, for {n} of {total} "
                        "values, {earlier}",
                        "Checked with torch {torch}{values}, at build time and, for {n} of {total} "
                        "values, {earlier}", len(checked)).format(
                torch=made, values=which, n=cached, total=len(checked), earlier=earlier)
        else:
            now = ", ".join(v.name for v in checked if not v.result.cached)
            kept = ", ".join(v.name for v in checked if v.result.cached)
            source = _("Checked at build time with torch {torch} ({now}) and with torch {made} "
                       "{earlier} ({kept})").format(torch=ran, now=now, made=made, earlier=earlier, kept=kept)
        parts.append(Part("source", source))
    if records_hold(judged):  # (the table has no column to say it)
        held = sum(not column.empty for column in judged.columns)
        parts.append(Part("records", n_("What the page records of each value holds in all {n} "
                                        "environments", "What the page records of each value holds "
                                        "in all {n} environments", held).format(n=held) if held > 1
                          else _("What the page records of each value holds")))
    # Not-checked first: that is what a reader must not miss (each its own key: a page says
    # one only when every demo of it says the same).
    older = sorted({v.why.other_torch for v in missed if v.why is not None and v.why.other_torch})
    for version in older:
        names = [v.name for v in missed if v.why is not None and v.why.other_torch == version]
        which = "" if len(names) == every else _values(names)
        text = _("Rendered from results of torch {other} cached earlier, not checked with the "
                 "installed torch {torch}{values}").format(other=version, torch=torch, values=which)
        parts.append(Part(text, text, missed=True))
    reasons: dict[str, list[str]] = {}
    for v in missed:
        if v.why is not None and not v.why.other_torch:
            reasons.setdefault(why_words(v, v.why, torch).sentence, []).append(v.name)
    for reason, names in reasons.items():
        which = "" if len(names) == every else _values(names)
        text = _("Not checked in this build: {reason}{values}").format(reason=reason, values=which)
        parts.append(Part(text, text, missed=True))
    parts.sort(key=lambda part: not part.missed)
    if judged.several:
        parts += [Part(f"environment {label}", line) for label, line in provenance_lines(judged)]
    return parts + [Part(key, text, how=True) for key, text in how]


def _values(names: list[str]) -> str:
    """`` (same_as_forward, off)``: the values a part of a footer is about, when not all."""
    return _(" ({values})").format(values=", ".join(names))
