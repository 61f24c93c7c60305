"""What watching every backward costs a run (engine/child/steps.py): a training step's median
time with and without the watch, side by side in one process, and the bytes it stores.

``python -m benchmarks.steps_cost`` (no build: the run's side alone, on one thread).
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time

import torch

from sphinx_autocast_demo.engine.child.copies import Copies
from sphinx_autocast_demo.engine.child.steps import Steps


def small() -> torch.nn.Module:
    return torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 1))


def encoder() -> torch.nn.Module:
    layer = torch.nn.TransformerEncoderLayer(256, 4, 1024, batch_first=True)
    return torch.nn.TransformerEncoder(layer, 6)


def step_time(make, shape, watched: bool, steps: int = 5) -> tuple[float, int]:
    """Median seconds of a step (forward, backward, Adam, zero_grad), and bytes stored."""
    model = make()
    opt = torch.optim.Adam(model.parameters())
    original = torch.autograd.backward
    data = os.path.join(tempfile.mkdtemp(), "data.bin")
    if watched:
        Steps(Copies(data)).install()
    try:
        x = torch.randn(*shape)
        times = []
        for _ in range(steps):
            start = time.perf_counter()
            model(x).sum().backward()
            opt.step()
            opt.zero_grad()
            times.append(time.perf_counter() - start)
    finally:
        torch.autograd.backward = original
    return statistics.median(times), os.path.getsize(data) if os.path.exists(data) else 0


def main() -> None:
    torch.manual_seed(0)
    torch.set_num_threads(1)
    for name, make, shape in (("small MLP (4k parameters)", small, (32, 64)),
                              ("6-layer encoder, d=256 (4.7M parameters)", encoder, (8, 32, 256))):
        for _ in range(2):
            plain, _ = step_time(make, shape, watched=False)
            watched, size = step_time(make, shape, watched=True)
            print(f"{name}: step {plain * 1e3:.1f} ms plain, {watched * 1e3:.1f} ms watched "
                  f"({watched / plain:.2f}x); {size / 2**20:.1f} MiB stored for 5 steps")


if __name__ == "__main__":
    main()
