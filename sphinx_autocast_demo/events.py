"""The build's timeline: what happens before reading, after reading, and at the end."""

from __future__ import annotations

import platform
from typing import TYPE_CHECKING
from weakref import WeakKeyDictionary

from . import __version__
from .builder import runs_demos
from .config import settings
from .execute import Executor, installed_torch
from .report import summarize, warn, write_timings
from .state import all_docs
from .summary import summary_docs

if TYPE_CHECKING:
    from collections.abc import Sequence

    from sphinx.application import Sphinx
    from sphinx.environment import BuildEnvironment

    from .model import DemoResult, Finding

FINGERPRINT = "autocast_demo_fingerprint"

# One executor per running build (keyed by the app, so several apps in one test process and
# -j readers never share one); nothing here is pickled with the environment.
_executors: WeakKeyDictionary[Sphinx, Executor] = WeakKeyDictionary()
_checked: WeakKeyDictionary[Sphinx, tuple[list[DemoResult], list[Finding]]] = WeakKeyDictionary()
_edited: WeakKeyDictionary[Sphinx, set[str]] = WeakKeyDictionary()


def executor(app: Sphinx) -> Executor:
    if app not in _executors:
        _executors[app] = Executor(app, settings(app.config))
    return _executors[app]


def add_static_path(app: Sphinx) -> None:
    from . import STATIC

    if hasattr(app.config, "html_static_path"):
        app.config.html_static_path.append(str(STATIC))


def fingerprint() -> tuple[str, str, str]:
    # The cache re-runs a result of another torch or Python only if its page is read again.
    return (__version__, installed_torch(), platform.python_version())


def outdated(app: Sphinx, env: BuildEnvironment, added: set[str], changed: set[str],
             removed: set[str]) -> list[str]:
    """Re-read pages whose checks failed (so they fail again) and, after a torch upgrade, all."""
    docs = all_docs(env)
    # Remember which sources really changed: before_read() starts the worker early for them.
    _edited[app] = set(added) | set(changed)
    if getattr(env, FINGERPRINT, None) != fingerprint() or executor(app).conf.execute == "force":
        return [d for d, s in docs.items() if s.demos and d not in removed]
    return [d for d, s in docs.items()
            if d not in removed and (s.failed or any(f for r in s.results.values() for f in r.findings))]


def before_read(app: Sphinx, env: BuildEnvironment, docnames: list[str]) -> None:
    """Start the worker now if reading will need it, so torch imports while Sphinx reads.

    Re-read pages whose demos are all answered by the cache (a page re-read only to repeat its
    warnings) need no worker; an edited page needs one if its source mentions a demo. A page
    whose demos come from an included file is missed here and starts the worker after reading.
    """
    edited = _edited.pop(app, set(docnames))
    if not runs_demos(app.builder):
        return
    ex = executor(app)
    docs = all_docs(env)
    for docname in docnames:
        state = docs.get(docname)
        if docname in edited:
            needed = _mentions_demo(env, docname)
        else:
            needed = state is not None and any(ex.needs_run(demo, state) for demo in state.demos.values())
        if needed:
            ex.start()
            return


def _mentions_demo(env: BuildEnvironment, docname: str) -> bool:
    try:
        with open(env.doc2path(docname), "rb") as f:
            return b"autocast-demo" in f.read()
    except OSError:
        return True  # cannot tell: start early, the worse case is an unused worker


def execute_all(app: Sphinx, env: BuildEnvironment) -> Sequence[str]:
    """``env-updated``: run every demo that has no result yet, check, warn at its location."""
    setattr(env, FINGERPRINT, fingerprint())
    if not runs_demos(app.builder):  # gettext, linkcheck...: nothing of the docs' code runs
        _checked[app] = ([], [])
        return []
    docs = all_docs(env)
    todo = [(demo, state) for state in docs.values() for ident, demo in state.demos.items()
            if ident not in state.results]
    problems = [p for state in docs.values() for p in state.problems]
    results: list[DemoResult] = []
    if todo:
        results = executor(app).run(todo)
        for result in results:
            docs[result.demo.docname].results[result.demo.ident] = result
            for finding in result.findings:
                if finding.subtype != "engine":  # said once for the whole build already
                    warn(finding, app)
    executor(app).close()
    _checked[app] = (results, problems)
    # Summary pages show every demo's result: re-write them whenever any result is new.
    return sorted(summary_docs(env)) if results else []


def finish(app: Sphinx, exc: Exception | None) -> None:
    ex = _executors.pop(app, None)
    if ex is not None:
        ex.close()
    results, problems = _checked.pop(app, ([], []))
    if exc is not None or ex is None:
        return
    summarize(app, results, problems, ex.stats, ex.conf.fail_on_mismatch)
    if ex.conf.timing_report:
        write_timings(app, ex.stats)
