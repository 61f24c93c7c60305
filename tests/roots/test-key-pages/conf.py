extensions = ["sphinx_autocast_demo"]
exclude_patterns = ["_build"]
autocast_demo_values = ["same_as_forward", "off"]
# The demos here show which result a page is served, not what compiling does: the cheapest.
autocast_demo_backend = "eager"
