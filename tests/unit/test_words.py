"""The extension's console words go through its catalog (core/i18n.py): every message a stage
logs, prints or stores in a finding is a ``__``/``n__`` (or ``said``/``n_said``, said later)
call, never a bare literal that a catalog could not reach. Pages: present's own tests. Demos'
captions in a translated build: tests/build/test_i18n.py."""

from __future__ import annotations

import ast
import pickle
from pathlib import Path

import pytest

from sphinx_autocast_demo.core.i18n import Said, in_console, n_said, said

PACKAGE = Path(__file__).resolve().parents[2] / "sphinx_autocast_demo"
#: The stages whose messages this checks: the present stage's are page text (its own tests);
#: the worker child's travel as data and are said by the parent.
STAGES = ("read", "plan", "engine", "judge", "report", "accept", "pipeline.py", "cli.py")
LOGGED = {"warning", "info", "error", "verbose", "debug", "critical"}


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
    ``logger.<level>(...)`` or ``print(...)``, a ``Finding``'s ``message=``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        said_by = ((isinstance(func, ast.Attribute) and func.attr in LOGGED
                    and isinstance(func.value, ast.Name) and func.value.id == "logger")
                   or (isinstance(func, ast.Name) and func.id == "print"))
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
    assert not bare, "wrap these messages in __() / n__() (said() where stored): " + ", ".join(bare)


@pytest.mark.parametrize("code", [
    'logger.warning(f"autocast-demo: {x} broke", **ours("engine"))',
    'logger.info("autocast-demo: " + text)',
    'print(f"merge: {out}", file=sys.stderr)',
    'Finding(severity="error", subtype="crash", location=here, message=f"died: {why}")',
    'logger.info(bold(f"{n} demos"))',
])
def test_the_scan_finds_a_message_that_bypasses_the_catalog(code):
    assert literal_messages(code) == [1]


@pytest.mark.parametrize("code", [
    'logger.warning(__("autocast-demo: {x} broke").format(x=x), **ours("engine"))',
    'logger.info(n__("{n} demo", "{n} demos", n).format(n=n))',
    'print(message, file=sys.stderr)',
    'Finding(severity="error", subtype="crash", location=here, message=said("died: {why}", why=w))',
])
def test_the_scan_lets_words_through_the_catalog(code):
    assert literal_messages(code) == []


def test_a_stored_message_is_english_text_and_keeps_its_words_to_say_later():
    inner = n_said("value {values}", "values {values}", 2, values="off, default")
    message = said("{values}: {what}", values=inner, what="broke")
    assert message == "values off, default: broke" and isinstance(message, str)
    again = pickle.loads(pickle.dumps(message))  # as the environment keeps a finding
    assert isinstance(again, Said) and again.msgid == "{values}: {what}"
    assert in_console(again) == "values off, default: broke"  # no catalog: English
    assert in_console("plain") == "plain"


def test_said_plurals_follow_the_count():
    assert n_said("{n} demo", "{n} demos", 1, n=1) == "1 demo"
    assert n_said("{n} demo", "{n} demos", 2, n=2) == "2 demos"
