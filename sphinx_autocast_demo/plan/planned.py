"""What the planner plans and the build counts: one planned variant of a demo
(:class:`Planned`) and the build's run counts (:class:`Stats`), which the planner (cache hits)
and the engine's runner (runs) both add to, and the report reads."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..core.model import Code, Demo, Variant, VariantResult


@dataclass
class Planned:
    """One variant of one demo: its cache key and, once known, its result."""

    demo: Demo
    variant: Variant
    codes: tuple[Code, ...]  # the setups that run before it, then its own code
    key: str
    result: VariantResult | None = None  # from the cache, or why it does not run; else compared
    set_key: str = ""  # its key in a result set (Planner.set_key); "": the cache key
    replayed: int = 0  # of ``codes``, the earlier demos a :continues: demo runs after


@dataclass
class Stats:
    """What this build ran, served from the cache and how long it took, for the report."""

    executed: int = 0  # runs (one value, compiled or eager) that went to a worker
    probes: int = 0  # of those, runs of values a demo does not name (Demo.probes), never shown
    fresh: int = 0  # of those, runs in a new interpreter instead of a fork of the warm worker
    copied_ahead: int = 0  # of those, runs whose process had copied the worker's pages ahead
    copied_bytes: int = 0  # the most a run's process copied ahead
    eager_zygote: int = 0  # eager runs forked from the zygote made before the warm-up
    eager_early: int = 0  # ... of those, runs that ended before the warm-up did
    before_turn: int = 0  # runs sent before their turn, since a run of their snippet was compiling
    kept: int = 0  # 0: the build's own worker; n: the n-th build a kept worker served
    kept_ended: bool = False  # ... and it ended during the build: the next starts a new one
    cached: int = 0  # variants answered from the cache
    seconds: float = 0.0
    per_demo: dict[str, float] = field(default_factory=dict)  # location -> run seconds
