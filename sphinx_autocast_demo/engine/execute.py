"""Plan and execute: every recorded demo without a result -> cache or worker -> DemoResult.

Over ~400 lines, for now: the executor's plan (keys, cache and result-set lookups), its runs
and what it stores are one object that the stage reshape (issue 36) splits into a planner and
a runner with narrow interfaces.
"""

from __future__ import annotations

import importlib.metadata
import os
import platform
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from sphinx.util import logging
from sphinx.util.display import status_iterator

from ..core.config import conf_line
from ..core.model import WARNING_TYPE, DemoResult, Variant, VariantResult, skipped
from ..plan.cache import CorruptEntry, Entry, FileStamp, ResultCache
from ..plan.environments import Environments
from ..plan.keys import result_key, torch_key, torch_variables
from ..plan.planned import Planned, Stats
from ..plan.stamps import Stamps
from . import said
from .isolation import Words
from .parent.cpus import cores
from .parent.pool import EngineError, WorkerDied, WorkerPool
from .parent.records import Finished, Run
from .protocol import Job, Mode

#: The ``detail`` of runs refused because the build cannot run any demo (no torch, no
#: worker), before the engine's own words; the reason itself is ``RunRecord.not_run``.
ENGINE_NOT_RUN = "not run, no demo can run here: "

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from sphinx.application import Sphinx

    from ..core.config import Settings
    from ..core.model import Code, Demo
    from ..core.state import DocState
    from ..plan.results import EnvironmentSet

logger = logging.getLogger(__name__)


def build_path() -> list[str]:
    """This process's sys.path as absolute directories and archives (a run starts elsewhere)."""
    return [os.path.abspath(p) for p in sys.path
            if isinstance(p, str) and os.path.exists(os.path.abspath(p))]


def pool_size(conf_jobs: int, parallel: int, available: int) -> int:
    """Runs in flight: ``autocast_demo_jobs`` when set, else ``-j`` capped at the cores."""
    if conf_jobs > 0:
        return conf_jobs
    return max(1, min(parallel or 1, available))


def installed_torch() -> str:
    """The torch version, read from package metadata: no 2-second import in the build.

    Called once per build (:mod:`.pipeline`); everything else reads :attr:`.build.Build.torch`.
    """
    try:
        return importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


@dataclass
class Ran:
    """The compiled and eager runs of one planned variant, as the engine finished them."""

    item: Planned
    compiled: Finished
    eager: Finished


class Executor:
    """The engine-facing stages: plan (the cache), run (the worker pool), store."""

    def __init__(self, app: Sphinx, conf: Settings, torch: str,
                 sets: dict[str, EnvironmentSet] | None = None) -> None:
        self.app = app
        self.conf = conf
        root = Path(conf.cache_dir) if conf.cache_dir else Path(app.doctreedir) / "autocast_demo_cache"
        self.cache = ResultCache(root if root.is_absolute() else Path(app.confdir) / root)
        self.storing: bool | None = None  # whether results can be stored; None: not known yet
        # The caller reads it from metadata, never from the worker: the cache, the
        # environment's fingerprint and the pages must all name the same version, and the
        # build must not import torch.
        self.torch = torch
        self.torch_key = torch_key(torch, conf.cache_torch)
        self.python = platform.python_version()
        self.pool: WorkerPool | None = None
        self.said_not_kept = False
        self.stats = Stats()
        self.versions: dict[tuple[str, str], str] = {}  # demo -> torch of its cached results
        # demo -> the writer's module files its results depend on (pipeline.run makes Sphinx
        # read its page again when one changes, and then ``stale`` decides)
        self.files: dict[tuple[str, str], set[str]] = {}
        self.stamps = Stamps(str(app.confdir))
        self.variables = torch_variables(os.environ)
        self.equivalent: set[tuple[str, str]] = set()  # ... which cache_torch counts as ours
        # Probes whose runs failed without saying which files they had: stored once every run
        # of the build is, with the files of their demo's other runs (:meth:`store_failed`).
        self.failed_probes: list[Ran] = []
        self.untold: set[tuple[str, str]] = set()  # demos with a run that could not tell its files
        # This build's environment, and the result sets of others (environments.py).
        self.envs = Environments(conf, torch, self.python, sets or {})

    def start(self) -> None:
        """Start the worker early, so that torch imports while Sphinx reads the sources."""
        if self.pool is None and self.conf.execution.runs and self.torch != "not installed":
            jobs = pool_size(self.conf.jobs, self.app.parallel, cores())
            # "force" is a run of this build, from a fresh import of everything: a kept worker
            # holds what its modules read when it started.
            keep = self.conf.keep_worker if self.conf.execution.reuses else 0.0
            logger.verbose(f"autocast-demo: {'asking a kept' if keep else 'starting the'} worker "
                           f"({jobs} runs at a time)")
            # The config the demos set, and the backend whose compile the worker warms up.
            words = Words(config=self.conf.config, backend=self.conf.backend)
            self.pool = WorkerPool(jobs, keep=keep, words=words)
            self._say_not_kept()

    def _say_not_kept(self) -> None:
        """Once: why no kept worker serves this build, though one was asked for. The pool knows
        at its start, or when the kept one refused, ended or did not answer before serving."""
        if self.pool is not None and not self.said_not_kept:
            self.said_not_kept = said.not_kept(self.app, self.pool.not_kept)

    def close(self) -> None:
        if self.pool is not None:
            self.pool.close()
            self.pool = None

    def key(self, demo: Demo, codes: list[Code] | tuple[Code, ...], variant: Variant) -> str:
        return result_key(demo, codes, variant, str(self.app.confdir), self.variables)

    def set_key(self, demo: Demo, codes: list[Code] | tuple[Code, ...], variant: Variant) -> str:
        """The key of the result in a result set: without this machine's variables (a set is
        a record of what torch did where it was made, and names that place; it must be found
        on a machine whose environment differs, one without torch included)."""
        return result_key(demo, codes, variant, str(self.app.confdir), {})

    def needs_run(self, demo: Demo, state: DocState) -> bool:
        """Whether ``demo`` would reach the worker (no usable cache entry for some variant)."""
        if not self.conf.execution.reuses:
            return True
        return any(not isinstance(entry, Entry) or not self.current(entry)
                   or self.stamps.stale(entry) for entry in self._entries(demo, state))

    def files_changed(self, demo: Demo, state: DocState) -> bool:
        """Whether a file that one of ``demo``'s cached results stands for now has another
        content: Sphinx compares file times, and a copy that keeps an old time (``cp -p``) or
        a link moved to an older file would leave the page showing the old result."""
        return any(isinstance(entry, CorruptEntry)
                   or (isinstance(entry, Entry) and bool(entry.files) and bool(self.stamps.stale(entry)))
                   for entry in self._entries(demo, state))

    def _entries(self, demo: Demo, state: DocState) -> Iterator[Entry | CorruptEntry | None]:
        """Each variant's cache entry (None: none; the error, for one that cannot be read: it
        runs again); nothing in "never" mode, which runs nothing whatever the cache holds."""
        if not self.conf.execution.runs:
            return
        codes = state.codes_for(demo)
        for variant in demo.runs:
            try:
                yield self.cache.get(self.key(demo, codes, variant))
            except CorruptEntry as exc:
                yield exc

    def current(self, entry: Entry) -> bool:
        """Made by this Python and, as autocast_demo_cache_torch compares, this torch: the
        version the entry names for "exact" and "release", the label it was stored under for
        a label (never the stored key for the first two: the version is what it says)."""
        if entry.python_version != self.python:
            return False
        policy = self.conf.cache_torch or "exact"
        if policy in ("exact", "release"):
            return torch_key(entry.torch_version, policy) == self.torch_key
        return entry.torch_key == self.torch_key

    def plan(self, todo: list[tuple[Demo, DocState]]) -> list[Planned]:
        """Every (demo, variant) to answer, with its result when the cache (or the execution
        mode) answers it without a run."""
        planned = []
        for demo, state in todo:
            planned += self._planned(demo, state, demo.variants)
        # Probes after every demo's own values, so the pages' own results come first; and only
        # for a demo this build runs: one rendered from a result set is not checked here.
        for demo, state in todo:
            if self.conf.execution.runs and not self.envs.from_own(demo.docname, demo.ident):
                planned += self._planned(demo, state, demo.probes)
        return planned

    def _planned(self, demo: Demo, state: DocState, variants: tuple[Variant, ...]) -> list[Planned]:
        codes = tuple(state.codes_for(demo))
        planned = []
        for variant in variants:
            key, set_key = self.key(demo, codes, variant), self.set_key(demo, codes, variant)
            planned.append(Planned(demo, variant, codes, key,
                                   self.lookup(demo, variant, key, set_key), set_key))
        return planned

    def results(self, planned: list[Planned]) -> list[DemoResult]:
        """The planned variants, answered, gathered by demo (not yet checked)."""
        by_demo: dict[tuple[str, str], list[Planned]] = {}
        for item in planned:
            by_demo.setdefault((item.demo.docname, item.demo.ident), []).append(item)
        out = []
        for (docname, ident), both in by_demo.items():
            assert all(i.result is not None for i in both), "every planned variant is answered"
            items = [i for i in both if i.variant not in i.demo.probes]
            own = self.envs.answered_by(docname, ident)
            result = DemoResult(
                demo=items[0].demo, codes=items[0].codes,
                variants=tuple(i.result for i in items if i.result is not None),
                probes=tuple(i.result for i in both if i.result is not None and i not in items),
                # "never" mode may render results of another torch: name that one.
                torch_version=self.versions.get((docname, ident), self.torch),
                torch_equivalent=(docname, ident) in self.equivalent,
                environment=self.envs.here, others=self.envs.elsewhere(items),
                source="set" if own else "build",
                made=own.made if own else "", when=own.when if own else "",
            )
            out.append(self.envs.shown(result, not self.conf.execution.runs))
        return out

    def lookup(self, demo: Demo, variant: Variant, key: str, set_key: str) -> VariantResult | None:
        never = not self.conf.execution.runs
        entry = None
        stale = None
        if self.conf.execution.reuses:
            try:
                entry = self.cache.get(key)
                if entry is not None and (never or self.current(entry)):
                    # "never" runs nothing: there only a known change makes a result unusable
                    stale = None if never and entry.files is None else self.stamps.stale(entry)
                    if stale:
                        logger.verbose(f"{demo.location}: [{variant.name}] not from the cache: "
                                       f"{stale}")
                        entry = None
                # This environment's own result set is held to what the cache is: outside
                # "never" mode, an entry must say which files it stands for, and they must be
                # what they were (a set made elsewhere does not: the demo runs here). A run
                # under variables of its own (its cache key holds them) is served by the set
                # only when nothing runs.
                if (entry is None or not self.current(entry)) and (never or set_key == key):
                    entry = self.envs.own(demo, set_key, lambda e: never or (
                        self.current(e) and not self.stamps.stale(e))) or entry
            except CorruptEntry as exc:
                then = "not run (autocast_demo_execute is 'never')" if never else "running again"
                logger.warning(f"unreadable cache entry, {then}: {exc}", type=WARNING_TYPE,
                               subtype="cache", location=str(demo.location))
        if entry is not None and (never or self.current(entry)):
            self.stats.cached += 1
            self.files.setdefault((demo.docname, demo.ident), set()).update(
                self.stamps.resolve(stamp.path) for stamp in entry.files or ())
            if entry.torch_version != self.torch:
                self.versions[demo.docname, demo.ident] = entry.torch_version
                if self.current(entry):
                    self.equivalent.add((demo.docname, demo.ident))
            return VariantResult(variant, entry.verdict, entry.compiled, entry.eager, cached=True)
        if never and self.envs.own_set is not None:  # a gap in this environment's result sets
            return self.envs.gap(self.envs.here.label, demo, variant)
        if never:
            why = f"its cached result is stale: {stale}" if stale else "the cache has no result for it"
            return skipped(variant, f"not run: autocast_demo_execute is 'never' and {why}",
                           why="stale" if stale else "never")
        self.check_storage()  # before the first run, not after the last
        return None

    def check_storage(self) -> None:
        """Say once, before anything runs, that results cannot be stored (the build goes on)."""
        if self.storing is None:
            problem = self.cache.unwritable()
            self.storing = problem is None
            if problem is not None:
                self.cannot_store(problem)

    def cannot_store(self, problem: str) -> None:
        logger.warning(
            f"autocast-demo: cannot store results in the cache directory {self.cache.root} "
            f"({problem}): the demos run and render but are not kept, so the next build runs "
            "them again; set autocast_demo_cache_dir to a directory this build can write",
            type=WARNING_TYPE, subtype="cache",
            location=str(conf_line(str(self.app.confdir), "autocast_demo_cache_dir")))

    def run(self, planned: list[Planned]) -> Iterator[Ran]:
        """Run what the cache did not answer; yield each variant once both its runs finished.

        A variant that cannot run (no worker, no CUDA) gets its result here and is not yielded.
        """
        pending = [item for item in planned if item.result is None]
        if not pending:
            return
        try:
            self.start()
            if self.pool is None:
                raise EngineError(f"torch is {self.torch}",
                                  "no-torch" if self.torch == "not installed" else "")
            info = self.pool.ready()
            self.envs.here = replace(self.envs.here, device="cuda" if info.get("cuda") else "cpu")
        except EngineError as exc:
            self._say_not_kept()  # (its own worker, after all, failed too)
            self.refuse(pending, exc)
            return
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
        said_fresh = said.cannot_fork(self.app, info)  # (the warm worker may say so later)
        runs, owners = [], {}
        for index, item in enumerate(runnable):
            fresh = item.demo.device == "cuda"  # CUDA: a new interpreter per run, never forked
            for mode in ("compiled", "eager"):
                run = Run(key=f"{index:06d}-{mode}", timeout=item.demo.timeout, fresh=fresh,
                          job=self.job(item.demo, item.codes, item.variant, mode))
                runs.append(run)
                owners[run.key] = (item, mode)
        start = time.perf_counter()
        def label(fin: Finished) -> str:
            item, mode = owners[fin.run.key]
            return f"{item.demo.docname}:{item.demo.lineno} [{item.variant.name}, {mode}]"

        finished = status_iterator(self.pool.run(runs), "running autocast demos... ", "purple",
                                   len(runs), self.app.verbosity, stringify_func=label)
        halves: dict[int, dict[str, Finished]] = {}
        try:
            for fin in finished:
                item, mode = owners[fin.run.key]
                pair = halves.setdefault(id(item), {})
                pair[mode] = fin
                self.count(fin, item)
                if len(pair) == 2:
                    yield Ran(item, pair["compiled"], pair["eager"])
        except EngineError as exc:  # the worker died: what has not finished cannot run
            left = [item for item in runnable if len(halves.get(id(item), ())) < 2]
            running = exc.running if isinstance(exc, WorkerDied) else []
            self.refuse(left, exc, [owners[key] for key in running if key in owners])
        self.stats.seconds += time.perf_counter() - start
        self.stats.kept = (self.pool.info or info).get("kept", {}).get("build", 0)
        self.stats.kept_ended = bool(self.stats.kept) and self.pool.kept_ended()
        self.store_failed()  # (the caller stored every yielded run before asking for more)
        self._say_not_kept()
        said.engine_speed(self.stats, self.pool.info or info, self.pool.warm.ready is not None)
        if not said_fresh:
            said.cannot_fork(self.app, self.pool.info or info)

    def count(self, fin: Finished, item: Planned) -> None:
        where = str(item.demo.location)
        self.stats.executed += 1
        self.stats.probes += item.variant in item.demo.probes
        self.stats.fresh += fin.fresh
        self.stats.copied_ahead += fin.prefaulted > 0
        self.stats.copied_bytes = max(self.stats.copied_bytes, fin.prefaulted)
        self.stats.eager_zygote += fin.zygote == "eager"
        self.stats.eager_early += fin.early
        self.stats.per_demo[where] = self.stats.per_demo.get(where, 0.0) + fin.record.seconds

    def refuse(self, items: list[Planned], exc: EngineError,
               running: Sequence[tuple[Planned, str]] = ()) -> None:
        """Say once that the worker failed, and mark ``items`` as not run for that reason.

        ``running``: what ran when it died, (variant, mode); the error is then said at the first
        of those, whose code may have killed it, instead of at conf.py.
        """
        error = str(exc.args[0]) if exc.args else "the worker failed"
        if running:
            what = ", ".join(f"{item.demo.docname}:{item.demo.lineno} [{item.variant.name}, {mode}]"
                             for item, mode in running)
            log = exc.log if isinstance(exc, WorkerDied) else ""
            error = f"{exc.what if isinstance(exc, WorkerDied) else error} while running {what}"
            message = (f"autocast-demo: {error}; {len(items)} value(s) of this build's demos were "
                       "not run. A snippet must not kill or signal the process that started it "
                       "(os.getppid()); if this one does not, the worker's log says why"
                       + (f":\n{log}" if log else ""))
            location = running[0][0].demo.location
        else:
            message, location = said.engine_problem(error, exc.fault, str(self.app.confdir),
                                               self.conf.config)
        logger.error(message, type=WARNING_TYPE, subtype="engine", location=str(location))
        reason = (("not run: " if running else ENGINE_NOT_RUN) + error).splitlines()[0]
        for item in items:
            item.result = skipped(item.variant, reason, status="refused",
                                  why="died" if running else "engine")

    def store(self, ran: Ran) -> None:
        """Keep a compared result for the next build, with the writer's files its runs
        imported. A failure of the page's own values is not kept: the page says it, and it runs
        again once the writer acts. A probe's is (its key holds the timeout): shown nowhere, it
        would cost its timeout at every read of the page."""
        item, result = ran.item, ran.item.result
        demo = (item.demo.docname, item.demo.ident)
        files = {p for p in (*(ran.compiled.imports or ()), *(ran.eager.imports or ()))
                 if self.stamps.comparable(p)}
        self.files.setdefault(demo, set()).update(files)
        known = None not in (ran.compiled.imports, ran.eager.imports)
        probe = item.variant in item.demo.probes
        if not known and not (probe and result is not None and result.verdict.outcome == "error"):
            self.untold.add(demo)
        if result is None or self.storing is False or (result.verdict.outcome == "error" and not probe):
            return
        if any("ImportError" in run.error.names for run in (result.compiled, result.eager)
               if run.error is not None):
            return  # (it may be a module that is not there yet: nothing to stamp for it)
        if not known and probe and result.verdict.outcome == "error":
            self.failed_probes.append(ran)  # (a run stopped or killed cannot say its files)
            return
        self._put(ran, self.stamps.stamp(files if known else None, str(item.demo.location)))

    def store_failed(self) -> None:
        """Keep the failed probes of :meth:`store`, once every run is stored: their demo's
        other runs, of the same code, had what they had; none where one of those could not tell."""
        for ran in self.failed_probes:
            demo = (ran.item.demo.docname, ran.item.demo.ident)
            if demo not in self.untold and self.storing is not False:
                self._put(ran, self.stamps.stamp(self.files.get(demo, set()),
                                                 str(ran.item.demo.location)))
        self.failed_probes = []

    def _put(self, ran: Ran, stamps: tuple[FileStamp, ...] | None) -> None:
        result = ran.item.result
        assert result is not None
        try:
            self.cache.put(ran.item.key, Entry(self.torch, result.verdict, result.compiled,
                                               result.eager, python_version=self.python,
                                               torch_key=self.torch_key, files=stamps))
        except OSError as exc:  # e.g. the disk filled up during the build
            self.storing = False
            self.cannot_store(self.cache.why(exc))

    def job(self, demo: Demo, codes: tuple[Code, ...], variant: Variant, mode: Mode) -> Job:
        return {
            "setup": [c.text for c in codes[:-1]],
            "code": codes[-1].text,
            "mode": mode,
            "backend": demo.backend,
            "device": demo.device,
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
        }
