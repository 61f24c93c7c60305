"""Shared helpers: real sphinx-build runs on the test roots, built once per module; and the
suite's layers, by folder (``pytest tests/unit``, or ``-m "not torch"``: the tests that need no
torch)."""

from __future__ import annotations

import functools
import gettext
import importlib.metadata
import importlib.util
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import uuid
from dataclasses import dataclass, field
from io import StringIO
from pathlib import Path
from types import ModuleType

import pytest
import yaml
from bs4 import BeautifulSoup

pytest_plugins = ("sphinx.testing.fixtures",)

# The tests read Sphinx's messages as text. Sphinx colours them whenever CI=true (as CI sets),
# so ask every build, in process or not, for plain output.
os.environ["NO_COLOR"] = "1"

ROOTS = Path(__file__).parent / "roots"

# -- layers: by folder -------------------------------------------------------------------------
#
# tests/unit runs where torch is not installed (tox -e unit): made-up results, parsers, and builds
# that run no demo (directive errors, results from a cache the test wrote, execution "never").
# tests/build needs torch: builds whose demos run, the worker, torch itself; so does
# tests/browser (docs built with torch; test_theme_colours.py builds a root whose demos run).
# Every test of those two folders is marked torch here: ``pytest -m "not torch"`` is tests/unit.
TORCH_LAYERS = (Path(__file__).parent / "build", Path(__file__).parent / "browser")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if any(layer in Path(str(item.path)).parents for layer in TORCH_LAYERS):
            item.add_marker(pytest.mark.torch)


def installed_torch() -> str:
    """The installed torch's version, read without importing it; "" where there is none."""
    try:
        return importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        return ""


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


#: What ``-v`` says of compiled runs the pool took before their turn (a run of their snippet
#: was compiling: ``channels.Waiting.take``).
WENT_BEFORE_TURN = re.compile(r"autocast-demo: (\d+) compiled runs? went before (?:its|their) "
                              r"turn, since a run of (?:its|their) snippet was compiling")


def kernel_can_populate() -> bool:
    """Linux 5.14 or later: ``MADV_POPULATE_WRITE`` (asked of the kernel's release, not of the
    code under test, so that a regression cannot turn into a skip)."""
    release = re.match(r"(\d+)\.(\d+)", os.uname().release) if sys.platform == "linux" else None
    return release is not None and (int(release[1]), int(release[2])) >= (5, 14)


def pidfd_works() -> bool:
    """``os.pidfd_open`` here (Linux 5.3 or later, and no seccomp profile that blocks it): how
    the warm-up tells that the eager zygote ended (``processes.Ended``; without it, never)."""
    try:
        os.close(os.pidfd_open(os.getpid()))
    except (AttributeError, OSError):
        return False
    return True


def thread_at_import(site: Path) -> Path:
    """A ``sitecustomize`` in ``site`` that starts a thread, as a library may at import (for
    ``PYTHONPATH``): a worker with it cannot fork safely, so every run gets a new interpreter."""
    site.mkdir()
    (site / "sitecustomize.py").write_text(
        "import threading\n"
        "threading.Thread(target=threading.Event().wait, name='pool-at-import', daemon=True).start()\n")
    return site


def script_lines(code: str, *args: str, env: dict[str, str] | None = None) -> list[str]:
    """The lines ``code`` printed in a new interpreter (``args`` its arguments, ``env`` added
    to ours), once it exited 0."""
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          timeout=300, check=False, env={**os.environ, **(env or {})})
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


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


# -- what both layers read of a build's messages ---------------------------------------------------

def never_build(name: str, tmp_path_factory: pytest.TempPathFactory) -> CliBuild:
    """A CLI build of test root ``name`` that runs no demo (``autocast_demo_execute = "never"``):
    what Sphinx reads of its sources (a directive's errors), where torch need not be installed."""
    src = copy_root(name, tmp_path_factory)
    return sphinx_build(src, src / "_build" / "html", env={"AUTOCAST_DEMO_EXECUTE": "never"}, kept=False)


def line_of(path: Path, text: str, after: int = 0) -> int:
    """1-based line of the first line of ``path`` below line ``after`` whose stripped text is ``text``."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return next(i for i, line in enumerate(lines, 1) if i > after and line.strip() == text)


def located(build: CliBuild, path: Path, line: int, message: str) -> None:
    expected = f"{path}:{line}: WARNING: {message}"
    assert expected in build.stderr, f"{expected!r} not in\n{build.stderr}"


def ours(build: CliBuild) -> list[str]:
    """Our warnings' first lines. myst-parser warns too about an option block it cannot read:
    Sphinx 7.3+ tags those [myst.directive_parse]; Sphinx 7.2 prints no types, and there its
    message ("'autocast-demo': Invalid options format") is how to tell it."""
    return [line for line in build.stderr.splitlines()
            if ": WARNING: " in line and "[myst." not in line and not line.startswith(" ")
            and "': Invalid options format" not in line]


def errors(build: CliBuild) -> list[str]:
    return [line for line in build.stderr.splitlines() if ": ERROR: " in line]


def warnings(build: CliBuild) -> list[str]:
    return [line for line in build.stderr.splitlines() if ": WARNING: " in line]


def conf_line(src: Path, needle: str) -> int:
    lines = (src / "conf.py").read_text(encoding="utf-8").splitlines()
    return next(i for i, line in enumerate(lines, 1) if needle in line)


#: A demo's cell where no demo can run on the build machine, and what the error says to do.
NO_ENGINE = "\u2014 not run: no demo can run on the build machine"
NEVER = "or set autocast_demo_execute = 'never' (or AUTOCAST_DEMO_EXECUTE=never)"


def readme_block(containing: str) -> str:
    """The README's example output (of "What happens when a snippet fails") that holds ``containing``."""
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    section = readme.split("## What happens when a snippet fails")[1].split("\n## ")[0]
    blocks = [b.split("\n```")[0] for b in section.split("```text\n")[1:]]
    [block] = [b for b in blocks if containing in b]
    return block


@pytest.fixture(scope="session")
def russian() -> gettext.GNUTranslations:
    """The extension's shipped Russian catalog (its .mo)."""
    from sphinx_autocast_demo.core import i18n

    return gettext.translation(i18n.CATALOG, str(i18n.LOCALE_DIR), languages=["ru"])


# -- the installed console script ------------------------------------------------------------------

SCRIPT = Path(sys.executable).parent / "sphinx-autocast-demo"
COMMANDS = ("accept", "merge", "list-workers", "stop-workers")


def script(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``sphinx-autocast-demo`` from the venv's bin/, as a user runs it."""
    assert SCRIPT.is_file(), (f"{SCRIPT}: no console script; pyproject.toml's [project.scripts] "
                              "is written there by pip install -e . (run it again)")
    env = {k: v for k, v in os.environ.items() if k not in ("GITHUB_ACTIONS", "AUTOCAST_DEMO_ACCEPT")}
    return subprocess.run([str(SCRIPT), *args], cwd=cwd, capture_output=True, text=True,
                          timeout=600, env=env | {"COLUMNS": "80"})


# -- docs/ci.rst's workflows, read as GitHub Actions reads them -----------------------------------

def workflows() -> dict[str, dict]:
    """Every workflow file docs/ci.rst shows, by its name (the comment on its first line)."""
    text = (Path(__file__).resolve().parents[1] / "docs" / "ci.rst").read_text(encoding="utf-8")
    found = {}
    for block in re.findall(r"\.\. code-block:: yaml\n\n((?:(?:   .*)?\n)+)", text):
        body = textwrap.dedent(block)
        first = body.strip().splitlines()[0]
        if first.startswith("# .github/workflows/"):
            found[first.removeprefix("# ")] = yaml.safe_load(body)
    return found


def combinations(matrix: dict) -> list[dict]:
    """A job matrix expanded as GitHub does: the product of its lists, then each ``include``
    added to every combination it overwrites no original value of, or as one of its own."""
    keys = [k for k in matrix if k not in ("include", "exclude")]
    combos = [dict(zip(keys, values, strict=True))
              for values in itertools.product(*(matrix[k] for k in keys))]
    for extra in matrix.get("include", []):
        fits = [c for c in combos if all(c.get(k, v) == v for k, v in extra.items() if k in keys)]
        for combo in fits:
            combo.update(extra)
        if not fits:
            combos.append(dict(extra))
    return combos


def fill(text: str, context: dict[str, object]) -> str:
    """``${{ a || b }}`` of the names in ``context`` (``matrix.torch``, ``strategy.job-index``),
    numbers and strings; anything else is a mistake of the page's."""
    def value(expression: str) -> str:
        for term in (t.strip() for t in expression.split("||")):
            if re.fullmatch(r"\d+", term):
                return term
            if term.startswith(("'", '"')):
                return term[1:-1]
            if term not in context and not term.startswith("matrix."):
                raise AssertionError(f"unknown expression {term!r} in {text!r}")
            if context.get(term) not in (None, ""):
                return str(context[term])
        return ""

    return re.sub(r"\$\{\{\s*(.*?)\s*\}\}", lambda m: value(m[1]), text)


def context_of(combo: dict, index: int) -> dict[str, object]:
    return {**{f"matrix.{k}": v for k, v in combo.items()}, "strategy.job-index": index,
            "runner.os": "Linux", "github.sha": "0" * 40}


def runs(job: dict) -> list[str]:
    return [step["run"] for step in job["steps"] if "run" in step]
