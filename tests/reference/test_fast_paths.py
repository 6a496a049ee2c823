"""The storage path's fast paths decide exactly as the general paths they skip.

Four shortcuts of issues 13 and 14 (docs/benchmarks.md): the JSON reader (msgspec,
else the exact parser), the first-defect reader's step over whole records in place
(then the line rule of JSONL-5..8 from the first other line), the surface fold (plain
log-only events are counted, not checked) and the streamed unpack. Each is compared with
its general path on generated logs, including damaged ones (the unpack, one form, with what it reads back as).
"""

from __future__ import annotations

import io
import re
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sessionspec.reference import json_text, jsonl, jsonl_read, surface
from sessionspec.reference.json_text import dumps, loads
from sessionspec.reference.json_value import FrozenDict, FrozenList
from sessionspec.spec.errors import SessionSpecError
from strategies import json_values, session_logs


def _exact(text: str | bytes) -> Any:
    return json_text.parse(text.decode("utf-8") if isinstance(text, bytes) else text)


def _same(a: Any, b: Any) -> bool:
    """The same compact JSON text, which also tells ``1`` from ``1.0`` and ``-0.0`` from ``0.0``."""
    return dumps(a) == dumps(b)


@given(json_values(), st.sampled_from(["", " ", "\n\t"]))
def test_fast_reader_reads_what_the_exact_parser_reads(value: Any, space: str) -> None:
    text = space + dumps(value) + space
    assert _same(loads(text), _exact(text))
    assert _same(loads(text.encode()), _exact(text))


@pytest.mark.parametrize("text", [
    '{"a":1,"b":2,"a":3}', "123456789012345678901234567890", "-99999999999999999999", "18446744073709551616",
    "1" * 4000, "[1e22, 1e23, 5e-324, 1.7976931348623157e308, 1.5e-400, -1e-400]", "-0", "-0.0", "0.1e1",
    '"\\ud800"', '{"\\udfff": "\\ud800x"}', '"\\ud800\\udc00"', "[" * 3000 + "]" * 3000, '"\\u0000\\/"',
    "100000000000000000000000000000000000000e-20", "12345678901234567890123e-3",
])
def test_fast_reader_edge_cases(text: str) -> None:
    """Long integers, negative zero, lone surrogates, deep nesting: read exactly (msgspec declines some)."""
    assert _same(loads(text), _exact(text))
    assert _same(loads(text.encode()), _exact(text))


@pytest.mark.parametrize("text", ["NaN", "1e400", "[1,]", "\ufeff{}", '"\x01"', "01", "", "{} {}", "1" * 5000 + "x"])
def test_fast_reader_rejects_what_the_exact_parser_rejects(text: str) -> None:
    with pytest.raises(SessionSpecError):
        _exact(text)
    with pytest.raises(SessionSpecError):
        loads(text)


_DAMAGE = st.sampled_from(["none", "hole", "gap", "torn", "blank", "bad-row", "surrogate", "long-int", "not-object"])


def _damaged(events: list[dict[str, Any]], damage: str, at: int) -> bytes:
    header = {"version": 0, "id": "s", "createdAt": 1}
    data = jsonl.header_bytes(header) + jsonl.encode_records(events)
    lines = data.split(b"\n")
    line = 1 + at % max(len(lines) - 2, 1) if len(lines) > 2 else 1
    if damage == "hole":
        lines[line] = b"{not json"
    elif damage == "gap" and len(lines) > 2:
        lines[line] = lines[line].replace(b'"seq":', b'"seq":1', 1).replace(b'"seq0":', b'"seq0":1', 1)
    elif damage == "torn":
        return data[: len(data) - 1 - at % max(len(data) // 2, 1)]
    elif damage == "blank":
        lines.insert(line, b"")
    elif damage == "bad-row":
        lines[line] = lines[line].replace(b'"dt":[', b'"dt":[true,', 1)
    elif damage == "surrogate":
        lines[line] = lines[line].replace(b'"type":', b'"x":"\\ud800","type":', 1)
    elif damage == "long-int":
        lines[line] = lines[line].replace(b'"time":', b'"time":1' + b"0" * 30 + b",\"t\":", 1)
    elif damage == "not-object":
        lines[line] = b"[1,2]"
    return b"\n".join(lines)


def _read(data: bytes) -> Any:
    try:
        return jsonl.read_artifact(data)
    except SessionSpecError as error:
        return (type(error), error.code, str(error))


def _no_whole_lines(lines: list[bytes], keep: bool = True, freeze: bool = False) -> tuple[list[Any], int, int]:
    """`jsonl_read.whole_lines` that reads no line whole: the line rule decides every line from line 2."""
    return [], 0, 1


# JSONL-5 … JSONL-8: the first-defect reader's step over whole records in place (`whole_lines`) is exact: the
# reader decides as it does when the line rule decides every line, on generated logs, damaged or not.
@given(session_logs(), _DAMAGE, st.integers(0, 10_000))
def test_artifact_reader_one_pass_agrees_with_the_line_by_line_reader(
    events: list[dict[str, Any]], damage: str, at: int
) -> None:
    data = _damaged(events, damage, at)
    fast = _read(data)
    original = jsonl_read.whole_lines
    jsonl_read.whole_lines = _no_whole_lines  # type: ignore[assignment]  # the line rule decides every line
    try:
        general = _read(data)
    finally:
        jsonl_read.whole_lines = original
    assert fast == general


def _deeply_frozen(value: Any) -> bool:
    if isinstance(value, dict):
        return type(value) is FrozenDict and all(_deeply_frozen(v) for v in value.values())
    if isinstance(value, list):
        return type(value) is FrozenList and all(_deeply_frozen(v) for v in value)
    return True


def _load(path: Path) -> Any:
    try:
        loaded = jsonl.load_artifact(path, "s", durable=False, seed=True)
    except SessionSpecError as error:
        return (type(error), error.code, str(error))
    assert loaded.session is not None
    assert all(map(_deeply_frozen, loaded.session.events)) and all(map(_deeply_frozen, loaded.events))
    return list(loaded.session.events), list(loaded.events), loaded.closers, loaded.truncated_bytes


def _negative_zero(data: bytes, where: str, at: int) -> bytes:
    """``-0.0`` in the payload of one line (a row's ``turn`` is shared by all its members)."""
    lines = data.split(b"\n")
    if len(lines) <= 2:
        return data
    line = 1 + at % (len(lines) - 2)
    pattern = rb'"turn":-?\d+' if where == "turn" else rb'"data":\{'
    lines[line] = re.sub(pattern, b'"turn":-0.0' if where == "turn" else b'"data":{"z":-0.0,', lines[line], count=1)
    return b"\n".join(lines)


@given(session_logs(), st.sampled_from([*_DAMAGE.elements, "zero-turn", "zero-data"]), st.integers(0, 10_000))
def test_load_path_that_keeps_the_frozen_parse_agrees_with_seeding_a_copy(
    events: list[dict[str, Any]], damage: str, at: int
) -> None:
    """``load_artifact`` keeps the events ``freeze_parsed`` froze (``Session._load``); the general load
    seeds a copy of the plain events of the line-by-line reader: the same session, events, closers or error."""
    data = _damaged(events, damage, at) if damage in _DAMAGE.elements else _negative_zero(
        jsonl.header_bytes({"version": 0, "id": "s", "createdAt": 1}) + jsonl.encode_records(events),
        damage[5:], at)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "s.jsonl"
        path.write_bytes(data)
        fast = _load(path)
        original_read, original_whole = jsonl._read, jsonl_read.whole_lines
        jsonl._read = lambda source, revision=None, freeze=False: original_read(source, revision)  # type: ignore[assignment]
        jsonl_read.whole_lines = _no_whole_lines  # type: ignore[assignment]  # the line rule decides, and seed
        try:
            general = _load(path)
        finally:
            jsonl._read, jsonl_read.whole_lines = original_read, original_whole
        assert path.read_bytes() == data
    assert fast == general
    if isinstance(fast, tuple):
        assert type(fast) is type(general)
    else:
        assert [type(e) for e in fast[1]] == [type(e) for e in general[1]]


_EDIT = st.sampled_from(["none", "seq", "bool-seq", "marker", "sources", "type", "no-type", "no-marker", "list"])


def _edited(events: list[dict[str, Any]], edit: str, at: int) -> list[Any]:
    out: list[Any] = [dict(e) for e in events]
    if not out:
        return out
    i = at % len(out)
    event = out[i]
    if edit == "seq":
        event["seq"] += 1
    elif edit == "bool-seq" and event["seq"] == 1:
        event["seq"] = True
    elif edit == "marker":
        event["surfaceOp"] = "append"
    elif edit == "sources":
        event["sourceEventSeqs"] = [0]
    elif edit == "type":
        event["type"] = ["user/message"]
    elif edit == "no-type":
        del event["type"]
    elif edit == "no-marker":
        event.pop("surfaceOp", None)
    elif edit == "list":
        out[i] = list(event)
    return out


def _fold(events: list[Any], fold: Any = surface.fold_surface) -> Any:
    try:
        return fold(events)
    except (SessionSpecError, AttributeError, TypeError) as error:
        return (type(error), getattr(error, "code", None), str(error))


def _fold_every_event(events: list[Any]) -> dict[str, Any]:
    """The fold without the shortcut: every event through ``SurfaceState.check``."""
    state = surface.SurfaceState(events)
    replacements = []
    for event in events:
        plan = state.check(event)
        state.apply(plan)
        if plan.kind == "replace":
            replacements.append(plan.replacement())
    return {"nodes": list(state.nodes), "replacements": replacements}


@given(session_logs(), _EDIT, st.integers(0, 10_000))
def test_fold_that_skips_plain_log_events_agrees_with_checking_every_event(
    events: list[dict[str, Any]], edit: str, at: int
) -> None:
    edited = _edited(events, edit, at)
    assert _fold(edited) == _fold(edited, _fold_every_event)


@given(session_logs(), _DAMAGE, st.integers(0, 10_000), st.sampled_from([1, 2, 4096]))
def test_the_unpack_writes_every_event_read_on_its_own_line(
    events: list[dict[str, Any]], damage: str, at: int, batch: int
) -> None:
    """CHUNK-*: `write_unpacked` (a row ``batch`` members at a time) writes a log that reads back as the
    header and events read from the input, one line an event (no row left), or declines, writing nothing."""
    data = _damaged(events, damage, at)
    buffer = io.BytesIO()
    written = jsonl.write_unpacked(data, buffer, batch)
    if written is None:
        assert buffer.getvalue() == b""
        assert damage != "none"  # a whole log is always streamed
        return
    source, unpacked = jsonl.read_artifact(data), jsonl.read_artifact(buffer.getvalue())
    assert unpacked.header == source.header
    assert [dumps(event) for event in unpacked.events] == [dumps(event) for event in source.events]
    assert written == len(source.events) == buffer.getvalue().count(b"\n") - 1
    assert (unpacked.holes, unpacked.fragment_bytes) == ([], 0)


# JSON-12/13, DEC-3, JSON-2: with the validators' hook, the one parsing path (`loads`) takes its fast half only
# where it is the exact parser's value with no anomaly to report, whatever the spelling of the text.
_SPELLINGS = st.sampled_from(["", " ", "\r", "\t"])
_PIECES = st.sampled_from(['{"a":1,"a":2}', "-0.0", "-0", "0.0", "1E-3", "1e-300", "-1e-400", "1e400", "9007199254740993",
                           "-9007199254740993", "123456789012345678901", '"\\ud800"', '"\\u00e9"', '"\\/"', "1.0", "1e2",
                           '{"b":[1,{"b":2,"b":3}]}'])


def _hooked(read: Any, text: Any) -> tuple[str | None, list[json_text.Anomaly]]:
    found: list[json_text.Anomaly] = []
    try:
        return dumps(read(text, on_anomaly=found.append, infinity=True)), found
    except json_text.JsonSyntaxError as error:
        return f"error {error.kind} {error.offset}", found
    except SessionSpecError:  # (the value holds an infinity: dumps refuses it)
        return "not lossless", found


@given(st.one_of(json_values().map(dumps), st.lists(_PIECES, min_size=1, max_size=4).map(lambda p: "[" + ",".join(p) + "]")),
       _SPELLINGS)
def test_the_one_parser_with_its_hook_is_the_exact_parser(text: str, space: str) -> None:
    raw = (space + text.replace(",", "," + space) + space).encode()
    assert _hooked(loads, raw) == _hooked(json_text.parse, raw.decode())
