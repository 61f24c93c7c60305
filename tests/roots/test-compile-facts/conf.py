extensions = ["sphinx_autocast_demo"]
exclude_patterns = ["_build"]
# What compiling did is the point here, not the backend's numbers: the faster aot_eager.
autocast_demo_backend = "aot_eager"
