"""report: what CI and the console read (stage 6).

Takes the judgements of the whole build; gives located warnings for the findings, one summary
at the end with the exit status (console), and the ``autocast-check`` builder's JSON and JUnit
reports (builder). Imports every stage before it. Open console.py first.
"""
