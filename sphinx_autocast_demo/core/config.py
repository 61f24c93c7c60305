"""Every ``conf.py`` value of the extension, typed and documented in one place.

The reference page of the docs is generated from :data:`OPTIONS` and a test keeps it in sync.
Kept apart from Sphinx's side of them (:mod:`.sphinxconf`: registration, ``config-inited``
checks) so that every stage can read the table and the values without that machinery.
"""

from __future__ import annotations

import functools
import math
import os
from dataclasses import dataclass, field, fields, replace
from typing import TYPE_CHECKING, Any, Literal

from .i18n import msg

if TYPE_CHECKING:
    from sphinx.config import Config

#: The default compile-time config that a demo's variants set. Declared here, not in the model,
#: which imports this module: every build reads the table below, and most need no model type.
DEFAULT_CONFIG = "torch._functorch.config.backward_pass_autocast"

PREFIX = "autocast_demo_"
EXECUTE_MODES = ("auto", "force", "never")
DEVICES = ("cpu", "cuda")
BACKENDS = ("aot_eager", "inductor", "eager")
#: What a demo shows of its results (``:show:``).
Show = Literal["table", "record", "outputs"]
SHOWS: tuple[Show, ...] = ("table", "record", "outputs")
#: What a demo's compiled run is compared with: the eager run, or nothing (its records of what
#: compiling did and printed are then its only checks).
Compare = Literal["eager", "none"]
COMPARES: tuple[Compare, ...] = ("eager", "none")
#: Who chose the dtype of a demo's ``autocast`` value: the demo's ``:dtype:``, conf.py's
#: ``autocast_demo_dtype`` (for demos on ``autocast_demo_device``), or torch's usual autocast
#: dtype of the demo's device (``torch.get_autocast_dtype``).
DtypeFrom = Literal["demo", "conf", "device"]
DTYPES = ("bfloat16", "float16", "float32")

#: The longest timeout a run may have: far above any demo, and far below what the engine's
#: clocks accept (a deadline past ~24.8 days overflows them and used to end the build).
MAX_TIMEOUT = 24 * 60 * 60.0
_MAX_SECONDS = format(MAX_TIMEOUT, "g")
#: What a number setting (and the directive option that mirrors it) must be: words kept to be
#: said (English as text; a directive's error message says them in the console's language).
TIMEOUT_RULE = msg("a number of seconds > 0 and at most {seconds} (24 h)", seconds=_MAX_SECONDS)
TOLERANCE_RULE = msg("a finite number >= 0 (0: bitwise equal)")
BUDGET_RULE = msg("a finite number of seconds >= 0 (0: no budget)")
KEEP_RULE = msg("-1 (a terminal's builds keep it 10 min, others none) or a number of seconds "
                 ">= 0 and at most {seconds} (24 h; 0: none is kept)", seconds=_MAX_SECONDS)
#: ``autocast_demo_keep_worker``'s default: keep the worker AUTO_IDLE seconds after a writer's
#: build (in a terminal, or under sphinx-autobuild), none after CI's or a script's.
KEEP_AUTO = -1
AUTO_IDLE = 600.0


@dataclass(frozen=True)
class Execution:
    """``autocast_demo_execute`` (or ``AUTOCAST_DEMO_EXECUTE``), resolved once into what a
    build may do: the build asks these, never the mode's name."""

    mode: str  # one of EXECUTE_MODES
    #: Whether demos run at all: not in "never" mode, which renders from the cache only
    #: (whatever torch made it) and the result sets.
    runs: bool
    #: Whether what an earlier build made may answer this one: its cached results, a kept
    #: worker's warm memory. Not in "force" mode, which runs everything from a fresh import.
    reuses: bool

    @classmethod
    def of(cls, mode: str) -> Execution:
        return cls(mode, runs=mode != "never", reuses=mode != "force")


@dataclass(frozen=True)
class Option:
    """One conf.py value: everything registration, validation and the reference page need."""

    name: str  # without the prefix
    default: Any
    types: tuple[type, ...]
    rebuild: Literal["env", ""]  # "env": changing it re-reads (and so re-checks) every page
    description: str
    choices: tuple[str, ...] = ()
    rule: str = ""  # for numbers: TIMEOUT_RULE or TOLERANCE_RULE


def _option(default: Any, types: tuple[type, ...], rebuild: Literal["env", ""], description: str,
            choices: tuple[str, ...] = (), rule: str = "") -> Any:
    # A field without a dataclass default: the Settings of a build always come from conf.py.
    return field(metadata={"option": Option("", default, types, rebuild, description, choices,
                                            rule)})


@dataclass(frozen=True)
class Settings:
    """Every conf.py value of the extension, declared once: the field is the setting (without
    :data:`PREFIX`), its metadata the :class:`Option`; a build reads them once (:func:`settings`)."""

    device: str = _option("cpu", (str,), "env", "Device the demos run on.", DEVICES)
    dtype: str = _option(
        "", (str,), "env",
        "Autocast dtype of the ``autocast`` value of the demos on ``autocast_demo_device``; "
        "empty: the device's usual autocast dtype, as ``torch.autocast`` takes it when none is "
        "given (bfloat16 on cpu, float16 on cuda). A demo on another device (``:device:``) gets "
        "that device's usual one unless it says ``:dtype:``.",
        ("", *DTYPES))
    backend: str = _option(
        "inductor", (str,), "env",
        "Backend for ``torch.compile`` calls that do not name one: by default the one "
        "``torch.compile()`` itself uses, so that a page shows what its readers' code does.",
        BACKENDS)
    values: tuple[str, ...] = _option(
        ["same_as_forward", "off", "autocast"], (list, tuple), "env",
        "Values every demo runs under, in ``:values:`` syntax, one per item.")
    config: str = _option(DEFAULT_CONFIG, (str,), "env",
                          "Dotted path of the compile-time config that the values set.")
    timeout: float = _option(
        120.0, (int, float), "env",
        "Seconds one run (one value, compiled or eager) may take before it is stopped: "
        f"more than 0, at most {MAX_TIMEOUT:g} (24 h).", rule=TIMEOUT_RULE)
    grad_tolerance: float = _option(
        0.0, (int, float), "env",
        "Gradients match when |compiled - eager| <= tol * (1 + |eager|); finite, >= 0; 0 "
        "means bitwise.", rule=TOLERANCE_RULE)
    output_tolerance: float = _option(
        1e-3, (int, float), "env",
        "The same for every other tensor (inductor's forward differs from eager by ~1e-4); "
        "finite, >= 0; 0 means bitwise.", rule=TOLERANCE_RULE)
    cache_torch: str = _option(
        "exact", (str,), "env",
        "Which torch a cached result counts for: ``exact`` (the exact version, e.g. "
        "2.13.0+cpu), ``release`` (any build of the same release, e.g. torch built from "
        "source at every commit: 2.16.0a0+gitabc and +gitdef share results), or any other "
        "string, a label that you change when the results must be made again.")
    environment: str = _option(
        "", (str,), "",
        "What pages and result sets call this build's environment; empty: ``torch <version>`` "
        "(e.g. ``torch 2.13.0+cpu``). Name it when one torch runs on several kinds of machine, "
        "e.g. ``torch 2.15.0 on H100``.")
    results: tuple[str, ...] = _option(
        [], (list, tuple), "env",
        "Directories of result sets (written by ``-b autocast-check`` into ``<outdir>/results``, "
        "merged or not), relative to conf.py's directory: each demo is also shown as the "
        "environments there checked it, and is checked against the page in each.")
    environments: tuple[str, ...] = _option(
        [], (list, tuple), "env",
        "Labels of the environments every demo must have results from (this build's own "
        "counts when it runs); a missing one is one warning. Empty: those the result sets hold.")
    shard: str = _option(
        "", (str,), "",
        "``i/n``: run only the i-th of n shares of the demos (for a CI job matrix; the "
        "``AUTOCAST_DEMO_SHARD`` environment variable overrides it). Shares are balanced by the "
        "run times in the result sets, so every shard must read the same ones.")
    execute: str = _option(
        "auto", (str,), "",
        "auto: run what is not cached; force: run everything; never: render from the cache "
        "only (for hosts without torch).", EXECUTE_MODES)
    jobs: int = _option(0, (int,), "",
                        "Runs in flight at once; 0: every CPU the build may use (its affinity and "
                        "cgroup CPU quota), whatever ``sphinx-build -j`` says.")
    keep_worker: float = _option(
        KEEP_AUTO, (int, float), "",
        "Seconds the worker stays after a build for the next build of the same Python, torch, "
        "extension and environment, which then starts its runs at once (no import, no warm-up): "
        "a writer's edit loop. Every run is still forked from the same untouched warm memory. "
        "-1: 600 after a build in a terminal or under ``sphinx-autobuild`` where no CI variable "
        "is set (the build says so once), else 0. 0: every build starts its own worker, and none "
        "outlives it.", rule=KEEP_RULE)
    cache_dir: str = _option(
        "", (str,), "",
        "Result cache directory, relative to conf.py's directory; empty: "
        "``.autocast_demo_cache`` beside conf.py, which every build of the project shares (made "
        "with a ``.gitignore``: it is never committed), or, where that cannot be written, "
        "``autocast_demo_cache`` in the doctree directory.")
    fail_on_mismatch: bool = _option(
        True, (bool,), "",
        "Make sphinx-build exit non-zero when a page's record is not what torch does.")
    cuda_unavailable: str = _option(
        "error", (str,), "env",
        "When device is cuda on a machine without CUDA: error (fail) or skip (render unchecked).",
        ("error", "skip"))
    budget: float = _option(
        0.0, (int, float), "",
        "Seconds of run time one demo may take in a build (every value, compiled and eager); "
        "over it, a warning at the demo naming its slowest runs. 0: no budget.", rule=BUDGET_RULE)
    build_budget: float = _option(
        0.0, (int, float), "",
        "Seconds a build may spend running demos; over it, one warning naming the slowest "
        "demos. 0: no budget.", rule=BUDGET_RULE)
    global_setup: str = _option(
        "", (str,), "env",
        "Python code run before every demo (before the page's setup blocks), like doctest's "
        "``doctest_global_setup``: the imports every docstring demo needs, say. Part of every "
        "result's key; an error in it is reported at this conf.py line.")
    timing_report: bool = _option(
        False, (bool,), "",
        "Write the run times of the build to the outdir: ``autocast_demo_timings.json`` and a "
        "text table, ``autocast_demo_timings.txt``.")

    @functools.cached_property
    def execution(self) -> Execution:
        """:attr:`execute`, resolved (once: a frozen dataclass may cache in its ``__dict__``)."""
        return Execution.of(self.execute)


#: The table of :class:`Settings`, in order: registration, validation and the docs' reference.
OPTIONS: tuple[Option, ...] = tuple(replace(f.metadata["option"], name=f.name)
                                    for f in fields(Settings))


def number_problem(rule: str, value: object) -> bool:
    """Is ``value`` outside ``rule`` (:data:`TIMEOUT_RULE` or :data:`TOLERANCE_RULE`)?"""
    if not isinstance(value, (int, float)):
        return True
    try:
        number = float(value)
    except OverflowError:  # 10**400
        return True
    if rule == KEEP_RULE and number == KEEP_AUTO:
        return False
    if not math.isfinite(number) or number < 0:
        return True
    if rule == KEEP_RULE:
        return number > MAX_TIMEOUT
    return rule == TIMEOUT_RULE and not 0 < number <= MAX_TIMEOUT


#: torch's usual autocast dtype of each device, what ``torch.autocast(device)`` casts to when
#: given none (``torch.get_autocast_dtype``). Kept here, not asked of torch: a page is read
#: without importing it; tests/build/test_writer_hints.py checks it against torch.
DEVICE_DTYPES: dict[str, str] = {"cpu": "bfloat16", "cuda": "float16"}


def autocast_dtype(conf: Settings, device: str, named: str = "") -> tuple[str, DtypeFrom]:
    """The dtype of the ``autocast`` value of a demo on ``device`` that names ``named`` (its
    ``:dtype:``; empty: none), and who chose it. conf.py's dtype is for the demos on its own
    device: one chosen for a CPU's autocast (bfloat16) is no choice for a CUDA demo, whose
    readers' ``torch.autocast("cuda")`` casts to float16."""
    if named:
        return named, "demo"
    if conf.dtype and device == conf.device:
        return conf.dtype, "conf"
    return DEVICE_DTYPES[device], "device"


def settings(config: Config) -> Settings:
    """The validated values as the build uses them: numbers as floats, lists as tuples, and
    ``AUTOCAST_DEMO_EXECUTE`` and ``AUTOCAST_DEMO_SHARD`` over conf.py (so CI can switch modes
    and shards without editing it). The dtype stays as conf.py gives it, empty where it names
    none (:func:`autocast_dtype` fills it in per demo, and says who chose it)."""
    values = {o.name: _normal(o, config[PREFIX + o.name]) for o in OPTIONS}
    values["execute"] = os.environ.get("AUTOCAST_DEMO_EXECUTE") or values["execute"]
    values["shard"] = os.environ.get("AUTOCAST_DEMO_SHARD") or values["shard"]
    return Settings(**values)


def _normal(option: Option, value: Any) -> Any:
    if float in option.types:
        return float(value)
    if list in option.types:
        return tuple(value)
    return bool(value) if bool in option.types else value


#: The most shards a split may have: far more than any CI matrix runs, and few enough that
#: what is computed per shard (the shards a merge misses) stays small.
MAX_SHARDS = 10_000


def parse_shard(text: str) -> tuple[int, int]:
    """``2/3`` -> (2, 3); :class:`ValueError` unless ``1 <= i <= n <= MAX_SHARDS``."""
    index, slash, count = text.strip().partition("/")
    index, count = index.strip(), count.strip()
    # Kept as words (said), so that the console says them in its language.
    if slash and index.isdigit() and count.isdigit():
        if len(count) > 9 or int(count) > MAX_SHARDS:  # (no int() of a thousand digits)
            raise ValueError(msg("{text} splits the demos into more than {most} shards: write "
                                  "i/n with 1 <= i <= n <= {most}", text=repr(text), most=MAX_SHARDS))
        if 1 <= int(index) <= int(count):
            return int(index), int(count)
    raise ValueError(msg("{text} is not a shard: write i/n with 1 <= i <= n, e.g. 1/2", text=repr(text)))
