"""present: the judgements as the reader sees them (stage 5).

Takes the judgements; gives docutils nodes that replace each demo's placeholder (render: the
results table, what was printed, where it was checked), the matrix of every demo by value
(summary), the columns of other environments (across), and what each builder needs beyond
plain nodes (html: captions and header cells; writers: LaTeX and Texinfo), with the CSS and
LaTeX package in static/ and latex/. Imports every stage before it. Open render.py first.
"""
