"""The plan: which (demo, variant) needs a run, what the cache and the result sets answer, keyed
how; and, once runs are compared, what the cache keeps. No process: the engine's
:class:`.execute.Runner` runs what this leaves unanswered."""

from __future__ import annotations

import os
import sys
from dataclasses import replace
from typing import TYPE_CHECKING

from sphinx.util import logging

from ..core import __version__
from ..core.conflines import conf_line
from ..core.i18n import __
from ..core.subtypes import ours
from .cache import INPUTS, CorruptEntry, Entry, ResultCache, cache_root
from .environments import Environments, NamedSets
from .keys import result_key, torch_key, torch_variables
from .planned import Planned
from .stamps import Stamps

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from sphinx.application import Sphinx

    from ..core.config import Settings
    from ..core.model import Code, Demo, DemoResult, Environment, Variant, VariantResult
    from ..core.state import DocState, FileStamp
    from .planned import Stats
    from .results import EnvironmentSet

logger = logging.getLogger(__name__)


class Planner:
    """This build's keys, cache and result sets: what runs, what is answered without a run,
    what is kept for the next build."""

    def __init__(self, app: Sphinx, conf: Settings, torch: str, stats: Stats,
                 sets: NamedSets | None = None, source: str = "") -> None:
        self.app = app
        self.conf = conf
        self.stats = stats
        # elsewhere: why the cache is not beside conf.py, said once before anything runs
        root, self.elsewhere = cache_root(conf.cache_dir, str(app.confdir), str(app.doctreedir))
        self.cache = ResultCache(root)
        self.storing: bool | None = None  # whether results can be stored; None: not known yet
        # The caller reads it from metadata, never from the worker: the cache, the
        # environment's fingerprint and the pages must all name the same version, and the
        # build must not import torch.
        self.torch = torch
        # An editable torch's files (keys.torch_source), which "exact" compares beside its version.
        self.source = source if (conf.cache_torch or "exact") == "exact" else ""
        self.torch_key = torch_key(torch, conf.cache_torch, self.source)
        self.python = sys.version.split()[0]  # platform.python_version()'s, without its import
        self.versions: dict[tuple[str, str], str] = {}  # demo -> torch of its cached results
        # demo -> the writer's module files its results depend on (pipeline.run makes Sphinx
        # read its page again when one changes, and then ``stale`` decides)
        self.files: dict[tuple[str, str], set[str]] = {}
        # demo -> what the results this build gives it stand for beside their code, stamped
        # (kept with the page: :meth:`inputs_changed`)
        self.inputs: dict[tuple[str, str], set[FileStamp]] = {}
        self.stamps = Stamps(str(app.confdir))
        self.variables = torch_variables(os.environ)
        self.equivalent: set[tuple[str, str]] = set()  # ... which cache_torch counts as ours
        # Probes whose runs failed without saying which files they had: stored once every run
        # of the build is, with the files of their demo's other runs (:meth:`_store_failed`).
        self.failed_probes: list[Planned] = []
        self.untold: set[tuple[str, str]] = set()  # demos with a run that could not tell its files
        # This build's environment, and the result sets of others (environments.py).
        self.envs = Environments(conf, torch, self.python, sets)

    @property
    def here(self) -> Environment:
        """This build's environment, as the pages and a result set written by it name it."""
        return self.envs.here

    def fingerprint(self) -> tuple[str, ...]:
        """What makes every page with a demo outdated when it changes."""
        # The cache re-runs a result of another torch or Python only if its page is read again;
        # pages show other environments' results as the sets held them when they were read, and
        # the set of this build's environment (its label) answers as the cache does.
        sets = self.envs.named.fingerprint() if self.envs.named else ()
        # torch's environment variables (TORCH_COMPILE_DISABLE...) change what every demo does.
        variables = [f"{name}={value}" for name, value in self.variables.items()]
        return (__version__, self.torch_key, self.python, *variables,
                self.envs.label, *sets)

    def key(self, demo: Demo, codes: Sequence[Code], variant: Variant) -> str:
        return result_key(demo, codes, variant, str(self.app.confdir), self.variables)

    def set_key(self, demo: Demo, codes: Sequence[Code], variant: Variant) -> str:
        """The key of the result in a result set: without this machine's variables."""
        return result_key(demo, codes, variant, str(self.app.confdir), {})

    def for_set(self, demo: Demo, codes: Sequence[Code], result: VariantResult,
                torch: str) -> tuple[str, Entry]:
        """A checked result as a result set holds it: its key there and its entry."""
        return self.set_key(demo, codes, result.variant), Entry(
            torch, result.verdict, result.compiled, result.eager, python_version=self.python,
            torch_key=self.torch_key)

    def mine(self, demos: list[tuple[Demo, DocState]]) -> set[tuple[str, str]]:
        """The demos this build runs (``autocast_demo_shard``), as (docname, ident)."""
        return self.envs.mine(demos, self.set_key)

    def needs_run(self, demo: Demo, state: DocState) -> bool:
        """Whether ``demo`` would reach the worker (no usable cache entry for some variant)."""
        if not self.conf.execution.reuses:
            return True
        return any(not isinstance(entry, Entry) or not self.current(entry)
                   or self.stamps.stale(entry) for entry in self._entries(demo, state))

    def inputs_changed(self, state: DocState) -> bool:
        """Whether something a page's shown results stand for (a file, a variable, a package)
        is no longer what it was, as the page's own stamps of them say."""
        # Sphinx compares file times: a copy that keeps an old time (cp -p), a variable or an
        # upgraded package would leave the page showing the old result. Not the cache's stamps:
        # another build sharing it may have stored newer results under the same keys since.
        if not self.conf.execution.runs:
            return False  # ("never" runs nothing: the page shows what it has)
        return any(self.stamps.changed(inputs) for inputs in state.inputs.values())

    def inputs_of(self, demo: Demo) -> tuple[FileStamp, ...]:
        """What the results this build gives ``demo`` stand for, as its page keeps them."""
        return tuple(sorted(self.inputs.get((demo.docname, demo.ident), ()),
                            key=lambda stamp: (stamp.path, stamp.sha256)))

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
        a label (never the stored key for the first two: the version is what it says; but for
        a torch run from its source tree, whose files only the stored key holds)."""
        if entry.python_version != self.python:
            return False
        policy = self.conf.cache_torch or "exact"
        if policy == "exact" and self.source:  # (only the stored key holds the files it ran)
            return entry.torch_version == self.torch and entry.torch_key == self.torch_key
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
        replayed = len(state.replayed(demo))
        planned = []
        for variant in variants:
            key, set_key = self.key(demo, codes, variant), self.set_key(demo, codes, variant)
            planned.append(Planned(demo, variant, codes, key,
                                   self.lookup(demo, variant, key, set_key), set_key, replayed))
        return planned

    def results(self, planned: list[Planned]) -> list[DemoResult]:
        """The planned variants, answered, gathered by demo (not yet checked)."""
        from ..core.model import DemoResult  # (here: an unchanged build makes no result)

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
        from ..core.model import VariantResult, skipped

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
                        logger.verbose(__("{demo}: [{value}] not from the cache: {why}").format(
                            demo=demo.location, value=variant.name, why=stale))
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
                then = (__("not run (autocast_demo_execute is 'never')") if never
                        else __("running again"))
                logger.warning(__("unreadable cache entry, {then}: {error}").format(
                    then=then, error=exc), **ours("cache"), location=str(demo.location))
        if entry is not None and (never or self.current(entry)):
            self.stats.cached += 1
            self.files.setdefault((demo.docname, demo.ident), set()).update(
                self.stamps.resolve(stamp.path) for stamp in entry.files or ())
            self.inputs.setdefault((demo.docname, demo.ident), set()).update(entry.files or ())
            if entry.torch_version != self.torch:
                self.versions[demo.docname, demo.ident] = entry.torch_version
                if self.current(entry):
                    self.equivalent.add((demo.docname, demo.ident))
            return VariantResult(variant, entry.verdict, entry.compiled, entry.eager, cached=True)
        if never and self.envs.own_set is not None:  # a gap in this environment's result sets
            return self.envs.gap(self.envs.label, demo, variant)
        if never:
            why = f"its cached result is stale: {stale}" if stale else "the cache has no result for it"
            return skipped(variant, f"not run: autocast_demo_execute is 'never' and {why}",
                           why="stale" if stale else "never")
        self.check_storage()  # before the first run, not after the last
        return None

    def check_storage(self) -> None:
        """Say once, before anything runs, that results cannot be stored (the build goes on)."""
        if self.storing is None:
            if self.elsewhere:
                # Not a warning: nothing is lost that the old default kept, and a -W build of a
                # read-only checkout that passed must still pass.
                logger.info(__(
                    "autocast-demo: results are kept in this build's doctree directory ({root}), "
                    "because {why}: a build with another output directory runs the demos again; "
                    "to share them, set autocast_demo_cache_dir to a directory every build can "
                    "write").format(root=self.cache.root, why=self.elsewhere))
            problem = self.cache.unwritable()
            self.storing = problem is None
            if problem is not None:
                self.cannot_store(problem)

    def cannot_store(self, problem: str) -> None:
        logger.warning(__(
            "autocast-demo: cannot store results in the cache directory {root} ({problem}): the "
            "demos run and render but are not kept, so the next build runs them again; set "
            "autocast_demo_cache_dir to a directory this build can write").format(
                root=self.cache.root, problem=problem),
            **ours("cache"), location=str(conf_line(str(self.app.confdir), "autocast_demo_cache_dir")))

    def store(self, item: Planned, imports: Sequence[Sequence[str] | None]) -> None:
        """Keep a compared result for the next build, with the writer's files its runs
        imported (``imports``: each run's; None where a run could not tell). A failure of the
        page's own values is not kept: the page says it, and it runs again once the writer
        acts. A probe's is (its key holds the timeout): shown nowhere, it would cost its
        timeout at every read of the page."""
        result = item.result
        demo = (item.demo.docname, item.demo.ident)
        files = {p for paths in imports for p in paths or () if self.stamps.comparable(p)}
        self.files.setdefault(demo, set()).update(files)
        known = None not in imports
        probe = item.variant in item.demo.probes
        if not known and not (probe and result is not None and result.verdict.outcome == "error"):
            self.untold.add(demo)
        if result is None or (result.verdict.outcome == "error" and not probe):
            return
        if any("ImportError" in run.error.names for run, _ in result.runs
               if run.error is not None):
            return  # (it may be a module that is not there yet: nothing to stamp for it)
        if not known and probe and result.verdict.outcome == "error":
            self.failed_probes.append(item)  # (a run stopped or killed cannot say its files)
            return
        self._keep(item, files if known else None)

    def _store_failed(self) -> None:
        """Keep the failed probes of :meth:`store`, once every run is stored: their demo's
        other runs, of the same code, had what they had; none where one of those could not tell."""
        for item in self.failed_probes:
            demo = (item.demo.docname, item.demo.ident)
            if demo not in self.untold:
                self._keep(item, self.files.get(demo, set()))
        self.failed_probes = []

    def after_runs(self, device: str) -> None:
        """Once every run is stored: the failed probes kept, the device the worker found (its
        word replaces the guess made without torch; "": no worker started), and the files
        that could not be stamped said."""
        self._store_failed()
        if device:
            self.envs.here = replace(self.envs.here, device=device)
        self.stamps.say()

    def _keep(self, item: Planned, files: set[str] | None) -> None:
        """Stamp what ``item``'s runs had (None: they could not tell), for its page and, where
        results can be stored, for the cache: a page whose result could not be stored is still
        read again when one of them changes."""
        stamps = self.stamps.stamp(files, str(item.demo.location))
        self.inputs.setdefault((item.demo.docname, item.demo.ident), set()).update(stamps or ())
        if self.storing is not False:
            self._put(item, stamps)

    def _put(self, item: Planned, stamps: tuple[FileStamp, ...] | None) -> None:
        result = item.result
        assert result is not None
        try:
            self.cache.put(item.key, Entry(self.torch, result.verdict, result.compiled,
                                           result.eager, python_version=self.python,
                                           torch_key=self.torch_key, files=stamps))
        except OSError as exc:  # e.g. the disk filled up during the build
            self.storing = False
            self.cannot_store(self.cache.why(exc))

    def dependencies(self) -> Iterator[tuple[str, str]]:
        """(docname, file) for each writer's file a page's results stand for, in order."""
        for (docname, _), files in self.files.items():
            for path in sorted(files):
                if not path.startswith(INPUTS):  # (no file: the stamps compare them)
                    yield docname, path

    def missing(self) -> tuple[dict[str, list[str]], dict[str, EnvironmentSet]]:
        """What the result sets lack (environment -> values), and every set, this one's too."""
        return self.envs.missing, self.envs.every_set()
