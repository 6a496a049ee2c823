"""Strict JSON text (JSON-12..14, DEC-11, DEC-16)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from sessionspec.reference import (
    FrozenDict,
    JsonTextError,
    JsonValueError,
    dumps,
    dumps_bytes,
    freeze_json_value,
    json_equal,
    loads,
    loads_with_duplicates,
    snapshot_json_value,
)
from strategies import deep_value, json_values


@pytest.mark.parametrize("text", ["NaN", "Infinity", "-Infinity", '{"a": NaN}', "[1, Infinity]", "[-Infinity]"])
def test_json12_nan_and_infinity_tokens_rejected(text: str) -> None:
    with pytest.raises(JsonTextError) as info:
        loads(text)
    assert info.value.code == "JSON_TEXT_INVALID" and info.value.requirement == "JSON-12"


@pytest.mark.parametrize(
    "text",
    ["", "[1,]", '{"a":1,}', "\ufeff1", "1 2", "[1 2]", '{"a" 1}', "{1:2}", "'x'", '"a\x01"', "tru", "01", "1e400", "-", "[", "{"],
)
def test_json12_invalid_text_rejected_with_location(text: str) -> None:
    with pytest.raises(JsonTextError) as info:
        loads(text)
    assert "line 1 column" in str(info.value)


def test_json12_error_reports_line_and_column() -> None:
    with pytest.raises(JsonTextError) as info:
        loads('{\n  "a": [1,\n   NaN]\n}')
    err = info.value
    assert (err.line, err.column) == (3, 4)  # type: ignore[attr-defined]
    with pytest.raises(JsonTextError) as info2:
        loads(b'{"a": 1}\n  x')
    assert (info2.value.line, info2.value.column) == (2, 3)  # type: ignore[attr-defined]


def test_json12_invalid_utf8_and_wrong_input_type_rejected() -> None:
    with pytest.raises(JsonTextError):
        loads(b'"\xff"')
    with pytest.raises(JsonTextError):
        loads(12)  # type: ignore[arg-type]


def test_json12_dec11_last_duplicate_key_wins_at_first_position() -> None:
    value = loads('{"a":1,"b":2,"a":3}')
    assert value == {"a": 3, "b": 2} and list(value) == ["a", "b"]
    value, dups = loads_with_duplicates('{"x":{"y":1,"y":2},"z":[{"a/b":1,"a/b":2}],"x2":0}')
    assert value == {"x": {"y": 2}, "z": [{"a/b": 2}], "x2": 0}
    assert dups == ["/x/y", "/z/0/a~1b"]
    assert loads_with_duplicates("[1]") == ([1], [])


def test_json12_bytes_and_str_inputs_agree() -> None:
    text = '{"a":[1,2.5,"é",null,true,false,{"b":"\\u00e9"}]}'
    assert loads(text) == loads(text.encode()) == json.loads(text)


def test_json13_dec11_compact_separators_and_no_nan() -> None:
    assert dumps({"a": [1, 2], "b": {"c": None}}) == '{"a":[1,2],"b":{"c":null}}'
    for bad in (float("nan"), [float("inf")], {"a": float("-inf")}):
        with pytest.raises(JsonTextError) as info:
            dumps(bad)
        assert info.value.requirement == "JSON-13"
    with pytest.raises(JsonTextError) as info:
        dumps({"a": [1, float("nan")]})
    assert info.value.path == "/a/1"


@pytest.mark.parametrize("bad", [(1,), {1: 2}, {1, 2}, b"x", object()], ids=lambda v: type(v).__name__)
def test_json13_non_json_types_refused(bad: Any) -> None:
    with pytest.raises(JsonTextError):
        dumps({"k": bad})


def test_json13_cycle_refused() -> None:
    cyclic: list[Any] = []
    cyclic.append(cyclic)
    with pytest.raises(JsonTextError):
        dumps(cyclic)


@pytest.mark.parametrize("text", ["\ud800", "a\udfffb", "\udbff\ud800", "é😀\ud83d"])
def test_json13_lone_surrogates_round_trip(text: str) -> None:
    out = dumps({"s": text})
    assert loads(out) == {"s": text}
    assert loads(dumps_bytes([text])) == [text]
    dumps_bytes(text).decode("utf-8")  # always valid UTF-8


def test_json14_negative_zero_divergence() -> None:
    assert loads("-0") == 0 and type(loads("-0")) is int
    negzero = loads("-0.0")
    assert negzero == 0.0 and str(negzero) == "-0.0"
    with pytest.raises(JsonValueError):
        snapshot_json_value(negzero)
    assert dumps(-0.0) == "-0.0"  # valid JSON text; the value domain rejects it, not the writer


@pytest.mark.parametrize("value", [2**64, 2**64 - 1, -(2**63) - 1, 10**30, -(10**30), 10**5000 + 7, -(10**9000)], ids=lambda v: f"{v.bit_length()}bits")
def test_dec3_big_integers_round_trip_exactly(value: int) -> None:
    """Any magnitude, even past CPython's 4300-digit int/str conversion limit."""
    text = dumps({"n": value})
    assert loads(text) == {"n": value}
    assert type(loads(text)["n"]) is int


def test_dec3_long_digit_runs_inside_strings_and_floats_read_correctly() -> None:
    assert loads('"12345678901234567890123"') == "12345678901234567890123"
    assert loads("0.12345678901234567890123") == 0.12345678901234567890123


def test_frozen_values_serialise_like_plain_ones() -> None:
    frozen = freeze_json_value({"a": [1, {"b": "x"}]})
    assert dumps(frozen) == dumps({"a": [1, {"b": "x"}]}) == '{"a":[1,{"b":"x"}]}'
    assert type(loads(dumps(frozen))) is dict
    assert dumps(FrozenDict({"a": 1})) == '{"a":1}'


@pytest.mark.parametrize("depth", [300, 2_000, 10_000])
def test_dec16_any_depth_through_dumps_and_loads(depth: int) -> None:
    value = deep_value(depth)
    text = dumps(value)
    if depth <= 300:  # within the stdlib's reach: same text as json.dumps
        assert text == json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    back = loads(text)
    assert json_equal(back, value)
    assert dumps(freeze_json_value(value)) == text
    assert loads(text.encode()) is not None


@given(json_values())
def test_json13_round_trip_property(value: Any) -> None:
    text = dumps(value)
    assert json_equal(loads(text), value)
    assert json_equal(loads(dumps_bytes(value)), value)
    assert json_equal(loads(dumps(freeze_json_value(value))), value)


def test_json13_known_limit_adjacent_surrogate_code_points_read_back_combined() -> None:
    """Documented in json_text: in UTF-16 (JavaScript) the two strings are the same."""
    assert loads(dumps("\ud83d\ude00")) == "\U0001f600"
