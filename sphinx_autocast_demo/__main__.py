"""``python -m sphinx_autocast_demo merge OUT SET [SET ...]``: combine result sets.
``python -m sphinx_autocast_demo stop-workers``: end the workers kept between builds.

``merge`` copies every environment of each SET (a directory that ``-b autocast-check`` wrote as
``<outdir>/results``, or an earlier merge) into OUT, validating every result as it is read.
Exits 1, after copying everything else, when two results for one key differ, two sets give one
label to different environments, a shard of a split is in none of them, or a set's file is a
symbolic link (never copied); exits 2, with one line, when OUT is a file or cannot be written.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .results import SetProblem, load, merge
from .text import one_line


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sphinx_autocast_demo",
                                     description="Tools for sphinx-autocast-demo's result sets.")
    commands = parser.add_subparsers(dest="command", required=True)
    join = commands.add_parser("merge", help="combine result sets (shards, environments) into one",
                               description=__doc__.split("\n\n")[1])
    join.add_argument("out", type=Path, help="the merged set (created if needed)")
    join.add_argument("sets", type=Path, nargs="+", help="result sets to copy into it")
    commands.add_parser("stop-workers", help="end the workers kept between builds "
                        "(autocast_demo_keep_worker) for this user now, not after their idle time")
    args = parser.parse_args(argv)
    if args.command == "stop-workers":
        return stop_workers()
    if args.out.exists() and not args.out.is_dir():
        print(f"merge: {args.out} is a file, not a directory: name a directory for the merged set",
              file=sys.stderr)
        return 2
    try:
        written, problems = merge(args.out, args.sets)
    except OSError as exc:  # an unwritable place, a full disk: one line, not a traceback
        where = exc.filename or args.out
        print(f"merge: {exc.strerror or exc}: {where} (merging into {args.out})", file=sys.stderr)
        return 2
    for problem in problems:  # (a set's text: one line each, never a workflow command)
        print(f"merge: {one_line(problem)}", file=sys.stderr)
    try:
        found = load([args.out]) if args.out.is_dir() else {}
    except SetProblem as exc:
        print(f"merge: {one_line(str(exc))}", file=sys.stderr)
        return 1
    for label, env in found.items():
        shards = sorted({run.shard or "all" for run in env.runs})
        print(one_line(f"{label}: torch {env.environment.torch}, Python {env.environment.python}, "
                       f"{env.environment.device}; runs {', '.join(shards)}; {env.made}"))
    print(f"merge: {written} results into {args.out}" + (f", {len(problems)} problem(s)" if problems else ""))
    return 1 if problems else 0


def stop_workers() -> int:
    from .engine.kept import KeptUnavailable, stop_all

    try:
        stopped = stop_all()
    except KeptUnavailable as exc:
        print(f"stop-workers: {exc}", file=sys.stderr)
        return 1
    print(f"stop-workers: {len(stopped)} kept worker(s) told to end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
