"""A judged value as the text and CSS classes of a table cell; the table itself.

Shared by the page's tables (render.py, across.py) and the summary matrix (summary.py). Every
function here formats a judgement (judge/judgement.py); none decides what was checked or what holds.
"""

from __future__ import annotations

import string
from collections import Counter
from dataclasses import replace
from typing import TYPE_CHECKING, Literal, NamedTuple

from docutils import nodes

from ..core.i18n import _, n_
from ..judge.compare import largest_first
from ..read.syntax import DEFAULT
from .columns import headers
from .tables import set_code

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from ..core.model import DemoResult, RunRecord, VariantResult, Verdict
    from ..judge.judgement import Column, Judgement, NotChecked, Value



class Look(NamedTuple):
    mark: str  # LaTeX declares each (latex/sphinxautocastdemo.sty); the em dash every font has
    css: str  # its colour (static/autocast_demo.css)


#: What a cell can say of a value: a verdict, by its outcome, or the page's record, by whether
#: it holds here.
Said = Literal["matches", "differs", "raises", "no-config", "error",
               "holds", "broken", "unchecked", "unrecorded"]

#: Every mark and colour a results cell shows, in one table: a verdict's (of the page's tables,
#: the matrix, the table across environments) and a record's.
LOOKS: dict[Said, Look] = {
    "matches": Look("\u2713", "autocast-demo-matches"),
    "differs": Look("\u2717", "autocast-demo-differs"),
    "raises": Look("\u26a0", "autocast-demo-raises"),
    "no-config": Look("\u2014", "autocast-demo-no-config"),
    "error": Look("\u2014", "autocast-demo-error"),
    "holds": Look("\u2713", "autocast-demo-holds"),
    "broken": Look("\u2717", "autocast-demo-stale-cell"),
    "unchecked": Look("\u2014", "autocast-demo-unchecked"),
    "unrecorded": Look("", "autocast-demo-unrecorded"),
}
#: A verdict's mark by its outcome.
MARK = {outcome: LOOKS[outcome].mark for outcome in ("matches", "differs", "raises", "no-config", "error")}


def marked(said: Said, text: str, *more: str) -> tuple[str, list[str]]:
    """``text`` with the mark of ``said`` before it, and its CSS class (then ``more``)."""
    look = LOOKS[said]
    return (f"{look.mark} {text}" if look.mark else text), [look.css, *more]


def plain(said: Said, text: str) -> tuple[str, list[str]]:
    """``text`` in the colour of ``said``, without its mark (nothing was checked to mark)."""
    return text, [LOOKS[said].css]


def heading(column: Column) -> str:
    """An environment's name over its column: this build's says so."""
    if column.environment is None:
        return f"torch {column.result.torch_version}"  # (a name and its version: never translated)
    label = column.environment.label
    return _("{label} (this build)").format(label=label) if column.source == "build" else label


def and_list(names: Sequence[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``, as the page's language joins names."""
    if len(names) == 1:
        return names[0]
    return _("{names} and {last}").format(names=", ".join(names[:-1]), last=names[-1])


def short_config(result: DemoResult) -> str:
    return result.demo.config.rsplit(".", 1)[-1]


def cell(content: nodes.Node | str, classes: list[str] | None = None) -> nodes.entry:
    entry = nodes.entry(classes=classes or [])
    entry += content if isinstance(content, nodes.Node) else nodes.paragraph(text=content)
    return entry


def labelled(column: str, text: str, classes: list[str]) -> nodes.entry:
    """A cell that says which column it is in (``autocast-demo-col-*``): on a phone the rows
    stack into cards, and the stylesheet puts the column's name before each cell."""
    return cell(text, [*classes, f"autocast-demo-col-{column}"])


def table(headers: list[str], rows: Sequence[list[nodes.entry] | nodes.row],
          widths: list[int] | None = None, classes: tuple[str, ...] = ()) -> nodes.table:
    """A results table: a row of cells each, or a row made already (a heading row, say).
    ``widths``: the columns' in characters, else each column's longest text (8 to 40)."""
    out = nodes.table(classes=["autocast-demo-results", *classes])
    group = nodes.tgroup(cols=len(headers))
    out += group
    # Column widths in characters: the text builder lays the table out with them.
    if widths is None:
        cells = [row for row in rows if not isinstance(row, nodes.row)]
        widths = [min(40, max(8, len(text), *(len(row[index].astext()) for row in cells)))
                  for index, text in enumerate(headers)]
    for width in widths:
        group += nodes.colspec(colwidth=width)
    head = nodes.thead()
    header = nodes.row()
    for text in headers:
        header += cell(text)
    head += header
    group += head
    body = nodes.tbody()
    for made in rows:
        if isinstance(made, nodes.row):
            body += made
            continue
        line = nodes.row()
        for entry in made:
            line += entry
        body += line
    group += body
    return out


def verdict_text(value: Value, torch: str) -> tuple[str, list[str]]:
    """What compiled did against eager, with its mark, or why it was not checked with ``torch``."""
    why = value.why
    if why is not None and why.other_torch:
        # Another torch's result: what it said, without the mark of a checked one.
        return plain("unchecked", _("{outcome} with torch {other} (cached; not checked with "
                                    "torch {torch})").format(outcome=outcome_text(value.result),
                                                             other=why.other_torch, torch=torch))
    if why is not None:
        return marked("error", why_words(value, why, torch).text, LOOKS["unchecked"].css)
    return marked(value.result.verdict.outcome, outcome_text(value.result))


def outcome_text(vr: VariantResult) -> str:
    """What compiled did against eager, as a table cell says it (no mark)."""
    v = vr.verdict
    if v.outcome == "matches":
        if v.max_abs:  # within the tolerance, not bitwise: which tensor is furthest off
            worst = max((d for d in v.diffs if d.max_abs), key=lambda d: d.max_abs or 0.0, default=None)
            text = (_("matches eager (max |\u0394| {diff} in {tensor})") if worst
                    else _("matches eager (max |\u0394| {diff})")).format(
                diff=f"{v.max_abs:.1e}", tensor=worst.name if worst else "")
        else:
            text = _("matches eager")
        # (a cut view gives a match only where the demo says :partial-view:)
        return (_("{matches} in what was compared (partial view accepted: {cut})").format(
            matches=text, cut=v.cut) if v.cut else text)
    if v.outcome == "differs":
        failing = largest_first(v.diffs)
        if not failing:
            return _("differs ({note})").format(note=v.note) if v.note else _("differs")
        first = failing[0]
        if first.max_abs is not None:
            what = _("{tensor}, max |\u0394| {diff}").format(tensor=first.name, diff=f"{first.max_abs:.2e}")
        else:
            what = (_("{tensor}: {note}").format(tensor=first.name, note=first.note) if first.note
                    else first.name)
        return _differs(what, len(failing) - 1)
    if v.outcome == "no-config":
        return _("no such config in this torch")
    if v.outcome == "raises":
        if v.eager_exception and v.eager_exception == v.exception:
            return _("raises {exception} (eager too)").format(exception=v.exception)
        if v.eager_exception:
            return _("raises {exception} (eager raises {eager})").format(
                exception=v.exception, eager=v.eager_exception)
        return _("raises {exception}").format(exception=v.exception)
    return _("not checked")


def _differs(what: str, others: int) -> str:
    """``differs (w.grad, max |Δ| 5.00e-01)``, and how many other tensors differ too."""
    if others > 0:
        return n_("differs ({what}) and {n} more", "differs ({what}) and {n} more",
                  others).format(what=what, n=others)
    return _("differs ({what})").format(what=what)


def why_words(value: Value, why: NotChecked, torch: str) -> Words:
    """Why ``value`` was not checked with ``torch``, in the page's language, from the
    judgement's cause and the runs' own facts (never from its English words): a cell's, a
    footer's and the matrix's."""
    vr = value.result
    kind, short = _("not run"), _("not run")
    unchecked = False  # the kind is "not checked", which a footer's sentence says already
    if why.cause == "missing":
        kind = short = _("no result")
        reason = _("none kept with these docs")
    elif why.cause == "no-cuda":
        if _stopped(vr)[1].status == "skipped":
            kind = _("skipped")
            short = _("skipped: no CUDA")
        else:
            short = _("not run: no CUDA")
        reason = _("no CUDA on the build machine")
    elif why.cause == "engine":
        reason = _("no demo can run on the build machine")
    elif why.cause == "died":
        reason = _("the build's worker stopped before it ran")
    elif why.cause == "stale":
        reason = _("execution is off and a module it imports has changed since its cached result")
    elif why.cause == "never":
        reason = _("execution is off and nothing is cached")
    elif why.cause == "refused":
        # The worker's own words (a recorded fact, as an output is): not ours to translate.
        reason = why.reason if why.reason != "refused" else _("refused")
    elif why.cause == "stopped":
        label, run = _stopped(vr)
        kind, unchecked = _("not checked"), True
        short = {"timeout": _("timed out"), "crashed": _("crashed")}.get(run.status, run.status)
        reason = (_("the compiled run {what}") if label == "compiled"
                  else _("the eager run {what}")).format(what=short)
    elif why.cause == "other-torch":
        kind, unchecked = _("not checked"), True
        short = f"torch {why.other_torch}"
        reason = _("cached result of torch {other}, not checked with the installed torch "
                   "{torch}").format(other=why.other_torch, torch=torch)
    else:  # no verdict: the comparison's note (its facts, in its words), else says so
        kind, unchecked = _("not checked"), True
        short = kind
        reason = vr.verdict.note or _("no verdict")
    sentence = reason if unchecked else _("{kind} ({reason})").format(kind=kind, reason=reason)
    return Words(_("{kind}: {reason}").format(kind=kind, reason=reason), sentence, short)


class Words(NamedTuple):
    """Why a value was not checked, as each presenter says it."""

    text: str  # a table cell's: ``skipped: no CUDA on the build machine``
    sentence: str  # to follow "Not checked in this build: ": ``skipped (no CUDA on the build machine)``
    short: str  # the matrix's: ``skipped: no CUDA``


def _stopped(vr: VariantResult) -> tuple[str, RunRecord]:
    """The run the judgement says did not finish (the compiled one is looked at first, as
    judge.unchecked does), with its name."""
    for label, run in (("compiled", vr.compiled), ("eager", vr.eager)):
        if run.status not in ("ok", "raised"):
            return label, run
    return "compiled", vr.compiled


def verdict_kind(verdict: Verdict) -> tuple[object, ...]:
    """What a verdict says, without its numbers: environments whose cells differ only in those
    (another CPU's rounding, within the tolerance) share a column (across.py)."""
    return (verdict.outcome, verdict.exception, verdict.eager_exception, verdict.cut,
            tuple(d.name for d in verdict.diffs if not d.equal))


def outcome_across(results: Sequence[VariantResult]) -> str:
    """:func:`outcome_text` of one verdict kind in several environments: their numbers as the
    range they span (``up to``: bitwise equal in some), so that the cell holds in each."""
    texts = list(dict.fromkeys(outcome_text(vr) for vr in results))
    first = results[0].verdict
    if len(texts) == 1 or first.outcome not in ("matches", "differs"):
        return texts[0]  # (other outcomes' cells hold no numbers)
    if first.outcome == "matches":
        exact = replace(results[0], verdict=replace(first, max_abs=None))
        spread = _spread([vr.verdict.max_abs for vr in results], ".1e")
        # Which tensor is furthest off, where every environment names the same one.
        furthest = {_worst(vr.verdict) for vr in results if vr.verdict.max_abs}
        if len(furthest) == 1 and "" not in furthest:
            return _("{matches} (max |\u0394| {diff} in {tensor})").format(
                matches=outcome_text(exact), diff=spread, tensor=furthest.pop())
        return _("{matches} (max |\u0394| {diff})").format(matches=outcome_text(exact), diff=spread)
    failing = [largest_first(vr.verdict.diffs) for vr in results]
    if not failing[0]:
        return _("differs")
    # The first environment's largest, and that tensor's difference in each of the others
    # (which differ in the same tensors: verdict_kind).
    name, others = failing[0][0].name, len(failing[0]) - 1
    worst = [next((d.max_abs for d in diffs if d.name == name), None) for diffs in failing]
    what = (_("{tensor}, max |\u0394| {diff}").format(tensor=name, diff=_spread(worst, ".2e"))
            if None not in worst else name)
    return _differs(what, others)


def _worst(verdict: Verdict) -> str:
    """The tensor of a match within the tolerance that is furthest off."""
    worst = max((d for d in verdict.diffs if d.max_abs), key=lambda d: d.max_abs or 0.0, default=None)
    return worst.name if worst else ""


def _spread(numbers: Sequence[float | None], form: str) -> str:
    low, high = min(n or 0.0 for n in numbers), max(n or 0.0 for n in numbers)
    if low == high:
        return format(high, form)
    if not low:
        return _("up to {high}").format(high=format(high, form))
    return _("{low} to {high}").format(low=format(low, form), high=format(high, form))


def records_hold(judged: Judgement) -> bool:
    """Every value did what the page records for it, in every environment its table shows: an
    "as recorded?" column would say only "yes", so the footer says it once instead."""
    if judged.several:
        return all(a.record == "holds" and not a.unchecked_in for a in judged.across)
    return all(v.record == "holds" for v in judged.here.values)


def recorded_text(value: Value) -> tuple[str, list[str]]:
    """The "as recorded?" cell: does the page's record of the value hold here?"""
    if value.record == "unrecorded":
        return marked("unrecorded", _("not recorded"))
    if value.record == "unchecked":  # neither holds nor broken: nobody looked
        return plain("unchecked", _("records {expected} (not checked)").format(expected=value.expected))
    if value.record == "broken":
        return marked("broken", broken_text(value.broken, value.expected))
    return marked("holds", _("yes ({expected})").format(expected=value.expected))


def broken_text(broken: frozenset[str], expected: str | None, where: str = "") -> str:
    """Which record broke: the outcome (what the page records), the printed output, or both;
    ``where``: the environments it broke in, when not only here."""
    if broken == {"output"}:
        which = _("the printed output is not the recorded one (outcome {expected} holds)")
    elif "output" in broken:
        which = _("records {expected}, and the printed output is not the recorded one")
    else:
        which = _("records {expected}")
    which = which.format(expected=expected)
    if where:
        return _("no, in {where}: {which}").format(where=where, which=which)
    return _("no: {which}").format(which=which)


def outcome_as_recorded(value: Value, torch: str) -> tuple[str, list[str]]:
    """``:show: record``: what happened, and whether the page says so, without the colour of a
    verdict (the snippet is not about compiled against eager)."""
    if not value.checked:
        return verdict_text(value, torch)
    happened = value.result.verdict.text  # (as ``:expect:`` says it: a name, not a word)
    if value.record == "unrecorded":
        return marked("unrecorded", _("{happened} (not recorded)").format(happened=happened))
    if value.record == "broken":
        return marked("broken", _("{happened}, but the page records {expected}").format(
            happened=happened, expected=value.expected))
    return marked("holds", _("{happened}, as recorded").format(happened=happened))


def dtypes(value: object) -> list[str]:
    """The torch dtypes a value names (``{"__torch__": "bfloat16"}`` as JSON), anywhere in it."""
    if isinstance(value, dict):
        if set(value) == {"__torch__"} and isinstance(value["__torch__"], str):
            return [value["__torch__"]]
        return [d for v in value.values() for d in dtypes(v)]
    if isinstance(value, list):
        return [d for v in value for d in dtypes(v)]
    return []


def set_line(result: DemoResult, vr: VariantResult) -> str:
    """The lines that set this value in the reader's own code, run as they are when pasted alone
    into a fresh ``python``: ``import torch`` does not import ``torch._functorch.config``, so
    the module that holds the config is imported first (as the worker does: everything before
    the last dot), and torch itself where the value names a dtype and that module is not torch's."""
    config = result.demo.config
    module = config.rpartition(".")[0]
    imports = [f"import {module}"] if module else []
    if dtypes(vr.variant.value) and module.split(".")[0] != "torch":
        imports.insert(0, "import torch")
    return "\n".join([*imports, f"{config} = {vr.variant.source}"])


def set_block(code: str) -> set_code:
    """Lines to copy, as a block that a reader's copy button takes whole."""
    return set_code(code, code, language="python", classes=["autocast-demo-set"])


def listed() -> str:
    """The link of a value whose lines the page lists once, under its first table."""
    return _("its lines to copy")


def settable(judged: Judgement, name: str) -> bool:
    """Can a reader run the lines that set value ``name``: some torch the demo was checked with
    has its config (where none has, they raise AttributeError in each)."""
    return any(column.value(name).result.verdict.outcome != "no-config" for column in judged.columns)


def value_cell(result: DemoResult, vr: VariantResult, listed: Mapping[str, str] | None = None,
               runs: bool = True) -> nodes.entry:
    """The row's value: its name and the lines that set it, or, where the page lists those once
    for all its tables (``listed``: lines -> the id of the place that lists them), a link there.
    ``runs``: false where no torch checked has the config (settable): then no lines to copy."""
    entry = nodes.entry(classes=["autocast-demo-value"])
    entry += nodes.paragraph("", "", nodes.strong(text=vr.variant.name))
    if vr.variant.name == DEFAULT:  # nothing to copy: the row is about what torch has
        found = vr.compiled.config_default or vr.eager.config_default
        said = (_("not set: torch's default, here {value}").format(value=found) if found
                else _("not set: torch's default"))
        entry += nodes.paragraph(text=said, classes=["autocast-demo-set-default"])
    elif not runs:
        entry += nodes.paragraph("", "", *words(_("{code}: no torch checked has the config to set"),
                                                code=nodes.literal(text=vr.variant.source)),
                                 classes=["autocast-demo-set-default"])
    elif anchor := (listed or {}).get(code := set_line(result, vr)):
        link = nodes.reference("", _("its lines to copy"), internal=True, refid=anchor)
        entry += nodes.paragraph("", "", link, classes=["autocast-demo-set-listed"])
    else:
        entry += set_block(code)
    if vr.compiled.config_set:  # the row did not run under its value alone
        at = vr.compiled.config_set_at
        values = ", ".join(vr.compiled.config_set)
        said = (_("then set by the snippet itself to {values} (line {line})").format(
            values=values, line=result.where_frame(at[0]).line) if at
                else _("then set by the snippet itself to {values}").format(values=values))
        entry += nodes.paragraph(text=said, classes=["autocast-demo-config-set"])
    return entry


def shared_lines(judged: Sequence[Judgement], first: str) -> dict[str, tuple[list[str], str]]:
    """The lines that set a value which more than one of the page's tables shows: lines -> the
    names the tables give that value, and the id of the place that lists them (``first``: the
    page's first demo, which makes the ids its own in a tree of several pages)."""
    shown: Counter[str] = Counter()
    names: dict[str, list[str]] = {}
    for one in judged:
        lines = {set_line(one.result, vr): vr.variant.name for vr in one.result.variants
                 if vr.variant.name != DEFAULT and settable(one, vr.variant.name)}
        shown.update(lines.keys())
        for line, name in lines.items():
            names.setdefault(line, [])
            if name not in names[line]:
                names[line].append(name)
    shared = [line for line in names if shown[line] > 1]
    return {line: (names[line], nodes.make_id(f"autocast-demo-{first}-set-{index + 1}"))
            for index, line in enumerate(shared)}


def lines_to_copy(lines: Mapping[str, tuple[list[str], str]]) -> list[nodes.Node]:
    """The lines of values that several tables of the page show, each once, with its name:
    the tables' cells link here."""
    if not lines:
        return []
    box = nodes.container(classes=["autocast-demo-lines"])
    box += nodes.paragraph(text=_("The lines that set the values of several tables on this page, "
                                  "each to copy as it is:"), classes=["autocast-demo-lines-lead"])
    for line, (names, anchor) in lines.items():
        # A target, not the block's own id: LaTeX and Texinfo write a label for a target.
        box += nodes.target("", "", ids=[anchor])
        box += nodes.paragraph("", "", nodes.strong(text=", ".join(names)))
        box += set_block(line)
    return [box]


def legend_line(recorded: bool) -> nodes.paragraph:
    """How to read the tables, once per page (a reader must not need the prose for it), in the
    fewest words: the marks; the "as recorded?" column only where a table of the page has it.
    How exactly each demo compares is its footer's (or the page's line under the first table)."""
    text = _("Marks: {matches} compiled matches eager in every tensor, gradient and printed line; "
             "{differs} differs (largest difference first); {raises} the compiled run "
             "raised.").format(matches=MARK["matches"], differs=MARK["differs"], raises=MARK["raises"])
    if recorded:
        text += " " + _("{recorded}: is the page still right?").format(recorded=headers()["recorded"])
    return nodes.paragraph(text=text, classes=["autocast-demo-legend"])


def words(message: str, **parts: nodes.Node) -> list[nodes.Node]:
    """A translated ``message`` whose placeholders are nodes (a literal, a link): its text
    around them as text nodes, each node where the translation puts its placeholder."""
    out: list[nodes.Node] = []
    for text, name, _spec, _conversion in string.Formatter().parse(message):
        if text:
            out.append(nodes.Text(text))
        if name is not None:
            out.append(parts[name])
    return out
