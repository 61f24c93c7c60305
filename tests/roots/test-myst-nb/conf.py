# As PyTorch's docs: myst_nb alone (it brings myst-parser's Markdown; adding "myst_parser" as
# well fails at start).
extensions = ["myst_nb", "sphinx_autocast_demo"]
exclude_patterns = ["_build"]
nb_execution_mode = "off"
autocast_demo_backend = "aot_eager"
autocast_demo_values = ["off"]
