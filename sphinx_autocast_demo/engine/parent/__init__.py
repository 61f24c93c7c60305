"""The build's side of the engine: start the worker, feed it runs, read back each run's record.
Never imported by the worker's side (engine.child)."""
