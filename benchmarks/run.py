"""Measure the build against its floor, in one run, and print the five figures of issue 4.

``python -m benchmarks.run [--pages 20] [--demos 4] [--work DIR]``

1. cold ``-j 1`` build time / floor (the same snippets in one warm process, no Sphinx, no
   isolation: :mod:`benchmarks.floor`). Target <= 1.3. Beside it, the same build with a fresh
   process per run (``autocast_demo_isolation = "run"``) instead of one per demo.
2. no-change rebuild / the same rebuild with execution off (``AUTOCAST_DEMO_EXECUTE=never``).
   Target <= 1.1, with zero executions.
3. one edited demo: executions (target: that demo's values x 2).
4. cold ``-j 2`` speedup over cold ``-j 1``. Target >= 1.6 on 2 cores.
5. peak memory of the build: the sphinx process and every descendant (worker, children),
   sampled every 50 ms; RSS summed (counts shared pages once per process) and PSS summed
   (shares them out: the real footprint).

Timings on a shared machine are noisy: run it twice and read both. Not a test.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from benchmarks.generate import generate
from sphinx_autocast_demo.syntax import parse_values

SUMMARY = re.compile(r"\((\d+) runs, (\d+) from the cache\) in (\d+\.\d) s")


@dataclass
class Build:
    seconds: float
    runs: int
    cached: int
    exec_seconds: float
    peak_rss: int
    peak_pss: int
    returncode: int
    warnings: int
    cpu: float = 0.0  # user + system seconds of sphinx and every process it waited for


def _tree(pid: int) -> list[int]:
    """``pid`` and all its live descendants."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        todo.extend(children.get(current, []))
    return found


def _memory(pid: int) -> tuple[int, int]:
    rss = pss = 0
    for p in _tree(pid):
        try:
            with open(f"/proc/{p}/smaps_rollup") as f:
                for line in f:
                    if line.startswith("Rss:"):
                        rss += int(line.split()[1]) * 1024
                    elif line.startswith("Pss:"):
                        pss += int(line.split()[1]) * 1024
        except OSError:
            continue
    return rss, pss


def sphinx(src: Path, *args: str, env: dict[str, str] | None = None) -> Build:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    cmd = [sys.executable, "-m", "sphinx", "-b", "html", str(src), str(src / "_build" / "html"), *args]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, **(env or {})})
    peak = [0, 0]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.05):
            rss, pss = _memory(proc.pid)
            peak[0], peak[1] = max(peak[0], rss), max(peak[1], pss)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out, err = proc.communicate()
    seconds = time.perf_counter() - start
    done.set()
    sampler.join()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    found = SUMMARY.search(out + err)
    return Build(seconds, int(found[1]) if found else 0, int(found[2]) if found else 0,
                 float(found[3]) if found else 0.0, peak[0], peak[1], proc.returncode,
                 err.count("WARNING"), cpu)


def _median(builds: list[Build]) -> Build:
    """The build of median time (of an odd number); its CPU time is the median's too."""
    ordered = sorted(builds, key=lambda b: b.seconds)
    middle = ordered[len(ordered) // 2]
    cpu = sorted(b.cpu for b in builds)[len(builds) // 2]
    return dataclasses.replace(middle, cpu=cpu)


def _floor(manifest: Path) -> dict[str, float]:
    out = subprocess.run([sys.executable, "-m", "benchmarks.floor", str(manifest)],
                         capture_output=True, text=True, check=True).stdout
    result: dict[str, float] = json.loads(out.strip().splitlines()[-1])
    return result


def fresh(tree: Path, work: Path, name: str) -> Path:
    dest = work / name
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(tree, dest, ignore=shutil.ignore_patterns("_build"))
    return dest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--pages", type=int, default=20)
    parser.add_argument("--demos", type=int, default=4)
    parser.add_argument("--work", type=Path, default=None)
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="autocast-bench-"))
    tree = work / "tree"
    shutil.rmtree(tree, ignore_errors=True)
    manifest = generate(tree, args.pages, args.demos)
    values = sum(len(parse_values(m["values"], "cpu", "bfloat16")) for m in manifest)
    print(f"workload: {args.pages} pages x {args.demos} demos = {len(manifest)} demos, {values} values,"
          f" {2 * values} runs; {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}", flush=True)

    floor = _floor(tree / "manifest.json")
    print(f"floor (load {os.getloadavg()[0]:.1f} after): {floor['seconds']:.1f} s for {floor['runs']} runs "
          f"(+ {floor['startup']:.1f} s importing torch and warming up, not counted)", flush=True)
    # The same runs split in two halves, one process each: one after the other, then both at
    # once. Their ratio is what two cores give these runs on this machine at best, with no
    # Sphinx, no isolation and no serial part. (Not the floor against the halves at once: a
    # process's compiles get slower as it runs more of them, so the floor's one long process
    # is slower than two short ones even on one core.)
    def halves(together: bool) -> list[float]:
        cmd = [sys.executable, "-m", "benchmarks.floor", str(tree / "manifest.json")]
        procs, seconds = [], []
        for part in ("0", "1"):
            procs.append(subprocess.Popen([*cmd, part, "2"], stdout=subprocess.PIPE,
                                          stderr=subprocess.DEVNULL, text=True))
            if not together:
                seconds.append(json.loads(procs[-1].communicate()[0].strip().splitlines()[-1])["seconds"])
        if together:
            seconds = [json.loads(p.communicate()[0].strip().splitlines()[-1])["seconds"] for p in procs]
        return seconds

    one_core, two_cores = sum(halves(together=False)), max(halves(together=True))
    print(f"floor in two halves: {one_core:.1f} s one after the other, {two_cores:.1f} s at once",
          flush=True)

    serial_src = fresh(tree, work, "serial")
    cold = sphinx(serial_src, "-j", "1")
    print(f"cold -j 1 (load {os.getloadavg()[0]:.1f} after): {cold.seconds:.1f} s ({cold.runs} runs, "
          f"execution {cold.exec_seconds:.1f} s, "
          f"exit {cold.returncode}, {cold.warnings} warnings)", flush=True)
    # Under a second each, and this machine's noise is ~0.1 s: seven pairs, the order
    # alternating within a pair, and the median of each side.
    nochanges, offs = [], []
    for index in range(7):
        for off_mode in (True, False) if index % 2 else (False, True):
            if off_mode:
                offs.append(sphinx(serial_src, "-j", "1", env={"AUTOCAST_DEMO_EXECUTE": "never"}))
            else:
                nochanges.append(sphinx(serial_src, "-j", "1"))
    nochange = _median(nochanges)
    off = _median(offs)
    assert all(b.runs == 0 for b in nochanges + offs)
    page = serial_src / "page-00.rst"
    page.write_text(page.read_text().replace("torch.manual_seed(0)", "torch.manual_seed(100)", 1))
    edited = sphinx(serial_src, "-j", "1")

    # The same cold build with a fresh process per run instead of per demo: what batching buys.
    strict = sphinx(fresh(tree, work, "strict"), "-j", "1", "-D", "autocast_demo_isolation=run")
    print(f"cold -j 1, isolation=run (load {os.getloadavg()[0]:.1f} after): {strict.seconds:.1f} s "
          f"({strict.runs} runs, execution {strict.exec_seconds:.1f} s, CPU {strict.cpu:.1f} s against "
          f"{cold.cpu:.1f} s per demo)", flush=True)

    parallel = sphinx(fresh(tree, work, "parallel"), "-j", "2")
    print(f"cold -j 2 (load {os.getloadavg()[0]:.1f} after): {parallel.seconds:.1f} s "
          f"({parallel.runs} runs, execution {parallel.exec_seconds:.1f} s, exit {parallel.returncode})",
          flush=True)

    mib = 1024 * 1024
    print()
    print(f"1. cold build / floor:            {cold.seconds:6.1f} s / {floor['seconds']:.1f} s = "
          f"{cold.seconds / floor['seconds']:.2f}  (target <= 1.3); a process per run instead: "
          f"{strict.seconds / floor['seconds']:.2f}")
    print(f"2. no-change rebuild / exec off:  {nochange.seconds:6.2f} s / {off.seconds:.2f} s = "
          f"{nochange.seconds / off.seconds:.2f}  (target <= 1.1), {nochange.runs} executions; "
          f"CPU {nochange.cpu:.2f} s / {off.cpu:.2f} s = {nochange.cpu / off.cpu:.2f} (less noisy)")
    print(f"3. one edited demo:               {edited.runs} executions, {edited.cached} values from "
          f"the cache (target: 6 = 3 values x compiled + eager)")
    print(f"4. -j 2 speedup, cold:            {cold.seconds:.1f} s / {parallel.seconds:.1f} s = "
          f"{cold.seconds / parallel.seconds:.2f}x  (target >= 1.6x)")
    print("   what this machine allows: the floor's startup alone is "
          f"{floor['startup'] / floor['seconds']:.2f} of the floor (a build pays it, the floor does not), "
          f"and two cores run the floor's runs {one_core / two_cores:.2f}x as fast as one")
    print(f"5. peak memory (sphinx + worker tree): -j 1 RSS {cold.peak_rss / mib:.0f} MiB, "
          f"PSS {cold.peak_pss / mib:.0f} MiB; -j 2 RSS {parallel.peak_rss / mib:.0f} MiB, "
          f"PSS {parallel.peak_pss / mib:.0f} MiB")
    if cold.warnings or cold.returncode or parallel.returncode or strict.returncode:
        print("warning: the builds were not clean; the figures may mean little")
    if args.work is None:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
