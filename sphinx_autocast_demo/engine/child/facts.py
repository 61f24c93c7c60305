"""What ``torch.compile`` did in a compiled run, read from dynamo once the snippet ended: the
graphs it compiled, each graph break with its reason and the writer's line, each recompilation
with the guard that failed, each frame it skipped with why (model.CompileFacts). Read through
dynamo's counters, its list of graph-break reasons and its compilation metrics, each of which
torch keeps for its own tools (``torch._dynamo.explain``, tlparse); where a release lacks one,
that fact is left out rather than guessed."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from ..protocol import CODE_FILE

#: ``File "<autocast-demo-0>", line 3, in f`` and the line's text, as dynamo quotes a frame.
_USER_FRAME = re.compile(r'File "(' + re.escape(CODE_FILE) + r'(\d+)>)", line (\d+), in (\S+)\n[ \t]*(.*)')
#: A recompilation's reason: ``0/0: c == 1.0   # y = x * c  # <autocast-demo-0>:3 in f``.
_GUARD = re.compile(r"^\s*\d+/\d+:\s*(.*?)\s*(?:#|$)")


def compile_facts() -> dict[str, Any]:
    """The facts as JSON (model.CompileFacts's fields)."""
    from torch._dynamo import utils

    breaks: Counter[tuple[str, tuple[tuple[int, int, str, str], ...]]] = Counter()
    for found in getattr(utils, "graph_break_reasons", ()):
        first = str(getattr(found, "reason", "")).strip().splitlines()
        stack = [(int(fs.filename[len(CODE_FILE):-1]), int(fs.lineno or 0), fs.name, fs.line or "")
                 for fs in getattr(found, "user_stack", ()) or ()
                 if str(fs.filename).startswith(CODE_FILE) and fs.filename[len(CODE_FILE):-1].isdigit()]
        breaks[(first[0] if first else "", tuple(stack[-1:]))] += 1
    recompiles = []
    metrics: Any = getattr(utils, "get_compilation_metrics", lambda: [])
    for entry in metrics():
        reason = str(getattr(entry, "recompile_reason", None) or "")
        if not reason.strip():
            continue
        guard = _GUARD.match(reason.splitlines()[0])
        frames = [(int(m[2]), int(m[3]), m[4], m[5].strip()) for m in _USER_FRAME.finditer(reason)]
        recompiles.append({"guard": guard[1] if guard else reason.splitlines()[0].strip(),
                           "at": [_frame(f) for f in frames[-1:]]})
    return {"graphs": int(utils.counters["stats"].get("unique_graphs", 0)),
            "breaks": [{"reason": reason, "at": [_frame(f) for f in at], "count": count}
                       for (reason, at), count in breaks.items()],
            "recompiles": recompiles,
            "skipped": [{"reason": reason, "count": count} for reason, count in skipped_frames()]}


def skipped_frames() -> list[tuple[str, int]]:
    """The frames dynamo began and did not compile (it ran them eagerly, or let their error
    out), by reason: (reason, how many); one reason "" where the reasons cannot be told."""
    from torch._dynamo import utils

    frames = utils.counters["frames"]
    skipped = max(0, int(frames.get("total", 0)) - int(frames.get("ok", 0)))
    if not skipped:
        return []
    # What dynamo could not do stays among the "unimplemented" where no graph break took it
    # over; a graph break's can stay too (a data-dependent branch), so the reasons are taken
    # only where they account for every frame skipped.
    reasons: Counter[str] = Counter()
    for reason, count in utils.counters.get("unimplemented", {}).items():
        first = str(reason).strip().splitlines()
        reasons[first[0] if first else ""] += int(count)
    return list(reasons.items()) if sum(reasons.values()) == skipped else [("", skipped)]


def _frame(found: tuple[int, int, str, str]) -> dict[str, Any]:
    part, line, function, text = found
    return {"part": part, "line": line, "function": function, "text": text}
