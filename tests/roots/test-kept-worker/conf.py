extensions = ["sphinx_autocast_demo"]
exclude_patterns = ["_build"]
# autocast_demo_keep_worker comes from -D, as a writer's edit loop would pass it.
