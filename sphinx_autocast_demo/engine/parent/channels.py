"""The pool's side of the pipes to the worker's two zygotes, and the queue of runs they take.

See :mod:`.pool` for who gets which run, and ``serving.fork_eager_zygote`` for the second zygote.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Collection

    from ..protocol import Ready, RunRequest
    from .records import Run


@dataclass
class Channel:
    """A zygote's pipes: runs go in as JSON lines, events come back as JSON lines."""

    requests: int  # we write
    events: int  # we read
    pending: bytes = b""  # what it wrote after the last event we read
    ready: Ready | None = None
    in_flight: int = 0
    open: bool = True  # False: we closed ``requests``
    ended: bool = False  # its events ended: the zygote is gone

    def send(self, request: RunRequest) -> None:
        data = (json.dumps(request) + "\n").encode()
        while data:
            data = data[os.write(self.requests, data):]

    def close(self) -> None:
        if self.open:
            self.open = False
            os.close(self.requests)


#: What a compiled run compiles: its setup and code. Two runs of one snippet (its values)
#: compile the same graphs, so run side by side the second waits on inductor's lock for each
#: kernel the first is compiling, a core idle, where run one after the other it finds them in
#: inductor's cache (measured: a core idle for ~25% of a cold build's compiled runs).
Snippet = tuple[tuple[str, ...], str]

#: How far past the build's order a run may be taken to keep one snippet's runs apart: a few
#: demos, so that results still come in page order.
REACH = 32


def snippet(run: Run) -> Snippet | None:
    """What ``run`` compiles; None for an eager run, which compiles nothing (never ``busy``)."""
    job = run.job
    return (tuple(job.get("setup", ())), job.get("code", "")) if job.get("mode") == "compiled" else None


class Waiting:
    """The runs not sent yet, in the build's order; eager ones can be taken ahead, and a
    compiled run past one of a snippet that is compiling (:data:`Snippet`)."""

    def __init__(self, runs: list[Run]) -> None:
        self.runs = runs
        self.sent: set[str] = set()
        self.cursor = {False: 0, True: 0}  # where the next run (the next eager run) may be
        self.before_turn: set[str] = set()  # compiled runs taken past one of a busy snippet

    def __bool__(self) -> bool:
        return len(self.sent) < len(self.runs)

    def next(self, eager_only: bool) -> Run | None:
        i = self.cursor[eager_only]
        while i < len(self.runs) and (self.runs[i].key in self.sent
                                      or (eager_only and self.runs[i].job.get("mode") != "eager")):
            i += 1
        self.cursor[eager_only] = i
        return self.runs[i] if i < len(self.runs) else None

    def take(self, eager_only: bool, busy: Collection[Snippet] = ()) -> Run | None:
        """The next run; past one whose snippet is ``busy`` (compiling in another run) to the
        first of the next :data:`REACH` that is not, where there is one."""
        run = self.next(eager_only)
        if run is not None and snippet(run) in busy:  # (so a compiled run: eager_only is False)
            start = self.cursor[eager_only] + 1  # (``next`` left it at ``run``)
            later = next((r for r in self.runs[start:start + REACH]
                          if r.key not in self.sent and snippet(r) not in busy), None)
            if later is not None:
                run = later
                if snippet(run) is not None:  # (an eager run compiles nothing: no one's turn)
                    self.before_turn.add(run.key)
        if run is not None:
            self.sent.add(run.key)
        return run

    def put_back(self, run: Run) -> None:
        self.sent.discard(run.key)
        self.cursor = {False: 0, True: 0}


def above_stdio(fd: int) -> int:
    """``fd``, moved above 2 if it is not: a build started with stdin or stdout closed gets
    0 or 1 from os.pipe(), which the worker's own stdin and stdout would replace."""
    if fd > 2:
        return fd
    import fcntl  # (Unix, as forking is)

    moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)
    os.close(fd)
    return moved
