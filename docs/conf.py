project = "sphinx-autocast-demo"
author = "sphinx-autocast-demo developers"
extensions = ["sphinx_autocast_demo", "myst_parser"]
exclude_patterns = ["_build"]
html_theme = "pydata_sphinx_theme"
html_title = "sphinx-autocast-demo"
