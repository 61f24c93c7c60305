autocast_demo_backend = "aot_eager"  # the engine, not a backend, is under test: the faster one
extensions = ["sphinx_autocast_demo"]
exclude_patterns = ["_build"]
