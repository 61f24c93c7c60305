"""What a run printed, in the normal form every reader of it shares: ``:expect-output:``'s
(addresses, timings, warning locations aside), without the warnings and log lines only the
compiler stack says, and a digest of all of it for what a page does not keep. Pure Python, no
torch: read by the engine (the digest), judge (judge/printed.py compares two runs) and accept.
"""

from __future__ import annotations

import hashlib
import re

from .model import PrintedDigest

#: A warning as a run prints it: ``Category: message [file:line]``, the message on one line
#: (its line breaks shown as ``\n``) and the place last, where no message reaches.
WARNING_LINE = re.compile(r"(?m)^(\w*Warning): (.*) \[(\S+):(\d+)\]$")  # category, message, file, line
#: The prefix of torch's own log lines: a level, a timestamp, a pid and a source location.
LOG_LINE = re.compile(r"(?m)^(\[\w+\]:)?[IWEVD]\d{4} \d\d:\d\d:\d\d\.\d+ +\d+ \S+:\d+\] ")

_NOISE = (
    # A warning as a run prints it, on one line whatever its message (engine/warned.py): its
    # category alone, as the legacy form below.
    (WARNING_LINE, r"<\1>"),
    # Object addresses, as a repr gives them (``<object object at 0x7f...>``, ``<function f at
    # 0x...>``): only after ``at``, so that a printed hex value (a bit pattern, ``0x3f80``) is
    # still compared.
    (re.compile(r"\bat 0x[0-9a-fA-F]+\b"), "at 0x?"),
    (re.compile(r"\b\d+(\.\d+)?(e-?\d+)?\s?(ns|us|µs|ms|s|sec|seconds)\b"), "<time>"),
    # A warning's file and line, and its text (which may hold a time or a value), vary: keep
    # its category. Warnings raised by the writer's own code name our ``<autocast-demo-N>``.
    # (Python's own form: a record written by hand, or a warning printed where our hook was
    # not, as in a process the snippet started.)
    (re.compile(r"(?m)^(?:\S+\.py|<autocast-demo-\d+>):\d+: (\w+Warning): .*(\n[ \t]+.*)?$"),
     r"<\1>"),
    (LOG_LINE, "<log> "),
    # The profiler's (kineto's) trace points: ``USDT:<date> <time> <pid>:<tid> <file>:<line>] ``.
    (re.compile(r"(?m)^USDT:\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? +\d+:\d+ \S+:\d+\] "),
     "<log> "),
    # A moment: a date with or without its time (ISO 8601, logging's ``%(asctime)s``, a
    # profiler's), a time of day, a datetime's repr, and a random UUID: two runs never share one.
    (re.compile(r"\bdatetime\.datetime\(\d+(?:, \d+)*(?:, tzinfo=[^()]*(?:\([^()]*\))?)?\)"),
     "<timestamp>"),
    (re.compile(r"\b\d{4}-\d\d-\d\d(?:[T ]\d\d:\d\d(?::\d\d(?:[.,]\d+)?)?(?:Z|[+-]\d\d:?\d\d)?)?"
                r"(?![\d:])"), "<timestamp>"),
    (re.compile(r"(?<![\d:.])\d\d:\d\d:\d\d(?:[.,]\d+)?(?![\d:])"), "<timestamp>"),
    (re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\b"),
     "<uuid>"),
    # Indentation is not recorded faithfully in an option (reST and MyST dedent it differently),
    # so a multi-line tensor print compares by its lines' content.
    (re.compile(r"^[ \t]+|[ \t]+$", re.M), ""),
)


def normalize_output(text: str) -> str:
    """Drop what varies between runs and machines: addresses, timings, moments, UUIDs,
    warning locations, and in torch's log records their prefix and the frames of a traceback
    that are not the writer's code (see :func:`writers_frames`)."""
    for pattern, replacement in _NOISE:
        text = pattern.sub(replacement, text)
    return writers_frames(text).strip()


#: A log record's line as normalised: ``<log> `` and torch's own header (``[0/0]
#: [__graph_breaks]``), then the message's line.
_LOGGED = re.compile(r"^(<log> (?:\[[^\]]*\] ?)*)(.*)$")
#: A traceback's frame line: ``File "<path>", line N, in f``.
_FRAME = re.compile(r'^\s*File "([^"]*)", line \d+')
#: The name the worker gives the writer's code (protocol.CODE_FILE ``<autocast-demo-N>``; pure
#: here, as this module imports nothing of the engine), and what a record holds for it.
_CODE = re.compile(r"<autocast-demo-\d+>|<snippet>")  # (a record's, normalised again)


def writers_frames(text: str, rename: bool = True) -> str:
    """In each log record (a line that begins ``<log> ``), a traceback (dynamo's "User code
    traceback") keeps the writer's frames only: the worker's own (its files, the wrapper round
    a compiled function, Python's ``runpy``) name the build machine and are no part of the
    page's code; caret lines go too. ``rename``: the writer's code reads ``<snippet>``, as a
    record holds it, whatever part of the demo it is (a page names its own lines instead)."""
    kept: list[str] = []
    foreign = False  # inside a frame that is not the writer's: its source line goes too
    for line in _one_per_line(text):
        logged = _LOGGED.match(line)
        if logged is None:
            foreign = False
            kept.append(line)
            continue
        body = logged.group(2)
        frame = _FRAME.match(body)
        if frame is not None:
            foreign = _CODE.fullmatch(frame.group(1)) is None
            if foreign:
                continue
        elif foreign and body.startswith("    "):
            continue
        else:
            foreign = False
        if body.strip() and set(body.strip()) <= set("^~"):
            continue
        kept.append(_CODE.sub("<snippet>", line) if rename else line)
    return "\n".join(kept)


def _one_per_line(text: str) -> list[str]:
    """The lines of ``text``, a log record the worker printed on one line (its breaks as
    ``\\n``, engine/child/warned.py) as one line each, each still marked ``<log> ``."""
    lines: list[str] = []
    for line in text.splitlines():
        logged = _LOGGED.match(line)
        if logged is None or "\\n" not in line:
            lines.append(line)
            continue
        first, *more = logged.group(2).split("\\n")
        lines += [logged.group(1) + first, *(f"<log> {part}".rstrip() for part in more)]
    return lines


def as_recorded(printed: str, logs: bool) -> str:
    """What a run printed as ``:expect-output:`` holds it: its normal form, with torch's log
    records only where ``logs`` (a record that holds one keeps them all; one that holds none
    records what the snippet printed, whatever torch logged around it)."""
    text = normalize_output(printed)
    if logs:
        return text
    return "\n".join(line for line in text.splitlines() if not _is_log(line)).strip()


def output_holds(recorded: str, printed: str) -> bool:
    """Does the ``:expect-output:`` block ``recorded`` hold for what a run ``printed``?"""
    want = normalize_output(recorded)
    return want == as_recorded(printed, keeps_logs(want))


def keeps_logs(recorded: str) -> bool:
    """Does a record (normalised) hold torch's log records?"""
    return any(_is_log(line) for line in recorded.splitlines())


def _is_log(line: str) -> bool:
    return line == "<log>" or line.startswith("<log> ")


NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?\b(?:nan|inf)\b")


def text_parts(text: str) -> tuple[str, list[int], list[float]]:
    """Text a run kept (a file it wrote, a ``StringIO``) as a printed line is compared:
    normalised, its shape (every number as ``#``), its integers (held exactly) and its other
    numbers (held to the tolerance)."""
    text = normalize_output(text)
    integers: list[int] = []
    decimals: list[float] = []
    for number in NUMBER.findall(text):
        if number.lstrip("+-").isdigit():
            integers.append(int(number))
        else:
            decimals.append(float(number))
    return NUMBER.sub("#", text), integers, decimals


_NOT_THE_SNIPPETS = re.compile(r"^(<\w*Warning>|<log>(?: .*)?)$")  # (a record's empty line: <log>)


def holds_uncompared(text: str) -> bool:
    """``text`` (as a run printed it) has a warning or a torch log line: shown, not compared."""
    return any(_NOT_THE_SNIPPETS.match(line) for line in normalize_output(text).splitlines())


def snippets_lines(text: str) -> list[str]:
    """The lines a snippet printed, without the warnings and log lines only the compiler says."""
    return [line for line in text.splitlines() if not _NOT_THE_SNIPPETS.match(line)]


def unpid(line: str, pid: int) -> str:
    return re.sub(rf"(?<![\d.]){pid}(?![\d.])", "<pid>", line)


def compared_lines(text: str) -> list[str]:
    return snippets_lines(normalize_output(text))


def printed_digest(text: str, pid: int | None = None) -> PrintedDigest:
    """All of ``text`` (what run ``pid`` printed) as the comparison reads it, in a few bytes."""
    exact, shape, pidless = hashlib.sha256(), hashlib.sha256(), hashlib.sha256()
    lines = compared_lines(text)
    for line in lines:
        exact.update(line.encode("utf-8", "replace") + b"\n")
        shape.update(NUMBER.sub("#", line).encode("utf-8", "replace") + b"\n")
        pidless.update((unpid(line, pid) if pid is not None else line).encode("utf-8", "replace")
                       + b"\n")
    return PrintedDigest(lines=len(lines), exact=exact.hexdigest(), shape=shape.hexdigest(),
                         pidless=pidless.hexdigest())
