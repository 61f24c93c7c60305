"""Print the README's quick-start commands, one per line (used by .ci/run and the tests).

``python3 .ci/quickstart.py "## In CI"`` prints the commands of another section's first
```bash block instead.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def commands(readme: Path = README, heading: str = "## Quick start") -> list[str]:
    """The lines of the first ```bash block under ``heading`` (and before the next heading)."""
    text = readme.read_text(encoding="utf-8")
    if f"\n{heading}\n" not in text:
        raise SystemExit(f"README: no section {heading!r}")
    section = text.split(f"\n{heading}\n", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```bash\n(.*?)```", section, re.S)
    if block is None:
        raise SystemExit(f"README: no ```bash block under {heading!r}")
    return [line.strip() for line in block.group(1).splitlines() if line.strip()]


if __name__ == "__main__":
    print("\n".join(commands(README, *sys.argv[1:2])))
