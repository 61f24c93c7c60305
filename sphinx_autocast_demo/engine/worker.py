"""The worker process: imports torch once, then forks one fresh child per run.

Started by :mod:`.pool` as ``python -m sphinx_autocast_demo.engine.worker``. It imports torch
and the compiler stack, warms them up (:mod:`.warm`), says it is ready, and becomes the zygote
(:mod:`.zygote`), which forks a child for every run (one demo under one value, compiled or
eager): no run pays the imports again, and every run starts from the zygote's untouched memory.
Protocol: JSON lines, one run a line on stdin, one event a run on stdout (the first: ready).
When stdin closes (the build ended or died) every child is killed. Between the imports and the
warm-up it forks the eager zygote (:func:`fork_eager_zygote`), which speaks the same protocol
on two more pipes the pool gave it, so that eager runs run while the warm-up compiles.

``--job FILE`` runs one job in a fresh interpreter instead (CUDA, which must never be
initialised before a fork, or a zygote that could not fork safely).
"""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path
from typing import IO

from .processes import adopt_orphans, can_prefault, die_with_parent, kill_adopted, running_threads
from .protocol import Ready
from .warm import freeze, import_stack, warm_up
from .zygote import RESET_SIGNALS, Zygote


def main(argv: list[str]) -> int:
    # The signals we handle ourselves start from their defaults, whatever the build had: an
    # ignored SIGCHLD would hide every child's end (a kept worker would never see its sessions
    # end, nor idle out), an ignored SIGTERM the build's death. Runs get the defaults anyway.
    for sig in RESET_SIGNALS:
        signal.signal(sig, signal.SIG_DFL)
    kept = os.environ.pop("AUTOCAST_DEMO_KEPT", None)
    if kept is not None:  # a worker kept between builds (see .kept): no build is its parent
        from .kept_server import serve

        path, idle = json.loads(kept)
        return serve(Path(path), float(idle))
    # The zygote hears of the build's death as SIGTERM: its handler kills every run's process
    # group, with what a snippet spawned (no parent-death signal of its own), which SIGKILL
    # would leave running after a build killed with SIGKILL.
    die_with_parent(signal.SIGKILL if argv[:1] == ["--job"] else signal.SIGTERM)
    if len(argv) == 2 and argv[0] == "--job":
        from .job import run_and_write

        with open(argv[1], encoding="utf-8") as f:
            run_and_write(json.load(f))
        return 0
    # Our stdout is the protocol: keep it private, and send stray prints (torch's own
    # warnings) to stderr, which the pool logs to a file.
    events = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    requests = os.dup(0)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)  # (else every run would inherit it)
    # The pool's words to us, not the runs' business: gone before anything forks.
    eager, ahead = _eager_channel(), copy_ahead()
    info, helper = warmed(imported(), eager, private=[requests, events.fileno()])
    return serve_runs(requests, events, info, copy_ahead=ahead, helper=helper)


def imported() -> Ready:
    """:func:`.warm.import_stack`, with its failure as the ready event's error."""
    try:
        return import_stack()
    except Exception as exc:
        return {"error": f"the worker could not import torch: {type(exc).__name__}: {exc}",
                "fault": "torch-import"}


def warmed(info: Ready, eager: tuple[int, int] | None, private: list[int],
           with_parent: bool = True) -> tuple[Ready, int | None]:
    """After the imports (``info``): the eager zygote forked on ``eager`` (see
    :func:`fork_eager_zygote`), the warm-up, the check that no thread is left, and the runs'
    environment given back. Returns the ready event and the eager zygote's pid."""
    helper = None
    try:
        if "error" not in info:
            if eager is not None:
                helper = fork_eager_zygote(info, eager, private, with_parent)
                eager = None
            info = warm_up(info)
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
    restore_user_environment()
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


def _eager_channel() -> tuple[int, int] | None:
    """The descriptors the pool gave an eager zygote (its runs in, its events out), if any."""
    fds = os.environ.pop("AUTOCAST_DEMO_EAGER_FDS", "")
    if not fds:
        return None
    requests, events = fds.split(",")
    return int(requests), int(events)


def fork_eager_zygote(info: Ready, channel: tuple[int, int], private: list[int],
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
    try:
        pid = -1 if running_threads() else os.fork()
    except OSError:  # no memory for it: the warm zygote runs them, later
        pid = -1
    if pid:
        os.close(theirs_in)
        os.close(theirs_out)
        return pid if pid > 0 else None
    code = 70
    try:
        for fd in private:
            os.close(fd)
        if with_parent:
            die_with_parent(signal.SIGTERM)  # see main: our runs end with us
        if with_parent and os.getppid() != parent:  # it died before it could tell us
            code = 0
            return None
        restore_user_environment()
        freeze()
        code = serve_runs(theirs_in, os.fdopen(theirs_out, "w"), {**info, "fork": True})
    except BaseException:
        import traceback

        traceback.print_exc()  # into the worker's log; the pool sees the channel close
    finally:
        os._exit(code)


def copy_ahead() -> bool:
    """Whether spares copy what a run writes while they wait: where the pool found a core that
    would idle (fewer runs in flight than cores), the kernel can, and the user did not say no.

    On a busy core it costs more than it saves: measured with 2 cores, copying ahead took a cold
    ``-j 1`` build of the benchmark from 11.8 to 10.7 s, and 60 runs at ``-j 2`` from 2.2 to 2.4 s.
    """
    idle_core = os.environ.pop("AUTOCAST_DEMO_COPY_AHEAD", "0") == "1"
    return idle_core and os.environ.get("AUTOCAST_DEMO_PREFAULT") != "0" and can_prefault()


def restore_user_environment() -> None:
    """Give the runs the user's own environment back (see ``pool.SINGLE_THREADED``)."""
    saved = os.environ.pop("AUTOCAST_DEMO_USER_ENV", None)
    if saved is None:
        return
    for name, value in json.loads(saved).items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


def exit_now(code: int) -> None:
    """End without the interpreter's teardown: with torch loaded it took the build's last
    ~0.15 s (measured), and nothing is left to save: results and events are written, every
    process of ours reaped or killed."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    exit_now(main(sys.argv[1:]))
