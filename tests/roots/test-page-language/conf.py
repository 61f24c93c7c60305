# Built twice by tests/build/test_page_language.py: -D language=en and -D language=ru, the second
# from the first's cache. No catalog of the project's own: every word of the extension's on
# its pages comes from the extension's catalog.
extensions = ["sphinx_autocast_demo"]
exclude_patterns = ["_build"]
autocast_demo_backend = "aot_eager"
autocast_demo_values = ["same_as_forward", "off"]
autocast_demo_global_setup = """\
import torch

def region(x, w):
    # fp32 matmul inside a bf16 autocast region: only the backward's autocast differs
    with torch.autocast("cpu", enabled=False):
        return (x.float() @ w.float()).sum()
"""
suppress_warnings = ["autocast_demo.alike"]
