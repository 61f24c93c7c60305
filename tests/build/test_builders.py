"""The results written by every builder a user reaches for: a PDF (pdflatex, Sphinx's default,
and xelatex), plain text, Texinfo, manual pages, EPUB, XML and the HTML ones.

tests/roots/test-builders holds every mark the results use (✓ ✗ ⚠, Δ in a difference, the
footer's · and the matrix's —) and a demo with a ``:caption:``. Real torch runs once; each
builder then renders the cached results with ``-W``, so a writer's warning fails the test.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import copy_root, sphinx_build

SET_LINES = ["torch._functorch.config.backward_pass_autocast = 'same_as_forward'",
             "torch._functorch.config.backward_pass_autocast = 'off'"]
IMPORT = "import torch._functorch.config"  # (the line before each: they run pasted alone)
BUILDERS = ["html", "dirhtml", "singlehtml", "text", "texinfo", "man", "epub", "xml", "latex"]


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    src = copy_root("builders", tmp_path_factory)
    cache = tmp_path_factory.mktemp("cache")
    first = sphinx_build(src, src / "_build" / "first", "-W", "-D", f"autocast_demo_cache_dir={cache}")
    assert first.returncode == 0, first.stderr
    assert first.runs() == (10, 0)  # every later build renders these from the cache
    return src, cache


_BUILT: dict[tuple[str, str], object] = {}


def build(root, builder: str, *args: str):
    """One -W build with ``builder`` of the root, shared by the tests that read it."""
    src, cache = root
    if (str(src), builder) in _BUILT:
        return _BUILT[str(src), builder]
    done = sphinx_build(src, src / "_build" / builder, "-W", "-b", builder,
                        "-d", str(src.parent / f"doctrees-{builder}"),  # not in EPUB's files
                        "-D", f"autocast_demo_cache_dir={cache}", *args)
    assert done.returncode == 0, done.stderr
    assert done.runs() == (0, 5)
    _BUILT[str(src), builder] = done
    return done


@pytest.mark.parametrize("builder", BUILDERS)
def test_each_builder_writes_the_results_without_a_warning(root, builder):
    build(root, builder)


@pytest.mark.parametrize(("builder", "output"), [("singlehtml", "index.html"),
                                                ("texinfo", "builders.texi"),
                                                ("man", "builders.1")])
def test_a_tree_of_several_pages_shows_each_pages_results(root, builder, output):
    # These builders resolve one tree made of every page, under the root page's name.
    text = (build(root, builder).out / output).read_text(encoding="utf-8")
    assert "from the other page" in text  # what the other page's demo printed
    assert "has not been run" not in text


def test_text_tables_keep_each_line_of_code_and_each_word_whole(root):
    text = (build(root, "text").out / "index.txt").read_text(encoding="utf-8")
    rows = [line for line in text.splitlines() if line.startswith("| ")]
    # Alone on a line of a cell, the lines a reader copies: same_as_forward's in its row (one
    # table has it); off's, which three tables have, once under the first, on a line of their own.
    cells = [c.strip() for row in rows for c in row.strip("|").split("|")]
    assert [c for c in cells if SET_LINES[0] in c or IMPORT in c] == [IMPORT, SET_LINES[0]]
    assert [line.strip() for line in text.splitlines() if SET_LINES[1] in line] == [SET_LINES[1]]
    assert any("\u2717 differs (y, max |\u0394| 1.00e+00)" in row for row in rows)
    # No word cut at a column's edge: in the matrix too ("raises Unsupported").
    assert any("\u26a0 raises Unsupported" in row or "Unsupported " in row for row in rows)
    assert not [c for c in cells if c.endswith(("co", "backwar", "U")) or c.startswith("nfig")
                or (c.endswith("nfig") and not c.endswith("config"))], cells


def test_texinfo_writes_the_caption_on_the_demos_code(root):
    texi = (build(root, "texinfo").out / "builders.texi").read_text(encoding="utf-8")
    assert "@caption{The config as the snippet sees it}" in texi


def test_the_matrix_links_to_each_demo_in_a_pdf_and_in_texinfo(root):
    # LaTeX writes no label for a container's id, so each matrix row's link to its demo went
    # nowhere in the PDF (latexmk said "Hyper reference ... undefined").
    tex = (build(root, "latex").out / "builders.tex").read_text(encoding="utf-8")
    links = set(re.findall(r"\\hyperref\[\\detokenize\{([^}]*)\}\]", tex))
    labels = set(re.findall(r"\\label\{\\detokenize\{([^}]*)\}\}", tex))
    demos = {link for link in links if link.startswith(("index:", "other:")) and
             not link.endswith(":doc")}
    assert len(demos) >= 3, links  # every demo row of the matrix
    assert links <= labels, links - labels
    texi = (build(root, "texinfo").out / "builders.texi").read_text(encoding="utf-8")
    refs = set(re.findall(r"@ref\{([^,}]*)", texi))
    anchors = set(re.findall(r"@anchor\{([^}]*)\}", texi)) | set(re.findall(r"@node ([^\n]*)", texi))
    assert refs and refs <= anchors, refs - anchors


def test_man_pages_write_the_matrix_without_a_spanning_cell(root):
    page = (build(root, "man").out / "builders.1").read_text(encoding="utf-8")
    assert "\u26a0 raises Unsupported" in page
    # The row that names the page is still there (bold; Sphinx < 7.3 italicises its link too).
    assert re.search(r"\\fB(\\fI\\%)?Builders", page), page


TEX = [shutil.which(tool) for tool in ("latexmk", "pdflatex", "xelatex", "pdftotext", "make",
                                       "makeinfo")]
needs_tex = pytest.mark.skipif(
    not all(TEX) and not os.environ.get("AUTOCAST_DEMO_LATEX"),
    reason="TeX Live is not installed (latexmk, pdflatex, xelatex, pdftotext, make, makeinfo): "
           ".ci/run installs it from Debian's packages")


def make(root, target: str, name: str, *args: str) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """``make <target>`` of the root with ``-W`` (sphinx-build's make mode), into _build/name."""
    src, cache = root
    out = src / "_build" / name
    done = subprocess.run(
        [sys.executable, "-m", "sphinx", "-M", target, str(src), str(out), "-W",
         "-D", f"autocast_demo_cache_dir={cache}", *args], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr
    return out, done


@needs_tex
@pytest.mark.parametrize("engine", ["pdflatex", "xelatex"])
def test_make_latexpdf_gives_a_pdf_with_the_results_tables(root, engine):
    # `make latexpdf` as a user types it: sphinx-build -M, then latexmk in the output.
    out, _ = make(root, "latexpdf", f"pdf-{engine}", "-D", f"latex_engine={engine}")
    pdf = out / "latex" / "builders.pdf"
    log = (out / "latex" / "builders.log").read_text(encoding="utf-8", errors="replace")
    assert "Missing character" not in log  # xelatex drops a glyph its font lacks, silently
    text = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True,
                          text=True, check=True).stdout
    assert "Listing 1: The config as the snippet sees it" in text
    assert "from the other page" in text and "has not been run" not in text
    header = [line.split() for line in text.splitlines() if "compiled = eager?" in line]
    # (every record holds: no "as recorded?" column of yes)
    assert ["backward_pass_autocast", "compiled", "=", "eager?"] in header
    rows = [" ".join(line.split()) for line in text.splitlines()]
    assert "same_as_forward \u2713 matches eager" in rows
    assert "off \u2713 matches eager" in rows
    assert any("\u2717 differs (y, max |" in row and "1.00e+00" in row for row in rows)
    assert any("raises Unsupported" in row for row in rows)
    if engine == "xelatex":  # pdflatex draws it from a triangle and "!": no one character
        assert any("\u26a0 raises Unsupported" in row for row in rows)
        assert any("max |\u0394| 1.00e+00" in row for row in rows)


@needs_tex
def test_make_info_gives_a_manual_with_the_results_and_the_caption(root):
    # `make info`: the Texinfo builder, then makeinfo, which refuses what Texinfo cannot hold.
    out, done = make(root, "info", "info")
    assert "warning" not in done.stderr.lower(), done.stderr  # makeinfo's own
    info = (out / "texinfo" / "builders.info").read_text(encoding="utf-8")
    assert "The config as the snippet sees it" in info
    assert "\u2713 matches eager" in info and "\u2717 differs (y, max |\u0394| 1.00e+00)" in info
