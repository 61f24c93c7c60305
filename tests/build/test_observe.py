"""What a run's walk reaches and reads (engine/observe.py, job.collect_tensors, steps.py), in this
process, with real torch. How the parent holds each kind of tensor to its measure
(compare.compare_tensor, no torch): tests/unit/test_compare.py. The end-to-end demos are in
test_verdict.py."""

from __future__ import annotations

import dataclasses
import functools
import math

import pytest

from sphinx_autocast_demo.engine.protocol import CODE_FILE


def walk(namespace):
    from sphinx_autocast_demo.engine.child.observe import observe

    view = observe(namespace)
    return {path: tensor for path, _kind, tensor in view.tensors}, view.cut


class Slotted:
    __slots__ = ("__own", "kept", "unset")

    def __init__(self, t):
        self.kept = t
        self.__own = t


class MoreSlots(Slotted):
    __slots__ = ("more",)


@dataclasses.dataclass
class Noted:
    grad: object


class Helper:
    def __init__(self, t):
        self._grad = t


def test_every_holder_is_walked_by_the_path_a_reader_writes():
    import torch

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(2, 2)
            self.lin.noted = Noted(torch.ones(1))
            self._cache = torch.ones(2)  # the writer's own, underscored

    more = MoreSlots(torch.ones(3))
    more.more = torch.ones(4)
    found, cut = walk({"s": more, "net": torch.compile(Net()), "h": Helper(torch.ones(5)),
                       "p": functools.partial(torch.add, torch.ones(6), other=torch.ones(7))})
    assert {"s.more", "s.kept", "s._Slotted__own", "net.lin.weight", "net.lin.bias",
            "net._cache", "net.lin.noted.grad", "h._grad", "p.args[0]",
            "p.keywords['other']"} == set(found)
    assert not cut


def test_torchs_own_underscored_attributes_and_machinery_are_not_walked():
    import logging

    import torch

    # (a logger reaches every logger of the process: the interpreter's state, not the page's)
    found, cut = walk({"lin": torch.nn.Linear(2, 2), "dev": torch.device("cpu"),
                       "dtype": torch.float32, "size": torch.Size([2]), "f": torch.compile(abs),
                       "log": logging.getLogger("torch.demo")})
    assert set(found) == {"lin.weight", "lin.bias"} and not cut


def test_what_only_claims_to_be_a_tensor_is_an_object_never_read():
    from unittest import mock

    import torch

    fake = mock.MagicMock(spec=torch.Tensor)
    assert isinstance(fake, torch.Tensor)
    found, cut = walk({"fake": fake, "real": torch.ones(1)})
    assert set(found) == {"real"} and not cut


def test_an_object_that_raises_when_read_is_a_cut():
    import torch

    class Sealed:
        def __getattribute__(self, name):
            raise RuntimeError("sealed")

    found, cut = walk({"a": Sealed(), "b": torch.ones(1)})
    assert set(found) == {"b"} and cut == "a could not be read (RuntimeError: sealed)"


def test_wrapper_nested_meta_and_fake_tensors_are_read_through_torch_or_said():
    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.testing._internal.two_tensor import TwoTensor

    with FakeTensorMode():
        shaped = torch.empty(2)
    two = TwoTensor(torch.ones(2), torch.zeros(2)).requires_grad_()
    (two * 2).sum().backward()
    nested = torch.nested.nested_tensor([torch.ones(2), torch.ones(3)])
    found, cut = walk({"t": two, "n": nested, "m": torch.empty(2, device="meta"), "f": shaped})
    assert set(found) == {"t.a", "t.b", "t.grad.a", "t.grad.b", "n.unbind()[0]", "n.unbind()[1]"}
    assert type(found["t.a"]) is torch.Tensor
    assert cut == ("f cannot be compared: a fake tensor (only its dtype and shape are known); "
                   "m cannot be compared: a meta tensor (only its dtype and shape are known)")


def test_a_set_of_tensors_and_a_view_too_deep_are_said():
    import torch

    deep: list[object] = [torch.ones(1)]
    for _ in range(10):
        deep = [deep]
    found, cut = walk({"d": deep, "s": {torch.ones(1)}, "plain": {1, (2, "x")}})
    assert not found
    assert cut == ("s is a set: its items have no order to be compared by; containers "
                   "deeper than 8 levels were not followed")


def test_a_parameter_only_an_optimizer_holds_is_found_once():
    import torch

    alone = torch.ones(2, requires_grad=True)
    shared = torch.nn.Linear(2, 2)
    opt = torch.optim.SGD([alone, *shared.parameters()], lr=0.1)
    found, _ = walk({"model": shared, "opt": opt})
    assert set(found) == {"model.weight", "model.bias", "opt.param_groups[0]['params'][0]"}


def collect(namespace, tmp_path, steps=None):
    from sphinx_autocast_demo.engine.child.copies import Copies
    from sphinx_autocast_demo.engine.child.job import collect_tensors

    path = tmp_path / "data.bin"
    copies = steps.copies if steps is not None else Copies(str(path))
    records, cut = collect_tensors(namespace, copies, steps)
    data = path.read_bytes()
    return {r["name"]: r for r in records}, data, cut


def copy_of(record, data):
    """The numbers the run stored for ``record``, as the build reads them back."""
    from sphinx_autocast_demo.judge.compare import _values

    count = math.prod(record["shape"]) * (2 if record["dtype"].startswith("complex") else 1)
    return list(_values(data, record["offset"], count, record["dtype"]))


def test_complex_and_conjugate_tensors_are_copied_as_their_values(tmp_path):
    import numpy
    import torch

    # A conjugate view keeps the unconjugated numbers in memory and a bit that says so.
    base = torch.tensor([1 + 2j, 3 - 4j], dtype=torch.complex64)
    records, data, cut = collect({"c": base.conj(), "same": base.conj().resolve_conj(),
                                  "arr": numpy.array([1 + 1j])}, tmp_path)
    assert copy_of(records["c"], data) == [1.0, -2.0, 3.0, 4.0]
    assert records["c"]["sha256"] == records["same"]["sha256"]
    assert copy_of(records["arr"], data) == [1.0, 1.0] and records["arr"]["dtype"] == "complex128"
    assert not cut


def test_a_tensor_that_cannot_be_read_is_a_cut_not_the_snippets_error(tmp_path):
    import torch

    class Refuses(torch.Tensor):
        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            raise RuntimeError("no reading me")

    odd = torch.Tensor._make_wrapper_subclass(Refuses, (2,), dtype=torch.float32)
    records, _, cut = collect({"odd": odd, "ok": torch.ones(2)}, tmp_path)
    assert set(records) == {"ok"}
    assert cut.startswith("odd could not be read (")


@pytest.mark.parametrize("dtype", ["float8_e4m3fn", "uint16", "bool"])
def test_every_dtype_is_hashed_and_copied_where_it_has_numbers(tmp_path, dtype):
    import torch

    records, data, cut = collect({"t": torch.ones(3).to(getattr(torch, dtype))}, tmp_path)
    assert copy_of(records["t"], data) == [1.0, 1.0, 1.0] and not cut


def stepped(tmp_path, run):
    """The records of ``run(namespace)`` with every backward watched, as a run keeps them."""
    import torch

    from sphinx_autocast_demo.engine.child.copies import Copies
    from sphinx_autocast_demo.engine.child.steps import Steps

    steps = Steps(Copies(str(tmp_path / "data.bin")))
    original = torch.autograd.backward
    steps.install()
    try:
        namespace = run()
    finally:
        torch.autograd.backward = original
    records, data, cut = collect(namespace, tmp_path, steps)
    return records, data, cut


def test_each_backward_of_a_loop_is_kept_where_zero_grad_leaves_nothing(tmp_path):
    import torch

    def run():
        model = torch.nn.Linear(2, 1, bias=False)
        torch.nn.init.ones_(model.weight)
        opt = torch.optim.SGD(model.parameters(), lr=0.5)
        for step in range(3):
            loss = model(torch.full((1, 2), float(step + 1))).sum()
            loss.backward()
            opt.step()
            opt.zero_grad()
        return {"model": model, "opt": opt}

    records, data, cut = stepped(tmp_path, run)
    steps = {name: copy_of(r, data) for name, r in records.items() if name.startswith("backward")}
    # d(loss)/dw = the input: each step's own, though .grad is None at the end
    assert steps == {"backward 1: model.weight.grad": [1.0, 1.0],
                     "backward 2: model.weight.grad": [2.0, 2.0],
                     "backward 3: model.weight.grad": [3.0, 3.0]}
    assert "model.weight.grad" not in records and not cut


def test_a_gradient_still_held_at_the_end_is_not_kept_twice(tmp_path):
    import torch

    def run():
        w = torch.ones(2, requires_grad=True)
        (w * 2).sum().backward()  # accumulated into by the next: kept
        (w * 3).sum().backward()  # still w.grad at the end: the walk's
        hidden = torch.ones(2, requires_grad=True)
        (hidden * 4).sum().backward()  # no name reaches it at the end
        return {"w": w}

    records, data, _ = stepped(tmp_path, run)
    # (hidden's, named by what it is: the only float32 [2] leaf of its backward)
    assert set(records) == {"w", "w.grad", "backward 1: w.grad",
                            "backward 3: <a float32 [2] leaf>.grad"}
    assert copy_of(records["backward 1: w.grad"], data) == [2.0, 2.0]
    assert copy_of(records["w.grad"], data) == [5.0, 5.0]


def test_a_compiled_backward_is_watched_like_an_eager_one(tmp_path):
    import torch

    def run():
        model = torch.nn.Linear(2, 1)
        fn = torch.compile(model, backend="aot_eager")
        for _ in range(2):
            fn(torch.ones(1, 2)).sum().backward()
            model.zero_grad()
        return {"model": model}

    records, _, _ = stepped(tmp_path, run)
    assert {name for name in records if name.startswith("backward")} == {
        f"backward {i}: model.{p}.grad" for i in (1, 2) for p in ("weight", "bias")}


def test_past_the_cap_a_leafs_later_backwards_are_folded_into_one_bitwise_entry(tmp_path, monkeypatch):
    from sphinx_autocast_demo.engine.child import steps

    monkeypatch.setattr(steps, "MAX_SNAPSHOTS", 2)

    def run():
        import torch

        w = torch.ones(1, requires_grad=True)
        for _ in range(5):
            w.sum().backward()
            w.grad = None
        return {"w": w}

    records, _, _ = stepped(tmp_path, run)
    assert {name for name in records if name.startswith("backward")} == {
        "backward 1: w.grad", "backward 2: w.grad", "backward 3-5: w.grad"}
    assert records["backward 3-5: w.grad"]["offset"] is None


_ALIVE: list[object] = []


def catalogue():
    """Every kind of holder a snippet may keep a result in, each holding one made from the
    tensor ``t``: name -> value."""
    import array
    import ctypes
    import io
    import types
    import weakref

    import torch

    t = torch.arange(4, dtype=torch.float32) / 3

    class Box:
        pass

    box = Box()
    box.t = t
    _ALIVE.append(box)  # (alive where the walk does not look: reached through the reference)
    buffer = io.BytesIO()
    torch.save({"w": t}, buffer)
    state = types.ModuleType("state")
    state.t = t
    model = torch.nn.Linear(2, 2)
    # The hook as a snippet writes it (its code is the page's; only its closure keeps seen).
    page: dict[str, object] = {}
    exec(compile("def hooked(model):\n    seen = []\n"
                 "    model.register_forward_hook(lambda m, a, out: seen.append(out.detach()))\n",
                 f"{CODE_FILE}0>", "exec"), page)
    page["hooked"](model)
    model(torch.ones(1, 2))
    kept = [t]

    @functools.lru_cache
    def cached():
        return kept.pop()

    cached()
    return {
        "raw": t.numpy().tobytes(), "mutable": bytearray(t.numpy().tobytes()),
        "view": memoryview(t.numpy().tobytes()), "numbers": array.array("f", t.tolist()),
        "native": (ctypes.c_float * 4)(*t.tolist()), "checkpoint": buffer,
        "log": io.StringIO(f"loss {t[1].item():.6f}\n"), "ref": weakref.ref(box),
        "state": state, "model": model, "cached": cached,
    }


def test_every_kind_the_walk_meets_is_compared_or_said(tmp_path):
    from sphinx_autocast_demo.engine.child import observe

    original = functools.lru_cache
    observe.track_caches()  # (as every run does before the snippet)
    try:
        kinds = catalogue()
    finally:
        functools.lru_cache = original
    found, cut = walk(kinds)
    for name in kinds:
        reached = [path for path in found if path == name or path.startswith(
            (f"{name}.", f"{name}[", f"{name}(", f"{name} ", f"torch.load({name})"))]
        assert reached or name in cut, (name, sorted(found), cut)
    assert {"torch.load(checkpoint)['w']", "ref().t", "state.t", "model._forward_hooks[0]"
            ".__closure__[0].cell_contents[0]", "cached result 1", "log.getvalue() (numbers)",
            "native", "numbers", "raw"} <= set(found), sorted(found)
    assert not cut


def test_a_set_of_values_with_no_tensor_is_no_cut_a_set_of_tensors_is():
    import torch

    model = torch.nn.Linear(2, 2)
    _, cut = walk({"dtypes": {p.dtype for p in model.parameters()},
                   "devices": frozenset({torch.device("cpu")})})
    assert not cut
    _, cut = walk({"params": set(model.parameters())})
    assert cut == "params is a set: its items have no order to be compared by"


def test_the_files_a_snippet_wrote_are_compared(tmp_path):
    import torch

    from sphinx_autocast_demo.engine.child.observe import observe

    torch.save({"w": torch.ones(2)}, tmp_path / "ckpt.pt")
    (tmp_path / "losses.csv").write_text("step,loss\n1,0.25\n", encoding="utf-8")
    (tmp_path / "blob.bin").write_bytes(b"\x00\x01\x02")
    view = observe({}, str(tmp_path))
    assert {path for path, _kind, _t in view.tensors} == {
        "torch.load('ckpt.pt')['w']", "open('losses.csv').read() (text)",
        "open('losses.csv').read() (integers)", "open('losses.csv').read() (numbers)",
        "open('blob.bin', 'rb').read()"}
    assert not view.cut


def test_leaves_no_name_reaches_are_told_apart_by_dtype_and_shape_or_said(tmp_path):
    import torch

    def run():
        a, b = torch.ones(2, requires_grad=True), torch.ones(2, requires_grad=True)
        (a * b).sum().backward()  # two float32 [2] leaves: no order tells them apart
        return {}

    records, _, cut = stepped(tmp_path, run)
    assert not records
    assert cut == ("backward 1: 2 leaves of float32 [2] that no name reaches (name them, so "
                   "that their gradients can be told apart)")
