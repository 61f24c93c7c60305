"""``autocast-demo-summary``: every demo of the docs by every value, in one table.

The table is built when its page is written, from the results the build itself just checked
(the environment's :class:`~.state.DocState`), so it can never disagree with the demos' own
tables. :func:`.pipeline.run` asks Sphinx to re-write the pages holding a summary whenever any
demo was checked again, which is how the table follows changed results.

Here what every build registers and reading needs; the table itself is :mod:`.matrix`'s, imported
where a page is written (an unchanged build writes none).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

from ..core.state import all_docs, doc_state
from ..read.directives import demo_boxes

if TYPE_CHECKING:
    from sphinx.environment import BuildEnvironment


class summary_placeholder(nodes.General, nodes.Element):
    """Replaced by the matrix when its page is written."""


class AutocastDemoSummary(SphinxDirective):
    has_content = False

    def run(self) -> list[nodes.Node]:
        doc_state(self.env, self.env.docname).summary = True
        node = summary_placeholder()
        self.set_source_info(node)
        return [node]


def summary_docs(env: BuildEnvironment) -> list[str]:
    """The documents that hold a summary: re-written whenever any result is new."""
    return sorted(d for d, s in all_docs(env).items() if s.summary)


def record_titles(env: BuildEnvironment, doctree: nodes.document) -> None:
    """Remember each demo's caption, or the title of its section, for the matrix."""
    found: dict[str, str] = {}
    for box in demo_boxes(doctree):
        if not box["ids"]:
            continue
        caption = next(iter(box.findall(nodes.caption)), None)
        parent: nodes.Element | None = box.parent
        while parent is not None and not isinstance(parent, nodes.section):
            parent = parent.parent
        if caption is not None:
            found[box["ids"][0]] = caption.astext()
        elif parent is not None and isinstance(parent[0], nodes.title):
            found[box["ids"][0]] = parent[0].astext()
    if found:
        doc_state(env, env.docname).titles = found
