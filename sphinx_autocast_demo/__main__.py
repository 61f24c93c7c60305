"""``python -m sphinx_autocast_demo merge OUT SET [SET ...]``: combine result sets.

Copies every environment of each SET (a directory that ``-b autocast-check`` wrote as
``<outdir>/results``, or an earlier merge) into OUT, validating every result as it is read.
Exits 1, after copying everything else, when two results for one key differ, two sets give one
label to different environments, or a shard of a split is in none of them.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .results import SetProblem, load, merge


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sphinx_autocast_demo",
                                     description="Tools for sphinx-autocast-demo's result sets.")
    commands = parser.add_subparsers(dest="command", required=True)
    join = commands.add_parser("merge", help="combine result sets (shards, environments) into one",
                               description=__doc__.split("\n\n")[1])
    join.add_argument("out", type=Path, help="the merged set (created if needed)")
    join.add_argument("sets", type=Path, nargs="+", help="result sets to copy into it")
    args = parser.parse_args(argv)
    written, problems = merge(args.out, args.sets)
    for problem in problems:
        print(f"merge: {problem}", file=sys.stderr)
    try:
        found = load([args.out]) if args.out.is_dir() else {}
    except SetProblem as exc:
        print(f"merge: {exc}", file=sys.stderr)
        return 1
    for label, env in found.items():
        shards = sorted({run.shard or "all" for run in env.runs})
        print(f"{label}: torch {env.environment.torch}, Python {env.environment.python}, "
              f"{env.environment.device}; runs {', '.join(shards)}; {env.made}")
    print(f"merge: {written} results into {args.out}" + (f", {len(problems)} problem(s)" if problems else ""))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
