"""What decides a result before it runs: its cache key, and the parts of the build machine's
environment in it (torch's version as the cache compares it, torch's environment variables).
The build side only: no torch here."""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING

from .engine.cache import make_key
from .version import __version__

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from .model import Code, Demo, Variant


#: What a result is made of beyond its code: bumped when the comparison starts to see more
#: (2: everything reachable, the printed output, the eager run proved eager), so that older
#: results, compared on less, are made again.
VIEW = 2

#: Variables that name only where torch keeps files: they change no result.
_PLACES = ("TORCHINDUCTOR_CACHE_DIR", "TORCH_HOME", "TORCH_EXTENSIONS_DIR",
           "TORCH_COMPILE_DEBUG_DIR")


def torch_variables(environ: Mapping[str, str]) -> dict[str, str]:
    """The environment variables that change what torch does (``TORCH_COMPILE_DISABLE``,
    ``TORCHDYNAMO_*``, ``TORCHINDUCTOR_*``, ``TORCH_LOGS``, ``PYTORCH_*``...): in every key, so
    that a build with one set never serves, nor is served, the results of a build without."""
    return {name: value for name, value in sorted(environ.items())
            if name.startswith(("TORCH", "PYTORCH")) and name not in _PLACES}


def torch_key(installed: str, policy: str) -> str:
    """What the cache compares for ``installed`` under ``autocast_demo_cache_torch`` (empty
    is "exact": a label must say something, or it would match entries stored without one)."""
    if policy in ("exact", ""):
        return installed
    if policy == "release":  # 2.16.0a0+git1234 -> 2.16.0; 2.13.0+cpu -> 2.13.0
        match = re.match(r"\d+(?:\.\d+)*", installed)
        return match.group(0) if match else installed
    return policy


def result_key(demo: Demo, codes: Sequence[Code], variant: Variant, confdir: str,
               variables: Mapping[str, str]) -> str:
    """Everything that decides a result, and nothing that only decides its check (the
    expectations), its place (lines, names) or a failure (the timeout: failures are not
    stored). torch and Python versions live in the entry, so a version change is a miss in
    "auto" mode but still renders in "never" mode; the files a run read are stamped in it."""
    return make_key({
        "extension": __version__,
        "view": VIEW,
        # A snippet finds files beside its page (its __file__): the same code on two pages is
        # two results.
        "page_dir": os.path.relpath(os.path.dirname(os.path.abspath(demo.code.source)), confdir),
        "environment": dict(variables),
        "code": [c.text for c in codes],
        "config": demo.config,
        "value": variant.value,
        "backend": demo.backend,
        "device": demo.device,
        "dtype": demo.dtype,
        "tolerance": [demo.tolerance.grad, demo.tolerance.output],
    })
