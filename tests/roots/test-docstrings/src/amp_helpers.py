"""Helpers whose docstrings carry checked demos."""


def double(w):
    """Twice ``w``, summed.

    .. autocast-demo::
       :name: double-right
       :expect: off: matches

       w = torch.ones(2, requires_grad=True)
       torch.compile(amp_helpers.double)(w).backward()

    Args:
        w: a tensor.

    Example:
        The same, recorded wrong:

        .. autocast-demo::
           :name: double-wrong
           :expect: off: differs

           w = torch.ones(3, requires_grad=True)
           torch.compile(amp_helpers.double)(w).backward()
    """
    return (w * 2).sum()


class Region:
    """A class whose method has a demo."""

    def run(self, w):
        """Run.

        .. autocast-demo::
           :name: method-missing

           w = torch.ones(4, requires_grad=True)
           torch.compile(amp_helpers.double)(w).backward()
        """
        return double(w)


_TEMPLATE = """Made when the module is imported: autodoc shows it, no line of this file holds it.

.. autocast-demo::
   :name: NAME
   :expect: off: differs

   w = torch.ones(6, requires_grad=True)
   torch.compile(amp_helpers.double)(w).backward()
"""


def generated(w):
    return double(w)


generated.__doc__ = _TEMPLATE.replace("NAME", "generated-wrong")
