"""present: the judgements as the reader sees them (stage 5).

Takes the judgements; gives docutils nodes that replace each demo's placeholder (render: the
results table; cells: each cell's words and marks; why: why a value was not checked;
set_lines: the lines a reader copies to set a value; printed: what the runs printed; footer:
where and with which torch it was checked; under a page's first table its legend and, once,
the lines that set the values several tables show), the matrix of every demo by value
(summary), the columns of other environments (across), the results tables' own node kinds
and each builder's visitors of them (tables; html: header cells with scope, the caption;
writers: LaTeX, Texinfo, text, manual pages), with the CSS and LaTeX package in static/ and
latex/. Imports every stage before it. Open render.py first.
"""
