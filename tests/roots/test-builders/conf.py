extensions = ["sphinx_autocast_demo"]
exclude_patterns = ["_build"]
project = "builders"
# What this root tests is how each builder writes the results, not what a backend does: the
# faster aot_eager.
autocast_demo_backend = "aot_eager"
# What EPUB asks of every project, so that each builder runs with -W.
version = "1"
copyright = "2026, the tests"

# The demos here show the extension's mechanics, not a value's effect: the warning that a
# demo cannot tell its values apart (tests/build/test_default.py tests it) would be said at each.
suppress_warnings = ["autocast_demo.alike"]
