"""scopes.py without a build: which record applies to a value in an environment, and what a
scope is."""

from __future__ import annotations

import pytest

from sphinx_autocast_demo.core import scopes
from sphinx_autocast_demo.core.model import Environment
from sphinx_autocast_demo.core.scopes import conflict, governing, in_scope, never, overlap, split_scope

CPU_213 = Environment("torch 2.13.0", "2.13.0", "3.11", "cpu")
CUDA_213 = Environment("torch 2.13.0 gpu", "2.13.0", "3.11", "cuda")
CUDA_216 = Environment("torch 2.16.0 gpu", "2.16.0", "3.11", "cuda")


def test_a_scope_splits_off_its_name_and_reads_in_one_spelling():
    assert split_scope("off[torch>=2.15]") == ("off", "torch>=2.15")
    assert split_scope("*[ cuda ]") == ("*", "cuda")
    assert split_scope("off") == ("off", "")
    assert scopes.scope_parts("torch >= 2.14, < 2.16 cuda") == (">=2.14,<2.16", ("cuda",))
    assert scopes.scope_parts("cpu, cuda, cpu") == ("", ("cpu", "cuda"))  # each device once


@pytest.mark.parametrize(("scope", "named"), [("gpu", "gpu"), ("", ""), ("torch>=2.x", ">=2.x"),
                                              ("torch 2.13", "torch")])
def test_what_is_not_a_scope_is_named_in_the_error(scope, named):
    # (the first item that is neither a release bound nor a device)
    with pytest.raises(ValueError) as info:
        scopes.scope_parts(scope)
    assert str(info.value) == named


def test_the_closest_record_governs():
    expect = (("*", "differs"), ("off", "matches"), ("*[cuda]", "raises A"),
              ("off[torch>=2.16]", "raises B"))
    assert governing(expect, "off", CPU_213) == ("off", "matches")  # own over *
    assert governing(expect, "off", CUDA_213) == ("*[cuda]", "raises A")  # scoped * over own
    assert governing(expect, "off", CUDA_216) == ("off[torch>=2.16]", "raises B")
    assert governing(expect, "same_as_forward", CPU_213) == ("*", "differs")
    # Without an environment no scope applies.
    assert governing(expect, "off", None) == ("off", "matches")
    assert governing((), "off", CPU_213) is None
    assert not in_scope("cpu", None)


def test_two_records_of_one_rank_that_disagree_are_a_conflict_only_where_both_apply():
    expect = (("off[torch>=2.13]", "matches"), ("off[cpu]", "differs"))
    assert conflict(expect, "off", CPU_213) == expect
    assert governing(expect, "off", CPU_213) == expect[0]  # (the first, which conflict reports)
    assert conflict(expect, "off", CUDA_213) is None  # only the first applies
    assert conflict((("off[torch>=2.13]", "matches"), ("off[cpu]", "matches")), "off", CPU_213) is None
    # A value's own record outranks *, so the two do not conflict.
    assert conflict((("*", "differs"), ("off", "matches")), "off", CPU_213) is None


def test_overlap_of_devices_and_a_compatible_release_bound():
    assert overlap("cpu cuda", "cuda") == "every torch on cuda"
    assert overlap("torch>=2.13 cpu", "cpu") == "torch 2.13 on cpu"
    assert overlap("torch>=2.13 cuda", "cpu") is None
    # ~=2.13.1 means >=2.13.1: it cannot meet <2.13.
    assert never("torch~=2.13.1,<2.13") and not never("torch~=2.13.1,<2.14")


def test_a_record_is_a_pair_with_its_value_and_typed_scope():
    from packaging.specifiers import SpecifierSet

    record = scopes.Record("off[torch>=2.14,<2.16 cuda]", "matches")
    assert record == ("off[torch>=2.14,<2.16 cuda]", "matches")  # pickled and compared as a pair
    assert record.value == "off" and record.scope == (">=2.14,<2.16", ("cuda",))
    assert record.scope.specifiers == SpecifierSet(">=2.14,<2.16")
    assert str(record.scope) == "torch>=2.14,<2.16 cuda"
    assert record.scope.holds(CUDA_216) is False and scopes.scope_parts("cuda").holds(CUDA_213)
    assert scopes.Record("*", "differs").scope is None
    assert scopes.scoped_name("off", record.scope) == record.name
