"""The ``sphinx-autocast-demo`` command (also ``python -m sphinx_autocast_demo``): the writer's
and the CI's tools around the builds.

- ``accept [--diff] SOURCEDIR [OUTDIR] [-- SPHINX-BUILD OPTION ...]``: a check build in accept
  mode (``AUTOCAST_DEMO_ACCEPT``), which rewrites the stale ``:expect:`` records.
- ``merge OUT SET [SET ...]``: combine result sets.
- ``list-workers``: show the workers kept between builds.
- ``stop-workers [--all] [DIR]``: end this project's kept workers.

``merge`` copies every environment of each SET (a directory that ``-b autocast-check`` wrote as
``<outdir>/results``, or an earlier merge) into OUT, validating every result as it is read.
Exits 1, after copying everything else, when two results for one key differ, two sets give one
label to different environments, a shard of a split is in none of them, or a set's file is a
symbolic link (never copied); exits 2, with one line, when OUT is a file or cannot be written.

Each failure of these tools is one line on stderr and a non-zero exit (accept's build reports
its own, as sphinx-build does): a user runs them from a shell or a CI step, where a traceback
buries the one sentence that says what to do.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from . import __version__
from .core.i18n import __, init_console, n__
from .core.text import one_line

PROG = "sphinx-autocast-demo"
#: As the CI guide's check build writes it, so that accept reuses that build's environment.
ACCEPT_OUTDIR = Path("_build", "check")
#: Imported by the extension's setup(): whether a build loaded the extension.
EXTENSION = "sphinx_autocast_demo.pipeline"


class _Help(argparse.RawDescriptionHelpFormatter):
    """One line per command in ``--help``: the help column clears the longest name, and the
    commands' header line (the metavar alone) is left out. The description and epilog keep
    their own line breaks (textwrap would break a command's name at its hyphen)."""

    def __init__(self, prog: str) -> None:
        super().__init__(prog, max_help_position=30)

    def add_argument(self, action: argparse.Action) -> None:
        super().add_argument(action)
        if isinstance(action, argparse._SubParsersAction):
            # argparse measures the commands' names at the group's indent, but prints them
            # one level further in: without this, a long name pushes its help to a second line.
            self._action_max_length += self._indent_increment

    def _format_action(self, action: argparse.Action) -> str:
        text = super()._format_action(action)
        if isinstance(action, argparse._SubParsersAction):
            return text.partition("\n")[2]
        return text


def parser(prog: str = PROG) -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(
        prog=prog, formatter_class=_Help,
        description=__("Tools for sphinx-autocast-demo, the Sphinx extension that checks the\n"
                       "torch.compile and autocast demos of your docs."),
        epilog=__("'{prog} COMMAND --help' says what one command takes.\n"
                  "'{command}' and 'python -m sphinx_autocast_demo' are the same command.").format(
                      prog=prog, command=PROG))
    top.add_argument("--version", action="version", version=f"sphinx-autocast-demo {__version__}")
    # (a lower-case metavar: argparse names it in "the following arguments are required")
    commands = top.add_subparsers(dest="command", required=True, metavar="command",
                                  title=__("commands"))
    # Each help line fits one line of an 80-column --help.
    accepting = commands.add_parser(
        "accept", help=__("rewrite stale :expect: records to what torch does now"),
        usage=f"{prog} accept [-h] [--diff] SOURCEDIR [OUTDIR] [-- SPHINX-BUILD OPTION ...]",
        description=__("Run the demos of SOURCEDIR (the directory of conf.py) in a check build "
                       "(sphinx-build -b autocast-check) in accept mode: every :expect: (and "
                       "recorded :expect-output:) that no longer holds is rewritten in its page "
                       "to what torch does now, and nothing else in the files changes. Review "
                       "the change with git diff. Nothing is written when a demo could not run. "
                       "The same as AUTOCAST_DEMO_ACCEPT=1 sphinx-build -b autocast-check "
                       "SOURCEDIR OUTDIR."),
        epilog=__("Options after -- go to sphinx-build, e.g. -- -D autocast_demo_timeout=600 "
                  "-j auto."))
    accepting.add_argument("--diff", action="store_true",
                           help=__("print what would change, as a unified diff, and write "
                                   "nothing (the build then fails on the stale records, as "
                                   "without accept)"))
    accepting.add_argument("source", type=Path, metavar="SOURCEDIR",
                           help=__("the docs (conf.py's directory)"))
    accepting.add_argument("outdir", type=Path, metavar="OUTDIR", nargs="?", default=ACCEPT_OUTDIR,
                           help=__("the check build's output (default: {outdir}, as the CI "
                                   "guide's)").format(outdir=ACCEPT_OUTDIR))
    # The module docstring's paragraph, as words of the catalog.
    merging = __(
        "merge copies every environment of each SET (a directory that -b autocast-check wrote as\n"
        "<outdir>/results, or an earlier merge) into OUT, validating every result as it is read.\n"
        "Exits 1, after copying everything else, when two results for one key differ, two sets give one\n"
        "label to different environments, a shard of a split is in none of them, or a set's file is a\n"
        "symbolic link (never copied); exits 2, with one line, when OUT is a file or cannot be written.")
    joining = commands.add_parser("merge", help=__("combine result sets (shards, environments) "
                                                   "into one"), description=merging)
    joining.add_argument("out", type=Path, metavar="OUT",
                         help=__("the merged set (created if needed)"))
    joining.add_argument("sets", type=Path, nargs="+", metavar="SET",
                         help=__("result sets to copy into it"))
    commands.add_parser("list-workers", help=__("show the workers kept between builds"),
                        description=__("Show the workers kept between builds "
                                       "(autocast_demo_keep_worker) for this user, and the "
                                       "projects they served."))
    stopping = commands.add_parser(
        "stop-workers", help=__("end this project's kept workers now"),
        description=__("End the workers kept between builds (autocast_demo_keep_worker) that "
                       "served a build of this project: one whose conf.py directory is DIR, "
                       "inside it or around it, now rather than after their idle time. The next "
                       "build starts a new one. A worker that also served another project ends "
                       "too."))
    stopping.add_argument("dir", type=Path, nargs="?", default=Path.cwd(), metavar="DIR",
                          help=__("the project (default: the current directory)"))
    stopping.add_argument("--all", action="store_true", help=__("every worker kept for this user"))
    return top


def main(argv: list[str] | None = None, prog: str = PROG) -> int:
    """The command line ``argv`` (default: the process's) run; its exit status."""
    argv = sys.argv[1:] if argv is None else list(argv)
    init_console()
    # Only accept passes options on; argparse alone would read them as its own.
    passed: list[str] = []
    if "--" in argv:
        cut = argv.index("--")
        argv, passed = argv[:cut], argv[cut + 1:]
    top = parser(prog)
    args = top.parse_args(argv)
    if passed and args.command != "accept":
        top.error(__("{command} passes nothing on to sphinx-build: leave out '-- {passed}'").format(
            command=args.command, passed=" ".join(passed)))
    try:
        if args.command == "accept":
            return accept(args.source, args.outdir, passed, diff=args.diff)
        if args.command == "list-workers":
            return list_workers()
        if args.command == "stop-workers":
            return stop_workers(None if args.all else args.dir)
        return merge(args.out, args.sets)
    except KeyboardInterrupt:
        print(__("{command}: interrupted").format(command=args.command), file=sys.stderr)
        return 130
    except OSError as exc:  # a file that cannot be read or written: which, and why
        where = f": {exc.filename}" if exc.filename else ""
        print(__("{command}: {error}{where}").format(command=args.command,
                                                     error=exc.strerror or exc, where=where),
              file=sys.stderr)
        return 2
    except Exception as exc:  # a bug of ours: still one line to report, not a traceback
        print(__("{command}: {error}: {message} (a bug in sphinx-autocast-demo {version}: "
                 "please report it with the command you ran)").format(
                     command=args.command, error=type(exc).__name__, message=one_line(str(exc)),
                     version=__version__), file=sys.stderr)
        return 1


def accept(source: Path, outdir: Path, passed: list[str], diff: bool = False) -> int:
    """A check build of ``source`` in accept mode, in this process; Sphinx's exit status."""
    from sphinx.cmd.build import build_main

    from .accept import ENV

    # Sphinx says these with a traceback and a request to report them to Sphinx.
    if not source.is_dir():
        print(__("accept: {source}: no such directory: name the directory of your docs' "
                 "conf.py").format(source=source), file=sys.stderr)
        return 2
    if not (source / "conf.py").is_file() and not {"-c", "--conf-dir", "-C", "--isolated"} & set(passed):
        print(__("accept: {source} has no conf.py: name the directory of your docs' conf.py "
                 "(or pass sphinx-build's -c after --)").format(source=source), file=sys.stderr)
        return 2
    before = os.environ.get(ENV)
    loaded = EXTENSION in sys.modules  # (a test's process may have set it up already)
    os.environ[ENV] = "diff" if diff else "1"  # the workers inherit it
    try:
        # -b first: a -b among the passed options (accept works with any builder) wins.
        status = build_main(["-b", "autocast-check", str(source), str(outdir), *passed])
    finally:
        if before is None:
            os.environ.pop(ENV, None)
        else:
            os.environ[ENV] = before
    if not loaded and EXTENSION not in sys.modules and (status == 0 or not _names_us(source)):
        # Without the extension, -b autocast-check is an unknown builder (Sphinx says so in a
        # traceback), and any other builder reads AUTOCAST_DEMO_ACCEPT nowhere and succeeds. A
        # build that failed for another reason (conf.py raised) may not have got so far.
        print(__("accept: the build of {source} did not load sphinx_autocast_demo, so nothing "
                 "was checked or rewritten: add it to extensions in its conf.py").format(
                     source=source), file=sys.stderr)
        return status or 2
    return status


def _names_us(source: Path) -> bool:
    try:
        return "sphinx_autocast_demo" in (source / "conf.py").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False


def merge(out: Path, sets: list[Path]) -> int:
    from .plan.results import load
    from .plan.results import merge as merge_sets
    from .plan.setfiles import SetProblem

    if out.exists() and not out.is_dir():
        print(__("merge: {out} is a file, not a directory: name a directory for the merged "
                 "set").format(out=out), file=sys.stderr)
        return 2
    try:
        written, problems = merge_sets(out, sets)
    except OSError as exc:  # an unwritable place, a full disk: one line, not a traceback
        where = exc.filename or out
        print(__("merge: {error}: {where} (merging into {out})").format(
            error=exc.strerror or exc, where=where, out=out), file=sys.stderr)
        return 2
    for problem in problems:  # (a set's text: one line each, never a workflow command)
        print(__("merge: {problem}").format(problem=one_line(problem)), file=sys.stderr)
    try:
        found = load([out]) if out.is_dir() else {}
    except SetProblem as exc:
        print(__("merge: {problem}").format(problem=one_line(str(exc))), file=sys.stderr)
        return 1
    for label, env in found.items():
        shards = sorted({run.shard or "all" for run in env.runs})
        print(one_line(__("{label}: torch {torch}, Python {python}, {device}; runs {shards}; "
                          "{made}").format(label=label, torch=env.environment.torch,
                                           python=env.environment.python,
                                           device=env.environment.device,
                                           shards=", ".join(shards), made=env.made)))
    results = n__("{n} result", "{n} results", written).format(n=written)
    if problems:
        print(n__("merge: {results} into {out}, {n} problem", "merge: {results} into {out}, {n} "
                  "problems", len(problems)).format(results=results, out=out, n=len(problems)))
    else:
        print(__("merge: {results} into {out}").format(results=results, out=out))
    return 1 if problems else 0


def list_workers() -> int:
    from .engine.kept import KeptUnavailable, workers

    try:
        found = workers()
    except KeptUnavailable as exc:
        print(__("list-workers: {problem}").format(problem=exc), file=sys.stderr)
        return 1
    for worker in found:
        state = (__("pid {pid}").format(pid=worker.pid) if worker.pid is not None
                 else __("starting (or stopped)"))
        print(__("{key}  {state}  served: {projects}").format(
            key=worker.key, state=state,
            projects=", ".join(worker.projects) or __("no sphinx-build")))
    print(n__("list-workers: {n} kept worker", "list-workers: {n} kept workers",
              len(found)).format(n=len(found)))
    return 0


def stop_workers(project: Path | None) -> int:
    """``project``: end the workers that served it; None: every one of this user's."""
    from .engine.kept import KeptUnavailable, stop, workers

    try:
        found = workers()
        chosen = found if project is None else [w for w in found if w.serves(project)]
        stopped = stop(chosen)
    except KeptUnavailable as exc:
        print(__("stop-workers: {problem}").format(problem=exc), file=sys.stderr)
        return 1
    also = sorted({p for w in stopped for p in w.elsewhere(project)}) if project is not None else []
    if also:  # one worker serves every project of the same environment
        print(__("stop-workers: they also served {projects}").format(projects=", ".join(also)))
    left = len(found) - len(stopped)
    ended = n__("stop-workers: {n} kept worker told to end", "stop-workers: {n} kept workers "
                "told to end", len(stopped)).format(n=len(stopped))
    if left:
        ended = n__("{ended}; {n} of other projects left (--all ends them too)",
                    "{ended}; {n} of other projects left (--all ends them too)", left).format(
                        ended=ended, n=left)
    print(ended)
    return 0
