"""Lossless JSON values: validation, detached snapshots, frozen copies, equality.

Everything the format persists (event ``data``, surface metadata, seed entries,
headers) must survive a JSON round trip unchanged (JSON-1..11). The accepted
domain is exactly (DEC-1): ``None``, ``bool``, ``str``, ``int``, finite
``float`` other than ``-0.0``, ``list`` and ``dict`` with ``str`` keys, plus our
own read-only containers :class:`FrozenDict` / :class:`FrozenList` (DEC-5).
Types are tested exactly (``type(x) is int``), so ``bool`` never passes as a
number and subclasses (``IntEnum``, ``OrderedDict``, ...) are rejected.

Integers (DEC-3): payload integers of any magnitude are accepted because they
round-trip exactly through Python and through :mod:`.json_text`. A JavaScript
reader (the TypeScript implementation) parses numbers as IEEE doubles and can
NOT read an integer beyond +/-(2**53 - 1) losslessly; fields the spec calls
safe integers are checked separately with :func:`is_safe_int`.

Nesting depth is bounded by memory, not by the interpreter recursion limit
(DEC-16): every walk has an iterative explicit-stack form. Cycles are found by
ancestor tracking: the same container may appear several times (each
occurrence is copied independently) but never inside itself (JSON-5).

These walks are the hot path of ``append`` and seeding. Real payloads are
shallow, so each public function first runs a recursive walk capped at
``_FAST_DEPTH`` levels (a Python call per container is cheaper than a stack
frame object); deeper or cyclic values make it give up, and the iterative
walk redoes the work exactly. The JSON-pointer location of a rejection is
computed only when a rejection happens.
"""

from __future__ import annotations

import contextlib
import gc
import math
from collections.abc import Iterator, Mapping
from typing import Any, NoReturn, TypeGuard, overload

from sessionspec.spec import FORMAT
from sessionspec.spec.errors import JsonValueError
from sessionspec.spec.loader import json_pointer
from sessionspec.spec.schema_types import JsonObject, JsonValue

from .rule_table import TABLE, define

__all__ = [
    "MAX_SAFE_INTEGER",
    "FrozenDict",
    "FrozenList",
    "JsonObject",
    "JsonValue",
    "NotLossless",
    "freeze_json_value",
    "freeze_parsed",
    "gc_paused",
    "is_json_value",
    "is_nonneg_safe_int",
    "is_safe_int",
    "json_equal",
    "json_pointer",
    "snapshot_json_value",
    "thaw_json_value",
]

MAX_SAFE_INTEGER: int = FORMAT.max_safe_integer
"""2**53 - 1, the largest integer a JavaScript number holds exactly."""

# JsonValue (a JSON value, recursively) and JsonObject (a JSON object as read) are generated from
# common/json-value.json into sessionspec.spec.schema_types; re-exported here with the values they type.


def _read_only(self: object, *args: object, **kwargs: object) -> NoReturn:
    raise TypeError(f"{type(self).__name__} is read-only; thaw_json_value() gives a mutable copy")


_dict_new = dict.__new__
_dict_init = dict.__init__
_list_new = list.__new__
_list_init = list.__init__


class FrozenDict(dict):  # type: ignore[type-arg]
    """A read-only ``dict``: compares equal to plain dicts, serialises like one.

    Every mutator raises ``TypeError``. The constructor is shallow; use
    :func:`freeze_json_value` for a deep, validated frozen copy (what the
    session stores). Not hashable (like ``dict``).
    """

    __slots__ = ()

    def __new__(cls, *args: Any, **kwargs: Any) -> FrozenDict:
        obj = _dict_new(cls)
        _dict_init(obj, *args, **kwargs)
        return obj

    def __init__(self, *args: object, **kwargs: object) -> None:
        """Filled by ``__new__``; re-running ``__init__`` must not mutate."""

    __setitem__ = _read_only
    __delitem__ = _read_only
    __ior__ = _read_only
    update = _read_only
    pop = _read_only
    popitem = _read_only
    clear = _read_only
    setdefault = _read_only

    def __copy__(self) -> FrozenDict:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> Any:
        # Immutable and (when built by freeze_json_value) deeply frozen:
        # freezing again shares everything already frozen.
        return freeze_json_value(self) if is_json_value(self) else self

    def __reduce__(self) -> tuple[Any, ...]:
        return (FrozenDict, (dict(self),))


class FrozenList(list):  # type: ignore[type-arg]
    """A read-only ``list``: compares equal to plain lists, serialises like one.

    Every mutator raises ``TypeError``. The constructor is shallow; see
    :class:`FrozenDict`.
    """

    __slots__ = ()

    def __new__(cls, *args: Any, **kwargs: Any) -> FrozenList:
        obj = _list_new(cls)
        _list_init(obj, *args, **kwargs)
        return obj

    def __init__(self, *args: object, **kwargs: object) -> None:
        """Filled by ``__new__``; re-running ``__init__`` must not mutate."""

    __setitem__ = _read_only
    __delitem__ = _read_only
    __iadd__ = _read_only
    __imul__ = _read_only
    append = _read_only
    extend = _read_only
    insert = _read_only
    remove = _read_only
    pop = _read_only
    clear = _read_only
    sort = _read_only
    reverse = _read_only

    def __copy__(self) -> FrozenList:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> Any:
        return freeze_json_value(self) if is_json_value(self) else self

    def __reduce__(self) -> tuple[Any, ...]:
        return (FrozenList, (list(self),))


def _fd(items: dict[str, Any]) -> FrozenDict:
    obj = _dict_new(FrozenDict)
    _dict_init(obj, items)
    return obj


def _fl(items: list[Any]) -> FrozenList:
    obj = _list_new(FrozenList)
    _list_init(obj, items)
    return obj


_DICTS = (dict, FrozenDict)
_LISTS = (list, FrozenList)
_NEG_ZERO_SIGN = math.copysign


@contextlib.contextmanager
def gc_paused(long_lived: bool = False) -> Iterator[None]:
    """Pause the cyclic garbage collector around a bulk build (seed-load, JSONL read).

    Frozen containers are dict/list subclasses, which CPython always tracks for
    cyclic GC; building 100,000 events triggers repeated full collections that
    traverse the whole heap and can cost more than the build itself. The
    values built here are acyclic, so pausing is safe; the previous state is
    restored on exit.

    ``long_lived``: what was built is kept (a loaded session), so on exit every
    young object is moved to the oldest generation (``gc.freeze()`` then
    ``gc.unfreeze()``, two list splices) instead of being traversed by the first
    young collection, which would find nothing to free in it (a third of a load's
    time at 100,000 events). The trade: cyclic garbage that the *caller* made
    just before (the young generations: at most a few thousand objects) waits
    for the next full collection instead of the next young one. Skipped when
    the process uses ``gc.freeze()`` itself (its permanent generation is not
    ours to release) or when the collector was already off.
    """
    was_enabled = gc.isenabled()
    if was_enabled:
        gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            if long_lived and gc.get_freeze_count() == 0:
                gc.freeze()
                gc.unfreeze()
            gc.enable()


def is_object(value: object) -> TypeGuard[Mapping[Any, Any]]:
    """``isinstance(value, Mapping)``, the exact classes decided first: the load and seed paths ask it of every
    record and payload, and an ABC's ``isinstance`` runs Python code (``abc.ABCMeta.__instancecheck__``)."""
    cls = value.__class__
    if cls is dict or cls is FrozenDict:
        return True
    if value is None or cls is str or cls is list or cls is int or cls is FrozenList:
        return False
    return isinstance(value, Mapping)


def is_safe_int(value: object) -> bool:
    """An ``int`` (never ``bool``) within +/-(2**53 - 1) (DEC-3)."""
    return type(value) is int and _MIN_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER


_MIN_SAFE_INTEGER = -MAX_SAFE_INTEGER  # (a constant: `-MAX_SAFE_INTEGER` in the test would build a new int each call)


def is_nonneg_safe_int(value: object) -> bool:
    """A safe integer that is ``>= 0`` (seq, time, createdAt, ...)."""
    return type(value) is int and 0 <= value <= MAX_SAFE_INTEGER


def _float_problem(value: float) -> str | None:
    """Why a float is not a lossless JSON number (JSON-2: NaN, infinities, -0.0), or None."""
    if value != value:
        return "NaN is not JSON"
    if value in (math.inf, -math.inf):
        return "an infinite float is not JSON"
    if value == 0.0 and _NEG_ZERO_SIGN(1.0, value) < 0:
        return "-0.0 does not survive JSON (it reads back as 0)"
    return None


define("float_problem", _float_problem)


def _bad_float(value: float) -> str | None:
    return TABLE.float_problem(value)  # type: ignore[no-any-return]


def _scalar_problem(value: object) -> str | None:
    """Why a non-container value is rejected, or None when it is accepted."""
    t = type(value)
    if value is None or t is str or t is int or t is bool:
        return None
    if t is float:
        return _bad_float(value)  # type: ignore[arg-type]
    if t is tuple:
        return "a tuple is not JSON (it would read back as a list)"
    if isinstance(value, (dict, list, str, int, float)):
        return f"{t.__name__} is a subclass of a JSON type; only exact types are lossless"
    return f"{t.__name__} is not a JSON type"


def _locate(value: object) -> tuple[str, str]:
    """Find the first offending value (traversal order): (pointer, reason).

    Runs only after a fast walk failed, so it may be slower and track paths.
    """
    ancestors: set[int] = set()
    stack: list[tuple[object, Any]] = []  # (container, iterator over (token, child))
    path: list[str | int] = []  # token of each open container below the root

    def enter(container: object) -> str | None:
        t = type(container)
        if t in _DICTS or t in _LISTS:
            if id(container) in ancestors:
                return "cycle: a container contains itself"
            if t in _DICTS:
                for k in container:  # type: ignore[attr-defined]
                    if type(k) is not str:
                        return f"dict key {k!r} ({type(k).__name__}) is not a str"
                items: Any = iter(container.items())  # type: ignore[attr-defined]
            else:
                items = iter(enumerate(container))  # type: ignore[arg-type]
            ancestors.add(id(container))
            stack.append((container, items))
            return None
        return _scalar_problem(container)

    problem = enter(value)
    if problem is not None:
        return "", problem
    while stack:
        container, it = stack[-1]
        for token, child in it:
            problem = enter(child)
            if problem is not None:
                return json_pointer(path + [token]), problem
            if stack[-1][0] is child:
                path.append(token)
                break
        else:
            stack.pop()
            ancestors.discard(id(container))
            if path:
                path.pop()
    return "", "not a lossless JSON value"  # pragma: no cover - the fast walk and this one agree


def _requirement(reason: str) -> str:
    """The rule a rejection reason enforces (JSON-2 floats, -3 types, -4 keys, -5 cycles)."""
    if reason.startswith("cycle"):
        return "JSON-5"
    if reason.startswith("dict key"):
        return "JSON-4"
    if "NaN" in reason or "infinite" in reason or "-0.0" in reason:
        return "JSON-2"
    return "JSON-3"


def _fail(value: object) -> NoReturn:
    pointer, reason = _locate(value)
    raise JsonValueError(
        f"not a lossless JSON value ({reason})" + ("" if pointer else " at the root"),
        requirement=_requirement(reason),
        path=pointer,
    )


class _Invalid(Exception):
    """Internal signal from the fast walks; converted to JsonValueError."""


def _validate(value: object) -> bool:
    """Iterative validation walk (no copy, any depth, exact cycle detection)."""
    t = type(value)
    if t is str or t is int or t is bool or value is None:
        return True
    if t is float:
        return _bad_float(value) is None  # type: ignore[arg-type]
    if t is not dict and t is not list and t is not FrozenDict and t is not FrozenList:
        return False
    ancestors = {id(value)}
    stack: list[tuple[Any, object]] = [
        (iter(value.values()) if t is dict or t is FrozenDict else iter(value), value)  # type: ignore[call-overload, attr-defined]
    ]
    if (t is dict or t is FrozenDict) and not _keys_ok(value):  # type: ignore[arg-type]
        return False
    while stack:
        it, src = stack[-1]
        for v in it:
            tv = type(v)
            if tv is str or tv is int or tv is bool or v is None:
                continue
            if tv is dict or tv is FrozenDict:
                if id(v) in ancestors:
                    return False
                for k in v:
                    if type(k) is not str:
                        return False
                ancestors.add(id(v))
                stack.append((iter(v.values()), v))
                break
            if tv is list or tv is FrozenList:
                if id(v) in ancestors:
                    return False
                ancestors.add(id(v))
                stack.append((iter(v), v))
                break
            if tv is float:
                if _bad(v):
                    return False
                continue
            return False
        else:
            stack.pop()
            ancestors.discard(id(src))
    return True


def _keys_ok(d: dict[Any, Any]) -> bool:
    for k in d:  # noqa: SIM110 - an explicit loop is faster than all() over a generator (freeze hot path)
        if type(k) is not str:
            return False
    return True


# --------------------------------------------------------------------------
# Fast recursive walks. Almost every real value is shallow, and a Python call
# per container is cheaper than an explicit-stack frame. They stop at
# _FAST_DEPTH (which also catches cycles, since a cycle never bottoms out)
# and the caller then re-runs the exact iterative walk, which handles any
# depth and reports cycles precisely.
# --------------------------------------------------------------------------

_FAST_DEPTH = 120


class _TooDeep(Exception):
    """Internal: the fast recursive walk gave up; use the iterative one."""


def _bad(v: float) -> bool:
    return TABLE.float_problem(v) is not None


def _val_dict(d: dict[Any, Any], depth: int) -> None:
    if depth > _FAST_DEPTH:
        raise _TooDeep
    for k, v in d.items():
        if type(k) is not str:
            raise _Invalid
        tv = type(v)
        if tv is str or tv is int or tv is bool or v is None:
            continue
        if tv is dict or tv is FrozenDict:
            _val_dict(v, depth + 1)
        elif tv is list or tv is FrozenList:
            _val_list(v, depth + 1)
        elif tv is not float or _bad(v):
            raise _Invalid


def _val_list(items: list[Any], depth: int) -> None:
    if depth > _FAST_DEPTH:
        raise _TooDeep
    for v in items:
        tv = type(v)
        if tv is str or tv is int or tv is bool or v is None:
            continue
        if tv is dict or tv is FrozenDict:
            _val_dict(v, depth + 1)
        elif tv is list or tv is FrozenList:
            _val_list(v, depth + 1)
        elif tv is not float or _bad(v):
            raise _Invalid


def _cp_dict(d: dict[Any, Any], depth: int) -> dict[str, Any]:
    if depth > _FAST_DEPTH:
        raise _TooDeep
    out = {}
    for k, v in d.items():
        if type(k) is not str:
            raise _Invalid
        tv = type(v)
        if tv is str or tv is int or tv is bool or v is None:
            out[k] = v
        elif tv is dict or tv is FrozenDict:
            out[k] = _cp_dict(v, depth + 1)
        elif tv is list or tv is FrozenList:
            out[k] = _cp_list(v, depth + 1)
        elif tv is float and not _bad(v):
            out[k] = v
        else:
            raise _Invalid
    return out


def _cp_list(items: list[Any], depth: int) -> list[Any]:
    if depth > _FAST_DEPTH:
        raise _TooDeep
    out: list[Any] = []
    append = out.append
    for v in items:
        tv = type(v)
        if tv is str or tv is int or tv is bool or v is None:
            append(v)
        elif tv is dict or tv is FrozenDict:
            append(_cp_dict(v, depth + 1))
        elif tv is list or tv is FrozenList:
            append(_cp_list(v, depth + 1))
        elif tv is float and not _bad(v):
            append(v)
        else:
            raise _Invalid
    return out


def _fz_dict(d: dict[Any, Any], depth: int) -> FrozenDict:
    """Freeze a plain dict (always a new FrozenDict)."""
    if depth > _FAST_DEPTH:
        raise _TooDeep
    out = {}
    for k, v in d.items():
        if type(k) is not str:
            raise _Invalid
        tv = type(v)
        if tv is str or tv is int or tv is bool or v is None:
            out[k] = v
        elif tv is dict:
            out[k] = _fz_dict(v, depth + 1)
        elif tv is list:
            out[k] = _fz_list(v, depth + 1)
        elif tv is FrozenDict:
            out[k] = _fz_fdict(v, depth + 1)
        elif tv is FrozenList:
            out[k] = _fz_flist(v, depth + 1)
        elif tv is float and not _bad(v):
            out[k] = v
        else:
            raise _Invalid
    obj = _dict_new(FrozenDict)
    _dict_init(obj, out)
    return obj


def _fz_list(items: list[Any], depth: int) -> FrozenList:
    """Freeze a plain list (always a new FrozenList)."""
    if depth > _FAST_DEPTH:
        raise _TooDeep
    out: list[Any] = []
    append = out.append
    for v in items:
        tv = type(v)
        if tv is str or tv is int or tv is bool or v is None:
            append(v)
        elif tv is dict:
            append(_fz_dict(v, depth + 1))
        elif tv is list:
            append(_fz_list(v, depth + 1))
        elif tv is FrozenDict:
            append(_fz_fdict(v, depth + 1))
        elif tv is FrozenList:
            append(_fz_flist(v, depth + 1))
        elif tv is float and not _bad(v):
            append(v)
        else:
            raise _Invalid
    obj = _list_new(FrozenList)
    _list_init(obj, out)
    return obj


def _fz_child(v: Any, depth: int) -> Any:
    tv = type(v)
    if tv is dict:
        return _fz_dict(v, depth)
    if tv is list:
        return _fz_list(v, depth)
    if tv is FrozenDict:
        return _fz_fdict(v, depth)
    if tv is FrozenList:
        return _fz_flist(v, depth)
    if tv is float and not _bad(v):
        return v
    raise _Invalid


def _fz_fdict(d: FrozenDict, depth: int) -> FrozenDict:
    """Validate a FrozenDict; share it unless a child had to be frozen."""
    if depth > _FAST_DEPTH:
        raise _TooDeep
    changed: dict[str, Any] | None = None
    for k, v in d.items():
        if type(k) is not str:
            raise _Invalid
        tv = type(v)
        if tv is str or tv is int or tv is bool or v is None:
            continue
        r = _fz_child(v, depth + 1)
        if r is not v:
            if changed is None:
                changed = {}
            changed[k] = r
    if changed is None:
        return d
    out = dict(d)
    out.update(changed)
    obj = _dict_new(FrozenDict)
    _dict_init(obj, out)
    return obj


def _fz_flist(items: FrozenList, depth: int) -> FrozenList:
    """Validate a FrozenList; share it unless a child had to be frozen."""
    if depth > _FAST_DEPTH:
        raise _TooDeep
    changed: dict[int, Any] | None = None
    for i, v in enumerate(items):
        tv = type(v)
        if tv is str or tv is int or tv is bool or v is None:
            continue
        r = _fz_child(v, depth + 1)
        if r is not v:
            if changed is None:
                changed = {}
            changed[i] = r
    if changed is None:
        return items
    out = list(items)
    for i, r in changed.items():
        out[i] = r
    obj = _list_new(FrozenList)
    _list_init(obj, out)
    return obj


def is_json_value(value: object) -> bool:
    """True exactly when :func:`snapshot_json_value` would succeed (JSON-9)."""
    return TABLE.is_json_value(value)  # type: ignore[no-any-return]


def _is_json_value(value: object) -> bool:
    t = type(value)
    if t is str or t is int or t is bool or value is None:
        return True
    try:
        if t is dict or t is FrozenDict:
            _val_dict(value, 0)  # type: ignore[arg-type]
        elif t is list or t is FrozenList:
            _val_list(value, 0)  # type: ignore[arg-type]
        elif t is float:
            return not _bad(value)  # type: ignore[arg-type]
        else:
            return False
    except _Invalid:
        return False
    except (_TooDeep, RecursionError):
        return _validate(value)
    return True


define("is_json_value", _is_json_value)


def _copy_walk(value: Any, freeze: bool) -> JsonValue:  # noqa: C901 - one explicit-stack pass; frame open/close as functions measured 4-12% slower (bench in docs/benchmarks.md, issue 11)
    """One pass: validate and copy. ``freeze`` builds FrozenDict/FrozenList.

    A frame is ``[items-iterator, out, src, is_dict, key_in_parent, changed]``;
    children are finished before the parent resumes, so a list parent simply
    appends. With ``freeze``, a frozen source whose children all froze to
    themselves is returned as is (it is then deeply frozen and may be shared).
    """
    t = type(value)
    scalar: JsonValue = value  # a str, int, bool, None or finite float is returned as it is
    if t is str or t is int or t is bool or value is None:
        return scalar
    if t is float:
        if _bad_float(value) is not None:
            raise _Invalid
        return scalar
    if t is dict or t is FrozenDict:
        if not _keys_ok(value):
            raise _Invalid
        root: list[Any] = [iter(value.items()), {}, value, True, None, not (freeze and t is FrozenDict)]
    elif t is list or t is FrozenList:
        root = [iter(value), [], value, False, None, not (freeze and t is FrozenList)]
    else:
        raise _Invalid
    ancestors = {id(value)}
    stack = [root]
    result: JsonValue = None
    while stack:
        frame = stack[-1]
        out = frame[1]
        if frame[3]:
            for k, v in frame[0]:
                tv = type(v)
                if tv is str or tv is int or tv is bool or v is None:
                    out[k] = v
                elif tv is dict or tv is FrozenDict:
                    if id(v) in ancestors:
                        raise _Invalid
                    for kk in v:
                        if type(kk) is not str:
                            raise _Invalid
                    ancestors.add(id(v))
                    stack.append([iter(v.items()), {}, v, True, k, not (freeze and tv is FrozenDict)])
                    break
                elif tv is list or tv is FrozenList:
                    if id(v) in ancestors:
                        raise _Invalid
                    ancestors.add(id(v))
                    stack.append([iter(v), [], v, False, k, not (freeze and tv is FrozenList)])
                    break
                elif tv is float:
                    if _bad(v):
                        raise _Invalid
                    out[k] = v
                else:
                    raise _Invalid
            else:
                stack.pop()
                src = frame[2]
                ancestors.discard(id(src))
                if not freeze:
                    done: Any = out
                elif frame[5]:
                    done = _fd(out)
                else:
                    done = src
                if stack:
                    parent = stack[-1]
                    if parent[3]:
                        parent[1][frame[4]] = done
                    else:
                        parent[1].append(done)
                    if done is not src:
                        parent[5] = True
                else:
                    result = done
        else:
            append = out.append
            for v in frame[0]:
                tv = type(v)
                if tv is str or tv is int or tv is bool or v is None:
                    append(v)
                elif tv is dict or tv is FrozenDict:
                    if id(v) in ancestors:
                        raise _Invalid
                    for kk in v:
                        if type(kk) is not str:
                            raise _Invalid
                    ancestors.add(id(v))
                    stack.append([iter(v.items()), {}, v, True, None, not (freeze and tv is FrozenDict)])
                    break
                elif tv is list or tv is FrozenList:
                    if id(v) in ancestors:
                        raise _Invalid
                    ancestors.add(id(v))
                    stack.append([iter(v), [], v, False, None, not (freeze and tv is FrozenList)])
                    break
                elif tv is float:
                    if _bad(v):
                        raise _Invalid
                    append(v)
                else:
                    raise _Invalid
            else:
                stack.pop()
                src = frame[2]
                ancestors.discard(id(src))
                if not freeze:
                    done = out
                elif frame[5]:
                    done = _fl(out)
                else:
                    done = src
                if stack:
                    parent = stack[-1]
                    if parent[3]:
                        parent[1][frame[4]] = done
                    else:
                        parent[1].append(done)
                    if done is not src:
                        parent[5] = True
                else:
                    result = done
    return result


@overload
def snapshot_json_value(value: JsonObject) -> dict[str, JsonValue]: ...
@overload
def snapshot_json_value(value: object) -> JsonValue: ...
def snapshot_json_value(value: object) -> JsonValue:
    """Validate and return a plain, mutable deep copy sharing nothing with ``value``.

    Raises :class:`JsonValueError` (code ``JSON_NOT_LOSSLESS``, ``path`` = JSON
    pointer of the first offending value) for anything outside JSON-1..5;
    never returns ``None`` for invalid input (DEC-2).
    """
    t = type(value)
    value_: Any = value  # each walk below is chosen by the exact type `t`
    scalar: JsonValue = value_  # a str, int, bool, None or finite float is returned as it is
    if t is str or t is int or t is bool or value is None:
        return scalar
    try:
        try:
            if t is dict or t is FrozenDict:
                return _cp_dict(value_, 0)
            if t is list or t is FrozenList:
                return _cp_list(value_, 0)
        except (_TooDeep, RecursionError):
            return _copy_walk(value_, False)
        if t is float and not _bad(value_):
            return scalar
        raise _Invalid
    except _Invalid:
        _fail(value)


@overload
def freeze_json_value(value: JsonObject) -> FrozenDict: ...
@overload
def freeze_json_value(value: object) -> JsonValue: ...
def freeze_json_value(value: object) -> JsonValue:
    """Validate and return a deep read-only copy (FrozenDict/FrozenList) in one pass.

    Already deeply frozen parts (e.g. events of another session) are shared,
    not copied: they are immutable, so sharing is unobservable.
    """
    t = type(value)
    value_: Any = value  # each walk below is chosen by the exact type `t`
    scalar: JsonValue = value_  # a str, int, bool, None or finite float is returned as it is
    if t is str or t is int or t is bool or value is None:
        return scalar
    try:
        try:
            if t is dict:
                return _fz_dict(value_, 0)
            if t is FrozenDict:
                return _fz_fdict(value_, 0)
            if t is list:
                return _fz_list(value_, 0)
            if t is FrozenList:
                return _fz_flist(value_, 0)
        except (_TooDeep, RecursionError):
            return _copy_walk(value_, True)
        if t is float and not _bad(value_):
            return scalar
        raise _Invalid
    except _Invalid:
        _fail(value)


class NotLossless(Exception):
    """Raised by :func:`freeze_parsed` for a parsed value that is not lossless (a ``-0.0``)."""


def _pz_dict(d: dict[str, Any], depth: int) -> FrozenDict:
    if depth > _FAST_DEPTH:
        raise _TooDeep
    for k, v in d.items():  # rebinding existing keys while iterating is allowed (the size never changes)
        c = v.__class__
        if c is dict:
            d[k] = _pz_dict(v, depth + 1)
        elif c is list:
            d[k] = _pz_list(v, depth + 1)
        elif c is float and _bad(v):  # JSON-2, the rule table's float rule (the parser left only -0.0)
            raise NotLossless
    obj = _dict_new(FrozenDict)
    _dict_init(obj, d)  # an exact dict without deleted entries: CPython copies its table in one go
    return obj


def _pz_list(items: list[Any], depth: int) -> FrozenList:
    if depth > _FAST_DEPTH:
        raise _TooDeep
    for i, v in enumerate(items):
        c = v.__class__
        if c is dict:
            items[i] = _pz_dict(v, depth + 1)
        elif c is list:
            items[i] = _pz_list(v, depth + 1)
        elif c is float and _bad(v):
            raise NotLossless
    obj = _list_new(FrozenList)
    _list_init(obj, items)
    return obj


@overload
def freeze_parsed(value: JsonObject) -> FrozenDict: ...
@overload
def freeze_parsed(value: JsonValue) -> JsonValue: ...
def freeze_parsed(value: JsonValue) -> JsonValue:
    """:func:`freeze_json_value` for a value fresh from ``json_text.fast_loads``, which the caller owns.

    The parser already proves most of the lossless domain (exact ``dict``/``list``/``str``/``int``/
    ``float``/``bool``/``None``, ``str`` keys, no NaN or infinity, no cycles), so only the floats are
    asked the rule (``TABLE.float_problem``, JSON-2: of its cases only ``-0.0`` is left); the walk
    converts each container where it stands (its children are rebound to their frozen copies, then
    its table is copied into a ``FrozenDict``/``FrozenList``), as the TypeScript package freezes the
    objects ``JSON.parse`` gave it. The input is consumed: it must not be used afterwards. Raises
    :class:`NotLossless` when a float breaks the rule: the caller then takes the general path, which
    rejects it with its location. Values nested deeper than the recursive walk
    goes are frozen by :func:`freeze_json_value`.
    """
    c = value.__class__  # (the exact class tests narrow ``value`` as mypy's isinstance cannot see)
    try:
        if c is dict:
            return _pz_dict(value, 0)  # type: ignore[arg-type]
        if c is list:
            return _pz_list(value, 0)  # type: ignore[arg-type]
    except (_TooDeep, RecursionError):
        try:
            return freeze_json_value(value)
        except JsonValueError:
            raise NotLossless from None
    if c is float and _bad(value):  # type: ignore[arg-type]
        raise NotLossless
    return value


@overload
def thaw_json_value(value: JsonObject) -> dict[str, JsonValue]: ...
@overload
def thaw_json_value(value: JsonValue) -> JsonValue: ...
def thaw_json_value(value: JsonValue) -> JsonValue:
    """A plain mutable deep copy of a (possibly frozen) JSON value."""
    return snapshot_json_value(value)


def json_equal(a: JsonValue, b: JsonValue) -> bool:  # noqa: C901 - one explicit-stack loop; pushing member pairs in a helper measured 1.1-1.8x slower (issue 11)
    """Deep JSON equality (DEC-4): key order ignored, list order kept, bool is
    not a number, ``1 != 1.0``; dict and FrozenDict (list and FrozenList) are
    the same kind. Iterative, any depth."""
    stack: list[tuple[Any, Any]] = [(a, b)]  # pairs of JSON values, dispatched by exact type
    pop = stack.pop
    push = stack.append
    while stack:
        x, y = pop()
        if x is y:
            continue
        tx = type(x)
        ty = type(y)
        if tx is FrozenDict:
            tx = dict
        elif tx is FrozenList:
            tx = list
        if ty is FrozenDict:
            ty = dict
        elif ty is FrozenList:
            ty = list
        if tx is not ty:
            return False
        if tx is dict:
            if len(x) != len(y):
                return False
            for k, v in x.items():
                if k not in y:
                    return False
                w = y[k]
                if v is w:
                    continue
                tv = type(v)
                if (tv is str or tv is int) and type(w) is tv:
                    if v != w:
                        return False
                    continue
                push((v, w))
        elif tx is list:
            if len(x) != len(y):
                return False
            for v, w in zip(x, y):
                if v is w:
                    continue
                tv = type(v)
                if (tv is str or tv is int) and type(w) is tv:
                    if v != w:
                        return False
                    continue
                push((v, w))
        elif x != y:
            return False
    return True
