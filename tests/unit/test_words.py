"""The extension's console words go through its catalog (core/i18n.py): every message a stage
logs, prints or stores in a finding is a ``__``/``n__`` (or ``said``/``n_msg``, said later)
call, never a bare literal that a catalog could not reach; a writer's mistake in a directive
(a ``SyntaxProblem``) is a ``said`` message too, said in the console's language in the log and
in the page's on the page; so is accept mode's reason not to rewrite a record (a ``Blocked``).
Pages: present's own tests. Demos' captions in a translated build: tests/build/test_i18n.py."""

from __future__ import annotations

import ast
import gettext
import pickle
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest
import sphinx.locale
from fakes import SRC, TEXT, WHERE, Logger, Loud, demo, ran, result

from sphinx_autocast_demo.accept import rewrite
from sphinx_autocast_demo.accept.newrecord import Blocked
from sphinx_autocast_demo.core.i18n import CATALOG, Message, in_console, msg, n_msg
from sphinx_autocast_demo.core.model import RunRecord, Verdict
from sphinx_autocast_demo.core.state import doc_state
from sphinx_autocast_demo.judge import run_errors
from sphinx_autocast_demo.read import directives, options, syntax
from sphinx_autocast_demo.read.sources import located

PACKAGE = Path(__file__).resolve().parents[2] / "sphinx_autocast_demo"
#: The stages whose messages this checks: the present stage's are page text (its own tests);
#: the worker child's travel as data and are said by the parent.
STAGES = ("read", "plan", "engine", "judge", "report", "accept", "pipeline.py", "cli.py",
          "core/config.py", "core/sphinxconf.py")
LOGGED = {"warning", "info", "error", "verbose", "debug", "critical"}
#: Called with the message as their first argument (``print``, an error that conf.py's check
#: raises and Sphinx prints, or an exception whose message is said later: a writer's mistake,
#: accept mode's reason not to rewrite a record, a ``.py`` file it cannot read).
SAID_BY = {"print", "ConfigError", "SyntaxProblem", "Blocked", "Unreadable"}
#: Functions that return a reason, said later (accept mode's why a demo is not rewritten).
SAYS_WHY = {"reason", "unsafe_in_python"}


def _is_literal(node: ast.expr) -> bool:
    """A str literal, an f-string, or a sum or %-format of them: words no catalog reaches."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str) and bool(node.value.strip())
    if isinstance(node, ast.JoinedStr):
        return True
    if isinstance(node, ast.BinOp):
        return _is_literal(node.left) or _is_literal(node.right)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in {
            "bold", "red", "for_log", "one_line"}:
        return any(_is_literal(a) for a in node.args)
    return False


def literal_messages(source: str) -> list[int]:
    """The lines of ``source`` where a message is a literal: the first argument of
    ``logger.<level>(...)``, ``print(...)``, ``ConfigError(...)``, ``SyntaxProblem(...)`` (a
    writer's mistake, said where it is logged and on the page), ``Blocked(...)`` or
    ``Unreadable(...)`` (why accept mode will not rewrite a record, said where it prints), a
    ``Finding``'s ``message=``, a ``return`` of :data:`SAYS_WHY`'s functions."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef) and node.name in SAYS_WHY:
            found += [ret.lineno for ret in ast.walk(node) if isinstance(ret, ast.Return)
                      and ret.value is not None and _is_literal(ret.value)]
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        said_by = ((isinstance(func, ast.Attribute) and func.attr in LOGGED
                    and isinstance(func.value, ast.Name) and func.value.id == "logger")
                   or (isinstance(func, ast.Name) and func.id in SAID_BY)
                   or (isinstance(func, ast.Attribute) and func.attr in SAID_BY))
        if said_by and node.args and _is_literal(node.args[0]):
            found.append(node.lineno)
        if isinstance(func, ast.Name) and func.id == "Finding":
            found += [node.lineno for kw in node.keywords
                      if kw.arg == "message" and _is_literal(kw.value)]
    return found


def _files() -> list[Path]:
    files: list[Path] = []
    for stage in STAGES:
        path = PACKAGE / stage
        files += [path] if path.is_file() else sorted(path.rglob("*.py"))
    return [f for f in files if "child" not in f.parts]


def test_no_stage_logs_prints_or_stores_a_message_the_catalog_cannot_reach():
    bare = [f"{path.relative_to(PACKAGE)}:{line}" for path in _files()
            for line in literal_messages(path.read_text(encoding="utf-8"))]
    assert not bare, "wrap these messages in __() / n__() (msg() where stored): " + ", ".join(bare)


@pytest.mark.parametrize("code", [
    'logger.warning(f"autocast-demo: {x} broke", **ours("engine"))',
    'logger.info("autocast-demo: " + text)',
    'print(f"merge: {out}", file=sys.stderr)',
    'Finding(severity="error", subtype="crash", location=here, message=f"died: {why}")',
    'logger.info(bold(f"{n} demos"))',
    'raise SyntaxProblem(f"value {name!r} is given twice")',
    'raise syntax.SyntaxProblem("no values given")',
    'raise located(syntax.SyntaxProblem(":name: " + name), line)',
    'raise Blocked(f"value {name} has no outcome to record ({note})")',
    'raise Blocked("the file changed since the build read it: build again") from None',
    'raise newrecord.Blocked("its :expect-output: has scoped blocks")',
    'raise ConfigError(f"{where}: {name} = {value!r} must be {rule}")',
    'raise ConfigError(f"{ENV}={value!r}: use 1 " "or 0") from None',
    'raise Unreadable(f"{path} cannot be read: {err}") from None',
    'def reason(source): return f"{path} defines no {name}"',
    'def unsafe_in_python(path, changes): return "the new record has a backslash"',
])
def test_the_scan_finds_a_message_that_bypasses_the_catalog(code):
    assert literal_messages(code) == [1]


@pytest.mark.parametrize("code", [
    'logger.warning(__("autocast-demo: {x} broke").format(x=x), **ours("engine"))',
    'logger.info(n__("{n} demo", "{n} demos", n).format(n=n))',
    'print(message, file=sys.stderr)',
    'Finding(severity="error", subtype="crash", location=here, message=msg("died: {why}", why=w))',
    'raise SyntaxProblem(msg("value {value} is given twice", value=repr(name)))',
    'raise located(syntax.SyntaxProblem(taken_by), line)',
    'raise Blocked(msg("value {value} has no outcome to record", value=name))',
    'raise ConfigError(__("{where}: {option} = {value}").format(where=w, option=o, value=v))',
    'def reason(source): return msg("it is not a docstring")',
    'def unsafe_in_python(path, changes): return ""',
])
def test_the_scan_lets_words_through_the_catalog(code):
    assert literal_messages(code) == []


def test_a_stored_message_is_english_text_and_keeps_its_words_to_say_later():
    inner = n_msg("value {values}", "values {values}", 2, values="off, default")
    message = msg("{values}: {what}", values=inner, what="broke")
    assert message == "values off, default: broke" and isinstance(message, str)
    again = pickle.loads(pickle.dumps(message))  # as the environment keeps a finding
    assert isinstance(again, Message) and again.msgid == "{values}: {what}"
    assert in_console(again) == "values off, default: broke"  # no catalog: English
    assert in_console("plain") == "plain"


def test_said_plurals_follow_the_count():
    assert n_msg("{n} demo", "{n} demos", 1, n=1) == "1 demo"
    assert n_msg("{n} demo", "{n} demos", 2, n=2) == "2 demos"


class _Wrapped(gettext.NullTranslations):
    """A page catalog: every msgid as ``<message>``."""

    def gettext(self, message: str) -> str:
        return f"<{message}>"


def test_a_directives_syntax_problem_is_said_in_the_consoles_language_and_the_pages(monkeypatch):
    with pytest.raises(syntax.SyntaxProblem) as raised:
        syntax.parse_values("same_as_forward, same_as_forward", "cpu", "bfloat16")
    problem = located(raised.value, 5, "values")  # as AutocastDemo.demo() names the option
    assert str(problem) == ":values: value 'same_as_forward' is given twice"  # no catalog: English
    logged = Logger()
    monkeypatch.setattr(directives, "logger", logged)
    monkeypatch.setitem(sphinx.locale.translators, ("console", CATALOG), Loud())
    monkeypatch.setitem(sphinx.locale.translators, ("general", CATALOG), _Wrapped())
    directive = SimpleNamespace(source_path="/docs/index.rst", doc_line=3, name="autocast-demo",
                                env=SimpleNamespace(docname="index"))
    nodes = directives._Base.problem(directive, problem.args[0], problem.line)  # type: ignore[arg-type, attr-defined]
    assert logged.texts("warning") == ["autocast-demo: :values: VALUE 'same_as_forward' IS GIVEN TWICE"]
    assert nodes[0].astext() == ("<This demo was not checked: <:values: <value 'same_as_forward' "
                                 "is given twice>>>")  # the page's words, in the page's language
    finding = doc_state(directive.env, "index").problems[0]  # type: ignore[arg-type]
    assert finding.message == "autocast-demo: :values: value 'same_as_forward' is given twice"
    assert in_console(finding.message) == logged.texts("warning")[0]  # kept as words, said when printed


def test_accepts_reason_not_to_rewrite_is_said_in_the_consoles_language(monkeypatch, tmp_path):
    page = tmp_path / "index.rst"
    page.write_text("\n".join(TEXT) + "\n", encoding="utf-8")
    timed_out = result(demo(), (Verdict("error", note="it timed out"), *ran("matches")[1:]),
                       ran("matches"))
    where = replace(WHERE, path=str(page))
    timed_out = replace(timed_out, demo=replace(timed_out.demo, source_map=where))
    app = SimpleNamespace(env=SimpleNamespace(), builder=SimpleNamespace(name="html"))
    doc_state(app.env, "index").results["d"] = timed_out  # type: ignore[arg-type]
    monkeypatch.setenv(rewrite.ENV, "1")
    with pytest.raises(Blocked) as raised:  # no catalog: English, as the tests of accept read it
        rewrite.Files().take(timed_out)
    assert str(raised.value) == "value same_as_forward has no outcome to record (it timed out)"
    logged = Logger()
    monkeypatch.setattr(rewrite, "logger", logged)
    monkeypatch.setitem(sphinx.locale.translators, ("console", CATALOG), Loud())
    assert rewrite.write(app) == {}  # type: ignore[arg-type]
    rewrite.finish(app, None)  # type: ignore[arg-type]
    assert logged.texts("warning") == [
        "AUTOCAST_DEMO_ACCEPT: NOTHING WAS CHANGED, BECAUSE:\n  "
        f"{SRC}:1: VALUE same_as_forward HAS NO OUTCOME TO RECORD (it timed out)"]
    assert page.read_text(encoding="utf-8") == "\n".join(TEXT) + "\n"  # nothing written


def test_a_number_options_rule_is_said_with_the_message(monkeypatch):
    timeout = next(o for o in options.DEMO if o.name == "timeout")
    with pytest.raises(syntax.SyntaxProblem) as raised:
        options.read(timeout, {"timeout": "-1"}, None, default=120.0)  # type: ignore[arg-type]
    message = raised.value.args[0]
    assert message == (":timeout: '-1' must be a number of seconds > 0 and at most 86400 (24 h); "
                       "leave the option out to use autocast_demo_timeout (120 s)")
    monkeypatch.setitem(sphinx.locale.translators, ("console", CATALOG), Loud())
    assert in_console(message) == (":timeout: '-1' MUST BE A NUMBER OF SECONDS > 0 AND AT MOST "
                                   "86400 (24 H); LEAVE THE OPTION OUT TO USE autocast_demo_timeout "
                                   "(120 S)")


@pytest.mark.parametrize(("run", "said"), [
    (RunRecord(status="timeout", detail="stopped after its timeout of 120 s"),
     "IT WAS STOPPED AFTER ITS TIMEOUT OF 120 S, WITH EVERY PROCESS"),
    (RunRecord(status="crashed", detail="the process was killed by SIGSEGV", killed_by="SIGSEGV"),
     "DIED: THE PROCESS WAS KILLED BY SIGSEGV (A SEGMENTATION FAULT"),
    (RunRecord(status="crashed", detail="the process exited with status 3 before the snippet "
               "finished", exit_status=3),
     "DIED: THE PROCESS EXITED WITH STATUS 3 BEFORE THE SNIPPET FINISHED (OS._EXIT()"),
])
def test_how_a_run_that_did_not_finish_ended_is_said_in_the_consoles_language(monkeypatch, run, said):
    # From the record's facts, as the page says it (tests/unit/test_page_words.py): its detail
    # is the engine's English, which a Russian console printed inside a Russian sentence.
    stopped = result(demo(), (Verdict("error"), run, RunRecord(status="ok")), ran("matches"))
    finding = run_errors.run_error(stopped, stopped.variants[0])
    assert finding is not None and run.detail in finding.message  # no catalog: English
    monkeypatch.setitem(sphinx.locale.translators, ("console", CATALOG), Loud())
    assert said in in_console(finding.message)
