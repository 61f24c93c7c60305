"""The shipped Russian catalog, looked up through its .mo as a page in Russian looks it up: every
column of the results tables and of the matrix has its Russian. The pages built in Russian:
tests/build/test_page_language.py."""

from __future__ import annotations

from sphinx_autocast_demo.present import cells, matrix


def test_the_russian_catalog_translates_every_column_and_the_matrix(russian):
    for name in (*cells.HEADERS.values(), *matrix.HEADERS):
        assert russian.gettext(name) != name, f"no Russian for {name!r} in the shipped catalog"
