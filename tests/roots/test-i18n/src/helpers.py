"""A module whose docstring carries a captioned demo."""


def double(w):
    """Twice ``w``, summed.

    .. autocast-demo::
       :name: docstring-right
       :caption: The docstring region
       :expect: off: matches

       w = torch.ones(5, requires_grad=True)
       torch.compile(helpers.double)(w).backward()
    """
    return (w * 2).sum()
