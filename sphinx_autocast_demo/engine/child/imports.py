"""Which of the writer's files a run had: the modules of theirs in its process, and the files
of a module whose import failed (it is not in ``sys.modules``, but its edit must run the demo
again). The build stamps them (:class:`..stamps.Stamps`) so that a cached result stands only
for the files it was made with. Standard library only, and never the run's undoing: a run
whose files cannot be told says None, and its result is not served from the cache.

Not the writer's: Python's own, installed packages, torch and this extension (their versions
are in the key or the entry), and the modules torch generates into its caches (inductor's
kernels: a fresh CI runner has none of them, and must not run everything again for that).
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import traceback
from collections.abc import Iterable
from typing import Any

from ...plan.cache import DIST, ENV, LISTING, MODULE
from ...plan.keys import installed_places, places_of
from ..protocol import CODE_FILE

#: Set by :func:`remember_modules`: the modules the runs inherit (and the last of them), and
#: which are the writer's. A forked run must not look at every module: each one it touches is
#: a page of the zygote copied (~2,000 modules: 5.5 ms a run, measured).
_INHERITED: tuple[frozenset[str], str | None, frozenset[str]] = (frozenset(), None, frozenset())


def remember_modules() -> None:
    """In the worker, before it forks (see :data:`_INHERITED`): after its imports (for the eager
    zygote) and after its warm-up (a kept worker's sessions must not do it: each page touched
    would be copied into the session)."""
    global _INHERITED
    with contextlib.suppress(Exception):  # else each run looks at every module
        files = writers(module_file(m) for m in list(sys.modules.values()))
        _INHERITED = (frozenset(sys.modules), next(reversed(sys.modules), None), frozenset(files))


#: Files the run opened for reading (:func:`track_reads`), as it named them; those gone by its
#: end (a temporary file) are its own, not what its result stands for.
_READ: set[str] = set()
_NOT_READ_FROM = ("/proc/", "/dev/", "/sys/")


def track_reads() -> None:
    """From now on, remember every file this process opens for reading: a data file beside
    the page is as much what a result stands for as a module (an audit hook: it sees
    ``open()``, ``os.open()`` and what libraries open through them; it lasts as long as the
    run's process)."""
    # Known before the hook is: working them out opens files, which would call it.
    skip = (*_NOT_READ_FROM, *_not_writers())

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event in ("os.listdir", "os.scandir"):
            _listed(args[0] if args else None, skip)
            return
        if event != "open" or not args or not isinstance(args[0], str):
            return
        mode = args[1] if len(args) > 1 else None
        flags = args[2] if len(args) > 2 else 0
        if isinstance(mode, str):
            reading = not any(c in mode for c in "wax") or "+" in mode
        else:
            reading = isinstance(flags, int) and flags & os.O_ACCMODE != os.O_WRONLY
        path = os.path.abspath(args[0])
        # (a module's compiled copy is Python's, rewritten when it likes: its source counts)
        if reading and not path.startswith(skip) and not path.endswith(".pyc"):
            _READ.add(path)

    global _TRACKING
    if not _TRACKING:  # (a hook cannot be removed: one per process, inherited by its forks)
        _TRACKING = True
        sys.addaudithook(hook)
        _track_environ()


_TRACKING = False

#: What else a result stands for, as stamps the build keeps beside the files' (plan/stamps.py):
#: a variable the writer's code read, a directory it listed (as :data:`...plan.cache.ENV`...).
_INPUTS: set[str] = set()


def _by_writer(depth: int) -> bool:
    """Whether the call ``depth`` frames up came from the writer's code: the first frame
    outside Python's own library (``os.getenv``, ``glob``, ``pathlib``) is the page's."""
    frame = sys._getframe(depth + 1)
    stdlib = _stdlib()
    while frame is not None and (frame.f_code.co_filename.startswith(stdlib)
                                 or frame.f_code.co_filename.startswith("<frozen")):
        if "importlib" in frame.f_code.co_filename:  # the import system's own look-ups
            return False
        frame = frame.f_back  # type: ignore[assignment]
    if frame is None:
        return False
    filename = frame.f_code.co_filename
    return filename.startswith(CODE_FILE) or bool(writers([filename]))


@functools.cache
def _stdlib() -> tuple[str, ...]:
    """Python's own library (``stdlib``: in a virtual environment, ``platstdlib`` is the
    environment's ``lib``, whose site-packages holds torch)."""
    import sysconfig

    return (os.path.join(sysconfig.get_paths()["stdlib"], ""),)


def _listed(path: Any, skip: tuple[str, ...]) -> None:
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if path is not None and not isinstance(path, str):  # a descriptor: no name to stamp
        return
    directory = os.path.abspath(path or ".")
    if not directory.startswith(skip) and _by_writer(2):
        _INPUTS.add(LISTING + directory)


def _track_environ() -> None:
    """Note each variable of ``os.environ`` the writer's code reads (``os.environ[...]``,
    ``.get``, ``os.getenv``, ``in``): its value is as much what a result stands for as a file.
    torch's own reads are not noted: those that decide a result are in every key."""
    environ_class = type(os.environ)

    class Noting(environ_class):  # type: ignore[valid-type, misc]
        def __getitem__(self, key: Any) -> Any:
            if isinstance(key, str) and _by_writer(1):
                _INPUTS.add(ENV + key)
            return super().__getitem__(key)

    with contextlib.suppress(TypeError):  # (another layout: the variables go unnoted)
        os.environ.__class__ = Noting


def read_files() -> list[str]:
    """The files this process read (:func:`track_reads`) that are still there."""
    return [path for path in _READ if os.path.isfile(path)]


def writers_files(failure: BaseException | None = None,
                  namespace: dict[str, Any] | None = None) -> list[str] | None:
    """The writer's files this run had: its modules' (imported by the run, or by the worker,
    such as a config module beside the docs), those in ``failure``'s traceback (a module
    that raised while it was imported), and the files it read; then the variables and
    directory listings its code read and the installed packages it imported (``namespace``:
    the snippet's), as ``env:``, ``listing:`` and ``dist:`` names; None where that
    cannot be told."""
    try:
        names, last, files = _INHERITED
        added = _added(names, last)
        new = [module_file(sys.modules[name]) for name in added]
        found = files | writers([*new, *_traceback_files(failure), *read_files()])
        # Where each top-level module of the writer's was found: conf.py's sys.path may send
        # the next build elsewhere (another helper directory) with this file unchanged.
        found |= {MODULE + name for name, file in zip(added, new, strict=True)
                  if "." not in name and writers([file])}
        return sorted(found | _INPUTS | _distributions(namespace or {}))
    except Exception:  # a module object that refuses to be looked at: unknown, not a crash
        return None


def _distributions(namespace: dict[str, Any]) -> set[str]:
    """The installed packages whose modules the snippet's names hold (``import pkg``, ``from
    pkg import f``), as ``dist:`` names: their version and files decide what it ran. Not
    torch, nor this extension: the key holds their versions."""
    import types

    ours = ("torch", "__main__", __name__.partition(".")[0])
    tops = set()
    for value in namespace.values():
        module: Any
        if isinstance(value, types.ModuleType):
            module = value.__name__
        elif isinstance(value, type | types.FunctionType):
            module = getattr(value, "__module__", None)
        else:
            continue
        top = module.partition(".")[0] if isinstance(module, str) else ""
        place = module_file(sys.modules.get(top)) if top and top not in ours else None
        if isinstance(place, str) and not writers([place]) and not place.startswith(_stdlib()):
            tops.add(top)
    if not tops:
        return set()
    import importlib.metadata

    owners = importlib.metadata.packages_distributions()
    return {DIST + name for top in tops for name in owners.get(top, ())}


def _added(names: frozenset[str], last: str | None) -> list[str]:
    """The modules imported (or imported again) since :func:`remember_modules`. ``sys.modules``
    keeps the order they came in: they follow ``last``, and reading back to it touches only
    them. Where ``last`` itself was removed (or nothing was remembered), every name is read."""
    if last is not None and last in sys.modules:
        added: list[str] = []
        for name in reversed(sys.modules):
            if name == last:
                return added
            added.append(name)
    return [name for name in list(sys.modules) if name not in names]


def module_file(module: Any) -> Any:
    """``module.__file__`` without triggering a lazy module's import (``importlib.util.LazyLoader``
    loads it on the first attribute looked up): only what it holds already."""
    try:
        return object.__getattribute__(module, "__dict__").get("__file__")
    except (AttributeError, TypeError):  # not a module: anything can be put in sys.modules
        return None


def _traceback_files(failure: BaseException | None) -> list[str]:
    files, seen = [], set()
    while failure is not None and id(failure) not in seen:
        seen.add(id(failure))
        files += [frame.f_code.co_filename for frame, _ in traceback.walk_tb(failure.__traceback__)]
        if isinstance(failure, SyntaxError) and failure.filename:
            files.append(failure.filename)
        failure = failure.__cause__ or failure.__context__
    return files


def writers(paths: Iterable[Any]) -> set[str]:
    """Of ``paths``, the writer's files (see the module's docstring)."""
    prefixes = _not_writers()
    found = set()
    for path in paths:
        # (torch.ops' and torch.classes' are bare names; "<stdin>" and the like are no file)
        if (isinstance(path, str) and os.path.isabs(path) and not path.startswith(prefixes)
                and not os.path.realpath(path).startswith(prefixes)):
            found.add(path)
    return found


@functools.cache
def _not_writers() -> tuple[str, ...]:
    import torch

    # This extension's own package, whichever stage folder a module is in (the top package is
    # imported with any of its modules).
    package = os.path.dirname(sys.modules[__name__.partition(".")[0]].__file__ or "")
    # As written and with links resolved: resolving every module's path would cost ~2,000
    # lookups; only those outside the first are resolved.
    return (*installed_places(), *places_of([package, os.path.dirname(torch.__file__)]),
            *working_dirs())


@functools.cache
def working_dirs() -> tuple[str, ...]:
    """Every place inductor and triton keep their own working files (generated modules,
    kernels, locks, precompiled headers, their caches), each ending in a separator: where
    their variables point and their defaults too, as inductor writes its precompiled headers'
    locks under the temporary directory's default whatever ``TORCHINDUCTOR_CACHE_DIR`` says.
    None is the writer's, and a file there is named by what it holds: a fresh machine has none,
    and a rewritten one is the same code."""
    import tempfile

    dirs = [os.path.join(tempfile.gettempdir(), f"torchinductor_{_user()}"),
            os.environ.get("TORCHINDUCTOR_CACHE_DIR", ""),
            os.environ.get("TRITON_CACHE_DIR", ""), os.path.expanduser("~/.triton"),
            os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"),
                         "torch")]
    try:  # (a private module; cache_dir() would also set the variable and make the directory)
        from torch._inductor.runtime.cache_dir_utils import default_cache_dir

        dirs.append(default_cache_dir())
    except Exception:  # moved in another torch: the temporary directory's default stands
        pass
    return tuple({os.path.join(f(d), "") for d in dirs if d
                  for f in (os.path.abspath, os.path.realpath)})


def _user() -> str:
    import getpass

    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no name for this uid (a container)
        return f"uid_{os.getuid()}"
