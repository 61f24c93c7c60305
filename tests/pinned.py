"""Snapshots: text a test pins in a file beside it, so that a change of what a page shows is a
diff in review. ``AUTOCAST_DEMO_SNAPSHOTS=write pytest <test file>`` writes them again after an
intended change; read every changed file before committing it: a snapshot is what the page must
say, not what the code happens to say."""

from __future__ import annotations

import os
from pathlib import Path


def assert_pinned(path: Path, text: str) -> None:
    """``text`` is what ``path`` holds (written first where the variable says so)."""
    if os.environ.get("AUTOCAST_DEMO_SNAPSHOTS") == "write":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.is_file(), f"no snapshot {path}: write it (see tests/pinned.py)"
    assert text == path.read_text(encoding="utf-8"), f"{path.name} differs: diff it, see tests/pinned.py"
