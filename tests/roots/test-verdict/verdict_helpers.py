"""A module of the documentation's own, beside its page: what its objects keep is as much the
reader's to observe as what the snippet's own classes keep."""


class Keeper:
    """Keeps a copy of a gradient, where a reader reaches it as ``keeper._grad``."""

    def __init__(self, grad):
        self._grad = grad.clone()
