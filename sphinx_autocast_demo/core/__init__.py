"""core: the data every stage shares, and nothing that acts on it.

Takes nothing from the other stages; gives the model (a demo, its runs, verdicts, findings:
frozen, picklable, JSON-able), the ``conf.py`` settings (config: the table; sphinxconf: their
registration and checks at config-inited; conflines: where conf.py sets one), the scoped
records language (scopes), the per-document state Sphinx keeps between builds (state), the
rules for text a page may publish (text, publish, printed) and the warning subtypes. Imports
nothing of the package outside core. Open model.py first.
"""
