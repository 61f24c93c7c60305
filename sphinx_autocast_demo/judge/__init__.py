"""judge: what torch did against what the page records (stage 4).

Takes the runs' records; gives a :class:`~..core.model.Verdict` per value (compare: compiled
against eager, tensor by tensor and output by output), the findings where the page's
``:expect:`` no longer holds (check), and one judgement per (demo, environment, value) that
every presenter and report reads (judgement). Pure Python: no torch, no Sphinx nodes. Imports
core, read, plan and engine's types. Open compare.py first.
"""
