"""The small languages a writer types in directive options, parsed without importing torch.

``:values: same_as_forward, off, fp16=[{"device_type": "cpu", "dtype": torch.float16}]``
``:expect: same_as_forward: matches, off: differs, fp16: raises BackendCompilerFailed``
``:expect-output:`` blocks headed ``[name]`` (or ``[*]`` for every value).
``:expect-compile: *: graphs 1; off: graphs 2, recompiles 1`` (pairs apart by ``;`` or lines).
An option block itself: ``:name: value`` lines, a value continued on more-indented lines.
"""

from __future__ import annotations

import ast
import difflib
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, cast

from ..core.i18n import msg
from ..core.scopes import Record, records, scope_parts, scoped_name
from ..core.text import one_spaced

# The model's types are imported where a directive's options are parsed: every build imports
# this module with the directives, and an unchanged one parses nothing.
if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..core.model import Claim, CompileClaim, Variant

#: Values every demo knows by name. ``autocast`` is filled in from the forward's autocast.
BUILTIN_VALUES = ("same_as_forward", "off", "autocast")
#: The row that leaves the config as torch has it: the only row that checks a page's claim
#: about the default (every other row sets its value), for any config.
DEFAULT = "default"
#: The JSON value of that row: the run sets nothing.
UNSET: dict[str, bool] = {"__unset__": True}

OUTCOME_RE = re.compile(r"^(matches|differs|no-config|raises\s+([A-Za-z_][\w.]*))$")
NAME_RE = re.compile(r"^[A-Za-z_][\w-]*$")
FIELD_RE = re.compile(r"^:([^:\s][^:]*):(?:\s|$)")  # ``:name:`` at the start of an option line


class SyntaxProblem(ValueError):
    """A writer's mistake in an option; the message says what to write instead."""


@dataclass
class OptionField:
    """One ``:name: value`` line of an option block and the more-indented lines under it."""

    name: str  # empty for a line that starts with ``:`` but names no option
    text: str  # the line itself, without its indentation
    line: int  # 0-based, in the lines given to :func:`option_fields`
    more: list[str] = field(default_factory=list)  # continuation lines, as written


def is_option_line(line: str) -> bool:
    """Read as an option line by docutils and by myst-parser (``:::`` opens a MyST fence)."""
    stripped = line.lstrip()
    return stripped.startswith(":") and not stripped.startswith(":::")


def option_fields(lines: list[str]) -> tuple[list[OptionField], int]:
    """The option block at the top of ``lines``, read as docutils reads a directive's options.

    Each option is a ``:name: value`` line; lines indented deeper than it continue its value
    (as in reST, where ``:expect-output:`` is followed by indented ``[value]`` blocks). The
    block ends at a blank line or at a line that is neither; returns the fields and the index
    of that line.
    """
    fields: list[OptionField] = []
    base = 0
    for index, line in enumerate(lines):
        stripped = line.lstrip()
        indent = len(line) - len(stripped)
        if not stripped:
            return fields, index
        if fields and indent > base:
            fields[-1].more.append(line)
        elif is_option_line(line):
            base = indent
            match = FIELD_RE.match(stripped)
            fields.append(OptionField(match.group(1) if match else "", stripped, index))
        else:
            return fields, index
    return fields, len(lines)


def unnest(lines: list[str], width: int) -> list[str]:
    """Lines of a block nested ``width`` columns deep (in a list item, after ``- `` or ``1. ``;
    in a block quote, after ``> ``) as they read outside it: those columns removed where they
    hold only that nesting (spaces, ``>``), and a lazy line that does not carry it kept."""
    if not width:
        return lines
    out = []
    for line in lines:
        head = line[:width]
        out.append(line[width:] if not head.strip(" \t>") else line)
    return out


def continuation(more: list[str]) -> str:
    """Continuation lines without their common indentation, as docutils gives a field body."""
    width = min(len(line) - len(line.lstrip()) for line in more if line.strip())
    return "\n".join(line[width:].rstrip() for line in more)


def split_top_level(text: str, separators: str = ",;\n", opening: str = "([{",
                    quotes: bool = True) -> list[str]:
    """Split on separators that are not inside brackets (``opening``'s) or string literals
    (where ``quotes``)."""
    closing = "".join(dict(zip("([{", ")]}", strict=True))[o] for o in opening)
    parts: list[str] = []
    depth = 0
    quote: str | None = None
    current: list[str] = []
    escaped = False
    for char in text:
        if quote:
            current.append(char)
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == quote:
                quote = None
            continue
        if quotes and char in "\"'":
            quote = char
        elif char in opening:
            depth += 1
        elif char in closing:
            depth -= 1
        if char in separators and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return [p.strip() for p in parts if p.strip()]


def literal(source: str) -> Any:
    """A Python literal -> JSON-able data; ``torch.<dtype>`` becomes ``{"__torch__": name}``."""
    try:
        tree = ast.parse(source.strip(), mode="eval").body
    except SyntaxError as exc:
        raise SyntaxProblem(msg("{source} is not a Python literal ({error})",
                                 source=repr(source.strip()), error=exc.msg)) from None

    def convert(node: ast.expr) -> Any:
        if isinstance(node, ast.Constant) and (
            node.value is None or isinstance(node.value, (str, int, float, bool))
        ):
            return node.value
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            value = convert(node.operand)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                return -value
        if isinstance(node, (ast.List, ast.Tuple)):
            return [convert(e) for e in node.elts]
        if isinstance(node, ast.Dict):
            out: dict[str, Any] = {}
            for k, v in zip(node.keys, node.values, strict=True):
                key = convert(k) if k is not None else None
                if not isinstance(key, str):
                    raise SyntaxProblem(msg("dict keys must be strings, e.g. {example}",
                                             example='{"device_type": "cpu"}'))
                out[key] = convert(v)
            return out
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "torch"
        ):
            return {"__torch__": node.attr}
        raise SyntaxProblem(msg(
            "{source} is not allowed in a value: use strings, numbers, lists, "
            "dicts and torch dtypes such as torch.float16", source=repr(ast.unparse(node))))

    return convert(tree)


def default_autocast(device: str, dtype: str) -> tuple[Any, str]:
    value = [{"device_type": device, "dtype": {"__torch__": dtype}}]
    return value, f'[{{"device_type": "{device}", "dtype": torch.{dtype}}}]'


def parse_values(text: str | Sequence[str], device: str, dtype: str,
                 builtins: bool = True) -> tuple[Variant, ...]:
    """``same_as_forward, off, name=<literal>`` (or those items, as conf.py lists them)
    -> variants, in the order written."""
    from ..core.model import Variant

    variants: list[Variant] = []
    items = split_top_level(text, ",\n") if isinstance(text, str) else [i.strip() for i in text]
    for item in items:
        name, eq, rest = item.partition("=")
        name = name.strip()
        if eq:
            if not NAME_RE.match(name):
                raise SyntaxProblem(msg("{name} is not a value name; write name=<value>, e.g. "
                                         "fp16=[...]", name=repr(name)))
            try:
                value = literal(rest)
            except SyntaxProblem as exc:
                raise SyntaxProblem(msg(
                    "value {name}: {problem}; write a list of torch.amp.autocast kwargs dicts, "
                    "e.g. {example}", name=name, problem=exc.args[0],
                    example=_autocast_example(name, device))) from None
            variants.append(Variant(name=name, value=value, source=rest.strip()))
        elif name == DEFAULT:
            variants.append(Variant(name=name, value=UNSET, source=""))
        elif builtins and name == "autocast":
            value, source = default_autocast(device, dtype)
            variants.append(Variant(name=name, value=value, source=source))
        elif builtins and name in BUILTIN_VALUES:
            variants.append(Variant(name=name, value=name, source=repr(name)))
        else:
            known = ", ".join((*BUILTIN_VALUES, DEFAULT) if builtins else (DEFAULT,))
            raise SyntaxProblem(msg(
                "unknown value {name}{hint}: use one of {known}, or name it, e.g. {example}",
                name=repr(name), hint=_did_you_mean(name, BUILTIN_VALUES if builtins else ()),
                known=known, example=_autocast_example("fp16", device)))
    names = [v.name for v in variants]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise SyntaxProblem(msg("value {value} is given twice", value=repr(duplicates[0])))
    if not variants:
        raise SyntaxProblem(msg("no values given: write e.g. same_as_forward, off, autocast"))
    return tuple(variants)


def unnamed_builtins(variants: tuple[Variant, ...], device: str, dtype: str) -> tuple[Variant, ...]:
    """The built-in values that ``variants`` name neither by name nor by value."""
    named = {v.name for v in variants}
    values = [v.value for v in variants]
    return tuple(v for v in parse_values(BUILTIN_VALUES, device, dtype)
                 if v.name not in named and v.value not in values)


def parse_expect(text: str, names: tuple[str, ...]) -> tuple[Record[Claim], ...]:
    """``name: outcome`` pairs; names must be values of the demo (or ``*``), each optionally
    scoped to torch releases and a device: ``off[torch>=2.15]: matches``, ``*[cuda]: differs``
    (a scoped record wins over an unscoped one where its scope holds)."""
    pairs: list[Record[Claim]] = []
    for item in split_top_level(text):
        match = re.match(r"^([\w*-]+)\s*(?:\[([^\]]*)\])?\s*[:=]\s*(.+)$", item)
        if not match:
            raise SyntaxProblem(msg("{item}: write value: outcome, e.g. off: matches",
                                     item=repr(item)))
        name, scope, outcome = match.group(1), match.group(2), one_spaced(match.group(3))
        if name != "*" and name not in names:
            raise SyntaxProblem(msg("{name} is not a value of this demo{hint} (its values: "
                                     "{values})", name=repr(name), hint=_did_you_mean(name, names),
                                     values=", ".join(names)))
        claim = parse_claim(outcome)
        if claim is None:
            raise SyntaxProblem(msg(
                "{outcome} is not an outcome{hint}: write matches, differs, raises "
                "<ExceptionName> or no-config", outcome=repr(outcome),
                hint=_did_you_mean(outcome, ("matches", "differs"))))
        name = _in_scope(name, scope, "off[torch>=2.15]: matches or off[torch>=2.14,<2.16 cuda]: differs")
        pairs.append(Record(name, claim))
    written = [n for n, _ in pairs]
    twice = sorted({n for n in written if written.count(n) > 1})
    if twice:
        raise SyntaxProblem(msg("{record} is recorded twice", record=repr(twice[0])))
    refuse_overlaps(pairs)
    return tuple(pairs)


def record_name(name: str, scope: str) -> str:
    """A scoped record's name as the build keeps it (``off[torch>=2.15 cuda]``)."""
    return scoped_name(name, scope_parts(scope))


def refuse_overlaps(pairs: Sequence[tuple[str, Claim]]) -> None:
    """Two scoped records of one value (or both of ``*``) that record different outcomes and
    provably both apply somewhere: neither may silently win (the check of each environment
    catches the overlaps no witness proves)."""
    scoped = [r for r in records(pairs) if r.scope is not None]
    for i, first in enumerate(scoped):
        for second in scoped[i + 1:]:
            if second.value != first.value or second.claim == first.claim:
                continue
            assert first.scope is not None and second.scope is not None
            where = first.scope.overlap(second.scope)
            if where is not None:
                raise SyntaxProblem(msg(
                    "{first}: {first_outcome} and {second}: {second_outcome} overlap (both apply "
                    "to {where}): narrow a scope so that only one applies, or record one outcome",
                    first=first.name, first_outcome=str(first.claim), second=second.name,
                    second_outcome=str(second.claim), where=where))


def parse_expect_output(text: str, names: tuple[str, ...]) -> tuple[Record[str], ...]:
    """Blocks of expected printed output, each headed by ``[name]`` or ``[*]``, optionally
    scoped as in ``:expect:``: ``[off[torch>=2.16]]`` (kept as ``off[torch>=2.16]``)."""
    blocks: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        header = re.match(r"^\s*\[([\w*-]+)\s*(?:\[([^\]]*)\])?\]\s*$", line)
        if header:
            name, scope = header.group(1), header.group(2)
            if name != "*" and name not in names:
                raise SyntaxProblem(msg("[{name}] is not a value of this demo (its values: "
                                         "{values})", name=name, values=", ".join(names)))
            blocks.append((_in_scope(name, scope, "[off[torch>=2.16]]"), []))
        elif blocks:
            blocks[-1][1].append(line.strip())
        elif line.strip():
            raise SyntaxProblem(msg("expected output starts with a [value] line, e.g. [off]"))
    return tuple(Record(name, "\n".join(lines).strip()) for name, lines in blocks)


def _autocast_example(name: str, device: str) -> str:
    return f'{name}=[{{"device_type": "{device}", "dtype": torch.float16}}]'


def _in_scope(name: str, scope: str | None, example: str) -> str:
    """A record's name as the build keeps it (``off[torch>=2.15 cuda]``; ``name`` where no
    scope is written); a :class:`SyntaxProblem` with ``example`` of the option where the scope
    is none."""
    if scope is None:
        return name
    try:
        return record_name(name, scope)
    except ValueError as exc:
        written, why = f"{name}[{scope}]", repr(str(exc) or "nothing")
        raise SyntaxProblem(msg("{record}: {scope} is not a scope; write torch releases and/or "
                                 "devices, e.g. {example}", record=written, scope=why,
                                 example=example)) from None


def _did_you_mean(word: str, choices: tuple[str, ...]) -> str:
    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    return msg(" (did you mean {word}?)", word=repr(close[0])) if close else ""


def expect_text(pairs: Sequence[tuple[str, Claim | str]]) -> str:
    """What a writer pastes: ``same_as_forward: matches, off: differs``."""
    return ", ".join(f"{name}: {outcome}" for name, outcome in pairs)


def expect_compile_text(pairs: Sequence[tuple[str, CompileClaim]]) -> str:
    """What a writer pastes: ``off: graphs 1, breaks 0; autocast: graphs 2``."""
    return "; ".join(f"{name}: {claim}" for name, claim in pairs)


def parse_claim(text: str) -> Claim | None:
    """``matches``, ``differs``, ``no-config`` or ``raises <ExceptionName>`` as a
    :class:`Claim`; None for anything else."""
    from ..core.model import Claim

    match = OUTCOME_RE.match(text)
    if not match:
        return None
    if match.group(2):
        return Claim("raises", match.group(2))
    return Claim(cast("Literal['matches', 'differs', 'no-config']", match.group(1)))


def parse_expect_compile(text: str, names: tuple[str, ...]) -> tuple[Record[CompileClaim], ...]:
    """``name: graphs N, breaks N, recompiles N, skipped N`` pairs (any of them, in any order),
    apart by ``;`` or lines; names as in ``:expect:``, scoped or not. ``breaks``,
    ``recompiles`` and ``skipped`` may list why, one entry each: ``breaks 1 [reason]``,
    ``recompiles 1 [c == 1.0]``. A reason is free text (an apostrophe, a bracket of its own): only square
    brackets nest, and a reason cannot hold a ``;`` (:func:`reason_text_fits`)."""
    from ..core.model import CompileClaim

    pairs: list[Record[CompileClaim]] = []
    for item in _split_outside_brackets(text, ";\n"):
        if not item.strip():
            continue
        match = re.match(r"^\s*([\w*-]+)\s*(?:\[([^\]]*)\])?\s*:\s*(.*)$", item, re.DOTALL)
        if not match:
            raise SyntaxProblem(msg("{item}: write value: graphs N, breaks N, recompiles N, e.g. "
                                     "off: graphs 2, recompiles 1", item=repr(item.strip())))
        name, scope, facts = match.groups()
        if name != "*" and name not in names:
            raise SyntaxProblem(msg("{name} is not a value of this demo{hint} (its values: "
                                     "{values})", name=repr(name), hint=_did_you_mean(name, names),
                                     values=", ".join(names)))
        fields: dict[str, Any] = {}  # CompileClaim's
        for fact in _split_outside_brackets(facts, ","):
            found = re.fullmatch(
                r"(graphs|breaks|recompiles|skipped)\s*[= ]\s*(\d{1,6})(?:\s*\[(.*)\])?", fact,
                re.DOTALL)
            if not found or found.group(1) in fields:
                raise SyntaxProblem(msg(
                    "{fact} is not a count of what compiling did{hint}: write graphs N, breaks N, "
                    "recompiles N or skipped N, each once", fact=repr(fact),
                    hint=_did_you_mean(fact.split(" ")[0], ("graphs", *REASONS_OF))))
            kind, count = found.group(1), int(found.group(2))
            fields[kind] = count
            if found.group(3) is not None:
                why = tuple(one_spaced(w) for w in _split_outside_brackets(found.group(3), ";"))
                if kind == "graphs" or len(why) != count or not _balanced(found.group(3)):
                    raise SyntaxProblem(msg(
                        "{fact}: list one reason for each graph break or skipped frame, or one "
                        "failed guard for each recompilation, apart by ;, e.g. breaks 2 [Failed "
                        "to trace builtin operator; Unsupported Tensor.item() call]",
                        fact=repr(fact)))
                fields[REASONS_OF[kind]] = why
        pairs.append(Record(_in_scope(name, scope, "off[torch>=2.15]: graphs 1"),
                            CompileClaim(**fields)))
    written = [record.name for record in pairs]
    twice = sorted({n for n in written if written.count(n) > 1})
    if twice:
        raise SyntaxProblem(msg("{record} is recorded twice", record=repr(twice[0])))
    return tuple(pairs)


#: Each count a record may list the reasons of -> CompileClaim's field of them.
REASONS_OF = {"breaks": "break_reasons", "recompiles": "recompile_guards",
              "skipped": "skip_reasons"}


def reason_text_fits(reason: str) -> bool:
    """Does ``reason`` read back as written (no ``;``, square brackets balanced)?"""
    return ";" not in reason and _balanced(reason) and reason == one_spaced(reason)


def _balanced(text: str) -> bool:
    depth = 0
    for char in text:
        depth += {"[": 1, "]": -1}.get(char, 0)
        if depth < 0:
            return False
    return depth == 0


def _split_outside_brackets(text: str, separators: str) -> list[str]:
    # A reason's own quotes and parentheses are text: ``Dynamo can't trace f(``.
    return split_top_level(text, separators, opening="[", quotes=False)
