"""Located warnings for findings, one summary at the end of the build, the exit status."""

from __future__ import annotations

import json
import logging as std_logging
from pathlib import Path
from typing import TYPE_CHECKING

from sphinx.util import logging
from sphinx.util.console import bold, red  # type: ignore[attr-defined]

from .model import WARNING_TYPE

if TYPE_CHECKING:
    from sphinx.application import Sphinx

    from .execute import Stats
    from .model import DemoResult, Finding

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


def warn(finding: Finding) -> None:
    logger.warning(finding.message, type=WARNING_TYPE, subtype=finding.subtype,
                   location=finding.location)


def summarize(app: Sphinx, results: list[DemoResult], problems: list[Finding], stats: Stats,
              fail: bool) -> None:
    """Print one summary of every demo checked in this build; fail the build if asked."""
    if not results and not problems:
        return
    failures = problems + [f for r in results for f in r.findings if f.failed]
    values = sum(len(r.variants) for r in results)
    logger.info(bold(
        f"autocast-demo: {len(results)} demos, {values} values checked "
        f"({stats.executed} runs, {stats.cached} from the cache) in {stats.seconds:.1f} s"
    ))
    if stats.executed:
        why = " (CUDA, or a worker that could not fork: see above)" if stats.fresh else ""
        logger.info(f"autocast-demo: {stats.executed - stats.fresh} runs forked from the warm "
                    f"worker, {stats.fresh} in a new interpreter{why}")
    slowest = sorted(stats.per_demo.items(), key=lambda kv: -kv[1])[:3]
    if slowest and stats.executed:
        logger.info("autocast-demo: slowest: " + ", ".join(f"{loc} ({s:.2f} s)" for loc, s in slowest))
    if not failures:
        return
    lines = [f"autocast-demo: {len(failures)} failure(s):"]
    lines += [f"  {f.location}: {f.message.splitlines()[0]}" for f in failures]
    logger.info(red("\n".join(lines)))
    if fail:
        app.statuscode = 1


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
