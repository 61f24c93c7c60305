"""Shared helpers: real sphinx-build runs on the test roots, built once per module; and the
suite's layers (``pytest -m "not torch"``: the tests that need no torch, in seconds)."""

from __future__ import annotations

import ast
import functools
import importlib.metadata
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import uuid
from dataclasses import dataclass, field
from io import StringIO
from pathlib import Path
from types import ModuleType

import pytest
from bs4 import BeautifulSoup

pytest_plugins = ("sphinx.testing.fixtures",)

# The tests read Sphinx's messages as text. Sphinx colours them whenever CI=true (as CI sets),
# so ask every build, in process or not, for plain output.
os.environ["NO_COLOR"] = "1"

ROOTS = Path(__file__).parent / "roots"

# -- layers: which tests need torch ------------------------------------------------------------
#
# A test needs torch when it, a fixture it asks for, or a helper of its module or of this file
# that it calls, builds a test root (whose demos run), starts a worker, or names torch. Every
# other test runs where torch is not installed: made-up results through check, judge and the
# presenters (doctree snapshots), parsers, result sets. Marked here, once, from the tests' own
# source, so that a new test lands in its layer without a mark of its own; a test the rule
# misses takes ``@pytest.mark.torch`` itself. A module whose fixture builds a root only for
# what needs no torch (directive errors, results from a cache it wrote) names that fixture in
# ``TORCH_FREE_FIXTURES``; its tests that read what the demos did are marked themselves.

#: What a test needs torch for: a build of a test root (CLI, in-process, Sphinx's test app, a
#: process it starts itself), the engine's worker or its runs, torch itself (or its version).
NEEDS_TORCH = frozenset({"sphinx_build", "app_build", "tagged_build", "SphinxTestApp", "app",
                         "make_app", "subprocess", "Popen", "WorkerPool", "Runner", "Planner", "Job",
                         "job", "worker", "zygote", "warm", "torch", "installed_torch"})


def installed_torch() -> str:
    """The installed torch's version, read without importing it; "" where there is none (the
    torch-free layer never uses it)."""
    try:
        return importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        return ""


@functools.cache
def _uses(path: Path) -> dict[str, frozenset[str]]:
    """Each module-level function of ``path`` -> the names it uses (its arguments, which name
    fixtures, included)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            # A name it calls or reads (a helper, a class), a fixture it asks for; "torch"
            # only as torch itself (imported, or ``torch.``), not a variable that holds a version.
            names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and n.id != "torch"}
            names |= {a.arg for a in node.args.args}
            names |= {"torch" for n in ast.walk(node) if isinstance(n, ast.Attribute)
                      and isinstance(n.value, ast.Name) and n.value.id == "torch"}
            names |= {"torch" for n in ast.walk(node) if isinstance(n, ast.Import | ast.ImportFrom)
                      and any(m.split(".")[0] == "torch"
                              for m in [getattr(n, "module", None) or "", *(a.name for a in n.names)])}
            found[node.name] = frozenset(names)
    return found


def needs_torch(path: Path, name: str, free: tuple[str, ...] = ()) -> bool:
    """Does test ``name`` of module ``path`` need torch (by the rule above)? ``free``: fixtures
    whose builds need none."""
    scopes = [_uses(path), _uses(Path(__file__))]
    seen: set[str] = set(free)
    todo = [name]
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        if current in NEEDS_TORCH and current != name:
            return True
        for scope in scopes:
            todo.extend(scope.get(current, ()))
    return False


UNIT = Path(__file__).parent / "unit"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if UNIT in Path(str(item.path)).parents:
            continue  # tests/unit needs no torch by construction (tox -e unit runs it without)
        function = getattr(item, "originalname", None) or item.name.split("[")[0]
        free = tuple(getattr(getattr(item, "module", None), "TORCH_FREE_FIXTURES", ()))
        if "torch" not in item.keywords and needs_torch(Path(str(item.path)), function, free):
            item.add_marker(pytest.mark.torch)
#: An ``autocast_demo_global_setup`` that, where ``TORCH_TEST_DEFAULT_OFF`` is set, makes this
#: torch behave as one whose default became "off": the entry's default changed, and the config
#: marked changed as torch marks it when a value is set (from 2.14 torch caches the config's
#: values between reads, and inductor keys its caches by the config's hash, so a bare change of
#: the default reached no compile there). A build with the variable and one without share their
#: result sets' keys (a set's key holds no TORCH_* variable; the cache's does), as the sets of a
#: torch whose default changed would. One line: a result set keeps the command that made it.
DEFAULT_OFF_IF_SET = ("import os, torch._functorch.config as c; "
                      "os.environ.get('TORCH_TEST_DEFAULT_OFF') and ("
                      "setattr(c._config['backward_pass_autocast'], 'default', 'off'), "
                      "c._get_dict_dirty_keys_var.set(None), c._hash_dirty_var.set(True))")
STATS = "autocast_demo_stats.json"  # pipeline.STATS: a build's numbers, in its doctree directory


def read_stats(doctrees: Path) -> dict[str, float]:
    """What a build ran, from the numbers it wrote (report.Counts); {} when it wrote none."""
    path = doctrees / STATS
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def kernel_can_collapse() -> bool:
    """Linux 6.1 or later with transparent huge pages not switched off (asked of the kernel,
    not of the code under test, so that a regression cannot turn into a skip)."""
    release = re.match(r"(\d+)\.(\d+)", os.uname().release) if sys.platform == "linux" else None
    thp = Path("/sys/kernel/mm/transparent_hugepage/enabled")
    return (release is not None and (int(release[1]), int(release[2])) >= (6, 1)
            and thp.exists() and "[never]" not in thp.read_text())


def kernel_can_populate() -> bool:
    """Linux 5.14 or later: ``MADV_POPULATE_WRITE`` (asked of the kernel's release, as above)."""
    release = re.match(r"(\d+)\.(\d+)", os.uname().release) if sys.platform == "linux" else None
    return release is not None and (int(release[1]), int(release[2])) >= (5, 14)


@pytest.fixture(scope="session")
def rootdir() -> Path:
    return ROOTS


@functools.cache
def load_quickstart() -> ModuleType:
    """.ci/quickstart.py (it reads the README's commands for CI), imported from its file: for
    the tests that read the README's recipes and those that run them."""
    path = Path(__file__).resolve().parents[1] / ".ci" / "quickstart.py"
    spec = importlib.util.spec_from_file_location("quickstart", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def copy_root(name: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    dest = tmp_path_factory.mktemp(name) / "src"
    shutil.copytree(ROOTS / f"test-{name}", dest)
    return dest


@dataclass
class CliBuild:
    """One ``python -m sphinx`` run, as a user or CI would type it."""

    src: Path
    out: Path
    returncode: int
    stdout: str
    stderr: str
    tag: str = ""  # AUTOCAST_DEMO_TEST_TAG of the build, for processes_tagged()
    stats: dict[str, float] = field(default_factory=dict)  # its numbers, read when it ended

    def runs(self) -> tuple[int, int]:
        """(runs executed, values from the cache) of this build."""
        return int(self.stats.get("runs", 0)), int(self.stats.get("cached", 0))

    def html(self, docname: str) -> BeautifulSoup:
        return BeautifulSoup((self.out / f"{docname}.html").read_text(encoding="utf-8"), "html.parser")


# -- one kept worker serves the suite's builds ---------------------------------------------------
#
# A build starts its own worker (imports torch and dynamo, warms up a compile: seconds) unless a
# kept one serves it (autocast_demo_keep_worker, as in a writer's edit loop). The suite's CLI
# builds ask for one, kept in a runtime directory of the suite's own that ends with the session
# (a kept worker ends within a second of its socket's going). Its runs still fork fresh, and are
# bitwise those of a build's own worker (tests/build/test_kept_worker.py). A build that needs its
# own worker says kept=False: one whose processes a test counts (tagged), one that sets
# keep_worker itself, one that checks the worker's own start.
#
# pytest-xdist runs the test files side by side in processes of their own (pyproject.toml): the
# first process to import this file (the controller) makes the runtime directory, and the
# workers it starts inherit its name, so that their builds share one kept worker too. Only the
# process that made it removes it.
_RUNTIME = "AUTOCAST_DEMO_SUITE_RUNTIME"
_MADE_HERE = _RUNTIME not in os.environ
if _MADE_HERE:
    os.environ[_RUNTIME] = tempfile.mkdtemp(prefix="autocast-demo-suite-")  # 0700, as a kept one needs
SUITE_RUNTIME = Path(os.environ[_RUNTIME])
# Sphinx saves each failed build's traceback (sphinx-err-*.log) in the temporary directory,
# and the suite fails builds on purpose: the suite's processes and the builds they start keep
# their temporary files in the suite's runtime directory, removed with it. Inductor's cache
# stays where torch keeps it by default (beside the system's temporary files): the builds of
# the suite share its compiled kernels, as a writer's builds do. (Set by the controller, so
# that every xdist worker's builds have one environment, and so one kept worker.)
if _MADE_HERE:
    import getpass

    (SUITE_RUNTIME / "tmp").mkdir()
    # (pytest's own tmp_path directories stay where pytest keeps them, for a failed test's files)
    os.environ.setdefault("PYTEST_DEBUG_TEMPROOT", tempfile.gettempdir())
    os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", os.path.join(
        tempfile.gettempdir(), "torchinductor_" + re.sub(r"[\\/:*?\"<>|]", "_", getpass.getuser())))
    os.environ["TMPDIR"] = str(SUITE_RUNTIME / "tmp")
    tempfile.tempdir = None  # (read again from TMPDIR: this process's files go there too)
#: Seconds a kept worker waits for the next build; AUTOCAST_DEMO_SUITE_KEEP=0: every build its own.
SUITE_KEEP = os.environ.get("AUTOCAST_DEMO_SUITE_KEEP", "120")
#: pytest's own variables, which differ from test to test (the test's name) and from one xdist
#: worker to another: the kept worker's key holds the build's environment, and each test (or
#: each xdist worker) would start one of its own.
PYTEST_VARIABLES = ("PYTEST_CURRENT_TEST", "PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT",
                    "PYTEST_XDIST_TESTRUNUID")


def pytest_sessionfinish(session: pytest.Session) -> None:
    if _MADE_HERE:
        shutil.rmtree(SUITE_RUNTIME, ignore_errors=True)


def suite_kept(env: dict[str, str] | os._Environ[str], own: bool = False) -> bool:
    """Whether a build with ``env`` is served by the suite's kept worker: not where a test
    counts its processes (tagged) or the build sets keep_worker itself (``own``)."""
    return SUITE_KEEP != "0" and "AUTOCAST_DEMO_TEST_TAG" not in env and not own


def sphinx_build(src: Path, out: Path, *args: str, env: dict[str, str] | None = None,
                 timeout: float = 600, kept: bool = True) -> CliBuild:
    doctrees = Path(args[args.index("-d") + 1]) if "-d" in args else out / ".doctrees"
    (doctrees / STATS).unlink(missing_ok=True)  # a build that writes none has none
    full = {k: v for k, v in os.environ.items() if k not in PYTEST_VARIABLES} | (env or {})
    conf = src / "conf.py"
    own = any("autocast_demo_keep_worker" in a for a in args) or (
        conf.is_file() and "autocast_demo_keep_worker" in conf.read_text(encoding="utf-8"))
    if kept and suite_kept(full, own):
        full["XDG_RUNTIME_DIR"] = str(SUITE_RUNTIME)
        args = (*args, "-D", f"autocast_demo_keep_worker={SUITE_KEEP}")
    proc = subprocess.run(
        [sys.executable, "-m", "sphinx", "-b", "html", str(src), str(out), *args],
        capture_output=True, text=True, timeout=timeout, env=full,
    )
    return CliBuild(src, out, proc.returncode, proc.stdout, proc.stderr, stats=read_stats(doctrees))


def tagged_build(name: str, tmp_path_factory: pytest.TempPathFactory) -> CliBuild:
    """A CLI build of test root ``name`` whose processes carry a fresh tag."""
    src = copy_root(name, tmp_path_factory)
    tag = uuid.uuid4().hex
    result = sphinx_build(src, src / "_build" / "html", env={"AUTOCAST_DEMO_TEST_TAG": tag})
    result.tag = tag
    return result


@dataclass
class AppBuild:
    """An in-process build (``SphinxTestApp``): the environment can be inspected."""

    app: object
    status: str
    warnings: str
    stats: dict[str, float] = field(default_factory=dict)  # its numbers, read when it ended

    def runs(self) -> tuple[int, int]:
        """(runs executed, values from the cache) of this build."""
        return int(self.stats.get("runs", 0)), int(self.stats.get("cached", 0))

    def html(self, docname: str) -> BeautifulSoup:
        path = Path(self.app.outdir) / f"{docname}.html"  # type: ignore[attr-defined]
        return BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")

    def result(self, docname: str, ident: str):
        from sphinx_autocast_demo.core.state import all_docs

        return all_docs(self.app.env)[docname].results[ident]  # type: ignore[attr-defined]


def app_build(src: Path, buildername: str = "html", kept: bool = False,
              **confoverrides: object) -> AppBuild:
    """``kept``: served by the suite's kept worker, as a CLI build is by default (see
    :func:`sphinx_build`); off by default here, where a test may count what the build starts."""
    from sphinx.testing.util import SphinxTestApp

    status, warning = StringIO(), StringIO()
    with pytest.MonkeyPatch.context() as mp:
        if kept and suite_kept(os.environ):
            # The environment a CLI build of the suite has: the same kept worker's key.
            mp.setenv("XDG_RUNTIME_DIR", str(SUITE_RUNTIME))
            for name in PYTEST_VARIABLES:
                mp.delenv(name, raising=False)
            confoverrides.setdefault("autocast_demo_keep_worker", float(SUITE_KEEP))
        app = SphinxTestApp(buildername, srcdir=src, status=status, warning=warning,
                            confoverrides=confoverrides)
        (Path(app.doctreedir) / STATS).unlink(missing_ok=True)
        try:
            app.build()
        finally:
            app.cleanup()
    # Sphinx 7.2's test app colours its streams; later ones do not.
    plain = re.compile(r"\x1b\[[0-9;]*m")
    return AppBuild(app, plain.sub("", status.getvalue()), plain.sub("", warning.getvalue()),
                    read_stats(Path(app.doctreedir)))


def verdicts(soup: BeautifulSoup, ident: str) -> list[str]:
    """The "compiled = eager?" column of demo ``ident``'s results table, value by value (the
    "outcome, as recorded?" column of a demo with ``:show: record``)."""
    return column(soup, ident, ("compiled = eager?", "outcome, as recorded?"))


def footer(soup: BeautifulSoup, ident: str) -> str:
    """All that the page says under its tables of demo ``ident``'s results: the demo's own
    footer, then what the page says once for all its demos (without its lead words)."""
    box = soup.find(id=ident)
    assert box is not None, f"no demo {ident!r} in the page"
    own = [p.get_text(" ", strip=True) for p in box.select(".autocast-demo-provenance")]
    own = [text for text in own if not text.startswith("Every demo on this page")]
    page = [p.get_text(" ", strip=True).partition(": ")[2]
            for p in soup.select(".autocast-demo-provenance")
            if p.get_text(" ", strip=True).startswith("Every demo on this page")]
    return " \u00b7 ".join(text.removesuffix(".") for text in own + page) + "."


def column(soup: BeautifulSoup, ident: str, names: tuple[str, ...]) -> list[str]:
    """The cells, one per value, of the first column of demo ``ident``'s table named in
    ``names`` (or, where the table has a column per environment, this build's)."""
    box = soup.find(id=ident)
    assert box is not None, f"no demo {ident!r} in the page"
    table = box.select_one("table.autocast-demo-results")
    assert table is not None, f"demo {ident!r} shows no table"
    header = [th.get_text(" ", strip=True) for th in table.select("thead th")]
    # A table of several environments has a column per environment: this build's is the one.
    # (One column headed by all of them where every environment says the same.)
    names = (*names, *(h for h in header if "(this build)" in h))
    index = next(header.index(n) for n in names if n in header)
    for label in table.select(".autocast-demo-env-label"):  # shown on phones only
        label.decompose()
    return [tr.select("th, td")[index].get_text(" ", strip=True) for tr in table.select("tbody tr")]


def processes_tagged(tag: str) -> list[int]:
    """Live processes whose environment carries ``AUTOCAST_DEMO_TEST_TAG=tag``.

    Give a build that variable and every process it started (the worker, its children, what a
    snippet spawned) inherits it; tagging keeps parallel test runs from seeing each other.
    """
    marker = f"AUTOCAST_DEMO_TEST_TAG={tag}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z" and marker in environ.split(b"\0"):
            found.append(int(entry.name))
    return found
