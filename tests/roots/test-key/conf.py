extensions = ["sphinx_autocast_demo"]
exclude_patterns = ["_build"]
autocast_demo_values = ["same_as_forward", "off"]
