"""The worker's side of the engine: runs in the worker process and its forked children (no
Sphinx). worker.py starts it, zygote.py forks a child per run, job.py runs one snippet and
observe.py reads what it left. Never imports the build's side (engine.parent)."""
