"""The messages between the build, the worker and a run's process: one place, typed.

Every message is a JSON object (one per line on the worker's stdin and stdout; a run's job also
as a file for a fresh interpreter). TypedDicts cost nothing at run time and let mypy check both
ends against the same fields. Imported by the worker and its children: standard library only.
"""

from __future__ import annotations

import signal
import sys
from typing import Any, Literal, TypedDict

from ..core.text import MAX_OUTPUT

Mode = Literal["compiled", "eager"]

#: Why a worker cannot run this build's demos (:class:`Ready`'s ``fault``, the build's
#: ``EngineError.fault``): ``no-torch``, torch is not installed for the build's Python;
#: ``torch-import``, torch is installed but does not import; ``no-config``, this torch has no
#: such config; ``config-import``, the config's module does not import; ``warm-up``, the
#: warm-up compile failed; ``died``, the worker died or stopped answering.
EngineFault = Literal["", "no-torch", "torch-import", "no-config", "config-import", "warm-up",
                      "died"]


#: The signals the worker and the zygote handle themselves, and SIGQUIT: the worker starts with
#: their defaults, and so does every run, whatever the build's own dispositions were (a shell
#: starts ``cmd &`` without job control with SIGINT and SIGQUIT ignored); so they are not in a
#: kept worker's key.
RESET_SIGNALS = (signal.SIGCHLD, signal.SIGINT, signal.SIGQUIT, signal.SIGTERM)

def worker_command(*args: str) -> list[str]:
    """How every worker process starts (:mod:`.child.worker`), by module name."""
    return [sys.executable, "-m", f"{__package__}.child.worker", *args]


#: Bytes of a run's output kept on disk; the rest is counted only. Far more than a page shows
#: (text.MAX_OUTPUT): the comparison reads it all (a difference may come after what a page
#: shows), and only past this much is its view cut.
KEEP_BYTES = max(8 << 20, 4 * MAX_OUTPUT)


#: How a run stores each tensor's numbers in its data file, by dtype: as ``struct`` reads them
#: (a complex tensor as (real, imaginary) pairs; ``bfloat16``, the upper half of a float32's
#: bits). A dtype not listed is stored as float64 (``d``), converted by torch in the run.
STORED = {
    "float64": "d", "float32": "f", "float16": "e", "bfloat16": "bf16", "complex128": "d",
    "complex64": "f", "int8": "b", "uint8": "B", "bool": "B", "int16": "h", "uint16": "H",
    "int32": "i", "uint32": "I", "int64": "q", "uint64": "Q",
}


#: Prefix of the file names a run gives the writer's code (``compile()``), so that its frames
#: are told from ours and mapped back to the docs: ``<autocast-demo-0>`` is the first setup.
CODE_FILE = "<autocast-demo-"


class Job(TypedDict, total=False):
    """What one run executes (:func:`.job.run_job`): the build fills the first part, the pool
    the paths."""

    setup: list[str]  # the setup blocks' code, in order
    code: str  # the demo's code
    mode: Mode
    backend: str  # for the snippet's torch.compile calls that name none
    config: str  # dotted path of the config the value sets
    value: Any  # JSON; torch dtypes as {"__torch__": "bfloat16"}
    page: str  # the snippet's __file__
    path: list[str]  # the build's sys.path (conf.py's entries): those missing go in front
    # False: a demo shown as its printed output (:show: outputs), about no compile; its
    # compiled run may compile nothing. Else one that does is no verdict.
    held_to_compile: bool
    # How many of the last setup parts are earlier demos replayed (:continues:): what they print
    # is not this demo's. And whether the demo's bare last expression is shown, as a notebook's.
    replayed: int
    display: bool
    # Added by the pool:
    result_path: str  # the run's result record (JSON), written last
    data_path: str  # float64 copies of its tensors
    stack_path: str  # faulthandler's dumps, read only for a run that hung or crashed
    cwd: str  # the run's scratch directory
    timeout: float


class RunRequest(TypedDict):
    """Build -> worker, one line per run."""

    id: str
    job: Job
    timeout: float
    fresh: bool  # a new interpreter, never a fork (CUDA)
    output_path: str  # where the worker keeps what the run printed
    job_path: str  # the job as a file, for a fresh interpreter


class Kept(TypedDict, total=False):
    """Who served a build whose worker was kept (``autocast_demo_keep_worker``)."""

    pid: int  # the kept worker
    build: int  # 1: it was started for this build; n: this is the n-th build it serves
    idle: float  # the seconds it stays without a build
    session: int  # the process serving this build (forked from it)


class Ready(TypedDict, total=False):
    """Zygote -> build, once: the eager zygote's after the imports, the warm one's after the
    warm-up (only the warm one knows, for its runs, ``fork``)."""

    event: Literal["ready"]
    torch: str
    python: str
    cuda: bool
    fork: bool  # False: every run starts a new interpreter (see ``threads``)
    threads: list[str]  # the threads that made forking unsafe
    error: str  # the worker cannot run demos (torch missing, config unknown), in words
    fault: EngineFault  # the same as data: what the build advises turns on it
    kept: Kept  # a session of a kept worker served this build (absent: a worker of its own)


class Refused(TypedDict):
    """Kept worker -> build, instead of a ready: it serves no run of this build (a module it
    imported has changed since), and why; the build starts a worker of its own."""

    event: Literal["refused"]
    why: str


class Exit(TypedDict):
    """Worker -> build, once per run, when its process has ended."""

    event: Literal["exit"]
    id: str
    returncode: int
    timed_out: bool
    seconds: float
    fresh: bool
    dropped: int  # bytes of output past what is kept
    prefaulted: int  # bytes of the worker copied before the run began (see ``processes.prefault``)
