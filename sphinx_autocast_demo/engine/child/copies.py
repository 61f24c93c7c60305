"""A run's tensors as the parent compares them: each one's exact bytes hashed, and its numbers
written to the run's data file as the tensor holds them (:data:`..protocol.STORED`: no copy,
no conversion for the usual dtypes), so that the parent can measure a difference without
importing torch. One :class:`Copies` per run serves the walk at the end and every backward's
gradients on the way (:mod:`.steps`), under one budget.
"""

from __future__ import annotations

import ctypes
from hashlib import sha256  # bound before any snippet runs: one may replace hashlib.sha256
from typing import IO, Any

from ..protocol import STORED

#: Tensors larger than this are compared by hash only (no max |difference|), and so are those
#: past this many numbers written in all in one run.
MAX_DIFF_ELEMENTS = 16_000_000
MAX_DIFF_TOTAL = 64_000_000


def _dense(tensor: Any) -> Any:
    """``tensor``'s values as a plain dense contiguous CPU tensor, read through torch alone."""
    import torch

    # Not through a subclass's __torch_function__: the writer's code, which may print (the
    # output is compared) or raise, and returns its subclass again.
    with torch._C.DisableTorchFunctionSubclass():
        t = tensor.detach()
        if type(t) is not torch.Tensor:  # a subclass over a storage of its own (else: see below)
            t = t.as_subclass(torch.Tensor)
        t = t.cpu()
        if t.is_quantized:
            t = t.dequantize()
        if t.layout != torch.strided:
            t = t.to_dense()
        # A conjugate or negative view keeps the values un-conjugated in memory, with a bit
        # that says so: contiguous() leaves that bit, and the raw bytes would lie.
        return t.resolve_conj().resolve_neg().contiguous()


def _tensor_bytes(t: Any) -> bytes | memoryview:
    """The bytes of a tensor :func:`_dense` made, in place (valid while ``t`` lives: hashed and
    written without a copy); anything else is refused, never read."""
    import torch

    if (type(t) is not torch.Tensor or t.layout != torch.strided or t.device.type != "cpu"
            or t.is_quantized or t.is_nested or t.is_conj() or t.is_neg() or not t.is_contiguous()):
        raise TypeError("not a plain dense CPU tensor")
    size = t.numel() * t.element_size()
    if not size:
        return b""
    # A wrapper or fake tensor that slipped through has no memory of its own (address 0).
    if not t.data_ptr() or t.storage_offset() * t.element_size() + size > t.untyped_storage().nbytes():
        raise ValueError("its storage does not hold its values")
    return memoryview((ctypes.c_char * size).from_address(t.data_ptr())).cast("B")


def _numbers(t: Any) -> Any | None:
    """``t``'s numbers as the data file stores them (:data:`..protocol.STORED`): ``t`` itself,
    or a complex one's (real, imaginary) pairs, or a float64 copy for a dtype stored so; None
    for a dtype with no numbers (bits, packed float4): compared by their bytes only."""
    import torch

    try:
        if str(t.dtype).removeprefix("torch.") in STORED:
            return torch.view_as_real(t).contiguous() if t.is_complex() else t
        return t.to(torch.float64)
    except (RuntimeError, TypeError):
        return None


class Copies:
    """The run's data file and what has been copied to it (opened at the first tensor)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.copied = 0
        self._file: IO[bytes] | None = None

    def record(self, name: str, kind: str, tensor: Any) -> dict[str, Any]:
        """``tensor``'s record as the parent reads it (:class:`~...core.model.TensorRecord`
        with its data offset); raises whatever a tensor that cannot be read raises."""
        t = _dense(tensor)
        raw = _tensor_bytes(t)
        # Within the budget before the copy is made: past it, none is (bitwise only).
        values = t.numel() * (2 if t.is_complex() else 1)
        copy = (_numbers(t) if 0 < t.numel() <= MAX_DIFF_ELEMENTS
                and self.copied + values <= MAX_DIFF_TOTAL else None)
        copied_raw = _tensor_bytes(copy) if copy is not None else None
        record: dict[str, Any] = {
            "name": name,
            "kind": kind,
            "dtype": str(t.dtype).removeprefix("torch."),
            "shape": list(t.shape),
            "sha256": sha256(raw).hexdigest(),
            "offset": None,
        }
        if copied_raw is not None:
            data = self._data()
            record["offset"] = data.tell()
            data.write(copied_raw)
            self.copied += values
        return record

    def _data(self) -> IO[bytes]:
        if self._file is None:
            self._file = open(self.path, "wb")  # noqa: SIM115 (open for the run; close() ends it)
        return self._file

    def close(self) -> None:
        self._data().close()  # (made, if empty: the parent reads the file whatever it holds)
