"""``python -m sphinx_autocast_demo merge OUT SET [SET ...]``: combine result sets.
``python -m sphinx_autocast_demo list-workers``: show the workers kept between builds.
``python -m sphinx_autocast_demo stop-workers [--all] [DIR]``: end this project's kept workers.

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

from . import __version__
from .core.text import one_line
from .plan.results import SetProblem, load, merge


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sphinx_autocast_demo",
                                     description="Tools for sphinx-autocast-demo's result sets.")
    commands = parser.add_subparsers(dest="command", required=True)
    join = commands.add_parser("merge", help="combine result sets (shards, environments) into one",
                               description=__doc__.split("\n\n")[1])
    join.add_argument("out", type=Path, help="the merged set (created if needed)")
    join.add_argument("sets", type=Path, nargs="+", help="result sets to copy into it")
    parser.add_argument("--version", action="version", version=f"sphinx-autocast-demo {__version__}")
    commands.add_parser("list-workers", help="show the workers kept between builds "
                        "(autocast_demo_keep_worker) for this user, and the projects they served")
    stopping = commands.add_parser(
        "stop-workers", help="end this project's kept workers now, not after their idle time",
        description="End the workers kept between builds (autocast_demo_keep_worker) that served "
        "a build of this project: one whose conf.py directory is DIR, inside it or around it. "
        "The next build starts a new one. A worker that also served another project ends too.")
    stopping.add_argument("dir", type=Path, nargs="?", default=Path.cwd(),
                          help="the project (default: the current directory)")
    stopping.add_argument("--all", action="store_true", help="every worker kept for this user")
    args = parser.parse_args(argv)
    if args.command == "list-workers":
        return list_workers()
    if args.command == "stop-workers":
        return stop_workers(None if args.all else args.dir)
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


def list_workers() -> int:
    from .engine.kept import KeptUnavailable, workers

    try:
        found = workers()
    except KeptUnavailable as exc:
        print(f"list-workers: {exc}", file=sys.stderr)
        return 1
    for worker in found:
        state = f"pid {worker.pid}" if worker.pid is not None else "starting (or stopped)"
        print(f"{worker.key}  {state}  served: {', '.join(worker.projects) or 'no sphinx-build'}")
    print(f"list-workers: {len(found)} kept worker(s)")
    return 0


def stop_workers(project: Path | None) -> int:
    """``project``: end the workers that served it; None: every one of this user's."""
    from .engine.kept import KeptUnavailable, stop, workers

    try:
        found = workers()
        chosen = found if project is None else [w for w in found if w.serves(project)]
        stopped = stop(chosen)
    except KeptUnavailable as exc:
        print(f"stop-workers: {exc}", file=sys.stderr)
        return 1
    also = sorted({p for w in stopped for p in w.elsewhere(project)}) if project is not None else []
    if also:  # one worker serves every project of the same environment
        print(f"stop-workers: they also served {', '.join(also)}")
    left = len(found) - len(stopped)
    print(f"stop-workers: {len(stopped)} kept worker(s) told to end"
          + (f"; {left} of other projects left (--all ends them too)" if left else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
