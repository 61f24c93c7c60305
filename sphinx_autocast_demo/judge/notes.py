"""A difference in words: the facts compare.py and printed.py found (``core.model.Note``) and
the name of what differs, as messages kept to be said in the page's language (``on_page``) or
the console's (``in_console``); English where they are used as plain text."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.i18n import msg, n_msg

if TYPE_CHECKING:
    from ..core.model import CompileFacts, DemoResult, Frame, SnippetError, TensorDiff

_FIXED = {
    "unmeasured": msg("not bitwise equal (no values copied to measure by how much: too large, "
                      "or a dtype without numbers)"),
    "exact": msg("integers and booleans are compared exactly"),
    "signed-zero": msg("equal values; differs only in the sign of zero"),
    "nan-bits": msg("equal values; differs only in NaN bit patterns"),
    "signed-zero-and-nan-bits": msg("equal values; differs only in the sign of zero and NaN bit "
                                    "patterns"),
    "not-bitwise": msg("equal values, not bitwise equal"),
}


def note_text(diff: TensorDiff) -> str:
    """What ``diff``'s note says ("" for none)."""
    note = diff.note
    if note is None:
        return ""
    if note.kind in _FIXED:
        return _FIXED[note.kind]
    if note.kind == "missing":
        return msg("compiled: {compiled}; eager: {eager}",
                   compiled=_had(diff, diff.compiled_dtype, note.compiled),
                   eager=_had(diff, diff.eager_dtype, note.eager))
    if note.kind == "dtype":
        return msg("dtype {compiled} compiled, {eager} eager", compiled=diff.compiled_dtype,
                   eager=diff.eager_dtype)
    if note.kind == "shape":
        return msg("shape {compiled} compiled, {eager} eager", compiled=note.compiled,
                   eager=note.eager)
    if note.kind == "printed":
        return msg("compiled printed {compiled}, eager {eager}",
                   compiled=note.compiled or msg("nothing"), eager=note.eager or msg("nothing"))
    if note.kind == "pid":
        return msg("differs only in the run's pid ({compiled} compiled, {eager} eager)",
                   compiled=note.compiled, eager=note.eager)
    if note.kind == "pid-after":
        return msg("differs after printed line {line} only in the run's pid ({compiled} compiled, "
                   "{eager} eager)", line=note.line, compiled=note.compiled, eager=note.eager)
    if note.kind == "count":
        return msg("after printed line {line}: compiled printed {compiled} lines in all, eager "
                   "{eager}", line=note.line, compiled=note.compiled, eager=note.eager)
    if note.kind == "text":
        return msg("after printed line {line}, compiled printed other text than eager",
                   line=note.line)
    return msg("after printed line {line}, compiled printed other numbers than eager",
               line=note.line)


def diff_name(diff: TensorDiff) -> str:
    """What differs: a tensor's path as the snippet names it, or which printed output."""
    if diff.kind != "output":
        return diff.name
    if diff.note is not None and diff.note.kind in ("printed", "pid"):
        return msg("printed line {line}", line=diff.note.line)
    return msg("printed output")


def _had(diff: TensorDiff, dtype: str | None, shape: str) -> str:
    """What one side had at a path: a ``.grad`` the other lacks is None, as torch says."""
    if dtype is None:
        return "None" if diff.name.endswith(".grad") else msg("nothing there")
    return msg("a {dtype} tensor of shape {shape}", dtype=dtype, shape=shape)


#: Recompilations said one by one; past them, counted (the recompile limit is 8 of them).
_SHOWN = 2


def compile_text(result: DemoResult, facts: CompileFacts) -> str:
    """What compiling did: the graphs, then each graph break and each recompilation with the
    page's line it happened at, then each frame skipped (one message, said in any language)."""
    said = [n_msg("{n} graph compiled", "{n} graphs compiled", facts.graphs, n=facts.graphs)]
    for found in facts.breaks:
        where = _line(result, found.at)
        said.append(n_msg("a graph break{where}: {reason}", "{n} graph breaks{where}: {reason}",
                          found.count, n=found.count, where=where, reason=found.reason))
    said += [msg("recompiled{where} ({guard})", where=_line(result, again.at), guard=again.guard)
             for again in facts.recompiles[:_SHOWN]]
    if len(facts.recompiles) > _SHOWN:
        more = len(facts.recompiles) - _SHOWN
        said.append(n_msg("{n} more recompilation", "{n} more recompilations", more, n=more))
    said += [n_msg("a frame not compiled: {reason}", "{n} frames not compiled: {reason}",
                   skip.count, n=skip.count, reason=skip.reason) if skip.reason else
             n_msg("a frame not compiled", "{n} frames not compiled", skip.count, n=skip.count)
             for skip in facts.skipped]
    text = said[-1]
    for before in reversed(said[:-1]):
        text = msg("{before}; {after}", before=before, after=text)
    return text


def _line(result: DemoResult, at: tuple[Frame, ...]) -> str:
    return msg(" at line {line}", line=result.where_frame(at[0]).line) if at else ""


_NOTHING_COMPILED = {
    "env-disable": msg("TORCH_COMPILE_DISABLE is set in the build's environment"),
    "config-disable": msg("torch._dynamo.config.disable is set"),
    "never-reached": msg("the snippet never reached torch.compile (or another entry point into "
                         "the compiler)"),
}


def reason_text(error: SnippetError) -> str:
    """Why a run is no verdict (``error.kind``, from its facts); a result made before a kind
    kept its facts says its English message."""
    facts = error.facts
    if not facts:
        return error.message
    if error.kind == "config-set":
        return msg("a setup sets the config to {value} before the demo runs", value=facts[0])
    if error.kind == "config-other" and len(facts) == 3:
        read, row, thread = facts
        if thread:
            return msg("a compile read {read}, not this row's {row}, in the thread {thread}",
                       read=read, row=row, thread=repr(thread))
        return msg("a compile read {read}, not this row's {row}", read=read, row=row)
    if error.kind == "eager-compiled":
        if facts[0] == "dynamo" and facts[1:]:
            return msg("dynamo compiled {names} in the eager run", names=", ".join(facts[1:]))
        if facts[0] == "aot":
            return msg("AOTAutograd compiled a function in the eager run")
        return msg("dynamo compiled a frame in the eager run")
    if error.kind == "compiled-nothing" and facts[0] == "skipped" and facts[1:]:
        why = msg("dynamo gave up on each frame it began ({reason})", reason=facts[1])
        return msg("the compiled run compiled nothing: {why}", why=why)
    if error.kind == "compiled-nothing" and facts[0] in _NOTHING_COMPILED:
        return msg("the compiled run compiled nothing: {why}", why=_NOTHING_COMPILED[facts[0]])
    return error.message
