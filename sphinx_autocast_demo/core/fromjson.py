"""The model's records read back from JSON (the result cache, result sets, a worker's answer),
every field checked against its annotation: a damaged or hostile entry is rejected whole, at
the field that is wrong, instead of failing somewhere in the build with a traceback. Strings
come back printable and bounded, as a live run's output is."""

from __future__ import annotations

import contextlib
import reprlib
from dataclasses import MISSING, fields, is_dataclass
from types import UnionType
from typing import TYPE_CHECKING, Any, Literal, TypeVar, Union, get_args, get_origin, get_type_hints

from .text import MAX_OUTPUT, bounded, printable

if TYPE_CHECKING:
    from .model import RunRecord

#: Most items one sequence of a record (tensors, frames, diffs, names, a shape) may hold: far
#: more than a run produces (a traceback stops near the recursion limit, 1000), few enough that
#: a page stays readable.
MAX_ITEMS = 20_000
# Room for the note that cutting a live run's output adds: a stored cut output is not cut again.
_CUT_NOTE = 100

_T = TypeVar("_T")


def from_json(cls: type[_T], data: Any, where: str = "") -> _T:
    """``data`` (parsed JSON: a dict, or a list of the fields in order) as a ``cls``.

    Raises :class:`ValueError` naming the first field that is missing, of another type or not
    an allowed value. Strings come back printable and bounded as a live run's output is; keys
    that are not fields are ignored (a worker's tensors carry their data offsets).
    """
    names = _fields(cls)
    if isinstance(data, list) and len(data) <= len(names):
        data = dict(zip(names, data, strict=False))  # leaving off fields that have defaults
    if not isinstance(data, dict):
        raise _wrong(where, data, f"a {cls.__name__}")
    values = {}
    for name, (annotation, required) in names.items():
        path = f"{where}.{name}" if where else name
        if name in data:
            values[name] = _read(annotation, data[name], path)
        elif required:
            raise ValueError(f"{path} is missing")
    return cls(**values)


_FIELDS: dict[type, dict[str, tuple[Any, bool]]] = {}


def _fields(cls: type) -> dict[str, tuple[Any, bool]]:
    """Each field's resolved annotation and whether it must be given (it has no default)."""
    if cls not in _FIELDS:
        from . import model  # a record's types, where its module imports them to type-check only

        hints = get_type_hints(cls, localns=vars(model))
        _FIELDS[cls] = {f.name: (hints[f.name], f.default is MISSING and f.default_factory is MISSING)
                        for f in fields(cls)}
    return _FIELDS[cls]


def _read(annotation: Any, value: Any, where: str) -> Any:
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Literal:
        if isinstance(value, str) and value in args:
            return value
        raise _wrong(where, value, "one of " + ", ".join(args))
    if origin in (Union, UnionType):  # ``X | None``, the only unions of the records
        if value is None and type(None) in args:
            return None
        (inner,) = (a for a in args if a is not type(None))
        return _read(inner, value, where)
    if origin is tuple:  # ``tuple[X, ...]``
        if not isinstance(value, list | tuple):
            raise _wrong(where, value, "a list")
        if len(value) > MAX_ITEMS:
            raise ValueError(f"{where} has {len(value)} items, more than {MAX_ITEMS}")
        return tuple(_read(args[0], item, f"{where}[{i}]") for i, item in enumerate(value))
    if is_dataclass(annotation):
        return from_json(annotation, value, where)  # type: ignore[arg-type]
    if isinstance(value, bool) != (annotation is bool):  # JSON's true is no number
        raise _wrong(where, value, annotation.__name__)
    if annotation is str and isinstance(value, str):
        return _clean(value)
    if annotation is float and isinstance(value, int | float):
        with contextlib.suppress(OverflowError):  # a 400-digit integer is no float
            return float(value)
    if annotation is int and isinstance(value, int) and value >= 0:  # lines, parts, sizes
        return value
    if annotation is bool:
        return value
    raise _wrong(where, value, annotation.__name__)


def _clean(value: str) -> str:
    # A lone surrogate (valid in JSON) would stop every writer that encodes the page.
    value = printable(value.encode("utf-8", "replace").decode("utf-8"))
    return value if len(value) <= MAX_OUTPUT + _CUT_NOTE else bounded(value)


def _wrong(where: str, value: Any, expected: str) -> ValueError:
    return ValueError(f"{where or 'the entry'} is {reprlib.repr(value)}, not {expected}")


def run_record_from_json(data: Any) -> RunRecord:
    """A worker's result (frames as lists, tensors with data offsets) as a :class:`RunRecord`."""
    from .model import RunRecord  # (here: the cache's module reads none, unless asked)

    return from_json(RunRecord, data)

