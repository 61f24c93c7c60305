"""A synthetic docs tree: N pages x M demos built from the patterns real pages use.

``python -m benchmarks.generate OUT --pages 20 --demos 4`` writes ``OUT/conf.py``, an index,
``page-NN.rst`` files and ``manifest.json`` (every demo's setup, code and values, for the floor
measurement in :mod:`benchmarks.floor`). Every demo records the right expectation, so a build
of the tree passes with no warning and a no-change rebuild has nothing to re-read.
"""

from __future__ import annotations

import argparse
import json
import textwrap
from pathlib import Path
from typing import Any

SETUP = """\
import torch

def region(x, w):
    # an fp32 matmul inside a bf16 region: only the backward's autocast differs
    with torch.autocast("cpu", enabled=False):
        return (x.float() @ w.float()).sum()
"""

FP16 = '[{"device_type": "cpu", "dtype": torch.float16}]'

# (name, values, expect, expect-output, code); {n} and {seed} vary per demo so that every demo
# is its own cache entry, as on a real site.
PATTERNS: list[tuple[str, str, str, str, str]] = [
    ("outside", "same_as_forward, off, autocast",
     "same_as_forward: differs, off: matches, autocast: differs", "", """\
torch.manual_seed({seed})
x = torch.randn({n}, {n})
w = torch.randn({n}, {n}, requires_grad=True)
with torch.autocast("cpu", dtype=torch.bfloat16):
    z = torch.compile(region)(x, w)
z.backward()
"""),
    ("inside", "same_as_forward, off, autocast",
     "same_as_forward: matches, off: differs, autocast: matches", "", """\
torch.manual_seed({seed})
x = torch.randn({n}, {n})
w = torch.randn({n}, {n}, requires_grad=True)
with torch.autocast("cpu", dtype=torch.bfloat16):
    z = torch.compile(region)(x, w)
    z.backward()
"""),
    ("overflow", f"same_as_forward, off, fp16={FP16}",
     "same_as_forward: differs, off: matches, fp16: differs",
     "[same_as_forward]\ninf\n[off]\n65536.0\n[fp16]\ninf", """\
def scaled_loss(x, w):
    with torch.autocast("cpu", enabled=False):
        return (x @ w).sum() * 16384

w = torch.ones(4, 4, requires_grad=True)
with torch.autocast("cpu", dtype=torch.float16):
    loss = torch.compile(scaled_loss)(torch.ones(4, 4), w)
loss.backward()
# demo {seed}, size {n}
print(w.grad[0, 0].item())
"""),
    ("plain", "same_as_forward, off, autocast", "*: matches", "", """\
torch.manual_seed({seed})
x = torch.randn({n}, {n})
w = torch.randn({n}, {n}, requires_grad=True)
with torch.autocast("cpu", dtype=torch.bfloat16):
    z = torch.compile(lambda x, w: (x @ w).sum())(x, w)
z.backward()
"""),
]


def demo_text(pattern: int, seed: int, n: int) -> tuple[str, dict[str, Any]]:
    name, values, expect, output, code = PATTERNS[pattern % len(PATTERNS)]
    body = code.format(seed=seed, n=n)
    lines = [".. autocast-demo::", f"   :name: {name}-{seed}", f"   :values: {values}",
             f"   :expect: {expect}"]
    if output:
        lines.append("   :expect-output:")
        lines += [f"      {line}" for line in output.splitlines()]
    lines.append("")
    lines += [textwrap.indent(line, "   ") if line else "" for line in body.splitlines()]
    return "\n".join(lines) + "\n", {"name": f"{name}-{seed}", "values": values, "code": body}


def generate(out: Path, pages: int, demos: int) -> list[dict[str, Any]]:
    out.mkdir(parents=True, exist_ok=True)
    (out / "conf.py").write_text('extensions = ["sphinx_autocast_demo"]\nexclude_patterns = ["_build"]\n')
    (out / "index.rst").write_text("Benchmark\n=========\n\n.. toctree::\n   :glob:\n\n   page-*\n")
    manifest = []
    for page in range(pages):
        parts = [f"Page {page}\n{'=' * (5 + len(str(page)))}\n",
                 ".. autocast-demo-setup::\n\n" + textwrap.indent(SETUP, "   ")]
        for index in range(demos):
            seed = page * demos + index
            text, spec = demo_text(seed, seed, 32 + 8 * (seed % 5))
            parts.append(f"Demo {index}\n{'-' * 20}\n\n{text}")
            manifest.append({**spec, "page": f"page-{page:02d}", "setup": SETUP})
        (out / f"page-{page:02d}.rst").write_text("\n".join(parts))
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1))
    return manifest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("out", type=Path)
    parser.add_argument("--pages", type=int, default=20)
    parser.add_argument("--demos", type=int, default=4)
    args = parser.parse_args()
    manifest = generate(args.out, args.pages, args.demos)
    print(f"{args.out}: {args.pages} pages, {len(manifest)} demos")


if __name__ == "__main__":
    main()
