"""The worker process: a warm zygote that forks one isolated child per run.

Started by :mod:`.pool` as ``python -m sphinx_autocast_demo.engine.worker``. It imports torch
and the compiler stack once, warms one compile, then forks a child for every request, so each
run starts from a clean process without paying the imports again. Protocol: JSON lines, requests
on stdin, events on stdout. When stdin closes (the build ended or died) every child is killed.

``--job FILE`` runs one job in a fresh interpreter instead (for CUDA, which must never be
initialised before a fork).
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import json
import os
import selectors
import signal
import sys
import time
from typing import IO, Any

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36


def die_with_parent(sig: int = signal.SIGKILL) -> None:
    """Ask Linux to signal this process when its parent dies, so nothing outlives a build."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, sig, 0, 0, 0)
    except (OSError, AttributeError):  # not Linux: stdin EOF still ends the worker
        pass


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


class Zygote:
    def __init__(self, requests: int, events: IO[str], fork_safe: bool = True) -> None:
        self.requests = requests
        self.events = events
        # False: every run execs a fresh interpreter from its forked child (see ``main``).
        self.fork_safe = fork_safe
        self.children: dict[int, dict[str, Any]] = {}  # pid -> request + deadline
        # A child forked ahead of time, waiting on a pipe for its request: the fork (~15 ms of
        # page-table copying for a process holding torch) happens while the previous run
        # runs, not between two runs.
        self.spare: tuple[int, int] | None = None  # (pid, write end of its pipe)
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
        _kill_adopted()
        os._exit(128 + signum)

    def send(self, event: dict[str, Any]) -> None:
        self.events.write(json.dumps(event) + "\n")
        self.events.flush()

    def kill_all(self) -> None:
        for pid in list(self.children):
            _killpg(pid)
        _kill_adopted()
        if self.spare is not None:
            _killpg(self.spare[0])

    def spawn(self, request: dict[str, Any]) -> None:
        pid = self._dispatch(request)
        request["_start"] = time.monotonic()
        request["_deadline"] = request["_start"] + float(request["timeout"])
        request["_timed_out"] = False
        self.children[pid] = request
        self._fork_spare()

    def _dispatch(self, request: dict[str, Any]) -> int:
        """Hand ``request`` to the spare child, or fork one for it if there is none."""
        spare, self.spare = self.spare, None
        if spare is not None:
            pid, pipe = spare
            try:
                with os.fdopen(pipe, "wb") as f:
                    f.write(json.dumps(request).encode())
                return pid
            except OSError:  # the spare died (killed from outside): fork as usual
                _killpg(pid)
        pid = os.fork()
        if pid == 0:
            self._child(request, None)
        return pid

    def _fork_spare(self) -> None:
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(write_end)
            self._child(None, read_end)
        os.close(read_end)
        self.spare = (pid, write_end)

    def _child(self, request: dict[str, Any] | None, pipe: int | None) -> None:
        """Become the run of ``request``, or of the request that arrives on ``pipe``."""
        code = 70
        try:
            os.setpgid(0, 0)
            die_with_parent()
            signal.set_wakeup_fd(-1)
            for sig in (signal.SIGCHLD, signal.SIGINT, signal.SIGTERM):
                signal.signal(sig, signal.SIG_DFL)
            for fd in (self.requests, self.wake_r, self.wake_w, self.events.fileno()):
                os.close(fd)
            if request is None:
                assert pipe is not None
                with os.fdopen(pipe, "rb") as f:
                    raw = f.read()
                if not raw:  # the worker is shutting down
                    code = 0
                    return
                request = json.loads(raw)
            assert request is not None
            out = os.open(request["output_path"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.dup2(out, 1)
            os.dup2(out, 2)
            null = os.open(os.devnull, os.O_RDONLY)
            os.dup2(null, 0)
            sys.stdout = open(1, "w", buffering=1, closefd=False)  # noqa: SIM115
            sys.stderr = open(2, "w", buffering=1, closefd=False)  # noqa: SIM115
            sys.stdin = open(0, closefd=False)  # noqa: SIM115
            job = request["job"]
            if request.get("fresh") or not self.fork_safe:
                if not request.get("fresh"):  # the build wrote no job file for a forked run
                    with open(request["job_path"], "w", encoding="utf-8") as f:
                        json.dump(job, f)
                os.execv(sys.executable, [sys.executable, "-m", __spec__.name, "--job", request["job_path"]])
            _renew_thread_pool()
            from .job import run_and_write

            run_and_write(job)
            code = 0
        except BaseException:
            import traceback

            traceback.print_exc()
        finally:
            os._exit(code)

    def reap(self) -> None:
        while self.children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            request = self.children.pop(pid, None)
            if request is None:
                if self.spare is not None and self.spare[0] == pid:
                    os.close(self.spare[1])
                    self.spare = None
                continue
            _killpg(pid)  # anything the snippet started in its group goes with it
            self.send({
                "event": "exit",
                "id": request["id"],
                "returncode": os.waitstatus_to_exitcode(status),
                "timed_out": request["_timed_out"],
                "seconds": time.monotonic() - request["_start"],
            })

    def enforce_deadlines(self) -> float | None:
        now = time.monotonic()
        next_deadline: float | None = None
        for pid, request in self.children.items():
            if request["_timed_out"]:
                continue
            if now >= request["_deadline"]:
                request["_timed_out"] = True
                _killpg(pid)
            elif next_deadline is None or request["_deadline"] < next_deadline:
                next_deadline = request["_deadline"]
        return None if next_deadline is None else max(0.0, next_deadline - now)

    def serve(self) -> None:
        selector = selectors.DefaultSelector()
        selector.register(self.requests, selectors.EVENT_READ, "requests")
        selector.register(self.wake_r, selectors.EVENT_READ, "wake")
        pending = b""
        open_ = True
        self._fork_spare()
        while open_ or self.children:
            timeout = self.enforce_deadlines()
            for key, _ in selector.select(timeout):
                if key.data == "wake":
                    os.read(self.wake_r, 4096)
                    continue
                chunk = os.read(self.requests, 65536)
                if not chunk:  # the build is gone: nobody will read results
                    open_ = False
                    selector.unregister(self.requests)
                    self.kill_all()
                    continue
                pending += chunk
                *lines, pending = pending.split(b"\n")
                for line in lines:
                    if line.strip():
                        self.spawn(json.loads(line))
            self.reap()


def _renew_thread_pool() -> None:
    """Rebuild, in a forked child, the intra-op thread pool the zygote made, before any thread can.

    ``torch.set_num_threads(1)`` in the zygote created ATen's pthreadpool; a fork marks it
    corrupt, and the next ``at::set_num_threads`` replaces it without a lock. On a GPU build
    the child's first backward starts 8 autograd device threads at once, each of which calls
    it: one can find the pool released and not yet replaced and aborts the run with SIGABRT
    ("pool INTERNAL ASSERT FAILED at ATen/ParallelOpenMP.cpp: Invalid thread pool!", measured
    with 2.14.1+cu130). Replaced here, by the only thread, nothing is left to race for.
    """
    import torch

    torch.set_num_threads(1)


def single_threaded() -> bool:
    """Whether this process has one thread: only then is ``os.fork()`` safe for torch."""
    try:
        return len(os.listdir("/proc/self/task")) == 1
    except OSError:  # no /proc: trust the warm-up
        return True


def adopt_orphans() -> None:
    """Make what a snippet detaches from its process group (``setsid``, ``start_new_session``)
    our child when its parent ends, instead of init's, so that :func:`_kill_adopted` ends it."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def _kill_adopted() -> None:
    """Kill every child of ours: at the end of a build, only runs and adopted orphans are."""
    me = str(os.getpid())
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else ():
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8") as f:
                parent = f.read().rsplit(")", 1)[1].split()[1]
        except (OSError, IndexError):
            continue
        if parent == me:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(int(entry), signal.SIGKILL)


def _killpg(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


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
    Zygote(requests, events, fork_safe).serve()
    _kill_adopted()  # every run has been reaped: what they left behind is ours now
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
