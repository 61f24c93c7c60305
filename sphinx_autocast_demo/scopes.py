"""Scoped records: ``off[torch>=2.16]: matches`` holds only where its scope does.

A scope is version specifiers of torch's release and/or a device; an environment (a build, or
a result set) falls in it or not. Parsed without importing torch, with ``packaging`` (which
Sphinx itself requires).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .model import Environment

#: A scope item: ``torch`` and a version specifier (``torch>=2.15``), a further specifier of
#: the same (``<2.16``), or a device.
_SCOPE_ITEM = re.compile(r"^(?:torch\s*)?(==|!=|<=|>=|<|>|~=)\s*([\w.+*]+)$|^(cpu|cuda)$")


def split_scope(name: str) -> tuple[str, str]:
    """``off[torch>=2.15]`` -> (``off``, ``torch>=2.15``); ``off`` -> (``off``, ``""``)."""
    if name.endswith("]") and "[" in name:
        base, _, scope = name[:-1].partition("[")
        return base.strip(), scope.strip()
    return name, ""


def scope_parts(scope: str) -> tuple[str, str]:
    """A scope as (version specifiers, device): ``torch>=2.15, cuda`` -> (``>=2.15``, ``cuda``).

    Raises :class:`ValueError` naming the item that is neither.
    """
    specs, device = [], ""
    tight = re.sub(r"\s*(==|!=|<=|>=|<|>|~=)\s*", r"\1", scope)  # torch >= 2.15: torch>=2.15
    for item in filter(None, re.split(r"[,\s]+", tight)):
        match = _SCOPE_ITEM.match(item)
        if not match:
            raise ValueError(item)
        if match.group(3):
            device = match.group(3)
        else:
            specs.append(match.group(1) + match.group(2))
    if specs:
        from packaging.specifiers import InvalidSpecifier, SpecifierSet

        try:
            SpecifierSet(",".join(specs))
        except InvalidSpecifier:
            raise ValueError(",".join(specs)) from None
    if not specs and not device:
        raise ValueError(scope.strip())
    return ",".join(specs), device


def in_scope(scope: str, environment: Environment | None) -> bool:
    """Does ``environment`` (its torch release and device) fall in ``scope``?"""
    if environment is None:
        return False
    specs, device = scope_parts(scope)
    if device and device != environment.device:
        return False
    if not specs:
        return True
    from packaging.specifiers import SpecifierSet
    from packaging.version import InvalidVersion, Version

    try:  # the release only: 2.15.0+cpu and 2.16.0a0+git1234 are 2.15.0 and 2.16.0a0
        version = Version(Version(environment.torch).public)
    except InvalidVersion:
        return False
    return SpecifierSet(specs, prereleases=True).contains(version)
