"""Located warnings for findings, one summary at the end of the build, the exit status."""

from __future__ import annotations

import json
import logging as std_logging
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from sphinx.util import logging
from sphinx.util.console import bold, red  # type: ignore[attr-defined]

from ..core.conflines import conf_line
from ..core.i18n import __, in_console, n__
from ..core.publish import publish
from ..core.subtypes import WARNING_TYPE, ours
from ..core.text import for_log, one_line

if TYPE_CHECKING:

    from sphinx.application import Sphinx

    from ..core.model import DemoResult, Finding
    from ..judge.judgement import Judgement
    from ..plan.planned import Stats
    from ..plan.results import EnvironmentSet

logger = logging.getLogger(__name__)


class _TypeSuffix(std_logging.Filter):
    def filter(self, record: std_logging.LogRecord) -> bool:
        subtype = getattr(record, "subtype", None)
        if getattr(record, "type", None) == WARNING_TYPE and subtype:
            record.msg = f"{record.msg} [{WARNING_TYPE}.{subtype}]"
        return True


def show_warning_types(app: Sphinx) -> None:
    """``builder-inited``: Sphinx < 7.3 never prints a warning's ``[type.subtype]``; print it
    for ours, so that every Sphinx tells the writer what ``suppress_warnings`` takes."""
    if hasattr(app.config, "show_warning_types"):  # 7.3 and later: the user decides
        return
    for handler in std_logging.getLogger("sphinx").handlers:
        if type(handler).__name__ == "WarningStreamHandler":
            handler.addFilter(_TypeSuffix())


def warn(finding: Finding, app: Sphinx) -> None:
    # The location stays absolute, as Sphinx gives its own; the text is what we publish, and
    # it may carry a result set's text (another environment's exception, output): for_log.
    logger.warning(for_log(publish(in_console(finding.message), app)), **ours(finding.subtype),
                   location=str(finding.location))


def budgets(app: Sphinx, results: list[DemoResult], stats: Stats, demo_budget: float,
            build_budget: float) -> None:
    """Warn where this build's runs took longer than a budget allows (0: no budget): at each
    demo over ``demo_budget``, naming its slowest runs; at conf.py for the whole build over
    ``build_budget``, naming the slowest demos. Results from the cache cost nothing."""
    if demo_budget > 0:
        for result in results:
            said = {"compiled": __("compiled"), "eager": __("eager")}
            runs = [(run.seconds, f"{vr.variant.name} {said[label]}") for vr in result.variants
                    if not vr.cached for run, label in vr.runs]
            spent = sum(seconds for seconds, _ in runs)
            if spent <= demo_budget:
                continue
            slowest = ", ".join(__("{run} {seconds} s").format(run=what, seconds=f"{seconds:.1f}")
                                for seconds, what in sorted(runs, reverse=True)[:3])
            logger.warning(
                __("this demo's runs took {spent} s, over autocast_demo_budget ({budget} s); "
                   "slowest: {slowest}. Make the snippet smaller (fewer values, smaller tensors) "
                   "or raise the budget").format(spent=f"{spent:.1f}", budget=f"{demo_budget:g}",
                                                 slowest=slowest),
                **ours("budget"), location=str(result.demo.location))
    if 0 < build_budget < stats.seconds:
        demos = sorted(stats.per_demo.items(), key=lambda kv: -kv[1])[:3]
        logger.warning(
            __("the demos took {spent} s to run in this build, over autocast_demo_build_budget "
               "({budget} s); slowest: {slowest}. Shrink those demos, give them a :values: of "
               "the values that matter, or raise the budget").format(
                spent=f"{stats.seconds:.1f}", budget=f"{build_budget:g}",
                slowest=", ".join(__("{demo} ({seconds} s)").format(
                    demo=where, seconds=f"{seconds:.1f}") for where, seconds in demos)),
            **ours("budget"),
            location=str(conf_line(str(app.confdir), "autocast_demo_build_budget")))


def missing_environments(app: Sphinx, missing: dict[str, list[str]],
                         sets: dict[str, EnvironmentSet]) -> None:
    """One warning per expected environment that lacks results for some demos of this build."""
    expected = set(app.config.autocast_demo_environments) or set(sets)
    confdir = str(app.confdir)
    for label, where in missing.items():
        if label not in expected:
            continue
        found = sets[label]
        if not found.roots:
            logger.warning(
                __("autocast-demo: no result set holds the environment {label}, and every demo's "
                   "cells say so: make its results with sphinx-build -b autocast-check in that "
                   "environment (autocast_demo_environment = {label}), add their directory to "
                   "autocast_demo_results, or take the label out of autocast_demo_environments"
                   ).format(label=repr(label)),
                **ours("environment"),
                location=str(conf_line(confdir, "autocast_demo_environments")))
            continue
        shards = found.missing_shards()
        why = (n__("the results of shard {shards} are not in the sets",
                   "the results of shards {shards} are not in the sets", len(shards)).format(
                       shards=", ".join(shards)) if shards else
               __("these demos changed since the set was made, or it was made from other pages"))
        first = publish(", ".join(where[:3]), app)
        if len(where) > 3:
            first = __("{first} and {more} more").format(first=first, more=len(where) - 3)
        logger.warning(
            n__("autocast-demo: the result sets of {label} ({made}) have no result for {n} value "
                "of this build ({first}): {why}; their cells say so. Make the set again in that "
                "environment (sphinx-build -b autocast-check) and merge it",
                "autocast-demo: the result sets of {label} ({made}) have no result for {n} values "
                "of this build ({first}): {why}; their cells say so. Make the set again in that "
                "environment (sphinx-build -b autocast-check) and merge it", len(where)).format(
                    label=repr(label), made=one_line(in_console(found.made)), n=len(where), first=first,
                    why=why), **ours("environment"),
            location=str(conf_line(confdir, "autocast_demo_results")))


def unchecked_by(app: Sphinx, demos: int) -> None:
    """At the end of a build with a builder that checks code but runs no demo (``-b
    doctest``): one warning saying how many demos it did not check and how to check them, so
    that a CI running only that builder does not take the pages as checked. ``-W`` fails on it;
    ``suppress_warnings = ["autocast_demo.not-checked"]`` silences it."""
    if not demos:
        return
    name = app.builder.name
    logger.warning(
        n__("autocast-demo: -b {builder} checks none of the {n} demo of these docs; check them "
            "with sphinx-build -b autocast-check (or -b html)",
            "autocast-demo: -b {builder} checks none of the {n} demos of these docs; check them "
            "with sphinx-build -b autocast-check (or -b html)", demos).format(builder=name, n=demos),
        **ours("not-checked"),
        location=str(conf_line(str(app.confdir), "extensions")))


@dataclass(frozen=True)
class Counts:
    """What one build did, as numbers: the summary says them, and ``autocast_demo_stats.json``
    (in the doctree directory) and the autocast-check report hold them for programs."""

    demos: int = 0  # checked in this build (from a run or the cache)
    values: int = 0  # (demo, value) pairs of those demos
    checked: int = 0  # of those, checked with the installed torch
    not_checked: int = 0
    failures: int = 0  # failing findings and directive errors
    runs: int = 0  # runs (one value, compiled or eager) that went to a worker
    probe_runs: int = 0  # of those, runs of values a demo does not name (never shown)
    cached: int = 0  # values answered from the cache
    forked: int = 0  # runs forked from the worker (its warm zygote or its eager one)
    fresh: int = 0  # runs in a new interpreter
    # 0: the runs were forked from this build's own worker (or none ran); 1: from a worker this
    # build started and kept for later ones (``autocast_demo_keep_worker``); n: from a kept
    # worker serving its n-th build.
    kept_worker: int = 0
    seconds: float = 0.0


def counts(judged: list[Judgement], problems: list[Finding], stats: Stats) -> Counts:
    values = sum(len(j.here.values) for j in judged)
    skipped = sum(not v.checked for j in judged for v in j.here.values)
    failures = len(problems) + sum(len(j.failures) for j in judged)
    return Counts(demos=len(judged), values=values, checked=values - skipped,
                  not_checked=skipped, failures=failures, runs=stats.executed,
                  probe_runs=stats.probes,
                  cached=stats.cached, forked=stats.executed - stats.fresh, fresh=stats.fresh,
                  kept_worker=stats.kept, seconds=round(stats.seconds, 3))


def write_counts(found: Counts, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(asdict(found), indent=1) + "\n", encoding="utf-8")


def summarize(app: Sphinx, results: list[DemoResult], problems: list[Finding], stats: Stats,
              torch: str) -> Counts:
    """Print one summary of every demo checked in this build; return its numbers."""
    if not results and not problems:  # (an unchanged build: no judge to import)
        return counts([], problems, stats)
    from ..judge.judgement import judge_all

    judged = judge_all(results, torch)
    found = counts(judged, problems, stats)
    failures = problems + [f for j in judged for f in j.failures]
    demos = n__("{n} demo", "{n} demos", found.demos).format(n=found.demos)
    checked = n__("{n} value checked", "{n} values checked", found.checked).format(n=found.checked)
    if found.not_checked:
        checked = __("{checked}, {n} not checked").format(checked=checked, n=found.not_checked)
    runs = n__("{n} run", "{n} runs", found.runs).format(n=found.runs) + _probes(stats.probes)
    logger.info(bold(__("autocast-demo: {demos}, {checked} ({runs}, {cached} from the cache) in "
                        "{seconds} s").format(demos=demos, checked=checked, runs=runs,
                                              cached=found.cached, seconds=f"{stats.seconds:.1f}")))
    if stats.executed:
        why = __(" (CUDA, or a worker that could not fork: see above)") if stats.fresh else ""
        kept = ""
        if stats.kept:
            whose = (__("kept for later builds") if stats.kept == 1
                     else __("kept from an earlier build; this is its build {n}").format(n=stats.kept))
            ended = __("; it ended during this build: the next one starts a new worker")
            kept = f" ({whose}{ended if stats.kept_ended else ''})"
        forked = stats.executed - stats.fresh
        logger.info(n__("autocast-demo: {n} run forked from the worker{kept}, {fresh} in a new "
                        "interpreter{why}",
                        "autocast-demo: {n} runs forked from the worker{kept}, {fresh} in a new "
                        "interpreter{why}", forked).format(n=forked, kept=kept, fresh=stats.fresh,
                                                           why=why))
    for line in _unchecked_lines(judged):
        logger.info(__("autocast-demo: {line}").format(line=line))
    slowest = sorted(stats.per_demo.items(), key=lambda kv: -kv[1])[:3]
    if slowest and stats.executed:
        logger.info(__("autocast-demo: slowest: {demos}").format(demos=", ".join(
            __("{demo} ({seconds} s)").format(demo=loc, seconds=f"{s:.2f}") for loc, s in slowest)))
    if not failures:
        return found
    lines = [n__("autocast-demo: {n} failure:", "autocast-demo: {n} failures:",
                 len(failures)).format(n=len(failures))]
    lines += [f"  {f.location}: {for_log(publish(in_console(f.message), app).splitlines()[0])}"
              for f in failures]
    logger.info(red("\n".join(lines)))
    return found


def _probes(runs: int) -> str:
    """The runs of values demos do not name (shown nowhere), so that the count adds up."""
    if not runs:
        return ""
    return n__(", {n} of them of the values a demo does not name, to check that it can fail",
               ", {n} of them of the values a demo does not name, to check that it can fail",
               runs).format(n=runs)


def _unchecked_lines(judged: list[Judgement]) -> list[str]:
    """What the build did not check that no warning tells: skipped CUDA demos, older results."""
    lines = []
    cuda = [j for j in judged if any(v.why is not None and v.why.cause == "no-cuda"
                                     and v.why.kind == "skipped" for v in j.here.values)]
    if cuda:
        lines.append(n__("{n} CUDA demo skipped: the build machine has no CUDA "
                         "(autocast_demo_cuda_unavailable = 'skip')",
                         "{n} CUDA demos skipped: the build machine has no CUDA "
                         "(autocast_demo_cuda_unavailable = 'skip')", len(cuda)).format(n=len(cuda)))
    older: dict[str, int] = {}
    for j in judged:
        for v in j.here.values:
            if v.why is not None and v.why.other_torch:
                older[v.why.other_torch] = older.get(v.why.other_torch, 0) + 1
    torch = judged[0].torch if judged else ""
    for version, count in sorted(older.items()):
        lines.append(n__("{n} value rendered from results of torch {version} cached earlier, "
                         "not checked with the installed torch {torch}",
                         "{n} values rendered from results of torch {version} cached earlier, "
                         "not checked with the installed torch {torch}", count).format(
                             n=count, version=version, torch=torch))
    return lines


def write_timings(app: Sphinx, stats: Stats) -> None:
    """``autocast_demo_timing_report``: run times per demo, slowest first, as JSON and text."""
    rows = sorted(stats.per_demo.items(), key=lambda kv: -kv[1])
    out = Path(app.outdir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "autocast_demo_timings.json").write_text(
        json.dumps([{"demo": loc, "seconds": round(s, 4)} for loc, s in rows], indent=1),
        encoding="utf-8",
    )
    width = max((len(loc) for loc, _ in rows), default=4)
    text = [f"{'demo':<{width}}  seconds", f"{'-' * width}  -------"]
    text += [f"{loc:<{width}}  {s:7.3f}" for loc, s in rows]
    text.append(f"{'total':<{width}}  {stats.seconds:7.3f}")
    (out / "autocast_demo_timings.txt").write_text("\n".join(text) + "\n", encoding="utf-8")
