"""Per-document state in the build environment, so incremental and ``-j`` builds stay correct."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Set

    from sphinx.application import Sphinx
    from sphinx.environment import BuildEnvironment

    from .model import Demo, DemoResult, Finding, Setup

ATTR = "autocast_demo_docs"


@dataclass
class DocState:
    demos: dict[str, Demo] = field(default_factory=dict)  # by ident, in document order
    setups: list[Setup] = field(default_factory=list)
    problems: list[Finding] = field(default_factory=list)  # the directives' own errors
    results: dict[str, DemoResult] = field(default_factory=dict)  # filled after reading

    @property
    def failed(self) -> bool:
        return bool(self.problems) or any(
            f.failed for result in self.results.values() for f in result.findings
        )

    def setups_for(self, demo: Demo) -> list[Setup]:
        return [s for s in self.setups if s.group is None or s.group == demo.group]


def all_docs(env: BuildEnvironment) -> dict[str, DocState]:
    if not hasattr(env, ATTR):
        setattr(env, ATTR, {})
    docs: dict[str, DocState] = getattr(env, ATTR)
    return docs


def doc_state(env: BuildEnvironment, docname: str) -> DocState:
    return all_docs(env).setdefault(docname, DocState())


def purge(app: Sphinx, env: BuildEnvironment, docname: str) -> None:
    all_docs(env).pop(docname, None)


def merge(
    app: Sphinx, env: BuildEnvironment, docnames: Set[str], other: BuildEnvironment
) -> None:
    mine, theirs = all_docs(env), all_docs(other)
    for docname in docnames:
        if docname in theirs:
            mine[docname] = theirs[docname]
