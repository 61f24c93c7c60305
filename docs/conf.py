"""The project's own documentation, built with the extension itself: every demo is checked."""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "_ext"))

project = "sphinx-autocast-demo"
author = "sphinx-autocast-demo developers"
copyright = "2026, sphinx-autocast-demo developers"
# torch_links: torch names link to docs.pytorch.org without downloading an inventory.
extensions = ["sphinx_autocast_demo", "myst_parser", "autocast_reference", "torch_links",
              "sphinx_copybutton", "source_and_result", "breakable_names"]
exclude_patterns = ["_build", "examples", "_results"]
root_doc = "index"

# Translations (docs/translating.rst): `-b gettext` writes one .pot per page, sphinx-intl keeps
# docs/locale/<lang>/LC_MESSAGES/<page>.po, and `-D language=ru` builds the Russian docs. A page
# without a .po, or a message without a translation, stays in English.
locale_dirs = ["locale/"]
gettext_compact = False

html_theme = "pydata_sphinx_theme"
html_title = "sphinx-autocast-demo"
html_theme_options = {
    # Light, dark, or follow the system: the switcher sits in the header.
    "navbar_end": ["theme-switcher", "navbar-icon-links"],
    # One header row at 1280 px: short link titles (index.rst's toctrees), search as a button.
    "header_links_before_dropdown": 6,
    "navbar_persistent": ["search-button"],
    "show_toc_level": 2,
    "secondary_sidebar_items": {"**": ["page-toc"], "matrix": []},
}
html_context = {"default_mode": "auto"}
html_sidebars = {"**": []}  # the pages are short: give the tables the width
html_static_path = ["_static"]
html_css_files = ["docs.css"]

# Two cores on CI and on the development machines: run two demos at once.
autocast_demo_jobs = 2
# Other torch releases' results, made with `tox -e results-torch214,results-torch215` (each
# set's runs/ names the command and date): shown beside this build's own, and checked too.
autocast_demo_results = ["_results"]
# ReadTheDocs installs no torch (.readthedocs.yaml): render the result sets, run nothing.
if os.environ.get("READTHEDOCS") == "True":
    autocast_demo_execute = "never"

# Copy buttons leave out the prompts and the output of console examples.
copybutton_prompt_text = r"\$ |>>> |\.\.\. "
copybutton_prompt_is_regexp = True
