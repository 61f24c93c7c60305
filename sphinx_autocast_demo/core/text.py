"""A snippet's text made safe to print and to publish: no terminal escapes, no control bytes, bounded.

Whatever a snippet prints (or puts in an exception message) reaches the terminal, the HTML, the
LaTeX and the JUnit XML; an ANSI escape or a NUL there recolours a CI log or breaks a writer.
"""

from __future__ import annotations

import re

#: How much of a run's printed output is kept, so a snippet that floods stdout cannot fill the
#: page, the cache or the disk.
MAX_OUTPUT = 20_000

# CSI (colours, cursor moves), OSC (titles, links) and the other two-byte escapes.
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]")
# C0 and C1 controls but tab and newline; DEL.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """``text`` without escape sequences; other control characters shown as ``\\xNN``."""
    text = _ANSI.sub("", text.replace("\r\n", "\n"))
    text = re.sub(r"\r(?!\n)", "\n", text)  # a progress bar's carriage returns: one line each
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def bounded(text: str, limit: int = MAX_OUTPUT, cut: bool = False) -> str:
    """At most ``limit`` characters of ``text``, saying so when anything was left out
    (``cut``: some was left out before it reached us)."""
    if len(text) <= limit and not cut:
        return text
    return f"{text[:limit].rstrip()}\n[... output cut here ...]\n"


# A line that starts with ``::`` (after blanks) is a workflow command to GitHub Actions'
# runner (``::error``, ``::add-mask::``, ``::stop-commands::``), whatever printed it.
_WORKFLOW_COMMAND = re.compile(r"^([ \t]*)::", re.MULTILINE)


def for_log(text: str) -> str:
    """``text`` with no line a CI runner reads as a workflow command (``::`` -> ``\\::``)."""
    return _WORKFLOW_COMMAND.sub(r"\1\\::", text)


def one_line(text: str) -> str:
    """``text`` on one line, its line breaks shown as ``\\n``: for a name or a label."""
    return for_log(text.replace("\r", "\\r").replace("\n", "\\n"))


def one_spaced(text: str) -> str:
    """``text`` with each run of white space one space."""
    return " ".join(text.split())
