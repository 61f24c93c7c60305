"""A worker's life after its start: imports, warm-up, then serving runs as a zygote.

The same for a build's own worker (:mod:`.worker`) and a kept worker's sessions
(:mod:`.kept_server`): both come here, so neither imports the other. What a run may assume of
the process it gets is :mod:`.isolation`'s contract.
"""

from __future__ import annotations

import json
import os
import signal
from typing import IO

from ..isolation import WorkerSettings, restore_user_environment
from ..protocol import Ready
from .processes import (
    adopt_orphans,
    can_prefault,
    die_with_parent,
    fork,
    kill_adopted,
    running_threads,
)
from .warm import freeze, import_stack, warm_up
from .zygote import Zygote


def imported(words: WorkerSettings) -> Ready:
    """:func:`.warm.import_stack`, with its failure as the ready event's error."""
    try:
        return import_stack(words.config, words.backend)
    except Exception as exc:
        return {"error": f"the worker could not import torch: {type(exc).__name__}: {exc}",
                "fault": "torch-import"}


def warmed(info: Ready, words: WorkerSettings, private: list[int],
           with_parent: bool = True) -> tuple[Ready, int | None]:
    """After the imports (``info``): the eager zygote forked on ``eager`` (see
    :func:`fork_eager_zygote`), the warm-up, the check that no thread is left, and the runs'
    environment given back. Returns the ready event and the eager zygote's pid."""
    helper = None
    eager = words.eager_fds
    try:
        if "error" not in info:
            if eager is not None:
                helper = fork_eager_zygote(info, eager, private, words.user_env, with_parent)
                eager = None
            warm_up(helper)
    except Exception as exc:
        info = {"error": f"the worker failed in its warm-up compile: {type(exc).__name__}: {exc}",
                "fault": "warm-up"}
    finally:
        for fd in eager or ():  # no eager zygote: its channel closes, the pool sends them here
            os.close(fd)
    # The warm-up must leave no thread behind: a forked child gets only the forking thread, and
    # state that expects the others breaks it in native code. A library that starts one anyway
    # gets every run a fresh interpreter, slower but sound; the build says so, with the threads.
    threads = running_threads()
    info["fork"] = not threads
    if threads:
        info["threads"] = threads
    restore_user_environment(words.user_env)
    return info, helper


def serve_runs(requests: int, events: IO[str], ready: Ready, copy_ahead: bool = False,
               helper: int | None = None) -> int:
    """Say ``ready`` to the build and, unless it is an error, fork its runs until it closes
    ``requests`` (see :class:`.zygote.Zygote`)."""
    try:
        events.write(json.dumps({**ready, "event": "ready"}) + "\n")
        events.flush()
    except BrokenPipeError:  # the build is gone already
        return 0
    if "error" in ready:
        return 1
    adopt_orphans()
    Zygote(requests, events, fork_safe=ready.get("fork", True), copy_ahead=copy_ahead,
           helper=helper).serve()
    kill_adopted()  # every run has been reaped: what they left behind is ours now
    return 0


def fork_eager_zygote(info: Ready, channel: tuple[int, int], private: list[int],
                      user_env: dict[str, str | None] | None,
                      with_parent: bool = True) -> int | None:
    """Fork, before the warm-up, a zygote for the eager runs, which need no warm compiler.

    Eager runs then run while the warm-up compiles (on a core that would idle at ``-j 1``):
    measured, an eager run takes ~8 ms in a child of either zygote, a compiled one ~0.8 s in a
    child of this one against ~0.1 s after the warm-up; so compiled runs wait for the warm-up.
    Not where threads run already: a fork copies only the forking thread, and the warm
    zygote's own check (``main``) would refuse it later anyway. The pool then sends eager runs
    to the warm zygote. ``private``: our descriptors it must not keep; ``with_parent``: it
    dies with us (a kept worker's does not: its build may go on with a worker of its own, and
    it ends when its pipe closes). Returns its pid (None: not forked).
    """
    theirs_in, theirs_out = channel
    parent = os.getpid()

    # (If it fails, its traceback goes to the worker's log, and the pool sees the channel close.)
    def serve() -> int:
        for fd in private:
            os.close(fd)
        if with_parent:
            die_with_parent(signal.SIGTERM)  # see main: our runs end with us
        if with_parent and os.getppid() != parent:  # it died before it could tell us
            return 0
        restore_user_environment(user_env)
        freeze()
        return serve_runs(theirs_in, os.fdopen(theirs_out, "w"), {**info, "fork": True})

    try:
        pid = -1 if running_threads() else fork(serve)
    except OSError:  # no memory for it: the warm zygote runs them, later
        pid = -1
    os.close(theirs_in)
    os.close(theirs_out)
    return pid if pid > 0 else None


def copy_ahead(idle_core: bool) -> bool:
    """Do spares copy a run's writes while they wait: only on an idle core (measured, 2 cores)."""
    return idle_core and os.environ.get("AUTOCAST_DEMO_PREFAULT") != "0" and can_prefault()
