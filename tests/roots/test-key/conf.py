extensions = ["sphinx_autocast_demo"]
exclude_patterns = ["_build"]
autocast_demo_values = ["same_as_forward", "off"]

# The demos here show the extension's mechanics, not a value's effect: the warning that a
# demo cannot tell its values apart (tests/build/test_default.py tests it) would be said at each.
suppress_warnings = ["autocast_demo.alike"]
