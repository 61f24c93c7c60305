"""Links from the torch names these docs mention to PyTorch's own documentation, offline.

intersphinx downloads a project's ``objects.inv`` when the build starts; this build must work
on a machine without network access (CI runners behind a proxy, a fresh clone on a plane), so
this writes a small inventory of the torch names the pages use, with their addresses on
docs.pytorch.org, and points intersphinx at it. Add a name here when a page starts to use it.
"""

from __future__ import annotations

import zlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sphinx.application import Sphinx
    from sphinx.config import Config

BASE = "https://docs.pytorch.org/docs/stable/"

#: (name, domain:role, page under BASE); the anchor is the name itself.
OBJECTS = (
    ("torch.compile", "py:function", "generated/torch.compile.html"),
    ("torch.autocast", "py:class", "amp.html"),
    ("torch.Tensor.backward", "py:method", "generated/torch.Tensor.backward.html"),
    ("torch.autograd.grad", "py:function", "generated/torch.autograd.grad.html"),
    ("torch.manual_seed", "py:function", "generated/torch.manual_seed.html"),
)


def inventory() -> bytes:
    """The inventory in Sphinx's version 2 format: four header lines, then zlib-compressed
    ``name domain:role priority uri display`` lines (``$``: the name; ``-``: display the name)."""
    header = ("# Sphinx inventory version 2\n# Project: PyTorch\n# Version: stable\n"
              "# The remainder of this file is compressed using zlib.\n")
    lines = "".join(f"{name} {role} 1 {page}#$ -\n" for name, role, page in OBJECTS)
    return header.encode() + zlib.compress(lines.encode())


def write(app: Sphinx, config: Config) -> None:
    # Before intersphinx reads its mapping (config-inited, priority 800).
    path = Path(app.doctreedir) / "torch-objects.inv"
    path.parent.mkdir(parents=True, exist_ok=True)
    data = inventory()
    if not path.exists() or path.read_bytes() != data:
        path.write_bytes(data)
    config.intersphinx_mapping = {"torch": (BASE, str(path))}


def setup(app: Sphinx) -> dict[str, Any]:
    app.setup_extension("sphinx.ext.intersphinx")
    app.connect("config-inited", write, priority=500)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
