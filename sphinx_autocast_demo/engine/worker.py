"""The worker process: a warm zygote that forks one fresh child per run.

Started by :mod:`.pool` as ``python -m sphinx_autocast_demo.engine.worker``. It imports torch
and the compiler stack once, warms one compile, then forks a child for every run (one demo
under one value, compiled or eager): no run pays the imports again, and every run starts from
the zygote's untouched memory, so nothing a run changes can reach another run's verdict.
Protocol: JSON lines, one run a line on stdin, one event a run on stdout. A run's printed
output reaches its file through a pipe that the zygote reads, so a flood is cut where it is
written. When stdin closes (the build ended or died) every child is killed.

``--job FILE`` runs one job in a fresh interpreter instead (CUDA, which must never be
initialised before a fork, or a zygote that could not fork safely).
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import selectors
import signal
import sys
import threading
import time
from dataclasses import dataclass
from typing import IO, Any

from ..text import MAX_OUTPUT
from .processes import (
    adopt_orphans,
    collapse_to_huge_pages,
    die_with_parent,
    kill_adopted,
    killpg,
    renew_thread_pool,
    running_threads,
)
from .protocol import Exit, Ready, RunRequest

#: Bytes of a run's output kept on disk (a character can take four); the rest is counted only.
KEEP_BYTES = 4 * MAX_OUTPUT


def warm_up() -> Ready:
    """Import torch and the compiler stack and run one tiny compile, forward and backward."""
    # Before the first compile: a forked child inherits an OpenMP pool it cannot use and
    # deadlocks in the backward unless the pool was never started with more than one thread.
    import torch

    torch.set_num_threads(1)
    import torch._dynamo
    import torch._functorch.config

    from ..model import DEFAULT_CONFIG
    from .job import resolve_config

    try:
        resolve_config(os.environ.get("AUTOCAST_DEMO_CONFIG", DEFAULT_CONFIG))
    except (LookupError, ImportError) as exc:
        return {"error": f"torch {torch.__version__} cannot run these demos: {exc}",
                "torch": torch.__version__}

    # What the imports allocated moves to huge pages while the warm-up runs (the call releases
    # the GIL): most of the cost off the build's path. Joined before anything forks.
    collapsing = threading.Thread(target=collapse_to_huge_pages, name="autocast-demo-huge-pages")
    collapsing.start()
    gpu_build = torch.version.cuda is not None or torch.version.hip is not None
    try:
        warm_compiles(torch, gpu_build)
    finally:
        collapsing.join()
    if gpu_build:
        # Inductor imports it in a child and, without a CUDA runtime, it logs "No CUDA runtime
        # is found" into the run's printed output: let it log here, into the worker's log.
        import torch.utils.cpp_extension
    # Children never free what they inherit: freezing it keeps their garbage collector from
    # touching (and so copying) every page of the zygote; measured: forked runs twice as fast.
    gc.collect()
    gc.freeze()
    huge = collapse_to_huge_pages()  # what the warm-up added (the rest is done: ~0.1 s)
    # NVML-based (PYTORCH_NVML_BASED_CUDA_CHECK): answers without initialising CUDA.
    return {"torch": torch.__version__, "python": sys.version.split()[0],
            "cuda": torch.cuda.is_available(), "huge_pages": huge >> 20}


def warm_compiles(torch: Any, gpu_build: bool) -> None:
    """Compile, run and differentiate what demos do, so that children inherit it warm."""
    # Trace what demos trace (a module, a region that turns autocast off and upcasts, both
    # autocast dtypes, a backward): dynamo and AOTAutograd import and initialise much lazily on
    # first use, and a child that inherits it all compiles in ~0.15 s instead of ~0.25 s.
    def region(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        with torch.autocast("cpu", enabled=False):
            return (x.float() @ w.float()).sum() * 2

    # On a GPU build (measured: 2.14.1+cu130, no GPU) the autograd engine starts one thread per
    # device it knows of (8 pt_autograd_N threads, with no GPU) the first time it runs, and a
    # compile that needs gradients runs it (AOTAutograd traces the backward). Started here, the
    # threads are missing in every forked child, whose backward then fails ("Unable to handle
    # autograd's threading in combination with fork-based multiprocessing"). So there the same
    # compiles run without gradients: dynamo, AOTAutograd and fake tensors get warm (a child's
    # first compile ~0.9 s instead of ~1.6 s) and no thread starts; ``main`` checks that.
    linear = torch.nn.Linear(2, 2)
    w = torch.ones(2, 2, requires_grad=True)
    for dtype in (torch.bfloat16, torch.float16):
        with torch.autocast("cpu", dtype=dtype), torch.set_grad_enabled(not gpu_build):
            out = torch.compile(region, backend="aot_eager")(torch.ones(2, 2), w)
            out = out + torch.compile(linear, backend="aot_eager")(torch.ones(2, 2)).sum()
        if not gpu_build:
            out.backward()
        torch._dynamo.reset()


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


@dataclass
class Spare:
    """A child forked ahead of time, waiting on a pipe for its run: the fork (~5-15 ms of
    page-table copying for a process holding torch) happens while other runs run."""

    pid: int
    request: int  # write end of the pipe it reads its run from
    output: int  # read end of its output pipe


class Zygote:
    """Forks a child per run, enforces each run's timeout, and reports each run's end."""

    def __init__(self, requests: int, events: IO[str], fork_safe: bool = True) -> None:
        self.requests = requests
        self.events = events
        # False: every run execs a fresh interpreter from its forked child (see ``main``).
        self.fork_safe = fork_safe
        self.children: dict[int, Child] = {}
        self.accepting = True  # False once the build is gone: no run starts any more
        self.spare: Spare | None = None
        self.selector = selectors.DefaultSelector()
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_w, False)
        signal.set_wakeup_fd(self.wake_w)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, self._stop)

    def _stop(self, signum: int, _frame: Any) -> None:
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
        for pid in list(self.children):
            killpg(pid)
        kill_adopted()
        if self.spare is not None:
            killpg(self.spare.pid)

    def _private(self) -> list[int]:
        """Our descriptors that no child may keep (it would hold another run's pipes open)."""
        fds = [self.requests, self.wake_r, self.wake_w, self.events.fileno()]
        fds += [c.output for c in self.children.values()] + [c.sink.fileno() for c in self.children.values()]
        if self.spare is not None:
            fds += [self.spare.request, self.spare.output]
        return fds

    def spawn(self, run: RunRequest) -> None:
        fresh = not self.fork_safe or bool(run.get("fresh"))
        if fresh:  # the exec'd interpreter reads its job from a file
            with open(run["job_path"], "w", encoding="utf-8") as f:
                json.dump(run["job"], f)
        spare, self.spare = self.spare, None
        if spare is not None:
            try:
                with os.fdopen(spare.request, "wb") as f:
                    f.write(json.dumps(run).encode())
            except OSError:  # the spare died (killed from outside): fork as usual
                killpg(spare.pid)
                os.close(spare.output)
                spare = None
        if spare is not None:
            pid, output = spare.pid, spare.output
        else:
            output, out_w = os.pipe()
            pid = os.fork()
            if pid == 0:
                os.close(output)
                self._child(run, None, out_w)
            os.close(out_w)
        now = time.monotonic()
        os.set_blocking(output, False)
        sink = open(run["output_path"], "wb")  # noqa: SIM115 (closed when the child is reaped)
        self.children[pid] = Child(run=run, fresh=fresh, start=now,
                                   deadline=now + float(run["timeout"]), output=output, sink=sink)
        self.selector.register(output, selectors.EVENT_READ, pid)
        if self.spare is None and self.accepting:
            self._fork_spare()

    def _fork_spare(self) -> None:
        request_r, request_w = os.pipe()
        output, out_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(request_w)
            os.close(output)
            self._child(None, request_r, out_w)
        os.close(request_r)
        os.close(out_w)
        self.spare = Spare(pid, request_w, output)

    def _child(self, run: RunRequest | None, request: int | None, output: int) -> None:
        """Become the process of ``run``, or of the run that arrives on ``request``."""
        code = 70
        try:
            os.setpgid(0, 0)
            die_with_parent()
            signal.set_wakeup_fd(-1)
            for sig in (signal.SIGCHLD, signal.SIGINT, signal.SIGTERM):
                signal.signal(sig, signal.SIG_DFL)
            for fd in self._private():
                with contextlib.suppress(OSError):
                    os.close(fd)
            self.selector.close()
            if run is None:
                assert request is not None
                with os.fdopen(request, "rb") as f:
                    raw = f.read()
                if not raw:  # the worker is shutting down
                    code = 0
                    return
                run = json.loads(raw)
            assert run is not None
            null = os.open(os.devnull, os.O_RDONLY)
            os.dup2(null, 0)
            os.dup2(output, 1)
            os.dup2(output, 2)
            os.close(output)
            sys.stdin = open(0, closefd=False)  # noqa: SIM115
            sys.stdout = open(1, "w", buffering=1, closefd=False)  # noqa: SIM115
            sys.stderr = open(2, "w", buffering=1, closefd=False)  # noqa: SIM115
            if not self.fork_safe or run.get("fresh"):
                os.execv(sys.executable, [sys.executable, "-m", __spec__.name, "--job", run["job_path"]])
            renew_thread_pool()
            from .job import run_and_write

            run_and_write(run["job"])
            code = 0
        except BaseException:
            import traceback

            traceback.print_exc()
        finally:
            os._exit(code)

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
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if pid not in self.children:
                if self.spare is not None and self.spare.pid == pid:
                    os.close(self.spare.request)
                    os.close(self.spare.output)
                    self.spare = None
                continue
            killpg(pid)  # anything the snippet started in its group goes with it
            self.read_output(pid, drain=True)
            child = self.children.pop(pid)
            self._close_output(child)  # if a process it started still holds the pipe open
            child.sink.close()
            self.send({"event": "exit", "id": child.run["id"],
                       "returncode": os.waitstatus_to_exitcode(status),
                       "timed_out": child.timed_out, "seconds": time.monotonic() - child.start,
                       "fresh": child.fresh, "dropped": child.dropped})

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
        self._fork_spare()
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
                elif key.data in self.children:
                    self.read_output(key.data)
            self.reap()


def main(argv: list[str]) -> int:
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
    try:
        info = warm_up()
    except Exception as exc:
        info = {"error": f"the worker could not import torch: {type(exc).__name__}: {exc}"}
    # The warm-up must leave no thread behind: a forked child gets only the forking thread, and
    # state that expects the others breaks it in native code. A library that starts one anyway
    # gets every run a fresh interpreter, slower but sound; the build says so, with the threads.
    threads = running_threads()
    info["fork"] = not threads
    if threads:
        info["threads"] = threads
    restore_user_environment()
    info["event"] = "ready"
    events.write(json.dumps(info) + "\n")
    events.flush()
    if "error" in info:
        return 1
    adopt_orphans()
    Zygote(requests, events, fork_safe=not threads).serve()
    kill_adopted()  # every run has been reaped: what they left behind is ours now
    return 0


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


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
