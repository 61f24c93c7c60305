"""Faults around the result cache and the build process itself (issue 5, cases 9 and 10).

A corrupt, truncated, hostile or mistyped cache entry is re-run with a located warning and never
executed; a cache directory no build can write is said once, before anything runs, and the build
goes on; a build killed with SIGKILL leaves a cache the next build trusts; two builds sharing one
cache at once lose nothing; Ctrl-C stops a build promptly. Every build here is a real
``python -m sphinx`` on tests/roots/test-fault-cache*, and no case may leave a process behind.
How each field of an entry is checked on read, without a build: tests/unit/test_cache_entries.py.
"""

from __future__ import annotations

import json
import os
import pickle
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
import sphinx
from conftest import copy_root, processes_tagged, sphinx_build, verdicts

from sphinx_autocast_demo.core.text import MAX_OUTPUT

MATCH, DIFFER = "\u2713 matches eager", "\u2717 differs"
DEMOS = ("first", "second", "gate")


def line_of(path: Path, marker: str) -> int:
    """1-based line of the first line of ``path`` containing ``marker``."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return next(i for i, line in enumerate(lines, 1) if marker in line)


def entries(cache: Path) -> list[Path]:
    return sorted(p for p in cache.rglob("*.json") if not p.name.startswith(".tmp-"))


def wait_for(predicate, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def no_process_left(tag: str, grace: float = 10.0) -> list[int]:
    """Tagged processes still alive after ``grace`` seconds (dying ones get a moment)."""
    deadline = time.monotonic() + grace
    while processes_tagged(tag) and time.monotonic() < deadline:
        time.sleep(0.1)
    return processes_tagged(tag)


def start_build(src: Path, out: Path, cache: Path, tag: str) -> subprocess.Popen[str]:
    """A build in its own session, as a terminal runs it: its own process group."""
    return subprocess.Popen(
        [sys.executable, "-m", "sphinx", "-b", "html", str(src), str(out),
         "-D", f"autocast_demo_cache_dir={cache}"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
        env={**os.environ, "AUTOCAST_DEMO_TEST_TAG": tag}, preexec_fn=hear_ctrl_c,
    )


def hear_ctrl_c() -> None:
    """Ctrl-C as a terminal's shell leaves it: a background job (``pytest &``) ignores SIGINT,
    and Python keeps ignoring it, so the build would not hear the test's Ctrl-C."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def check_pages(out: Path) -> None:
    from bs4 import BeautifulSoup

    soup = BeautifulSoup((out / "index.html").read_text(encoding="utf-8"), "html.parser")
    first = verdicts(soup, "first")
    assert first[0].startswith(DIFFER) and first[1] == MATCH
    assert verdicts(soup, "second") == [MATCH, MATCH]
    assert verdicts(soup, "gate") == [MATCH]


@pytest.fixture(scope="module")
def killed(tmp_path_factory):
    """SIGKILL the sphinx-build process while a demo runs, then build again."""
    src = copy_root("fault-cache", tmp_path_factory)
    cache = src.parent / "cache"
    tag = uuid.uuid4().hex
    proc = start_build(src, src / "_build" / "html", cache, tag)
    try:
        wait_for(lambda: (src / "started").exists(), 240, "the gate demo to start")
        # Two runs may be in flight: let the one beside the gate finish its entry.
        wait_for(lambda: len(entries(cache)) >= 4, 60, "the other demos' entries")
        before = entries(cache)
        os.kill(proc.pid, signal.SIGKILL)  # the build only, as an OOM killer or CI would
        proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    left = no_process_left(tag)
    (src / "release").touch()
    again = sphinx_build(src, src / "_build" / "html", "-D", f"autocast_demo_cache_dir={cache}",
                         env={"AUTOCAST_DEMO_TEST_TAG": tag})
    return before, left, cache, again, tag


def test_sigkill_leaves_no_process_and_only_whole_entries(killed):
    before, left, _cache, _again, _tag = killed
    assert left == []
    assert len(before) == 4  # first and second finished before the gate started
    for path in before:
        assert json.loads(path.read_text())["key"] == path.stem


def test_the_build_after_a_sigkill_uses_what_was_cached(killed):
    _before, _left, cache, again, tag = killed
    assert again.returncode == 0, again.stderr
    assert again.runs() == (2, 4)  # only the gate ran again
    assert "unreadable cache entry" not in again.stderr
    check_pages(again.out)
    assert len(entries(cache)) == 5
    assert no_process_left(tag) == []


@pytest.fixture(scope="module")
def corrupt(killed):
    """Damage three of the five entries the SIGKILL case left, build again (fresh environment)."""
    _before, _left, cache, again, _tag = killed
    src = again.src
    tag = uuid.uuid4().hex
    env = {"AUTOCAST_DEMO_TEST_TAG": tag}
    files = entries(cache)
    assert len(files) == 5, files  # 2 + 2 + 1 values
    marker = src.parent / "pwned"

    class Payload:  # unpickling this would create ``marker``
        def __reduce__(self):
            return (os.system, (f"touch {marker}",))

    files[0].write_text(files[0].read_text()[:40])  # truncated mid-write
    files[1].write_bytes(pickle.dumps(Payload()))  # a pickle where JSON belongs
    files[2].write_text(json.dumps({  # JSON that asks to be turned into code
        "format": 1, "key": files[2].stem, "torch_version": "2.13.0",
        "verdict": {"__reduce__": ["os.system", [f"touch {marker}"]]},
        "compiled": {"py/object": "os.system"}, "eager": {"__class__": "subprocess.Popen"},
    }))
    second = sphinx_build(src, src / "_build" / "two", "-E",
                          "-D", f"autocast_demo_cache_dir={cache}", env=env)
    return src, cache, files, marker, second, tag


def test_damaged_entries_are_rerun_with_a_located_warning(corrupt):
    src, _cache, _files, _marker, build, _tag = corrupt
    assert build.returncode == 0, build.stderr
    index = src / "index.rst"
    demo_lines = {line_of(index, f":name: {name}") - 1 for name in DEMOS}
    warned = [line for line in build.stderr.splitlines() if "unreadable cache entry" in line]
    assert len(warned) == 3, build.stderr
    for line in warned:
        where = line.split(": WARNING:")[0]
        assert where.rsplit(":", 1)[0] == str(index)
        assert int(where.rsplit(":", 1)[1]) in demo_lines
        assert "running again" in line and "[autocast_demo.cache]" in line
    assert build.runs() == (6, 2)
    check_pages(build.out)


def test_hostile_entries_are_never_executed_and_are_replaced(corrupt):
    _src, cache, files, marker, _build, tag = corrupt
    assert not marker.exists()
    for path in files:  # every damaged entry was rewritten as a valid JSON entry
        data = json.loads(path.read_text())
        assert data["format"] == 1 and data["key"] == path.stem
        assert data["verdict"]["outcome"] in ("matches", "differs")
    assert len(entries(cache)) == 5
    assert no_process_left(tag) == []


@pytest.fixture(scope="module")
def concurrent(tmp_path_factory):
    """Two builds of two copies share one cache directory at the same time."""
    srcs = [copy_root("fault-cache", tmp_path_factory) for _ in range(2)]
    cache = srcs[0].parent.parent / "shared-cache"
    tag = uuid.uuid4().hex
    for src in srcs:
        (src / "release").touch()
    procs = [start_build(src, src / "_build" / "html", cache, tag) for src in srcs]
    outputs = [p.communicate(timeout=600) for p in procs]
    third = sphinx_build(srcs[0], srcs[0] / "_build" / "again", "-E",
                         "-D", f"autocast_demo_cache_dir={cache}",
                         env={"AUTOCAST_DEMO_TEST_TAG": tag})
    return srcs, cache, procs, outputs, third, tag


def test_two_builds_sharing_a_cache_both_succeed(concurrent):
    srcs, _cache, procs, outputs, _third, _tag = concurrent
    for src, proc, (_stdout, stderr) in zip(srcs, procs, outputs, strict=True):
        assert proc.returncode == 0, stderr
        assert "WARNING" not in stderr, stderr
        check_pages(src / "_build" / "html")


def test_nothing_is_lost_after_sharing_a_cache(concurrent):
    _srcs, cache, _procs, _outputs, third, tag = concurrent
    files = entries(cache)
    assert len(files) == 5
    for path in files:
        assert json.loads(path.read_text())["key"] == path.stem
    assert not list(cache.rglob(".tmp-*"))
    assert third.returncode == 0, third.stderr
    assert third.runs() == (0, 5)
    check_pages(third.out)
    assert no_process_left(tag) == []


@pytest.fixture(scope="module")
def interrupted(tmp_path_factory):
    """Ctrl-C: SIGINT to the build's process group while a demo runs."""
    src = copy_root("fault-cache", tmp_path_factory)
    tag = uuid.uuid4().hex
    proc = start_build(src, src / "_build" / "html", src.parent / "cache", tag)
    try:
        wait_for(lambda: (src / "started").exists(), 240, "the gate demo to start")
        assert processes_tagged(tag)  # the build, its worker and the gate's runs are alive
        sent = time.monotonic()
        os.killpg(proc.pid, signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=60)
        stopped = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return proc.returncode, stdout, stderr, stopped, no_process_left(tag, grace=5.0)


def test_ctrl_c_stops_the_build_promptly(interrupted):
    returncode, _stdout, stderr, stopped, _left = interrupted
    assert returncode != 0, stderr
    assert "Interrupted" in stderr or "KeyboardInterrupt" in stderr, stderr
    # The gate would wait forever: the build must not wait for it, nor for a timeout.
    assert stopped < 20, stopped


def test_ctrl_c_leaves_no_process(interrupted):
    assert interrupted[4] == []


@pytest.fixture(scope="module")
def mistyped(corrupt):
    """Give four of the five entries a field of the wrong type, one a flood of output; build again."""
    src, cache, _files, _marker, _build, _tag = corrupt
    tag = uuid.uuid4().hex
    by_demo: dict[str, list[Path]] = {}
    for path in entries(cache):
        shape = json.loads(path.read_text())["compiled"]["tensors"][0]["shape"]
        by_demo.setdefault({(64, 64): "first", (3,): "second", (2,): "gate"}[tuple(shape)], []).append(path)
    flood = "\x1b[31m" + "spam\n" * 1_000_000

    def change(path: Path, edit) -> None:
        data = json.loads(path.read_text())
        edit(data)
        path.write_text(json.dumps(data))

    first, second, (gate,) = sorted(by_demo["first"]), sorted(by_demo["second"]), by_demo["gate"]
    change(first[0], lambda d: d["compiled"].update(output=12345))
    change(first[1], lambda d: d["verdict"].update(outcome="sort of"))
    change(second[0], lambda d: d["compiled"].update(status="raised", error={
        "type": "E", "names": ["E"], "message": "m", "frames": [[0, "seven", "<module>", "x"]]}))
    change(second[1], lambda d: d["compiled"].update(output=flood))
    change(gate, lambda d: d["eager"].update(status="finished"))
    build = sphinx_build(src, src / "_build" / "three", "-E",
                         "-D", f"autocast_demo_cache_dir={cache}", env={"AUTOCAST_DEMO_TEST_TAG": tag})
    return src, cache, second[1], build, tag


def test_mistyped_entries_are_rerun_with_a_located_warning_naming_the_field(mistyped):
    src, _cache, _flooded, build, tag = mistyped
    assert build.returncode == 0, build.stderr
    index = src / "index.rst"
    where = {name: f"{index}:{line_of(index, f':name: {name}') - 1}" for name in DEMOS}
    warned = sorted(line for line in build.stderr.splitlines() if "WARNING" in line)
    fields = ("compiled.output is 12345, not str", "verdict.outcome is 'sort of', not one of",
              "compiled.error.frames[0].line is 'seven', not int", "eager.status is 'finished', not one of")
    assert len(warned) == 4, build.stderr
    for line in warned:
        assert "unreadable cache entry, running again" in line and "[autocast_demo.cache]" in line
    assert sorted(line.split(": WARNING:")[0] for line in warned) == sorted(
        [where["first"], where["first"], where["second"], where["gate"]])
    assert all(any(field in line for line in warned) for field in fields), warned
    assert build.runs() == (8, 1)
    check_pages(build.out)
    assert no_process_left(tag) == []


def test_a_flood_of_output_in_an_entry_is_cut_like_a_live_runs(mistyped):
    _src, _cache, flooded, build, _tag = mistyped
    assert build.returncode == 0, build.stderr
    page = build.html("index")
    shown = [pre for pre in page.find(id="second").select(".autocast-demo-output pre")
             if pre.get_text().strip()]
    assert len(shown) == 1, shown  # the flooded value's; the other printed nothing
    text = shown[0].get_text()
    assert text.startswith("spam\nspam\n") and "\x1b" not in text
    assert len(text) < MAX_OUTPUT + 100 and "[... output cut here ...]" in text
    assert len((build.out / "index.html").read_bytes()) < 200_000
    assert json.loads(flooded.read_text())["compiled"]["output"].count("spam") == 1_000_000


# A cache directory that cannot be written (under a regular file: root cannot write there either).

@pytest.fixture(scope="module")
def unstorable(tmp_path_factory):
    src = copy_root("fault-cache-dir", tmp_path_factory)
    tag = uuid.uuid4().hex
    build = sphinx_build(src, src / "_build" / "html", env={"AUTOCAST_DEMO_TEST_TAG": tag})
    build.tag = tag
    return build


def test_an_unwritable_cache_dir_is_said_once_at_its_conf_py_line(unstorable):
    build = unstorable
    assert build.returncode == 0, build.stderr
    conf = build.src / "conf.py"
    warned = [line for line in build.stderr.splitlines() if "WARNING" in line]
    assert len(warned) == 1, build.stderr
    assert warned[0].startswith(f"{conf}:{line_of(conf, 'autocast_demo_cache_dir =')}: WARNING: ")
    assert f"cannot store results in the cache directory {build.src / 'blocker' / 'cache'}" in warned[0]
    assert "Not a directory" in warned[0] and "autocast_demo_cache_dir" in warned[0]
    assert warned[0].endswith("[autocast_demo.cache]")
    assert "Traceback" not in build.stderr


def test_an_unwritable_cache_dir_still_runs_and_renders_every_demo(unstorable):
    build = unstorable
    assert build.runs() == (2, 0)
    assert verdicts(build.html("index"), "tiny") == [MATCH]
    assert (build.src / "blocker").is_file()  # nothing was stored, nothing was replaced
    assert no_process_left(build.tag) == []


@pytest.mark.skipif(sphinx.version_info < (8, 1), reason="--exception-on-warning is new in Sphinx 8.1")
def test_an_unwritable_cache_dir_is_found_before_anything_runs(tmp_path_factory):
    # Stopping at the first warning shows when it came: before any demo ran, not after all.
    src = copy_root("fault-cache-dir", tmp_path_factory)
    tag = uuid.uuid4().hex
    build = sphinx_build(src, src / "_build" / "html", "--exception-on-warning",
                         env={"AUTOCAST_DEMO_TEST_TAG": tag})
    assert build.returncode != 0
    assert "cannot store results in the cache directory" in build.stderr, build.stderr
    assert "running autocast demos" not in build.stdout, build.stdout
    assert no_process_left(tag) == []
