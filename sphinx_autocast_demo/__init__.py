"""Sphinx extension: run torch.compile + autocast snippets under every backward_pass_autocast
value at build time, check them against eager, and fail the build when the docs drift."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from sphinx.application import Sphinx


def setup(app: Sphinx) -> dict[str, Any]:
    # The whole build's timeline is in pipeline.py.
    from .pipeline import setup

    return setup(app)


STATIC = Path(__file__).parent / "static"
