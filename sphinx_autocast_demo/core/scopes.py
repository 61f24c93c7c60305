"""Scoped records: ``off[torch>=2.16]: matches`` holds only where its scope does.

A scope is version specifiers of torch's release and/or devices; an environment (a build, or
a result set) falls in it or not. Parsed without importing torch, with ``packaging`` (which
Sphinx itself requires).

Which record applies is decided here, for every reader of the records (the check, the page,
accept mode): a scoped record over an unscoped one, a value's own over ``*``; two records of the
same rank that both apply and say different things are a conflict, never a silent first win.
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING, Generic, NamedTuple, Protocol, TypeVar

if TYPE_CHECKING:
    from collections.abc import Iterable

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


class Scope(NamedTuple):
    """Where a record holds: torch releases (version specifiers, in the order written; empty:
    every release) and devices (any of them; none: every device)."""

    specs: str  # ``>=2.14,<2.16``
    devices: tuple[str, ...]

    def __str__(self) -> str:
        """The one spelling the build keeps: ``torch>=2.14,<2.16 cuda``."""
        return " ".join(p for p in ("torch" + self.specs if self.specs else "", *self.devices) if p)

    @property
    def specifiers(self) -> SpecifierSet:
        return _specifiers(self.specs)

    def holds(self, environment: Environment | None) -> bool:
        """Does ``environment`` (its torch release and device) fall in the scope?"""
        if environment is None or (self.devices and environment.device not in self.devices):
            return False
        if not self.specs:
            return True
        # The whole version, local part included: ``==2.13.0+cpu`` must match 2.13.0+cpu, and
        # ``==2.13.0`` still does (PEP 440 ignores a local part the specifier does not name).
        version = _version(environment.torch)
        return version is not None and self.specifiers.contains(version, prereleases=True)

    @property
    def never(self) -> bool:
        """Can no torch release fall in the scope (``torch>=2.16,<2.15``)?

        True only when provably so: the specifiers' bounds, read as an interval of public
        versions, are empty. ``!=`` and wildcards are left out, which can only widen the
        interval, so a scope said to be empty is empty (``<=`` and ``>=`` compare public versions
        in PEP 440, ``<`` and ``>`` exclude more, never less).
        """
        low: tuple[Version, bool] | None = None  # (bound, inclusive)
        high: tuple[Version, bool] | None = None
        for spec in self.specifiers:
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

    def overlap(self, other: Scope) -> str | None:
        """An environment that provably falls in both scopes (``torch 2.13 on cpu``), else None.

        Proved by a witness: a release built from the specifiers' own versions (each, its
        neighbours, one step below and above) that ``packaging`` finds in both. None does not
        prove they are apart (a witness may be missed): the check of each environment catches
        the rest.
        """
        from packaging.specifiers import SpecifierSet

        devices = ([d for d in self.devices if d in other.devices] if self.devices and other.devices
                   else list(self.devices or other.devices))
        if (self.devices and other.devices) and not devices:
            return None
        on = f" on {devices[0]}" if devices else ""
        both = ",".join(s for s in (self.specs, other.specs) if s)
        if not both:
            return f"every torch{on}"
        wanted = SpecifierSet(both, prereleases=True)
        for candidate in _witnesses(SpecifierSet(both)):
            if wanted.contains(candidate):
                return f"torch {candidate}{on}"
        return None


C = TypeVar("C")  # what a record claims: a model.Claim, or printed text


class Record(NamedTuple, Generic[C]):
    """One record of ``:expect:`` (or ``:expect-output:``): its name as the build keeps it
    (``off[torch>=2.15 cuda]``) and what it says (a ``model.Claim``, or printed text). A plain pair, so
    that it pickles and compares as one; its value and scope are read from the name once
    (:func:`split_scope`, :func:`scope_parts`)."""

    name: str
    claim: C

    @property
    def value(self) -> str:
        """The value it is about, or ``*``."""
        return _read(self.name)[0]

    @property
    def scope(self) -> Scope | None:
        """Where it holds; None: everywhere."""
        return _read(self.name)[1]


def records(pairs: Iterable[tuple[str, C]]) -> tuple[Record[C], ...]:
    return tuple(Record(name, claim) for name, claim in pairs)


def scoped_name(value: str, scope: Scope | None) -> str:
    """A record's name as the build keeps it: ``off``, ``off[torch>=2.15 cuda]``."""
    return f"{value}[{scope}]" if scope is not None else value


def split_scope(name: str) -> tuple[str, str]:
    """``off[torch>=2.15]`` -> (``off``, ``torch>=2.15``); ``off`` -> (``off``, ``""``): the one
    place a record's name is split."""
    if name.endswith("]") and "[" in name:
        base, _, scope = name[:-1].partition("[")
        return base.strip(), scope.strip()
    return name, ""


@functools.lru_cache(maxsize=4096)
def _read(name: str) -> tuple[str, Scope | None]:
    base, text = split_scope(name)
    return base, scope_parts(text) if text else None


def scope_parts(scope: str) -> Scope:
    """A scope as written, typed: ``torch>=2.15, cuda`` -> (``>=2.15``, (``cuda``,)). Several
    devices mean any of them: ``cpu, cuda`` is either.

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
        from packaging.specifiers import InvalidSpecifier

        try:
            _specifiers(",".join(specs))
        except InvalidSpecifier:
            raise ValueError(",".join(specs)) from None
    if not specs and not devices:
        raise ValueError(scope.strip())
    return Scope(",".join(specs), tuple(devices))


@functools.lru_cache(maxsize=1024)
def _specifiers(specs: str) -> SpecifierSet:
    from packaging.specifiers import SpecifierSet

    return SpecifierSet(specs)


def _version(text: str) -> Version | None:
    from packaging.version import InvalidVersion, Version

    try:
        return Version(text)
    except InvalidVersion:
        return None


# The written forms, for a caller that holds a scope as text (a test, a conf value): each reads
# it with scope_parts and asks the typed Scope.
def in_scope(scope: str, environment: Environment | None) -> bool:
    """Does ``environment`` (its torch release and device) fall in ``scope``?"""
    return environment is not None and scope_parts(scope).holds(environment)


def never(scope: str) -> bool:
    """Can no torch release fall in ``scope``? (:attr:`Scope.never`)"""
    return scope_parts(scope).never


def overlap(first: str, second: str) -> str | None:
    """An environment that provably falls in both scopes, else None (:meth:`Scope.overlap`)."""
    return scope_parts(first).overlap(scope_parts(second))


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


def governing(expect: Iterable[tuple[str, C]], variant: str,
              environment: Environment | None) -> Record[C] | None:
    """The record that applies to ``variant`` in ``environment``: a scoped one over an unscoped
    one, then the value's own over ``*``; of two of the same rank, the first (:func:`conflict`
    says when that choice matters)."""
    best, rank = None, -1
    for record in records(expect):
        if (found := _rank(record, variant, environment)) > rank:
            best, rank = record, found
    return best


def conflict(expect: Iterable[tuple[str, C]], variant: str,
             environment: Environment | None) -> tuple[Record[C], Record[C]] | None:
    """Two records of the top rank that both apply to ``variant`` in ``environment`` and
    record different outcomes (overlapping scopes that disagree), else None."""
    ranked = [(_rank(record, variant, environment), record) for record in records(expect)]
    top = max((rank for rank, _ in ranked), default=-1)
    applying = [record for rank, record in ranked if rank == top >= 0]
    for record in applying[1:]:
        if record.claim != applying[0].claim:
            return applying[0], record
    return None


def _rank(record: Record[C], variant: str, environment: Environment | None) -> int:
    """How closely ``record`` applies to ``variant`` here (-1: not at all)."""
    scope = record.scope
    if record.value not in (variant, "*") or (scope is not None and not scope.holds(environment)):
        return -1
    return 2 * (scope is not None) + (record.value == variant)
