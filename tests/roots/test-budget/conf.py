extensions = ["sphinx_autocast_demo"]
exclude_patterns = ["_build"]
autocast_demo_values = ["off"]
# One run of "slow" sleeps 0.6 s: compiled and eager take at least 1.2 s, over the demo
# budget; the build's runs take at least that, over the build budget.
autocast_demo_budget = 1.0
autocast_demo_build_budget = 1.1
# One run at a time: the build budget is the runs' wall time, which two runs in flight (the
# default on two CPUs) would bring under 1.1 s.
autocast_demo_jobs = 1
# What this root tests is the engine and the page, not what a backend does: the faster
# aot_eager. (test-basic, test-verdict and test-key run the default, inductor.)
autocast_demo_backend = "aot_eager"

# The demos here show the extension's mechanics, not a value's effect: the warning that a
# demo cannot tell its values apart (tests/build/test_default.py tests it) would be said at each.
suppress_warnings = ["autocast_demo.alike"]
