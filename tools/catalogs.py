"""The extension's message catalogs, made again from the code: the template, each language's
translations brought up to it, each compiled.

    python tools/catalogs.py            write locale/sphinx_autocast_demo.pot, update each
                                        locale/<lang>/LC_MESSAGES/sphinx_autocast_demo.po and
                                        compile its .mo
    python tools/catalogs.py --check    write nothing; exit 1 when any file would change
    python tools/catalogs.py --add ko   start a language (an empty .po), then as above

With Babel's API (a Sphinx dependency, so nothing to install): the words are those passed to
``_``, ``__`` and ``msg`` (and the first two arguments of ``n_``, ``n__`` and ``n_msg``)
anywhere in the package (core/i18n.py). Every file comes out the same from the same code:
fixed dates, no line numbers (an edit elsewhere in a module moves none of them), messages in
msgid order, so a diff shows only words that changed. A message the code no longer has leaves
each .po (no obsolete ``#~`` entries) and a new one arrives untranslated, never fuzzy: a guess
from a similar msgid would ship unread. The .mo files are committed, as Sphinx commits its
own: a wheel then needs no compile step, and tests/unit/test_catalogs.py checks each matches
its .po.
"""

from __future__ import annotations

import argparse
import io
import sys
from datetime import UTC, datetime
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_dir
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po, write_po

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "sphinx_autocast_demo"
LOCALE = PACKAGE / "locale"
DOMAIN = "sphinx_autocast_demo"  # core/i18n.py's CATALOG
TEMPLATE = LOCALE / f"{DOMAIN}.pot"
#: Page text (``_``, ``n_``), console text (``__``, ``n__``) and words kept to be said later in
#: either (``msg``, ``n_msg``: a finding's), as core/i18n.py defines them.
KEYWORDS: dict[str, tuple[int, ...] | None] = {"_": None, "n_": (1, 2), "__": None, "n__": (1, 2),
                                               "msg": None, "n_msg": (1, 2)}
PROJECT = "sphinx-autocast-demo"
#: Every header's date: a real one would change each file at each run.
FIXED = datetime(2026, 1, 1, tzinfo=UTC)
WIDTH = 100


def languages() -> list[str]:
    """The languages shipped: each folder of locale/ with an LC_MESSAGES/<domain>.po."""
    return sorted(path.parent.parent.name for path in LOCALE.glob(f"*/LC_MESSAGES/{DOMAIN}.po"))


def extract() -> Catalog:
    """The template: every message the package's code passes to one of KEYWORDS."""
    template = Catalog(project=PROJECT, version="", charset="utf-8", creation_date=FIXED,
                       revision_date=FIXED, fuzzy=False, msgid_bugs_address="",
                       copyright_holder=f"{PROJECT} contributors")
    for filename, lineno, message, comments, context in extract_from_dir(
            str(PACKAGE), method_map=[("**.py", "python")], keywords=KEYWORDS,
            comment_tags=("Translators:",), strip_comment_tags=True):
        location = (f"{PACKAGE.name}/{filename}", lineno)
        template.add(message, None, [location], auto_comments=comments, context=context)
    return template


def updated(template: Catalog, language: str, po: bytes | None) -> Catalog:
    """``language``'s catalog brought up to ``template`` (``po``: its file as it is, if any)."""
    if po is None:
        catalog = Catalog(locale=language, domain=DOMAIN, project=PROJECT, version="",
                          charset="utf-8", creation_date=FIXED, revision_date=FIXED, fuzzy=False,
                          msgid_bugs_address="", copyright_holder=f"{PROJECT} contributors")
    else:
        catalog = read_po(io.BytesIO(po), locale=language, domain=DOMAIN)
    catalog.update(template, no_fuzzy_matching=True, update_header_comment=False)
    catalog.creation_date = catalog.revision_date = FIXED
    catalog.fuzzy = False
    return catalog


def po_bytes(catalog: Catalog) -> bytes:
    out = io.BytesIO()
    write_po(out, catalog, width=WIDTH, sort_output=True, ignore_obsolete=True, include_lineno=False)
    return out.getvalue()


def mo_bytes(catalog: Catalog) -> bytes:
    out = io.BytesIO()
    write_mo(out, catalog, use_fuzzy=False)
    return out.getvalue()


def made(add: tuple[str, ...] = ()) -> dict[Path, bytes]:
    """Every catalog file as the code makes it now: path -> its bytes."""
    template = extract()
    files = {TEMPLATE: po_bytes(template)}
    for language in sorted({*languages(), *add}):
        folder = LOCALE / language / "LC_MESSAGES"
        po_path = folder / f"{DOMAIN}.po"
        catalog = updated(template, language, po_path.read_bytes() if po_path.is_file() else None)
        files[po_path] = po_bytes(catalog)
        # Compiled from the .po as written, so that the .mo is exactly what the file says.
        files[folder / f"{DOMAIN}.mo"] = mo_bytes(read_po(io.BytesIO(files[po_path]), locale=language))
    return files


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if out of date")
    parser.add_argument("--add", action="append", default=[], metavar="LANG",
                        help="start a language's catalog (ko, ja, pt_BR...)")
    args = parser.parse_args(argv)
    stale = []
    for path, data in made(tuple(args.add)).items():
        if path.is_file() and path.read_bytes() == data:
            continue
        stale.append(path)
        if not args.check:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
    for path in stale:
        print(("out of date: " if args.check else "wrote ") + str(path.relative_to(ROOT)))
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
