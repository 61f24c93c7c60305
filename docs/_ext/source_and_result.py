"""``source-and-result``: show a piece of reST as source and, beside it, what it renders to.

The front page shows a directive next to its table. Writing the source twice (once in a code
block, once for real) would let the two drift apart; this directive takes it once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

if TYPE_CHECKING:
    from sphinx.application import Sphinx


#: The two labels, by the docs' language: words of the page, so not in CSS, where no
#: translation reaches (a language missing here shows the English ones).
LABELS = {"en": ("What the page writes", "What its reader gets"),
          "ru": ("Что пишет страница", "Что получает её читатель")}


class SourceAndResult(SphinxDirective):
    has_content = True

    def run(self) -> list[nodes.Node]:
        text = "\n".join(self.content)
        writes, gets = LABELS.get(self.config.language or "en", LABELS["en"])
        source = nodes.literal_block(text, text, language="rst")
        shown = nodes.container(classes=["source-and-result-source"])
        shown += nodes.paragraph(text=writes, classes=["source-and-result-label"])
        shown += source
        result = nodes.container(classes=["source-and-result-result"])
        result += nodes.paragraph(text=gets, classes=["source-and-result-label"])
        # Parsed at the directive's own lines, so a warning from the demo inside names the
        # right line of the page.
        # (nested_parse rather than parse_content_to_nodes: Sphinx 7.2, PyTorch's pin, lacks it.)
        self.state.nested_parse(self.content, self.content_offset, result)
        box = nodes.container(classes=["source-and-result"])
        box += [shown, result]
        return [box]


def setup(app: Sphinx) -> dict[str, object]:
    app.add_directive("source-and-result", SourceAndResult)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
