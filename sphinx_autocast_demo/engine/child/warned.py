"""How a run prints a warning: one line a warning, told from what the snippet printed.

Python prints a warning as ``file:line: Category: message`` and then its source line, indented;
torch's messages span lines of their own, indented or not. Read back as text, nothing tells
where such a warning ends and the snippet's next print begins, so a run never prints one that
way: :func:`show_warnings_on_one_line` has every warning printed as one line of its own shape
(:data:`.core.printed.WARNING_LINE`), which the comparison and ``:expect-output:`` fold into ``<Category>``.

Imported by the run's process (no Sphinx) and by the build (no torch).
"""

from __future__ import annotations

import contextlib
import logging
import re
import sys
import warnings
from typing import Any, TextIO


def warning_line(message: Warning | str, category: type[Warning], filename: str,
                 lineno: int) -> str:
    """``message`` as one line of :data:`.core.printed.WARNING_LINE`'s shape."""
    # A category not named ...Warning (rare) is said as its nearest base that is, so that it
    # is still told from a print; ``Warning`` ends every such line of bases.
    name = next(c.__name__ for c in category.__mro__ if c.__name__.endswith("Warning"))
    text = str(message).replace("\r\n", "\n").replace("\r", "\n").replace("\n", "\\n")
    place = re.sub(r"\s", "_", filename) or "?"
    return f"{name}: {text} [{place}:{lineno}]"


def _show(message: Warning | str, category: type[Warning], filename: str, lineno: int,
          file: TextIO | None = None, line: str | None = None) -> None:
    out = sys.stderr if file is None else file
    if out is None:  # (no stderr: Python prints nothing then, nor do we)
        return
    with contextlib.suppress(OSError, ValueError):  # closed: as Python's own, it never raises
        out.write(warning_line(message, category, filename, lineno) + "\n")


def show_warnings_on_one_line() -> None:
    """From now on, this process prints each warning as one :data:`.core.printed.WARNING_LINE`. A snippet
    that shows warnings its own way (``warnings.showwarning = ...``) still may."""
    shown: Any = _show
    warnings.showwarning = shown


def _one_line(record: logging.LogRecord) -> bool:
    """A log record whose message spans lines, as one line (its breaks shown as ``\\n``)."""
    with contextlib.suppress(Exception):  # (a message that cannot be formatted: as it is)
        message = record.getMessage()
        if "\n" in message:
            record.msg, record.args = message.replace("\n", "\\n"), None
    return True


def log_records_on_one_line() -> None:
    """From now on, torch's log records print as one line each (dynamo's recompile message is
    five): the comparison folds such a line, whose first words are torch's log prefix, into
    ``<log>``; its other lines would be compared as the snippet's."""
    loggers = [logging.getLogger(), *(logger for name, logger in
                                      logging.Logger.manager.loggerDict.items()
                                      if name.split(".")[0] == "torch"
                                      and isinstance(logger, logging.Logger))]
    for logger in loggers:
        for handler in logger.handlers:
            if _one_line not in handler.filters:
                handler.addFilter(_one_line)
