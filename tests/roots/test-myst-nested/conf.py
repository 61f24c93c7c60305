extensions = ["sphinx_autocast_demo", "myst_parser"]
exclude_patterns = ["_build"]
# The engine and the page, not a backend: the faster aot_eager; one value per demo.
autocast_demo_backend = "aot_eager"
autocast_demo_values = ["off"]
