"""What a page says once under its first table for all its demos (present/footer.py)."""

from __future__ import annotations

from sphinx_autocast_demo.present.footer import Part, page_parts

BACKEND = Part("backend", "backend inductor", how=True)
NONE = Part("grads", "no gradients", how=True)
SOME = Part("grads", "gradient dtypes under every value: w.grad: float32", how=True)


def test_what_most_demos_say_is_said_once_for_the_page():
    other = Part("backend", "backend aot_eager", how=True)
    assert page_parts([[BACKEND], [BACKEND], [other]]) == [BACKEND]


def test_the_gradients_are_said_for_the_page_only_where_every_demo_has_the_same():
    # Issue 47: "no gradients." stood for the whole page under a demo about a weight's gradient.
    assert page_parts([[BACKEND, NONE], [BACKEND, NONE], [BACKEND, SOME]]) == [BACKEND]
    assert page_parts([[BACKEND, NONE], [BACKEND, NONE]]) == [BACKEND, NONE]
