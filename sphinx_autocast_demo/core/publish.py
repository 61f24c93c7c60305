"""What a page or a log may publish of a run: one rule, one list of the build machine's places."""

from __future__ import annotations

import functools
import os
import re
import sysconfig
from typing import TYPE_CHECKING

from .text import printable

if TYPE_CHECKING:
    from collections.abc import Callable

    from sphinx.application import Sphinx


# A traceback frame line, as DemoResult.traceback() writes it.
_FRAME = re.compile(r'^(\s*File ")([^"\n]+)(", line \d+)', re.M)


def publish(text: str, app: Sphinx) -> str:
    """``text`` (a snippet's output, a message about it) as a reader or a log may see it.

    No terminal escapes or control bytes, and no absolute path of the build machine: files of
    the docs are named relative to the source directory (``File "index.rst"``, ``data.bin``, the
    source directory itself ``.``), Python's own as ``<site-packages>/...``. Sphinx's own
    locations (``/abs/index.rst:12: WARNING:``) stay as Sphinx prints them: they are not ours.
    """
    srcdir = os.path.abspath(app.srcdir)
    text = printable(text)
    text = _FRAME.sub(lambda m: m[1] + _relative(m[2], srcdir) + m[3], text)
    places = [(srcdir, "."), (os.path.abspath(app.outdir), "<outdir>"),
              (os.path.abspath(app.doctreedir), "<doctrees>"), *_python_places()]
    for path, name in sorted(places, key=lambda p: -len(p[0])):
        if len(path) > 1:  # never "/" itself
            text = _under(path).sub(_named(name), text)
    return text


def _named(name: str) -> Callable[[re.Match[str]], str]:
    """A place's name for a path; below the source directory, just the relative path."""
    def replace(match: re.Match[str]) -> str:
        return "" if match[1] and name == "." else name + match[1]
    return replace


def _relative(path: str, base: str) -> str:
    if not os.path.isabs(path):
        return path
    try:
        return os.path.relpath(path, base)
    except ValueError:  # another drive (Windows)
        return path


@functools.lru_cache(maxsize=16)
def _under(path: str) -> re.Pattern[str]:
    """``path`` itself or followed by a separator (which group 1 holds), not a longer name."""
    return re.compile(re.escape(path) + rf"({re.escape(os.sep)}|(?![\w.-]))")


def _python_places() -> list[tuple[str, str]]:
    paths = sysconfig.get_paths()
    return [(os.path.abspath(paths[k]), f"<{n}>") for k, n in
            (("purelib", "site-packages"), ("platlib", "site-packages"), ("stdlib", "stdlib"))
            if k in paths]
