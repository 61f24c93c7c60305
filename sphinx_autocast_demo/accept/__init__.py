"""accept: the writer's way back (stage 7, ``autocast_demo_accept``).

Takes the judgements and the sources; gives each demo's ``:expect:`` rewritten to what torch
now does (newrecord: the rules, rewrite: the edit of reST, MyST and docstrings in place), or a
dry-run diff. Imports every stage before it. Open newrecord.py first.
"""
