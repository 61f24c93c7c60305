"""The verdicts of the project's own docs, from the measured facts (``shared/seed/README.md``),
not from the pages' own ``:expect:`` lines: a page whose records and results drift together
still fails. Read by tests/build/test_docs.py (the built pages) and tests/browser (the same
pages in Chromium)."""

from __future__ import annotations

M, D = "\u2713 matches", "\u2717 differs"
#: A demo with ``:show: record``: its outcome with the verdict's mark (compiled printed other
#: lines than eager: it differs), and that the record holds.
RD = "\u2717 differs, as recorded"
#: A demo with ``:show: outputs``: no table, only what it printed.
OUTPUTS: list[str] = []


#: A value whose config this torch does not have, recorded as such (``no-config``).
NC = "\u2014 no such config in this torch"


def R(name: str) -> str:
    return f"\u26a0 raises {name}"


#: (page, demo) -> the start of each cell of its "compiled vs eager" row, value by value.
EXPECTED: dict[tuple[str, str], list[str]] = {
    # What compiling did is the point (their :expect-compile:); compiled matches eager.
    **{("compile-facts", ident): [M] for ident in (
        "recompile-new-shape", "recompile-dynamic-true", "recompile-float", "recompile-float-tensor",
        "recompile-limit", "graph-break-print", "graph-break-print-reordered", "graph-break-branch",
        "graph-break-cond", "graph-break-wrong-code")},
    ("compile-facts", "graph-break-item"): [M, M],
    # "default" sets nothing: torch's default is same_as_forward (the seed), wrong for AMP.
    ("index", "teaser"): [D, D, M, D],
    # The recipes bind a compiled module (an OptimizedModule, parameters under "_orig_mod."):
    # its gradients must be compared by the module's own names, or they "differ" by name.
    # Under every value, so a wrong pick shows: the model's float32 head (the seed's fact: a
    # float32 matmul in the backward) tells the values apart, as the region demos do.
    ("behaviour", "recipe-after"): [D, M, D],
    ("behaviour", "recipe-inside"): [M, D, M],
    ("behaviour", "recipe-another"): [D, D, M],  # same_as_forward, off, fp16
    ("behaviour", "recipe-patch"): [M, M, M],  # patch wins over every value (:alike:)
    ("behaviour", "backward-inside"): [M, D, M],
    ("behaviour", "backward-outside"): [D, D, M, D],  # default, ...
    ("behaviour", "backward-elsewhere"): [D, D, D, M],  # ..., fp16
    ("behaviour", "fp16-overflow"): [D, M, D],
    ("behaviour", "patch-one-region"): [M, M, M],
    ("behaviour", "no-recompile"): [RD, RD, RD],
    ("behaviour", "no-forward-autocast-aot-eager"): [M, M, M],
    ("behaviour", "no-forward-autocast-inductor"): [D, D, M],
    ("behaviour", "current-default"): OUTPUTS,
    ("behaviour", "invalid-values"): [M, M, R("BackendCompilerFailed"), R("BackendCompilerFailed")],
    # Upstream's "same_as_forward (default)": the row that sets nothing behaves as it does.
    ("upstream", "upstream-default"): [M, M, D],
    ("upstream", "upstream-ellipsis"): [R("ValueError")],
    ("upstream", "upstream-undefined-region"): [R("NameError")],
    ("upstream", "upstream-undefined-z"): [R("NameError")],
    ("upstream", "upstream-off"): [R("ValueError")],
    ("upstream", "upstream-kwargs-dict"): [R("BackendCompilerFailed"), M],
    ("upstream", "upstream-patch"): [R("SyntaxError")],
    ("upstream", "upstream-bare-import"): OUTPUTS,
    ("upstream", "upstream-device-keyword"): [R("TypeError")],
    # Upstream's second section: compiled gives w2.grad zeros where eager leaves None, under
    # every value; the setting upstream names for it is in none of the releases checked.
    ("upstream", "unused-output-gradients"): [D, D, D],
    ("upstream", "unused-output-pruning"): [NC, NC],
    ("guide", "first-demo"): [D, M, D],
    ("myst", "myst-backward-inside"): [M, D, M],
    ("myst", "myst-fp16-overflow"): [D, M, D],
}
