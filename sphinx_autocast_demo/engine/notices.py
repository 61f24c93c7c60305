"""What the engine says to the writer: the one error of a build that can run no demo, a worker
that could not be kept or cannot fork, and (``-v``) what made the runs cheaper."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from sphinx.util import logging

from ..core.conflines import conf_line
from ..core.i18n import __, n__
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
    never = __("set autocast_demo_execute = 'never' (or AUTOCAST_DEMO_EXECUTE=never) to render "
               "the pages from the result cache without running anything")
    first = error.strip().splitlines()[0] if error.strip() else __("the worker failed")
    setting = "autocast_demo_"
    if fault == "no-torch":
        advice = __("torch is not installed for {python}: install it there (pip install "
                    "'torch>=2.9'), or {never}").format(python=sys.executable, never=never)
    elif fault == "torch-import":
        advice = __("{error}; torch is installed but does not import (run python -c 'import "
                    "torch' to see why) and needs repairing, or {never}").format(error=first,
                                                                                 never=never)
    elif fault == "no-config":
        setting = "autocast_demo_config"
        advice = __("{error}: this torch cannot set {config} (backward_pass_autocast first "
                    "shipped in torch 2.9): upgrade torch, correct autocast_demo_config, or "
                    "{never}").format(error=first, config=config, never=never)
    else:
        advice = f"{error.strip()}\n{never}"
    return (__("autocast-demo: no demo can run: {advice}").format(advice=advice),
            conf_line(confdir, setting))


def engine_speed(stats: Stats, info: Ready, warm: bool) -> None:
    """``-v``: what made this build's runs cheaper (``warm``: the warm zygote got ready)."""
    if warm:
        logger.verbose(__("autocast-demo: the worker is ready (torch {torch})").format(
            torch=info.get("torch")))
    kept = info.get("kept")
    if kept:
        what = (__("started for this build") if kept["build"] == 1
                else __("kept from an earlier build, serving its build {n}").format(n=kept["build"]))
        logger.verbose(__("autocast-demo: the worker (pid {pid}) was {what}; it stays {idle} s "
                          "after its last build").format(pid=kept["pid"], what=what,
                                                         idle=f"{kept['idle']:g}"))
    if stats.eager_zygote:
        logger.verbose(n__("autocast-demo: {n} eager run ran in a zygote forked before the "
                           "warm-up, {early} of them while it ran",
                           "autocast-demo: {n} eager runs ran in a zygote forked before the "
                           "warm-up, {early} of them while it ran", stats.eager_zygote).format(
                               n=stats.eager_zygote, early=stats.eager_early))
    if stats.before_turn:
        logger.verbose(n__("autocast-demo: {n} compiled run went before its turn, since a run of "
                           "its snippet was compiling (the two would compile the same kernels)",
                           "autocast-demo: {n} compiled runs went before their turn, since a run "
                           "of their snippet was compiling (the two would compile the same "
                           "kernels)", stats.before_turn).format(n=stats.before_turn))
    if stats.copied_ahead:
        logger.verbose(n__("autocast-demo: {n} of {executed} run began with the worker's pages "
                           "a compile writes already copied, on an idle core (up to {mib} MiB a "
                           "run)",
                           "autocast-demo: {n} of {executed} runs began with the worker's pages "
                           "a compile writes already copied, on an idle core (up to {mib} MiB a "
                           "run)", stats.executed).format(n=stats.copied_ahead,
                                                          executed=stats.executed,
                                                          mib=stats.copied_bytes >> 20))


def worker_stays(info: Ready) -> None:
    """Once, when a writer's build started a worker that stays by default (Gradle's daemon
    says so likewise): for how long, and how to end it or turn it off."""
    logger.info(__("autocast-demo: the worker (pid {pid}) stays {minutes} min after this build "
                   "for your next one (a build in a terminal). End it: sphinx-autocast-demo "
                   "stop-workers; never keep one: autocast_demo_keep_worker = 0").format(
                       pid=info["kept"]["pid"], minutes=f"{info['kept']['idle'] / 60:g}"))


def not_kept(app: Sphinx, why: str | None, asked: bool = True) -> bool:
    """Say that ``autocast_demo_keep_worker`` could not be honoured, and why (a warning where
    conf.py asked for it, ``-v`` where it is the default's); whether it was said."""
    if not why:
        return False
    said = __("autocast-demo: no kept worker serves this build ({why}); this build starts its "
              "own, which ends with it").format(why=why)
    if not asked:
        logger.verbose(said)
        return True
    logger.warning(said, **ours("slow"),
                   location=str(conf_line(str(app.confdir), "autocast_demo_keep_worker")))
    return True


def cannot_fork(app: Sphinx, info: Ready) -> bool:
    """Say, with why, that runs cannot fork from the warm worker (each then pays Python's and
    torch's start, seconds instead of milliseconds); whether it was said."""
    if info.get("fork", True):
        return False
    threads = info.get("threads", [])
    logger.warning(n__(
        "autocast-demo: runs start a new Python interpreter (seconds each instead of a fork of "
        "the warm worker): after importing torch the worker had {n} more thread running "
        "({names}), and forking a process with threads is unsafe. A library started a thread "
        "pool at import: find it with python -c 'import torch, threading' and /proc/self/task, "
        "and set its thread-count variable to 1 (OPENBLAS_NUM_THREADS, OMP_NUM_THREADS and "
        "MKL_NUM_THREADS are set for the worker already)",
        "autocast-demo: runs start a new Python interpreter (seconds each instead of a fork of "
        "the warm worker): after importing torch the worker had {n} more threads running "
        "({names}), and forking a process with threads is unsafe. A library started a thread "
        "pool at import: find it with python -c 'import torch, threading' and /proc/self/task, "
        "and set its thread-count variable to 1 (OPENBLAS_NUM_THREADS, OMP_NUM_THREADS and "
        "MKL_NUM_THREADS are set for the worker already)", len(threads)).format(
            n=len(threads), names=", ".join(sorted(set(threads)))), **ours("slow"),
        location=str(conf_line(str(app.confdir), "sphinx_autocast_demo")))
    return True
