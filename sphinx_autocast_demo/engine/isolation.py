"""The isolation contract: what a run may assume, and the build's words that set it up.

What every run (one demo under one value, compiled or eager) may assume:

- **A process of its own.** A child forked from a zygote that has imported torch and warmed up
  (:mod:`.zygote`; the eager zygote for eager runs before the warm-up ends), or, for CUDA and
  where a fork is unsafe (threads left after the warm-up), a fresh interpreter
  (``python -m sphinx_autocast_demo.engine.child.worker --job FILE``). No run sees another's memory:
  every fork is from the same untouched zygote, also in a kept worker's session.
- **Its own scratch directory** as the current directory (:func:`.job.run_and_write`), never the
  docs' sources; its page's files are found through ``__file__`` (the page's path).
- **sys.path** as the build's Python has it, with nothing of the build's (Sphinx is not
  imported in the worker); ``sys.argv`` is the worker's, for every kind of worker alike.
- **The user's environment**: the build's, with the thread-pool sizes the worker imported with
  (:data:`SINGLE_THREADED`, all 1) given back (:func:`restore_user_environment`) and none of
  the build's words to the worker (:class:`WorkerSettings`: taken before anything forks). A kept
  worker's session takes its build's whole environment and directory.
- **Reset per run**: the signals the worker handles (``zygote.RESET_SIGNALS``) at their
  defaults, torch's and Python's seeds (``job.reseed``), the varied config's value, and the
  compile entry points (patched for the eager run); grad and autocast modes a run leaves open
  are closed, and said (``job._close_modes``).

The build's words to its worker travel as environment variables (the worker is a new
interpreter, and a kept worker's session gets its build's environment over a socket): this
module is their one declaration, :func:`to_env` their one writer and :func:`take` their one
reader. Standard library only: the worker imports it before torch.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import MutableMapping


#: Each word's environment variable.
NAMES = {
    "config": "AUTOCAST_DEMO_CONFIG",
    "backend": "AUTOCAST_DEMO_BACKEND",
    "user_env": "AUTOCAST_DEMO_USER_ENV",
    "eager_fds": "AUTOCAST_DEMO_EAGER_FDS",
    "idle_core": "AUTOCAST_DEMO_COPY_AHEAD",
    "kept": "AUTOCAST_DEMO_KEPT",
}


@dataclass(frozen=True)
class WorkerSettings:
    """The build's words to its worker (absent from the environment: the default)."""

    #: Dotted path of the config the demos set: the worker checks it exists before its warm-up.
    config: str = "torch._functorch.config.backward_pass_autocast"
    #: ``autocast_demo_backend``, whose compile the warm-up makes warm.
    backend: str = "inductor"
    #: The user's values of :data:`SINGLE_THREADED` (None: unset), for the runs.
    user_env: dict[str, str | None] | None = None
    #: The eager zygote's pipes (its runs in, its events out), given to the worker's process.
    eager_fds: tuple[int, int] | None = None
    #: The pool found a core that would idle: waiting children may copy ahead (``copy_ahead``).
    idle_core: bool = False
    #: A kept worker's socket and idle seconds (see :mod:`.kept`).
    kept: tuple[str, float] | None = None


_DEFAULTS = WorkerSettings()


def to_env(words: WorkerSettings) -> dict[str, str]:
    """The environment variables that say ``words`` (a default is left out)."""
    out = {}
    for f in fields(WorkerSettings):
        value = getattr(words, f.name)
        if value == getattr(_DEFAULTS, f.name):
            continue
        if isinstance(value, bool):
            out[NAMES[f.name]] = "1" if value else "0"
        elif f.name == "eager_fds":
            out[NAMES[f.name]] = ",".join(map(str, value))
        elif isinstance(value, str):
            out[NAMES[f.name]] = value
        else:
            out[NAMES[f.name]] = json.dumps(value)
    return out


def take(environ: MutableMapping[str, str]) -> WorkerSettings:
    """The words in ``environ``, removed from it: they are the worker's, not the runs'."""
    raw = {name: environ.pop(variable, None) for name, variable in NAMES.items()}
    kept = json.loads(raw["kept"]) if raw["kept"] else None
    fds = raw["eager_fds"].split(",") if raw["eager_fds"] else None
    return WorkerSettings(
        config=raw["config"] or _DEFAULTS.config,
        backend=raw["backend"] or _DEFAULTS.backend,
        user_env=json.loads(raw["user_env"]) if raw["user_env"] else None,
        eager_fds=(int(fds[0]), int(fds[1])) if fds else None,
        idle_core=raw["idle_core"] == "1",
        kept=(str(kept[0]), float(kept[1])) if kept else None,
    )


def restore_user_environment(user_env: dict[str, str | None] | None) -> None:
    """Give the runs the user's own environment back (see :data:`SINGLE_THREADED`)."""
    for name, value in (user_env or {}).items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
