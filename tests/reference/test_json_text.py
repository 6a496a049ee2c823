"""Strict JSON text (JSON-12..14, DEC-11, DEC-16)."""

from __future__ import annotations

import json
import pickle
from pathlib import Path
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
from sessionspec.reference.json_text import ANOMALY_KINDS, Anomaly, JsonSyntaxError, parse
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


@pytest.mark.parametrize("value", [2**64, 2**64 - 1, -(2**63) - 1, 10**30, -(10**30), 10**3999 + 7, -(10**3999)], ids=lambda v: f"{v.bit_length()}bits")
def test_dec3_big_integers_round_trip_exactly(value: int) -> None:
    """Any magnitude up to 4,000 digits (DEC-3), by the exact reader when the fast ones decline."""
    text = dumps({"n": value})
    assert loads(text) == {"n": value}
    assert type(loads(text)["n"]) is int


@pytest.mark.parametrize("value", [10**4500, -(10**5000) - 7, 10**9000], ids=lambda v: f"{v.bit_length()}bits")
def test_dec3_an_integer_past_4000_digits_is_refused_by_the_exact_reader(value: int) -> None:
    """Reading one and writing it back cost time quadratic in its digits (32 MiB of 100,000-digit integers: 31 s;
    issue 25); a JavaScript loader reads it as Infinity (JSON-2). The writer still writes it (any Python int)."""
    from sessionspec.reference.json_text import MAX_INT_DIGITS, JsonSyntaxError

    text = dumps({"n": value})
    assert len(dumps(value).lstrip("-")) > MAX_INT_DIGITS == 4000
    with pytest.raises(JsonSyntaxError) as caught:
        loads(text)
    assert caught.value.kind == "number-range" and "digits is past the 4000" in caught.value.reason


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


# ---- the one exact parser and its diagnostics hook (validators) -----------------------------


def _diagnosed(text: str) -> tuple[Any, list[tuple[str, str]]]:
    found: list[Anomaly] = []
    value = parse(text, on_anomaly=found.append, infinity=True)
    return value, [(a.kind, a.pointer) for a in found]


def test_the_hook_reports_every_anomaly_located_in_document_order() -> None:
    text = '{"a":{"b":1,"b":2},"\\ud800":[3, "x\\udfff", 9007199254740992, -0.0, 1e400, -12345678901234567890]}'
    value, found = _diagnosed(text)
    assert found == [
        ("duplicate-key", "/a/b"),
        ("lone-surrogate", "/\ud800"),
        ("lone-surrogate", "/\ud800/1"),
        ("unsafe-integer", "/\ud800/2"),
        ("negative-zero", "/\ud800/3"),
        ("infinite-number", "/\ud800/4"),
        ("unsafe-integer", "/\ud800/5"),
    ]
    assert value["a"] == {"b": 2} and value["\ud800"][4] == float("inf")
    assert set(ANOMALY_KINDS) - {"invalid-utf8"} == {kind for kind, _ in found}


def test_log_text_that_is_not_utf8_reads_replaced_with_its_byte_located() -> None:
    found: list[Anomaly] = []
    assert loads(b'{"a":"x\xff"}', on_anomaly=found.append, invalid_utf8="replace") == {"a": "x\ufffd"}
    assert [(a.kind, a.offset) for a in found] == [("invalid-utf8", 7)]
    with pytest.raises(JsonTextError):
        loads(b'{"a":"x\xff"}')


def test_the_hook_sees_a_root_value_and_nothing_on_clean_text() -> None:
    assert _diagnosed('"\\ud83d"') == ("\ud83d", [("lone-surrogate", "")])
    assert _diagnosed('{"a":[1,2.5,"\\ud83d\\ude00",9007199254740991,-0,0.0]}')[1] == []


def test_infinity_mode_reads_overflow_as_javascript_does_strict_mode_refuses_or_keeps_it_exact() -> None:
    big = "7" * 5000
    assert _diagnosed(f"[-{big}]") == ([float("-inf")], [("infinite-number", "/0")])
    exact = "7" * 4000  # DEC-3: exact up to 4,000 digits; past them the strict reader refuses (a loader reads infinity)
    assert parse(f"[-{exact}]") == loads(f"[-{exact}]") and parse(f"[-{exact}]")[0] % 10**9 == 10**9 - 777777777
    with pytest.raises(JsonSyntaxError) as past:
        parse(f"[-{big}]")
    assert (past.value.kind, past.value.offset) == ("number-range", 1)
    with pytest.raises(JsonSyntaxError) as info:
        parse("[1e400]")
    assert (info.value.kind, info.value.offset) == ("number-range", 1)


@pytest.mark.parametrize(
    ("text", "kind", "offset", "reason"),
    [
        (" \n ", "empty", 3, "empty JSON text"),
        ('{"a": -Infinity}', "nan-literal", 6, "-Infinity is not a JSON value (JSON-12)"),
        ('["a\x01"]', "control-char", 3, "invalid string: Invalid control character at"),
        ('["a', "syntax", 1, "invalid string: Unterminated string starting at"),
        ("[1,", "syntax", 3, "unexpected end of text, expected a value"),
        ("[1", "syntax", 2, "unexpected end of text inside a container"),
        ('{"a" 1}', "syntax", 5, "expected ':' after an object key"),
        ("{1:2}", "syntax", 1, "expected a string key"),
        ("[1 2]", "syntax", 3, "expected ',' or ']', found '2'"),
        ("[] x", "syntax", 3, "extra data after the JSON value"),
        ("[tru]", "syntax", 1, "unexpected character 't', expected a value"),
    ],
)
def test_syntax_errors_carry_kind_offset_reason_and_line_column(text: str, kind: str, offset: int, reason: str) -> None:
    for hook in (None, [].append):
        with pytest.raises(JsonSyntaxError) as info:
            parse(text, on_anomaly=hook, infinity=hook is not None)
        err = info.value
        assert (err.kind, err.offset, err.reason) == (kind, offset, reason)
        assert err.code == "JSON_TEXT_INVALID" and err.requirement == "JSON-12"
        assert f"line {err.line} column {err.column}: {reason}" in str(err)
    assert pickle.loads(pickle.dumps(err)).reason == reason


def test_one_exact_json_parser_in_the_project() -> None:
    """The validator's diagnostics are a hook of the reference's parser, not a second parser."""
    root = Path(__file__).resolve().parents[2]
    scanners = sorted(
        str(p.relative_to(root)) for folder in ("reference", "tools", "conformance", "spec") for p in (root / folder).rglob("*.py")
        if "scanstring" in p.read_text(encoding="utf-8")
    )
    assert scanners == ["reference/json_text.py"]


def test_anomalies_past_the_cap_are_one_that_counts_them() -> None:
    """Each anomaly with its JSON pointer cost 10 us: a line of a million repeated keys took `validate` 21 s
    (issue 25). The first ANOMALY_CAP of a kind are reported one by one, then one anomaly counts the rest."""
    from sessionspec.reference import json_text

    cap = json_text.ANOMALY_CAP
    found: list[json_text.Anomaly] = []
    text = "{" + '"a":-0.0,' * (cap + 50) + '"b":1}'
    assert parse(text, on_anomaly=found.append) == {"a": 0.0, "b": 1}
    duplicates = [a for a in found if a.kind == "duplicate-key"]
    zeros = [a for a in found if a.kind == "negative-zero"]
    assert len(duplicates) == cap + 1 and len(zeros) == cap + 1
    assert duplicates[-1].pointer == "" and duplicates[-1].detail.startswith(f"{cap + 49 - cap} more")
    assert zeros[-1].detail.startswith("50 more of this kind in this text")
    assert all(a.pointer == "/a" for a in duplicates[:-1] + zeros[:-1])
