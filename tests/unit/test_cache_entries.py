"""Cache entries that are JSON of the right shape but not what was written (issue 5, case 9),
without a build: an entry reads back as written, each field is checked on read and a mistyped
one named, and text from an entry is made printable and bounded like a live run's. Real builds
over damaged, hostile and mistyped caches: tests/build/test_faults_cache.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sphinx_autocast_demo.core.fromjson import MAX_ITEMS
from sphinx_autocast_demo.core.model import (
    Frame,
    Note,
    RunRecord,
    SnippetError,
    TensorDiff,
    TensorRecord,
    Verdict,
)
from sphinx_autocast_demo.core.text import MAX_OUTPUT, bounded, printable
from sphinx_autocast_demo.plan.cache import CorruptEntry, Entry, ResultCache

ENTRY = Entry(
    torch_version="2.13.0",
    verdict=Verdict(outcome="raises", exception="E", max_abs=0.5, note="n",
                    diffs=(TensorDiff("x", "value", "float32", None, False, None,
                                       Note("missing", "[2, 3]", "")),)),
    compiled=RunRecord(
        status="raised", output="hi\n", seconds=0.25,
        tensors=(TensorRecord("x", "value", "float32", (2, 3), "ab" * 32),),
        error=SnippetError("E", ("E", "Exception"), "m", (Frame(0, 2, "<module>", "f(x)"),)),
    ),
    eager=RunRecord(status="ok", detail="d"),
    python_version="3.11.7",
)


def stored(tmp_path: Path, change=None) -> ResultCache:
    """A cache holding ``ENTRY`` under key ``k``, its JSON changed by ``change(data)``."""
    cache = ResultCache(tmp_path)
    cache.put("k", ENTRY)
    path = tmp_path / "k" / "k.json"
    if change is not None:
        data = json.loads(path.read_text())
        change(data)
        path.write_text(json.dumps(data))
    return cache


def setting(path: tuple[object, ...], value: object):
    """A change that puts ``value`` at ``path`` (keys and list indices) in an entry's JSON."""
    def change(data):
        *parents, last = path
        for step in parents:
            data = data[step]
        data[last] = value
    return change


MISTYPED = {  # where in the entry -> a value of the wrong type, or not allowed there
    ("compiled", "output"): 12345,
    ("compiled", "seconds"): "1.5",
    ("compiled", "tensors"): [3],
    ("compiled", "tensors", 0, "shape"): [2, [3]],
    ("compiled", "tensors", 0, "kind"): "bias",
    ("compiled", "error", "frames", 0, "line"): "seven",
    ("compiled", "error", "frames", 0, "part"): -1,
    ("compiled", "error", "names"): ["E"] * (MAX_ITEMS + 1),
    ("compiled", "status"): "finished",
    ("eager", "error"): {"type": "E", "message": "m", "frames": []},
    ("verdict", "outcome"): "sort of",
    ("verdict", "max_abs"): True,
    ("verdict", "diffs", 0, "equal"): "yes",
    ("verdict", "diffs", 0, "max_abs"): 10**400,
    # A note is a fact of a known kind, never words to show (an older cache's English note).
    ("verdict", "diffs", 0, "note"): "only eager",
    ("verdict", "diffs", 0, "note", "kind"): "{0.__class__}",
    ("torch_version",): ["2.13.0"],
}


def test_an_entry_read_back_is_the_entry_written(tmp_path):
    assert stored(tmp_path).get("k") == ENTRY


@pytest.mark.parametrize("path", list(MISTYPED), ids=lambda p: ".".join(map(str, p)))
def test_a_mistyped_field_rejects_the_entry_and_names_the_field(tmp_path, path):
    cache = stored(tmp_path, setting(path, MISTYPED[path]))
    with pytest.raises(CorruptEntry) as caught:
        cache.get("k")
    field = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)[1:]
    assert str(caught.value).startswith(f"{tmp_path / 'k' / 'k.json'}: {field}")


def test_text_from_an_entry_is_printable_and_bounded_like_a_live_runs(tmp_path):
    flood = "\x1b[31mred\x1b[0m \x00\udc80\n" + "spam\n" * 2_000_000
    already_cut = bounded("x" * (MAX_OUTPUT + 5))  # as a live run stores it: kept as it is

    def change(data):
        data["compiled"]["output"] = flood
        data["compiled"]["error"]["message"] = flood
        data["eager"]["output"] = already_cut
        data["verdict"]["max_abs"] = float("nan")  # an inf - inf: a float JSON may hold
    entry = stored(tmp_path, change).get("k")
    assert entry is not None
    expected = bounded(printable(flood.replace("\udc80", "?")))
    assert entry.compiled.output == expected and entry.compiled.error.message == expected
    assert len(expected) < MAX_OUTPUT + 100 and expected.startswith("red \\x00?\nspam\n")
    assert entry.eager.output == already_cut
    assert entry.verdict.max_abs != entry.verdict.max_abs
