"""A tiny package documented the way PyTorch documents torch: autodoc, napoleon (Google style),
and examples in the docstrings, here checked by ``autocast-demo``."""

from __future__ import annotations

import torch


def float32_region(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """``(x @ w).sum()`` in float32, whatever autocast is active around it.

    AMP's advice for a numerically sensitive part. Under ``torch.compile`` the precision of
    its backward is decided when the forward compiles, by
    ``torch._functorch.config.backward_pass_autocast``; eager decides it when ``.backward()``
    runs. With the backward outside the autocast block, as PyTorch's AMP recipe writes it,
    only ``"off"`` reproduces eager:

    .. autocast-demo::
       :name: region-after-block
       :values: default, same_as_forward, off
       :expect: default: differs, same_as_forward: differs, off: matches

       x = torch.randn(64, 64)
       w = torch.randn(64, 64, requires_grad=True)
       with torch.autocast("cpu", dtype=torch.bfloat16):
           z = torch.compile(amp_helpers.float32_region)(x, w)
       z.backward()

    Args:
        x: the input.
        w: the weight.

    Returns:
        A float32 scalar.

    Example:
        With the backward inside the block, the default reproduces eager and ``"off"`` does
        not:

        .. autocast-demo::
           :name: region-inside-block
           :values: default, off
           :expect: default: matches, off: differs

           x = torch.randn(64, 64)
           w = torch.randn(64, 64, requires_grad=True)
           with torch.autocast("cpu", dtype=torch.bfloat16):
               z = torch.compile(amp_helpers.float32_region)(x, w)
               z.backward()
    """
    with torch.autocast(x.device.type, enabled=False):
        return (x.float() @ w.float()).sum()
