"""Demos in docstrings: where their lines are in the ``.py`` file.

autodoc names a docstring's lines ``path/mod.py:docstring of mod.func`` and numbers them from the
docstring's first line after its own processing (napoleon rewrites sections, so its numbers
drift from the file's by a line or two). A directive's own lines stay together and in order in
every such processing, only dedented: found once in the file, they give one offset from the
docstring's numbering to the file's. Warnings then point at the file's line, and accept mode
edits the file.

The file is read as Python reads it (its PEP 263 declaration, or a BOM), and each string literal
is compared by its value, not its text: an escape (``\\t``) or a line that ends in a backslash
makes the two differ, and autodoc only ever sees the value. Each line of the value keeps the
file lines it is written on, so that a directive is only placed where its lines are the file's,
one for one. The docstring of ``mod.func`` is looked for wherever ``func`` is defined, under any
statement (``try``/``else``, ``if``, ``with``, a class nested in one); when it is not there,
:func:`reason` says what keeps it from the file.
"""

from __future__ import annotations

import ast
import functools
import io
import os
import re
import tokenize
import warnings
from dataclasses import dataclass

from ..core.i18n import msg
from ..core.text import one_spaced

#: The source name autodoc gives a docstring's lines.
DOCSTRING_SOURCE = re.compile(r"^(?P<path>.+\.pyw?):docstring of (?P<name>.+)$")
_OPENING = re.compile(r"^([rRuU]{0,2})('''|\"\"\"|'|\")")
# Where str.splitlines (and so autodoc's prepare_docstring) breaks a line of the value.
_BREAKS = re.compile("\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]")
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def split_source(source: str) -> tuple[str, str] | None:
    """``mod.py:docstring of mod.func`` -> (``mod.py``, ``mod.func``); None for a page."""
    match = DOCSTRING_SOURCE.match(source)
    return (match.group("path"), match.group("name")) if match else None


def read_python(path: str) -> tuple[str, str]:
    """(text, encoding) of a ``.py`` file as Python decodes it, its line endings kept, so that
    it can be written back byte for byte where it is not changed."""
    with open(path, "rb") as f:
        data = f.read()
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    return data.decode(encoding), encoding


@dataclass(frozen=True)
class ValueLine:
    """A line of a string literal's value and the file lines (1-based) it is written on."""

    first: int
    last: int
    text: str


@dataclass(frozen=True)
class Literal:
    lines: tuple[ValueLine, ...]
    one_for_one: bool  # each line of the value is one line of the file


@dataclass(frozen=True)
class Module:
    """What a ``.py`` file holds that a docstring's lines can be found in."""

    path: str
    definitions: dict[str, tuple[ast.AST, ...]]  # qualified name -> where it is defined
    literals: dict[tuple[int, int], Literal]  # each literal whose value reads back, by place
    runtime_docs: tuple[tuple[str, int, str], ...]  # (short name, line, text) of ``X.__doc__ =``


class Unreadable(Exception):
    """A ``.py`` file that cannot be read or parsed; the message says where and why."""


def _cut(line: str, column: int) -> int:
    """ast's column (UTF-8 bytes) as an index into ``line``."""
    return len(line.encode("utf-8")[:column].decode("utf-8", "replace"))


def _unescape(text: str, prefix: str, quote: str) -> str | None:
    """The value of one line of a literal's body, as Python reads it (None: it does not read).
    A space before the closing quote keeps a quote that ends the line from closing early."""
    if "r" in prefix.lower():
        return text
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # an invalid escape (``\\d``) stays as written
        try:
            value = ast.literal_eval(f"{prefix}{quote}{text} {quote}")
        except (SyntaxError, ValueError):
            return None
    return value[:-1] if isinstance(value, str) else None


def literal_lines(source: list[str], node: ast.Constant) -> Literal | None:
    """The lines of ``node``'s value with the file lines each is written on; None when its text
    cannot be read back to its value (implicit concatenation, say)."""
    if node.end_lineno is None or node.end_col_offset is None or not isinstance(node.value, str):
        return None
    rows = source[node.lineno - 1:node.end_lineno]
    if not rows:
        return None
    rows = [*rows]
    rows[-1] = rows[-1][:_cut(rows[-1], node.end_col_offset)]
    rows[0] = rows[0][_cut(rows[0], node.col_offset):]
    segment = "\n".join(rows)
    opening = _OPENING.match(segment)
    if opening is None:
        return None
    prefix, quote = opening.groups()
    body = segment[opening.end():]
    if not body.endswith(quote):
        return None
    pieces = body[: len(body) - len(quote)].split("\n")
    raw = "r" in prefix.lower()
    done: list[ValueLine] = []
    text, first = "", node.lineno
    for i, piece in enumerate(pieces):
        line = node.lineno + i
        joined = not raw and i < len(pieces) - 1 and (len(piece) - len(piece.rstrip("\\"))) % 2 == 1
        value = _unescape(piece[:-1] if joined else piece, prefix, quote)
        if value is None:
            return None
        parts = _BREAKS.split(value)
        for part in parts[:-1]:  # an escaped line break: a line of the value ends here
            done.append(ValueLine(first, line, text + part))
            text, first = "", line
        text += parts[-1]
        if not joined and i < len(pieces) - 1:
            done.append(ValueLine(first, line, text))
            text, first = "", line + 1
    done.append(ValueLine(first, node.end_lineno, text))
    if [ln.text for ln in done] != _BREAKS.split(node.value):
        return None
    one_for_one = len(done) == len(pieces) and all(ln.first == ln.last for ln in done)
    return Literal(tuple(done), one_for_one)


def _definitions(tree: ast.Module) -> dict[str, tuple[ast.AST, ...]]:
    """Each def and class by its qualified name, found under any statement; the module as ``""``."""
    found: dict[str, list[ast.AST]] = {"": [tree]}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, _DEFINITIONS):
                name = prefix + child.name
                found.setdefault(name, []).append(child)
                visit(child, name + ("." if isinstance(child, ast.ClassDef) else ".<locals>."))
            else:
                visit(child, prefix)

    visit(tree, "")
    return {name: tuple(nodes) for name, nodes in found.items()}


def _runtime_docs(tree: ast.Module) -> tuple[tuple[str, int, str], ...]:
    """Every ``X.__doc__ = ...`` (``+=`` too), and ``__doc__ = ...`` in a class or the module:
    (the owner's last name, "" for the module; line; what it says)."""
    out: list[tuple[str, int, str]] = []

    def visit(node: ast.AST, owner: str | None) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, _DEFINITIONS):  # a bare __doc__ in a def is a local variable
                visit(child, child.name if isinstance(child, ast.ClassDef) else None)
                continue
            if isinstance(child, ast.Assign | ast.AugAssign | ast.AnnAssign):
                op = ast.unparse(child).split(" ", 2)[1] if isinstance(child, ast.AugAssign) else "="
                targets = child.targets if isinstance(child, ast.Assign) else [child.target]
                for target in targets:
                    shown = f"{ast.unparse(target)} {op} ..."
                    if isinstance(target, ast.Attribute) and target.attr == "__doc__":
                        out.append((ast.unparse(target.value).rsplit(".", 1)[-1], child.lineno, shown))
                    elif isinstance(target, ast.Name) and target.id == "__doc__" and owner is not None:
                        out.append((owner, child.lineno, shown))
            visit(child, owner)

    visit(tree, "")
    return tuple(out)


def _string_nodes(tree: ast.Module) -> list[ast.Constant]:
    """The module's string literals, not the parts of an f-string (no literal of their own)."""
    parts = {id(v) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for v in node.values}
    return [n for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
            and id(n) not in parts]


@functools.lru_cache(maxsize=16)
def _read(path: str, stamp: tuple[int, int]) -> Module:
    del stamp  # (the cache's key: a file changed since is read again)
    try:
        text, _ = read_python(path)
        tree = ast.parse(text, path)
    except OSError as err:
        problem = err.strerror or str(err)
        raise Unreadable(msg("{path} cannot be read: {problem}", path=path, problem=problem)) from None
    except SyntaxError as err:
        line, problem = err.lineno or 1, err.msg
        raise Unreadable(msg("{path}:{line}: it is not Python that parses ({problem})",
                              path=path, line=line, problem=problem)) from None
    except (UnicodeDecodeError, ValueError) as err:
        problem = str(err)
        raise Unreadable(msg("{path} cannot be decoded ({problem}): declare its encoding as PEP "
                              "263 says", path=path, problem=problem)) from None
    source = [ln.rstrip("\r") for ln in text.split("\n")]
    literals = {_place(node): found for node in _string_nodes(tree)
                if (found := literal_lines(source, node)) is not None}
    return Module(path, _definitions(tree), literals, _runtime_docs(tree))


def read_module(path: str) -> Module:
    """``path`` parsed (once per version of the file); raises :class:`Unreadable`."""
    try:
        status = os.stat(path)
    except OSError as err:
        problem = err.strerror or str(err)
        raise Unreadable(msg("{path} cannot be read: {problem}", path=path, problem=problem)) from None
    return _read(path, (status.st_mtime_ns, status.st_size))


def _named(module: Module, name: str) -> tuple[str, tuple[ast.AST, ...]]:
    """The definitions of the dotted ``name`` (``mod.Class.method``): the longest tail of it that
    the file defines, since autodoc's name starts with the module's."""
    parts = name.split(".")
    for start in range(len(parts) + 1):
        tail = ".".join(parts[start:])
        if tail in module.definitions:
            return tail, module.definitions[tail]
    return "", ()


def _place(node: ast.Constant) -> tuple[int, int]:
    return node.lineno, node.col_offset


def _docstring(node: ast.AST) -> ast.Constant | None:
    body = getattr(node, "body", None)
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        return body[0].value
    return None


def _key(line: str) -> str:
    # autodoc dedents and expands tabs from other columns than the file's: compare the words.
    return one_spaced(line)


def _places(literal: Literal, want: list[str]) -> list[int]:
    """Where ``want`` starts among ``literal``'s lines, one for one with the file's."""
    keys = [_key(ln.text) for ln in literal.lines]
    out = []
    for start in range(len(keys) - len(want) + 1):
        rows = literal.lines[start:start + len(want)]
        if keys[start:start + len(want)] == want and all(
                row.first == row.last == rows[0].first + i for i, row in enumerate(rows)):
            out.append(start)
    return out


def _find(literals: list[Literal], want: list[str], line: int) -> tuple[Literal, int] | None:
    """The one literal that holds ``want``, and where; None when none or several do."""
    found = [(lit, places) for lit in literals if (places := _places(lit, want))]
    if len(found) != 1:
        return None
    literal, places = found[0]
    # The same directive twice in one docstring: the one nearest where the numbering says.
    return literal, min(places, key=lambda start: abs(start - (line - 1)))


def offset(source: str, block: list[str], line: int) -> tuple[str, int] | None:
    """Where the directive whose lines are ``block`` (its first at line ``line`` of the
    docstring ``source``) stands in its ``.py`` file: (the file, the number to add to a
    docstring line to get the file's). None when the source is no docstring or the directive's
    lines are not found in the file one for one (:func:`reason` says why)."""
    split = split_source(source)
    if split is None or not block:
        return None
    path, name = split
    try:
        module = read_module(path)
    except Unreadable:
        return None
    want = [_key(ln) for ln in block]
    while want and not want[-1]:
        want.pop()
    _, nodes = _named(module, name)
    named = [module.literals[_place(doc)] for node in nodes
             if (doc := _docstring(node)) is not None and _place(doc) in module.literals]
    # Not in its own docstring: the text may still be written in one literal of the file (a
    # template that a decorator or an assignment puts into __doc__).
    found = _find(named, want, line) or _find(list(module.literals.values()), want, line)
    if found is None:
        return None
    literal, start = found
    return path, literal.lines[start].first - line


def _module_name(path: str) -> str:
    stem = os.path.splitext(os.path.basename(path))[0]
    return os.path.basename(os.path.dirname(path)) if stem == "__init__" else stem


def reason(source: str) -> str:
    """Why the directives of the docstring ``source`` are not found in its file, as far as the
    file tells: the docstring is made at run time, is not written, is written more than once,
    or its lines are not the file's."""
    split = split_source(source)
    if split is None:
        return msg("it is not a docstring")
    path, name = split
    try:
        module = read_module(path)
    except Unreadable as err:
        return err.args[0]  # type: ignore[no-any-return]
    tail, nodes = _named(module, name)
    last = name.rsplit(".", 1)[-1]
    of_module = not tail and last == _module_name(path)
    made = [f"{path}:{line}: {text}" for owner, line, text in module.runtime_docs
            if owner == ("" if of_module else last)]
    if made:
        places = "; ".join(made)
        return msg("its docstring is made at run time ({places})", places=places)
    if not tail and not of_module:
        return msg("{path} defines no {name} (is it made at run time?)", path=path, name=last)
    docs = [doc for node in nodes if (doc := _docstring(node)) is not None]
    where = ", ".join(f"{path}:{getattr(node, 'lineno', 1)}" for node in nodes)
    label = tail or name
    if not docs:
        return msg("{name} ({where}) has no docstring written in the file (made or inherited at "
                    "run time)", name=label, where=where)
    if len(docs) > 1:
        count = len(nodes)
        return msg("{name} is defined {n} times ({where}): which one is documented is decided "
                    "at run time", name=label, n=count, where=where)
    literal = module.literals.get(_place(docs[0]))
    if literal is None or not literal.one_for_one:
        return msg("the docstring at {path}:{line} has a line break escaped (\\n) or a line "
                    "that ends in a backslash, so its lines are not the file's",
                    path=path, line=docs[0].lineno)
    return msg("the docstring at {path}:{line} does not hold this directive as autodoc shows it "
                "(it is changed at run time)", path=path, line=docs[0].lineno)
