extensions = ["sphinx_autocast_demo"]
exclude_patterns = ["_build", "sets"]
autocast_demo_values = ["same_as_forward", "off"]
# Filled by the tests: merged result sets of shards and of other environments.
autocast_demo_results = ["sets"]
# What this root tests is the engine and the page, not what a backend does: the faster
# aot_eager. (test-basic, test-verdict and test-key run the default, inductor.)
autocast_demo_backend = "aot_eager"

# The demos here show the extension's mechanics, not a value's effect: the warning that a
# demo cannot tell its values apart (tests/build/test_default.py tests it) would be said at each.
suppress_warnings = ["autocast_demo.alike"]
