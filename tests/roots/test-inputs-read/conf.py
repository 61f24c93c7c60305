import os
import sys

extensions = ["sphinx_autocast_demo"]
exclude_patterns = ["_build", "data", "helpers_*", "site-packages"]
# The docs' helpers, found through sys.path as most projects' are (the test moves it).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "helpers_a"))
# What this root tests is what a cached result stands for, not what a backend does.
autocast_demo_backend = "aot_eager"
autocast_demo_values = ["off"]
suppress_warnings = ["autocast_demo.alike", "autocast_demo.missing-expectation"]
