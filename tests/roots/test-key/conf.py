import os

extensions = ["sphinx_autocast_demo"]
exclude_patterns = ["_build"]
autocast_demo_values = ["same_as_forward", "off"]
# What this root tests is what decides a result (its key), not what a backend does: the faster
# one that still compiles (TORCH_COMPILE_DISABLE must leave its compiled run compiling nothing).
autocast_demo_backend = "aot_eager"

# The demos here show the extension's mechanics, not a value's effect: the warning that a
# demo cannot tell its values apart (tests/build/test_default.py tests it) would be said at each.
suppress_warnings = ["autocast_demo.alike"]

# tests/build/test_key.py: the same project after an upgrade to a later release of the extension.
if os.environ.get("AUTOCAST_DEMO_TEST_RELEASE"):
    import sphinx_autocast_demo.core

    sphinx_autocast_demo.core.__version__ = os.environ["AUTOCAST_DEMO_TEST_RELEASE"]
