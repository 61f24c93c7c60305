"""Where a directive's text is written: its lines in the file (a docstring's in its ``.py``
file, an included file's in its own), each option's lines (:class:`.model.SourceMap`), and the
options of a MyST block read again from the source where myst-parser could not read them.
A mixin of both directives (:mod:`.directives`), so that every message names the right line.
"""

from __future__ import annotations

import os
import re
import textwrap
from typing import TYPE_CHECKING, ClassVar, Literal

from docutils.statemachine import StringList
from sphinx.util.docutils import SphinxDirective

from ..core.i18n import msg
from . import syntax

# The model's types, and the docstrings' reader, are imported where a directive is read:
# every build imports this module with the directives, and an unchanged one reads none.
if TYPE_CHECKING:
    from ..core.model import Code, SourceMap

#: The opening line of a MyST directive: its fence, then any text after the directive's name.
MYST_FENCE = re.compile(r"^\s*(?:`{3,}|~{3,}|:{3,})\{[^}]*\}(.*)$")
#: A MyST fence in the file, after what nests it (indentation, a list marker, ``>``).
MYST_FENCE_AT = re.compile(r"^((?:[\s>]|[-*+](?=\s)|\d{1,9}[.)](?=\s))*)(?:`{3,}|~{3,}|:{3,})\{")
YAML_KEY = re.compile(r"^[\"']?([\w-]+)[\"']?\s*:(?:\s|$)")


class SourceLines(SphinxDirective):
    """The lines of a directive's code and options, in the file the writer edits."""

    # What to write instead of an option block that myst-parser cannot read: colon, YAML form.
    forms: ClassVar[tuple[str, str]] = ("", "")

    @property
    def myst(self) -> bool:
        # Ask who parsed us: the offsets alone cannot tell (a MyST body right under its fence
        # has content_offset 0, like its first item's offset).
        return "myst_parser" in type(self.state_machine).__module__

    def code(self) -> Code:
        from ..core.model import Code

        items = self.content.items
        if not self.myst:  # docutils: absolute, 0-based
            lines = tuple(offset + 1 for _source, offset in items)
        else:  # MyST: offsets count from the body, content_offset + 1 lines below the fence
            lines = tuple(self.lineno + self.content_offset + 1 + offset for _source, offset in items)
        if self.in_docstring:
            return Code(text="\n".join(self.content), source=self.source_path,
                        lines=tuple(line + self.in_docstring[1] for line in lines))
        source = self.content.items[0][0] if self.content.items else self.get_source_info()[0]
        # docutils names an included file relative to the current directory: make it absolute
        # like every other source, so locations do not depend on where sphinx-build ran.
        source = os.path.abspath(source)
        return Code(text="\n".join(self.content), source=source, lines=lines)

    @property
    def in_docstring(self) -> tuple[str, int] | None:
        """For a directive in a docstring found in its ``.py`` file: (the file, the number to
        add to a docstring line to get the file's); see :mod:`.docstrings`."""
        if not hasattr(self, "_in_docstring"):
            from . import docstrings

            source, line = self.get_source_info()
            self._in_docstring = (None if self.myst else docstrings.offset(
                source, self.block_text.splitlines(), line or self.lineno))
        return self._in_docstring

    @property
    def doc_line(self) -> int:
        """The directive's line in its own file (``self.lineno`` counts across included files;
        a docstring's lines are numbered from the docstring)."""
        line = self.get_source_info()[1] or self.lineno
        return line + self.in_docstring[1] if self.in_docstring else line

    def option_line(self, name: str) -> int:
        """The line where ``:name:`` is written (for messages), else the directive's."""
        found: SourceMap | None = getattr(self, "source_map", None)  # set by run()
        return found.line_of(name) if found else self.doc_line

    def read_options(self) -> SourceMap:
        """Where each option is written; in MyST, also take the options myst-parser could not
        read."""
        if self.myst:
            return self.read_myst_options()
        # docutils has read the options (a field list that ends at the first blank line) and
        # block_text starts at the directive's line (its lines are the file's, dedented when
        # nested): find each option's lines in it.
        fields, end = syntax.option_fields(self.block_text.splitlines()[1:])
        return self.source_map_of("rst", self.doc_line + 1, fields, end)

    def source_map_of(self, style: Literal["rst", "colon"], first: int,
                      fields: list[syntax.OptionField], end: int) -> SourceMap:
        """The map of an option block whose first line is line ``first`` of the file."""
        from ..core.model import OptionSpan, SourceMap

        spans: list[OptionSpan] = []
        for f in fields:
            after = first + f.line + 1 + len(f.more)
            if f.name:
                spans.append(OptionSpan(f.name, first + f.line, after))
            elif spans:  # MyST's ``:  more`` line continues the option above it
                spans[-1] = OptionSpan(spans[-1].name, spans[-1].first, after)
        return SourceMap(self.source_path, self.doc_line, style, first, first + end, tuple(spans))

    @property
    def source_path(self) -> str:
        # docutils names an included file relative to the current directory: make it absolute
        # like every other source, so locations do not depend on where sphinx-build ran.
        if self.in_docstring:
            return os.path.abspath(self.in_docstring[0])
        return os.path.abspath(self.get_source_info()[0])

    # MyST: myst-parser reads an option block as YAML. In the colon form it takes only the lines
    # that start with ":", so the indented lines that continue an option in reST would reach us
    # as code; where its YAML reader fails it drops every option with a warning and runs the
    # directive anyway. Read the block again from the source, as reST would, and say so.

    def read_myst_options(self) -> SourceMap:
        from ..core.model import SourceMap

        fence = self.doc_line
        head = self.myst_head()
        if head is None:
            return SourceMap(self.source_path, fence, "colon", fence + 1, fence + 1)
        if head and head[0].startswith("---"):  # myst-parser's test for a YAML block
            found, end = self.myst_yaml(head, fence)
            self.check_myst_body(head, end, fence, continued=None)
        elif "\n".join(head).lstrip().startswith(":"):  # and for the colon form
            fields, end = syntax.option_fields(head)
            self.myst_colon(head, fields, end, fence)
            found = self.source_map_of("colon", fence + 1, fields, end)
            named = [f.name for f in fields if f.name]
            self.check_myst_body(head, end, fence, continued=named[-1] if named else None)
        else:
            found = SourceMap(self.source_path, fence, "colon", fence + 1, fence + 1)
            self.check_myst_body(head, 0, fence, continued=None)
        return found

    def myst_head(self) -> list[str] | None:
        """The source lines between the directive's fence and its closing fence."""
        lines = self.block_text.splitlines()
        fence = MYST_FENCE.match(lines[0]) if lines else None
        if fence:  # myst-parser >= 5 gives the whole block
            return None if fence.group(1).strip() else lines[1:-1]
        # myst-parser < 5 gives the body only: read what lies under the fence in the file
        try:
            with open(self.get_source_info()[0], encoding="utf-8") as f:
                source = f.read().split("\n")
        except OSError:
            return None
        start = self.doc_line
        end = start + self.content_offset + len(self.content)
        if not 0 < start <= len(source):
            return None
        # In a list item or a block quote the file's lines carry the item's indentation
        # (``- ``, ``1. ``, ``> ``) that myst-parser removed from the body: remove it here too,
        # or an indented first code line looks like a continued option.
        opener = MYST_FENCE_AT.match(source[start - 1])
        return syntax.unnest(source[start:end], len(opener.group(1)) if opener else 0)

    def myst_colon(self, head: list[str], fields: list[syntax.OptionField], end: int,
                   fence: int) -> None:
        lines = [fence + 1 + f.line for f in fields]
        values = self.myst_tokens([f.text[1:] for f in fields], lines, self.forms[0])
        if any(f.more for f in fields):
            owner = ""
            for f in fields:
                owner = f.name or owner
                if f.more and owner:
                    values[owner] = (values.get(owner) or "") + "\n" + syntax.continuation(f.more)
            spec = self.option_spec
            assert spec is not None  # both directives have options
            self.options = {name: spec[name](value) for name, value in values.items()}
            start = end + 1 if end < len(head) and not head[end].strip() else end
            self.content = StringList(head[start:], self.get_source_info()[0])
            self.content_offset = start

    def myst_yaml(self, head: list[str], fence: int) -> tuple[SourceMap, int]:
        from ..core.model import OptionSpan, SourceMap

        close = next((i for i in range(1, len(head)) if head[i].startswith("---")), None)
        if close is None:
            raise located(syntax.SyntaxProblem(msg(
                "the option block opened by --- has no closing ---, so the whole body would be "
                "read as options: put a line --- under the last option")), fence + 1)
        block = textwrap.dedent("\n".join(head[1:close])).split("\n")
        lines = [fence + 2 + i for i in range(len(block))]
        self.myst_tokens(block, lines, self.forms[1])
        keys = [(m.group(1), line) for text, line in zip(block, lines, strict=True)
                if (m := YAML_KEY.match(text))]
        end = fence + 1 + close  # the closing ---
        # A key's value runs to the next key (a ``|`` block's lines, say) or the closing ---.
        spans = tuple(OptionSpan(name, line, keys[i + 1][1] if i + 1 < len(keys) else end)
                      for i, (name, line) in enumerate(keys))
        return SourceMap(self.source_path, fence, "yaml", fence + 2, end, spans), close + 1

    def myst_tokens(self, texts: list[str], lines: list[int], form: str) -> dict[str, str]:
        """The options as myst-parser reads them; where it cannot, a located error."""
        from myst_parser.parsers.options import TokenizeError, options_to_items

        try:
            items, _state = options_to_items("\n".join(texts))
        except TokenizeError as err:
            line = lines[min(max(err.problem_mark.line, 0), len(lines) - 1)] if lines else None
            raise located(syntax.SyntaxProblem(msg(
                "this option block cannot be read (myst-parser: {problem}), so none of its "
                "options would apply; write it like this:\n{form}", problem=err.problem,
                form=form)), line or self.doc_line) from None
        return dict(items)

    def check_myst_body(self, head: list[str], end: int, fence: int, continued: str | None) -> None:
        """Lines that can only be options must not become the snippet."""
        start = end
        blank = start < len(head) and not head[start].strip()
        if blank:
            start += 1  # myst-parser drops one blank line between the options and the body
        if start >= len(head):
            return
        first, line = head[start], fence + 1 + start
        if syntax.is_option_line(first) and syntax.FIELD_RE.match(first.lstrip()):
            raise located(syntax.SyntaxProblem(msg(
                "{line} is below the blank line or --- that ends the options, so it would be "
                "read as code: move it up to the other options (no blank line between the "
                "fence and the options, or among them)", line=repr(first.strip()))), line)
        if blank and continued and first[:1].isspace():
            raise located(syntax.SyntaxProblem(msg(
                "this line is indented like a continuation of :{option}:, but the blank line "
                "above it ends the options, so it would be read as code: remove the blank line "
                "to continue :{option}:, or unindent the code", option=continued)), line)


def located(exc: syntax.SyntaxProblem, line: int, option: str = "") -> syntax.SyntaxProblem:
    """``exc`` as raised at ``line`` (and about ``option``, named in its text)."""
    if option:  # name the option: the writer sees the message away from the source
        exc = syntax.SyntaxProblem(msg(":{option}: {problem}", option=option,
                                        problem=exc.args[0]))
    exc.line = line  # type: ignore[attr-defined]
    return exc
