"""The floor: the manifest's snippets run one after another in this one warm process.

``python -m benchmarks.floor MANIFEST [PART N]`` prints one JSON line: ``{"seconds": ..., "runs":
..., "startup": ...}`` (startup: importing torch and the warm-up, which ``seconds`` leaves out);
with ``PART N``, only every N-th demo from the PART-th (two such processes at once measure what
two cores give this machine).
No Sphinx, no isolation, no result collection: torch is imported and warmed up first (not
timed), then every demo runs under every value, compiled and then eagerly (``torch.compile``
replaced by the identity), with ``torch._dynamo.reset()`` between runs, because changing the
config does not recompile. One thread, as in the build's workers.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any


def main(manifest_path: str, part: int = 0, parts: int = 1) -> None:
    began = time.perf_counter()
    import torch
    import torch._dynamo
    import torch._functorch.config as functorch_config

    from sphinx_autocast_demo.engine.job import decode_value
    from sphinx_autocast_demo.syntax import parse_values

    torch.set_num_threads(1)
    original = torch.compile
    with open(manifest_path, encoding="utf-8") as f:
        manifest: list[dict[str, Any]] = json.load(f)[part::parts]

    def run(spec: dict[str, Any], value: Any, compiled: bool) -> None:
        functorch_config.backward_pass_autocast = value
        # The build's default backend (aot_eager) for calls that name none; eager: identity.
        torch.compile = (  # type: ignore[assignment]
            (lambda model=None, *a, **k: original(model, *a, **{"backend": "aot_eager", **k}))
            if compiled else (lambda model=None, *a, **k: model)
        )
        namespace: dict[str, Any] = {"__name__": "__main__"}
        exec(compile(spec["setup"], "<setup>", "exec"), namespace)
        exec(compile(spec["code"], "<demo>", "exec"), namespace)
        torch._dynamo.reset()

    # Warm-up, not timed: the first compile of a process pays lazy imports.
    run(manifest[0], "same_as_forward", True)
    runs = 0
    start = time.perf_counter()
    startup = start - began
    for spec in manifest:
        for variant in parse_values(spec["values"], "cpu", "bfloat16"):
            value = decode_value(variant.value)
            for compiled in (True, False):
                run(spec, value, compiled)
                runs += 1
    seconds = time.perf_counter() - start
    torch.compile = original
    print(json.dumps({"seconds": seconds, "runs": runs, "startup": startup}))


if __name__ == "__main__":
    main(sys.argv[1], *(int(a) for a in sys.argv[2:4]))
