"""This build's environment and the other environments' result sets, per demo, and the sets as a
build names them (:class:`NamedSets`: their digest at once, their records when first asked).

The planner (:mod:`.planner`) asks here: whether a result set of this very environment answers a value (like
the cache), what each other environment's set holds for a demo (its column in the page), what
a gap in a set is, and which share of the demos this build runs (``autocast_demo_shard``).
"""

from __future__ import annotations

import functools
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from sphinx.util import logging

from ..core.config import parse_shard
from ..core.i18n import __
from ..core.subtypes import ours
from ..core.text import for_log
from .cache import CorruptEntry
from .setfiles import SetProblem, digest

# The model's types and the result sets' module are imported where used: a build with no demo
# to plan (an unchanged one) needs only this environment's label and the sets' files.
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from ..core.config import Settings
    from ..core.model import Code, Demo, DemoResult, Environment, Variant, VariantResult
    from ..core.state import DocState
    from .cache import Entry
    from .planned import Planned
    from .results import EnvironmentSet

    KeyFn = Callable[[Demo, list[Code], Variant], str]  # Planner.set_key

logger = logging.getLogger(__name__)


def machine_device() -> str:
    """``cuda`` when the installed torch is a CUDA build and the machine has an NVIDIA device,
    without importing torch (the worker's own answer replaces it once it has started)."""
    import importlib.util

    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        return "cpu"
    lib = Path(next(iter(spec.submodule_search_locations))) / "lib"
    gpu = any(lib.glob("libtorch_cuda*")) and Path("/dev/nvidiactl").exists()
    return "cuda" if gpu else "cpu"


class Environments:
    """This build's environment (:attr:`here`), its own result set if one is read, and the
    others, by label; what the sets lack is gathered in :attr:`missing` for one warning each.
    The sets (:class:`NamedSets`; None: the build names none) are read when first asked for:
    an unchanged build asks for none, nor does :attr:`here`."""

    def __init__(self, conf: Settings, torch: str, python: str, sets: NamedSets | None) -> None:
        self.conf = conf
        self.torch, self.python = torch, python
        self.label = conf.environment or f"torch {torch}"  # :attr:`here`'s, as pages name it
        self.named = sets
        self.missing: dict[str, list[str]] = {}  # environment -> values it has no result for
        self.from_own_set: set[tuple[str, str]] = set()  # demos answered by the own set

    @functools.cached_property
    def _read(self) -> tuple[dict[str, EnvironmentSet], EnvironmentSet | None]:
        sets = dict(self.named.loaded) if self.named else {}
        own = sets.pop(self.label, None)
        for label in self.conf.environments:  # expected, with no result at all: every cell says so
            if label and label not in sets and label != self.label:
                from .results import EnvironmentSet

                sets[label] = EnvironmentSet.expected(label)
        return sets, own

    @property
    def sets(self) -> dict[str, EnvironmentSet]:
        """The other environments' sets, by label (an expected one without results too)."""
        return self._read[0]

    @property
    def own_set(self) -> EnvironmentSet | None:
        """This environment's own result set, if one is read."""
        return self._read[1]

    @functools.cached_property
    def here(self) -> Environment:
        """This build's environment (the planner sets the worker's device on it)."""
        from ..core.model import Environment

        return Environment(self.label, self.torch, self.python,
                           machine_device() if self.torch != "not installed" else "cpu")

    def every_set(self) -> dict[str, EnvironmentSet]:
        own = {self.label: self.own_set} if self.own_set is not None else {}
        return {**self.sets, **own}

    def own(self, demo: Demo, key: str, usable: Callable[[Entry], bool]) -> Entry | None:
        """This environment's result set's entry for ``key``, if it has a usable one."""
        found = self.own_set.get(key) if self.own_set is not None else None
        if found is None or not usable(found):
            return None
        self.from_own_set.add((demo.docname, demo.ident))
        return found

    def from_own(self, docname: str, ident: str) -> bool:
        """Whether this environment's own result set answered the demo's results."""
        return self.own_set is not None and (docname, ident) in self.from_own_set

    def answered_by(self, docname: str, ident: str) -> EnvironmentSet | None:
        """The own set, when it answered the demo's results."""
        return self.own_set if self.own_set is not None and self.from_own(docname, ident) else None

    def gap(self, label: str, demo: Demo, variant: Variant) -> VariantResult:
        """A value that ``label``'s sets have no result for: said once per environment."""
        from ..core.model import skipped

        self.missing.setdefault(label, []).append(f"{demo.location} [{variant.name}]")
        return skipped(variant, f"no result from {label}", why="missing")

    def elsewhere(self, items: list[Planned]) -> tuple[DemoResult, ...]:
        """The demo of ``items`` as each other environment of the result sets checked it; a
        value without a result there is "not run" (and the environment is named once, in
        :attr:`missing`)."""
        from ..core.model import DemoResult, VariantResult

        out = []
        for label, found in self.sets.items():
            variants = []
            for item in items:
                try:
                    entry = found.get(item.set_key or item.key)
                except CorruptEntry as exc:
                    logger.warning(for_log(__("unreadable result in the set of {label}: {error}").format(
                                       label=repr(label), error=exc)),
                                   **ours("results"),
                                   location=str(item.demo.location))
                    entry = None
                if entry is None:
                    variants.append(self.gap(label, item.demo, item.variant))
                else:
                    variants.append(VariantResult(item.variant, entry.verdict, entry.compiled,
                                                  entry.eager, cached=True))
            out.append(DemoResult(demo=items[0].demo, codes=items[0].codes,
                                  variants=tuple(variants), torch_version=found.environment.torch,
                                  environment=found.environment,
                                  source="set" if found.found else "missing", made=found.made,
                                  when=found.when))
        return tuple(out)

    def shown(self, result: DemoResult, never: bool) -> DemoResult:
        """A build that runs nothing and has no result of its own (execution off, nothing
        cached: a host without torch rendering the sets of others) shows the first other
        environment with results in its place, not a column of "not run"."""
        if not never or any(vr.compiled.not_run != "never" for vr in result.variants):
            return result
        for index, other in enumerate(result.others):
            if any(not vr.compiled.not_run for vr in other.variants):
                rest = result.others[:index] + result.others[index + 1:]
                return replace(other, others=rest)
        return result

    def mine(self, demos: list[tuple[Demo, DocState]], key: KeyFn) -> set[tuple[str, str]]:
        """The demos this build runs under ``autocast_demo_shard`` (all without one): the
        same split in every shard, balanced by run times the result sets hold."""
        names = {(d.docname, d.ident): (d, s) for d, s in demos}
        if not self.conf.shard:
            return set(names)
        index, count = parse_shard(self.conf.shard)
        weights = {f"{docname}#{ident}": self.known_seconds(demo, state, key)
                   for (docname, ident), (demo, state) in names.items()}
        known = [w for w in weights.values() if w is not None]
        default = sum(known) / len(known) if known else 1.0
        from .results import partition

        split = partition({n: default if w is None else w for n, w in weights.items()}, count)
        return {name for name in names if split[f"{name[0]}#{name[1]}"] == index}

    def known_seconds(self, demo: Demo, state: DocState, key: KeyFn) -> float | None:
        """The demo's run time in any environment of the result sets, if they hold it."""
        codes = state.codes_for(demo)
        sets = [s for s in (self.own_set, *self.sets.values()) if s is not None]
        total, seen = 0.0, False
        for variant in demo.variants:
            made = key(demo, codes, variant)
            for found in sets:
                try:
                    entry = found.get(made)
                except CorruptEntry:
                    entry = None
                if entry is not None:
                    total += entry.compiled.seconds + (entry.eager.seconds if entry.eager else 0.0)
                    seen = True
                    break
        return total if seen else None


class NamedSets:
    """The sets of ``directories``: their digest at once, their records when first asked.

    ``said`` is told each problem (a located warning, once); a set that cannot be read leaves
    the build with none (its pages show the build's own results), and says so in its
    fingerprint, so that the next build, unchanged as it may be, reads the pages again and
    says it again."""

    def __init__(self, directories: Sequence[Path], said: Callable[[SetProblem], None]) -> None:
        self.directories = list(directories)
        self.said = said
        self.unreadable = False
        try:
            self.digest = digest(self.directories)
        except SetProblem as exc:
            self._failed(exc)
            self.digest = ""

    def _failed(self, exc: SetProblem) -> None:
        self.said(exc)
        self.unreadable = True

    @functools.cached_property
    def loaded(self) -> dict[str, EnvironmentSet]:
        """Every environment of the sets, by label (:func:`.results.load`)."""
        if self.unreadable:
            return {}
        from .results import load

        try:
            return load(self.directories)
        except SetProblem as exc:
            self._failed(exc)
            return {}

    def fingerprint(self) -> tuple[str, ...]:
        return (self.digest, "unreadable") if self.unreadable else (self.digest,)
