"""Make (or check) this environment's result set of the docs, kept in docs/_results.

Runs ``sphinx-build -b autocast-check`` over the docs in N shards side by side (as a CI job
matrix would, each its own process and output directory), merges the shards with
``python -m sphinx_autocast_demo merge``, and then either replaces this environment's kept
set with the result (the default: ``tox -e results-torch214``) or, with ``--check``, compares
the two and exits 1 when the kept set is stale: a result missing, or different (``.ci/run``).

Usage: python docs/_results/make.py [--shards N] [--check]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
DOCS = HERE.parent


def shards(count: int, work: Path) -> list[Path]:
    """Run the check builder in ``count`` shards at once; their result sets."""
    procs = []
    for index in range(1, count + 1):
        env = {**os.environ, "AUTOCAST_DEMO_SHARD": f"{index}/{count}"}
        # Every result is made afresh (force); the kept sets are still read, so that the
        # shards split the demos by the run times they hold.
        cmd = [sys.executable, "-m", "sphinx", "-q", "-b", "autocast-check",
               "-D", "autocast_demo_execute=force",
               "-d", str(work / f"doctrees{index}"), str(DOCS), str(work / f"shard{index}")]
        procs.append(subprocess.Popen(cmd, env=env))
    for proc in procs:
        # 1 is a record that does not hold in this release: the set keeps what torch did.
        if proc.wait() not in (0, 1):
            sys.exit(f"make.py: a shard failed with status {proc.returncode}")
    return [work / f"shard{i}" / "results" for i in range(1, count + 1)]


def entries(root: Path) -> dict[str, dict[str, object]]:
    """Key -> what a page says of each result: the outcome, the exception, which tensors
    differ, how each run ended and what it printed (as the checks compare it). Not the tensors'
    hashes nor the exact differences, which another CPU may round otherwise: they would make a
    kept set look stale where nothing a reader sees has changed."""
    from sphinx_autocast_demo.core.printed import normalize_output, snippets_lines

    out = {}
    for path in root.glob("??/*.json"):
        data = json.loads(path.read_text(encoding="utf-8"))
        verdict = data["verdict"]
        out[path.stem] = {
            "outcome": verdict["outcome"], "exception": verdict["exception"],
            "differ": sorted(d["name"] for d in verdict["diffs"] if not d["equal"]),
            # Without the compiler's warnings: inductor says them when it compiles a kernel,
            # not when it loads one from its disk cache, so they vary with the machine's cache.
            **{run: (data[run]["status"], snippets_lines(normalize_output(data[run]["output"])))
               if data[run] is not None else None  # (no eager run: :compare: none)
               for run in ("compiled", "eager")},
        }
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shards", type=int, default=2)
    parser.add_argument("--check", action="store_true", help="compare with the kept set")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        made = shards(args.shards, work)
        merged = work / "merged"
        done = subprocess.run([sys.executable, "-m", "sphinx_autocast_demo", "merge", str(merged),
                               *map(str, made)])
        if done.returncode:
            return done.returncode
        (env_dir,) = [p for p in merged.iterdir() if p.is_dir()]
        kept = HERE / env_dir.name
        if args.check:
            if not kept.is_dir():
                print(f"make.py: no kept set {kept}: run tox -e results-<release>", file=sys.stderr)
                return 1
            new, old = entries(env_dir), entries(kept)
            missing = sorted(set(new) - set(old))
            changed = sorted(k for k in set(new) & set(old) if new[k] != old[k])
            if missing or changed:
                print(f"make.py: the kept set {kept.name} is stale: {len(missing)} results "
                      f"missing, {len(changed)} different; make it again with tox -e "
                      "results-<release> and commit it", file=sys.stderr)
                return 1
            print(f"make.py: the kept set {kept.name} holds every result, as torch gives it now")
            return 0
        shutil.rmtree(kept, ignore_errors=True)
        shutil.copytree(env_dir, kept)
        print(f"make.py: {len(entries(kept))} results of {kept.name} in {kept}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
