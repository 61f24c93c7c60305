"""engine: runs each planned (demo, value, mode) in a fresh process (stage 3).

Takes the runs the plan left; gives a :class:`~..core.model.RunRecord` per run (what the
snippet printed, every tensor a reader could observe, the proofs that the eager run was eager
and the compiled run compiled). Split at the process boundary: parent/ is the build's side
(the pool, the pipes, reading records back), child/ the worker's (import torch once, fork one
child per run, observe). protocol.py and isolation.py are what the two sides agree on; kept.py
is both sides of a worker kept between builds. The two sides never import each other. Imports
core, read and plan. Open execute.py first, then parent/pool.py and child/job.py.
"""
