"""Lossless JSON values (JSON-1..11, DEC-1..5, DEC-16)."""

from __future__ import annotations

import collections
import copy
import datetime
import decimal
import enum
import fractions
import pickle
from typing import Any

import pytest
from hypothesis import given
from sessionspec.reference import (
    MAX_SAFE_INTEGER,
    FrozenDict,
    FrozenList,
    JsonValueError,
    freeze_json_value,
    gc_paused,
    is_json_value,
    is_nonneg_safe_int,
    is_safe_int,
    json_equal,
    snapshot_json_value,
    thaw_json_value,
)
from sessionspec.reference.json_value import json_pointer
from strategies import deep_value, json_values


class Color(enum.IntEnum):
    RED = 1


class Name(str, enum.Enum):
    A = "a"


class MyDict(dict):  # type: ignore[type-arg]
    pass


class MyList(list):  # type: ignore[type-arg]
    pass


ACCEPTED: list[Any] = [
    None,
    True,
    False,
    0,
    -5,
    2**80,
    0.0,
    1.5,
    -2.5e300,
    "",
    "text",
    "\ud800",
    [],
    {},
    {"a": [1, {"b": None}], "c": "x"},
    FrozenDict({"a": 1}),
    FrozenList([1, 2]),
]

REJECTED: list[Any] = [
    float("nan"),
    float("inf"),
    float("-inf"),
    -0.0,
    (1, 2),
    {1, 2},
    frozenset({1}),
    b"bytes",
    bytearray(b"x"),
    decimal.Decimal("1.5"),
    fractions.Fraction(1, 3),
    1j,
    datetime.date(2020, 1, 1),
    len,
    object(),
    Color.RED,
    Name.A,
    collections.OrderedDict(a=1),
    collections.defaultdict(int),
    MyDict(a=1),
    MyList([1]),
    {1: "int key"},
    {1.5: "float key"},
    {True: "bool key"},
    {None: "none key"},
    {(1,): "tuple key"},
]


# ------------------------------------------------------------------ JSON-1..4
@pytest.mark.parametrize("value", ACCEPTED, ids=repr)
def test_json1_accepts_exactly_the_json_domain(value: Any) -> None:
    assert is_json_value(value) is True
    assert json_equal(snapshot_json_value(value), value)
    assert json_equal(freeze_json_value(value), value)


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf"), -0.0], ids=repr)
def test_json2_non_finite_and_negative_zero_rejected_anywhere(value: float) -> None:
    for wrapped in (value, [value], {"a": {"b": [1, value]}}):
        assert is_json_value(wrapped) is False
        with pytest.raises(JsonValueError):
            snapshot_json_value(wrapped)
        with pytest.raises(JsonValueError) as info:
            freeze_json_value(wrapped)
        assert info.value.requirement == "JSON-2"
    assert is_json_value(0.0) and is_json_value(0)


@pytest.mark.parametrize("value", REJECTED, ids=lambda v: type(v).__name__)
def test_json3_json4_other_types_subclasses_and_non_str_keys_rejected(value: Any) -> None:
    for wrapped in (value, [value], {"k": [value]}):
        assert is_json_value(wrapped) is False
        with pytest.raises(JsonValueError) as info:
            snapshot_json_value(wrapped)
        assert info.value.code == "JSON_NOT_LOSSLESS"
        expected = {dict: "JSON-4", float: "JSON-2"}.get(type(value), "JSON-3")
        assert info.value.requirement == expected


def test_dec1_bool_is_never_a_number_and_types_are_exact() -> None:
    snap = snapshot_json_value({"t": True, "one": 1})
    assert type(snap["t"]) is bool and type(snap["one"]) is int
    assert not json_equal(True, 1) and not json_equal([1], [True]) and not json_equal(0, False)


def test_json5_cycle_rejected_but_shared_containers_copied_independently() -> None:
    cyclic: dict[str, Any] = {"a": []}
    cyclic["a"].append(cyclic)
    assert not is_json_value(cyclic)
    with pytest.raises(JsonValueError) as info:
        snapshot_json_value(cyclic)
    assert info.value.path == "/a/0" and info.value.requirement == "JSON-5"
    self_list: list[Any] = []
    self_list.append(self_list)
    assert not is_json_value(self_list)

    shared = {"v": 1}
    source = {"x": shared, "y": [shared, shared]}
    for copy_ in (snapshot_json_value(source), freeze_json_value(source)):
        assert copy_ == {"x": {"v": 1}, "y": [{"v": 1}, {"v": 1}]}
        assert copy_["x"] is not shared
    snap = snapshot_json_value(source)
    assert snap["x"] is not snap["y"][0] and snap["y"][0] is not snap["y"][1]


def test_json5_cycle_through_a_frozen_container_rejected() -> None:
    inner: list[Any] = []
    frozen = FrozenDict({"inner": inner})
    inner.append(frozen)
    assert not is_json_value(frozen)
    with pytest.raises(JsonValueError):
        freeze_json_value(frozen)


@pytest.mark.parametrize("depth", [5_000, 10_000])
def test_json6_dec16_deep_nesting_without_recursion_error(depth: int) -> None:
    value = deep_value(depth)
    assert is_json_value(value)
    snap = snapshot_json_value(value)
    frozen = freeze_json_value(value)
    assert json_equal(snap, value) and json_equal(frozen, value) and json_equal(frozen, snap)
    assert thaw_json_value(frozen) is not None
    # walk to the leaf to show the copy really is that deep
    cursor: Any = frozen
    for _ in range(depth):
        cursor = cursor[0] if type(cursor) is FrozenList else cursor["k"]
    assert cursor == "leaf"
    bad = deep_value(depth, leaf=float("nan"))
    assert not is_json_value(bad)
    with pytest.raises(JsonValueError) as info:
        freeze_json_value(bad)
    assert info.value.path.count("/") == depth


def test_json7_snapshot_is_detached_and_plain() -> None:
    source = {"a": [1, {"b": 2}], "f": FrozenList([FrozenDict({"x": 1})])}
    snap = snapshot_json_value(source)
    source["a"][1]["b"] = 99
    source["a"].append(3)
    assert snap == {"a": [1, {"b": 2}], "f": [{"x": 1}]}
    assert type(snap["f"]) is list and type(snap["f"][0]) is dict  # plain and mutable
    snap["f"].append(1)


def test_json8_dec2_invalid_raises_never_returns_none() -> None:
    assert snapshot_json_value(None) is None  # JSON null is a value
    with pytest.raises(JsonValueError) as info:
        snapshot_json_value({"a": {"b": [0, {1, 2}]}})
    err = info.value
    assert err.code == "JSON_NOT_LOSSLESS" and err.requirement == "JSON-3"
    assert err.path == "/a/b/1"
    assert "set" in err.message


def test_json8_error_pointer_escapes_tilde_and_slash() -> None:
    with pytest.raises(JsonValueError) as info:
        snapshot_json_value({"a/b": {"c~d": [float("inf")]}})
    assert info.value.path == "/a~1b/c~0d/0"
    assert json_pointer([]) == "" and json_pointer(["", 0]) == "//0"


@given(json_values())
def test_json9_is_json_value_agrees_with_snapshot(value: Any) -> None:
    assert is_json_value(value)
    assert json_equal(snapshot_json_value(value), value)


@pytest.mark.parametrize("value", REJECTED + [float("nan"), -0.0], ids=lambda v: type(v).__name__)
def test_json9_is_json_value_false_without_raising(value: Any) -> None:
    assert is_json_value({"x": value}) is False


def test_json10_proto_key_is_ordinary() -> None:
    snap = snapshot_json_value({"__proto__": {"polluted": True}, "a": 1})
    assert snap == {"__proto__": {"polluted": True}, "a": 1}
    assert list(freeze_json_value({"__proto__": 1})) == ["__proto__"]


def test_json11_key_order_preserved_but_not_compared() -> None:
    source = {"z": 1, "a": 2, "m": 3}
    assert list(snapshot_json_value(source)) == ["z", "a", "m"]
    assert list(freeze_json_value(source)) == ["z", "a", "m"]
    assert json_equal({"a": 1, "b": [1, 2]}, {"b": [1, 2], "a": 1})
    assert not json_equal([1, 2], [2, 1])


# ------------------------------------------------------------------- DEC-3..5
def test_dec3_big_integers_accepted_safe_int_helpers_bounded() -> None:
    assert is_json_value(2**200) and snapshot_json_value(-(2**200)) == -(2**200)
    assert is_safe_int(MAX_SAFE_INTEGER) and is_safe_int(-MAX_SAFE_INTEGER)
    assert not is_safe_int(MAX_SAFE_INTEGER + 1) and not is_safe_int(-MAX_SAFE_INTEGER - 1)
    assert not is_safe_int(True) and not is_safe_int(1.0) and not is_safe_int("1")
    assert is_nonneg_safe_int(0) and not is_nonneg_safe_int(-1) and not is_nonneg_safe_int(False)
    assert MAX_SAFE_INTEGER == 2**53 - 1


def test_dec4_deep_equality() -> None:
    assert json_equal({"a": [1, {"b": "x"}]}, FrozenDict({"a": FrozenList([1, FrozenDict({"b": "x"})])}))
    assert not json_equal(1, 1.0)
    assert not json_equal({"a": 1}, {"a": 1, "b": 2})
    assert not json_equal({"a": 1}, {"b": 1})
    assert not json_equal([], {})
    assert not json_equal(None, False)
    assert json_equal(2**70, 2**70) and json_equal(0.5, 0.5)
    assert json_equal(deep_value(10_000), deep_value(10_000))
    assert not json_equal(deep_value(10_000), deep_value(10_000, leaf="other"))


DICT_MUTATIONS = [
    lambda d: d.__setitem__("a", 2),
    lambda d: d.__delitem__("a"),
    lambda d: d.update(b=1),
    lambda d: d.pop("a"),
    lambda d: d.popitem(),
    lambda d: d.clear(),
    lambda d: d.setdefault("z", 1),
    lambda d: d.__ior__({"z": 1}),
]
LIST_MUTATIONS = [
    lambda x: x.__setitem__(0, 2),
    lambda x: x.__setitem__(slice(0, 1), [2]),
    lambda x: x.__delitem__(0),
    lambda x: x.append(1),
    lambda x: x.extend([1]),
    lambda x: x.insert(0, 1),
    lambda x: x.remove(1),
    lambda x: x.pop(),
    lambda x: x.clear(),
    lambda x: x.sort(),
    lambda x: x.reverse(),
    lambda x: x.__iadd__([1]),
    lambda x: x.__imul__(2),
]


@pytest.mark.parametrize("mutate", DICT_MUTATIONS)
def test_dec5_frozen_dict_mutators_raise(mutate: Any) -> None:
    frozen = freeze_json_value({"a": 1, "n": {"x": [1]}})
    with pytest.raises(TypeError):
        mutate(frozen)
    with pytest.raises(TypeError):
        mutate(frozen["n"])
    assert frozen == {"a": 1, "n": {"x": [1]}}


@pytest.mark.parametrize("mutate", LIST_MUTATIONS)
def test_dec5_frozen_list_mutators_raise(mutate: Any) -> None:
    frozen = freeze_json_value([1, [1, 2]])
    with pytest.raises(TypeError):
        mutate(frozen)
    with pytest.raises(TypeError):
        mutate(frozen[1])
    assert frozen == [1, [1, 2]]


def test_dec5_augmented_assignment_and_reinit_do_not_mutate() -> None:
    frozen = freeze_json_value({"l": [1]})
    alias = frozen
    with pytest.raises(TypeError):
        alias |= {"x": 1}
    lst = frozen["l"]
    with pytest.raises(TypeError):
        lst += [2]
    frozen.__init__({"evil": 1})  # type: ignore[misc]
    lst.__init__([9])  # type: ignore[misc]
    assert frozen == {"l": [1]} and lst == [1]
    with pytest.raises(AttributeError):
        frozen.extra = 1  # type: ignore[attr-defined]
    with pytest.raises(TypeError):
        hash(frozen)


def test_dec5_frozen_containers_compare_copy_and_pickle_sensibly() -> None:
    frozen = freeze_json_value({"a": [1, {"b": 2}]})
    assert frozen == {"a": [1, {"b": 2}]} and isinstance(frozen, dict)
    assert copy.copy(frozen) is frozen
    assert copy.deepcopy(frozen) is frozen  # deeply frozen: sharing is safe
    restored = pickle.loads(pickle.dumps(frozen))
    assert restored == frozen and type(restored) is FrozenDict and type(restored["a"]) is FrozenList
    thawed = thaw_json_value(frozen)
    assert type(thawed) is dict and type(thawed["a"]) is list and type(thawed["a"][1]) is dict
    thawed["a"].append(3)
    assert frozen == {"a": [1, {"b": 2}]}
    assert FrozenList([1]) + [2] == [1, 2]  # non-mutating operators give plain lists


def test_dec5_freeze_shares_deeply_frozen_values_and_refreezes_shallow_ones() -> None:
    frozen = freeze_json_value({"a": [1, {"b": 2}]})
    assert freeze_json_value(frozen) is frozen
    shallow = FrozenDict({"inner": [1, 2], "deep": frozen})
    refrozen = freeze_json_value(shallow)
    assert refrozen is not shallow and type(refrozen["inner"]) is FrozenList
    assert refrozen["deep"] is frozen  # frozen parts shared
    assert FrozenList([FrozenList([1])]) is not None
    fl = FrozenList([frozen, [3]])
    out = freeze_json_value(fl)
    assert out is not fl and out[0] is frozen and type(out[1]) is FrozenList


@given(json_values())
def test_dec5_snapshot_freeze_thaw_round_trip(value: Any) -> None:
    frozen = freeze_json_value(value)
    assert json_equal(frozen, value)
    thawed = thaw_json_value(frozen)
    assert json_equal(thawed, value)
    assert freeze_json_value(frozen) is frozen or not isinstance(frozen, (dict, list))
    assert json_equal(snapshot_json_value(thawed), value)


def test_gc_paused_restores_collector_state() -> None:
    import gc

    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_json_hot_path_is_linear_and_fast() -> None:
    """Freezing 20,000 realistic events must stay far below a second (append/seed hot path)."""
    import time

    events = [
        {
            "type": "assistant/chunk",
            "seq": i,
            "time": 1_700_000_000_000 + i,
            "data": {"turn": 1, "step": 1, "chunk": {"type": "text-delta", "index": 0, "text": "tok"}},
        }
        for i in range(20_000)
    ]
    start = time.process_time()
    with gc_paused():
        frozen = [freeze_json_value(e) for e in events]
    assert time.process_time() - start < 1.0
    assert frozen[-1]["data"]["chunk"]["text"] == "tok"
