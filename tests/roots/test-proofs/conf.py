# No backend set: torch.compile()'s own (inductor).
extensions = ["sphinx_autocast_demo"]
exclude_patterns = ["_build"]

# These demos show what proves a run compiled or eager, not a value's effect.
suppress_warnings = ["autocast_demo.alike"]
