"""Sphinx extension: run torch.compile + autocast snippets under every backward_pass_autocast
value at build time, check them against eager, and fail the build when the docs drift."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .core.version import STATIC, __version__

__all__ = ["STATIC", "__version__", "setup"]

if TYPE_CHECKING:
    from sphinx.application import Sphinx


def setup(app: Sphinx) -> dict[str, Any]:
    # The whole build's timeline is in pipeline.py.
    from .pipeline import setup

    return setup(app)

