extensions = ["sphinx_autocast_demo"]
exclude_patterns = ["_build"]
# inductor, the default: its working files (generated modules, kernels, locks, precompiled
# headers) are what a fresh runner does not have, and what a result must not depend on.
autocast_demo_values = ["same_as_forward", "off"]
# The demos show what a result stands for, not a value's effect.
suppress_warnings = ["autocast_demo.alike", "toc.not_included"]
