"""core: the data every stage shares, and nothing that acts on it.

Takes nothing from the other stages; gives the model (a demo, its runs, verdicts, findings:
frozen, picklable, JSON-able), the ``conf.py`` settings (config: the table; sphinxconf: their
registration and checks at config-inited; conflines: where conf.py sets one), the scoped
records language (scopes), the per-document state Sphinx keeps between builds (state), the
rules for text a page may publish (text, publish, printed) and the warning subtypes. Imports
nothing of the package outside core. Open model.py first.
"""

# The extension's version and where its static files are: what every stage may name without
# importing the package's entry point (whose __init__ imports the pipeline, which imports them).
from __future__ import annotations

from pathlib import Path

__version__ = "0.6.9"

#: What a stored result means: the engine's runs, the walk over what a reader could see, and
#: the records they give. In every result's key in place of the release, so that a release that
#: changes none of them (a fix in the page's words, say) keeps its users' caches and result sets;
#: raised by any change that could give another result or record for the same demo.
RESULTS_FORMAT = "0.4.0"

STATIC = Path(__file__).parent.parent / "present" / "static"
