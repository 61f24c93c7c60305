import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "src"))

extensions = ["sphinx.ext.autodoc", "myst_parser", "sphinx_autocast_demo"]
exclude_patterns = ["_build"]
# One catalog per page (gettext_compact = False): the .po a translation team keeps for it.
gettext_compact = False
locale_dirs = ["locale"]
# The engine and the page, not a backend: the faster aot_eager; one value per demo.
autocast_demo_backend = "aot_eager"
autocast_demo_values = ["off"]
autocast_demo_global_setup = "import torch\nimport helpers"
suppress_warnings = ["autocast_demo.alike"]
