"""The zygote: a warm process that forks one fresh child per run and watches over them.

Made by :mod:`.worker` once torch is imported and warm. Every run gets a child forked from the
zygote's untouched memory, so nothing a run changes can reach another run's verdict. Children
are forked ahead ("spares") and wait for their run; where a core would idle they copy, while
they wait, the zygote's pages that a compile writes (:func:`.processes.prefault`), which a probe
child learns once. The zygote enforces each run's timeout, cuts a run's printed output where it
is written, and reports each run's end as one JSON line.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import signal
import socket
import sys
import time
from dataclasses import dataclass
from typing import IO, Any

from ..protocol import KEEP_BYTES, RESET_SIGNALS, Exit, RunRequest, worker_command
from .processes import (
    die_with_parent,
    fork,
    kill_adopted,
    killpg,
    prefault,
    reaped,
    renew_thread_pool,
    terminate_and_reap,
    written_pages,
)
from .warm import rehearse


@dataclass
class Child:
    """A run's process, from the moment the run was handed to it."""

    run: RunRequest
    fresh: bool  # a fresh interpreter (exec), not a fork of the warm zygote
    start: float
    deadline: float
    output: int  # read end of the pipe that is its stdout and stderr
    sink: IO[bytes]  # the run's output file
    kept: int = 0  # bytes written to ``sink``
    dropped: int = 0  # bytes read past KEEP_BYTES
    timed_out: bool = False
    # A spare's: where it says how many bytes it had copied ahead (see ``Zygote._child``).
    channel: socket.socket | None = None


@dataclass
class Spare:
    """A child forked ahead of time, waiting for its run: the fork (~5-15 ms of page-table
    copying for a process holding torch) happens while other runs run."""

    pid: int
    channel: socket.socket  # its run goes in; what it copied ahead comes back
    output: int  # read end of its output pipe


@dataclass
class Probe:
    """A child that compiles as runs do and sends back which of the zygote's pages it wrote."""

    pid: int
    output: int  # read end of the pipe its page list comes through
    received: bytes = b""


class Zygote:
    """Forks a child per run, enforces each run's timeout, and reports each run's end.

    ``copy_ahead``: spares copy the pages a run writes while they wait (on a core the build
    leaves idle), learned once from a probe child.
    """

    def __init__(self, requests: int, events: IO[str], fork_safe: bool = True,
                 copy_ahead: bool = False, helper: int | None = None) -> None:
        self.requests = requests
        self.events = events
        self.helper = helper  # the eager zygote (``serving.fork_eager_zygote``), while it lives
        # False: every run execs a fresh interpreter from its forked child (see ``main``).
        self.fork_safe = fork_safe
        self.copy_ahead = copy_ahead and fork_safe
        self.children: dict[int, Child] = {}
        self.accepting = True  # False once the build is gone: no run starts any more
        # Oldest first. Two when copying ahead: each then has the time of two runs to copy, an
        # eager run's ~10 ms alone being too short.
        self.spares: list[Spare] = []
        self.depth = 2 if self.copy_ahead else 1
        self.written: list[tuple[int, int]] = []  # from the probe: what a run writes
        self.probe: Probe | None = None
        self.selector = selectors.DefaultSelector()
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_w, False)
        signal.set_wakeup_fd(self.wake_w)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, self._stop)

    def _stop(self, signum: int, _frame: Any) -> None:
        # The build's word that no run is to blame (a kept worker's session is no child of the
        # build's, whose exit status it could read). One raw write of a short line: atomic on
        # a pipe, where the buffered file may be mid-write (it refuses to be entered again).
        stopped = json.dumps({"event": "stopped", "signal": signal.Signals(signum).name}) + "\n"
        with contextlib.suppress(OSError):  # the build is gone
            os.write(self.events.fileno(), stopped.encode())
        self.kill_all()
        for pid in list(self.children):  # killed: gone at once, and their orphans are ours
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)
        kill_adopted()
        os._exit(128 + signum)

    def send(self, event: Exit) -> None:
        try:
            self.events.write(json.dumps(event) + "\n")
            self.events.flush()
        except BrokenPipeError:  # the build is gone: nobody reads results any more
            self.accepting = False

    def kill_all(self) -> None:
        if self.helper is not None:  # first, and by SIGTERM: its handler ends its runs' groups
            terminate_and_reap(self.helper)  # (kill_adopted would SIGKILL it before it could)
            self.helper = None
        for pid in list(self.children):
            killpg(pid)
        kill_adopted()
        for spare in self.spares:
            killpg(spare.pid)
        if self.probe is not None:
            killpg(self.probe.pid)

    def _private(self) -> list[int]:
        """Our descriptors that no child may keep (it would hold another run's pipes open)."""
        fds = [self.requests, self.wake_r, self.wake_w, self.events.fileno()]
        for c in self.children.values():
            fds += [c.output, c.sink.fileno(), *([c.channel.fileno()] if c.channel else [])]
        for spare in self.spares:
            fds += [spare.channel.fileno(), spare.output]
        if self.probe is not None:
            fds.append(self.probe.output)
        return [fd for fd in fds if fd >= 0]

    def spawn(self, run: RunRequest) -> None:
        fresh = not self.fork_safe or bool(run.get("fresh"))
        if fresh:  # the exec'd interpreter reads its job from a file
            with open(run["job_path"], "w", encoding="utf-8") as f:
                json.dump(run["job"], f)
        spare = self.spares.pop(0) if self.spares else None
        if spare is not None:
            try:
                spare.channel.sendall(json.dumps(run).encode())
                spare.channel.shutdown(socket.SHUT_WR)
            except OSError:  # the spare died (killed from outside): fork as usual
                killpg(spare.pid)
                spare.channel.close()
                os.close(spare.output)
                spare = None
        channel = None
        if spare is not None:
            pid, output, channel = spare.pid, spare.output, spare.channel
        else:
            output, out_w = os.pipe()

            def child() -> int:
                os.close(output)
                return self._child(run, None, out_w)

            pid = fork(child)
            os.close(out_w)
        now = time.monotonic()
        os.set_blocking(output, False)
        sink = open(run["output_path"], "wb")  # noqa: SIM115 (closed when the child is reaped)
        self.children[pid] = Child(run=run, fresh=fresh, start=now, channel=channel,
                                   deadline=now + float(run["timeout"]), output=output, sink=sink)
        self.selector.register(output, selectors.EVENT_READ, pid)
        self._fill_spares()

    def _fill_spares(self) -> None:
        while self.accepting and len(self.spares) < self.depth:
            self._fork_spare()

    def _fork_spare(self) -> None:
        ours, theirs = socket.socketpair()
        output, out_w = os.pipe()

        def spare() -> int:
            ours.close()
            os.close(output)
            return self._child(None, theirs, out_w)

        pid = fork(spare)
        theirs.close()
        os.close(out_w)
        self.spares.append(Spare(pid, ours, output))

    def _probe(self) -> None:
        """Fork a child that rehearses a run and sends back the pages it wrote (off the build's
        path, while the first runs run)."""
        output, out_w = os.pipe()

        # (If it fails, its traceback goes to the worker's log; the runs go on without it.)
        def probe() -> int:
            os.close(output)
            self._become_child()
            rehearse()
            written = written_pages()
            with os.fdopen(out_w, "w") as f:
                json.dump(written, f)
            return 0

        pid = fork(probe)
        os.close(out_w)
        os.set_blocking(output, False)
        self.probe = Probe(pid, output)
        self.selector.register(output, selectors.EVENT_READ, "probe")

    def _read_probe(self) -> None:
        """Read what the probe sent so far; at its end, keep the page list (if it is whole)."""
        probe = self.probe
        assert probe is not None
        while probe.output >= 0:
            try:
                chunk = os.read(probe.output, 1 << 20)
            except BlockingIOError:
                return
            if not chunk:
                self._close_probe()
                with contextlib.suppress(ValueError, TypeError):
                    self.written = [(int(a), int(n)) for a, n in json.loads(probe.received)]
                return
            probe.received += chunk

    def _close_probe(self) -> None:
        if self.probe is not None and self.probe.output >= 0:
            self.selector.unregister(self.probe.output)
            os.close(self.probe.output)
            self.probe.output = -1

    def _become_child(self) -> None:
        """A forked child's first steps: its own process group, no descriptor of ours."""
        os.setpgid(0, 0)
        die_with_parent()
        signal.set_wakeup_fd(-1)
        for sig in RESET_SIGNALS:
            signal.signal(sig, signal.SIG_DFL)
        for fd in self._private():
            with contextlib.suppress(OSError):
                os.close(fd)
        self.selector.close()

    def _child(self, run: RunRequest | None, channel: socket.socket | None, output: int) -> int:
        """Become the process of ``run``, or of the run that arrives on ``channel`` (a forked
        child's body: see :func:`.processes.fork`)."""
        self._become_child()
        if run is None:
            assert channel is not None
            # Until the run comes, and no longer: it must not wait for pages it may not write.
            copied = prefault(self.written, until=channel.fileno())
            raw = b""
            while chunk := channel.recv(65536):
                raw += chunk
            if not raw:  # the worker is shutting down
                return 0
            with contextlib.suppress(OSError):
                channel.sendall(str(copied).encode())
            channel.close()
            run = json.loads(raw)
        assert run is not None
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        os.dup2(output, 1)
        os.dup2(output, 2)
        os.close(output)
        sys.stdin = open(0, closefd=False)  # noqa: SIM115
        sys.stdout = open(1, "w", buffering=1, closefd=False)  # noqa: SIM115
        sys.stderr = open(2, "w", buffering=1, closefd=False)  # noqa: SIM115
        if not self.fork_safe or run.get("fresh"):
            os.execv(sys.executable, worker_command("--job", run["job_path"]))
        renew_thread_pool()
        from .job import run_and_write

        run_and_write(run["job"])
        return 0

    def read_output(self, pid: int, drain: bool = False) -> None:
        """Copy what child ``pid`` printed to its file, up to KEEP_BYTES; count the rest.

        ``drain``: the child has ended; read everything it wrote before it did.
        """
        child = self.children[pid]
        while child.output >= 0:
            try:
                chunk = os.read(child.output, 65536)
            except BlockingIOError:
                return
            if not chunk:
                self._close_output(child)
                return
            room = max(0, KEEP_BYTES - child.kept)
            if room:
                child.sink.write(chunk[:room])
                child.kept += min(room, len(chunk))
            child.dropped += max(0, len(chunk) - room)
            if not drain:
                return

    def _close_output(self, child: Child) -> None:
        if child.output >= 0:
            self.selector.unregister(child.output)
            os.close(child.output)
            child.output = -1

    def reap(self) -> None:
        for pid, status in reaped():
            if pid not in self.children:
                if pid == self.helper:
                    self.helper = None
                for spare in [s for s in self.spares if s.pid == pid]:
                    spare.channel.close()
                    os.close(spare.output)
                    self.spares.remove(spare)
                if self.probe is not None and self.probe.pid == pid:
                    self._read_probe()  # the rest of what it sent: its writer is gone
                    self._close_probe()  # if still open elsewhere, what it sent is lost
                    self.probe = None
                continue
            killpg(pid)  # anything the snippet started in its group goes with it
            self.read_output(pid, drain=True)
            child = self.children.pop(pid)
            self._close_output(child)  # if a process it started still holds the pipe open
            child.sink.close()
            copied = 0
            if child.channel is not None:
                with contextlib.suppress(OSError, ValueError):
                    copied = int(child.channel.recv(64, socket.MSG_DONTWAIT) or 0)
                child.channel.close()
            self.send({"event": "exit", "id": child.run["id"],
                       "returncode": os.waitstatus_to_exitcode(status),
                       "timed_out": child.timed_out, "seconds": time.monotonic() - child.start,
                       "fresh": child.fresh, "dropped": child.dropped,
                       "prefaulted": 0 if child.fresh else copied})  # exec drops the copies

    def enforce_deadlines(self) -> float | None:
        now = time.monotonic()
        next_deadline: float | None = None
        for pid, child in self.children.items():
            if child.timed_out:
                continue
            if now >= child.deadline:
                child.timed_out = True
                killpg(pid)
            elif next_deadline is None or child.deadline < next_deadline:
                next_deadline = child.deadline
        return None if next_deadline is None else max(0.0, next_deadline - now)

    def serve(self) -> None:
        self.selector.register(self.requests, selectors.EVENT_READ, "requests")
        self.selector.register(self.wake_r, selectors.EVENT_READ, "wake")
        pending = b""
        open_ = True
        self._fill_spares()
        if self.copy_ahead:
            self._probe()
        while open_ or self.children:
            timeout = self.enforce_deadlines()
            for key, _ in self.selector.select(timeout):
                if key.data == "wake":
                    os.read(self.wake_r, 4096)
                elif key.data == "requests":
                    chunk = os.read(self.requests, 65536)
                    if not chunk:  # the build is gone: nobody will read results
                        open_ = self.accepting = False
                        self.selector.unregister(self.requests)
                        self.kill_all()
                        continue
                    pending += chunk
                    *lines, pending = pending.split(b"\n")
                    for line in lines:
                        if line.strip():
                            self.spawn(json.loads(line))
                elif key.data == "probe":
                    self._read_probe()
                elif key.data in self.children:
                    self.read_output(key.data)
            self.reap()
