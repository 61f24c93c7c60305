extensions = ["sphinx_autocast_demo"]
exclude_patterns = ["_build"]
# How the pool orders compiled runs, not what a backend does: the faster aot_eager.
autocast_demo_backend = "aot_eager"
