"""The value column: the lines that set each value, for a reader to copy and run.

Kept apart from the verdict cells (cells.py) because these lines are code, not judgement: they
must run as pasted into a fresh ``python``, and a page lists the ones several of its tables
share once, under its first table, with the cells linking there.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from docutils import nodes

from ..core.i18n import _
from ..read.syntax import DEFAULT
from .cells import words
from .tables import set_code

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from ..core.model import DemoResult, VariantResult
    from ..judge.judgement import Judgement


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
    """Does some torch the demo was checked with have the config value ``name`` sets?"""
    return any(column.value(name).result.verdict.outcome != "no-config" for column in judged.columns)


def value_cell(result: DemoResult, vr: VariantResult, listed: Mapping[str, str] | None = None,
               runs: bool = True) -> nodes.entry:
    """The row's value: its name and the lines that set it, or, where the page lists those once
    for all its tables (``listed``: lines -> the id of the place that lists them), a link there.
    ``runs``: false where no torch checked has the config (settable): then no lines to copy."""
    entry = nodes.entry(classes=["autocast-demo-value"])
    if result.demo.varies_nothing:  # no config is its subject: nothing about one to say
        entry += nodes.paragraph("", "", nodes.strong(text=_("as written")),
                                 classes=["autocast-demo-set-default"])
        return entry
    entry += nodes.paragraph("", "", nodes.strong(text=vr.variant.name))
    if vr.variant.name == DEFAULT:  # nothing to copy: the row is about what torch has
        found = vr.config_default
        label = (_("not set: torch's default, here {value}").format(value=found) if found
                else _("not set: torch's default"))
        entry += nodes.paragraph(text=label, classes=["autocast-demo-set-default"])
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
        # ("changes": a snippet sets it, or patches it for a block; both are a change.)
        label = (_("the snippet itself changes it to {values} (line {line})").format(
            values=values, line=result.where_frame(at[0]).line) if at
                else _("the snippet itself changes it to {values}").format(values=values))
        entry += nodes.paragraph(text=label, classes=["autocast-demo-config-set"])
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
