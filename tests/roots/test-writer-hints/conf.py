extensions = ["sphinx_autocast_demo"]
exclude_patterns = ["_build"]
# The CUDA demo is here for the dtype it is read with; on a machine without CUDA it is not run.
autocast_demo_cuda_unavailable = "skip"
