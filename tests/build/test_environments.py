"""Result sets end to end, as the CI recipe (docs/ci.rst) runs them: shards as parallel
processes, a merge, and builds that render the merged sets, with real torch throughout.

One module-scoped flow: an unsharded check, two shards side by side, the merge, the final
builds. The "other environment" is the same torch in a process whose demo takes another path
(``FLAVOUR=b``), labelled ``flavour b``: a real run whose verdict differs from this build's.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from conftest import copy_root


def check(src: Path, out: Path, *args: str, env: dict[str, str] | None = None,
          builder: str = "autocast-check") -> subprocess.Popen[str]:
    # Each job with a result cache of its own, as on a runner of its own (the jobs share one
    # checkout here, and with it the cache beside its conf.py): the sets are what they share.
    cache = ("-D", f"autocast_demo_cache_dir={out / '.doctrees' / 'autocast_demo_cache'}")
    return subprocess.Popen(
        [sys.executable, "-m", "sphinx", "-b", builder, str(src), str(out), *cache, *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, **(env or {})})


def finish(proc: subprocess.Popen[str]) -> tuple[int, str]:
    _, err = proc.communicate(timeout=600)
    return proc.returncode, err


def merge(out: Path, *sets: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "sphinx_autocast_demo", "merge", str(out),
                           *map(str, sets)], capture_output=True, text=True, timeout=120)


def cases(out: Path) -> list[dict[str, object]]:
    data = json.loads((out / "autocast-check.json").read_text(encoding="utf-8"))
    return sorted(({k: v for k, v in c.items() if k != "seconds"} for c in data["cases"]),
                  key=lambda c: (str(c["doc"]), str(c["name"])))


def body(out: Path, docname: str) -> str:
    soup = BeautifulSoup((out / f"{docname}.html").read_text(encoding="utf-8"), "html.parser")
    main = soup.select_one("div.body") or soup.body
    assert main is not None
    return str(main)


@pytest.fixture(scope="module")
def flow(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    src = copy_root("environments", tmp_path_factory)
    work = src.parent
    never = {"AUTOCAST_DEMO_EXECUTE": "never"}
    full = check(src, work / "full")
    code, err = finish(full)
    assert code == 0, err
    # The CI matrix: two shards at once, each its own process and output directory.
    shards = [check(src, work / f"shard{i}", env={"AUTOCAST_DEMO_SHARD": f"{i}/2"}) for i in (1, 2)]
    shard_runs = [finish(p) for p in shards]
    assert [c for c, _ in shard_runs] == [0, 0], shard_runs
    merged = merge(work / "merged", work / "shard1" / "results", work / "shard2" / "results")
    # The final job: no run, the merged sets as this environment's results.
    shutil.rmtree(src / "sets")
    shutil.copytree(work / "merged", src / "sets")
    final = finish(check(src, work / "final", env=never))
    html_merged = finish(check(src, work / "html-merged", "-W", env=never, builder="html"))
    shutil.rmtree(src / "sets")
    shutil.copytree(work / "full" / "results", src / "sets")
    html_full = finish(check(src, work / "html-full", "-W", env=never, builder="html"))
    # One shard's results lost: one warning, naming the environment and the shard. With
    # --keep-going, as PyTorch's docs build: before Sphinx 8.1, -W alone stops at the first
    # warning with exit 2 and writes no page; from 8.1 on it always goes on and exits 1.
    shutil.rmtree(src / "sets")
    merge(src / "sets", work / "shard1" / "results")
    lost = finish(check(src, work / "lost", "-W", "--keep-going", env=never, builder="html"))
    # Another environment whose demo takes another path; then this build beside it.
    shutil.rmtree(src / "sets")
    shutil.copytree(work / "merged", src / "sets")
    other = finish(check(src, work / "flavour-b", "-D", "autocast_demo_environment=flavour b",
                         env={"FLAVOUR": "b"}))
    both = merge(src / "sets", work / "flavour-b" / "results")
    together = finish(check(src, work / "together", env=never, builder="html"))
    # Accept mode where two environments of one release disagree: it cannot scope them apart.
    before = (src / "index.rst").read_bytes()
    accepted = finish(check(src, work / "accept", env={**never, "AUTOCAST_DEMO_ACCEPT": "1"},
                            builder="html"))
    assert (src / "index.rst").read_bytes() == before
    return {"accepted": accepted, "work": work, "merged": merged, "final": final, "html_merged": html_merged,
            "html_full": html_full, "lost": lost, "other": other, "both": both,
            "together": together}


def test_a_result_set_is_written_with_its_environment(flow: dict[str, object]) -> None:
    root = Path(flow["work"]) / "full" / "results"  # type: ignore[arg-type]
    (env_dir,) = root.iterdir()
    environment = json.loads((env_dir / "environment.json").read_text())
    # The build reads torch's version from its package metadata, as the cache key does (PyPI's
    # CUDA wheel says 2.14.1 there, where torch.__version__ says 2.14.1+cu130).
    assert environment["torch"] == importlib.metadata.version("torch")
    assert env_dir.name == environment["label"].replace(" ", "-").lower()
    (run,) = (env_dir / "runs").iterdir()
    keys = json.loads(run.read_text())["keys"]
    assert len(keys) == 4  # 2 demos x 2 values, each a cache-format entry
    assert all((env_dir / k[:2] / f"{k}.json").is_file() for k in keys)


def test_two_shards_split_the_demos_and_merge_into_the_whole(flow: dict[str, object]) -> None:
    work = Path(flow["work"])  # type: ignore[arg-type]
    one = {c["name"] for c in cases(work / "shard1")}
    two = {c["name"] for c in cases(work / "shard2")}
    assert one and two and not one & two  # every demo in exactly one shard
    assert one | two == {c["name"] for c in cases(work / "full")}
    merged = flow["merged"]
    assert merged.returncode == 0, merged.stderr  # type: ignore[attr-defined]
    assert "runs 1/2, 2/2" in merged.stdout  # type: ignore[attr-defined]


def test_the_merged_shards_give_the_unsharded_cases_and_html(flow: dict[str, object]) -> None:
    work = Path(flow["work"])  # type: ignore[arg-type]
    code, err = flow["final"]  # type: ignore[misc]
    assert code == 0, err
    assert cases(work / "final") == cases(work / "full")
    for name in ("html_merged", "html_full"):
        code, err = flow[name]  # type: ignore[misc]
        assert code == 0, err
    for docname in ("index", "summary"):
        assert body(work / "html-merged", docname) == body(work / "html-full", docname)
    # Rendered from a set, never presented as run by this build.
    text = BeautifulSoup(body(work / "html-merged", "index"), "html.parser").get_text(" ")
    assert "kept with these docs" in text and ", run on " in text and "not run by this build" in text
    assert "Checked" not in text  # nothing ran in this build: no page says it checked


def test_a_lost_shard_is_one_warning_naming_the_environment(flow: dict[str, object]) -> None:
    code, err = flow["lost"]  # type: ignore[misc]
    warnings = [line for line in err.splitlines() if "autocast_demo.environment" in line]
    assert code == 1 and len(warnings) == 1, err  # -W: CI fails on it
    assert "shard 2/2" in warnings[0] and "'torch " in warnings[0]
    page = (Path(flow["work"]) / "lost" / "index.html").read_text()  # type: ignore[arg-type]
    assert "no result: none kept with these docs" in page


def test_another_environment_is_shown_and_checked_beside_this_one(flow: dict[str, object]) -> None:
    work = Path(flow["work"])  # type: ignore[arg-type]
    code, err = flow["other"]  # type: ignore[misc]
    # The page's unscoped records do not hold where the demo takes the other path: located
    # failures, naming the environment; the [torch<2.0] record applies to neither.
    assert code == 1
    failures = [line for line in err.splitlines() if "autocast_demo.mismatch" in line]
    assert len(failures) == 2 and all("index.rst:38:" in line for line in failures), err
    both = flow["both"]
    assert both.returncode == 0, both.stderr  # type: ignore[attr-defined]
    code, err = flow["together"]  # type: ignore[misc]
    assert code == 1, err  # the other environment's broken record fails this build too
    assert "flavour b" in err and "the page records 'differs'" in err
    soup = BeautifulSoup((work / "together" / "index.html").read_text(), "html.parser")
    table = soup.find(id="flavour").select_one("table.autocast-demo-results")
    headers = [th.get_text(" ", strip=True) for th in table.select("thead th")]
    assert headers[2] == "flavour b" and headers[-1] == "as recorded?"
    # On a phone the header is hidden and each environment's cell names it.
    labels = [span.extract().get_text() for span in table.select(".autocast-demo-env-label")]
    assert labels[:2] == [f"{headers[1]}: ", "flavour b: "]
    rows = [[td.get_text(" ", strip=True) for td in tr.select("th, td")] for tr in table.select("tbody tr")]
    assert rows[0][1].startswith("\u2717 differs") and rows[0][2].startswith("\u2713 matches")
    assert rows[0][3].startswith("no, in flavour b")
    after = soup.find(id="after")  # every record holds there: said once, not in a column
    assert "as recorded?" not in after.select_one("table.autocast-demo-results thead").get_text()
    assert "What the page records of each value holds in all 2 environments" in after.get_text(" ")
    matrix = BeautifulSoup((work / "together" / "summary.html").read_text(), "html.parser")
    changed = matrix.select("td .autocast-demo-changed, td.autocast-demo-changed")
    assert changed and "in flavour b" in changed[0].get_text(" ")


def test_accept_will_not_scope_apart_two_environments_of_one_release(flow: dict[str, object]) -> None:
    _, err = flow["accepted"]  # type: ignore[misc]
    said = " ".join(err.split())
    assert "nothing was changed, because:" in said and "index.rst:36: value same_as_forward" in said, said
    assert "with the same torch release and device" in said
