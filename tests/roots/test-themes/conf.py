extensions = ["sphinx_autocast_demo", "sphinx_design"]
exclude_patterns = ["_build"]
project = "themes"
