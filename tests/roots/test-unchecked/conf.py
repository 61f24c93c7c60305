extensions = ["sphinx_autocast_demo"]
exclude_patterns = ["_build"]
autocast_demo_cuda_unavailable = "skip"
