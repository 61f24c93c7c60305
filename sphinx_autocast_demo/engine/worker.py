"""The worker process: a warm zygote that forks one isolated child per batch of runs.

Started by :mod:`.pool` as ``python -m sphinx_autocast_demo.engine.worker``. It imports torch
and the compiler stack once, warms one compile, then forks a child for every batch (one demo's
runs, or one run), so no demo pays the imports again or sees another's state; within a batch
the child resets itself between runs (:mod:`.fresh`). Protocol: JSON lines, batches on stdin,
one event per run on stdout. When stdin closes (the build ended or died) every child is killed.

``--job FILE`` runs one job in a fresh interpreter instead (for CUDA, which must never be
initialised before a fork).
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import selectors
import signal
import sys
import time
from dataclasses import dataclass
from typing import IO, Any

from .processes import (
    adopt_orphans,
    die_with_parent,
    kill_adopted,
    killpg,
    redirect_output,
    renew_thread_pool,
    single_threaded,
)


def warm_up() -> dict[str, Any]:
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
    gpu_build = torch.version.cuda is not None or torch.version.hip is not None
    linear = torch.nn.Linear(2, 2)
    w = torch.ones(2, 2, requires_grad=True)
    for dtype in (torch.bfloat16, torch.float16):
        with torch.autocast("cpu", dtype=dtype), torch.set_grad_enabled(not gpu_build):
            out = torch.compile(region, backend="aot_eager")(torch.ones(2, 2), w)
            out = out + torch.compile(linear, backend="aot_eager")(torch.ones(2, 2)).sum()
        if not gpu_build:
            out.backward()
        torch._dynamo.reset()
    if gpu_build:
        # Inductor imports it in a child and, without a CUDA runtime, it logs "No CUDA runtime
        # is found" into the run's printed output: let it log here, into the worker's log.
        import torch.utils.cpp_extension
    # Children never free what they inherit: freezing it keeps their garbage collector from
    # touching (and so copying) every page of the zygote; measured: forked runs twice as fast.
    gc.collect()
    gc.freeze()
    # NVML-based (PYTORCH_NVML_BASED_CUDA_CHECK): answers without initialising CUDA.
    return {"torch": torch.__version__, "python": sys.version.split()[0],
            "cuda": torch.cuda.is_available()}


@dataclass
class Child:
    """A forked child and the runs of its batch that have not reported yet (the first of them
    is running once ``started``)."""

    runs: list[dict[str, Any]]
    status: int | None  # read end of its status pipe; None: a fresh interpreter, one run
    deadline: float
    started: bool = False
    start: float = 0.0
    timed_out: bool = False
    progress: bool = False
    pending: bytes = b""


class Zygote:
    """Forks a child per batch of runs (one demo's runs, or one run) and reports each run.

    A forked child runs its batch one run after another, telling us on its status pipe when
    each starts and ends, so that timeouts stay per run; a fresh interpreter (CUDA, or a torch
    that left threads behind) runs one. When a child ends before its batch does (a crash, a
    timeout, state it cannot reset), the run it was in fails and the rest go to a new child.
    """

    def __init__(self, requests: int, events: IO[str], fork_safe: bool = True,
                 baseline: Any = None) -> None:
        self.requests = requests
        self.events = events
        # False: every run execs a fresh interpreter from its forked child (see ``main``).
        self.fork_safe = fork_safe
        self.baseline = baseline  # fresh.Baseline: what a child resets between its runs
        self.children: dict[int, Child] = {}
        self.accepting = True  # False once the build is gone: no run starts any more
        # A child forked ahead of time, waiting on a pipe for its batch: the fork (~5-15 ms of
        # page-table copying for a process holding torch) happens while the previous batch
        # runs, not between two. (pid, write end of its request pipe, read end of its status)
        self.spare: tuple[int, int, int] | None = None
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

    def send(self, event: dict[str, Any]) -> None:
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
            killpg(self.spare[0])

    def spawn(self, runs: list[dict[str, Any]]) -> None:
        single = not self.fork_safe or bool(runs[0].get("fresh"))
        pid, status = self._dispatch(runs, single)
        now = time.monotonic()
        child = Child(runs=runs, status=status, deadline=now + float(runs[0]["timeout"]))
        if single:  # no status pipe: the run starts with the process
            child.started, child.start = True, now
        else:
            assert status is not None
            self.selector.register(status, selectors.EVENT_READ, pid)
        self.children[pid] = child
        if self.spare is None:
            self._fork_spare()

    def _dispatch(self, runs: list[dict[str, Any]], single: bool) -> tuple[int, int | None]:
        """Hand ``runs`` to the spare child, or fork one for them if there is none."""
        given = runs[:1] if single else runs  # a fresh interpreter runs one; the rest wait
        spare, self.spare = self.spare, None
        if spare is not None:
            pid, pipe, status_r = spare
            try:
                with os.fdopen(pipe, "wb") as f:
                    f.write(json.dumps(given).encode())
            except OSError:  # the spare died (killed from outside): fork as usual
                killpg(pid)
                os.close(status_r)
            else:
                return pid, self._keep_status(status_r, single)
        status_r, status_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(status_r)
            self._child(given, None, status_w)
        os.close(status_w)
        return pid, self._keep_status(status_r, single)

    @staticmethod
    def _keep_status(status_r: int, single: bool) -> int | None:
        """A fresh interpreter says nothing on the status pipe: close our end of it."""
        if single:
            os.close(status_r)
            return None
        return status_r

    def _fork_spare(self) -> None:
        read_end, write_end = os.pipe()
        status_r, status_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(write_end)
            os.close(status_r)
            self._child(None, read_end, status_w)
        os.close(read_end)
        os.close(status_w)
        self.spare = (pid, write_end, status_r)

    def _child(self, runs: list[dict[str, Any]] | None, pipe: int | None, status: int) -> None:
        """Become the process of ``runs``, or of the runs that arrive on ``pipe``."""
        code = 70
        try:
            os.setpgid(0, 0)
            die_with_parent()
            signal.set_wakeup_fd(-1)
            for sig in (signal.SIGCHLD, signal.SIGINT, signal.SIGTERM):
                signal.signal(sig, signal.SIG_DFL)
            # (There is never a spare when we fork: a spare is taken before, forked after.)
            inherited = [self.requests, self.wake_r, self.wake_w, self.events.fileno(),
                         *(c.status for c in self.children.values() if c.status is not None)]
            for fd in inherited:
                with contextlib.suppress(OSError):
                    os.close(fd)
            self.selector.close()
            if runs is None:
                assert pipe is not None
                with os.fdopen(pipe, "rb") as f:
                    raw = f.read()
                if not raw:  # the worker is shutting down
                    code = 0
                    return
                runs = json.loads(raw)
            assert runs is not None
            null = os.open(os.devnull, os.O_RDONLY)
            os.dup2(null, 0)
            sys.stdin = open(0, closefd=False)  # noqa: SIM115
            if runs[0].get("fresh") or not self.fork_safe:
                request = runs[0]
                redirect_output(request["output_path"])
                if not request.get("fresh"):  # the build wrote no job file for a forked run
                    with open(request["job_path"], "w", encoding="utf-8") as f:
                        json.dump(request["job"], f)
                os.execv(sys.executable, [sys.executable, "-m", __spec__.name, "--job", request["job_path"]])
            renew_thread_pool()
            from .job import run_and_write

            with os.fdopen(status, "w", buffering=1) as report:
                for index, request in enumerate(runs):
                    if index and self.baseline is not None:
                        reason = self.baseline.dirty()
                        if reason:  # the rest go to a new child
                            report.write(f"retire {reason}\n")
                            break
                        self.baseline.restore()
                    report.write(f"start {request['id']}\n")
                    redirect_output(request["output_path"])
                    run_and_write(request["job"])
                    report.write(f"done {request['id']}\n")
            code = 0
        except BaseException:
            import traceback

            traceback.print_exc()
        finally:
            os._exit(code)

    def read_status(self, pid: int, drain: bool = False) -> None:
        """Act on what child ``pid`` said: a run started, a run ended, or it gives up.

        ``drain``: the child has ended; read everything it wrote before it did.
        """
        child = self.children[pid]
        while child.status is not None:
            try:
                chunk = os.read(child.status, 65536)
            except BlockingIOError:
                break
            if not chunk:
                self._close_status(child)
            child.pending += chunk
            if not drain:
                break
        *lines, child.pending = child.pending.split(b"\n")
        for line in lines:
            verb, _, rest = line.decode().partition(" ")
            now = time.monotonic()
            if verb == "start":
                child.started, child.start = True, now
                child.deadline = now + float(child.runs[0]["timeout"])
            elif verb == "done":
                self._report(child.runs.pop(0)["id"], 0, False, now - child.start)
                child.started, child.progress = False, True
                if child.runs:
                    child.deadline = now + float(child.runs[0]["timeout"])
            elif verb == "retire":
                print(f"autocast-demo worker: a new process for the next run: {rest}",
                      file=sys.stderr, flush=True)

    def _close_status(self, child: Child) -> None:
        if child.status is not None:
            self.selector.unregister(child.status)
            os.close(child.status)
            child.status = None

    def _report(self, run_id: str, returncode: int, timed_out: bool, seconds: float) -> None:
        self.send({"event": "exit", "id": run_id, "returncode": returncode,
                   "timed_out": timed_out, "seconds": seconds})

    def reap(self) -> None:
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if pid not in self.children:
                if self.spare is not None and self.spare[0] == pid:
                    os.close(self.spare[1])
                    os.close(self.spare[2])
                    self.spare = None
                continue
            killpg(pid)  # anything the snippet started in its group goes with it
            child = self.children[pid]
            if child.status is not None:  # what it said before it ended
                os.set_blocking(child.status, False)
                self.read_status(pid, drain=True)
                self._close_status(child)  # if a process it started still holds the pipe open
            del self.children[pid]
            if child.runs and (child.started or not child.progress):
                # The run it was in fails with the process; a child that ended before its
                # first run fails that run too, so that a batch always moves on.
                seconds = time.monotonic() - child.start if child.started else 0.0
                self._report(child.runs.pop(0)["id"], os.waitstatus_to_exitcode(status),
                             child.timed_out, seconds)
            if child.runs and self.accepting:
                self.spawn(child.runs)

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
                    continue
                if key.data != "requests":
                    if key.data in self.children:
                        self.read_status(key.data)
                    continue
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
                        self.spawn(json.loads(line)["batch"])
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
    events.write(json.dumps({"event": "ready", **info}) + "\n")
    events.flush()
    if "error" in info:
        return 1
    # The warm-up must leave no thread behind: a forked child gets only the forking thread, and
    # torch's state that expects the others breaks it in native code. A torch that starts one
    # anyway (none known: see warm_up) gets a fresh interpreter per run, slower but sound.
    fork_safe = single_threaded()
    if not fork_safe:
        print("autocast-demo worker: torch left threads running after its warm-up: "
              "every run starts a fresh interpreter", file=sys.stderr, flush=True)
    adopt_orphans()
    from .fresh import Baseline

    baseline = Baseline.take()
    gc.freeze()  # the baseline too: children keep it and never free it
    Zygote(requests, events, fork_safe, baseline).serve()
    kill_adopted()  # every run has been reaped: what they left behind is ours now
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
