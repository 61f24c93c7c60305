extensions = ["sphinx_autocast_demo"]
exclude_patterns = ["_build", "sets"]
autocast_demo_values = ["same_as_forward", "off"]
# Filled by the tests: merged result sets of shards and of other environments.
autocast_demo_results = ["sets"]
