"""A judged value as the text and CSS classes of a table cell; the table itself.

Shared by the page's tables (render.py, across.py) and the summary matrix (matrix.py). Every
function here formats a judgement (judge/judgement.py); none decides what was checked or what holds.
Why a value was not checked is worded in why.py; the lines that set a value, in set_lines.py.
"""

from __future__ import annotations

import string
from dataclasses import replace
from typing import TYPE_CHECKING, Literal, NamedTuple

from docutils import nodes

from ..core.i18n import _, n_, on_page
from ..judge.notes import diff_name, note_text
from .why import why_words

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..core.model import Claim, DemoResult, VariantResult, Verdict
    from ..judge.judgement import Column, Judgement, Value


class Look(NamedTuple):
    mark: str  # LaTeX declares each (latex/sphinxautocastdemo.sty); the em dash every font has
    css: str  # its colour (static/autocast_demo.css)


#: The name over each column a results table may have, by the column's ``autocast-demo-col-*``
#: class, in English: the docs quote them, and a test checks that what they quote is a column
#: of their tables. The page says them in its language (:func:`headers`).
HEADERS = {"verdict": "compiled = eager?", "recorded": "as recorded?",
           "outcome": "outcome, as recorded?", "grads": "gradient dtypes"}


def headers() -> dict[str, str]:
    """:data:`HEADERS` in the page's language (literals, for the catalog's extraction)."""
    return {"verdict": _("compiled = eager?"), "recorded": _("as recorded?"),
            "outcome": _("outcome, as recorded?"), "grads": _("gradient dtypes")}


#: What a cell can say of a value: a verdict, by its outcome, or the page's record, by whether
#: it holds here.
CellState = Literal["matches", "differs", "raises", "no-config", "ran", "error",
                    "holds", "broken", "unchecked", "unrecorded"]

#: Every mark and colour a results cell shows, in one table. A mark says what torch did
#: (compiled against eager) and nothing else; whether the page's record holds is said in words,
#: in a style of its own (no mark), so that a record that holds never reads as a match.
LOOKS: dict[CellState, Look] = {
    "matches": Look("\u2713", "autocast-demo-matches"),
    "differs": Look("\u2717", "autocast-demo-differs"),
    "raises": Look("\u26a0", "autocast-demo-raises"),
    "no-config": Look("\u2014", "autocast-demo-no-config"),
    "ran": Look("", "autocast-demo-ran"),  # (no mark: nothing was compared)
    "error": Look("\u2014", "autocast-demo-error"),
    "holds": Look("", "autocast-demo-holds"),
    "broken": Look("", "autocast-demo-stale-cell"),
    "unchecked": Look("\u2014", "autocast-demo-unchecked"),
    "unrecorded": Look("", "autocast-demo-unrecorded"),
}
#: A verdict's mark by its outcome.
MARK = {outcome: LOOKS[outcome].mark for outcome in ("matches", "differs", "raises", "no-config", "error")}


def marked(state: CellState, text: str, *more: str) -> tuple[str, list[str]]:
    """``text`` with the mark of ``state`` before it, and its CSS class (then ``more``)."""
    look = LOOKS[state]
    return (f"{look.mark} {text}" if look.mark else text), [look.css, *more]


def plain(state: CellState, text: str) -> tuple[str, list[str]]:
    """``text`` in the colour of ``state``, without its mark (nothing was checked to mark)."""
    return text, [LOOKS[state].css]


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
    """The first column's heading: the config the demo varies, or none where it varies nothing."""
    return _("the snippet") if result.demo.varies_nothing else result.demo.config.rsplit(".", 1)[-1]


def grads_text(vr: VariantResult) -> str:
    """The gradient dtypes of a value's compiled run, as its cell says them (and a footer, where
    every value's are the same)."""
    grads = [f"{t.name}: {t.dtype}" for t in vr.compiled.tensors if t.kind == "grad"]
    return ", ".join(grads) if grads else "\u2014"


def cell(content: nodes.Node | str, classes: list[str] | None = None) -> nodes.entry:
    entry = nodes.entry(classes=classes or [])
    entry += content if isinstance(content, nodes.Node) else nodes.paragraph(text=content)
    return entry


def labelled(column: str, text: str, classes: list[str]) -> nodes.entry:
    """A cell that names its column (a phone shows rows as cards)."""
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
    from ..judge.compare import largest_first  # (here: every build registers the tables)

    v = vr.verdict
    if v.outcome == "matches":
        if v.max_abs:  # within the tolerance, not bitwise: which tensor is furthest off
            worst = max((d for d in v.diffs if d.max_abs), key=lambda d: d.max_abs or 0.0, default=None)
            text = (_("matches eager (max |\u0394| {diff} in {tensor})") if worst
                    else _("matches eager (max |\u0394| {diff})")).format(
                diff=f"{v.max_abs:.1e}", tensor=on_page(diff_name(worst)) if worst else "")
        else:
            text = _("matches eager")
        # (a cut view gives a match only where the demo says :partial-view:)
        return (_("{matches} in what was compared (partial view accepted: {cut})").format(
            matches=text, cut=v.cut) if v.cut else text)
    if v.outcome == "differs":
        failing = largest_first(v.diffs)
        if not failing:
            if v.eager_exception:
                return _("differs: eager raises {exception}, compiled does not").format(
                    exception=v.eager_exception)
            return _("differs")
        first = failing[0]
        name, note = on_page(diff_name(first)), on_page(note_text(first))
        if first.max_abs or (first.max_abs is not None and not note):
            what = _("{tensor}, max |\u0394| {diff}").format(tensor=name, diff=f"{first.max_abs:.2e}")
        else:
            what = _("{tensor}: {note}").format(tensor=name, note=note) if note else name
        return _differs(what, len(failing) - 1)
    if v.outcome == "no-config":
        return _("no such config in this torch")
    if v.outcome == "ran":
        return _("compiled ran; not compared with eager")
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


def verdict_kind(verdict: Verdict) -> tuple[object, ...]:
    """What a verdict says, without its numbers: environments whose cells differ only in those
    (another CPU's rounding, within the tolerance) share a column (across.py)."""
    return (verdict.outcome, verdict.exception, verdict.eager_exception, verdict.cut,
            tuple(d.name for d in verdict.diffs if not d.equal))


def outcome_across(results: Sequence[VariantResult]) -> str:
    """:func:`outcome_text` of one verdict kind in several environments: their numbers as the
    range they span (``up to``: bitwise equal in some), so that the cell holds in each."""
    from ..judge.compare import largest_first

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
    largest, others = failing[0][0], len(failing[0]) - 1
    worst = [next((d.max_abs for d in diffs if d.name == largest.name), None) for diffs in failing]
    name = on_page(diff_name(largest))
    what = (_("{tensor}, max |\u0394| {diff}").format(tensor=name, diff=_spread(worst, ".2e"))
            if None not in worst else name)
    return _differs(what, others)


def _worst(verdict: Verdict) -> str:
    """The tensor of a match within the tolerance that is furthest off."""
    worst = max((d for d in verdict.diffs if d.max_abs), key=lambda d: d.max_abs or 0.0, default=None)
    return on_page(diff_name(worst)) if worst else ""


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
    if value.expected is None:  # (compared with nothing: what it records is compiling's, printing's)
        return marked("holds", _("yes"))
    return marked("holds", _("yes ({expected})").format(expected=value.expected))


def broken_text(broken: frozenset[str], expected: Claim | str | None, where: str = "") -> str:
    """Which record broke: the outcome (what the page records, in one environment or several),
    the printed output, what compiling did, or some of them; ``where``: the environments it
    broke in, when not only here."""
    outcome = "outcome" in broken or not broken
    said = [_("records {expected}").format(expected=expected)] if outcome else []
    if "output" in broken:
        said.append(_("the printed output is not the recorded one"))
    if "compile" in broken:
        said.append(_("compiling did not do what it records"))
    which = said[0]
    for then in said[1:]:
        which = _("{first}, and {then}").format(first=which, then=then)
    if not outcome and expected is not None:
        which = _("{which} (outcome {expected} holds)").format(which=which, expected=expected)
    if where:
        return _("no, in {where}: {which}").format(where=where, which=which)
    return _("no: {which}").format(which=which)


def outcome_as_recorded(value: Value, torch: str) -> tuple[str, list[str]]:
    """``:show: record``: what happened, with the verdict's mark and colour (what compiled did
    against eager), and whether the page says so, in words and the record's style."""
    if not value.checked:
        return verdict_text(value, torch)
    verdict = value.result.verdict
    happened = outcome_word(verdict)
    if value.record == "unrecorded":
        text = _("{happened} (not recorded)").format(happened=happened)
    elif value.record == "broken" and value.expected is None:
        text = _("{happened}; {broken}").format(happened=happened,
                                                broken=broken_text(value.broken, None))
    elif value.record == "broken":
        text = _("{happened}, but the page records {expected}").format(
            happened=happened, expected=value.expected)
    else:
        text = _("{happened}, as recorded").format(happened=happened)
    return marked(verdict.outcome, text, LOOKS[value.record].css)


def outcome_word(verdict: Verdict) -> str:
    """A verdict's outcome in a word or two of the page's language (``:expect:`` says it in
    names, which a page in another language must not show as its words)."""
    return {"matches": _("matches"), "differs": _("differs"),
            "raises": _("raises {exception}").format(exception=verdict.exception),
            "no-config": _("no such config"), "ran": _("ran, not compared with eager"),
            "error": _("not checked")}[verdict.outcome]


def mark_meanings() -> dict[str, str]:
    """The one thing each mark means, as the legend says it (:func:`legend_text`)."""
    return {
        MARK["matches"]: _("compiled matches eager in every tensor, gradient and printed line "
                           "(logs and warnings aside)"),
        MARK["differs"]: _("differs"),
        MARK["raises"]: _("the compiled run raised"),
        LOOKS["unchecked"].mark: _("no verdict: the cell says why"),
    }


def marks_in(tree: nodes.Node) -> list[str]:
    """The marks that the results cells under ``tree`` show, in the legend's order."""
    classes = {look.css for look in LOOKS.values()}
    texts = [node.astext() for node in tree.findall(nodes.Element)
             if classes.intersection(node.get("classes", ()))]
    return [mark for mark in mark_meanings() if any(mark in text for text in texts)]


def legend_text(marks: Sequence[str]) -> str:
    """What each of ``marks`` means, in one sentence: a legend true of every cell that uses them."""
    meanings = mark_meanings()
    return _("Marks: {marks}.").format(marks="; ".join(f"{mark} {meanings[mark]}" for mark in marks))


def legend_line(tree: nodes.Node, recorded: bool) -> list[nodes.paragraph]:
    """How to read the tables of ``tree`` (a page), once per page: the marks its cells use; the
    "as recorded?" column only where a table has it. How exactly each demo compares is its
    footer's (or the page's line under the first table)."""
    marks = marks_in(tree)
    parts = [legend_text(marks)] if marks else []
    if recorded:
        parts.append(_("{recorded}: is the page still right?").format(recorded=headers()["recorded"]))
    return [nodes.paragraph(text=" ".join(parts), classes=["autocast-demo-legend"])] if parts else []


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
