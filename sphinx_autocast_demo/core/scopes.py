"""Scoped records: ``off[torch>=2.16]: matches`` holds only where its scope does.

A scope is version specifiers of torch's release and/or devices; an environment (a build, or
a result set) falls in it or not. Parsed without importing torch, with ``packaging`` (which
Sphinx itself requires).

Which record applies is decided here, for every reader of the records (the check, the page,
accept mode): a scoped record over an unscoped one, a value's own over ``*``; two records of the
same rank that both apply and say different things are a conflict, never a silent first win.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from packaging.specifiers import SpecifierSet
    from packaging.version import Version


class Environment(Protocol):
    """What a scope is matched against (a :class:`.model.Environment`): its torch release and
    device. Said here so that the records' rules need nothing of the model's."""

    @property
    def torch(self) -> str: ...

    @property
    def device(self) -> str: ...

#: A scope item: ``torch`` and a version specifier (``torch>=2.15``), a further specifier of
#: the same (``<2.16``), or a device.
_SCOPE_ITEM = re.compile(r"^(?:torch\s*)?(==|!=|<=|>=|<|>|~=)\s*([\w.+*]+)$|^(cpu|cuda)$")


def split_scope(name: str) -> tuple[str, str]:
    """``off[torch>=2.15]`` -> (``off``, ``torch>=2.15``); ``off`` -> (``off``, ``""``)."""
    if name.endswith("]") and "[" in name:
        base, _, scope = name[:-1].partition("[")
        return base.strip(), scope.strip()
    return name, ""


def scope_parts(scope: str) -> tuple[str, tuple[str, ...]]:
    """A scope as (version specifiers, devices): ``torch>=2.15, cuda`` -> (``>=2.15``,
    (``cuda``,)). Several devices mean any of them: ``cpu, cuda`` is either.

    Raises :class:`ValueError` naming the item that is neither.
    """
    specs: list[str] = []
    devices: list[str] = []
    tight = re.sub(r"\s*(==|!=|<=|>=|<|>|~=)\s*", r"\1", scope)  # torch >= 2.15: torch>=2.15
    for item in filter(None, re.split(r"[,\s]+", tight)):
        match = _SCOPE_ITEM.match(item)
        if not match:
            raise ValueError(item)
        if match.group(3):
            if match.group(3) not in devices:
                devices.append(match.group(3))
        else:
            specs.append(match.group(1) + match.group(2))
    if specs:
        from packaging.specifiers import InvalidSpecifier, SpecifierSet

        try:
            SpecifierSet(",".join(specs))
        except InvalidSpecifier:
            raise ValueError(",".join(specs)) from None
    if not specs and not devices:
        raise ValueError(scope.strip())
    return ",".join(specs), tuple(devices)


def _version(text: str) -> Version | None:
    from packaging.version import InvalidVersion, Version

    try:
        return Version(text)
    except InvalidVersion:
        return None


def in_scope(scope: str, environment: Environment | None) -> bool:
    """Does ``environment`` (its torch release and device) fall in ``scope``?"""
    if environment is None:
        return False
    specs, devices = scope_parts(scope)
    if devices and environment.device not in devices:
        return False
    if not specs:
        return True
    from packaging.specifiers import SpecifierSet

    # The whole version, local part included: ``==2.13.0+cpu`` must match 2.13.0+cpu, and
    # ``==2.13.0`` still does (PEP 440 ignores a local part the specifier does not name).
    version = _version(environment.torch)
    return version is not None and SpecifierSet(specs, prereleases=True).contains(version)


def never(scope: str) -> bool:
    """Can no torch release fall in ``scope`` (``torch>=2.16,<2.15``)?

    True only when provably so: the specifiers' bounds, read as an interval of public versions,
    are empty. ``!=`` and wildcards are left out, which can only widen the interval, so a scope
    said to be empty is empty (``<=`` and ``>=`` compare public versions in PEP 440, ``<``
    and ``>`` exclude more, never less).
    """
    from packaging.specifiers import SpecifierSet

    specs, _ = scope_parts(scope)
    low: tuple[Version, bool] | None = None  # (bound, inclusive)
    high: tuple[Version, bool] | None = None
    for spec in SpecifierSet(specs):
        if spec.version.endswith(".*") or spec.operator in ("!=", "==="):
            continue
        version = _version(spec.version)
        if version is None:
            continue
        bound = (_version(version.public) or version, spec.operator in ("==", ">=", "<=", "~="))
        if spec.operator in ("==", ">=", ">", "~="):  # ~=2.13.1 is >=2.13.1 and more
            low = bound if low is None or (bound[0], not bound[1]) > (low[0], not low[1]) else low
        if spec.operator in ("==", "<=", "<"):
            high = bound if high is None or (bound[0], bound[1]) < (high[0], high[1]) else high
    if low is None or high is None:
        return False
    return low[0] > high[0] or (low[0] == high[0] and not (low[1] and high[1]))


def overlap(first: str, second: str) -> str | None:
    """An environment that provably falls in both scopes (``torch 2.13 on cpu``), else None.

    Proved by a witness: a release built from the specifiers' own versions (each, its
    neighbours, one step below and above) that ``packaging`` finds in both. None does not prove
    they are apart (a witness may be missed): the check of each environment catches the rest.
    """
    from packaging.specifiers import SpecifierSet

    (specs_a, devices_a), (specs_b, devices_b) = scope_parts(first), scope_parts(second)
    devices = ([d for d in devices_a if d in devices_b] if devices_a and devices_b
               else list(devices_a or devices_b))
    if (devices_a and devices_b) and not devices:
        return None
    on = f" on {devices[0]}" if devices else ""
    both = ",".join(s for s in (specs_a, specs_b) if s)
    if not both:
        return f"every torch{on}"
    wanted = SpecifierSet(both, prereleases=True)
    for candidate in _witnesses(SpecifierSet(both)):
        if wanted.contains(candidate):
            return f"torch {candidate}{on}"
    return None


def _witnesses(specs: SpecifierSet) -> list[Version]:
    """Releases near the versions the specifiers name, nicest first."""
    from packaging.version import Version

    found: list[Version] = []
    for spec in specs:
        version = _version(spec.version.removesuffix(".*"))
        if version is None:
            continue
        release = version.release
        last = max((i for i, part in enumerate(release) if part), default=0)
        steps = [(*release[:-1], release[-1] + 1), (*release, 1)]
        if release[last]:
            steps.append((*release[:last], release[last] - 1))
        found.append(version)
        found.extend(Version(".".join(map(str, step))) for step in steps)
    return found


def governing(expect: tuple[tuple[str, str], ...], variant: str,
              environment: Environment | None) -> tuple[str, str] | None:
    """The record (as written, its outcome) that applies to ``variant`` in ``environment``:
    a scoped one over an unscoped one, then the value's own over ``*``; of two of the same
    rank, the first (:func:`conflict` says when that choice matters)."""
    best, rank = None, -1
    for name, outcome in expect:
        if (found := _rank(name, variant, environment)) > rank:
            best, rank = (name, outcome), found
    return best


def conflict(expect: tuple[tuple[str, str], ...], variant: str,
             environment: Environment | None) -> tuple[tuple[str, str], tuple[str, str]] | None:
    """Two records of the top rank that both apply to ``variant`` in ``environment`` and
    record different outcomes (overlapping scopes that disagree), else None."""
    ranked = [(_rank(name, variant, environment), (name, outcome)) for name, outcome in expect]
    top = max((rank for rank, _ in ranked), default=-1)
    applying = [pair for rank, pair in ranked if rank == top >= 0]
    for pair in applying[1:]:
        if pair[1] != applying[0][1]:
            return applying[0], pair
    return None


def _rank(name: str, variant: str, environment: Environment | None) -> int:
    """How closely record ``name`` applies to ``variant`` here (-1: not at all)."""
    base, scope = split_scope(name)
    if base not in (variant, "*") or (scope and not in_scope(scope, environment)):
        return -1
    return 2 * bool(scope) + (base == variant)
