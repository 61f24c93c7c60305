"""What a result stands for is the writer's code and files, never torch's own working files.

Inductor and Triton write generated modules, kernels, locks and precompiled headers wherever
their directories point (``TORCHINDUCTOR_CACHE_DIR``, ``TRITON_CACHE_DIR``) and, for some of
them, under the temporary directory's default whatever the variable says. A fresh CI runner has
none of them: with only the result cache restored, a new ``TMPDIR`` and a new inductor cache
directory, an unchanged project runs nothing, a moved one too, and one edited page runs only
its own demos.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import uuid

import pytest
from conftest import copy_root, sphinx_build


def machine(root, name: str) -> dict[str, str]:
    """A runner's own temporary and inductor cache directories, made empty."""
    tmp, inductor = root / name / "tmp", root / name / "inductor"
    for path in (tmp, inductor):
        path.mkdir(parents=True)
    return {"TMPDIR": str(tmp), "TORCHINDUCTOR_CACHE_DIR": str(inductor),
            "TRITON_CACHE_DIR": str(root / name / "triton")}


@pytest.fixture(scope="module")
def runners(tmp_path_factory):
    """One project on a first machine (a kept worker serves it), then on a fresh runner.

    On the first machine: a build served by a kept worker, whose warm-up loaded inductor's
    kernels; a second checkout built with its own worker and cache into the same inductor
    directory (it writes the same kernels again); the first project edited and built again,
    by the kept worker. Then a fresh runner: the project checked out elsewhere, the result
    cache restored to another path, nothing else of the first machine; then one page edited."""
    src = copy_root("fresh-runner", tmp_path_factory)
    root = src.parent
    runtime = root / "runtime"
    runtime.mkdir(mode=0o700)
    one = {**machine(root, "one"), "XDG_RUNTIME_DIR": str(runtime),
           "AUTOCAST_DEMO_TEST_TAG": uuid.uuid4().hex}

    def build(project, cache, env, *args):
        return sphinx_build(project, project / "_build" / "html", "-D",
                            f"autocast_demo_cache_dir={cache}", *args, env=env, kept=False)

    keep = ("-D", "autocast_demo_keep_worker=30")
    done = {"first": build(src, root / "cache", one, *keep)}
    other = root / "other"
    shutil.copytree(src, other, ignore=shutil.ignore_patterns("_build"))
    build(other, root / "other-cache", one)
    edit(src / "index.rst")
    done["kept"] = build(src, root / "cache", one, *keep)
    subprocess.run([sys.executable, "-m", "sphinx_autocast_demo", "stop-workers", "--all"],
                   capture_output=True, timeout=60, env={**os.environ, **one})
    shutil.rmtree(root / "one")
    moved = root / "checkout"
    shutil.copytree(src, moved, ignore=shutil.ignore_patterns("_build"))
    shutil.copytree(root / "cache", root / "restored")
    done["fresh"] = build(moved, root / "restored", machine(root, "two"))
    shutil.rmtree(root / "two")
    edit(moved / "other.rst")
    done["edited"] = build(moved, root / "restored", machine(root, "three"))
    return done


def edit(page) -> None:
    """Another input, the same shape: the demo runs again."""
    text = page.read_text()
    page.write_text(text.replace("torch.randn(2, 4)", "torch.randn(3, 4)")
                    .replace("torch.ones(3, 3)", "torch.full((3, 3), 2.0)"))


def test_the_first_build_runs_every_demo(runners):
    first = runners["first"]
    assert first.returncode == 0, first.stderr
    assert first.runs()[0] > 0 and first.stats["checked"] == 4


def test_kernels_another_build_wrote_again_do_not_make_the_kept_worker_refuse(runners):
    first, kept = runners["first"], runners["kept"]
    assert first.stats["kept_worker"] == 1, first.stdout + first.stderr
    assert "no kept worker serves this build" not in kept.stderr, kept.stderr
    assert kept.stats["kept_worker"] == 2, kept.stdout


def test_a_fresh_runner_with_the_cache_restored_runs_nothing(runners):
    first, fresh = runners["first"], runners["fresh"]
    assert fresh.returncode == 0, fresh.stderr
    # Nothing runs; every value checked the first time comes from the restored cache.
    assert fresh.runs() == (0, first.stats["checked"]), fresh.stdout + fresh.stderr
    assert "run again" not in fresh.stderr + fresh.stdout


def test_one_edited_page_runs_only_its_own_demos(runners):
    first, edited = runners["first"], runners["edited"]
    assert edited.returncode == 0, edited.stderr
    # Sphinx reads the edited page alone, and only its demo runs: half of the first build's
    # runs, as both pages' demos name the same values.
    assert edited.stats["demos"] == 1, edited.stdout
    assert edited.runs()[0] == first.runs()[0] // 2 > 0, edited.stdout
