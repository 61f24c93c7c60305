"""The message catalogs shipped in the package (sphinx_autocast_demo/locale/): the template holds
exactly the code's messages, each language's catalog is complete and keeps each message's
placeholders and plural forms, and each compiled .mo says what its .po says.

Made again with ``python tools/catalogs.py`` (its docstring says how); ``--check`` is what the
first test asks of it.
"""

from __future__ import annotations

import gettext
import importlib.util
import io
import string
from functools import cache
from pathlib import Path
from types import ModuleType

import pytest
from babel.messages.catalog import Catalog, Message
from babel.messages.pofile import read_po

from sphinx_autocast_demo.core import i18n

ROOT = Path(__file__).resolve().parents[2]
#: The languages the package promises (issue 39): Russian, and one more that PyTorch's docs
#: are translated into.
PROMISED = {"ru", "zh_CN"}


@cache
def tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("catalogs", ROOT / "tools" / "catalogs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def po(path: Path, language: str | None = None) -> Catalog:
    with path.open("rb") as file:
        return read_po(file, locale=language)


def messages(catalog: Catalog) -> dict[object, Message]:
    return {m.id: m for m in catalog if m.id}


def shipped() -> list[str]:
    return tool().languages()


def fields(text: str) -> set[str]:
    """The named placeholders of ``text`` (``{n}``, ``{value}``); a brace that is no
    placeholder fails, as ``.format`` would."""
    return {name for _text, name, _spec, _conv in string.Formatter().parse(text) if name is not None}


def test_the_tool_and_core_i18n_name_one_catalog():
    assert tool().DOMAIN == i18n.CATALOG and tool().LOCALE == i18n.LOCALE_DIR


def test_the_template_holds_exactly_the_messages_of_the_code():
    """A new ``_()`` (or a changed one) without the catalogs made again fails here."""
    committed = messages(po(tool().TEMPLATE))
    extracted = messages(tool().extract())
    assert sorted(map(str, set(extracted) - set(committed))) == [], "run python tools/catalogs.py"
    assert sorted(map(str, set(committed) - set(extracted))) == [], "run python tools/catalogs.py"


def test_every_catalog_file_is_what_the_tool_makes_of_the_code_now():
    """Byte for byte (fixed dates, no line numbers: nothing churns), .po and .mo included."""
    stale = [str(path.relative_to(ROOT)) for path, data in tool().made().items()
             if not path.is_file() or path.read_bytes() != data]
    assert stale == [], "run python tools/catalogs.py"


def test_the_promised_languages_are_shipped():
    assert set(shipped()) >= PROMISED


@pytest.mark.parametrize("language", sorted(PROMISED))
def test_each_catalog_is_complete_and_nothing_in_it_is_fuzzy(language):
    catalog = po(i18n.LOCALE_DIR / language / "LC_MESSAGES" / f"{i18n.CATALOG}.po", language)
    assert not catalog.fuzzy
    fuzzy = [m.id for m in catalog if m.id and m.fuzzy]
    assert fuzzy == []
    missing = [m.id for m in catalog if m.id and not all(
        m.string if isinstance(m.string, tuple) else (m.string,))]
    assert missing == [], f"{len(missing)} of {len(messages(catalog))} messages untranslated in {language}"


@pytest.mark.parametrize("language", sorted(PROMISED))
def test_each_translation_keeps_its_placeholders_and_plural_forms(language):
    catalog = po(i18n.LOCALE_DIR / language / "LC_MESSAGES" / f"{i18n.CATALOG}.po", language)
    wrong = []
    for message in messages(catalog).values():
        if isinstance(message.id, tuple):
            singular, plural = message.id
            forms = message.string if isinstance(message.string, tuple) else (message.string,)
            if len(forms) != catalog.num_plurals:
                wrong.append((message.id, f"{len(forms)} forms, not {catalog.num_plurals}"))
                continue
            # A form may say the count in words ("one demo"), so {n} is optional in it; every
            # other placeholder is needed, and none that the English lacks is allowed.
            every = fields(singular) | fields(plural)
            needed = every - {"n"}
            for form in forms:
                if form and not needed <= fields(form) <= every:
                    wrong.append((message.id, form))
        elif message.string and fields(message.string) != fields(message.id):
            wrong.append((message.id, message.string))
    assert wrong == []


def test_russian_has_three_plural_forms():
    catalog = po(i18n.LOCALE_DIR / "ru" / "LC_MESSAGES" / f"{i18n.CATALOG}.po", "ru")
    assert catalog.num_plurals == 3
    assert any(isinstance(m.id, tuple) for m in catalog)


@pytest.mark.parametrize("language", sorted(PROMISED))
def test_each_mo_says_what_its_po_says(language):
    folder = i18n.LOCALE_DIR / language / "LC_MESSAGES"
    catalog = po(folder / f"{i18n.CATALOG}.po", language)
    compiled = gettext.GNUTranslations(io.BytesIO((folder / f"{i18n.CATALOG}.mo").read_bytes()))
    form = gettext.c2py(catalog.plural_expr)  # (the .po's own rule, as gettext reads a .mo's)
    differ = []
    for message in messages(catalog).values():
        if isinstance(message.id, tuple):
            forms = message.string if isinstance(message.string, tuple) else (message.string,)
            if not all(forms):
                continue  # (not compiled: the English is said instead; the test above names it)
            for n in (1, 2, 5, 21):
                want = forms[form(n)]
                if compiled.ngettext(*message.id, n) != want:
                    differ.append((message.id, n))
        elif message.string and compiled.gettext(message.id) != message.string:
            differ.append(message.id)
    assert differ == []


def called_with_words(package: Path) -> dict[str, str | None]:
    """Every literal message the package's code passes to a keyword of the tool, read from the
    syntax tree itself: msgid -> its plural (None for a singular message)."""
    import ast

    found: dict[str, str | None] = {}
    for path in package.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id in tool().KEYWORDS and node.args):
                continue
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                plural = tool().KEYWORDS[node.func.id]
                second = node.args[1] if plural and len(node.args) > 1 else None
                found[first.value] = (second.value if isinstance(second, ast.Constant)
                                      and isinstance(second.value, str) else None)
    return found


def test_the_template_holds_every_message_the_code_says_wherever_the_call_is():
    # Babel's extractor misses a call inside another call's keyword argument
    # (``nodes.paragraph(text=n_(...))``) or reads only its singular: such a message would stay
    # English in every language, and its translation would never be looked up.
    template = messages(po(tool().PACKAGE / "locale" / f"{tool().DOMAIN}.pot"))
    called = called_with_words(tool().PACKAGE)
    assert len(called) > 100
    missing = sorted(msgid for msgid in called if msgid not in template
                     and (msgid, called[msgid]) not in template)
    assert missing == []
    singular_only = sorted(msgid for msgid, plural in called.items()
                           if plural is not None and (msgid, plural) not in template)
    assert singular_only == []
