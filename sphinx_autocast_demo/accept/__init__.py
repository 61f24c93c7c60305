"""accept: the writer's way back (stage 7, ``autocast_demo_accept``).

Takes the judgements and the sources, once every demo is checked and before any page is
written; gives each demo's ``:expect:`` rewritten to what torch now does (newrecord: the rules;
edit: the edit of reST, MyST and docstring lines in place; rewrite: the files, all or none), or
a dry-run diff, and the demos as their rewritten sources record them, which the pipeline judges
again for this build's pages. Imports every stage before it. Open newrecord.py first.
"""

from __future__ import annotations

import os

from ..core.i18n import __

# Here, not in rewrite.py: every build reads the mode, and only a build in accept mode imports
# the rest of the stage (a no-change rebuild imports none of it).
ENV = "AUTOCAST_DEMO_ACCEPT"
_MODES = {"": "", "0": "", "false": "", "no": "", "1": "write", "true": "write", "yes": "write",
          "write": "write", "diff": "diff", "dry-run": "diff"}


def mode() -> str:
    """``write``, ``diff`` or ``""`` (off), from the environment."""
    return _MODES.get(os.environ.get(ENV, "").strip().lower(), "?")


def active() -> bool:
    """This build rewrites the records, or shows the diff of doing so."""
    return mode() in ("write", "diff")


def validate() -> None:
    """At ``config-inited``: a misspelt mode must not silently do nothing."""
    if mode() == "?":
        from sphinx.errors import ConfigError

        given = repr(os.environ[ENV])
        raise ConfigError(__(
            "{variable}={value}: use 1 (rewrite the sources), diff (print what would change) or 0"
        ).format(variable=ENV, value=given))
