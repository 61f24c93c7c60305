"""The worker a build talks to, behind one handle.

Either the build's own worker (:class:`OwnWorker`: a child process, started with the build and
ended with it) or a session of a kept worker (:class:`KeptSession`, see :mod:`.kept`: joined
over a socket, left when the build ends). The pool schedules runs over a handle's
:attr:`channel` and asks it only what differs: whether its end says why (a signal reached our
own child; a session's end is not ours to see), when it must have answered, whether it serves a
later build, and how it is ended. Nothing else in the engine asks which kind it holds.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import time
from pathlib import Path
from typing import ClassVar

from .. import kept
from ..protocol import worker_command
from .channels import Channel

#: Seconds a worker gets to end once its stdin closed (it kills its runs and exits at once).
CLOSE_GRACE = 10.0


class OwnWorker:
    """This build's own worker process (``child.worker``), which ends with the build."""

    kept: ClassVar[bool] = False
    answer_by: float | None = None  # it is our child: its death is seen, no deadline needed

    def __init__(self, env: dict[str, str], cwd: Path, log: Path,
                 pass_fds: tuple[int, ...] = ()) -> None:
        with open(log, "wb") as stderr:
            self.proc = subprocess.Popen(
                worker_command(),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
                env=env,
                cwd=cwd,
                pass_fds=pass_fds,
            )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.channel = Channel(self.proc.stdin.fileno(), self.proc.stdout.fileno())

    def stopped_by(self) -> str | None:
        """SIGINT or SIGTERM when the worker ended by its handler for it (128 + the signal)."""
        try:
            code = self.proc.wait(timeout=1)
        except subprocess.TimeoutExpired:
            return None
        by = {128 + signal.SIGINT: "SIGINT", 128 + signal.SIGTERM: "SIGTERM"}
        return by.get(code)

    def ended_for_later_builds(self) -> bool:
        return False  # (nothing of it was meant to outlive the build)

    def close(self, eager: Channel | None) -> None:
        """End the worker; it kills its children (and the eager zygote) when its stdin closes."""
        if eager is not None:
            eager.close()
            os.close(eager.events)
        end_process(self.proc, warmed=self.channel.ready is not None)


def end_process(proc: subprocess.Popen[bytes], warmed: bool) -> None:
    """End a worker of our own: close its stdin, then SIGTERM, then SIGKILL."""
    if not warmed and proc.poll() is None:
        # Still importing or warming up: it has no run of its own, and the eager zygote
        # kills its runs when it hears of the worker's death (SIGTERM).
        proc.kill()
    if proc.poll() is None:
        try:
            if proc.stdin:
                proc.stdin.close()
            proc.wait(timeout=CLOSE_GRACE)
        except (subprocess.TimeoutExpired, BrokenPipeError, OSError):
            # Stuck: SIGTERM first, whose handler ends its runs' process groups (with what
            # a snippet started in them), which SIGKILL would leave running.
            proc.terminate()
            try:
                proc.wait(timeout=CLOSE_GRACE / 2)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    if proc.stdout:
        proc.stdout.close()


class KeptSession:
    """A session of the kept worker for this environment, on pipes of ours (:mod:`.kept`)."""

    kept: ClassVar[bool] = True

    def __init__(self, env: dict[str, str], keep: float, cwd: Path, log: Path,
                 eager: tuple[int, ...] = ()) -> None:
        """Join it (starting it if none runs); raise :class:`kept.KeptUnavailable` or
        :class:`OSError`, saying why, if there is none to join."""
        requests, to_session = os.pipe()
        from_session, events = os.pipe()
        log_fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        theirs = {"requests": requests, "events": events, "log": log_fd}
        if eager:
            theirs.update(eager_in=eager[0], eager_out=eager[1])
        try:
            self.joined = kept.connect(env, keep)
            kept.hand_over(self.joined.sock, theirs, env, str(cwd), keep)
        except BaseException:
            os.close(to_session)
            os.close(from_session)
            raise
        finally:
            for fd in (requests, events, log_fd):
                os.close(fd)
        self.channel = Channel(to_session, from_session)
        # A warm one answers at once, or it is stopped or stuck: the pool waits until then.
        self.answer_by = time.monotonic() + kept.ANSWER_TIMEOUT if self.joined.warm else None

    @property
    def pid(self) -> int:
        return self.joined.pid

    def stopped_by(self) -> str | None:
        return None  # not our child: its end is not ours to see

    def ended_for_later_builds(self) -> bool:
        """Whether it will serve no later build (``stop-workers`` or a kill ended it)."""
        return not kept.serves_later(self.joined.path, self.joined.pid)

    def abandon(self) -> None:
        """Leave a session that never served us (the pool starts its own worker instead)."""
        self.channel.close()
        os.close(self.channel.events)

    def close(self, eager: Channel | None) -> None:
        """Close the session: it kills its runs and ends when its pipe closes. Wait for its
        end, and the eager zygote's (their events close), so that no run writes into what the
        pool removes next; kill a session that does not end."""
        warm = self.channel
        warm.close()
        if eager is not None:
            eager.close()
        # (A zygote not ready yet has had no run, and ends, when it is, on its own.)
        wait_ended([c for c in (warm, eager) if c is not None and c.ready], 10)
        session = (warm.ready or {}).get("kept", {}).get("session")
        if session and not warm.ended:  # stuck: SIGTERM first, its handler ends its runs
            for sig, grace in ((signal.SIGTERM, 5), (signal.SIGKILL, 0)):
                # Ended: the kept worker reaps it, and its pid may be another process's soon.
                if warm.ended:
                    break
                with contextlib.suppress(ProcessLookupError):
                    os.kill(session, sig)
                wait_ended([warm], grace)
        os.close(warm.events)
        if eager is not None:
            os.close(eager.events)


def wait_ended(channels: list[Channel], seconds: float) -> None:
    """Read (and drop) what ``channels`` say until each has ended, ``seconds`` at most."""
    deadline = time.monotonic() + seconds
    for channel in channels:
        while not channel.ended and (left := deadline - time.monotonic()) > 0:
            if select.select([channel.events], [], [], left)[0]:
                channel.ended = not os.read(channel.events, 65536)
