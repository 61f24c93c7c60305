autocast_demo_backend = "aot_eager"  # the engine, not a backend, is under test: the faster one
extensions = ["sphinx_autocast_demo"]
exclude_patterns = ["_build"]

# The demos here show the extension's mechanics, not a value's effect: the warning that a
# demo cannot tell its values apart (tests/build/test_default.py tests it) would be said at each.
suppress_warnings = ["autocast_demo.alike"]
