"""Run what the plan (:class:`.planner.Planner`) left unanswered: each planned variant's
compiled and eager runs go to the worker pool, and come back paired as :class:`Ran`, or get
the reason they cannot run (no worker, no CUDA, the worker died)."""

from __future__ import annotations

import importlib.metadata
import os
import sys
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sphinx.util import logging
from sphinx.util.display import status_iterator

from ..core.config import AUTO_IDLE, KEEP_AUTO
from ..core.i18n import __, n__
from ..core.subtypes import ours
from ..plan import keys
from . import notices
from .isolation import WorkerSettings
from .parent.cpus import cores

#: The ``detail`` of runs refused because the build cannot run any demo (no torch, no
#: worker), before the engine's own words; the reason itself is ``RunRecord.not_run``.
ENGINE_NOT_RUN = "not run, no demo can run here: "

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping, Sequence

    from sphinx.application import Sphinx

    from ..core.config import Settings
    from ..core.model import Demo
    from ..plan.planned import Planned, Stats

    # (imported where a build runs something: an unchanged build never needs the pool, and all
    # it imports is part of what an unchanged build costs)
    from .parent.pool import EngineError, WorkerPool
    from .parent.records import Finished
    from .protocol import Job, Mode

logger = logging.getLogger(__name__)


def build_path() -> list[str]:
    """This process's sys.path as absolute directories and archives (a run starts elsewhere)."""
    return [os.path.abspath(p) for p in sys.path
            if isinstance(p, str) and os.path.exists(os.path.abspath(p))]


def pool_size(conf_jobs: int, available: int) -> int:
    """Runs in flight: ``autocast_demo_jobs`` when set, else every CPU the build may use. Not
    ``-j``: each run is a process of its own, so no verdict depends on how many run at once,
    and a ``sphinx-build`` without ``-j`` does not mean "use one core for the demos"."""
    if conf_jobs > 0:
        return conf_jobs
    return max(1, available)


def installed_torch() -> str:
    """The torch version, read from package metadata: no 2-second import in the build.

    Called once per build (:mod:`.pipeline`); everything else reads :attr:`.build.Build.torch`.
    """
    try:
        return importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def torch_source() -> str:
    """Where torch runs from its source tree (an editable install), a digest of its modules'
    and libraries' times and sizes (:func:`.keys.torch_source`); empty for an installed torch.
    Found as the worker finds it, without importing it."""
    import importlib.util

    spec = importlib.util.find_spec("torch")
    return keys.torch_source(spec.origin if spec is not None else None, keys.installed_places())


@dataclass
class Ran:
    """The compiled and eager runs of one planned variant, as the engine finished them."""

    item: Planned
    compiled: Finished
    eager: Finished | None  # None: the demo compares with nothing (``:compare: none``)

    @property
    def imports(self) -> tuple[tuple[str, ...] | None, ...]:
        """The writer's files each run had (None: the run could not tell, see ``Planner.store``)."""
        return (self.compiled.imports, *((self.eager.imports,) if self.eager else ()))


#: Variables a CI service sets (GitHub, GitLab, CircleCI, Travis, Buildkite and most others:
#: CI; Azure Pipelines: TF_BUILD; Jenkins: JENKINS_URL): a build there is nobody's edit loop.
CI_VARIABLES = ("CI", "TF_BUILD", "JENKINS_URL")


def writers_build(environ: Mapping[str, str] = os.environ) -> bool:
    """A build a writer watches: in a terminal, or under sphinx-autobuild (which runs Sphinx in
    its own process or in a child that shares its terminal), and in no CI."""
    if any(environ.get(name, "").lower() not in ("", "0", "false") for name in CI_VARIABLES):
        return False
    return "sphinx_autobuild" in sys.modules or any(
        getattr(stream, "isatty", lambda: False)() for stream in (sys.stdout, sys.stderr))


def idle_time(setting: float) -> float:
    """Seconds the worker stays after this build: ``autocast_demo_keep_worker``, where -1 is
    AUTO_IDLE after a writer's build and none after any other."""
    if setting != KEEP_AUTO:
        return setting
    return AUTO_IDLE if writers_build() else 0.0


def modes(demo: Demo) -> tuple[Mode, ...]:
    """Each value's runs: no eager run where it is compared with nothing."""
    return ("compiled",) if demo.compare == "none" else ("compiled", "eager")


class Runner:
    """The worker pool, fed with what the plan left unanswered; its records, paired as
    :class:`Ran`, and its numbers in the build's :class:`.Stats`."""

    def __init__(self, app: Sphinx, conf: Settings, torch: str, stats: Stats) -> None:
        self.app = app
        self.conf = conf
        self.torch = torch
        self.stats = stats
        self.pool: WorkerPool | None = None
        self.not_kept_notice = False
        self.device = ""  # "cuda" or "cpu" once the worker said; "": it did not start

    def start(self) -> None:
        """Start the worker early, so that torch imports while Sphinx reads the sources."""
        if self.pool is None and self.conf.execution.runs and self.torch != "not installed":
            jobs = pool_size(self.conf.jobs, cores())
            # "force" is a run of this build, from a fresh import of everything: a kept worker
            # holds what its modules read when it started.
            keep = idle_time(self.conf.keep_worker) if self.conf.execution.reuses else 0.0
            logger.verbose((n__("autocast-demo: asking a kept worker ({n} run at a time)",
                                "autocast-demo: asking a kept worker ({n} runs at a time)", jobs)
                            if keep else
                            n__("autocast-demo: starting the worker ({n} run at a time)",
                                "autocast-demo: starting the worker ({n} runs at a time)", jobs)
                            ).format(n=jobs))
            # The config the demos set, and the backend whose compile the worker warms up.
            words = WorkerSettings(config=self.conf.config, backend=self.conf.backend)
            from .parent.pool import WorkerPool
            self.pool = WorkerPool(jobs, keep=keep, words=words)
            self._say_not_kept()

    def _say_not_kept(self) -> None:
        """Once: why no kept worker serves this build, though one was asked for (a warning
        where conf.py asked, ``-v`` where it is the default's). The pool knows at its start,
        or when the kept one refused, ended or did not answer before serving."""
        if self.pool is not None and not self.not_kept_notice:
            self.not_kept_notice = notices.not_kept(self.app, self.pool.not_kept,
                                                    asked=self.conf.keep_worker != KEEP_AUTO)

    def close(self) -> None:
        if self.pool is not None:
            self.pool.close()
            self.pool = None

    def run(self, planned: list[Planned]) -> Iterator[Ran]:
        """Run what the cache did not answer; yield each variant once both its runs finished.

        A variant that cannot run (no worker, no CUDA) gets its result here and is not yielded.
        """
        pending = [item for item in planned if item.result is None]
        if not pending:
            return
        from .parent.pool import EngineError, WorkerDied
        from .parent.records import Run
        try:
            self.start()
            if self.pool is None:
                raise EngineError(f"torch is {self.torch}",
                                  "no-torch" if self.torch == "not installed" else "")
            info = self.pool.ready()
            self.device = "cuda" if info.get("cuda") else "cpu"
        except EngineError as exc:
            self._say_not_kept()  # (its own worker, after all, failed too)
            self.refuse(pending, exc)
            return
        from ..core.model import skipped  # (here: a build that runs nothing needs no model type)

        runnable: list[Planned] = []
        for item in pending:
            if item.demo.device == "cuda" and not info.get("cuda"):
                refuse = self.conf.cuda_unavailable == "error"
                reason = ("device is cuda but this machine has no CUDA; set "
                          "autocast_demo_cuda_unavailable = 'skip' to render such demos unchecked")
                item.result = skipped(item.variant, reason,
                                      status="refused" if refuse else "skipped", why="no-cuda")
            else:
                runnable.append(item)
        fresh_notice = notices.cannot_fork(self.app, info)  # (the warm worker may say so later)
        runs, owners = [], {}
        for index, item in enumerate(runnable):
            fresh = item.demo.device == "cuda"  # CUDA: a new interpreter per run, never forked
            for mode in modes(item.demo):
                run = Run(key=f"{index:06d}-{mode}", timeout=item.demo.timeout, fresh=fresh,
                          job=self.job(item, mode))
                runs.append(run)
                owners[run.key] = (item, mode)
        start = time.perf_counter()
        def label(fin: Finished) -> str:
            item, mode = owners[fin.run.key]
            return f"{item.demo.docname}:{item.demo.lineno} [{item.variant.name}, {mode}]"

        finished = status_iterator(self.pool.run(runs), __("running autocast demos... "), "purple",
                                   len(runs), self.app.verbosity, stringify_func=label)
        halves: dict[int, dict[str, Finished]] = {}
        try:
            for fin in finished:
                item, mode = owners[fin.run.key]
                pair = halves.setdefault(id(item), {})
                pair[mode] = fin
                self.count(fin, item)
                if len(pair) == len(modes(item.demo)):
                    yield Ran(item, pair["compiled"], pair.get("eager"))
        except EngineError as exc:  # the worker died: what has not finished cannot run
            left = [item for item in runnable
                    if len(halves.get(id(item), ())) < len(modes(item.demo))]
            running = exc.running if isinstance(exc, WorkerDied) else []
            self.refuse(left, exc, [owners[key] for key in running if key in owners])
        self.stats.seconds += time.perf_counter() - start
        self.stats.kept = (self.pool.info or info).get("kept", {}).get("build", 0)
        self.stats.kept_ended = bool(self.stats.kept) and self.pool.kept_ended()
        self._say_not_kept()
        notices.engine_speed(self.stats, self.pool.info or info, self.pool.warm.ready is not None)
        if self.stats.kept == 1 and self.conf.keep_worker == KEEP_AUTO:
            notices.worker_stays(self.pool.info or info)
        if not fresh_notice:
            notices.cannot_fork(self.app, self.pool.info or info)

    def count(self, fin: Finished, item: Planned) -> None:
        where = str(item.demo.location)
        self.stats.executed += 1
        self.stats.probes += item.variant in item.demo.probes
        self.stats.fresh += fin.fresh
        self.stats.copied_ahead += fin.prefaulted > 0
        self.stats.copied_bytes = max(self.stats.copied_bytes, fin.prefaulted)
        self.stats.eager_zygote += fin.zygote == "eager"
        self.stats.eager_early += fin.early
        self.stats.before_turn += fin.before_turn
        self.stats.per_demo[where] = self.stats.per_demo.get(where, 0.0) + fin.record.seconds

    def refuse(self, items: list[Planned], exc: EngineError,
               running: Sequence[tuple[Planned, str]] = ()) -> None:
        """Say once that the worker failed, and mark ``items`` as not run for that reason.

        ``running``: what ran when it died, (variant, mode); the error is then said at the first
        of those, whose code may have killed it, instead of at conf.py.
        """
        from .parent.pool import WorkerDied

        error = str(exc.args[0]) if exc.args else "the worker failed"
        if running:
            what = ", ".join(f"{item.demo.docname}:{item.demo.lineno} [{item.variant.name}, {mode}]"
                             for item, mode in running)
            log = exc.log if isinstance(exc, WorkerDied) else ""
            error = f"{exc.what if isinstance(exc, WorkerDied) else error} while running {what}"
            message = n__("autocast-demo: {error}; {n} value of this build's demos was not run. "
                          "A snippet must not kill or signal the process that started it "
                          "(os.getppid()); if this one does not, the worker's log says why{log}",
                          "autocast-demo: {error}; {n} values of this build's demos were not "
                          "run. A snippet must not kill or signal the process that started it "
                          "(os.getppid()); if this one does not, the worker's log says why{log}",
                          len(items)).format(error=error, n=len(items),
                                             log=f":\n{log}" if log else "")
            location = running[0][0].demo.location
        else:
            message, location = notices.engine_problem(error, exc.fault, str(self.app.confdir),
                                               self.conf.config)
        logger.error(message, **ours("engine"), location=str(location))
        from ..core.model import skipped

        reason = (("not run: " if running else ENGINE_NOT_RUN) + error).splitlines()[0]
        for item in items:
            item.result = skipped(item.variant, reason, status="refused",
                                  why="died" if running else "engine")

    def job(self, item: Planned, mode: Mode) -> Job:
        demo, codes, variant = item.demo, item.codes, item.variant
        return {
            "setup": [c.text for c in codes[:-1]],
            "code": codes[-1].text,
            "mode": mode,
            "backend": demo.backend,
            "config": demo.config,
            "value": variant.value,
            # The snippet's ``__file__``: it runs in a scratch directory, and finds files beside
            # its page from here. Absolute: an included file's source is relative to where
            # sphinx-build was started.
            "page": os.path.abspath(demo.code.source),
            # The build's sys.path, with what conf.py put in it (the documented package): the
            # run puts the entries it lacks in front, so that a demo imports what autodoc did.
            "path": build_path(),
            "held_to_compile": demo.held_to_compile,
            "replayed": item.replayed,
            "display": demo.continues,
        }
