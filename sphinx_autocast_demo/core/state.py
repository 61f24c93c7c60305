"""What the environment keeps between builds (:class:`State`: one attribute, one purge, one
merge), per document; what lives for one build only is :mod:`.build`'s."""

from __future__ import annotations

import pickle
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sphinx.errors import SphinxError

from .i18n import __

if TYPE_CHECKING:
    from collections.abc import Set

    from sphinx.environment import BuildEnvironment

    from .model import Code, Demo, DemoResult, Finding, Setup

ATTR = "autocast_demo"  # the environment's attribute: a State

#: A page's demos, setups, problems, results and titles: pickled apart from the rest and read
#: back when something first asks for one. An unchanged build asks for none of them, so it
#: unpickles no result and imports none of the model's types.
_BODY = ("demos", "setups", "problems", "results", "titles")
#: What deciding whether to read a page again asks instead (the properties of these names),
#: kept beside the body. A page Sphinx reads again is purged with its body never unpickled.
_INDEX = ("failed", "subtypes", "settled", "demoed")


@dataclass(frozen=True)
class FileStamp:
    """Something a run read beside its code (a file of the writer's, a variable of the
    environment...: ``plan/stamps.py``), and its content then; a cached result and a page's
    shown result keep the stamps of what they stand for."""

    # Relative to conf.py's directory: a moved checkout, or a second one sharing the cache,
    # compares its own files.
    path: str
    sha256: str  # plan.cache.MISSING: it could not be read, or the run may have read another


class UnreadableState(SphinxError):
    """Demos kept by a version whose types this one lacks: Sphinx says so, with no traceback."""

    category = "autocast-demo"


@dataclass
class DocState:
    """Everything the extension knows of one document; purged and merged as a whole."""

    demos: dict[str, Demo] = field(default_factory=dict)  # by ident, in document order
    setups: list[Setup] = field(default_factory=list)
    problems: list[Finding] = field(default_factory=list)  # the directives' own errors
    results: dict[str, DemoResult] = field(default_factory=dict)  # filled after reading
    summary: bool = False  # holds an ``autocast-demo-summary``
    titles: dict[str, str] = field(default_factory=dict)  # demo ident -> what a reader sees above it
    # demo ident -> what its results stand for beside its code (plan.stamps): the page is read
    # again when one is no longer what it was (Planner.inputs_changed)
    inputs: dict[str, tuple[FileStamp, ...]] = field(default_factory=dict)

    def __getstate__(self) -> dict[str, Any]:
        if "_body" in self.__dict__:  # never read back: kept as it came
            return dict(self.__dict__)
        body = pickle.dumps(tuple(getattr(self, name) for name in _BODY), pickle.HIGHEST_PROTOCOL)
        return {"summary": self.summary, "inputs": self.inputs, "_body": body,
                "_index": {name: getattr(self, name) for name in _INDEX}}

    def __setstate__(self, kept: dict[str, Any]) -> None:
        self.__dict__.update(kept)

    def __getattr__(self, name: str) -> Any:
        # Called only for what the instance lacks: a part of the body not read back yet.
        if name not in _BODY or "_body" not in self.__dict__:
            raise AttributeError(name)
        self._read_back()
        return self.__dict__[name]

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _BODY and "_body" in self.__dict__:
            self._read_back()  # (or reading back the rest would put the old value back)
        super().__setattr__(name, value)

    def _read_back(self) -> None:
        try:
            body = dict(zip(_BODY, pickle.loads(self.__dict__["_body"]), strict=True))
        except Exception as exc:  # a type gone or changed since the page was kept
            raise UnreadableState(__(
                "the environment keeps a page's demos in a form this version cannot read "
                "({error}): build once with sphinx-build -E to read every page again").format(
                    error=f"{type(exc).__name__}: {exc}")) from exc
        self.__dict__.update(body)
        del self.__dict__["_body"], self.__dict__["_index"]

    def _indexed(self, name: str) -> Any:
        """The index's ``name`` while the body is unread; None once it is read back."""
        return self.__dict__["_index"][name] if "_body" in self.__dict__ else None

    @property
    def failed(self) -> bool:
        """A directive error, or a finding that fails the build: read again to say it again."""
        if (kept := self._indexed("failed")) is not None:
            return bool(kept)
        return bool(self.problems) or any(
            f.failed for result in self.results.values() for f in result.findings
        )

    @property
    def subtypes(self) -> frozenset[str]:
        """The subtypes of its results' findings: the warnings a build would say again."""
        if (kept := self._indexed("subtypes")) is not None:
            return frozenset(kept)
        return frozenset(f.subtype for result in self.results.values() for f in result.findings)

    @property
    def settled(self) -> bool:
        """Nothing for a build to do: every demo has its result, and no directive failed."""
        if (kept := self._indexed("settled")) is not None:
            return bool(kept)
        return not self.problems and self.results.keys() >= self.demos.keys()

    @property
    def demoed(self) -> bool:
        """Whether the page has a demo."""
        if (kept := self._indexed("demoed")) is not None:
            return bool(kept)
        return bool(self.demos)

    def setups_for(self, demo: Demo) -> list[Setup]:
        return [s for s in self.setups if s.group is None or s.group == demo.group]

    def codes_for(self, demo: Demo) -> list[Code]:
        """What a run of ``demo`` executes: its setups, the earlier demos of its group where it
        continues them (:meth:`replayed`), then its own code (a cache key's code)."""
        first = [demo.global_setup] if demo.global_setup is not None else []
        return first + [s.code for s in self.setups_for(demo)] + self.replayed(demo) + [demo.code]

    def replayed(self, demo: Demo) -> list[Code]:
        """For a demo that ``:continues:``, the code of the page's demos of its group before
        it, in order, as a notebook's earlier cells ran: its run replays them from a clean
        start, so that each value is still checked alone."""
        if not demo.continues:
            return []
        earlier = []
        for other in self.demos.values():
            if other.ident == demo.ident:
                break
            if other.group == demo.group:
                earlier.append(other.code)
        return earlier


@dataclass
class State:
    """The extension's record in the build environment (pickled between builds)."""

    docs: dict[str, DocState] = field(default_factory=dict)
    # (extension, torch, Python) of the build that last checked: another one re-reads every
    # page with demos, so that no result of another torch passes for a checked one.
    fingerprint: tuple[str, ...] | None = None
    # conf.py's directory and this build's autocast_demo_global_setup, set at builder-inited:
    # a directive cannot reach the directory, and makes the code from both (a model type, so
    # not kept here: an unchanged build imports none).
    global_setup: tuple[str, str] = ("", "")


def state(env: BuildEnvironment) -> State:
    found = getattr(env, ATTR, None)
    if not isinstance(found, State):
        found = State()
        setattr(env, ATTR, found)
    return found


def all_docs(env: BuildEnvironment) -> dict[str, DocState]:
    return state(env).docs


def doc_state(env: BuildEnvironment, docname: str) -> DocState:
    return all_docs(env).setdefault(docname, DocState())


def purge(env: BuildEnvironment, docname: str) -> None:
    all_docs(env).pop(docname, None)


def merge(env: BuildEnvironment, docnames: Set[str], other: BuildEnvironment) -> None:
    mine, theirs = all_docs(env), all_docs(other)
    for docname in docnames:
        if docname in theirs:
            mine[docname] = theirs[docname]
