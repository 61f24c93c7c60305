extensions = ["sphinx_autocast_demo", "myst_parser"]
exclude_patterns = ["_build"]
# Nothing runs: the results come from a cache the test writes (tests/build/test_offline.py).
autocast_demo_execute = "never"
# What this root tests is the engine and the page, not what a backend does: the faster
# aot_eager. (test-basic, test-verdict and test-key run the default, inductor.)
autocast_demo_backend = "aot_eager"

# The demos here show the extension's mechanics, not a value's effect: the warning that a
# demo cannot tell its values apart (tests/build/test_default.py tests it) would be said at each.
suppress_warnings = ["autocast_demo.alike"]
