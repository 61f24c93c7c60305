"""The issue's workload, written for every tool from one program text.

6 pages x 3 demos x 3 values of the bf16 region pattern: 54 compiled-against-eager checks.
Each demo's code is the same text everywhere:

- ``ours``: an ``autocast-demo`` directive per demo (the extension runs it under each value,
  compiled with the backend, ``autocast_demo_backend`` in conf.py, and eagerly, and compares);
- ``jupyter-sphinx`` / ``myst-nb``: a setup cell defining :func:`check` (what the directive
  does, in plain Python), then per demo a cell ``def demo(): <code>; return locals()`` and one
  cell per value calling ``check(demo, value, expect)``; myst-nb's pages are text notebooks;
- ``plain``: the same pages with the code in plain code blocks, for Sphinx without execution;
- ``floor``: one Python script, the anchors' cells one after another.

Every tool's workload compiles with the same backend (``--backend``, default inductor, what
``torch.compile()`` and the extension use by default), so that rows compare like with like.
Every page is MyST Markdown with the pydata theme. ``python -m benchmarks.generate OUT --tool
ours [--backend aot_eager]`` writes one tree (``--tool floor`` writes ``OUT/floor.py``).
Standard library only: the benchmark's driver runs outside the venvs it measures.
"""

from __future__ import annotations

import argparse
import re
import textwrap
from pathlib import Path

PAGES, DEMOS = 6, 3
VALUES = ("same_as_forward", "off", "autocast")
TOOLS = ("ours", "plain", "jupyter-sphinx", "myst-nb")
# The extension's default since it stopped defaulting to aot_eager, whose backward runs eagerly
# under the ambient autocast and hides what inductor, torch.compile()'s default, does.
BACKEND = "inductor"
BACKENDS = ("inductor", "aot_eager")

SETUP = """\
import torch

def region(x, w):
    # an fp32 matmul inside a bf16 region: only the backward's autocast differs
    with torch.autocast("cpu", enabled=False):
        return (x.float() @ w.float()).sum()
"""

# What the directive does for one (demo, value), in plain Python for the anchors and the floor:
# per run a fresh compiler, the value set, seed 0, torch.compile defaulting to _BACKEND
# (compiled) or the identity (eager); then every top-level tensor and leaf gradient compared,
# gradients bitwise, other tensors within 1e-3 (the extension's default tolerances). The
# extension compares everything reachable; these demos reach nothing but their top-level
# names, so the two comparisons see the same tensors. _BACKEND is set ahead of it (check_program).
CHECK = """\
import torch._dynamo
import torch._functorch.config

_compile = torch.compile
_VALUES = {"same_as_forward": "same_as_forward", "off": "off",
           "autocast": [{"device_type": "cpu", "dtype": torch.bfloat16}]}


def _run(demo, value, compiled):
    torch._dynamo.reset()
    torch._functorch.config.backward_pass_autocast = _VALUES[value]
    if compiled:
        torch.compile = lambda model=None, **kw: _compile(model, **{"backend": _BACKEND, **kw})
    else:
        torch.compile = lambda model=None, **kw: model
    torch.manual_seed(0)
    try:
        names = demo()
    finally:
        torch.compile = _compile
    found = {}
    for name, t in names.items():
        if isinstance(t, torch.Tensor):
            found[name] = t.detach()
            if t.is_leaf and t.grad is not None:
                found[name + ".grad"] = t.grad
    return found


def _same(name, c, e):
    if c.dtype != e.dtype or c.shape != e.shape:
        return False
    if name.endswith(".grad"):
        return torch.equal(c, e)
    return torch.allclose(c.double(), e.double(), rtol=1e-3, atol=1e-3)


def check(demo, value, expect):
    compiled, eager = _run(demo, value, True), _run(demo, value, False)
    differ = [n for n in eager if n not in compiled or not _same(n, compiled[n], eager[n])]
    outcome = "differs" if differ else "matches"
    print(f"{value}: compiled {outcome} eager" + (f" ({', '.join(differ)})" if differ else ""))
    assert outcome == expect, f"{value}: the page records {expect}, torch gives {outcome}"
"""


def check_program(backend: str) -> str:
    """:data:`CHECK` compiling with ``backend``."""
    return f"_BACKEND = {backend!r}\n" + CHECK


# (name, expect per value, code): the bf16 region with the backward outside / inside autocast,
# and a plain matmul. {seed} and {n} vary per demo, so that each demo is its own cache entry.
PATTERNS: list[tuple[str, tuple[str, str, str], str]] = [
    ("outside", ("differs", "matches", "differs"), """\
torch.manual_seed({seed})
x = torch.randn({n}, {n})
w = torch.randn({n}, {n}, requires_grad=True)
with torch.autocast("cpu", dtype=torch.bfloat16):
    z = torch.compile(region)(x, w)
z.backward()
"""),
    ("inside", ("matches", "differs", "matches"), """\
torch.manual_seed({seed})
x = torch.randn({n}, {n})
w = torch.randn({n}, {n}, requires_grad=True)
with torch.autocast("cpu", dtype=torch.bfloat16):
    z = torch.compile(region)(x, w)
    z.backward()
"""),
    ("plain", ("matches", "matches", "matches"), """\
torch.manual_seed({seed})
x = torch.randn({n}, {n})
w = torch.randn({n}, {n}, requires_grad=True)
with torch.autocast("cpu", dtype=torch.bfloat16):
    z = torch.compile(lambda x, w: (x @ w).sum())(x, w)
z.backward()
"""),
]


def demos(page: int) -> list[tuple[str, tuple[str, str, str], str]]:
    """The page's demos: (name, expectations, code)."""
    found = []
    for index in range(DEMOS):
        seed = 1 + page * DEMOS + index
        name, expect, code = PATTERNS[index % len(PATTERNS)]
        found.append((f"{name}-{seed}", expect, code.format(seed=seed, n=32 + 8 * (seed % 5))))
    return found


def fence(directive: str, body: str, *options: str) -> str:
    # MyST: options, then a blank line, then the content.
    head = [f"```{directive}", *options, ""] if options else [f"```{directive}"]
    return "\n".join([*head, body.rstrip("\n"), "```", ""])


def anchor_cells(expect: tuple[str, str, str], code: str) -> list[str]:
    """One cell defining the demo, then one cell per value: the anchors' and the floor's text."""
    definition = f"def demo():\n{textwrap.indent(code, '    ')}    return locals()\n"
    return [definition, *(f'check(demo, "{v}", "{e}")\n' for v, e in zip(VALUES, expect, strict=True))]


def page(tool: str, number: int, backend: str = BACKEND) -> str:
    title = f"# Page {number}\n"
    header = {"myst-nb": "---\nfile_format: mystnb\nkernelspec:\n  name: python3\n"
                         "  display_name: Python 3\n---\n"}.get(tool, "")
    cell = {"jupyter-sphinx": "{jupyter-execute}", "myst-nb": "{code-cell} ipython3"}.get(tool)
    # The setup, hidden from readers as the directive's setup is.
    hidden = {"jupyter-sphinx": ":hide-code:", "myst-nb": ":tags: [remove-input]"}.get(tool, "")
    parts = [header + title]
    if tool == "ours":
        parts.append(fence("{autocast-demo-setup}", SETUP))
    elif cell:
        parts.append(fence(cell, SETUP + "\n" + check_program(backend), hidden))
    for name, expect, code in demos(number):
        parts.append(f"## Demo {name}\n")
        if tool == "ours":
            outcomes = ", ".join(f"{v}: {e}" for v, e in zip(VALUES, expect, strict=True))
            # The plain matmul matches eager under every value, on purpose: :alike: says so,
            # as a writer would, or the build warns that it cannot tell the values apart.
            alike = (":alike:",) if set(expect) == {"matches"} else ()
            parts.append(fence("{autocast-demo}", code, f":name: {name}", f":values: {', '.join(VALUES)}",
                               f":expect: {outcomes}", *alike))
        elif cell:
            parts += [fence(cell, text) for text in anchor_cells(expect, code)]
        else:
            parts.append(fence("python", code))
    return "\n".join(parts)


CONF = {
    "ours": 'extensions = ["myst_parser", "sphinx_autocast_demo"]\n',
    "plain": 'extensions = ["myst_parser"]\n',
    "jupyter-sphinx": 'extensions = ["myst_parser", "jupyter_sphinx"]\n',
    # myst_nb brings the MyST parser itself; "cache": a notebook runs again only when its code changed.
    "myst-nb": 'extensions = ["myst_nb"]\nnb_execution_mode = "cache"\nnb_execution_timeout = 300\n',
}


def generate(out: Path, tool: str, pages: int = PAGES, backend: str = BACKEND) -> None:
    """Write the docs tree for ``tool`` (``floor``: the floor's script) into ``out``, every
    compile with ``backend``."""
    out.mkdir(parents=True, exist_ok=True)
    if tool == "floor":
        (out / "floor.py").write_text(floor_script(pages, backend))
        return
    # Ours names the backend even where it is the default: the tree says what it measures.
    backend_conf = f"autocast_demo_backend = {backend!r}\n" if tool == "ours" else ""
    (out / "conf.py").write_text(
        f'project = "bench"\n{CONF[tool]}{backend_conf}html_theme = "pydata_sphinx_theme"\n'
        'exclude_patterns = ["_build"]\n')
    (out / "index.md").write_text("# Benchmark\n\n" + fence("{toctree}", "page-*", ":glob:"))
    for number in range(pages):
        (out / f"page-{number:02d}.md").write_text(page(tool, number, backend))


def floor_script(pages: int = PAGES, backend: str = BACKEND) -> str:
    """The 54 checks in one plain Python process: the anchors' cells, one after another."""
    cells = [SETUP, check_program(backend)]
    for number in range(pages):
        for _, expect, code in demos(number):
            cells += anchor_cells(expect, code)
    return "\n".join(cells)


def edit(tree: Path, number: int) -> None:
    """The ``number``-th edit of the first demo on the first page, the same in every tree: a
    seed it never had (1, then 1001, 2001, ...), so that no cache can answer it."""
    path = tree / "page-00.md"
    text = path.read_text()
    seed = re.compile(r"torch\.manual_seed\((1|\d+001)\)\n")
    if len(seed.findall(text)) != 1:
        raise ValueError(f"{path}: expected the first demo's seed exactly once")
    path.write_text(seed.sub(f"torch.manual_seed({1000 * number + 1})\n", text))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("out", type=Path)
    parser.add_argument("--tool", choices=[*TOOLS, "floor"], default="ours")
    parser.add_argument("--pages", type=int, default=PAGES)
    parser.add_argument("--backend", choices=BACKENDS, default=BACKEND)
    args = parser.parse_args()
    generate(args.out, args.tool, args.pages, args.backend)
    print(f"{args.out}: {args.tool}, {args.pages} pages x {DEMOS} demos x {len(VALUES)} values, "
          f"{args.backend}")


if __name__ == "__main__":
    main()
