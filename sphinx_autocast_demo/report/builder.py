"""``sphinx-build -b autocast-check``: run every demo, write no pages, report for CI.

Like ``-b doctest``: the build reads every page (so every demo runs, or comes from the cache),
resolves each doctree (the placeholders still render, nothing is written), then writes
``junit.xml`` (one test case per demo and value, with file and line) and
``autocast-check.json`` to the output directory, and exits 1 on any failure. Under GitHub
Actions each failure is also printed as an ``::error file=...,line=...::`` annotation.
"""

from __future__ import annotations

import json
import os
import sys
import xml.etree.ElementTree as ET
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from sphinx.builders import Builder
from sphinx.util import logging

from ..core import __version__
from ..core.i18n import __, n__
from ..core.publish import in_workspace, publish, without_paths, workspace
from ..core.state import all_docs
from ..core.subtypes import Subtype, ours
from ..engine.build import build
from .console import Counts, counts

# The judge and the result sets' records are imported where this builder uses them: every
# build registers it, and an html build has no use for them when it checks nothing.

if TYPE_CHECKING:
    from docutils import nodes
    from sphinx.application import Sphinx

    from ..judge.judgement import Column, Value
    from ..plan.cache import Entry

logger = logging.getLogger(__name__)

JUNIT = "junit.xml"
REPORT = "autocast-check.json"

#: Builders without document output (``format`` empty) that still run the demos: their job is
#: to check the docs (``dummy``: Sphinx's "parse and check" builder, used to lint with ``-W``).
CHECKING_BUILDERS = ("autocast-check", "dummy")


#: Builders that check the docs' own code, but not the demos: a CI that runs only
#: ``make doctest`` must learn that the demos were not checked (:func:`.report.unchecked_by`).
OTHER_CHECKERS = ("doctest",)


def runs_demos(builder: Builder) -> bool:
    """Does a build with ``builder`` run the docs' code (never gettext or linkcheck)?"""
    # Only one that writes documents (Sphinx's ``format``) or checks them: a translator
    # extracting messages must not execute the docs' code.
    return bool(builder.format) or builder.name in CHECKING_BUILDERS


@dataclass(frozen=True)
class Case:
    """One test case: a demo under one value, or a directive that could not be read."""

    suite: str  # the docname
    name: str  # ``ident[value]``
    file: str
    line: int
    status: str  # passed, failed, error, skipped
    message: str = ""
    kind: Subtype | Literal[""] = ""  # the finding's subtype
    seconds: float = 0.0
    output: str = ""
    value: str = ""
    outcome: str = ""  # what compiled did against eager (``Verdict.text``)
    expected: str | None = None


class AutocastCheckBuilder(Builder):
    name = "autocast-check"
    epilog = "Demo results are in %(outdir)s/" + JUNIT + " and %(outdir)s/" + REPORT + "."
    allow_parallel = True

    def init(self) -> None:
        pass

    def get_outdated_docs(self) -> set[str]:
        return set(self.env.found_docs)

    def get_target_uri(self, docname: str, typ: str | None = None) -> str:
        return ""

    def prepare_writing(self, docnames: set[str]) -> None:  # type: ignore[override]
        pass

    def write_doc(self, docname: str, doctree: nodes.document) -> None:
        pass

    def finish(self) -> None:
        from ..judge.judgement import judge_all
        from ..plan import results

        app = _sphinx_app(self)
        cases = collect_cases(app)
        out = Path(self.outdir)
        out.mkdir(parents=True, exist_ok=True)
        write_junit(cases, out / JUNIT)
        b = build(app)
        stats = counts(judge_all(b.results, b.torch), b.problems, b.stats)
        write_json(cases, out / REPORT, b.torch, stats)
        written = write_results(app, out / results.OUTPUT)
        if os.environ.get("GITHUB_ACTIONS") == "true":
            annotate(cases)
        failed = [c for c in cases if c.status in ("failed", "error")]
        logger.info(__("autocast-check: {cases}, {failed} failed; reports in {junit} and "
                       "{report}; {results} of {environment} in {directory}").format(
            cases=n__("{n} case", "{n} cases", len(cases)).format(n=len(cases)),
            failed=len(failed), junit=out / JUNIT, report=out / REPORT,
            results=n__("{n} result", "{n} results", written).format(n=written),
            environment=repr(b.planner.here.label), directory=out / results.OUTPUT))
        # The exit status is decided at the end of the build (pipeline.finish).
        build(app).check_failed = len(failed)


def _sphinx_app(builder: Builder) -> Sphinx:
    # Sphinx 9 deprecates ``Builder.app`` for ``_app``; Sphinx 7.2 has only ``app``.
    app: Sphinx = getattr(builder, "_app", None) or builder.app
    return app


def write_results(app: Sphinx, directory: Path) -> int:
    """This build's share of the results, checked with the installed torch, as a result set
    (``<outdir>/results``); returns how many. Results the build could not check, and failed
    runs (which the cache does not keep either), are left out: where the set has no result,
    a page built from it says so."""
    from ..judge.judgement import judge
    from ..plan import results
    from ..plan.setfiles import SetProblem

    b = build(app)
    entries: dict[str, Entry] = {}
    for state in all_docs(app.env).values():
        for ident, demo in state.demos.items():
            result = state.results.get(ident)
            if result is None or (b.mine is not None and (demo.docname, ident) not in b.mine):
                continue
            here = judge(result, b.torch).here
            if here.source != "build":  # a result set's, not this build's own
                continue
            codes = state.codes_for(demo)
            for value in here.values:
                vr = value.result
                if not value.checked or vr.verdict.outcome == "error":
                    continue
                key, entry = b.planner.for_set(demo, codes, vr, result.torch_version)
                entries[key] = entry
    run = results.RunInfo(shard=b.settings.shard, command=command(), date=results.today())
    try:
        results.write(directory, b.planner.here, run, entries)
    except (OSError, SetProblem) as exc:
        logger.warning(__("autocast-check: cannot write the result set: {error}").format(error=exc),
                       **ours("results"))
        return 0
    return len(entries)


#: sphinx-build options whose value is a path (left out of a result set's command).
_PATH_OPTIONS = ("-d", "-c", "-w", "--doctree-dir", "--conf-dir", "--warning-file")


def command() -> str:
    """How this build was started, for a result set's reader: ``AUTOCAST_DEMO_COMMAND`` (a
    CI job or tox env names itself), else sphinx-build's options without any path or shard.
    Either way no absolute path of this machine: a path in the workspace (GitHub's, else the
    working directory) is kept relative to it, any other as ``<path>``, since the command is
    shown on every page built from the set (``-D autocast_demo_cache_dir="$PWD/..."``)."""
    base = workspace()
    named = os.environ.get("AUTOCAST_DEMO_COMMAND")
    if named:
        return without_paths(named, base)
    words, args = ["sphinx-build"], iter(sys.argv[1:])
    for arg in args:
        if arg in _PATH_OPTIONS or arg.startswith(tuple(o + "=" for o in _PATH_OPTIONS)):
            if "=" not in arg:
                next(args, None)  # and its value
        elif arg in ("-b", "-D", "-j", "-t"):
            value = next(args, "")
            if not value.startswith("autocast_demo_shard"):
                words += [arg, value]
        elif arg.startswith("-D") and arg[2:].startswith("autocast_demo_shard"):
            continue
        elif arg.startswith("-"):
            words.append(arg)
    return without_paths(" ".join(words), base)


def collect_cases(app: Sphinx) -> list[Case]:
    from ..judge.judgement import judge

    torch, mine = build(app).torch, build(app).mine
    cases: list[Case] = []
    for docname, state in sorted(all_docs(app.env).items()):
        for problem in state.problems:
            where = problem.location
            cases.append(Case(suite=docname, name=f"directive at line {where.line}",
                              file=in_workspace(where.path), line=where.line, status="error",
                              message=publish(problem.message, app), kind=problem.subtype))
        for ident, demo in state.demos.items():
            result = state.results.get(ident)
            if mine is not None and (docname, ident) not in mine:
                continue  # another shard's: its own report has it
            if result is None:
                cases.append(Case(suite=docname, name=ident, file=in_workspace(demo.code.source),
                                  line=demo.lineno, status="error", kind="not-run",
                                  message="the demo was not run in this build"))
                continue
            judged = judge(result, torch)
            for column in judged.columns:
                environment = column.environment
                label = f" ({environment.label})" if judged.several and environment else ""
                cases.extend(replace(case, name=case.name + label,
                                     message=publish(case.message, app),
                                     output=publish(case.output, app))
                             for case in (_variant_case(column, value) for value in column.values))
    return cases


def _variant_case(column: Column, value: Value) -> Case:
    """Failed only for a record that the build checked and found broken; never passed unchecked.

    A run that did not finish (timeout, crash, refused) is an error; a value that was not
    checked by choice (execution off, CUDA skipped, another torch's cached result) is skipped.
    """
    demo, name, vr = column.result.demo, value.name, value.result
    failing = [f for f in value.findings if f.failed]
    base = Case(suite=demo.docname, name=f"{demo.ident}[{name}]", file=in_workspace(demo.code.source),
                line=demo.lineno, status="passed", value=name, outcome=vr.verdict.text,
                expected=str(value.expected) if value.expected else None,
                seconds=vr.seconds, output=vr.compiled.output)
    if value.error or value.record == "broken":
        where = failing[0].location
        return replace(base, file=in_workspace(where.path), line=where.line,
                       status="error" if value.error else "failed",
                       message="\n\n".join(f.message for f in failing), kind=failing[0].subtype)
    if value.why is not None:
        return replace(base, status="skipped", kind="not-run",
                       message=f"not checked in this build: {value.why.text}")
    if value.record == "unrecorded":
        return replace(base, status="skipped", kind="missing-expectation",
                       message=f"no recorded expectation for {name}; torch says: {vr.verdict.text}")
    return replace(base, line=demo.expect_line)


def write_junit(cases: list[Case], path: Path) -> None:
    """The JUnit XML dialect that Jenkins, GitLab and the GitHub test-report actions read."""
    root = ET.Element("testsuites", name="autocast-demo")
    suites: dict[str, ET.Element] = {}
    for case in cases:
        suite = suites.get(case.suite)
        if suite is None:
            suite = suites[case.suite] = ET.SubElement(root, "testsuite", name=case.suite,
                                                       file=case.file)
        element = ET.SubElement(suite, "testcase", name=case.name, classname=case.suite,
                                file=case.file, line=str(case.line), time=f"{case.seconds:.3f}")
        first_line = case.message.splitlines()[0] if case.message else ""
        if case.status == "failed":
            ET.SubElement(element, "failure", message=first_line, type=case.kind).text = case.message
        elif case.status == "error":
            ET.SubElement(element, "error", message=first_line, type=case.kind).text = case.message
        elif case.status == "skipped":
            ET.SubElement(element, "skipped", message=first_line)
        if case.output:
            ET.SubElement(element, "system-out").text = case.output
    for element in [root, *suites.values()]:
        mine = [c for c in cases if element is root or c.suite == element.get("name")]
        element.set("tests", str(len(mine)))
        for status, attr in (("failed", "failures"), ("error", "errors"), ("skipped", "skipped")):
            element.set(attr, str(sum(c.status == status for c in mine)))
        element.set("time", f"{sum(c.seconds for c in mine):.3f}")
    ET.indent(root)
    ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)


def write_json(cases: list[Case], path: Path, torch: str, stats: Counts | None = None) -> None:
    statuses = {s: sum(c.status == s for c in cases) for s in ("passed", "failed", "error", "skipped")}
    data = {
        "format": 1,
        "extension": __version__,
        "torch": torch,
        "summary": {"cases": len(cases), **statuses},
        # What this build ran and took from the cache (report.Counts).
        "stats": asdict(stats or Counts()),
        "cases": [{"doc": c.suite, "name": c.name, "value": c.value, "file": c.file,
                   "line": c.line, "status": c.status, "outcome": c.outcome,
                   "expected": c.expected, "kind": c.kind, "message": c.message,
                   "seconds": round(c.seconds, 4)} for c in cases],
    }
    path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")


def _escape(text: str, prop: bool = False) -> str:
    # The workflow-command escapes: a property also may not contain ':' or ','.
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return text.replace(":", "%3A").replace(",", "%2C") if prop else text


def annotate(cases: list[Case]) -> None:
    """GitHub Actions workflow commands: an annotation on the diff at each failing line."""
    for case in cases:
        if case.status not in ("failed", "error"):
            continue
        title = _escape(f"autocast-demo {case.kind}: {case.name}", prop=True)
        sys.stdout.write(f"::error file={_escape(case.file, prop=True)},line={case.line},"
                         f"title={title}::{_escape(case.message)}\n")
    sys.stdout.flush()
