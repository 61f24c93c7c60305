"""The build's side of the worker: start it, feed it runs, read back what each run left.

The worker (a warm zygote, see ``child.worker``) does the forking, the timeouts and the killing;
this side only keeps at most ``jobs`` runs in flight and turns exits into records
(:mod:`.records`). Which worker serves the build, its own or a kept one's session, is behind
one handle (:mod:`.handles`).
"""

from __future__ import annotations

import json
import os
import select
import shutil
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...plan.keys import SINGLE_THREADED
from .. import kept
from ..isolation import NAMES, WorkerSettings, to_env
from ..protocol import EngineFault, Job, Ready, RunRequest
from .channels import Channel, Waiting, above_stdio, snippet
from .cpus import cores
from .handles import KeptSession, OwnWorker
from .records import Finished, Run, collect, run_paths

if TYPE_CHECKING:
    from collections.abc import Collection, Iterable, Iterator

    from .channels import Snippet

#: How long the worker may take to import torch and warm up before we give up on it.
STARTUP_TIMEOUT = 300.0


class EngineError(Exception):
    """The worker could not be started or died: one error for the whole build. The message is
    in words; ``fault`` says what kind of failure it is."""

    def __init__(self, message: str, fault: EngineFault = "") -> None:
        super().__init__(message)
        self.fault: EngineFault = fault


class WorkerDied(EngineError):
    """A zygote died (``channel``), or the worker stopped answering (None). ``running``: the
    keys of the runs in flight in it then: one of them may have killed it. ``what`` is what
    happened, ``log`` the end of the worker's log (the message is both)."""

    def __init__(self, what: str, channel: Channel | None = None, blame: bool = True,
                 log: str = "") -> None:
        super().__init__(f"{what}:\n{log}" if log else what, fault="died")
        self.what, self.log = what, log
        self.channel = channel
        self.blame = blame  # False: stopped from outside, no run is to blame
        self.running: list[str] = []


def eager_jobs(jobs: int, cpus: int) -> int:
    """Eager runs in flight beside the warm-up: a core left to it (at least one run)."""
    return jobs if jobs < cpus else max(1, jobs - 1)


class WorkerPool:
    """The worker and, while the worker warms up, its eager zygote (see
    ``serving.fork_eager_zygote``): eager runs go there, compiled runs to the warm worker."""

    def __init__(self, jobs: int, env: dict[str, str] | None = None, keep: float = 0.0,
                 words: WorkerSettings | None = None) -> None:
        self.jobs = max(1, jobs)
        self.tmp = Path(tempfile.mkdtemp(prefix="autocast-demo-"))
        self.log = self.tmp / "worker.log"
        self.info: Ready | None = None  # the first ready (the eager zygote's, when it has one)
        # Why no kept worker serves this build although one was asked for (the build says it).
        self.not_kept: str | None = None
        cpus = cores()
        self.eager_jobs = eager_jobs(self.jobs, cpus)
        # Prefer a fork-safe CUDA probe and single-threaded compile workers: both forked.
        child_env = {
            **{k: v for k, v in os.environ.items() if k not in NAMES.values()},
            **dict.fromkeys(SINGLE_THREADED, "1"),
            "PYTORCH_NVML_BASED_CUDA_CHECK": "1",
            "TORCHINDUCTOR_COMPILE_THREADS": "1",
            "PYTHONHASHSEED": "0",
            **(env or {}),
        }
        user_env = {k: os.environ.get(k) for k in SINGLE_THREADED}
        # Eager runs while the worker warms up, where a core is free of the warm-up: the pool's
        # word to the worker, as two more pipes (``serving.fork_eager_zygote``).
        ours: tuple[int, int] | None = None
        theirs: tuple[int, ...] = ()
        if child_env.get("AUTOCAST_DEMO_EARLY_EAGER") != "0" and cpus > 1:
            eager_in, to_eager = os.pipe()
            from_eager, eager_out = os.pipe()
            ours, theirs = (to_eager, from_eager), (above_stdio(eager_in), above_stdio(eager_out))
        # Waiting children copy ahead only on a core that would idle (``serving.copy_ahead``).
        self.words = replace(words or WorkerSettings(), user_env=user_env, idle_core=self.jobs < cpus)
        child_env.update(to_env(self.words))
        self._child_env = child_env  # for a kept worker that ends before serving us
        try:
            session = self._join_kept(child_env, keep, theirs) if keep > 0 else None
            self.worker: OwnWorker | KeptSession = session or self._start(child_env, theirs)
        except BaseException:
            for fd in ours or ():
                os.close(fd)
            raise
        finally:
            for fd in theirs:
                os.close(fd)
        self.eager = Channel(*ours) if ours else None

    @property
    def warm(self) -> Channel:
        """The worker's channel (it warms up, then runs everything once ready)."""
        return self.worker.channel

    def _start(self, child_env: dict[str, str], eager: tuple[int, ...]) -> OwnWorker:
        if eager:
            child_env = {**child_env, **to_env(replace(self.words, eager_fds=(eager[0], eager[1])))}
        return OwnWorker(child_env, self.tmp, self.log, eager)

    def _join_kept(self, child_env: dict[str, str], keep: float,
                   eager: tuple[int, ...]) -> KeptSession | None:
        """A kept worker's session; None, with why in ``not_kept``, if there is none."""
        try:
            return KeptSession(child_env, keep, self.tmp, self.log, eager)
        except (kept.KeptUnavailable, OSError) as exc:
            self.not_kept = str(exc)
            return None

    def _own_worker_after_all(self, why: str) -> None:
        """A worker of our own, after all: the kept one's session never came."""
        assert isinstance(self.worker, KeptSession)
        self.not_kept = why
        self.worker.abandon()  # (the eager zygote, if any, goes on until the new worker is ready)
        self.worker = self._start(self._child_env, ())

    def _channels(self) -> list[Channel]:
        return [c for c in (self.warm, self.eager) if c is not None and (c.open or c.in_flight)]

    def _read_event(self, timeout: float) -> tuple[Channel, Any]:
        """The next event of either zygote, and whose it is."""
        # Our own buffers over the raw descriptors: a buffered reader may hold several events
        # read in one go, and select() on the descriptor would then wait for more that never
        # come (quick runs report faster than a busy build reads).
        while True:
            # What a zygote said before it ended comes first (a failed warm-up's last word).
            for channel in self._channels():
                if b"\n" in channel.pending:
                    line, _, channel.pending = channel.pending.partition(b"\n")
                    event = json.loads(line)
                    if event.get("event") == "refused" and channel is self.warm:
                        self._own_worker_after_all(
                            f"the kept worker refused this build: {event.get('why')}")
                        continue  # (the new worker's channel is read from the next round on)
                    if event.get("event") != "stopped":
                        return channel, event
                    if channel is self.warm:  # by a signal: no run is to blame
                        raise WorkerDied(f"the autocast-demo worker was stopped by "
                                         f"{event.get('signal')}", blame=False)
                    # The eager zygote, told that the worker ended: how it did decides.
                    channel.pending, channel.ended = b"", True
            for channel in [c for c in self._channels() if c.ended]:
                if channel is not self.warm and not channel.in_flight:
                    self._drop_eager()  # none was forked (or it died idle): the warm worker runs
                    continue
                if channel is self.warm and self.worker.kept and channel.ready is None:
                    # The kept worker ended (or stopped listening) before it served us.
                    self._own_worker_after_all("the kept worker ended before it served this build")
                    continue
                stopped_by = self.worker.stopped_by()
                if stopped_by:  # Ctrl-C or a kill reached the worker itself: no run is to blame
                    raise WorkerDied(f"the autocast-demo worker was stopped by {stopped_by}",
                                     blame=False)
                raise self._died(timed_out=False, channel=channel)
            fds = {c.events: c for c in self._channels()}
            answer = self.worker.answer_by  # (None once it is ready: _note_ready)
            wait = timeout if answer is None else min(timeout, max(0.0, answer - time.monotonic()))
            ready, _, _ = select.select(list(fds), [], [], wait)
            if not ready and answer is not None and time.monotonic() >= answer:
                self._no_answer()
                continue
            if not ready and wait < timeout:  # woke before the answer's deadline
                continue
            if not ready:
                raise self._died(timed_out=True)
            for fd in ready:
                chunk = os.read(fd, 65536)
                fds[fd].pending += chunk
                fds[fd].ended = not chunk

    def _drop_eager(self) -> None:
        if self.eager is not None:
            self.eager.close()
            os.close(self.eager.events)
            self.eager = None

    def _no_answer(self) -> None:
        """The warm kept worker did not answer in time: a worker of our own, and why."""
        assert isinstance(self.worker, KeptSession)
        pid = self.worker.pid
        self._own_worker_after_all(
            f"the kept worker, pid {pid}, did not answer in {kept.ANSWER_TIMEOUT:g} s: stopped "
            f"or stuck? Resume it (kill -CONT {pid}) or end it (kill -KILL {pid}); 'python -m "
            "sphinx_autocast_demo stop-workers' makes the next build start a new one")

    def _died(self, timed_out: bool, channel: Channel | None = None) -> WorkerDied:
        what = "did not answer" if timed_out else "stopped unexpectedly"
        tail = self.log.read_text(errors="replace")[-2000:].strip()
        return WorkerDied(f"the autocast-demo worker {what}", channel, log=tail)

    def _note_ready(self, channel: Channel, event: Any) -> None:
        if "error" in event:
            raise EngineError(event["error"], event.get("fault", ""))
        channel.ready = event
        if channel is self.warm:
            self.worker.answer_by = None
        if self.info is None or channel is self.warm:  # the warm worker's says everything
            self.info = event

    def ready(self) -> Ready:
        """Wait for the first zygote to be ready (the eager one, before the warm-up ends); raise
        :class:`EngineError` if the worker failed."""
        while self.info is None:
            channel, event = self._read_event(STARTUP_TIMEOUT)
            self._note_ready(channel, event)
        return self.info

    def run(self, runs: Iterable[Run]) -> Iterator[Finished]:
        """Execute ``runs``, at most ``jobs`` processes at a time, yielding each as it finishes.

        Until the warm worker is ready, the eager runs go to the eager zygote; from then on
        every run, in the build's order, goes to the warm worker (so values finish, and are
        stored, from the first page on, and the eager zygote ends soon).
        """
        self.ready()
        waiting = Waiting(list(runs))
        in_flight: dict[str, tuple[Run, Channel]] = {}
        longest = max((r.timeout for r in waiting.runs), default=0.0)
        try:
            yield from self._run(waiting, in_flight, longest)
        except WorkerDied as exc:
            exc.running = [key for key, (_, channel) in in_flight.items()
                           if exc.blame and exc.channel in (None, channel)]
            raise

    def _run(self, waiting: Waiting, in_flight: dict[str, tuple[Run, Channel]],
             longest: float) -> Iterator[Finished]:
        while waiting or in_flight:
            while len(in_flight) < self.jobs:
                busy = {s for run, _ in in_flight.values() if (s := snippet(run)) is not None}
                picked = self._pick(waiting, busy)
                if picked is None:
                    break
                run, channel = picked
                try:
                    channel.send(self._request(run))
                except OSError as exc:  # BrokenPipeError: it died
                    if channel is self.warm or channel.in_flight:
                        raise self._died(timed_out=False, channel=channel) from exc
                    waiting.put_back(run)  # the eager zygote died idle: the warm worker runs it
                    self._drop_eager()
                    continue
                in_flight[run.key] = (run, channel)
                channel.in_flight += 1
            eager = self.eager
            if eager and not eager.in_flight and (self.warm.ready or waiting.next(True) is None):
                self._drop_eager()  # it has nothing more to do: its memory goes back now
            # A run's own timeout is the zygote's to enforce: past it, the zygote is stuck.
            channel, event = self._read_event(longest + (60.0 if self.warm.ready else STARTUP_TIMEOUT))
            if event.get("event") == "ready":
                self._note_ready(channel, event)
                continue
            run, channel = in_flight.pop(event["id"])
            channel.in_flight -= 1
            finished = collect(run, run_paths(self.tmp, run), event)
            if channel is self.eager:
                finished.zygote, finished.early = "eager", self.warm.ready is None
            finished.before_turn = run.key in waiting.before_turn
            yield finished

    def _pick(self, waiting: Waiting, busy: Collection[Snippet] = ()) -> tuple[Run, Channel] | None:
        """The next run and the zygote it goes to, kept apart from the snippets ``busy`` in
        flight where it can be; None while what waits must wait."""
        if self.warm.ready is not None:
            run = waiting.take(eager_only=False, busy=busy)
            return None if run is None else (run, self.warm)
        if self.eager is not None and self.eager.open:
            if self.eager.in_flight >= self.eager_jobs:  # (the warm-up keeps a core)
                return None
            run = waiting.take(eager_only=True)
            return None if run is None else (run, self.eager)
        return None

    def _request(self, run: Run) -> RunRequest:
        paths = run_paths(self.tmp, run)
        # A scratch directory: a relative write (``torch.save(m, "m.pt")``) must not land in
        # the docs' sources; the snippet finds its page's files through ``__file__``.
        os.mkdir(paths["cwd"])
        job: Job = {**run.job, "result_path": paths["result_path"], "data_path": paths["data_path"],
                    "stack_path": paths["stack_path"], "cwd": paths["cwd"], "timeout": run.timeout}
        return {"id": run.key, "job": job, "timeout": run.timeout, "fresh": run.fresh,
                "output_path": paths["output_path"], "job_path": paths["job_path"]}

    def kept_ended(self) -> bool:
        """Will the kept worker serving this build serve no later one?"""
        return self.worker.ended_for_later_builds()

    def close(self) -> None:
        """End the worker (and the eager zygote) or leave its session; remove our files."""
        self.worker.close(self.eager)
        self.eager = None
        shutil.rmtree(self.tmp, ignore_errors=True)

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


