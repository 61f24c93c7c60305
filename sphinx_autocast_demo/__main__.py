"""``python -m sphinx_autocast_demo``: the ``sphinx-autocast-demo`` command, for an environment
whose scripts directory is not on ``PATH`` (the commands are in cli.py)."""

from __future__ import annotations

import sys

from .cli import main

__all__ = ["main"]

if __name__ == "__main__":
    sys.exit(main(prog="python -m sphinx_autocast_demo"))
