extensions = ["sphinx_autocast_demo"]
exclude_patterns = ["_build"]
# Under a regular file: no build can create this directory, not even one run as root.
autocast_demo_cache_dir = "blocker/cache"
