"""Accept mode's edit of one file's text: find a demo's option lines in reST, MyST or a
docstring, and replace only the outcomes that changed (pure functions of the lines; reading and
writing the files is :mod:`.rewrite`'s)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..core.i18n import msg
from ..core.scopes import Record, scoped_name
from ..read import syntax
from .newrecord import Blocked, new_compile, new_expect, new_output

if TYPE_CHECKING:
    from ..core.model import Claim, DemoResult, SourceMap

RST_OPEN = re.compile(r"^(\s*)\.\.\s+autocast-demo::\s*$")
# (after what nests it: indentation, a list item's marker, a block quote's ``>``)
MYST_OPEN = re.compile(r"^((?:[\s>]|[-*+](?=\s)|\d{1,9}[.)](?=\s))*)(`{3,}|~{3,}|:{3,})"
                       r"\{autocast-demo\}\s*$")
PAIR = re.compile(r"(?:^|(?<=[\s,;\"']))([\w*-]+(?:\s*\[[^\]]*\])?)\s*[:=]\s*"
                  r"(matches|differs|raises\s+[A-Za-z_][\w.]*)")



@dataclass
class Block:
    """Where a directive's options are in its file (0-based lines)."""

    style: str  # rst, colon (MyST ``:key:``), yaml (MyST ``---``)
    start: int  # first line of the options region (also where to insert into an empty one)
    end: int  # one past its last line
    indent: str  # of an option line
    spans: dict[str, tuple[int, int]]  # option name -> its lines, continuation included


def find_block(lines: list[str], where: SourceMap) -> Block:
    """The options of a directive, where the build read them (the directive's source map),
    as 0-based lines of the file as it is now."""
    opener = where.line - 1
    if not (0 <= opener < len(lines)) or not (RST_OPEN.match(lines[opener])
                                              or MYST_OPEN.match(lines[opener])):
        raise Blocked(msg("the directive is not where the build read it (edited during the "
                           "build?)"))
    spans = {o.name: (o.first - 1, o.end - 1) for o in where.options}
    start, end = where.start - 1, where.end - 1
    if spans:  # a new option goes in with the indentation of the others
        line = lines[min(spans.values())[0]]
        indent = line[: len(line) - len(line.lstrip())]
    elif where.style == "rst":  # no options yet: indent like the body
        body = next((ln for ln in lines[end:] if ln.strip()), "")
        indent = body[: len(body) - len(body.lstrip())]
    else:  # MyST: in the fence's column (a list item's ``- `` becomes spaces)
        fence = MYST_OPEN.match(lines[opener])
        indent = re.sub(r"[^\s>]", " ", fence.group(1)) if fence else ""
    return Block(where.style, start, end, indent, spans)


def _quoted(value: str) -> str:
    # A YAML double-quoted scalar: JSON's string is one (a reason may hold a quote).
    return json.dumps(value, ensure_ascii=False)


def _marker(block: Block, name: str) -> str:
    return f"{block.indent}{name}:" if block.style == "yaml" else f"{block.indent}:{name}:"


def edit_expect(lines: list[str], block: Block, changes: list[tuple[str, Claim]]) -> list[str]:
    """The option's new lines: outcomes replaced in place, new pairs appended."""
    if "expect" not in block.spans:
        value = syntax.expect_text(changes)
        return [f'{_marker(block, "expect")} {_quoted(value)}' if block.style == "yaml"
                else f'{_marker(block, "expect")} {value}']
    first, last = block.spans["expect"]
    text = "\n".join(lines[first:last])
    head = len(_marker(block, "expect"))
    todo = dict(changes)

    def replace(match: re.Match[str]) -> str:
        name = _key(match.group(1))
        if name not in todo:
            return match.group(0)
        outcome = todo.pop(name)
        return match.group(0)[: match.start(2) - match.start(0)] + str(outcome)

    body = PAIR.sub(replace, text[head:])
    if todo:  # pairs the option does not name yet
        extra = [(n, o) for n, o in changes if n in todo]
        stripped = body.rstrip()
        quote = stripped[-1] if stripped[-1:] in "\"'" and len(stripped) > 1 else ""
        core = stripped[: len(stripped) - len(quote)]
        if "\n" in core:
            indent = re.match(r"\s*", core.rsplit("\n", 1)[1])
            sep = "\n" + (indent.group(0) if indent else "")
        else:
            sep = "; " if ";" in core else ", "
        addition = sep.join(syntax.expect_text([pair]) for pair in extra)
        glue = sep if core.strip() else (" " if not core.endswith(" ") else "")
        body = core + glue + addition + quote + body[len(stripped):]
    return (text[:head] + body).split("\n")


def _key(written: str) -> str:
    """A record's name as written in the file (``off[torch >= 2.9, cpu]``) as the build keeps
    it (``off[torch>=2.9 cpu]``), so that a scoped record is found to be rewritten in place."""
    try:
        record = Record(written, "")
        return scoped_name(record.value, record.scope)
    except ValueError:
        return written


def expect_output_lines(result: DemoResult, lines: list[str], block: Block) -> list[str] | None:
    """The new ``:expect-output:`` option lines, or ``None`` when the record holds (a new
    option where a ``:show: outputs`` demo had none)."""
    blocks = new_output(result)
    if blocks is None:
        return None
    first, last = block.spans.get("expect-output", (0, 0))
    continuation = lines[first + 1] if last > first + 1 else ""
    marker = _marker(block, "expect-output")
    if block.style == "colon":
        prefix = continuation[: len(continuation) - len(continuation.lstrip(": "))] or \
            block.indent + ":  "
    else:
        prefix = continuation[: len(continuation) - len(continuation.lstrip())] or \
            block.indent + ("  " if block.style == "yaml" else "   ")
    out = [marker + (" |" if block.style != "rst" else "")]
    for name, text in blocks:
        if "\n\n" in text and block.style == "rst":
            raise Blocked(msg("the output of {value} has a blank line, which ends a reST option",
                               value=name))
        out.append(f"{prefix}[{name}]")
        out.extend(f"{prefix}{line}".rstrip() if line else prefix.rstrip() for line in
                   text.splitlines())
    return out


@dataclass
class Change:
    path: str
    start: int
    end: int  # start == end: insert before ``start``
    new: list[str]
    what: str


def plan(result: DemoResult, lines: list[str]) -> list[Change]:
    demo = result.demo
    path = demo.source_map.path
    block = find_block(lines, demo.source_map)
    if "expect" in block.spans:
        first, last = block.spans["expect"]
        old = "\n".join(lines[first:last])[len(_marker(block, "expect")):].strip().strip("\"'")
        try:
            names = tuple(v.name for v in demo.variants)
            if syntax.parse_expect(old, names) != demo.expect:
                raise Blocked(msg("the file changed since the build read it: build again"))
        except syntax.SyntaxProblem:
            raise Blocked(msg("the file changed since the build read it: build again")) from None
    changes: list[Change] = []
    expect = new_expect(result)
    if expect is not None:
        new = edit_expect(lines, block, expect)
        if "expect" in block.spans:
            first, last = block.spans["expect"]
        else:  # before :expect-output: when there is one, else after the last option
            first = last = block.spans.get("expect-output", (block.end, 0))[0]
        changes.append(Change(path, first, last, new, ", ".join(f"{n}: {o}" for n, o in expect)))
    output = expect_output_lines(result, lines, block)
    if output is not None:  # in place, or a new option after the last one
        first, last = block.spans.get("expect-output", (block.end, block.end))
        changes.append(Change(path, first, last, output, ":expect-output:"))
    compiling = new_compile(result)
    if compiling is not None:  # in place, or a new option after the last one
        first, last = block.spans.get("expect-compile", (block.end, block.end))
        value = syntax.expect_compile_text(compiling)
        new = [f'{_marker(block, "expect-compile")} {_quoted(value)}' if block.style == "yaml"
               else f'{_marker(block, "expect-compile")} {value}']
        changes.append(Change(path, first, last, new, f":expect-compile: {value}"))
    return changes


def unsafe_in_python(path: str, changes: list[Change], encoding: str = "utf-8") -> str:
    """Why ``changes`` cannot go into a docstring of ``path`` as written (empty: they can): a
    backslash would be read as an escape, three quotes would end the docstring, a character
    that the file's declared encoding has no bytes for could not be written."""
    if not path.endswith((".py", ".pyw")):
        return ""
    text = "\n".join(line for change in changes for line in change.new)
    if "\\" in text:
        return msg("the new record has a backslash, which a docstring reads as an escape")
    if '"""' in text or "'''" in text:
        return msg("the new record has three quotes, which would end the docstring")
    try:
        text.encode(encoding)
    except UnicodeEncodeError as err:
        held = repr(err.object[err.start:err.end])
        return msg("the new record has {text}, which the file's encoding ({encoding}) cannot hold",
                    text=held, encoding=encoding)
    return ""


def split_lines(text: str) -> list[str]:
    """Lines with their endings, split at ``\n`` only (not at form feeds, as splitlines)."""
    return re.findall(r"[^\n]*\n|[^\n]+$", text)


def apply(text: str, changes: list[Change]) -> str:
    lines = split_lines(text)
    # Bottom up, and at one line a replacement before an insertion, so indices stay valid.
    for change in sorted(changes, key=lambda c: (c.start, c.end), reverse=True):
        ending = next((ln[len(ln.rstrip("\r\n")):] for ln in lines[change.start:change.end] + lines
                       if ln.endswith("\n")), "\n")
        lines[change.start:change.end] = [line + ending for line in change.new]
    return "".join(lines)
