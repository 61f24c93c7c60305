"""The warm worker on huge pages (cheaper forks) runs every run as it does without them.

The same real-torch runs (the bf16 region under three values, compiled and eager) in a worker
whose memory was collapsed to 2 MiB pages and in one told not to (``AUTOCAST_DEMO_HUGE_PAGES=0``):
every run forked, and the same status, printed output and tensors, bit for bit.
"""

from __future__ import annotations

import textwrap

import pytest
from conftest import kernel_can_collapse

from sphinx_autocast_demo.engine.pool import Run, WorkerPool

CODE = textwrap.dedent("""\
    import torch
    def region(x, w):
        with torch.autocast("cpu", enabled=False):
            return (x.float() @ w.float()).sum()
    x = torch.randn(24, 24)
    w = torch.randn(24, 24, requires_grad=True)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        z = torch.compile(region)(x, w)
    z.backward()
    print(z.item(), w.grad.sum().item())
    """)
VALUES = ["same_as_forward", "off", [{"device_type": "cpu", "dtype": {"__torch__": "bfloat16"}}]]


def runs() -> list[Run]:
    return [Run(key=f"{index}-{mode}", timeout=120, job={
        "setup": [], "code": CODE, "mode": mode, "backend": "aot_eager", "device": "cpu",
        "config": "torch._functorch.config.backward_pass_autocast", "value": value, "page": "x.rst"})
        for index, value in enumerate(VALUES) for mode in ("compiled", "eager")]


def run_all(setting: str) -> tuple[int, dict[str, tuple]]:
    pool = WorkerPool(2, env={"AUTOCAST_DEMO_HUGE_PAGES": setting})
    try:
        huge = pool.ready().get("huge_pages", -1)
        found = {}
        for fin in pool.run(runs()):
            assert not fin.fresh, fin.record  # the collapsing thread is gone before any fork
            found[fin.run.key] = (fin.record.status, fin.record.output, fin.record.tensors, fin.data)
    finally:
        pool.close()
    return huge, found


def test_huge_pages_change_no_run_and_every_run_still_forks():
    huge_off, without = run_all("0")
    huge_on, with_huge = run_all("1")
    assert huge_off == 0
    assert {status for status, *_ in without.values()} == {"ok"}, without
    # Bitwise: the same seedless randn in each run (every child starts from the same state).
    assert with_huge == without
    if not kernel_can_collapse():
        pytest.skip("this kernel cannot collapse memory to huge pages (MADV_COLLAPSE: Linux 6.1+)")
    assert huge_on > 50  # MiB: the zygote's heap and arenas (~230 MiB with torch 2.13)
