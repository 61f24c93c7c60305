"""plan: what this build must run, and what it already knows (stage 2).

Takes the recorded demos and the settings; gives, per (demo, value, mode), a cache key that
holds everything that decides the result (keys), the cached result when the writer's files it
stands for are unchanged (cache, stamps), the result sets of other environments (results,
environments), and the list of runs left. Starts no process. Imports core and read. Open
planner.py first (what the pipeline asks), then keys.py and cache.py.
"""
