"""What a run leaves behind, read into its record: the pool's other half.

A run's process writes its result (JSON), its tensors' float64 copies, what it printed and, if
it hung or crashed, faulthandler's dumps, each to a file of its own in the build's scratch
directory (:func:`run_paths`). :func:`collect` turns them and the worker's exit event into a
:class:`Finished` and removes them.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import signal
from dataclasses import asdict, dataclass
from pathlib import Path

from ...core.fromjson import run_record_from_json
from ...core.model import Frame, RunRecord, SnippetError
from ...core.printed import printed_digest
from ...core.publish import python_places
from ...core.text import bounded, printable
from ...plan.cache import INPUTS
from ..protocol import KEEP_BYTES, Exit, Job


@dataclass
class Run:
    """One execution request: ``job`` is what :func:`.job.run_job` reads."""

    key: str  # unique within the build
    job: Job
    timeout: float
    fresh: bool = False  # a new interpreter, never a fork of the warm worker (CUDA)


@dataclass
class Finished:
    run: Run
    record: RunRecord
    data: bytes  # float64 copies of the run's tensors (see ``TensorRecord``'s offsets)
    offsets: dict[str, int | None]
    fresh: bool = False  # it ran in a new interpreter, not a fork of the warm worker
    prefaulted: int = 0  # bytes of the worker its process had copied before the run began
    zygote: str = "warm"  # "eager": forked from the zygote made before the warm-up
    early: bool = False  # it ended before the warm-up did
    before_turn: bool = False  # it went before its turn: a run of its snippet was compiling
    # The writer's files its process had (imports.writers_files); None: not known (the run did
    # not end with a result, or could not tell), so its result is not served from the cache.
    imports: tuple[str, ...] | None = None


def run_paths(scratch: Path, run: Run) -> dict[str, str]:
    """Where ``run``'s process reads its job and leaves what it made, in ``scratch``."""
    stem = str(scratch / run.key)
    return {
        "result_path": stem + ".json",
        "output_path": stem + ".out",
        "data_path": stem + ".bin",
        "job_path": stem + ".job.json",
        "stack_path": stem + ".stack",
        "cwd": stem + ".cwd",
    }


def collect(run: Run, files: dict[str, str], event: Exit) -> Finished:
    """``run``'s record from what it left in ``files`` (:func:`run_paths`) and its exit."""
    paths = {name: Path(p) for name, p in files.items()}
    # The scratch directory is the run's ".": its path is this build's, never the page's.
    scratch = str(paths["cwd"])
    finished = paths["result_path"].exists() and event["returncode"] == 0 and not event["timed_out"]
    raw = json.loads(_unscratch(paths["result_path"].read_text(encoding="utf-8"), scratch)) \
        if finished else {}
    printed = _without_ids(_unscratch(_read_output(paths["output_path"]), scratch),
                           raw.pop("ids", None))
    output = bounded(printed, cut=event["dropped"] > 0)
    # The comparison reads all that was kept, not only what a page shows; past what was kept
    # its view is cut, and a cut view never confirms a match.
    cut = (f"it printed more than the {KEEP_BYTES >> 20} MiB of output that is kept for the "
           "comparison" if event["dropped"] else "")
    seconds = event["seconds"]
    data = paths["data_path"].read_bytes() if paths["data_path"].exists() else b""
    offsets: dict[str, int | None] = {}
    imports: tuple[str, ...] | None = None
    if event["timed_out"]:
        detail = f"stopped after its timeout of {run.timeout:g} s"
        record = RunRecord(
            status="timeout", output=output, seconds=seconds, detail=detail,
            error=_stopped_at(paths["stack_path"], run.job, "Timeout", detail),
        )
    elif finished:
        offsets = {t["name"]: t.get("offset") for t in raw.get("tensors", ())}
        listed = raw.get("imports")
        if isinstance(listed, list):  # (one written in its scratch directory is relative now: gone)
            imports = tuple(p for p in listed if isinstance(p, str) and (
                os.path.isabs(p) or p.startswith(INPUTS)))
        pid = raw.get("pid") if isinstance(raw.get("pid"), int) else None
        if output != printed:
            raw["printed"] = asdict(printed_digest(printed, pid))
        raw["cut"] = "; ".join(filter(None, (raw.get("cut"), cut)))
        try:
            record = run_record_from_json({**raw, "output": output})
        except ValueError as exc:  # past the model's bounds (20,000 tensors, say)
            record = RunRecord(status="crashed", output=output, seconds=seconds,
                               detail=f"its result could not be read: {exc}")
    else:
        code = event["returncode"]
        detail = _describe_exit(code)
        record = RunRecord(
            status="crashed", output=output, seconds=seconds, detail=detail,
            killed_by=signal_name(code), exit_status=code if code >= 0 else None,
            error=_stopped_at(paths["stack_path"], run.job, "Crash", detail),
        )
    shutil.rmtree(paths.pop("cwd"), ignore_errors=True)
    for path in paths.values():
        path.unlink(missing_ok=True)
    return Finished(run=run, record=record, data=data, offsets=offsets,
                    fresh=event["fresh"], prefaulted=event["prefaulted"], imports=imports)


_INTEGER = re.compile(r"(?<![\w.])(?:0x[0-9a-f]+|\d+)(?![\w.])")


def _without_ids(text: str, ids: object) -> str:
    """``text`` with each number ``id()`` gave the snippet (``ids``), decimal or hex, as
    ``<id>``: an address, never the same in two runs."""
    if not isinstance(ids, list) or not ids:
        return text
    given = {str(n) for n in ids if isinstance(n, int)} | {hex(n) for n in ids if isinstance(n, int)}
    return _INTEGER.sub(lambda m: "<id>" if m.group() in given else m.group(), text)


def _unscratch(text: str, scratch: str) -> str:
    """Without the build machine's places: the run's scratch directory is ``.``, and a file of
    Python's or of an installed package (a warning's location) is named from there on, as
    ``torch/_inductor/codegen/cpp.py``: a page shows no path of the machine that built it."""
    text = text.replace(scratch + os.sep, "").replace(scratch, ".")
    for place in _installed():
        text = text.replace(place, "")
    return text


@functools.cache
def _installed() -> tuple[str, ...]:
    places = {os.path.join(path, "") for path, _ in python_places()}  # (one list: core.publish)
    return tuple(sorted(places, key=len, reverse=True))  # (the longest first: site-packages is in lib)


def _read_output(path: Path) -> str:
    """What a run printed, as the worker kept it (zygote.KEEP_BYTES), made printable."""
    try:
        raw = path.read_bytes()
    except OSError:
        return ""
    return printable(raw.decode("utf-8", errors="replace"))


# A frame of the writer's code in a faulthandler dump (file names from protocol.CODE_FILE).
_DUMPED_FRAME = re.compile(r'^\s*File "<autocast-demo-(\d+)>", line (\d+) in (.+)$')


def _stopped_at(path: Path, job: Job, kind: str, detail: str) -> SnippetError | None:
    """Where the writer's code was when it hung or crashed, from the child's faulthandler dump.

    Dumps list the most recent call first, one block per thread, and repeat while the run
    lives: the last block that shows the writer's code is where it was last.
    """
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    texts = [*job.get("setup", ()), job.get("code", "")]
    for block in reversed(re.split(r"\n(?=\S)", text)):
        frames = []
        for line in block.splitlines():
            match = _DUMPED_FRAME.match(line)
            if match and int(match.group(1)) < len(texts):
                part, lineno = int(match.group(1)), int(match.group(2))
                lines = texts[part].splitlines()
                code = lines[lineno - 1].strip() if 0 < lineno <= len(lines) else ""
                frames.append(Frame(part, lineno, match.group(3).strip(), code))
        if frames:
            return SnippetError(type=kind, names=(), message=detail, frames=tuple(frames[::-1]))
    return None


def signal_name(returncode: int) -> str:
    """``SIGSEGV`` for a process's returncode -11 (``signal 99`` for one Python has no name
    for); ``""`` for a process that no signal killed."""
    if returncode >= 0:
        return ""
    try:
        return signal.Signals(-returncode).name
    except ValueError:
        return f"signal {-returncode}"


def _describe_exit(returncode: int) -> str:
    if returncode < 0:
        return f"the process was killed by {signal_name(returncode)}"
    return f"the process exited with status {returncode} before the snippet finished"
