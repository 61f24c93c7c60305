"""docs/ci.rst's workflows as written: valid YAML that GitHub Actions can take, each job's
environment labelled by torch and device, CPU jobs on a CPU torch, the HTML job installing what
the docs load, a cache step before the builds; and the matrix workflow's steps run here, in the
page's order, on a small project (test-ci-recipe): its jobs as processes side by side, each in a
checkout of its own, the artifacts copied between them, then the merge and the final build.

No workflow runner: the ``run:`` steps are the page's own text with the ``${{ }}`` expressions
filled in. Install steps are checked, not run (this test runs in the environment they make; PyTorch's
CPU index is not reachable here); the GPU job runs on the CPU, which is what its label is about.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml
from bs4 import BeautifulSoup
from conftest import ROOTS, read_stats

REPO = Path(__file__).resolve().parents[2]
CPU_INDEX = "https://download.pytorch.org/whl/cpu"
CACHE = re.compile(r'-D autocast_demo_cache_dir="\$PWD/([^"]+)"')
LABEL = re.compile(r'-D autocast_demo_environment="([^"]+)"')


def workflows() -> dict[str, dict]:
    """Every workflow file the page shows, by its name (the comment on its first line)."""
    text = (REPO / "docs" / "ci.rst").read_text(encoding="utf-8")
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


def test_the_workflows_are_valid_and_complete():
    found = workflows()
    assert set(found) == {".github/workflows/docs.yml", ".github/workflows/docs-matrix.yml"}
    for name, workflow in found.items():
        # PyYAML reads the key `on` as True (YAML 1.1).
        assert workflow["name"] and workflow[True] == ["push", "pull_request"], name
        for job_name, job in workflow["jobs"].items():
            assert job["runs-on"] and job["steps"], (name, job_name)
            for step in job["steps"]:
                assert len({"run", "uses"} & set(step)) == 1, step
                if "uses" in step:
                    assert re.fullmatch(r"actions/[a-z-]+@v\d+", step["uses"]), step


def test_each_check_job_installs_a_cpu_torch_or_says_its_gpu_and_keeps_its_cache():
    for workflow in workflows().values():
        for job in workflow["jobs"].values():
            checks = [i for i, s in enumerate(job["steps"]) if "-b autocast-check" in s.get("run", "")]
            if not checks:
                continue
            combos = combinations(job.get("strategy", {}).get("matrix", {})) or [{}]
            for index, combo in enumerate(combos):
                context = context_of(combo, index)
                torch = [fill(r, context) for r in runs(job) if re.search(r"pip install .*torch", r)]
                assert torch, job
                if combo.get("device", "cpu") == "cpu":
                    assert all(f"--index-url {CPU_INDEX}" in t for t in torch), torch
                else:
                    assert CPU_INDEX not in " ".join(torch), torch
            # A cache step of the directory the builds use, before them: the one they name, or
            # the default beside docs/conf.py.
            caches = [i for i, s in enumerate(job["steps"]) if s.get("uses", "").startswith("actions/cache@")]
            assert caches and caches[0] < checks[0], job["steps"]
            cache = job["steps"][caches[0]]["with"]
            named = CACHE.search(job["steps"][checks[0]]["run"])
            assert (named[1] if named else "docs/.autocast_demo_cache") == cache["path"]
            assert cache["key"] and cache["restore-keys"]


def test_the_html_jobs_install_what_the_docs_load():
    for workflow in workflows().values():
        for job in workflow["jobs"].values():
            if any(" -b html " in r for r in runs(job)):
                installs = [r for r in runs(job) if "pip install" in r and "torch" not in r]
                assert any('-e ".[docs]"' in r for r in installs), installs
                assert not any("--no-deps" in r for r in installs), installs  # pip check would fail


def test_the_matrix_labels_each_environment_by_torch_and_device():
    job = workflows()[".github/workflows/docs-matrix.yml"]["jobs"]["check"]
    combos = combinations(job["strategy"]["matrix"])
    assert {(c["torch"], c["device"]) for c in combos} == {("2.14.1", "cpu"), ("2.15.0", "cpu"),
                                                           ("2.15.0", "cuda")}
    labels: dict[str, set[tuple[str, str]]] = {}
    for index, combo in enumerate(combos):
        [check] = [fill(r, context_of(combo, index)) for r in runs(job) if "-b autocast-check" in r]
        labels.setdefault(LABEL.search(check)[1], set()).add((combo["torch"], combo["device"]))
    assert all(len(v) == 1 for v in labels.values()) and len(labels) == 3, labels


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


