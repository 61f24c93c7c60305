"""What the engine says to the writer: the one error of a build that can run no demo, a worker
that could not be kept or cannot fork, and (``-v``) what made the runs cheaper."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from sphinx.util import logging

from ..core.config import conf_line
from ..core.subtypes import ours

if TYPE_CHECKING:
    from sphinx.application import Sphinx

    from ..core.model import Location
    from ..plan.planned import Stats
    from .protocol import EngineFault, Ready

logger = logging.getLogger(__name__)


def engine_problem(error: str, fault: EngineFault, confdir: str,
                   config: str) -> tuple[str, Location]:
    """The one error of a build that can run no demo: what to do, and the conf.py line to see.

    Said once for the whole build, before any demo runs, instead of once per demo.
    """
    never = ("or set autocast_demo_execute = 'never' (or AUTOCAST_DEMO_EXECUTE=never) to "
             "render the pages from the result cache without running anything")
    first = error.strip().splitlines()[0] if error.strip() else "the worker failed"
    setting = "autocast_demo_"
    if fault == "no-torch":
        advice = (f"torch is not installed for {sys.executable}: install it there "
                  f"(pip install 'torch>=2.9'), {never}")
    elif fault == "torch-import":
        advice = (f"{first}; torch is installed but does not import (run python -c 'import "
                  f"torch' to see why) and needs repairing, {never}")
    elif fault == "no-config":
        setting = "autocast_demo_config"
        advice = (f"{first}: this torch cannot set {config} (backward_pass_autocast first "
                  "shipped in torch 2.9): upgrade torch, correct autocast_demo_config, "
                  f"{never}")
    else:
        advice = f"{error.strip()}\n{never[3:]}"
    return f"autocast-demo: no demo can run: {advice}", conf_line(confdir, setting)


def engine_speed(stats: Stats, info: Ready, warm: bool) -> None:
    """``-v``: what made this build's runs cheaper (``warm``: the warm zygote got ready)."""
    if warm:
        logger.verbose(f"autocast-demo: the worker is ready (torch {info.get('torch')}, "
                       f"{info.get('huge_pages', 0)} MiB on huge pages)")
    kept = info.get("kept")
    if kept:
        what = ("started for this build" if kept["build"] == 1
                else f"kept from an earlier build, serving its build {kept['build']}")
        logger.verbose(f"autocast-demo: the worker (pid {kept['pid']}) was {what}; it stays "
                       f"{kept['idle']:g} s after its last build")
    if stats.eager_zygote:
        logger.verbose(f"autocast-demo: {stats.eager_zygote} eager runs ran in a zygote forked "
                       f"before the warm-up, {stats.eager_early} of them while it ran")
    if stats.copied_ahead:
        logger.verbose(f"autocast-demo: {stats.copied_ahead} of {stats.executed} runs began with "
                       "the worker's pages a compile writes already copied, on an idle core (up "
                       f"to {stats.copied_bytes >> 20} MiB a run)")


def not_kept(app: Sphinx, why: str | None) -> bool:
    """Say that ``autocast_demo_keep_worker`` could not be honoured, and why; whether it was."""
    if not why:
        return False
    logger.warning(f"autocast-demo: no kept worker serves this build ({why}); this build "
                   "starts its own, which ends with it", **ours("slow"),
                   location=str(conf_line(str(app.confdir), "autocast_demo_keep_worker")))
    return True


def cannot_fork(app: Sphinx, info: Ready) -> bool:
    """Say, with why, that runs cannot fork from the warm worker (each then pays Python's and
    torch's start, seconds instead of milliseconds); whether it was said."""
    if info.get("fork", True):
        return False
    threads = info.get("threads", [])
    logger.warning(
        f"autocast-demo: runs start a new Python interpreter (seconds each instead of a fork of "
        f"the warm worker): after importing torch the worker had {len(threads)} more thread(s) "
        f"running ({', '.join(sorted(set(threads)))}), and forking a process with threads is "
        "unsafe. A library started a thread pool at import: find it with python -c 'import "
        "torch, threading' and /proc/self/task, and set its thread-count variable to 1 "
        "(OPENBLAS_NUM_THREADS, OMP_NUM_THREADS and MKL_NUM_THREADS are set for the worker "
        "already)", **ours("slow"),
        location=str(conf_line(str(app.confdir), "sphinx_autocast_demo")))
    return True
