extensions = ["sphinx_autocast_demo", "myst_parser"]
exclude_patterns = ["_build"]
