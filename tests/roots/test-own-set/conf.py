extensions = ["sphinx_autocast_demo"]
exclude_patterns = ["_build", "sets"]
autocast_demo_values = ["off"]
# This environment's own result sets (filled by the test), as a CI's final job reads them.
autocast_demo_results = ["sets"]
autocast_demo_backend = "aot_eager"  # the key and the sets are under test, not a backend

# The demos here show the extension's mechanics, not a value's effect: the warning that a
# demo cannot tell its values apart (tests/build/test_default.py tests it) would be said at each.
suppress_warnings = ["autocast_demo.alike"]
