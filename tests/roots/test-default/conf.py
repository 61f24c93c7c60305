# No backend set: inductor, as torch.compile() runs. The aot_eager backend would let the
# backward follow the autocast active when it runs, whatever the config says.
extensions = ["sphinx_autocast_demo"]
exclude_patterns = ["_build"]
