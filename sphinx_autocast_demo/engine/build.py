"""What lives for one build only (:class:`Build`, held on the application, never pickled):
its settings, the torch it checks with, its planner and runner, and what the build did. What
the environment keeps between builds is :mod:`.core.state`'s."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sphinx.application import Sphinx

    from ..core.config import Settings
    from ..core.model import DemoResult, Finding
    from ..plan.planned import Stats
    from ..plan.planner import Planner
    from .execute import Runner

BUILD = "_autocast_demo_build"  # the application's attribute: a Build


@dataclass
class Build:
    """What one build needs and must not pickle: its settings, the torch it checks with, its
    plan (cache, keys, result sets) and runner (worker processes), and what it did, for the
    report at its end."""

    settings: Settings
    torch: str  # the installed torch, read once: pages, reports and the cache all name it
    planner: Planner
    runner: Runner
    stats: Stats  # what it ran and what the cache answered (both count into it)
    edited: set[str] | None = None  # sources added or changed, known before reading
    results: list[DemoResult] = field(default_factory=list)  # checked in this build
    problems: list[Finding] = field(default_factory=list)  # directive errors of the docs
    check_failed: int = 0  # failed cases of the autocast-check builder
    # The demos this shard runs (autocast_demo_shard), as (docname, ident); None: every demo.
    mine: set[tuple[str, str]] | None = None


def build(app: Sphinx) -> Build:
    """This build's record (made at ``builder-inited`` by :mod:`.pipeline`)."""
    found: Build = getattr(app, BUILD)
    return found
