"""What the worker's warm-up is for, with real torch: a child forked after it compiles its first
inductor kernel with nothing of inductor's C++ toolchain left to set up.

Every CPU kernel's compile first hashes the precompiled header's preprocessed text (a g++ run,
kept per process and keyed alike for every CPU kernel). The warm-up's one kernel must do it in
the worker, or every child does it again: a warm-up region that dynamo could not compile as one
graph left it to the children, and the benchmark's cold build took 46 s instead of 29 s.
"""

from __future__ import annotations

import textwrap

import pytest
from conftest import script_lines

CHILD = textwrap.dedent("""\
    import os
    from sphinx_autocast_demo.engine.child import warm
    from sphinx_autocast_demo.engine.child.processes import renew_thread_pool
    warm.import_stack("torch._functorch.config.backward_pass_autocast", "inductor")
    warm.warm_up()
    import torch
    from torch._inductor import codecache, config
    header = getattr(codecache, "_precompile_header", None)
    if header is None or not config.cpp_cache_precompile_headers:
        print("none"); raise SystemExit
    before = header.cache_info()
    read, write = os.pipe()
    if os.fork() == 0:  # a run, as the worker forks it
        renew_thread_pool()
        config.force_disable_caches = True  # (its kernels compiled, not read from a cache)
        def region(x, w):
            with torch.autocast("cpu", enabled=False):
                return (x.float() @ w.float()).sum()
        w = torch.randn(24, 24, requires_grad=True)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            z = torch.compile(region)(torch.randn(24, 24), w)
        z.backward()
        after = header.cache_info()
        os.write(write, f"{after.hits - before.hits} {after.misses - before.misses}".encode())
        os._exit(0)
    os.close(write)
    _, status = os.wait()
    print(before.currsize, os.read(read, 100).decode() or "- -", status)
    """)


def test_a_child_of_the_warm_worker_compiles_its_first_kernel_with_the_header_hashed():
    """The warm-up kept the header's hash, and the child's kernels found it: hits, no miss.
    Fails where the warm-up compiles no C++ kernel or one keyed otherwise."""
    lines = script_lines(CHILD, env={"TORCHINDUCTOR_COMPILE_THREADS": "1"})  # (as the pool sets)
    if lines[-1] == "none":
        pytest.skip("this torch precompiles no header for CPU kernels")
    kept, hits, misses, status = lines[-1].split()
    assert (misses, status) == ("0", "0"), lines
    assert int(kept) >= 1 and int(hits) >= 1, lines  # (the child did compile a kernel)
