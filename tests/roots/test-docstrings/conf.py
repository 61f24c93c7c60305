import os
import sys

# As PyTorch's docs (and most projects') do: the documented package is found through sys.path.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "src"))

extensions = ["sphinx.ext.autodoc", "sphinx.ext.napoleon", "sphinx_autocast_demo"]
exclude_patterns = ["_build"]
autocast_demo_backend = "aot_eager"
autocast_demo_values = ["off"]
# Run before every demo, as doctest_global_setup: the docstrings need no imports of their own.
autocast_demo_global_setup = """
import torch
import amp_helpers
"""

# The demos here show the extension's mechanics, not a value's effect: the warning that a
# demo cannot tell its values apart (tests/build/test_default.py tests it) would be said at each.
suppress_warnings = ["autocast_demo.alike"]
