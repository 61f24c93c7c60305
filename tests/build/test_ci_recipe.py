"""docs/ci.rst's matrix workflow run here, in the page's order, on a small project
(test-ci-recipe): its jobs as processes side by side, each in a checkout of its own, the
artifacts copied between them, then the merge and the final build. The workflows as written
(valid YAML, labels, installs, the cache step), read without running them:
tests/unit/test_ci_workflows.py.

No workflow runner: the ``run:`` steps are the page's own text with the ``${{ }}`` expressions
filled in. Install steps are left out (this test runs in the environment they make; PyTorch's
CPU index is not reachable here); the GPU job runs on the CPU, which is what its label is about.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from conftest import ROOTS, combinations, context_of, fill, read_stats, runs, workflows


def job_env(combo: dict, index: int, job: dict) -> dict[str, str]:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    env.pop("GITHUB_ACTIONS", None)
    env.update({k: fill(str(v), context_of(combo, index)) for k, v in job.get("env", {}).items()})
    return env


def checkout(where: Path) -> Path:
    """A fresh checkout of a project whose docs are the tiny test root."""
    shutil.copytree(ROOTS / "test-ci-recipe", where / "docs")
    return where


def steps_to_run(job: dict, combo: dict, index: int) -> list[str]:
    """The job's ``run:`` steps in order, filled in; pip installs left out (see the module)."""
    return [fill(r, context_of(combo, index)) for r in runs(job) if "pip install" not in r]


@pytest.fixture(scope="module")
def matrix_run(tmp_path_factory):
    """The matrix workflow's release with a CPU and a GPU job (torch 2.15.0: three jobs, two
    shards on CPU and one on the "GPU"), side by side, then the html job on their artifacts,
    then the first job again in a new checkout with its cache restored."""
    workflow = workflows()[".github/workflows/docs-matrix.yml"]["jobs"]
    check, html = workflow["check"], workflow["html"]
    combos = [(i, c) for i, c in enumerate(combinations(check["strategy"]["matrix"]))
              if c["torch"] == "2.15.0"]
    base = tmp_path_factory.mktemp("matrix")
    jobs = []
    for index, combo in combos:
        project = checkout(base / f"job-{index}")
        script = " && ".join(steps_to_run(check, combo, index))
        jobs.append((index, combo, project, subprocess.Popen(
            ["bash", "-c", script], cwd=project, env=job_env(combo, index, check), text=True,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE)))
    checked = [(index, combo, project, *proc.communicate(timeout=900), proc.returncode)
               for index, combo, project, proc in jobs]
    final = checkout(base / "html")
    for index, _, project, *_ in checked:  # upload-artifact, download-artifact
        upload = next(s for s in check["steps"] if s.get("uses", "").startswith("actions/upload-artifact"))
        download = next(s for s in html["steps"] if s.get("uses", "").startswith("actions/download-artifact"))
        name = fill(upload["with"]["name"], {"strategy.job-index": index})
        shutil.copytree(project / upload["with"]["path"], final / download["with"]["path"] / name)
    final_steps = [subprocess.run(["bash", "-c", step], cwd=final, env=job_env({}, 0, html), text=True,
                                  capture_output=True, timeout=600)
                   for step in steps_to_run(html, {}, 0)]
    # The next run of a job that ran the demo (one demo, two shards: one of them has none): a
    # new checkout, its cache restored (actions/cache).
    index, combo, first, *_ = max(checked, key=lambda c: read_stats(c[2] / "_build" / "check" /
                                                                    ".doctrees").get("runs", 0))
    again = checkout(base / "again")
    cache = next(s for s in check["steps"] if s.get("uses", "").startswith("actions/cache@"))["with"]["path"]
    shutil.copytree(first / cache, again / cache)
    rerun = subprocess.run(["bash", "-c", " && ".join(steps_to_run(check, combo, index))], cwd=again,
                           env=job_env(combo, index, check), text=True, capture_output=True, timeout=600)
    return checked, final, final_steps, again, rerun


def test_the_matrix_jobs_run_as_written(matrix_run):
    checked = matrix_run[0]
    for _, combo, project, _, err, code in checked:
        assert code == 0, (combo, err[-3000:])
        [env_dir] = (project / "_build" / "check" / "results").iterdir()
        label = json.loads((env_dir / "environment.json").read_text())["label"]
        assert label == f"torch {combo['torch']} {combo['device']}"


def test_the_html_job_merges_the_sets_and_builds_with_both_environments(matrix_run):
    _, final, (merged, built), *_ = matrix_run
    assert merged.returncode == 0, merged.stderr
    assert "torch 2.15.0 cpu: " in merged.stdout and "runs 1/2, 2/2" in merged.stdout
    assert "torch 2.15.0 cuda: " in merged.stdout and " results into docs/_merged" in merged.stdout
    assert built.returncode == 0, built.stderr[-3000:]
    soup = BeautifulSoup((final / "_build" / "html" / "index.html").read_text(), "html.parser")
    headers = [th.get_text(" ", strip=True) for th in soup.select("table.autocast-demo-results thead th")]
    # Both environments head the table: a column each, or one that both agree on every value in.
    assert (("torch 2.15.0 cpu" in headers and "torch 2.15.0 cuda" in headers)
            or "same in torch 2.15.0 cpu \u00b7 2.15.0 cuda" in headers), headers


def test_the_cache_step_keeps_the_results_between_runs(matrix_run):
    *_, again, rerun = matrix_run
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    stats = read_stats(again / "_build" / "check" / ".doctrees")
    assert (stats["runs"], stats["cached"]) == (0, 2), stats  # the demo's 2 values, none run again


