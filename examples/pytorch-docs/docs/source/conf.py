# An example laid out like PyTorch's docs/source: Sphinx 7.2.6, pytorch_sphinx_theme2, myst_nb
# (not myst_parser beside it), sphinx-design, autodoc + napoleon, built with
# `-j auto -W --keep-going`. tox -e pytorch-docs builds it; tests/build/test_pytorch_docs.py checks it.
import os
import sys

import pytorch_sphinx_theme2

# As PyTorch's conf.py reaches torch: the documented package through sys.path. The demos' runs
# see this sys.path too.
sys.path.insert(0, os.path.abspath("../.."))

project = "amp_helpers"
extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "myst_nb",
    "sphinx_design",
    "sphinx_autocast_demo",
]
html_theme = "pytorch_sphinx_theme2"
html_theme_path = [pytorch_sphinx_theme2.get_html_theme_path()]
# The theme's navbar templates (its search field) are found through templates_path, as in
# PyTorch's own conf.py.
templates_path = [os.path.join(os.path.dirname(pytorch_sphinx_theme2.__file__), "templates")]
html_theme_options = {"show_lf_header": False, "show_lf_footer": False,
                      "navigation_with_keys": False}
nb_execution_mode = "off"
myst_enable_extensions = ["colon_fence"]
exclude_patterns = ["_build"]

# Run before every demo, as doctest_global_setup: the docstrings need no imports of their own.
autocast_demo_global_setup = """
import torch
import torch._functorch.config
import amp_helpers
"""
