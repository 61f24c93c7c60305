"""read: what the writer wrote, read once (stage 1 of the pipeline).

Takes a page's ``autocast-demo`` and ``autocast-demo-setup`` directives (reST, MyST, a
docstring's lines in its ``.py`` file); gives a :class:`~..core.model.Demo` recorded in the
document's state, located at its file and line, and a placeholder node where its results go.
Option values are parsed here (options, syntax), never later. Imports core only. Open
directives.py first.
"""
