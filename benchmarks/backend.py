"""The default backend's cold build beside the old default's and jupyter-sphinx's.

``python -m benchmarks.backend [--work DIR] [--rounds 3] [--pages 6]``

The extension's default backend is inductor (what ``torch.compile()`` uses), no longer
aot_eager, whose backward runs eagerly under the ambient autocast. This times what that costs,
with :mod:`benchmarks.run`'s machinery (its venvs, trees and builds; Sphinx 9.0.4): cold ``-j 1``
builds of the workload by ours with inductor and with aot_eager and by jupyter-sphinx with
inductor, and the floor (one Python process, import included) with inductor and with aot_eager;
each ``--rounds`` times (median), the rows in alternating order. Every build is cold: a fresh
copy of its tree (no doctrees, no result cache) and an empty inductor disk cache of its own
(``TORCHINDUCTOR_CACHE_DIR``), every floor too, so that no row finds kernels another compiled.
Prints a markdown table: wall and CPU seconds, the ratios to the floor of the same backend,
ours-inductor to jupyter-sphinx-inductor and to ours-aot_eager. Not a test.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks import envs
from benchmarks.generate import BACKEND, BACKENDS, DEMOS, PAGES, VALUES
from benchmarks.run import INDUCTOR, Bench, Build, Row, _median, _s, describe, warm_up, write_trees

ROWS = (
    Row("ours-inductor", "sphinx-autocast-demo, Sphinx 9.0.4", "ours", "sphinx9", backend="inductor"),
    Row("ours-aot_eager", "sphinx-autocast-demo, Sphinx 9.0.4 (the old default)", "ours", "sphinx9",
        backend="aot_eager"),
    Row("jupyter-sphinx-inductor", "jupyter-sphinx 0.5.3, Sphinx 9.0.4", "jupyter-sphinx", "sphinx9",
        backend="inductor"),
)
# (a / b, what it says): rows of the second table, by key; "floor-<backend>" is a floor.
PAIRS = (
    ("ours-inductor", "jupyter-sphinx-inductor", "ours / jupyter-sphinx, both inductor"),
    ("ours-inductor", "ours-aot_eager", "ours: inductor (the default) / aot_eager (the old default)"),
    ("floor-inductor", "floor-aot_eager", "floor: inductor / aot_eager (what the backend costs by itself)"),
)


def warm_compiler(venv: Path) -> None:
    """One tiny inductor compile, untimed, in a cache that is thrown away: the C++ compiler and
    torch's headers come from the disk once here, not in whichever row happens to go first."""
    with tempfile.TemporaryDirectory() as cache:
        subprocess.run([str(envs.python(venv)), "-c",
                        "import torch; torch.compile(lambda x: x.sin() + 1)(torch.ones(8))"],
                       env={**envs.activated(venv), INDUCTOR: cache}, check=True)


def measure(bench: Bench, rounds: int) -> dict[str, Build]:
    """The median cold build of every row and floor, by key (a floor's: ``floor-<backend>``).
    Within a round each in turn, the order reversed every other round, so that a drift of the
    machine's load spreads over all of them."""
    turns: list[Row | str] = [*ROWS, *BACKENDS]  # a str: the floor with that backend
    builds: dict[str, list[Build]] = {}
    for index in range(rounds):
        print(f"round {index + 1} of {rounds}", flush=True)
        for turn in turns if index % 2 == 0 else turns[::-1]:
            if isinstance(turn, Row):
                builds.setdefault(turn.key, []).append(bench.cold(turn, 1, "cold")[1])
            else:
                builds.setdefault(f"floor-{turn}", []).append(bench.floor(backend=turn))
    for key, tries in builds.items():
        print(f"  {key}: {', '.join(f'{b.seconds:.1f}' for b in tries)} s", flush=True)
    return {key: _median(tries) for key, tries in builds.items()}


def _ratios(a: Build, b: Build) -> str:
    """Wall and CPU time of ``a`` over ``b``; none where either failed."""
    if a.returncode or b.returncode or not (b.seconds > 0 and b.cpu > 0):
        return "- | -"
    return f"{a.seconds / b.seconds:.2f}x | {a.cpu / b.cpu:.2f}x"


def report(results: dict[str, Build], rounds: int, checks: int) -> None:
    print()
    print(f"Cold `-j 1` builds, median of {rounds}, in alternating order; each on a fresh tree (fresh "
          f"doctrees) with a new empty inductor disk cache ({INDUCTOR}), the floors too:")
    print()
    print("| row | backend | cold `-j 1` | / floor, same backend: wall | CPU | executed |")
    print("| --- | --- | --- | --- | --- | --- |")
    for backend in BACKENDS:
        floor = results[f"floor-{backend}"]
        print(f"| floor: one Python process, {checks} checks | {backend} | {_s(floor)} "
              f"| {_ratios(floor, floor)} | {checks} checks |")
    for row in ROWS:
        build = results[row.key]
        executed = f"{build.runs} runs" if row.tool == "ours" else f"{build.pages} pages"
        default = " (default)" if row.tool == "ours" and row.backend == BACKEND else ""
        print(f"| {row.label} | {row.backend}{default} | {_s(build)} "
              f"| {_ratios(build, results[f'floor-{row.backend}'])} | {executed} |")
    print()
    print("| comparison | wall | CPU |")
    print("| --- | --- | --- |")
    for a, b, what in PAIRS:
        print(f"| {what} | {_ratios(results[a], results[b])} |")
    broken = [key for key, build in results.items() if not build.clean or build.failed_tries]
    if broken:
        print("\nwarning: not clean (a failed try, an exit status or warnings; see the logs): "
              + ", ".join(broken))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--work", type=Path, default=None,
                        help="venvs, trees and logs (reused: the venvs are made once); default: a temp dir")
    parser.add_argument("--rounds", type=int, default=3, help="cold builds per row and floor (median)")
    parser.add_argument("--pages", type=int, default=PAGES, help="the issue's 6; fewer for a quick try")
    args = parser.parse_args()
    work = (args.work or Path(tempfile.mkdtemp(prefix="autocast-bench-"))).resolve()
    work.mkdir(parents=True, exist_ok=True)
    print(f"$ {' '.join([Path(sys.executable).name, '-m', 'benchmarks.backend', *sys.argv[1:]])}", flush=True)
    # Only Sphinx 9's venv: it has jupyter-sphinx, and every row here runs on it.
    venvs = {"sphinx9": envs.ensure(work, "sphinx9")}
    write_trees(work, args.pages, BACKENDS)
    describe(venvs, args.pages, BACKENDS)
    warm_up(venvs)
    warm_compiler(venvs["sphinx9"])
    results = measure(Bench(work, venvs), args.rounds)
    report(results, args.rounds, args.pages * DEMOS * len(VALUES))
    print(f"\nlogs of every build: {work / 'logs'}; load at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
