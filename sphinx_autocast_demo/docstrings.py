"""Demos in docstrings: where their lines are in the ``.py`` file.

autodoc names a docstring's lines ``path/mod.py:docstring of mod.func`` and numbers them from the
docstring's first line after its own processing (napoleon rewrites sections, so its numbers
drift from the file's by a line or two). A directive's own lines stay together and in order in
every such processing, only dedented: found once in the file, they give one offset from the
docstring's numbering to the file's. Warnings then point at the file's line, and accept mode
edits the file.
"""

from __future__ import annotations

import ast
import re

#: The source name autodoc gives a docstring's lines.
DOCSTRING_SOURCE = re.compile(r"^(?P<path>.+\.pyw?):docstring of (?P<name>.+)$")
_QUOTES = re.compile(r"^[rRuUbBfF]{0,2}(\"\"\"|''')|(\"\"\"|''')$")


def split_source(source: str) -> tuple[str, str] | None:
    """``mod.py:docstring of mod.func`` -> (``mod.py``, ``mod.func``); None for a page."""
    match = DOCSTRING_SOURCE.match(source)
    return (match.group("path"), match.group("name")) if match else None


def _docstring_span(tree: ast.Module, name: str) -> tuple[int, int] | None:
    """The 1-based first and last line of the docstring of ``name`` (``mod.Class.method``),
    trying every module prefix the dotted name may have."""
    parts = name.split(".")
    for start in range(len(parts) + 1):
        node: ast.AST | None = tree
        for part in parts[start:]:
            body = getattr(node, "body", [])
            node = next((n for n in body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                           ast.ClassDef)) and n.name == part), None)
            if node is None:
                break
        body = getattr(node, "body", None)
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            return body[0].value.lineno, body[0].value.end_lineno or body[0].value.lineno
    return None


def _plain(line: str) -> str:
    return _QUOTES.sub("", line.strip()).strip()


def offset(source: str, block: list[str], line: int) -> tuple[str, int] | None:
    """Where the directive whose lines are ``block`` (its first at line ``line`` of the
    docstring ``source``) stands in its ``.py`` file: (the file, the number to add to a
    docstring line to get the file's). None when the source is no docstring or the directive's
    lines are not found in the file (a docstring built at run time, say)."""
    split = split_source(source)
    if split is None or not block:
        return None
    path, name = split
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        tree = ast.parse(text)
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
        return None
    lines = [_plain(ln) for ln in text.split("\n")]
    first, last = _docstring_span(tree, name) or (1, len(lines))
    want = [_plain(ln) for ln in block]
    while want and not want[-1]:
        want.pop()
    candidates = [start for start in range(first - 1, last - len(want) + 1)
                  if lines[start:start + len(want)] == want]
    if not candidates:
        return None
    # The same directive twice in one docstring: the one nearest where the numbering says.
    guess = first - 1 + line - 1
    best = min(candidates, key=lambda start: abs(start - guess))
    return path, best + 1 - line
