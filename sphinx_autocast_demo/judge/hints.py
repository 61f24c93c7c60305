"""What a finding tells the writer to do, where that needs more than its own value's result.

Three facts the check reads across a demo's values or environments: whether every difference
is only rounding, and which tolerance option would allow it (:func:`tolerance_hint`, said by
:func:`alike` where no value decides the verdict); which
releases a ``no-config`` record should cover (:func:`missing_scope`); and whether a ``default``
row broke because torch's default is another value than the page takes it to be
(:func:`default_change`).
"""

from __future__ import annotations

import ast
import math
from typing import TYPE_CHECKING, Literal

from ..core.i18n import msg, n_msg
from ..core.model import CONFIG_SINCE, DefaultChange, Environment, Finding
from ..core.scopes import Scope, scope_parts
from ..read import syntax

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from packaging.version import Version

    from ..core.model import Claim, Demo, DemoResult, TensorDiff, Variant, VariantResult, Verdict

#: The largest difference a tolerance is proposed for: float32 rounding (a sum taken in another
#: order is off by ~1e-7 of its size) stays below it; what an autocast dtype changes (bfloat16
#: keeps ~3 digits, float16 ~4) does not. Above it, a difference is the page's to explain.
ROUNDING = 1e-5

Kind = Literal["grad", "output"]


def rounding_only(verdicts: Iterable[Verdict]) -> dict[Kind, TensorDiff] | None:
    """The tensor furthest off, per tolerance (``grad`` for gradients, ``output`` for every
    other tensor), when every difference of every verdict is a measured one of at most
    :data:`ROUNDING`; None when any is not (another dtype or shape, printed text, a value
    not copied, a larger one) or a verdict differs without a tensor to show."""
    worst: dict[Kind, TensorDiff] = {}
    for verdict in verdicts:
        failing = [d for d in verdict.diffs if not d.equal]
        if verdict.outcome != "differs" or not failing:
            return None
        for diff in failing:
            if (diff.kind not in ("grad", "value") or diff.max_abs is None
                    or not 0 < diff.max_abs <= ROUNDING):
                return None
            kind: Kind = "grad" if diff.kind == "grad" else "output"
            if kind not in worst or (worst[kind].max_abs or 0.0) < diff.max_abs:
                worst[kind] = diff
    return worst or None


def tolerance_hint(demo: Demo, verdicts: Iterable[Verdict]) -> str | None:
    """What to write so that differences of no more than rounding match (None: not such):
    the option that applies to the demo, its own where it sets one (conf.py's would not reach
    it), else the directive option, naming the conf value that applies now."""
    worst = rounding_only(verdicts)
    if worst is None:
        return None
    allow = [_allow(demo, kind, diff) for kind, diff in sorted(worst.items())]
    return allow[0] if len(allow) == 1 else msg("{grad}; {output}", grad=allow[0], output=allow[1])


def rounding_note(verdicts: Iterable[Verdict]) -> str:
    """``at most 3.00e-08, in w.grad``: how far off the tensor furthest off is (empty: not
    rounding only)."""
    worst = rounding_only(verdicts)
    if not worst:
        return ""
    diff = max(worst.values(), key=lambda d: d.max_abs or 0.0)
    difference = f"{diff.max_abs:.2e}"  # (formatted apart: Babel warns of an f-string in a call)
    return msg("at most {difference}, in {tensor}", difference=difference, tensor=diff.name)


def _allow(demo: Demo, kind: Kind, diff: TensorDiff) -> str:
    option = f"{kind}-tolerance"
    setting = f"autocast_demo_{kind}_tolerance"
    now = demo.tolerance.grad if kind == "grad" else demo.tolerance.output
    # A power of ten at or above the largest difference: |c - e| <= tol * (1 + |e|) then holds
    # for every element of these runs, whatever |e|.
    want = 10.0 ** math.ceil(math.log10(diff.max_abs or ROUNDING))
    span = demo.source_map.span(option)
    now_text, want_text = f"{now:g}", f"{want:g}"  # (apart: Babel warns of an f-string in a call)
    if span is not None:
        return msg("raise this demo's :{option}: {now} (line {line}) to {want}", option=option,
                    now=now_text, line=span.first, want=want_text)
    return msg("add :{option}: {want} to this demo (it names none, so conf.py's {setting} = "
                "{now} applies to it)", option=option, want=want_text, setting=setting,
                now=now_text)


def missing_scope(config: str, lacking: Sequence[str], having: Sequence[str]) -> tuple[Scope, str]:
    """The torch releases a ``no-config`` record of ``config`` should cover, and why: every
    release before the one that added it, where that is known (:data:`.CONFIG_SINCE`) or seen
    (an environment of the result sets that has it, newer than every one that lacks it), else
    every release up to the newest minor one seen lacking it. ``lacking`` and ``having``: the
    torch versions of the environments that lack the config and that have it; the scope holds
    for each of the first and none of the second, or it names the first of them only (the
    build's own, first)."""
    from packaging.version import InvalidVersion, Version

    if not lacking:
        raise ValueError("no environment lacks the config")

    def parsed(versions: Sequence[str]) -> list[Version]:
        found = []
        for text in versions:
            try:
                found.append(Version(text))
            except InvalidVersion:
                continue
        return found

    short = config.rsplit(".", 1)[-1]
    without, having_parsed = parsed(lacking), parsed(having)
    candidates: list[tuple[str, str]] = []
    since = CONFIG_SINCE.get(config)
    if since:
        candidates.append((f"<{since}", msg("{config} first shipped in torch {since}",
                                             config=short, since=since)))
    newest = max(without, default=None)
    later = [v for v in having_parsed if newest is not None and v > newest]
    if later:
        first = min(later)
        candidates.append((f"<{_release(first)}", msg("torch {version} has it", version=str(first))))
    if newest is not None:
        major, minor = (*newest.release, 0)[:2]
        release = f"{major}.{minor}"
        candidates.append((f"<{major}.{minor + 1}", msg(
            "every release up to {release}: move the bound up to the release that adds it, "
            "once you know it", release=release)))
    for specs, why in candidates:
        scope = scope_parts(f"torch{specs}")
        if (all(scope.holds(_at(v)) for v in lacking)
                and not any(scope.holds(_at(v)) for v in having)):
            return scope, why
    # Releases that lack it on both sides of one that has it: the writer's to scope. This
    # release, every build of it (its public version: 2.13.0 for 2.13.0+cpu), is sure.
    try:
        public = Version(lacking[0]).public
    except InvalidVersion:
        public = lacking[0]
    return scope_parts(f"torch=={public}"), msg(
        "torch {version}; widen it to the releases you know lack it", version=public)


def _release(version: Version) -> str:
    """``2.16.0`` -> ``2.16``; ``2.15.1`` stays: the bound a writer would type."""
    parts = list(version.release)
    while len(parts) > 2 and parts[-1] == 0:
        parts.pop()
    return ".".join(map(str, parts))


def _at(torch: str) -> Environment:
    return Environment(label="", torch=torch, python="")


def default_change(result: DemoResult, vr: VariantResult, had: frozenset[str]) -> DefaultChange | None:
    """Why the ``default`` row ``vr`` (whose record broke) broke, where it is torch's default:
    the value the row ran under is not a value the page records it alike with. Found from the
    page's other records that still hold: those alike with the default's (the value the page
    takes the default to be, which torch's is not), or the row of torch's new default, kept
    apart from the default's record and now doing what the default row does. None where the
    records say nothing of which value the default is, or where no torch the page was checked
    with (``had``: their defaults) had another default: then the record is wrong, not torch."""
    demo, environment = result.demo, result.environment
    now = vr.config_default
    expected = demo.expected(vr.variant.name, environment)
    if vr.variant.name != syntax.DEFAULT or not now or expected is None or not had - {now}:
        return None
    recorded: list[str] = []
    unlike = ""
    for other in result.variants:
        claim = demo.expected(other.variant.name, environment)
        if other is vr or claim is None or not _holds(claim, other):
            continue
        its_own = _names(other.variant, now)
        if claim == expected:
            if its_own:  # the page records the default alike with the value it has
                return None
            recorded.append(other.variant.source or other.variant.name)
        elif its_own and other.verdict.text == vr.verdict.text:
            unlike = other.variant.name
    if not recorded and not unlike:
        return None
    return DefaultChange(config=demo.config, now=now, recorded=tuple(recorded), unlike=unlike)


def _holds(claim: Claim, vr: VariantResult) -> bool:
    return vr.verdict.outcome not in ("error", "no-config") and claim.holds(vr)


def _names(variant: Variant, now: str) -> bool:
    """Does ``variant`` set the config to ``now`` (a value's repr, as the default row read it)?"""
    try:
        value = ast.literal_eval(now)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return variant.source == now
    return bool(variant.value == value)


def alike(result: DemoResult) -> Finding | None:
    """A demo whose values all give one verdict proves nothing about the value: under the wrong
    one its table would look the same. Said at the demo, unless ``:alike:`` says that is the
    point; a demo shown as its printed output (``:show: outputs``) shows no verdict, and its
    output record is what can fail. Only this build's own verdicts; the standard values a demo
    does not name were run too (its probes), so that a demo of one value is held to this as
    well; a probe that did not run (a CUDA demo on a CPU build, a worker that died) is left out."""
    demo = result.demo
    probes = [vr for vr in result.probes if not vr.compiled.not_run]
    judged = (*result.variants, *probes)
    outcomes = {vr.verdict.outcome for vr in judged}
    if not demo.held_to_alike or len(judged) < 2 or len(outcomes) != 1:
        return None
    outcome = outcomes.pop()
    if outcome not in ("matches", "differs"):  # an error everywhere is said as that error
        return None
    names = [vr.variant.name for vr in judged]
    listed = msg("{values} and {last}", values=", ".join(names[:-1]), last=names[-1])
    also = [vr.variant.name for vr in probes]
    run = (n_msg(" ({values} was run too, to check)", " ({values} were run too, to check)",
                  len(also), values=" and ".join(also)) if also else "")
    every = msg("matches eager") if outcome == "matches" else msg("differs from eager")
    depend = msg("make the snippet depend on the value (a float32 matrix product in the "
                  "backward does), or add :alike: if sameness is its point")
    verdicts = [vr.verdict for vr in judged]
    hint = tolerance_hint(demo, verdicts) if outcome == "differs" else None
    if hint is not None:
        # Differences no value decides: the tolerance first, or the writer makes the snippet
        # depend on the value when it already does, and the rows would still look alike.
        return Finding(
            severity="missing", subtype="alike", location=demo.location,
            message=msg("this demo cannot tell {values} apart{run}: every one differs from "
                         "eager, but only by rounding ({rounding}), which no value decides; "
                         "allow it: {hint}. If its values then still give one verdict, {depend}",
                         values=listed, run=run, rounding=rounding_note(verdicts), hint=hint,
                         depend=depend))
    return Finding(
        severity="missing", subtype="alike", location=demo.location,
        message=msg("this demo cannot tell {values} apart{run}: every one {outcome}, so it "
                     "would look the same under the wrong value; {depend}", values=listed,
                     run=run, outcome=every, depend=depend))
