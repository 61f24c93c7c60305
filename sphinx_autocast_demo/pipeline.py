"""The build's timeline, in one place: every Sphinx event the extension uses, in pipeline order.

::

    config-inited         configure    conf.py values, the accept mode,     core.sphinxconf, accept.rewrite,
                                       our static files, the cache out of   plan.cache
                                       the sources
    builder-inited        begin        the per-build record: planner,       engine.build, plan.planner,
                                       runner, result sets' digest          engine.execute, plan.environments
    env-get-outdated      outdated     which pages to read again            core.state, plan.planner
    env-before-read-docs  before_read  start the worker while Sphinx reads  engine.execute
    env-purge-doc / env-merge-info     the one state record                 core.state
      (reading)                        directives record demos              read.directives
    doctree-read          after_read   the titles the summary shows         present.summary
    env-updated           run          plan -> run -> compare -> check      plan.planner, plan.results,
                                       -> accept mode's rewrite -> warn     engine.execute, judge.compare,
                                                                            judge.check, accept.rewrite,
                                                                            report.console
    doctree-resolved      render_page  result tables, the summary matrix    present.render, present.matrix
    build-finished        finish       summary, what accept mode did,       report.console, accept.rewrite
                                       exit status

The ``autocast-check`` builder (report.builder) writes its reports in its own ``finish``, before
``build-finished``, and leaves the exit status to :func:`finish`.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sphinx.util import logging
from sphinx.util.logging import is_suppressed_warning

from . import accept
from .core import STATIC, __version__, config, conflines, i18n, sphinxconf
from .core.state import all_docs, merge, purge, state
from .core.subtypes import WARNING_TYPE, ours
from .engine import execute
from .engine.build import BUILD, Build, build
from .plan.cache import among_sources, cache_root
from .plan.environments import NamedSets
from .plan.planned import Stats
from .plan.planner import Planner
from .present import summary, tables, writers
from .read import directives
from .report import builder
from .report import console as report

logger = logging.getLogger(__name__)

if TYPE_CHECKING:
    from collections.abc import Sequence

    from docutils import nodes
    from sphinx.application import Sphinx
    from sphinx.config import Config
    from sphinx.environment import BuildEnvironment

    from .core.model import DemoResult
    from .plan.setfiles import SetProblem

#: This build's numbers (:class:`.report.Counts`) as JSON, in the doctree directory.
STATS = "autocast_demo_stats.json"


def setup(app: Sphinx) -> dict[str, Any]:
    sphinxconf.register(app)
    i18n.register(app)
    app.add_node(directives.results_placeholder)
    app.add_node(summary.summary_placeholder)
    app.add_directive("autocast-demo", directives.AutocastDemo)
    app.add_directive("autocast-demo-setup", directives.AutocastDemoSetup)
    app.add_directive("autocast-demo-summary", summary.AutocastDemoSummary)
    app.add_builder(builder.AutocastCheckBuilder)
    app.add_css_file("autocast_demo.css")
    app.add_js_file("autocast_demo.js")
    app.connect("config-inited", configure)
    app.connect("builder-inited", begin)
    app.connect("env-get-outdated", outdated)
    app.connect("env-before-read-docs", before_read)
    app.connect("env-purge-doc", lambda app, env, docname: purge(env, docname))
    app.connect("env-merge-info", lambda app, env, docnames, other: merge(env, docnames, other))
    app.connect("doctree-read", after_read)
    app.connect("env-updated", run)
    app.connect("doctree-resolved", render_page)
    app.connect("build-finished", finish)
    writers.setup(app)  # what LaTeX, Texinfo and plain text need of the results
    tables.setup(app)  # the results tables' nodes, as each builder writes them
    # env_version: raised whenever a type the environment pickles changes (core.state, and the
    # model's in a page's body), so that Sphinx starts a fresh one rather than meet it later.
    return {"version": __version__, "parallel_read_safe": True, "parallel_write_safe": True,
            "env_version": 10}  # 10: a page keeps its demos and results apart (core.state)


def configure(app: Sphinx, conf: Config) -> None:
    """Refuse a bad conf.py value or accept mode before anything is read."""
    sphinxconf.validate(app, conf)
    accept.validate()
    # Here, not at builder-inited: the environment of the last build is compared with the
    # configuration before builder-inited, and a path appended later would differ every time
    # ("The configuration has changed"), rewriting every page of an unchanged rebuild.
    if hasattr(conf, "html_static_path") and str(STATIC) not in conf.html_static_path:
        conf.html_static_path.append(str(STATIC))
    # The same for the result cache where it lies among the sources (beside conf.py, by
    # default): Sphinx would otherwise walk every entry of it, at every build.
    root, _ = cache_root(config.settings(conf).cache_dir, str(app.confdir), str(app.doctreedir))
    cache = among_sources(root, str(app.srcdir))
    if cache and cache not in conf.exclude_patterns:
        conf.exclude_patterns = [*conf.exclude_patterns, cache]


def begin(app: Sphinx) -> None:
    """The build's own record (not pickled: it holds the worker), and what the builder needs."""
    settings = config.settings(app.config)
    torch = execute.installed_torch()  # the one place the build asks which torch it checks with
    sets, stats = _named_sets(app, settings.results), Stats()
    planner = Planner(app, settings, torch, stats, sets, source=execute.torch_source())
    setattr(app, BUILD, Build(settings, torch, planner,
                              execute.Runner(app, settings, torch, stats), stats))
    state(app.env).global_setup = (str(app.confdir), settings.global_setup)
    report.show_warning_types(app)


def _named_sets(app: Sphinx, directories: Sequence[str]) -> NamedSets | None:
    if not any(directories):
        return None

    def said(problem: SetProblem) -> None:
        logger.warning(i18n.__("autocast-demo: {problem}; the pages show this build's results "
                               "only").format(problem=problem),
                       **ours("results"),
                       location=str(conflines.conf_line(str(app.confdir), "autocast_demo_results")))

    return NamedSets([Path(app.confdir, d) for d in directories if d], said)


def outdated(app: Sphinx, env: BuildEnvironment, added: set[str], changed: set[str],
             removed: set[str]) -> list[str]:
    """Re-read pages whose checks failed (so they fail again), whose results stand for a file,
    a variable or a package that changed since they were shown, and, after a torch upgrade, all."""
    b, docs = build(app), all_docs(env)
    b.edited = set(added) | set(changed)  # before_read() starts the worker early for them
    if state(env).fingerprint != b.planner.fingerprint() or not b.settings.execution.reuses:
        return [d for d, s in docs.items() if s.demoed and d not in removed]
    return [d for d, s in docs.items()
            if d not in removed and (s.failed or any(_warned(app, sub) for sub in s.subtypes)
                                     or b.planner.inputs_changed(s))]


def _warned(app: Sphinx, subtype: str) -> bool:
    """Does this build say a finding's warning (not silenced by suppress_warnings)?"""
    return not is_suppressed_warning(WARNING_TYPE, subtype, app.config.suppress_warnings)


def before_read(app: Sphinx, env: BuildEnvironment, docnames: list[str]) -> None:
    """Start the worker now if reading will need it, so torch imports while Sphinx reads.

    Re-read pages whose demos are all answered by the cache (a page re-read only to repeat its
    warnings) need no worker; an edited page needs one if its source mentions a demo. A page
    whose demos come from an included file is missed here and starts the worker after reading.
    """
    b = build(app)
    edited, b.edited = (set(docnames) if b.edited is None else b.edited), None
    if not builder.runs_demos(app.builder):
        return
    docs = all_docs(env)
    for docname in docnames:
        doc = docs.get(docname)
        if docname in edited:
            needed = _mentions_demo(env, docname)
        else:
            needed = doc is not None and any(b.planner.needs_run(d, doc) for d in doc.demos.values())
        if needed:
            b.runner.start()
            return


def _mentions_demo(env: BuildEnvironment, docname: str) -> bool:
    try:
        with open(env.doc2path(docname), "rb") as f:
            return b"autocast-demo" in f.read()
    except OSError:
        return True  # cannot tell: start early, the worse case is an unused worker


def after_read(app: Sphinx, doctree: nodes.document) -> None:
    summary.record_titles(app.env, doctree)


def run(app: Sphinx, env: BuildEnvironment) -> Sequence[str]:
    """After reading: plan, run, compare, check every demo without a result; warn at each."""
    b = build(app)
    try:
        return _run(app, env, b)
    finally:
        # After planning, which reads the result sets: one found unreadable then is in the
        # fingerprint, and the next build, unchanged or not, reads the pages and says it again.
        state(env).fingerprint = b.planner.fingerprint()


def _run(app: Sphinx, env: BuildEnvironment, b: Build) -> Sequence[str]:
    st = state(env)
    if not builder.runs_demos(app.builder):  # gettext, linkcheck...: nothing of the docs' code runs
        return []
    # A page with every result and no problem has nothing for this build, and is left unread
    # (core.state): an unchanged build unpickles no result. A shard needs every demo to split.
    docs = [doc for doc in st.docs.values() if b.settings.shard or not doc.settled]
    b.problems = [p for doc in docs for p in doc.problems]
    every = [(demo, doc) for doc in docs for demo in doc.demos.values()]
    b.mine = b.planner.mine(every) if b.settings.shard else None  # this shard's share
    todo = [(demo, doc) for demo, doc in every if demo.ident not in doc.results
            and (b.mine is None or (demo.docname, demo.ident) in b.mine)]
    if not todo and not accept.active():  # an unchanged build: nothing to plan, run or check
        b.runner.close()  # (one started for an edited page that holds no demo)
        return []
    from .judge import compare

    planned = b.planner.plan(todo)  # plan: the cache answers what it can
    for ran in b.runner.run(planned):  # run: the rest, in the worker
        ran.item.result = compare.verdict_of(ran)  # compare: compiled against eager
        b.planner.store(ran.item, ran.imports)
    b.runner.close()
    b.planner.after_runs(b.runner.device)
    for docname, path in b.planner.dependencies():  # an edit of one reads the page again
        _note_dependency(env, docname, path)
    b.results = [_checked(r) for r in b.planner.results(planned)]  # check: against the page
    for result in b.results:
        st.docs[result.demo.docname].results[result.demo.ident] = result
        st.docs[result.demo.docname].inputs[result.demo.ident] = b.planner.inputs_of(result.demo)
    rewritten = _accept(app, b)
    for result in b.results:
        _warn(app, result)
    report.budgets(app, b.results, b.stats, b.settings.budget, b.settings.build_budget)
    report.missing_environments(app, *b.planner.missing())
    # Summary pages show every demo's result: re-write them whenever any result is new.
    return [*rewritten, *(summary.summary_docs(env) if b.results or rewritten else [])]


def _accept(app: Sphinx, b: Build) -> list[str]:
    """Accept mode, before anything is said or written: the demos whose records it rewrote are
    judged again against the new records, so that this build's warnings, pages and exit status
    are those of the sources as they now are. The pages to write again (a page with a result
    kept from an earlier build is rewritten too, and Sphinx would not write it otherwise)."""
    if not accept.active():
        return []
    from .accept import rewrite

    demos = rewrite.write(app)
    docs = all_docs(app.env)
    for (docname, ident), demo in demos.items():
        old = docs[docname].results[ident]
        docs[docname].demos[ident] = demo
        docs[docname].results[ident] = _checked(replace(
            old, demo=demo, others=tuple(replace(other, demo=demo) for other in old.others)))
    b.results = [docs[r.demo.docname].results[r.demo.ident] for r in b.results]
    return sorted({docname for docname, _ in demos})


def _accept_finish(app: Sphinx, exc: Exception | None) -> None:
    if accept.active():
        from .accept import rewrite

        rewrite.finish(app, exc)


def _checked(result: DemoResult) -> DemoResult:
    """The check against the page, and the overlapping scoped records it met (check.conflicts)."""
    from .judge import check

    checked = check.check(result)
    overlaps = check.conflicts(checked)
    return replace(checked, findings=checked.findings + overlaps) if overlaps else checked


def _note_dependency(env: BuildEnvironment, docname: str, path: str) -> None:
    try:
        env.note_dependency(path, docname=docname)
    except TypeError:  # Sphinx 7.2-8.1: only for the document being read; this is what it does
        env.dependencies[docname].add(path)  # type: ignore[arg-type]


def _warn(app: Sphinx, result: DemoResult) -> None:
    for finding in result.findings:
        if finding.subtype not in ("engine", "environment"):  # said once for the whole build
            report.warn(finding, app)


def render_page(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    from .present import matrix, render  # (here: an unchanged build writes no page)

    b, shown = build(app), builder.runs_demos(app.builder)
    for part, name in writers.documents(doctree, docname):  # several in an assembled tree
        render.resolve(app, part, all_docs(app.env).get(name), shown, b.torch)  # type: ignore[arg-type]
    matrix.resolve(app, doctree, docname, shown, b.torch)


def finish(app: Sphinx, exc: Exception | None) -> None:
    """The report, accept mode, and the build's exit status: decided here and only here."""
    b = build(app)
    b.runner.close()
    if exc is not None:
        _accept_finish(app, exc)  # what it changed, or that it changed nothing
        return
    if app.builder.name in builder.OTHER_CHECKERS:
        report.unchecked_by(app, sum(len(s.demos) for s in all_docs(app.env).values()))
    counts = report.summarize(app, b.results, b.problems, b.stats, b.torch)
    report.write_counts(counts, Path(app.doctreedir) / STATS)
    if b.settings.timing_report:
        report.write_timings(app, b.stats)
    _accept_finish(app, exc)  # (its rewritten records were judged again, and hold)
    if (counts.failures and b.settings.fail_on_mismatch) or b.check_failed:
        # autocast-check fails whatever autocast_demo_fail_on_mismatch says: it is the check.
        app.statuscode = 1
