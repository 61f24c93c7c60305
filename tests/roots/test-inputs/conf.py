extensions = ["sphinx.ext.doctest", "sphinx_autocast_demo"]
exclude_patterns = ["_build"]
