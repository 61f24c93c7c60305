extensions = ["sphinx_autocast_demo"]
exclude_patterns = ["_build"]
