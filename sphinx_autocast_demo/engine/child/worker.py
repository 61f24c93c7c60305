"""The worker process: imports torch once, then forks one fresh child per run.

Started by the build (``parent.handles``; ``kept`` for a kept worker) as ``python -m
sphinx_autocast_demo.engine.child.worker``. It imports torch and the compiler stack, warms them
up (:mod:`.warm`), says it is ready, and becomes the zygote (:mod:`.zygote`), which forks a
child for every run (one demo under one value, compiled or eager): no run pays the imports
again, and every run starts from the zygote's untouched memory. Protocol: JSON lines, one run a
line on stdin, one event a run on stdout (the first: ready). When stdin closes (the build ended
or died) every child is killed. Between the imports and the warm-up it forks the eager zygote
(:func:`.serving.fork_eager_zygote`), which speaks the same protocol on two more pipes the pool
gave it, so that eager runs run while the warm-up compiles.

``--job FILE`` runs one job in a fresh interpreter instead (CUDA, which must never be
initialised before a fork, or a zygote that could not fork safely).
"""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path

from ..isolation import take
from ..protocol import RESET_SIGNALS
from .processes import die_with_parent
from .serving import copy_ahead, imported, serve_runs, warmed


def main(argv: list[str]) -> int:
    # The signals we handle ourselves start from their defaults, whatever the build had: an
    # ignored SIGCHLD would hide every child's end (a kept worker would never see its sessions
    # end, nor idle out), an ignored SIGTERM the build's death. Runs get the defaults anyway.
    for sig in RESET_SIGNALS:
        signal.signal(sig, signal.SIG_DFL)
    words = take(os.environ)  # (the build's to us, not the runs' business)
    if words.kept is not None:  # a worker kept between builds (see .kept): no build is its parent
        from .kept_server import serve

        path, idle = words.kept
        return serve(Path(path), idle, words)
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
    info, helper = warmed(imported(words), words, private=[requests, events.fileno()])
    ahead = copy_ahead(words.idle_core)
    return serve_runs(requests, events, info, copy_ahead=ahead, helper=helper)


def exit_now(code: int) -> None:
    """End without the interpreter's teardown: with torch loaded it took the build's last
    ~0.15 s (measured), and nothing is left to save: results and events are written, every
    process of ours reaped or killed."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    exit_now(main(sys.argv[1:]))
