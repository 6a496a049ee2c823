"""Strict JSON text (JSON-12..14, DEC-11, DEC-16)."""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from typing import Any

import msgspec
import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sessionspec.reference import (
    FrozenDict,
    JsonTextError,
    JsonValueError,
    dumps,
    dumps_bytes,
    freeze_json_value,
    json_equal,
    json_text,
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


# ------------------------------------------------------------------- lossless text (json_text.lossless)
def _same(one: Any, two: Any) -> bool:
    """Equal values with the same types all the way down (a float's sign too)."""
    if type(one) is not type(two):
        return False
    if type(one) is dict:
        return list(one) == list(two) and all(_same(one[k], two[k]) for k in one)
    if type(one) is list:
        return len(one) == len(two) and all(_same(a, b) for a, b in zip(one, two))
    if type(one) is float:
        return repr(one) == repr(two)
    return bool(one == two)


#: pieces a damaged JSON text holds: negative zero, a number beyond a double, integers past 2^53, repeated keys,
#: escapes a writer would not write, lone surrogates, a byte-order mark, CR and other white space
_PIECES = [b"-0.0", b"-0.0e0", b"-0", b"0.0", b"1e400", b"-1e400", b"9007199254740993", b"123456789012345678901234567890",
           b'"\\u00e9"', b'"\\ud800"', b'"\\n"', b'"\\/"', b"\xef\xbb\xbf", b"\r", b" ", b"\t", b"\n", b'{"a":1,"a":2}',
           b'{"a":1,"b":2}', b"1.5e3", b"1500.0", b"[0.1]", b'"-0.0"', b"true", b"null"]


@st.composite
def _texts(draw: Any) -> bytes:
    """Canonical texts of JSON values (orjson's), and texts with damaged pieces spliced into them."""
    value = draw(json_values(big_ints=True, max_leaves=8))
    try:
        text = orjson.dumps(value)
    except (TypeError, orjson.JSONEncodeError):
        text = json_text.dumps(value).encode("utf-8", "surrogatepass")
    for _ in range(draw(st.integers(0, 3))):
        piece = draw(st.sampled_from(_PIECES))
        how = draw(st.integers(0, 2))
        if how == 0:  # as a member or an element of the whole value
            text = b'{"k":' + piece + b',"v":' + text + b"}" if draw(st.booleans()) else b"[" + text + b"," + piece + b"]"
        elif how == 1:  # anywhere
            at = draw(st.integers(0, len(text)))
            text = text[:at] + piece + text[at:]
        else:
            text = piece
    return text


def _writers(text: bytes) -> list[bytes]:
    """The re-encodings of the value a reader reads from ``text``, by the writers the statement names: orjson's with
    integers held to ±(2^53-1), and msgspec's of a value whose integers are safe (the generated types hold them so)."""
    found = []
    try:
        found.append(orjson.dumps(orjson.loads(text), option=orjson.OPT_STRICT_INTEGER))
    except (orjson.JSONDecodeError, orjson.JSONEncodeError):
        pass
    try:
        value = msgspec.json.decode(text)
    except msgspec.DecodeError:
        return found

    def safe(v: Any) -> bool:
        if type(v) is int:
            return -(2**53 - 1) <= v <= 2**53 - 1
        if type(v) is dict:
            return all(map(safe, v.values()))
        return all(map(safe, v)) if type(v) is list else True

    if safe(value):
        found.append(msgspec.json.encode(value))
    return found


@pytest.mark.req("JSON-2", "JSON-12", "DEC-3")
@given(_texts())
def test_a_text_the_statement_calls_lossless_reads_with_no_anomaly_to_the_same_value(text: bytes) -> None:
    """`json_text.lossless` (the fast pass's and `loads`' one statement of lossless JSON text): whenever it holds, the
    exact reader reports no anomaly and reads the value the writer wrote, with the same types; the batch form
    (`first_lossy_line`) says the same of each line of a text."""
    for encoded in _writers(text):
        anomalies: list[Anomaly] = []
        said = json_text.lossless(text, encoded)
        if b"\n" not in text:  # (one line: the batch form's answer is about it alone)
            assert json_text.first_lossy_line(text + b"\n", 0, encoded + b"\n", 0) == (None if said else 0)
        if not said:
            continue
        exact = parse(text.decode("utf-8"), on_anomaly=anomalies.append, infinity=True)
        assert anomalies == []
        assert _same(exact, orjson.loads(text))
        assert _same(json_text.loads(text, on_anomaly=anomalies.append, infinity=True), exact) and anomalies == []
        assert b"\r" not in text and not text.startswith(b"\xef\xbb\xbf")


@pytest.mark.req("JSON-2")
def test_the_statement_refuses_negative_zero_and_damage_and_takes_canonical_text() -> None:
    canonical = b'{"a":[1,0.5,"x"],"b":null}'
    assert json_text.lossless(canonical, orjson.dumps(orjson.loads(canonical)))
    for text in (b'{"a":-0.0}', b'{"a":1,"a":2}', b'{"a": 1}', b'\xef\xbb\xbf{"a":1}', b'{"a":1}\r', b'{"a":"\\u00e9"}',
                 b'{"a":1.50}'):
        encoded = _writers(text)
        assert encoded == [] or not any(json_text.lossless(text, e) for e in encoded), text
    assert json_text.lossless(b'{"a":-0.0}', b'{"a":-0.0}', negative_zero=False)  # (the caller's types cannot hold one)


@given(st.binary(max_size=3000), st.binary(max_size=3000), st.integers(0, 40), st.integers(0, 40), st.data())
def test_the_first_difference_of_two_tails_is_the_first_byte_where_they_differ(one, two, skip_one, skip_two, data):
    """`first_lossy_line`'s comparison (doubling windows, bisection, a scan; no copy of the tails) against a byte by
    byte scan, on tails that share a long prefix and on unrelated ones."""
    from sessionspec.reference.json_text import _first_difference

    if data.draw(st.booleans()):
        two = one[:data.draw(st.integers(0, len(one)))] + two
    start_one, start_two = min(skip_one, len(one)), min(skip_two, len(two))
    if data.draw(st.booleans()):
        two = two[:start_two] + one[start_one:] + two[start_two:][:data.draw(st.integers(0, 3))]
    a, b = one[start_one:], two[start_two:]
    expected = next((i for i in range(min(len(a), len(b))) if a[i] != b[i]), None if len(a) == len(b) else min(len(a), len(b)))
    assert _first_difference(one, start_one, two, start_two) == (None if expected is None else start_two + expected)


# ------------------------------------------------------------------- another writer's layout (json_text.laid_out)
#: how other writers lay out JSON: Python's `json.dumps` (spaces, ASCII escapes, sorted keys, indents), Go's encoder
#: (HTML characters and U+2028/2029 escaped), tabs between tokens
def _go_escaped(text: str) -> str:
    for char, escape in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(char, escape)
    return text


@st.composite
def _laid_out_texts(draw: Any) -> bytes:
    """Texts of JSON values in other writers' layouts, and with damaged pieces spliced into them (repeated keys,
    quotes written ``\\u0022``, negative zero, unsafe integers, lone surrogates, ...)."""
    value = draw(json_values(big_ints=True, max_leaves=8))
    writer = draw(st.sampled_from(["python", "ascii", "sorted", "indent", "go", "tabs"]))
    if writer == "indent":
        text = json.dumps(value, indent=draw(st.sampled_from([0, 2])), ensure_ascii=draw(st.booleans()))
    elif writer == "go":
        text = _go_escaped(json.dumps(value, ensure_ascii=False, separators=(",", ":")))
    elif writer == "tabs":
        text = json.dumps(value, ensure_ascii=False, separators=(",\t", "\t:\t"))
    else:
        text = json.dumps(value, ensure_ascii=writer != "python", sort_keys=writer == "sorted")
    raw = text.encode("utf-8", "surrogatepass")
    for _ in range(draw(st.integers(0, 2))):
        piece = draw(st.sampled_from([*_PIECES, b'"\\u0022"', b'{"a":"\\u0022","a":1}', b'{"a" : 1, "a" : 2}',
                                      b'{"q":"\\"","q":0}']))
        at = draw(st.integers(0, len(raw)))
        raw = (b'{"k": ' + piece + b', "v": ' + raw + b"}") if draw(st.booleans()) else raw[:at] + piece + raw[at:]
    return raw


@pytest.mark.req("JSON-2", "JSON-12", "DEC-3")
@given(_laid_out_texts())
def test_a_text_the_statement_calls_laid_out_reads_with_no_anomaly_to_the_same_value(text: bytes) -> None:
    """`json_text.laid_out` (a lossless text in another writer's layout): whenever it holds of the canonical text of the
    value msgspec reads, the exact reader reports no anomaly and reads that value, with the same types and member
    order; and `loads`, which takes it so, always agrees with the exact reader (value and anomalies)."""
    try:
        value = msgspec.json.decode(text)
    except (msgspec.DecodeError, RecursionError):
        value = None
    if value is not None:
        encodings = [msgspec.json.encode(value)]  # (msgspec's: the generated types hold integers to the safe range)
        try:
            encodings.append(orjson.dumps(value, option=orjson.OPT_STRICT_INTEGER))
        except orjson.JSONEncodeError:
            encodings.clear()  # (an unsafe integer, which no such type holds)
        for encoded in encodings:
            if not json_text.laid_out(text, encoded):
                continue
            anomalies: list[Anomaly] = []
            exact = parse(text.decode("utf-8"), on_anomaly=anomalies.append, infinity=True)
            assert anomalies == [] and _same(exact, value), text
            assert not json_text.lossless(text, encoded)  # (a text equal to its encoding is lossless's to judge)
    try:
        decoded = text.decode("utf-8")
    except UnicodeDecodeError:
        return
    exact_anomalies: list[Anomaly] = []
    read_anomalies: list[Anomaly] = []
    try:
        exact = parse(decoded, on_anomaly=exact_anomalies.append, infinity=True)
    except json_text.JsonSyntaxError:
        with pytest.raises(json_text.JsonSyntaxError):
            json_text.loads(text, on_anomaly=read_anomalies.append, infinity=True)
        return
    read = json_text.loads(text, on_anomaly=read_anomalies.append, infinity=True)
    assert _same(read, exact) and read_anomalies == exact_anomalies, text


@pytest.mark.req("JSON-2")
def test_laid_out_takes_other_writers_layouts_and_refuses_what_the_exact_reader_reports() -> None:
    def canonical(text: bytes) -> bytes:
        return orjson.dumps(msgspec.json.decode(text), option=orjson.OPT_STRICT_INTEGER)

    for text in (b'{"a": [1, 0.5, "x"], "b": null}', b'{"a":"caf\\u00e9 \\u003cb\\u003e"}', b'{\t"a"\t:\t1\t}',
                 b'{"a": "say \\"hi\\""}', b'[\n  1,\n  2\n]'):
        assert json_text.laid_out(text, canonical(text)), text
    for text in (b'{"a": 1, "a": 2}', b'{"a": -0.0}', b'{"a": -0e0}', b'{"a": "\\u0022", "b": 1}',
                 b'{"q": "\\"", "q": 0}', b'{"a":1}'):  # (the last: canonical, so `lossless`'s)
        assert not json_text.laid_out(text, canonical(text)), text
    assert json_text.laid_out(b'{"a": -0.0}', b'{"a":-0.0}', negative_zero=False)  # (the caller's types cannot hold one)
