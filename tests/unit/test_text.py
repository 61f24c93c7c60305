"""text.py: a snippet's text made safe for a terminal, a page and a CI log."""

from __future__ import annotations

from sphinx_autocast_demo.core.text import bounded, for_log, one_line, printable


def test_printable_drops_escapes_and_shows_other_control_bytes():
    assert printable("\x1b[1;31mred\x1b[0m") == "red"  # CSI: colours
    assert printable("\x1b]0;title\x07rest") == "rest"  # OSC: a window title
    assert printable("\x1b]8;;https://x\x1b\\link\x1b]8;;\x1b\\") == "link"  # OSC: a hyperlink
    assert printable("a\r\nb") == "a\nb"
    assert printable("10%\r20%\r") == "10%\n20%\n"  # a progress bar: a line per update
    assert printable("\x00\x07\x7f\x85") == "\\x00\\x07\\x7f\\x85"
    assert printable("tab\tand\nnewline") == "tab\tand\nnewline"


def test_bounded_keeps_a_short_text_and_says_where_it_cut():
    note = "\n[... output cut here ...]\n"
    assert bounded("abc", 5) == "abc"
    assert bounded("abcde", 5) == "abcde"  # at the limit: whole
    assert bounded("abcdef  xyz", 8) == "abcdef" + note
    # Cut before it reached us: said even when what is left is short.
    assert bounded("abc", 5, cut=True) == "abc" + note


def test_no_line_of_a_logged_text_is_a_workflow_command():
    assert for_log("::error::x\n  ::warning x\nsay ::x") == "\\::error::x\n  \\::warning x\nsay ::x"
    assert one_line("::x\ny\r") == "\\::x\\ny\\r"
    assert one_line("a\n::add-mask::b") == "a\\n::add-mask::b"  # one line: nothing starts a line
