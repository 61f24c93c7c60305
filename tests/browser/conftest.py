"""The browser and the served site of ``test_browser``, shared with the other browser checks."""

from test_browser import browser, site  # noqa: F401
