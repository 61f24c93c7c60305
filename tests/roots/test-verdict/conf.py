# No backend set: the default must be torch.compile()'s own (inductor).
extensions = ["sphinx_autocast_demo"]
exclude_patterns = ["_build"]
