"""Accept mode end to end: real CLI builds of test-accept with AUTOCAST_DEMO_ACCEPT set. The
rewriting itself, on text only (line endings, option styles): tests/unit/test_accept_rules.py."""

from __future__ import annotations

import difflib
import shutil

import pytest
from conftest import ROOTS, column, copy_root, sphinx_build

FILES = ("index.rst", "markdown.md", "conf.py")

# What torch does (seed notes): backward inside the bf16 autocast block reproduces eager under
# same_as_forward and autocast only; backward after the block under off only; w.grad is fp32.
INDEX_CHANGES = [
    ("   :expect: same_as_forward: matches,  off: matches;autocast: matches\n",
     "   :expect: same_as_forward: matches,  off: differs;autocast: matches\n"),
    ("   :expect: *: matches\n\n   w = run(backward_inside=True)",
     "   :expect: *: matches, off: differs\n\n   w = run(backward_inside=True)"),
    ("   :expect: same_as_forward: matches,\n            off: matches\n",
     "   :expect: same_as_forward: differs,\n            off: matches\n"),
    ("   :name: missing\n   :values: off\n",
     "   :name: missing\n   :values: off\n   :expect: off: matches\n"),
    ("      [*]\n      torch.bfloat16\n", "      [*]\n      torch.float32\n"),
]
MARKDOWN_CHANGES = [
    (":expect: same_as_forward: matches, off: matches\n",
     ":expect: same_as_forward: differs, off: matches\n"),
    (":  [same_as_forward]\n:  0\n:  [off]\n:  0\n",
     ":  [same_as_forward]\n:  torch.float32\n:  [off]\n:  torch.float32\n"),
    ("values: same_as_forward, off\n---\n",
     'values: same_as_forward, off\nexpect: "same_as_forward: matches, off: differs"\n---\n'),
]


def expected(name: str) -> bytes:
    text = (ROOTS / "test-accept" / name).read_text(encoding="utf-8")
    for old, new in {"index.rst": INDEX_CHANGES, "markdown.md": MARKDOWN_CHANGES}.get(name, []):
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    return text.encode()


def snapshot(src):
    return {name: (src / name).read_bytes() for name in FILES}


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    src = copy_root("accept", tmp_path_factory)
    pristine = snapshot(src)
    cache = ("-D", f"autocast_demo_cache_dir={tmp_path_factory.mktemp('cache')}")
    out = src / "_build" / "html"
    runs = {}
    runs["diff"] = sphinx_build(src, out, *cache, env={"AUTOCAST_DEMO_ACCEPT": "diff"})
    runs["diff_files"] = snapshot(src)
    runs["write"] = sphinx_build(src, out, *cache, env={"AUTOCAST_DEMO_ACCEPT": "1"})
    runs["accepted"] = snapshot(src)
    runs["write_pages"] = {name: runs["write"].html(name) for name in ("index", "markdown")}
    runs["verify"] = sphinx_build(src, out, *cache)
    runs["noop"] = sphinx_build(src, out, *cache, env={"AUTOCAST_DEMO_ACCEPT": "1"})
    runs["noop_files"] = snapshot(src)
    # Flip one recorded outcome of a correct page, then accept again.
    index = src / "index.rst"
    good = index.read_bytes()
    flipped = good.replace(b":expect: same_as_forward: differs, off: matches, autocast: differs",
                           b":expect: same_as_forward: differs, off: differs, autocast: differs", 1)
    assert flipped != good
    index.write_bytes(flipped)
    runs["flip"] = sphinx_build(src, out, *cache, env={"AUTOCAST_DEMO_ACCEPT": "1"})
    runs["restored"] = index.read_bytes()
    # A stale page plus a directive error: the build is not clean, nothing may be written.
    blocked = src.parent / "blocked"
    shutil.copytree(ROOTS / "test-accept", blocked)
    with open(blocked / "markdown.md", "a", encoding="utf-8") as f:
        f.write("\n```{autocast-demo}\n:expcet: off: matches\n\nx = 1\n```\n")
    runs["blocked_before"] = snapshot(blocked)
    runs["blocked"] = sphinx_build(blocked, blocked / "_build", *cache, env={"AUTOCAST_DEMO_ACCEPT": "1"})
    runs["blocked_after"] = snapshot(blocked)
    runs["pristine"] = pristine
    return runs


def test_dry_run_prints_a_unified_diff_and_writes_nothing(builds):
    run = builds["diff"]
    assert builds["diff_files"] == builds["pristine"]
    assert run.returncode == 1  # the pages are stale and stay so
    assert "AUTOCAST_DEMO_ACCEPT=diff: 8 changes, nothing written" in run.stdout
    for name in ("index.rst", "markdown.md"):
        old = builds["pristine"][name].decode().splitlines(keepends=True)
        new = expected(name).decode().splitlines(keepends=True)
        hunks = "".join(difflib.unified_diff(old, new))
        body = [ln for ln in hunks.splitlines() if ln[:1] in "+-" and ln[:3] not in ("+++", "---")]
        assert len(body) >= 2 and all(ln in run.stdout.splitlines() for ln in body), body
        assert any(ln.startswith("+++ b/") and ln.endswith(f"src/{name}")
                   for ln in run.stdout.splitlines())


def test_accept_rewrites_only_the_stale_records(builds):
    run = builds["write"]
    assert run.returncode == 0, run.stderr
    assert builds["accepted"]["index.rst"] == expected("index.rst")
    assert builds["accepted"]["markdown.md"] == expected("markdown.md")
    assert builds["accepted"]["conf.py"] == builds["pristine"]["conf.py"]
    assert "index.rst:42: recorded same_as_forward: matches, off: differs" not in run.stdout
    assert "index.rst:42: recorded off: differs" in run.stdout
    assert "index.rst:65: recorded off: matches" in run.stdout
    assert "markdown.md:16: recorded same_as_forward: differs" in run.stdout
    assert "2 files rewritten" in run.stdout


def held(page, ident: str) -> bool:
    """Whether demo ``ident``'s table says that the page's record of every value holds: each
    cell of its "as recorded?" column a yes, or no such column (a table whose records all hold
    may say so once, under it) and nothing that says a record broke or is missing."""
    box = page.find(id=ident)
    text = box.get_text(" ")
    if "no: records" in text or "not recorded" in text or "but the page records" in text:
        return False
    header = [th.get_text(" ", strip=True) for th in box.select("table thead th")]
    return "as recorded?" not in header or all(
        "yes" in cell for cell in column(page, ident, ("as recorded?",)))


def test_the_accept_build_shows_the_new_records_itself(builds):
    # No second build: the pages of the build that rewrote the records say that they hold.
    run, pages = builds["write"], builds["write_pages"]
    for name, ident in (("index", "stale"), ("index", "star"), ("index", "continued"),
                        ("index", "missing"), ("index", "printed"), ("markdown", "colon"),
                        ("markdown", "yaml")):
        assert held(pages[name], ident), (name, ident, pages[name].find(id=ident).get_text(" "))
    # Nor warns of the records it rewrote: what it did is said once, at the end.
    for subtype in ("mismatch", "missing-expectation", "output"):
        assert f"[autocast_demo.{subtype}]" not in run.stderr, run.stderr
    assert run.stdout.index("autocast-demo: ") < run.stdout.index("AUTOCAST_DEMO_ACCEPT: ")
    assert "2 files rewritten; the pages of this build show the new records" in run.stdout


def test_accepted_sources_build_clean_from_the_cache(builds):
    run = builds["verify"]
    assert run.returncode == 0, run.stderr
    assert "WARNING" not in run.stderr
    assert run.runs() == (0, 17)


def test_accept_on_correct_sources_changes_nothing(builds):
    assert builds["noop"].returncode == 0
    assert "AUTOCAST_DEMO_ACCEPT: every record holds; nothing to change" in builds["noop"].stdout
    assert builds["noop_files"] == builds["accepted"]


def test_flipped_expectation_is_restored_byte_for_byte(builds):
    assert builds["flip"].returncode == 0, builds["flip"].stderr
    assert builds["restored"] == builds["accepted"]["index.rst"]
    assert "recorded off: matches" in builds["flip"].stdout


def test_a_build_with_errors_rewrites_nothing(builds):
    run = builds["blocked"]
    assert run.returncode == 1
    assert builds["blocked_after"] == builds["blocked_before"]
    assert "AUTOCAST_DEMO_ACCEPT: nothing was changed, because:" in run.stderr
    assert "unknown option :expcet:" in run.stderr
