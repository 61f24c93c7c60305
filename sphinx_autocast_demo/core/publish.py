"""What a page, a log or a report may publish: one rule, one list of the build machine's places.

Every publisher names a path of the build machine through here: a run's text (:func:`publish`),
a command (:func:`without_paths`), a file a report points at (:func:`in_workspace`), a file
accept mode names (:func:`relative`); Python's own directories are :func:`python_places`.
"""

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
    text = _FRAME.sub(lambda m: m[1] + relative(m[2], srcdir) + m[3], text)
    places = [(srcdir, "."), (os.path.abspath(app.outdir), "<outdir>"),
              (os.path.abspath(app.doctreedir), "<doctrees>"), *python_places()]
    for path, name in sorted(places, key=lambda p: -len(p[0])):
        if len(path) > 1:  # never "/" itself
            text = _under(path).sub(_named(name), text)
    return text


def _named(name: str) -> Callable[[re.Match[str]], str]:
    """A place's name for a path; below the source directory, just the relative path."""
    def replace(match: re.Match[str]) -> str:
        return "" if match[1] and name == "." else name + match[1]
    return replace


def relative(path: str, base: str) -> str:
    """An absolute ``path`` relative to ``base`` (``../x`` when outside it); any other as it is."""
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


def python_places() -> list[tuple[str, str]]:
    """Python's own directories on the build machine and the name a page gives each."""
    paths = sysconfig.get_paths()
    return [(os.path.abspath(paths[k]), f"<{n}>") for k, n in
            (("purelib", "site-packages"), ("platlib", "site-packages"), ("stdlib", "stdlib"),
             ("platstdlib", "stdlib")) if k in paths]


def workspace() -> str:
    """Where a CI job's (GitHub's) or a person's files are: what reports name paths from."""
    return os.environ.get("GITHUB_WORKSPACE") or os.getcwd()


def inside(path: str, base: str) -> str | None:
    """An absolute ``path`` relative to ``base`` when it is below it; None otherwise."""
    rel = relative(path, base)
    return None if rel.startswith("..") or os.path.isabs(rel) else rel


def in_workspace(path: str) -> str:
    """``path`` relative to the :func:`workspace` when inside it, else as it is."""
    return inside(os.path.abspath(path), workspace()) or path


# An absolute path in a command: first, or after a blank, ``=``, a quote or ``,``.
_ABSOLUTE = re.compile(r"""(?:^|(?<=[\s=',"]))(?:/|[A-Za-z]:[\\/])[^\s'",]*""")


def without_paths(text: str, base: str | None = None) -> str:
    """``text`` (a command) with no absolute path of the machine it ran on: a path under
    ``base`` (the workspace) relative to it, any other one as ``<path>``. A result set is
    published with the pages that show it (``made ... by <command>``)."""
    def replace(match: re.Match[str]) -> str:
        path = match[0]
        return (base is not None and os.path.isabs(path) and inside(path, base)) or "<path>"
    return _ABSOLUTE.sub(replace, text)
