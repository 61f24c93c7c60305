extensions = ["sphinx_autocast_demo"]
exclude_patterns = ["_build"]
# A config module of the docs' own, beside this file (the test puts it on PYTHONPATH): the
# worker imports it at its start, so every run has it.
autocast_demo_config = "docs_config.flag"
autocast_demo_values = ["one=1", "two=2"]
