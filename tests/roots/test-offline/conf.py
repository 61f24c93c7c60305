extensions = ["sphinx_autocast_demo", "myst_parser"]
exclude_patterns = ["_build"]
# Nothing runs: the results come from a cache the test writes (tests/test_offline.py).
autocast_demo_execute = "never"
