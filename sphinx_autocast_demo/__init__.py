"""Sphinx extension: run torch.compile + autocast snippets under every backward_pass_autocast
value at build time, check them against eager, and fail the build when the docs drift.

The folders are the pipeline's stages, in the order a demo goes through them: core (the data
they share), read, plan, engine, judge, present, report, accept. Each imports only the stages
before it (an import-linter contract in pyproject.toml); pipeline.py wires them to Sphinx's
events, in order, and is the file to open first."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .core import STATIC, __version__

__all__ = ["STATIC", "__version__", "setup"]

if TYPE_CHECKING:
    from sphinx.application import Sphinx


def setup(app: Sphinx) -> dict[str, Any]:
    # The whole build's timeline is in pipeline.py.
    from .pipeline import setup

    return setup(app)

