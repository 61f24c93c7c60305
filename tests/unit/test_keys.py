"""keys.py and stamps.py: what a cached result's key is made of, and when the writer's files
it stands for make it stale."""

from __future__ import annotations

import os
from dataclasses import replace

from fakes import claims, demo

from sphinx_autocast_demo.core.model import Code, RunRecord, Tolerance, Verdict
from sphinx_autocast_demo.core.state import FileStamp
from sphinx_autocast_demo.plan import keys, stamps
from sphinx_autocast_demo.plan.cache import MISSING, Entry, make_key


def key(the_demo=None, variant: int = 0, confdir: str = "/docs", variables=None, codes=None) -> str:
    the_demo = the_demo or demo()
    return keys.result_key(the_demo, codes or (the_demo.code,), the_demo.variants[variant], confdir,
                           variables or {})


def test_what_decides_a_result_changes_its_key():
    the_demo, base = demo(), key()
    changed = {
        "the page's directory": key(replace(the_demo, code=replace(the_demo.code, source="/docs/sub/i.rst"))),
        # Its __file__, which the snippet reaches without naming it as well (its frames).
        "another page beside it": key(replace(the_demo, code=replace(the_demo.code, source="/docs/b.rst"))),
        "a torch variable": key(variables={"TORCHINDUCTOR_FREEZING": "1"}),
        "the value": key(variant=1),
        "the backend": key(replace(the_demo, backend="inductor")),
        "the device": key(replace(the_demo, device="cuda")),
        "the dtype": key(replace(the_demo, dtype="float16")),
        "the tolerance": key(replace(the_demo, tolerance=Tolerance(0.0, 1e-2))),
        "the config": key(replace(the_demo, config="torch._dynamo.config.x")),
        "a setup": key(codes=(Code("import math", "/docs/index.rst", (2,)), the_demo.code)),
    }
    assert len({base, *changed.values()}) == len(changed) + 1, changed


def test_what_only_decides_the_check_or_the_place_keeps_its_key():
    the_demo, base = demo(), key()
    same = {
        "the record": key(replace(the_demo, expect=claims((("*", "differs"),)))),
        "the timeout": key(replace(the_demo, timeout=1.0)),
        "the lines": key(replace(the_demo, lineno=40, code=replace(the_demo.code, lines=(44,)))),
        "the name": key(replace(the_demo, ident="other", docname="other")),
        "the checkout moved": key(replace(the_demo, code=replace(the_demo.code, source="/x/index.rst")),
                                  confdir="/x"),
    }
    assert all(found == base for found in same.values()), same
    assert make_key({"a": 1, "b": [2]}) == make_key({"b": [2], "a": 1})


def test_a_release_keeps_the_keys_and_a_new_results_format_changes_them(monkeypatch):
    """A patch release must not make its users' caches and result sets stale; a change to what a
    result means must."""
    base = key()
    monkeypatch.setattr("sphinx_autocast_demo.core.__version__", "0.1.1")
    monkeypatch.setattr(keys, "__version__", "0.1.1", raising=False)  # wherever keys reads it
    assert key() == base
    monkeypatch.setattr(keys, "RESULTS_FORMAT", "2")
    assert key() != base


def test_a_probes_timeout_is_in_its_key_as_its_failure_is_kept():
    the_demo = demo()
    probing = replace(the_demo, variants=the_demo.variants[:1], probes=the_demo.variants[1:])

    def probe_key(timeout: float) -> str:
        return keys.result_key(replace(probing, timeout=timeout), (the_demo.code,),
                               probing.probes[0], "/docs", {})

    assert probe_key(1.0) != probe_key(2.0)
    assert key(probing) == key(replace(probing, timeout=1.0))  # the page's own values: not


def test_only_variables_torch_reads_go_into_a_key_and_the_torch_by_its_policy():
    environ = {"TORCH_LOGS": "+dynamo", "PYTORCH_NO_CUDA_MEMORY_CACHING": "1", "TORCHDYNAMO_X": "0",
               "ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_DEFAULT_FPMATH_MODE": "bf16",
               "MKL_CBWR": "COMPATIBLE", "OMP_NUM_THREADS": "4", "TRITON_INTERPRET": "1",
               # where files are kept: never (a fresh CI runner would miss every result)
               "TORCHINDUCTOR_CACHE_DIR": "/tmp/c", "TORCH_HOME": "/h", "TRITON_CACHE_DIR": "/t",
               "TMPDIR": "/tmp", "XDG_CACHE_HOME": "/c",
               "HOME": "/h", "MY_TORCH": "1", "CUDA_VISIBLE_DEVICES": "3"}
    assert list(keys.torch_variables(environ)) == [
        "ATEN_CPU_CAPABILITY", "MKL_CBWR", "OMP_NUM_THREADS", "ONEDNN_DEFAULT_FPMATH_MODE",
        "PYTORCH_NO_CUDA_MEMORY_CACHING", "TORCHDYNAMO_X", "TORCH_LOGS", "TRITON_INTERPRET"]
    assert keys.torch_key("2.16", "release") == "2.16"
    assert keys.torch_key("nightly", "release") == "nightly"  # no release number: as it is


def test_torch_keys():
    assert keys.torch_key("2.16.0a0+git1234abc", "exact") == "2.16.0a0+git1234abc"
    assert keys.torch_key("2.16.0a0+git1234abc", "release") == "2.16.0"
    assert keys.torch_key("2.13.0+cpu", "release") == "2.13.0"
    assert keys.torch_key("2.13.0+cpu", "nightly-2026-11") == "nightly-2026-11"
    assert keys.torch_key("2.13.0+cpu", "") == "2.13.0+cpu"  # empty: exact, not a label
    # A torch run from its source tree: "exact" compares its files too, the others do not.
    assert keys.torch_key("2.16.0a0+gitabc", "exact", "f00d") == "2.16.0a0+gitabc source f00d"
    assert keys.torch_key("2.16.0a0+gitabc", "release", "f00d") == "2.16.0"
    assert keys.torch_key("2.16.0a0+gitabc", "nightly", "f00d") == "nightly"


def test_a_torch_run_from_its_source_tree_is_known_by_its_modules_and_libraries(tmp_path):
    """keys.torch_source: a digest of the time and size of the modules and libraries of a torch
    imported from outside the installed packages; of nothing else in it; none for an installed
    one."""
    tree = tmp_path / "checkout" / "torch"
    files = {name: tree / name for name in ("__init__.py", "_functorch/config.py", "lib/libtorch.so",
                                            "include/ATen/x.h", "csrc/x.cpp", "version.txt")}
    for path in files.values():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x = 1\n")
    origin, site = str(files["__init__.py"]), keys.places_of([str(tmp_path / "site-packages")])
    first = keys.torch_source(origin, site)
    assert first and keys.torch_source(origin, site) == first  # (the same files: the same)

    def changed(name: str, *, size: bool = False) -> bool:
        before = keys.torch_source(origin, site)
        path = files[name]
        if size:
            path.write_text(path.read_text() + "y = 2\n")
        else:
            stat = path.stat()
            os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
        return keys.torch_source(origin, site) != before

    assert changed("_functorch/config.py") and changed("_functorch/config.py", size=True)
    assert changed("lib/libtorch.so")  # (rebuilt)
    assert not changed("include/ATen/x.h") and not changed("csrc/x.cpp")  # (built into a library)
    assert not changed("version.txt")
    # Installed (under site-packages, as pip installs a wheel), or not found: nothing to stamp.
    assert keys.torch_source(origin, keys.places_of([str(tmp_path / "checkout")])) == ""
    assert keys.torch_source(origin, keys.places_of([str(tmp_path / "check")])) != ""  # (a prefix)
    assert keys.torch_source(None, site) == ""



def test_an_entry_is_stale_when_its_files_cannot_be_compared(tmp_path, monkeypatch):
    (tmp_path / "docs").mkdir()
    helper = tmp_path / "lib" / "helpers" / "tool.py"
    helper.parent.mkdir(parents=True)
    helper.write_text("A = 1\n")
    found = stamps.Stamps(str(tmp_path / "docs"))
    digest = found.digest(str(helper))

    def entry(files):
        return Entry("2.13.0", Verdict("matches"), RunRecord("ok"), RunRecord("ok"), files=files)

    outside = FileStamp("../lib/helpers/tool.py", digest)
    assert found.stale(entry((outside,))) is None
    assert found.stale(entry(None)) == "it does not record which of the writer's files its runs imported"
    # A file outside the docs is named by its last two parts: no path of the build machine.
    assert found.stale(entry((replace(outside, sha256=MISSING),))) == (
        "helpers/tool.py, which its runs imported, changed")
    # Read once a build: a later write is for the next build to see.
    helper.write_text("A = 2\n")
    assert found.stale(entry((outside,))) is None
    assert stamps.Stamps(str(tmp_path / "docs")).stale(entry((outside,))) is not None
    monkeypatch.setattr(stamps, "MAX_ITEMS", 1)
    assert found.stamp([str(helper), str(tmp_path / "docs" / "x.py")], "index.rst:3") is None
    assert found.unkept == "index.rst:3 (its runs had more than 1 files of yours)"
