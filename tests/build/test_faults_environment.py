"""A build on a machine whose torch cannot run the demos (issue 5, case 7).

A torch that does not import, a torch without the configured flag: one error located in conf.py
that says what to do, not a warning per demo. ``:device: cuda`` on this CPU machine: an error by
default, a skip when ``autocast_demo_cuda_unavailable = "skip"``. Each case is a real ``python -m
sphinx`` build of tests/roots/test-fault-env (two pages, three demos, one of them on cuda). No
torch at all, and the never-run mode: tests/unit/test_faults_no_torch.py.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from conftest import (
    NEVER,
    NO_ENGINE,
    conf_line,
    copy_root,
    errors,
    processes_tagged,
    sphinx_build,
    verdicts,
    warnings,
)

MATCH = "\u2713 matches eager"
HAS_CUDA = Path("/dev/nvidiactl").exists()


@pytest.fixture(scope="module")
def broken_torch(tmp_path_factory):
    """A torch that is installed (its metadata is there) but does not import.

    A package named ``torch`` first on PYTHONPATH raises the ImportError a broken wheel raises
    (a missing libtorch_cpu.so). The build never imports torch; the worker does, exactly as it
    would import the real one, so it meets the same error at the same place.
    """
    src = copy_root("fault-env", tmp_path_factory)
    fake = src.parent / "broken" / "torch"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text(
        'raise ImportError("libtorch_cpu.so: cannot open shared object file: No such file or directory")\n'
    )
    tag = uuid.uuid4().hex
    return sphinx_build(src, src / "_build" / "html",
                        env={"PYTHONPATH": str(fake.parent), "AUTOCAST_DEMO_TEST_TAG": tag}), tag


def test_a_torch_that_does_not_import_is_one_located_error(broken_torch):
    build, tag = broken_torch
    assert build.returncode == 1, build.stderr
    [error] = errors(build)
    where = f"{build.src / 'conf.py'}:{conf_line(build.src, 'sphinx_autocast_demo')}: ERROR: "
    assert error.startswith(where + "autocast-demo: no demo can run: the worker could not import "
                            "torch: ImportError: libtorch_cpu.so: cannot open shared object file")
    assert "run python -c 'import torch' to see why" in error and NEVER in error
    assert warnings(build) == [] and "Traceback" not in build.stderr
    assert verdicts(build.html("other"), "md-demo") == [NO_ENGINE, NO_ENGINE]
    assert processes_tagged(tag) == []


# Loaded at interpreter start (sitecustomize): when torch._functorch.config is imported, the
# flag is deleted from it, which is what torch before 2.9 looks like to the worker.
WITHOUT_FLAG = """
import importlib.util
import sys


class WithoutFlag:
    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name != "torch._functorch.config":
            return None
        sys.meta_path.remove(cls)
        try:
            spec = importlib.util.find_spec(name)
        finally:
            sys.meta_path.insert(0, cls)
        load = spec.loader.exec_module

        def exec_module(module):
            load(module)
            del sys.modules[name].backward_pass_autocast

        spec.loader.exec_module = exec_module
        return spec


sys.meta_path.insert(0, WithoutFlag)
"""


@pytest.fixture(scope="module")
def missing_flag(tmp_path_factory):
    """The real torch with ``backward_pass_autocast`` removed, as torch 2.8 ships it.

    Everything else (imports, the compiler, the config module) is the real torch; only the
    flag is gone, deleted from its config module as it loads, in every process of the build.
    """
    src = copy_root("fault-env", tmp_path_factory)
    hook = src.parent / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(WITHOUT_FLAG)
    env = {"PYTHONPATH": str(hook), "AUTOCAST_DEMO_TEST_TAG": uuid.uuid4().hex}
    probe = subprocess.run(
        [sys.executable, "-c", "import torch._functorch.config as c; "
         "print(hasattr(c, 'backward_pass_autocast'))"],
        capture_output=True, text=True, env={**os.environ, **env},
    )
    assert probe.stdout.strip() == "False", probe.stderr
    return sphinx_build(src, src / "_build" / "html", env=env), env["AUTOCAST_DEMO_TEST_TAG"]


def test_a_torch_without_the_flag_is_one_located_error(missing_flag):
    build, tag = missing_flag
    assert build.returncode == 1, build.stderr
    [error] = errors(build)
    where = f"{build.src / 'conf.py'}:{conf_line(build.src, 'sphinx_autocast_demo')}: ERROR: "
    assert error.startswith(where + "autocast-demo: no demo can run: torch ")
    assert "torch._functorch.config has no config 'backward_pass_autocast'" in error
    assert "(backward_pass_autocast first shipped in torch 2.9): upgrade torch" in error
    assert NEVER in error
    assert warnings(build) == []
    assert processes_tagged(tag) == []


@pytest.fixture(scope="module")
def cuda(tmp_path_factory):
    if HAS_CUDA:
        pytest.skip("this machine has CUDA: the cuda demo would run")
    src = copy_root("fault-env", tmp_path_factory)
    tag = uuid.uuid4().hex
    cache = src.parent / "cache"
    env = {"AUTOCAST_DEMO_TEST_TAG": tag}
    error = sphinx_build(src, src / "_build" / "error", "-D", f"autocast_demo_cache_dir={cache}",
                         env=env)
    skip = sphinx_build(src, src / "_build" / "skip", "-E", "-W", "-D",
                        f"autocast_demo_cache_dir={cache}", "-D", "autocast_demo_cuda_unavailable=skip",
                        env=env)
    return error, skip, tag


def cuda_line(src: Path) -> int:
    lines = (src / "index.rst").read_text(encoding="utf-8").splitlines()
    return next(i for i, line in enumerate(lines, 1) if line.strip() == ":name: cuda-demo") - 1


def test_cuda_without_cuda_is_an_error_at_the_demo_by_default(cuda):
    build, _skip, tag = cuda
    assert build.returncode == 1, build.stderr
    [warning] = warnings(build)
    assert warning == (
        f"{build.src / 'index.rst'}:{cuda_line(build.src)}: WARNING: every value: device is cuda "
        "but this machine has no CUDA; set autocast_demo_cuda_unavailable = 'skip' to render "
        "such demos unchecked [autocast_demo.not-run]")
    assert verdicts(build.html("index"), "cuda-demo") == ["\u2014 not run: no CUDA on the build machine"] * 2
    # The CPU demos of the same build ran.
    assert verdicts(build.html("index"), "cpu-demo") == [MATCH]
    assert verdicts(build.html("other"), "md-demo") == [MATCH, MATCH]
    assert processes_tagged(tag) == []


def test_cuda_without_cuda_is_skipped_quietly_when_configured(cuda):
    _error, build, tag = cuda
    # Asked for: no warning per demo, so -W passes on a CPU host; one line counts them.
    assert build.returncode == 0, build.stderr
    assert warnings(build) == [] and errors(build) == []
    assert ("autocast-demo: 1 CUDA demo skipped: the build machine has no CUDA "
            "(autocast_demo_cuda_unavailable = 'skip')") in build.stdout
    assert verdicts(build.html("index"), "cuda-demo") == ["\u2014 skipped: no CUDA on the build machine"] * 2
    assert verdicts(build.html("index"), "cpu-demo") == [MATCH]
    assert build.runs() == (0, 3)  # the CPU demos were not run again
    assert processes_tagged(tag) == []
