"""Where in ``conf.py`` a setting is written, so that a message about it points at the line to fix.

Apart from the settings table: the messages of every stage point here, and reading conf.py as
text needs none of the table's typing.
"""

from __future__ import annotations

import functools
import os
import re
from typing import TYPE_CHECKING

from .config import PREFIX

if TYPE_CHECKING:  # (imported where used: a build that says nothing needs no model type)
    from .model import Code, Location


def conf_assignment(confdir: str, setting: str) -> Location | None:
    """Where conf.py assigns ``setting`` (a prefix such as ``autocast_demo_``: any of ours)."""
    name = re.escape(setting) + (r"\w*" if setting.endswith("_") else r"\b")
    return _first_line(confdir, re.compile(rf"^\s*{name}\s*="))


def conf_line(confdir: str, setting: str) -> Location:
    """The conf.py line to look at for ``setting``: its assignment, else the line that loads
    the extension (the setting may come from ``-D``), else the file's first line."""
    from .model import Location

    path = os.path.join(confdir, "conf.py")
    if not os.path.isfile(path):
        return Location(path)
    return (conf_assignment(confdir, setting)
            or _first_line(confdir, re.compile(r"^(?!\s*#).*sphinx_autocast_demo"))
            or Location(path, 1))


@functools.lru_cache(maxsize=8)
def global_setup_code(confdir: str, text: str) -> Code | None:
    """``autocast_demo_global_setup`` as code whose lines are conf.py's: each line of a string
    written in conf.py where it stands there, else (a ``-D`` value, a string built in conf.py)
    every line at the assignment."""
    if not text.strip():
        return None
    from .model import Code

    where = conf_line(confdir, PREFIX + "global_setup")
    lines = text.split("\n")
    try:
        with open(where.path, encoding="utf-8") as f:
            conf = f.read().split("\n")
    except (OSError, UnicodeDecodeError):
        conf = []
    start = where.line or 1
    written = conf[start - 1:start - 1 + len(lines)]
    same = len(written) == len(lines) and all(
        not line.strip() or line.strip() in there for line, there in zip(lines, written, strict=True))
    numbers = tuple(start + i if same else start for i in range(len(lines)))
    return Code(text=text, source=where.path, lines=numbers)


def _first_line(confdir: str, pattern: re.Pattern[str]) -> Location | None:
    from .model import Location

    path = os.path.join(confdir, "conf.py")
    try:
        with open(path, encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                if pattern.match(line):
                    return Location(path, number)
    except (OSError, UnicodeDecodeError):
        pass
    return None
