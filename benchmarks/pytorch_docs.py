"""What the extension adds to a build of examples/pytorch-docs in PyTorch's docs stack.

Cold builds (fresh output and doctree folders) of the example as it is, and of the same pages
with every demo turned into a plain code block and the extension left out of conf.py, in
alternating pairs so that a drift of the machine's load hits both rows alike. Prints each
build's wall time, the medians and their ratio. Run it in the environment of
``tox -e pytorch-docs`` (Sphinx 7.2.6, pytorch_sphinx_theme2, myst-nb)::

    .tox/pytorch-docs/bin/python -m benchmarks.pytorch_docs --pairs 3

torch's own inductor cache (in the temp folder) is kept between builds, as on a developer's
machine; the extension's result cache is not (each build is cold).
"""

from __future__ import annotations

import argparse
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "pytorch-docs"
# A demo's options (":name: x", ":expect: ..." and their continuation lines) in either syntax.
OPTION = re.compile(r"^(\s*):[\w-]+:.*\n(?:\1   .*\n)*", re.M)


def without_extension(root: Path) -> None:
    """The example's pages with each demo as a plain code block, and no extension."""
    conf = root / "docs" / "source" / "conf.py"
    conf.write_text(conf.read_text(encoding="utf-8").replace('    "sphinx_autocast_demo",\n', ""),
                    encoding="utf-8")
    for path in [*root.rglob("*.md"), *root.rglob("*.py")]:
        text = path.read_text(encoding="utf-8")
        text = re.sub(r"(```)\{autocast-demo(?:-setup)?\}", r"\1{code-block} python", text)
        text = text.replace(".. autocast-demo::", ".. code-block:: python")
        opening = r"(\{code-block\} python\n|\.\. code-block:: python\n)"
        options = r"((?:\s*:[\w-]+:.*\n(?:\s{3,}\S.*\n)*)*)"
        text = re.sub(opening + options, lambda m: m.group(1) + OPTION.sub("", m.group(2)), text)
        path.write_text(text, encoding="utf-8")


def build(root: Path, out: Path) -> float:
    # Cold: the result cache lives beside conf.py, shared by every output directory.
    shutil.rmtree(root / "docs" / "source" / ".autocast_demo_cache", ignore_errors=True)
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "sphinx", "-q", "-j", "auto", "-W", "--keep-going",
                           "-b", "html", str(root / "docs" / "source"), str(out)],
                          capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"build of {root.name} failed:\n{proc.stderr[-3000:]}")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        ours, plain = work / "with-extension", work / "without"
        shutil.copytree(EXAMPLE, ours)
        shutil.copytree(EXAMPLE, plain)
        without_extension(plain)
        times: dict[str, list[float]] = {"with the extension": [], "without": []}
        for pair in range(args.pairs):
            order = [(ours, "with the extension"), (plain, "without")]
            for root, name in order if pair % 2 == 0 else order[::-1]:
                out = work / f"out-{name.replace(' ', '-')}-{pair}"
                times[name].append(build(root, out))
                print(f"pair {pair + 1}: {name}: {times[name][-1]:.1f} s", flush=True)
        medians = {name: statistics.median(found) for name, found in times.items()}
        for name, median in medians.items():
            print(f"{name}: median {median:.1f} s of {len(times[name])}")
        added = medians["with the extension"] - medians["without"]
        print(f"added by the extension: {added:.1f} s "
              f"(ratio {medians['with the extension'] / medians['without']:.2f})")


if __name__ == "__main__":
    main()
