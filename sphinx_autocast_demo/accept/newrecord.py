"""Accept mode's rules: the record a demo's ``:expect:`` must say so that the next build holds,
in this build's environment and in every result set's (:func:`new_expect`), or why no record
can be written without the writer (:class:`Blocked`). Editing the file is :mod:`.accept`'s.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import replace
from typing import TYPE_CHECKING

from ..core.i18n import msg
from ..core.printed import as_recorded, keeps_logs, normalize_output, output_holds
from ..core.scopes import conflict, governing, records, scope_parts, scoped_name
from ..judge.check import first_compile_record
from ..judge.printed import first_output_record
from ..read import syntax

if TYPE_CHECKING:
    from ..core.model import Claim, CompileClaim, Demo, DemoResult


class Blocked(Exception):
    """A demo whose new record cannot be written; the message (a ``msg()``, kept as words and
    said in the console's language where accept mode prints it) says why."""


def new_expect(result: DemoResult) -> list[tuple[str, Claim]] | None:
    """(name, outcome) changes: ``None`` when the record holds; raises :class:`Blocked`.

    Each value's outcome goes into the record that applies to it here (scopes.governing): a
    scoped record is rewritten in place, since a new unscoped one would lose to it and the next
    build would fail again. The changed record is then checked as the next build will read it,
    in every environment: accept mode converges in one build or writes nothing.
    """
    demo, environment = result.demo, result.environment
    actual = {vr.variant.name: vr for vr in result.variants}
    for name, vr in actual.items():
        if vr.verdict.outcome == "error":
            raise Blocked(msg("value {value} has no outcome to record ({note})", value=name,
                               note=vr.verdict.note))
    for name, vr in list(actual.items()):
        if vr.verdict.outcome == "ran":  # compared with nothing: there is no outcome to record
            if governing(demo.expect, name, environment) is not None:
                raise Blocked(msg("value {value} ran without raising, and :expect: records an "
                                   "outcome for it: take that record out by hand", value=name))
            del actual[name]
    for name in actual:
        _refuse_conflict(demo.expect, name, result)

    def holds(expected: Claim, name: str) -> bool:
        return expected.holds(actual[name])

    changes: list[tuple[str, Claim]] = []
    rule = {name: governing(demo.expect, name, environment) for name in actual}
    star = dict(demo.expect).get("*")
    starred = [n for n, found in rule.items() if found is not None and found.name == "*"]
    if star is not None and starred and not all(holds(star, n) for n in starred):
        counts = Counter(actual[n].verdict.claim for n in starred)
        best = max(counts.values())
        star = next(actual[n].verdict.claim for n in starred
                    if counts[actual[n].verdict.claim] == best)
        changes.append(("*", star))
    for name, vr in actual.items():
        found = rule[name]
        if found is None or (found.name == "*" and star is not None and not holds(star, name)):
            changes.append((name, vr.verdict.claim))  # nothing recorded, or * does not fit
        elif found.name != "*" and not holds(found.claim, name):
            # A shared *[scope] may hold for the other values: this one gets its own, which
            # outranks it in the same scope.
            changes.append((scoped_name(name, found.scope) if found.value == "*" else found.name,
                            vr.verdict.claim))
    changes += scoped(result, changes)
    _converges(result, changes)
    return changes or None


def new_output(result: DemoResult) -> list[tuple[str, str]] | None:
    """The ``:expect-output:`` blocks, (name, text), that hold: ``None`` when the recorded ones
    do, or when none is recorded (an output never recorded stays so, unless printing is the
    demo's point: ``:show: outputs``); raises :class:`Blocked`. One ``[*]`` block where the
    option had one, or had none, and every covered value printed the same."""
    demo = result.demo
    if not demo.expect_output:  # a demo whose point is what it prints gets its first record
        return first_output_record(result)
    here = result.environment
    ran = {vr.variant.name: vr.compiled.output for vr in result.variants}
    covered = [n for n in ran if demo.expected_output(n, here) is not None]
    if all(output_holds(demo.expected_output(n, here) or "", ran[n]) for n in covered):
        return None
    # (torch's log records stay in the new blocks where the old ones kept them)
    logs = any(keeps_logs(normalize_output(text)) for _, text in demo.expect_output)
    printed = {n: as_recorded(output, logs) for n, output in ran.items()}
    if any(record.scope is not None for record in records(demo.expect_output)):
        raise Blocked(msg("its :expect-output: has scoped blocks ([value[torch...]]): rewrite "
                           "the one that applies here by hand"))
    texts = {printed[n] for n in covered}
    if len(texts) == 1 and "*" in dict(demo.expect_output):
        return [("*", printed[covered[0]])]
    return [(n, printed[n]) for n in covered]


def new_compile(result: DemoResult) -> list[tuple[str, CompileClaim]] | None:
    """The ``:expect-compile:`` records, (name, counts), that hold: ``None`` when the recorded
    ones do, or when none is recorded; the counts each record states, as compiling did them.
    One ``*`` record where the option had one and every covered value did the same."""
    demo, here = result.demo, result.environment
    if not demo.expect_compile:  # a demo that compares nothing gets its first record
        return first_compile_record(result)
    seen = {}
    for vr in result.variants:
        claim = demo.expected_compile(vr.variant.name, here)
        if claim is not None and vr.compiled.compile is not None:
            seen[vr.variant.name] = (claim, claim.observed(vr.compiled.compile))
    if all(claim == now for claim, now in seen.values()):
        return None
    unfit = sorted({why for _, now in seen.values()
                    for why in (*(now.break_reasons or ()), *(now.recompile_guards or ()),
                                *(now.skip_reasons or ()))
                    if not syntax.reason_text_fits(why)})
    if unfit:  # (it would not read back as written)
        raise Blocked(msg("a reason of its :expect-compile: cannot be written in a record (a ; or "
                           "an unbalanced square bracket): {reason}; record the counts alone, or "
                           "this reason by hand in other words", reason=repr(unfit[0])))
    if any(record.scope is not None for record in demo.expect_compile):
        raise Blocked(msg("its :expect-compile: has scoped records (value[torch...]): rewrite "
                           "the one that applies here by hand"))
    if len({now for _, now in seen.values()}) == 1 and "*" in dict(demo.expect_compile):
        return [("*", next(now for _, now in seen.values()))]
    return [(name, now) for name, (_, now) in seen.items()]


def recorded(result: DemoResult) -> Demo | None:
    """``result``'s demo as its source records it once the new records are written (``None``:
    they hold); raises :class:`Blocked`. The build judges it again, so that the pages it writes
    show what the sources now say."""
    expect, output, compiling = new_expect(result), new_output(result), new_compile(result)
    if expect is None and output is None and compiling is None:
        return None
    demo = result.demo
    return replace(demo, expect=records(_applied(demo.expect, expect)) if expect else demo.expect,
                   expect_output=records(output) if output is not None else demo.expect_output,
                   expect_compile=records(compiling) if compiling is not None
                   else demo.expect_compile)


def scoped(result: DemoResult, changes: list[tuple[str, Claim]]) -> list[tuple[str, Claim]]:
    """Records for the other environments of the result sets where what they did is not what
    the page (with ``changes``) records for them: a value's own scoped record that applies there
    is rewritten in place, else one is added, ``off[torch==2.15.0]: matches``, per environment
    and value. Raises :class:`Blocked` when such a scope would also cover an environment that did
    otherwise (two environments of one release and device that disagree: only the writer can
    tell them apart)."""
    out: list[tuple[str, Claim]] = []
    every = [r for r in (result, *result.others) if r.environment is not None]
    for other in result.others:
        environment = other.environment
        if environment is None or not environment.torch:
            continue
        release = re.match(r"[\w.]+", environment.torch)
        for vr in other.variants:
            if vr.compiled.not_run or vr.verdict.outcome in ("error", "ran"):
                continue
            name = vr.variant.name
            found = governing(_applied(result.demo.expect, changes + out), name, environment)
            if found is not None and found.claim.holds(vr):
                continue
            scope = found.scope if found is not None and found.value == name else None
            if scope is None:
                scope = scope_parts(f"torch=={release.group(0) if release else environment.torch}")
            for same in every:
                there = next(v for v in same.variants if v.variant.name == name)
                if (same.environment is not None and scope.holds(same.environment)
                        and not there.compiled.not_run and there.verdict.text != vr.verdict.text):
                    scope_text = str(scope)
                    raise Blocked(msg(
                        "value {value}: {here} did {did} and {there} did {there_did}, with the "
                        "same torch release and device ({value}[{scope}] would cover both); "
                        "record it by hand, scoped so as to tell them apart",
                        value=name, here=environment.label, did=vr.verdict.text,
                        there=same.environment.label, there_did=there.verdict.text,
                        scope=scope_text))
            out.append((scoped_name(name, scope), vr.verdict.claim))
    return out


def _applied(expect: tuple[tuple[str, Claim], ...],
             changes: list[tuple[str, Claim]]) -> tuple[tuple[str, Claim], ...]:
    """The record as it reads once ``changes`` are written: in place, or appended."""
    todo = dict(changes)
    kept = tuple((name, todo.pop(name, outcome)) for name, outcome in expect)
    return kept + tuple(todo.items())


def _refuse_conflict(expect: tuple[tuple[str, Claim], ...], name: str, result: DemoResult) -> None:
    for shown in (result, *result.others):
        pair = conflict(expect, name, shown.environment)
        if pair is not None:
            label = shown.environment.label if shown.environment else msg("this build")
            first, second = pair[0][0], pair[1][0]
            raise Blocked(msg("value {value}: {first} and {second} both apply in {where} and "
                               "record different outcomes: narrow a scope by hand first",
                               value=name, first=first, second=second, where=label))


def _converges(result: DemoResult, changes: list[tuple[str, Claim]]) -> None:
    """Raise :class:`Blocked` unless the record with ``changes`` holds in every environment
    that has an outcome, as the next build will read it (so that a rewrite never leaves a page
    that fails again)."""
    if not changes:
        return
    final = _applied(result.demo.expect, changes)
    try:
        syntax.refuse_overlaps(list(final))
    except syntax.SyntaxProblem as exc:
        raise Blocked(msg("the new record would not be read: {problem}",
                           problem=exc.args[0])) from None
    for shown in (result, *result.others):
        for vr in shown.variants:
            if vr.compiled.not_run or vr.verdict.outcome in ("error", "ran"):
                continue
            _refuse_conflict(final, vr.variant.name, shown)
            found = governing(final, vr.variant.name, shown.environment)
            if found is None or not found.claim.holds(vr):
                label = shown.environment.label if shown.environment else msg("this build")
                record = syntax.expect_text(list(final))
                raise Blocked(msg("value {value}: no record found that holds in {where} as well "
                                   "as in the others ({record}); record it by hand",
                                   value=vr.variant.name, where=label, record=record))
