"""docs/ci.rst's workflows as written, read without running them: valid YAML that GitHub
Actions can take, each job's environment labelled by torch and device, CPU jobs on a CPU torch,
the HTML job installing what the docs load, a cache step before the builds. The matrix
workflow's steps run for real: tests/build/test_ci_recipe.py."""

from __future__ import annotations

import re

from conftest import combinations, context_of, fill, runs, workflows

CPU_INDEX = "https://download.pytorch.org/whl/cpu"
CACHE = re.compile(r'-D autocast_demo_cache_dir="\$PWD/([^"]+)"')
LABEL = re.compile(r'-D autocast_demo_environment="([^"]+)"')


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
