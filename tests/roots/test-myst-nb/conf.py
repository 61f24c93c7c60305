# As PyTorch's docs: myst_nb alone (it brings myst-parser's Markdown; adding "myst_parser" as
# well fails at start).
extensions = ["myst_nb", "sphinx_autocast_demo"]
exclude_patterns = ["_build"]
nb_execution_mode = "off"
autocast_demo_backend = "aot_eager"
autocast_demo_values = ["off"]

# The demos here show the extension's mechanics, not a value's effect: the warning that a
# demo cannot tell its values apart (tests/build/test_default.py tests it) would be said at each.
suppress_warnings = ["autocast_demo.alike"]
