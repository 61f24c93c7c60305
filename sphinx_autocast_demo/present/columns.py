"""The names of a results table's columns: for the tables (cells.py) and for the phone's cards
that HTML writes (html.py), which name each cell with them."""

from __future__ import annotations

from ..core.i18n import _

#: The name over each column a results table may have, by the column's ``autocast-demo-col-*``
#: class, in English: the docs quote them, and a test checks that what they quote is a column
#: of their tables. The page says them in its language (:func:`headers`).
HEADERS = {"verdict": "compiled = eager?", "recorded": "as recorded?",
           "outcome": "outcome, as recorded?", "grads": "gradient dtypes"}


def headers() -> dict[str, str]:
    """:data:`HEADERS` in the page's language (a phone's card names each cell with them too:
    html.py). Literals, so that the catalog's extraction finds them; a unit test checks that
    they are HEADERS where nothing translates."""
    return {"verdict": _("compiled = eager?"), "recorded": _("as recorded?"),
            "outcome": _("outcome, as recorded?"), "grads": _("gradient dtypes")}
