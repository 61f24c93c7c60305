"""Result sets: checked results as portable data, stamped with the environment that made them.

``-b autocast-check`` writes one into ``<outdir>/results``; a build reads them from the
directories of ``autocast_demo_results``, to show the same demos as other environments (torch
releases, a GPU runner) checked them. A set is plain data, read like the cache (validated
field by field, never executed)::

    <set>/<env>/environment.json      the environment: label, torch, Python, device
    <set>/<env>/runs/<name>.json      one per build that wrote into it: shard, command, date, keys
    <set>/<env>/<key[:2]>/<key>.json  results, in the cache's format (engine/cache.py)

Every file name is unique to its content (``<env>`` is the environment's label, a key is a
hash of everything that decides a result, a run file is named by its shard and content), so
the sets of several shards and environments merge by copying the trees into one: ``cp -r``,
an artifact download, or :func:`merge`, which also checks what copying cannot.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import shutil
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import TypeVar

from ..core.config import parse_shard
from ..core.fromjson import from_json
from ..core.i18n import msg
from ..core.model import Environment
from ..core.publish import without_paths
from .cache import CorruptEntry, Entry, ResultCache
from .setfiles import ENVIRONMENT, RUNS, SetProblem, environment_dirs, run_files

#: Where ``-b autocast-check`` writes its set, under its output directory.
OUTPUT = "results"


@dataclass(frozen=True)
class RunInfo:
    """One build that wrote results into an environment's set."""

    shard: str  # ``1/2``; empty: every demo
    command: str  # how it was started (sphinx-build's arguments, without paths)
    date: str  # ``2026-11-30``, UTC
    keys: tuple[str, ...] = ()  # the results it wrote
    # What they hold (:func:`held`). The same check made again the same day with other results
    # under the same keys (another runner of the environment, whose CPU rounds otherwise) is
    # then another run file: a build's digest of a set reads its run files, not its entries
    # (setfiles.digest), and would keep showing the results it read before.
    held: str = ""

    @property
    def file(self) -> str:
        body = json.dumps(asdict(self), sort_keys=True).encode()
        shard = self.shard.replace("/", "-of-") if self.shard else "all"
        return f"{shard}-{hashlib.sha256(body).hexdigest()[:12]}.json"


_Record = TypeVar("_Record", Environment, RunInfo)


@dataclass
class EnvironmentSet:
    """One environment's results, from one or more directories (shards not yet merged)."""

    environment: Environment
    roots: list[Path]
    runs: list[RunInfo]

    @classmethod
    def expected(cls, label: str) -> EnvironmentSet:
        """The set of an environment that is expected and was not found: no results at all."""
        return cls(Environment.only_named(label), [], [])

    @property
    def found(self) -> bool:
        """Whether any directory of results was found for it (not only expected)."""
        return bool(self.roots)

    def get(self, key: str) -> Entry | None:
        """The entry for ``key`` in any of the directories; :class:`CorruptEntry` if damaged."""
        for root in self.roots:
            found = ResultCache(root).get(key)
            if found is not None:
                return found
        return None

    @property
    def when(self) -> str:
        """When the results were made, for a reader: ``on 2026-11-30``; empty: not known."""
        dates = sorted({run.date for run in self.runs})
        # (Words kept to be said in the page's language: core.i18n.Message.)
        if len(dates) == 1:
            return msg("on {date}", date=dates[-1])
        return msg("from {first} to {last}", first=dates[0], last=dates[-1]) if dates else ""

    @property
    def made(self) -> str:
        """How the results were made, for a maintainer: ``made on 2026-11-30 by tox -e x``."""
        # A set made before commands were stored without paths may still hold one (the
        # README's ``-D autocast_demo_cache_dir="$PWD/..."``): never onto a page.
        commands = sorted({without_paths(run.command) for run in self.runs if run.command})
        when = self.when
        if len(commands) == 1:
            by = commands[0]
            return msg("made {when} by {command}", when=when, command=by) if when else msg(
                "made by {command}", command=by)
        return msg("made {when}", when=when) if when else msg("made")

    def missing_shards(self) -> list[str]:
        """Shards of an ``i/n`` split of which no run is in the set (``2/2``)."""
        splits: dict[int, set[int]] = {}
        for run in self.runs:
            if run.shard:
                index, count = parse_shard(run.shard)
                splits.setdefault(count, set()).add(index)
        if any(not run.shard for run in self.runs):
            return []  # an unsharded run answered every demo
        return [f"{i}/{n}" for n, seen in sorted(splits.items()) for i in range(1, n + 1)
                if i not in seen]


def read_environment(directory: Path) -> tuple[Environment, list[RunInfo]]:
    try:
        data = json.loads((directory / ENVIRONMENT).read_text(encoding="utf-8"))
        environment = one_line_fields(from_json(Environment, data))
        runs = [one_line_fields(from_json(RunInfo, json.loads(path.read_text(encoding="utf-8"))))
                for path in run_files(directory)]
        for run in runs:
            if run.shard:
                parse_shard(run.shard)  # bounded, as this build's own
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise SetProblem(f"{directory}: not a readable result set ({exc})") from None
    if environment.ident != directory.name:
        raise SetProblem(f"{directory}: holds the environment {environment.label!r}, whose "
                         f"directory is named {environment.ident!r}")
    return environment, runs


def one_line_fields(record: _Record) -> _Record:
    """``record`` (an :class:`Environment` or a :class:`RunInfo`) if each of its texts is one
    line; :class:`ValueError` naming the field if not. A set comes from other machines (a
    downloaded artifact), and these texts are printed to the build's log: a line break there
    could start a line of the log with a workflow command (``::error``) of the set's making."""
    for name, value in asdict(record).items():
        texts = value if isinstance(value, (list, tuple)) else [value]
        if any(isinstance(text, str) and ("\n" in text or "\r" in text) for text in texts):
            raise ValueError(f"{name} is {value!r}, not one line")
    return record


def load(directories: list[Path]) -> dict[str, EnvironmentSet]:
    """Every environment in ``directories`` (each holds one directory per environment), by
    label; an environment found in several directories (shards) is read from all of them."""
    found: dict[str, EnvironmentSet] = {}
    for directory in directories:
        for child in environment_dirs(directory):
            environment, runs = read_environment(child)
            known = found.get(environment.label)
            if known is None:
                found[environment.label] = EnvironmentSet(environment, [child], runs)
            elif known.environment != environment:
                raise SetProblem(f"{child}: {environment.label!r} is {environment}, but "
                                 f"{known.roots[0]} says {known.environment}")
            else:
                known.roots.append(child)
                known.runs.extend(runs)
    return found


def write(directory: Path, environment: Environment, run: RunInfo,
          entries: dict[str, Entry]) -> Path:
    """Write ``entries`` as ``environment``'s results under ``directory``; returns its path."""
    root = directory / environment.ident
    path = root / ENVIRONMENT
    if path.is_file():
        existing, _ = read_environment(root)
        if existing != environment:
            raise SetProblem(f"{root}: already holds {existing}, not {environment}")
    (root / RUNS).mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(asdict(environment), indent=1) + "\n", encoding="utf-8")
    cache = ResultCache(root)
    for key, entry in entries.items():
        cache.put(key, entry)
    run = replace(run, keys=tuple(sorted(entries)), held=held(entries))
    (root / RUNS / run.file).write_text(json.dumps(asdict(run), indent=1) + "\n", encoding="utf-8")
    return root


def today() -> str:
    return datetime.datetime.now(datetime.UTC).date().isoformat()


def partition(weights: dict[str, float], count: int) -> dict[str, int]:
    """Each item (a demo) -> its shard, 1-based: the heaviest first, each to the lightest
    shard so far (ties: the lowest). Deterministic for the same items and weights, so every
    shard of a CI matrix computes the same split on its own.

    Only the first ``min(count, items)`` shards can get an item (one of them is always empty
    while another item is placed), so the cost follows the items, not ``count``."""
    import heapq

    loads = [(0.0, shard) for shard in range(min(count, len(weights)))]  # sorted: a heap
    out = {}
    for name in sorted(weights, key=lambda n: (-weights[n], n)):
        load, shard = heapq.heappop(loads)
        heapq.heappush(loads, (load + weights[name], shard))
        out[name] = shard + 1
    return out


def _plain(entry: Entry) -> Entry:
    """``entry`` with what differs from run to run of the same result (run times, pids) aside."""
    return replace(entry, compiled=replace(entry.compiled, seconds=0.0, pid=None),
                   eager=entry.eager and replace(entry.eager, seconds=0.0, pid=None))


def same_result(a: Entry, b: Entry) -> bool:
    """The same verdict and records, run times and pids aside."""
    return _plain(a) == _plain(b)


def held(entries: dict[str, Entry]) -> str:
    """A digest of what ``entries`` hold, run times and pids aside: the same results made again
    give the same one, and so the same run file."""
    data = {key: asdict(_plain(entry)) for key, entry in sorted(entries.items())}
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()


def merge(target: Path, sources: list[Path]) -> tuple[int, list[str]]:
    """Copy every environment of ``sources`` into ``target``; return the number of results
    written and the problems: two environments under one label, two different results for
    one key, shards of a split that no source holds. Entries are validated as they are read."""
    problems: list[str] = []
    written = 0
    try:
        sets = load(sources)
    except SetProblem as exc:
        return 0, [str(exc)]
    for label, found in sets.items():
        root = target / found.environment.ident
        if (root / ENVIRONMENT).is_file():
            existing, _ = read_environment(root)
            if existing != found.environment:
                problems.append(f"{root}: holds {existing}, the sources {found.environment}")
                continue
        out = ResultCache(root)
        entries: dict[str, Entry] = {}
        for source in found.roots:
            for path in sorted(source.glob("??/*.json")):
                key = path.stem
                if path.is_symlink() or path.parent.is_symlink():
                    problems.append(f"{label}: {path} is a symbolic link, not copied: a set's "
                                    "files are its own, never another file's")
                    continue
                try:
                    entry = ResultCache(source).get(key)
                    mine = out.get(key) if key not in entries else entries[key]
                except CorruptEntry as exc:
                    problems.append(f"{label}: {exc}")
                    continue
                if entry is None:
                    continue
                if mine is not None and not same_result(mine, entry):
                    problems.append(f"{label}: two different results for {key} "
                                    f"({mine.verdict.text} and {entry.verdict.text}); one is in {path}")
                    continue
                entries.setdefault(key, entry)
        (root / RUNS).mkdir(parents=True, exist_ok=True)
        (root / ENVIRONMENT).write_text(json.dumps(asdict(found.environment), indent=1) + "\n",
                                        encoding="utf-8")
        for key, entry in entries.items():
            out.put(key, entry)
        written += len(entries)
        for source in found.roots:
            for path in sorted((source / RUNS).glob("*.json")):
                if path.is_symlink() or path.parent.is_symlink():  # (as run_files leaves it out)
                    problems.append(f"{label}: {path} is a symbolic link, not copied: a set's "
                                    "files are its own, never another file's")
                elif not (root / RUNS / path.name).exists():
                    shutil.copyfile(path, root / RUNS / path.name)
        for shard in found.missing_shards():
            problems.append(f"{label}: no results of shard {shard} in any source")
    return written, problems
