extensions = ["myst_parser", "sphinx_autocast_demo"]
exclude_patterns = ["_build"]
# The flow of a notebook's cells is what this root tests, not a backend: the faster aot_eager.
autocast_demo_backend = "aot_eager"
