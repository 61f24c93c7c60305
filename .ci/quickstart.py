"""Print the README's quick-start commands, one per line (used by .ci/run and a test)."""

from __future__ import annotations

import re
import sys
from pathlib import Path


def commands(readme: Path) -> list[str]:
    text = readme.read_text(encoding="utf-8")
    section = text.split("## Quick start", 1)[1]
    block = re.search(r"```bash\n(.*?)```", section, re.S)
    if block is None:
        raise SystemExit("README: no ```bash block under '## Quick start'")
    return [line.strip() for line in block.group(1).splitlines() if line.strip()]


if __name__ == "__main__":
    print("\n".join(commands(Path(__file__).resolve().parent.parent / "README.md")))
    sys.exit(0)
