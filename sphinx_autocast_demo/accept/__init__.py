"""accept: the writer's way back (stage 7, ``autocast_demo_accept``).

Takes the judgements and the sources, once every demo is checked and before any page is
written; gives each demo's ``:expect:`` rewritten to what torch now does (newrecord: the rules;
edit: the edit of reST, MyST and docstring lines in place; rewrite: the files, all or none), or
a dry-run diff, and the demos as their rewritten sources record them, which the pipeline judges
again for this build's pages. Imports every stage before it. Open newrecord.py first.
"""
