"""The extension's version and where its static files are: what every stage may name without
importing the package's entry point (``__init__`` imports the pipeline, which imports them)."""

from __future__ import annotations

from pathlib import Path

__version__ = "0.1.0"

STATIC = Path(__file__).parent.parent / "present" / "static"
