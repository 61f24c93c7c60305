"""What the engine says to the writer (engine/notices.py), on made-up worker answers and no build:
the one error of a build that can run no demo and the conf.py line it points at, the ``-v``
lines on what made the runs cheaper, and the warnings about a worker not kept, each in the
console's language. The faults for real: tests/build/test_faults_environment.py."""

from __future__ import annotations

import sys
from types import SimpleNamespace

import pytest
import sphinx.locale
from fakes import TORCH, Logger, Loud

from sphinx_autocast_demo.core.i18n import CATALOG
from sphinx_autocast_demo.engine import notices
from sphinx_autocast_demo.plan.planned import Stats

NEVER = ("set autocast_demo_execute = 'never' (or AUTOCAST_DEMO_EXECUTE=never) to render the pages "
         "from the result cache without running anything")

CONF = ("project = 'x'\n"
        "extensions = ['sphinx_autocast_demo']\n"
        "autocast_demo_timeout = 60\n"
        "autocast_demo_config = 'torch._functorch.config.nope'\n"
        "autocast_demo_keep_worker = 600\n")


@pytest.fixture
def logged(monkeypatch) -> Logger:
    found = Logger()
    monkeypatch.setattr(notices, "logger", found)
    # English, whatever catalog an earlier test of this process registered for the console.
    monkeypatch.setitem(sphinx.locale.translators, ("console", CATALOG), sphinx.locale.NullTranslations())
    return found


@pytest.fixture
def host(tmp_path) -> SimpleNamespace:
    """The Sphinx application, as far as the engine's words use it: its conf.py directory."""
    (tmp_path / "conf.py").write_text(CONF, encoding="utf-8")
    return SimpleNamespace(confdir=str(tmp_path))


@pytest.mark.parametrize(("fault", "error", "says", "line"), [
    ("no-torch", "No module named 'torch'",
     f"torch is not installed for {sys.executable}: install it there (pip install 'torch>=2.9'), or {NEVER}",
     3),  # the first setting of ours
    ("torch-import", "ImportError: libcudart.so.12: cannot open shared object file\nTraceback ...",
     "ImportError: libcudart.so.12: cannot open shared object file; torch is installed but does not "
     f"import (run python -c 'import torch' to see why) and needs repairing, or {NEVER}", 3),
    ("torch-import", "  \n", "the worker failed; torch is installed but does not import (run python -c "
     f"'import torch' to see why) and needs repairing, or {NEVER}", 3),
    ("no-config", "torch._functorch.config has no nope\nmore",
     "torch._functorch.config has no nope: this torch cannot set torch._functorch.config.nope "
     "(backward_pass_autocast first shipped in torch 2.9): upgrade torch, correct "
     f"autocast_demo_config, or {NEVER}", 4),
    ("warm-up", "  the warm-up compile failed:\nRuntimeError: x\n",
     f"the warm-up compile failed:\nRuntimeError: x\n{NEVER}", 3),
], ids=["no torch", "torch does not import", "no error text", "unknown config", "other"])
def test_a_build_that_can_run_no_demo_says_what_to_do_at_the_setting_to_change(
        host, fault, error, says, line):
    message, where = notices.engine_problem(error, fault, host.confdir, "torch._functorch.config.nope")
    assert message == f"autocast-demo: no demo can run: {says}"
    assert str(where) == f"{host.confdir}/conf.py:{line}"


def test_verbose_says_the_warm_workers_torch(logged):
    notices.engine_speed(Stats(), {"torch": TORCH}, warm=True)  # type: ignore[typeddict-item]
    notices.engine_speed(Stats(), {"torch": TORCH}, warm=False)  # type: ignore[typeddict-item]
    assert logged.texts() == [f"autocast-demo: the worker is ready (torch {TORCH})"]


@pytest.mark.parametrize(("build", "idle", "what"), [
    (1, 600.0, "started for this build; it stays 600 s"),
    (3, 2.5, "kept from an earlier build, serving its build 3; it stays 2.5 s"),
])
def test_verbose_says_whether_the_kept_worker_was_started_or_kept_and_how_long_it_stays(
        logged, build, idle, what):
    info = {"kept": {"pid": 4242, "build": build, "idle": idle, "session": 4243}}
    notices.engine_speed(Stats(), info, warm=False)  # type: ignore[arg-type]
    assert logged.texts() == [f"autocast-demo: the worker (pid 4242) was {what} after its last build"]


def test_verbose_counts_the_runs_made_cheaper_in_the_singular_and_the_plural(logged):
    notices.engine_speed(Stats(executed=1, eager_zygote=1, copied_ahead=1, copied_bytes=(3 << 20) + 5),
                      {}, warm=False)
    notices.engine_speed(Stats(executed=4, eager_zygote=2, eager_early=1, copied_ahead=1), {}, warm=False)
    notices.engine_speed(Stats(executed=4), {}, warm=False)  # nothing made cheaper: nothing said
    assert logged.texts() == [
        "autocast-demo: 1 eager run ran in a zygote forked before the warm-up, 0 of them while it ran",
        "autocast-demo: 1 of 1 run began with the worker's pages a compile writes already copied, on "
        "an idle core (up to 3 MiB a run)",
        "autocast-demo: 2 eager runs ran in a zygote forked before the warm-up, 1 of them while it ran",
        "autocast-demo: 1 of 4 runs began with the worker's pages a compile writes already copied, on "
        "an idle core (up to 0 MiB a run)",
    ]


def test_a_worker_not_kept_is_a_slow_warning_at_the_keep_worker_setting(logged, host):
    assert notices.not_kept(host, "the kept worker did not start")  # type: ignore[arg-type]
    ((level, text, where),) = logged.lines
    assert (level, text) == ("warning", "autocast-demo: no kept worker serves this build (the kept "
                             "worker did not start); this build starts its own, which ends with it")
    assert where == {"type": "autocast_demo", "subtype": "slow", "location": f"{host.confdir}/conf.py:5"}
    assert not notices.not_kept(host, "") and len(logged.lines) == 1  # type: ignore[arg-type]


def test_a_worker_that_cannot_fork_says_its_thread_and_one_that_did_not_tell_can(logged, host):
    # The eager zygote's answer says nothing of forking: only the warm one's does.
    assert not notices.cannot_fork(host, {"torch": TORCH})  # type: ignore[arg-type, typeddict-item]
    assert notices.cannot_fork(host, {"fork": False, "threads": ["openblas"]})  # type: ignore[arg-type]
    ((level, text, where),) = logged.lines
    assert text.startswith("autocast-demo: runs start a new Python interpreter (seconds each instead "
                           "of a fork of the warm worker): after importing torch the worker had 1 "
                           "more thread running (openblas), and forking")
    assert (level, where["subtype"], where["location"]) == ("warning", "slow", f"{host.confdir}/conf.py:2")


def test_the_engines_words_are_said_in_the_consoles_language_and_its_data_as_it_is(
        logged, host, monkeypatch):
    monkeypatch.setitem(sphinx.locale.translators, ("console", CATALOG), Loud())
    info = {"torch": TORCH, "kept": {"pid": 7, "build": 1, "idle": 60.0},
            "fork": False, "threads": ["omp_thread"]}
    notices.engine_speed(Stats(executed=2, eager_zygote=2, copied_ahead=2, copied_bytes=1 << 20),
                      info, warm=True)  # type: ignore[arg-type]
    notices.not_kept(host, "/run/user/1000 is not private")  # type: ignore[arg-type]
    notices.cannot_fork(host, info)  # type: ignore[arg-type]
    assert logged.texts()[:-1] == [
        f"AUTOCAST-DEMO: THE WORKER IS READY (TORCH {TORCH})",
        "AUTOCAST-DEMO: THE WORKER (PID 7) WAS STARTED FOR THIS BUILD; IT STAYS 60 S AFTER ITS LAST BUILD",
        "AUTOCAST-DEMO: 2 EAGER RUNS RAN IN A ZYGOTE FORKED BEFORE THE WARM-UP, 0 OF THEM WHILE IT RAN",
        "AUTOCAST-DEMO: 2 OF 2 RUNS BEGAN WITH THE WORKER'S PAGES A COMPILE WRITES ALREADY COPIED, ON "
        "AN IDLE CORE (UP TO 1 MIB A RUN)",
        "AUTOCAST-DEMO: NO KEPT WORKER SERVES THIS BUILD (/run/user/1000 is not private); THIS BUILD "
        "STARTS ITS OWN, WHICH ENDS WITH IT",
    ]
    assert logged.texts()[-1].startswith("AUTOCAST-DEMO: RUNS START A NEW PYTHON INTERPRETER")
    assert "HAD 1 MORE THREAD RUNNING (omp_thread)" in logged.texts()[-1]


def test_the_error_of_a_build_that_can_run_no_demo_is_said_in_the_consoles_language(
        host, monkeypatch):
    monkeypatch.setitem(sphinx.locale.translators, ("console", CATALOG), Loud())
    for fault, error in (("no-torch", ""), ("torch-import", "ImportError: libtorch.so"),
                         ("no-config", "LookupError: no backward_pass_autocast")):
        message, _ = notices.engine_problem(error, fault, host.confdir,  # type: ignore[arg-type]
                                         "torch._functorch.config.backward_pass_autocast")
        assert message.startswith("AUTOCAST-DEMO: NO DEMO CAN RUN: "), message
        assert "SET AUTOCAST_DEMO_EXECUTE = 'NEVER'" in message, message
        assert error in message  # torch's own words, as it said them
