"""The extension's own words in the reader's language (pages) and the writer's (the log).

Page text follows the project's ``language`` (Sphinx's ``general`` namespace); what the build
prints follows the console's locale (``LC_ALL``, ``LC_MESSAGES``, ``LANG``: the ``console``
namespace), as Sphinx's own words do. Translated where a node or a message is made, never
before: results, records and the cache hold facts, not words, so that one cache serves a
Russian and an English build alike.

Placeholders are named (``_("{n} demos").format(n=...)``): a translation may reorder them, and
tests/unit/test_catalogs.py checks each translation keeps the msgid's.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from sphinx.locale import get_translator, is_translator_registered

if TYPE_CHECKING:
    import gettext

    from sphinx.application import Sphinx

#: The catalog's name: ``locale/<language>/LC_MESSAGES/sphinx_autocast_demo.mo`` in the package.
CATALOG = "sphinx_autocast_demo"
LOCALE_DIR = Path(__file__).resolve().parent.parent / "locale"


def _translator(namespace: str) -> gettext.NullTranslations | None:
    # Before setup() registers the catalog (a unit test, a tool), the words are English.
    if not is_translator_registered(CATALOG, namespace):
        return None
    return get_translator(CATALOG, namespace)


def _(message: str) -> str:
    """Page text, in the project's ``language``."""
    translator = _translator("general")
    return message if translator is None else translator.gettext(message)


def n_(singular: str, plural: str, n: int) -> str:
    """Page text that counts ``n``, in the project's language and its plural forms (Russian
    has three)."""
    translator = _translator("general")
    if translator is None:
        return singular if n == 1 else plural
    return translator.ngettext(singular, plural, n)


def __(message: str) -> str:
    """What the build prints (warnings, the summary, the tools), in the console's locale."""
    translator = _translator("console")
    return message if translator is None else translator.gettext(message)


def n__(singular: str, plural: str, n: int) -> str:
    """What the build prints that counts ``n``, in the console's locale."""
    translator = _translator("console")
    if translator is None:
        return singular if n == 1 else plural
    return translator.ngettext(singular, plural, n)


class Message(str):
    """A message kept as its msgid and named arguments: English wherever it is used as text
    (a result, a record, a JUnit report), said in a language by :func:`in_console` and
    :func:`on_page`. A finding is stored in the environment and read by builds of other
    locales, so it holds the words to translate, not a translation."""

    msgid: str
    plural: str | None
    n: int
    args: dict[str, object]

    def __new__(cls, msgid: str, plural: str | None, n: int, args: dict[str, object]) -> Message:
        self = super().__new__(cls, _render(msgid, plural, n, args, None))
        self.msgid, self.plural, self.n, self.args = msgid, plural, n, args
        return self

    def __reduce__(self) -> tuple[object, ...]:  # pickled with its words (the environment)
        return (Message, (self.msgid, self.plural, self.n, self.args))

    def in_namespace(self, namespace: str) -> str:
        return self.translated(_translator(namespace))

    def translated(self, translator: gettext.NullTranslations | None) -> str:
        return _render(self.msgid, self.plural, self.n, self.args, translator)


def _render(msgid: str, plural: str | None, n: int, args: dict[str, object],
            translator: gettext.NullTranslations | None) -> str:
    if translator is None:
        text = msgid if plural is None or n == 1 else plural
    else:
        text = translator.gettext(msgid) if plural is None else translator.ngettext(msgid, plural, n)
    values = {k: v.translated(translator) if isinstance(v, Message) else v for k, v in args.items()}
    return text.format(**values) if args else text


def msg(msgid: str, /, **args: object) -> str:
    """``__(msgid).format(**args)``, kept to be said later (a finding's message)."""
    return Message(msgid, None, 0, args)


def n_msg(singular: str, plural: str, n: int, /, **args: object) -> str:
    """``n__(...).format(**args)``, kept to be said later."""
    return Message(singular, plural, n, args)


def in_console(text: str) -> str:
    """``text`` in the console's locale: a :class:`Message` translated, any other as it is."""
    return text.in_namespace("console") if isinstance(text, Message) else text


def on_page(text: str) -> str:
    """``text`` in the project's language: a :class:`Message` translated, any other as it is."""
    return text.in_namespace("general") if isinstance(text, Message) else text


def init_console() -> None:
    """Outside a build (the command line tools): the console's words from the console's
    locale, as ``sphinx-build`` reads it before it says anything."""
    import contextlib
    import locale

    import sphinx.locale

    # A locale the system lacks: English, as Sphinx's own words would be.
    with contextlib.suppress(locale.Error):
        locale.setlocale(locale.LC_ALL, "")
    sphinx.locale.init_console(LOCALE_DIR, CATALOG)


def register(app: Sphinx) -> None:
    """At setup: the catalogs shipped in the package."""
    app.add_message_catalog(CATALOG, str(LOCALE_DIR))
