"""Why a run gave no verdict to hold the page's record against, in the writer's words.

Apart from check, which holds verdicts against records: a run that was not started, hung,
died or was not what it claimed to be is no verdict at all, and saying where to look (the
signal, the last output, the frames it stopped in) is a job of its own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.i18n import msg
from ..core.model import Finding
from .notes import reason_text

if TYPE_CHECKING:
    from ..core.model import DemoResult, Location, RunRecord, Severity, SnippetError, VariantResult
    from ..core.subtypes import Subtype


def run_error(result: DemoResult, vr: VariantResult) -> Finding | None:
    """A run that did not finish normally: located at the failing statement when possible."""
    # (Each msg() a statement of its own: Babel reads none inside another's argument.)
    where_it_was, where_it_crashed = msg("where it was"), msg("where it crashed")
    for run, label in vr.runs:
        if run.status in ("skipped", "refused"):
            engine = run.status == "refused" and run.not_run in ("engine", "died")
            return _error(vr, "engine" if engine else "not-run", result.demo.location, run.detail,
                      severity="missing" if run.status == "skipped" else "error")
        if run.status == "timeout":
            return _error(
                vr, "timeout", _stopped_location(result, run),
                msg("the {run} run did not finish: it was {detail}, with every "
                     "process it started; look for a loop that never ends or a wait "
                     "(a sleep, a read, input()) that nothing answers, or raise the "
                     ":timeout: option (or autocast_demo_timeout){tail}{trace}",
                     run=_RUNS[label], detail=how_it_ended(result, run), tail=_tail(run.output),
                     trace=_stopped_trace(result, run, where_it_was)),
            )
        if run.status == "crashed":
            return _error(
                vr, "crash", _stopped_location(result, run),
                msg("the {run} run died: {detail}{why}; find what ends the process "
                     "(the build went on without this run){tail}{trace}",
                     run=_RUNS[label], detail=how_it_ended(result, run), why=_why(run),
                     tail=_tail(run.output),
                     trace=_stopped_trace(result, run, where_it_crashed)),
            )
    for run, _ in vr.runs:
        if run.error is not None and run.error.kind:
            return _not_a_verdict(result, vr, run.error)
    if (vr.verdict.outcome == "error" and vr.verdict.compared == 0 and not vr.verdict.cut
            and vr.compiled.status == "ok"):
        return _error(
            vr, "nothing-compared", result.demo.location,
            msg("nothing to compare: the snippet leaves no tensor reachable from its "
                 "top-level names and prints nothing, so its compiled and eager runs "
                 "cannot be told apart; bind what it computes (z = region(x, w), g = "
                 "torch.autograd.grad(z, w)) or print it"),
        )
    if vr.verdict.outcome == "error" and vr.verdict.cut:
        return _error(
            vr, "partial-view", result.demo.location,
            msg("{note}; everything that was compared matches (if anything was), but "
                 "a match cannot be confirmed from part of what a reader could see: keep "
                 "less within reach of the snippet's names (del what is not the point), "
                 "or add :partial-view: to accept a match from what was compared (the "
                 "page then says so)", note=vr.verdict.note),
        )
    if vr.compiled.status == "raised" and vr.compiled.error is not None:
        error = vr.compiled.error
        return _error(
            vr, "snippet-error", result.where(error),
            msg("the snippet raised {error}: {message}\n{traceback}", error=error.type,
                 message=error.message, traceback=result.traceback(error))
            if error.message else
            msg("the snippet raised {error}\n{traceback}", error=error.type,
                 traceback=result.traceback(error)),
        )
    return None


def _not_a_verdict(result: DemoResult, vr: VariantResult, error: SnippetError) -> Finding:
    """A run that ended so that no verdict can be drawn from it, and not by the snippet's own
    doing that a page could record (``raises``): each is a located error of its kind."""
    demo = result.demo
    subtype: Subtype = "eager-compiled"
    if error.kind == "no-config":
        subtype = "no-config"
        message = error.message  # (check._no_config says what to record, across environments)
        location = demo.at(demo.source_map.line_of("config"))
    elif error.kind == "compiled-nothing":
        subtype = "compiled-nothing"
        message = msg("{reason}, so it would be compared with the eager run as if it were "
                       "compiled: compile the code the page is about (torch.compile(fn), "
                       "model.compile(), or AOTAutograd's aot_function), and build without "
                       "TORCH_COMPILE_DISABLE; where compiling nothing is the point, record "
                       "what compiling did (:expect-compile: graphs 0, with the frames skipped)",
                       reason=reason_text(error))
        location = demo.location
    elif error.kind == "config-set":
        subtype = "config-set"
        message = msg("never ran under its own value: {reason} ({config}), so this row would "
                       "be a verdict of that value; leave the config to the demo's values (set "
                       "it in the demo's own code where overriding it is the point)",
                       reason=reason_text(error), config=demo.config)
        location = result.where(error)
    elif error.kind == "config-other":
        subtype = "config-other"
        message = msg("never ran under its own value: {reason} ({config}), a value the "
                       "snippet never assigned to it: a thread starts from torch's defaults, "
                       "and a patch that writes torch's config directly is not seen. Set the "
                       "config in the thread that compiles, by assignment or config.patch, so "
                       "that each row runs under its own value",
                       reason=reason_text(error), config=demo.config)
        location = result.where(error)
    else:  # eager-compiled
        message = msg("the eager run is not eager: {reason}. There torch.compile, "
                       "torch.compiler.compile, nn.Module.compile, torch._dynamo.optimize, "
                       "optimize_assert and AOTAutograd's aot_function and aot_module return "
                       "what they are given; compile through one of them, or the demo would "
                       "compare compiled with compiled", reason=reason_text(error))
        location = result.where(error)
    return _error(vr, subtype, location, message)


def _error(vr: VariantResult, subtype: Subtype, location: Location, message: str,
           severity: Severity = "error") -> Finding:
    """A finding about one value's runs, which gave no verdict."""
    return Finding(severity=severity, subtype=subtype, variants=(vr.variant.name,),
                   location=location, message=message)


def _stopped_location(result: DemoResult, run: RunRecord) -> Location:
    """The line a hung or crashed run was on (from its faulthandler dump), else the directive."""
    if run.error is None or not run.error.frames:
        return result.demo.location
    return result.where(run.error)


def _stopped_trace(result: DemoResult, run: RunRecord, where: str) -> str:
    if run.error is None or not run.error.frames:
        return ""
    trace = result.traceback(run.error).splitlines()[1:-1]  # frames only
    return msg("\n  {where}:\n{frames}", where=where, frames="\n".join(trace))


def how_it_ended(result: DemoResult, run: RunRecord) -> str:
    """How a run that did not finish ended, as words to say in the console's or the page's
    language, from the record's facts: its ``detail`` is the engine's English, which the cache
    keeps as it is."""
    if run.status == "timeout":
        return msg("stopped after its timeout of {seconds} s",
                   seconds=format(result.demo.timeout, "g"))
    if run.killed_by:
        return msg("the process was killed by {signal}", signal=run.killed_by)
    if run.exit_status is not None:
        return msg("the process exited with status {status} before the snippet finished",
                   status=run.exit_status)
    return run.detail  # (its result could not be read: the reader's own words, as recorded)


def _why(run: RunRecord) -> str:
    """What usually sends a signal to a snippet, so the writer knows where to look."""
    if run.killed_by:
        return msg(" ({why})", why=_SIGNALS[run.killed_by]) if run.killed_by in _SIGNALS else ""
    return "" if run.exit_status is None else msg(" (os._exit(), or native code that exits)")


# Said when a message is printed: the words stay data until then (msg() keeps them).
_SIGNALS = {
    "SIGSEGV": msg("a segmentation fault: native code read memory it does not own"),
    "SIGABRT": msg("native code aborted, often a failed assertion in a C++ library"),
    "SIGKILL": msg("killed from outside, often by the kernel for using too much memory"),
    "SIGBUS": msg("a bus error: native code read memory it does not own"),
    "SIGFPE": msg("an arithmetic fault in native code"),
}
_RUNS = {"compiled": msg("compiled"), "eager": msg("eager")}


def _tail(output: str) -> str:
    lines = [line for line in output.strip().splitlines() if line.strip()][-3:]
    return msg("\n  last output: {lines}", lines="\n  ".join(lines)) if lines else ""
