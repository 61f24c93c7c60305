# No backend set: the default must be torch.compile()'s own (inductor).
extensions = ["sphinx_autocast_demo"]
exclude_patterns = ["_build"]

# The demos here show the extension's mechanics, not a value's effect: the warning that a
# demo cannot tell its values apart (tests/build/test_default.py tests it) would be said at each.
suppress_warnings = ["autocast_demo.alike"]
