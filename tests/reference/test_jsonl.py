"""JSONL-1 … JSONL-12: artifacts, crash tails, the load path and path encoding."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from sessionlog_builders import append_turn, balanced_session
from sessionspec.reference.invariants import check_invariants
from sessionspec.reference.json_value import json_equal
from sessionspec.reference.jsonl import (
    append_batch,
    encode_path_segment,
    encode_records,
    header_line,
    live_snapshot,
    load_artifact,
    project_dir_key,
    read_artifact,
    session_dir,
    session_log_path,
    write_artifact,
)
from sessionspec.reference.session import Session
from sessionspec.reference.store import SessionStore
from sessionspec.spec.errors import JsonlError, SeedError, SessionSpecError

req = pytest.mark.req

HEADER = {"type": "session", "version": 0, "id": "g", "createdAt": 1, "delegationDepth": 0}
START = {"type": "turn/start", "seq": 0, "time": 1, "data": {"turn": 1, "trigger": {"kind": "message", "source": {"kind": "user"}}}}


def lines(*records: Any, tail: bytes = b"") -> bytes:
    parts = [r if isinstance(r, str) else json.dumps(r, separators=(",", ":")) for r in records]
    return ("\n".join(parts) + "\n").encode() + tail


def ev(seq: int, type: str, data: Any, time: int | None = None) -> dict[str, Any]:
    return {"type": type, "seq": seq, "time": seq + 1 if time is None else time, "data": data}


def end(seq: int, turn: int = 1) -> dict[str, Any]:
    return ev(seq, "turn/end", {"turn": turn, "reason": {"kind": "completed"}})


# ---------------------------------------------------------------- JSONL-1


@req("JSONL-1")
def test_jsonl1_header_line_order_and_defaults() -> None:
    session = Session("s", None, {"version": 0, "id": "s", "createdAt": 9, "custom": 1, "seedLength": 0,
                                  "parentSession": "p", "cwd": "/w"})
    line = header_line(session.header)
    assert list(line) == ["type", "version", "id", "createdAt", "cwd", "parentSession", "seedLength", "delegationDepth"]
    assert line["delegationDepth"] == 0 and "custom" not in line
    minimal = header_line({"version": 0, "id": "m", "createdAt": 1, "delegationDepth": 4})
    assert minimal == {"type": "session", "version": 0, "id": "m", "createdAt": 1, "delegationDepth": 4}
    assert list(minimal) == ["type", "version", "id", "createdAt", "delegationDepth"]
    with pytest.raises(JsonlError):
        header_line({"id": "x"})
    # a header without version (the persistence seam's create accepts one, PERSIST-10) is written as it is
    assert header_line({"id": "x", "createdAt": 1}) == {"type": "session", "id": "x", "createdAt": 1, "delegationDepth": 0}


@req("JSONL-1")
def test_jsonl1_written_file_starts_with_header_line(tmp_path: Path) -> None:
    session = balanced_session(1, "w")
    path = tmp_path / "a" / "session.jsonl"
    write_artifact(path, session.header, session.events)
    first = path.read_bytes().split(b"\n", 1)[0]
    assert json.loads(first) == header_line(session.header)
    assert b" " not in first


# ---------------------------------------------------------------- JSONL-2


@req("JSONL-2")
@pytest.mark.parametrize(
    ("data", "code"),
    [
        (b"", "JSONL_NO_HEADER"),
        (b'{"type":"session","version":0,"id":"g","createdAt":1,"delegationDepth":0}', "JSONL_NO_HEADER"),
        (b"not json\n", "JSONL_BAD_HEADER"),
        (b'{"type":"event"}\n', "JSONL_BAD_HEADER"),
        (b"[1]\n", "JSONL_BAD_HEADER"),
    ],
)
def test_jsonl2_missing_or_bad_header(data: bytes, code: str) -> None:
    with pytest.raises(JsonlError) as info:
        read_artifact(data)
    assert info.value.code == code


@req("JSONL-2")
@pytest.mark.parametrize(
    "change",
    [
        {"createdAt": 1.5}, {"createdAt": -1}, {"createdAt": 2**53}, {"createdAt": "1"}, {"createdAt": -0.0},
        {"delegationDepth": None}, {"delegationDepth": "1"}, {"delegationDepth": 1.5}, {"delegationDepth": -1},
        {"delegationDepth": -0.0}, {"version": "0"}, {"version": None}, {"id": 3}, {"type": "Session"},
    ],
)
def test_jsonl2_header_field_checks(change: dict[str, Any]) -> None:
    header = {**HEADER, **change}
    if change.get("delegationDepth", 0) is None:
        del header["delegationDepth"]
    with pytest.raises(JsonlError) as info:
        read_artifact(lines(header))
    assert info.value.code == "JSONL_BAD_HEADER"


@req("JSONL-2")
def test_jsonl2_numeric_non_zero_version_passes_the_line_parser() -> None:
    artifact = read_artifact(lines({**HEADER, "version": 3, "extra": True}))
    assert artifact.header == {"version": 3, "id": "g", "createdAt": 1, "delegationDepth": 0}
    assert artifact.header_line["extra"] is True


# ---------------------------------------------------------------- JSONL-3 / JSONL-4 / JSONL-5


@req("JSONL-3")
def test_jsonl3_batch_encoding() -> None:
    events = [START, end(1)]
    data = encode_records(events, pack=False)
    assert data == b"".join(json.dumps(e, separators=(",", ":")).encode() + b"\n" for e in events)
    assert encode_records([]) == b""
    assert data.endswith(b"\n") and data.count(b"\n") == 2


@req("JSONL-4")
def test_jsonl4_final_fragment_without_newline_is_torn() -> None:
    data = lines(HEADER, START, tail=b'{"type":"turn/end","seq":1,"time":2,"data":{"turn":1,"reason":{"kind":"completed"}}}')
    artifact = read_artifact(data)
    assert [e["seq"] for e in artifact.events] == [0]
    assert artifact.torn and artifact.fragment_bytes > 0
    assert artifact.truncate_offset == len(lines(HEADER, START))


@req("JSONL-5")
def test_jsonl5_unparsable_empty_and_malformed_row_lines_are_holes() -> None:
    bad_row = {"type": "text-chunks", "seq0": 1, "time0": 2, "data": {"turn": 1, "step": 1, "index": 0, "dt": [], "texts": ["a", "b"]}}
    for hole in ("{not json", "", bad_row, "NaN"):
        artifact = read_artifact(lines(HEADER, START, hole, ev(2, "x", None)))
        assert [e["seq"] for e in artifact.events] == [0]
        assert artifact.holes == [3] and artifact.stopped_at_line == 3


@req("JSONL-5")
def test_jsonl5_rows_are_decoded() -> None:
    row = {"type": "text-chunks", "seq0": 1, "time0": 2, "data": {"turn": 1, "step": 1, "index": 0, "dt": [1, 1], "texts": ["a", "b", "c"]}}
    artifact = read_artifact(lines(HEADER, START, row, end(4)))
    assert [e["seq"] for e in artifact.events] == [0, 1, 2, 3, 4]
    assert artifact.events[2] == {"type": "assistant/chunk", "seq": 2, "time": 3,
                                  "data": {"turn": 1, "step": 1, "chunk": {"type": "text-delta", "index": 0, "text": "b"}}}


# ---------------------------------------------------------------- JSONL-6 / JSONL-7 / JSONL-8


@req("JSONL-6")
def test_jsonl6_committed_region_ends_at_last_turn_end_line() -> None:
    artifact = read_artifact(lines(HEADER, START, end(1), ev(2, "turn/start", {"turn": 2}), "{torn"))
    assert artifact.committed_through_line == 3
    assert [e["seq"] for e in artifact.events] == [0, 1, 2]
    assert read_artifact(lines(HEADER, START)).committed_through_line is None


@req("JSONL-7")
def test_jsonl7_hole_or_gap_inside_committed_region_is_corrupt() -> None:
    with pytest.raises(JsonlError) as info:
        read_artifact(lines(HEADER, "{not json", end(1)))
    assert info.value.code == "JSONL_CORRUPT" and "unparsable committed event" in str(info.value)
    with pytest.raises(JsonlError) as info:
        read_artifact(lines(HEADER, START, ev(2, "step/start", {}), end(3)))
    assert info.value.code == "JSONL_CORRUPT" and "seq gap in committed region" in str(info.value)
    bad_row = {"type": "text-chunks", "seq0": 0, "time0": 1, "data": {"turn": 1, "step": 1, "index": 0, "dt": [], "texts": ["a", "b"]}}
    with pytest.raises(JsonlError):
        read_artifact(lines(HEADER, bad_row, end(2)))


@req("JSONL-7")
def test_jsonl7_gap_after_committed_region_stops_and_keeps_prefix() -> None:
    artifact = read_artifact(lines(HEADER, START, end(1), ev(9, "step/start", {})))
    assert [e["seq"] for e in artifact.events] == [0, 1]
    artifact = read_artifact(lines(HEADER, START, ev(2, "step/start", {})))
    assert [e["seq"] for e in artifact.events] == [0]  # an unclosed turn keeps its complete events
    gap_row = {"type": "text-chunks", "seq0": 2, "time0": 2, "data": {"turn": 1, "step": 1, "index": 0, "dt": [1, 1], "texts": ["a", "b", "c"]}}
    artifact = read_artifact(lines(HEADER, START, gap_row))
    assert [e["seq"] for e in artifact.events] == [0]
    assert artifact.truncate_offset == len(lines(HEADER, START))


@req("JSONL-8")
def test_jsonl8_truncation_offset() -> None:
    header_only = lines(HEADER)
    artifact = read_artifact(header_only)
    assert artifact.events == [] and artifact.truncate_offset == len(header_only) and not artifact.torn
    data = lines(HEADER, START, end(1), "{torn", ev(3, "x", None))
    artifact = read_artifact(data)
    assert artifact.truncate_offset == len(lines(HEADER, START, end(1))) and artifact.torn
    multibyte = lines(HEADER, ev(0, "user/message", {"t": "é✓😀"}), "{")
    assert read_artifact(multibyte).truncate_offset == len(lines(HEADER, ev(0, "user/message", {"t": "é✓😀"})))


@req("JSONL-8")
def test_jsonl8_append_batch_truncates_first(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    path.write_bytes(lines(HEADER, START, end(1), "{torn"))
    artifact = read_artifact(path)
    append_batch(path, [ev(2, "turn/start", {"turn": 2})], truncate_to=artifact.truncate_offset)
    again = read_artifact(path)
    assert [e["seq"] for e in again.events] == [0, 1, 2] and not again.torn


# ---------------------------------------------------------------- JSONL-9


@req("JSONL-9")
def test_jsonl9_reading_is_layout_blind(tmp_path: Path) -> None:
    session = balanced_session(2, "p", chunks=5)
    packed, unpacked = tmp_path / "p.jsonl", tmp_path / "u.jsonl"
    write_artifact(packed, session.header, session.events, pack=True)
    write_artifact(unpacked, session.header, session.events, pack=False)
    assert packed.stat().st_size < unpacked.stat().st_size
    assert b"text-chunks" in packed.read_bytes() and b"text-chunks" not in unpacked.read_bytes()
    assert read_artifact(packed).events == read_artifact(unpacked).events == session.events
    # mixed: unpacked lines, then packed appends
    more = Session("p", session.events)
    append_turn(more, 3, chunks=4)
    append_batch(unpacked, more.events[session.seq :], pack=True)
    assert read_artifact(unpacked).events == more.events


# ---------------------------------------------------------------- JSONL-10 / JSONL-11


@req("JSONL-10")
def test_jsonl10_segment_encoding() -> None:
    assert encode_path_segment("..") == "~002E~002E"
    assert encode_path_segment(".") == "~002E"
    assert encode_path_segment("a/b") == "a~002Fb"
    assert encode_path_segment("/etc/passwd") == "~002Fetc~002Fpasswd"
    assert encode_path_segment("a\u0000b") == "a~0000b"
    assert encode_path_segment("plain-ID_1.2") == "plain-ID_1.2"
    assert encode_path_segment("a~b") == "a~007Eb"
    assert encode_path_segment("...") == "..."
    assert encode_path_segment("~002F") != encode_path_segment("/")
    with pytest.raises(JsonlError) as info:
        encode_path_segment("")
    assert info.value.code == "JSONL_PATH_INVALID"


@req("JSONL-10")
def test_jsonl10_project_key_and_paths(tmp_path: Path) -> None:
    assert project_dir_key("/Users/qyj/work/deepseek-harness") == "--Users-qyj-work-deepseek-harness--"
    assert project_dir_key("/a/b-c") == project_dir_key("/a-b/c")
    assert project_dir_key("C:\\work\\agent") == "--C-work-agent--"
    assert project_dir_key("/开发/~agent") == "--~5F00~53D1-~007Eagent--"
    assert project_dir_key("/") == "--root--"
    assert project_dir_key("///a//:b") == "--a-b--"
    assert len(project_dir_key("/" + "x" * 1000)) == 255
    with pytest.raises(JsonlError):
        project_dir_key("")
    assert session_log_path(tmp_path, "/w", "s") == tmp_path / "--w--" / "s" / "session.jsonl.zstd"
    assert session_log_path(tmp_path, None, "../x", "none") == tmp_path / "_no-cwd" / "..~002Fx" / "session.jsonl"
    assert session_dir(tmp_path, "/w", "..") == tmp_path / "--w--" / "~002E~002E"


@req("JSONL-11")
def test_jsonl11_utf16_code_units() -> None:
    assert encode_path_segment("😀") == "~D83D~DE00"
    assert encode_path_segment("\ud800") == "~D800" and encode_path_segment("\udc00") == "~DC00"
    assert encode_path_segment("é") == "~00E9"
    assert project_dir_key("/😀") == "--~D83D~DE00--"


# ---------------------------------------------------------------- JSONL-12


def write_raw(tmp_path: Path, data: bytes) -> Path:
    path = tmp_path / "session.jsonl"
    path.write_bytes(data)
    return path


@req("JSONL-12")
def test_jsonl12_identity_version_and_legacy_rejections(tmp_path: Path) -> None:
    cases = [
        (lines(HEADER, START), "other", "JSONL_ID_MISMATCH"),
        (lines({**HEADER, "version": 1}, START), "g", "JSONL_VERSION"),
        (lines({**HEADER, "version": 0.0}, START), "g", "JSONL_VERSION"),
        (lines(HEADER, START, ev(1, "request/header-delta", {})), "g", "JSONL_LEGACY_EVENT"),
        (lines(HEADER, START, ev(1, "mode/set", {"mode": "x"})), "g", "JSONL_LEGACY_EVENT"),
        (lines(HEADER, START, ev(1, "request/header", {"header": {}, "reason": "fallback"})), "g", "JSONL_LEGACY_EVENT"),
    ]
    for data, wanted, code in cases:
        path = write_raw(tmp_path, data)
        with pytest.raises(JsonlError) as info:
            load_artifact(path, wanted)
        assert info.value.code == code
        assert path.read_bytes() == data  # rejected before any repair write


@req("JSONL-12")
def test_jsonl12_legacy_precedence_delta_then_mode_then_fallback(tmp_path: Path) -> None:
    data = lines(HEADER, START, ev(1, "request/header", {"reason": "fallback"}), ev(2, "mode/set", {}),
                 ev(3, "request/header-delta", {}))
    with pytest.raises(JsonlError) as info:
        load_artifact(write_raw(tmp_path, data), "g")
    assert info.value.seq == 3 and "request/header-delta" in str(info.value)


@req("JSONL-12")
def test_jsonl12_a_legacy_record_without_an_integer_seq_is_refused_without_a_seq() -> None:
    """The refusal quotes the stored seq in its message; its located `seq` is an integer or absent."""
    from sessionspec.reference.jsonl import _LegacyRecords

    for stored in ("x", 1.5, None, [1]):
        legacy = _LegacyRecords()
        legacy.note({"type": "mode/set", "seq": stored, "time": 0, "data": {}})
        refusal = legacy.refusal("g", None)
        assert refusal is not None and refusal.code == "JSONL_LEGACY_EVENT"
        assert refusal.seq is None and "seq" not in refusal.to_json() and f"at seq {stored}" in refusal.message
    legacy = _LegacyRecords()
    legacy.note({"type": "mode/set", "seq": 4, "time": 0, "data": {}})
    assert legacy.refusal("g", None).seq == 4  # type: ignore[union-attr]


@req("JSONL-12")
def test_jsonl12_repair_is_written_durably_then_seeded(tmp_path: Path) -> None:
    source = Session("g")
    append_turn(source, 1)
    source.append("turn/start", {"turn": 2, "trigger": {"kind": "message", "source": {"kind": "user"}}})
    source.append("step/start", {"turn": 2, "step": 1})
    path = tmp_path / "session.jsonl"
    write_artifact(path, source.header, source.events)
    with open(path, "ab") as handle:
        handle.write(b'{"type":"assistant/chunk","seq":')  # torn tail
    loaded = load_artifact(path, "g", seed=True)
    assert [e["type"] for e in loaded.closers] == ["step/end", "turn/end"]
    assert loaded.closers[-1]["data"]["reason"] == {"kind": "interrupted"}
    assert loaded.session is not None and loaded.session.seq == source.seq + 2 and loaded.truncated_bytes > 0
    assert check_invariants(loaded.session.events) == []
    reread = read_artifact(path)
    assert not reread.torn and reread.events == loaded.session.events
    # loading again changes nothing (balanced, no tail)
    size = path.stat().st_size
    again = load_artifact(path, "g", seed=True)
    assert again.closers == [] and path.stat().st_size == size
    assert again.session is not None and again.session.events == loaded.session.events
    assert again.session.header["delegationDepth"] == 0
    # the pinned load path itself returns the balanced events unseeded (loadSeeds false)
    plain = load_artifact(path, "g")
    assert plain.session is None and plain.events == list(loaded.session.events)


@req("JSONL-12")
@pytest.mark.parametrize("durable", [True, False])
def test_jsonl12_the_load_path_seeds_at_the_published_revision_only(tmp_path: Path, durable: bool) -> None:
    """A log only the seed rules refuse (a relative cwd, HDR-*; an open turn to close): the pinned load
    path repairs and returns it as stored; the published one refuses it and writes nothing back."""
    data = lines({**HEADER, "cwd": "relative/dir"}, {**START, "data": {"turn": 1}})
    path = write_raw(tmp_path, data)
    loaded = load_artifact(path, "g", durable=durable)
    assert loaded.session is None and loaded.header["cwd"] == "relative/dir"
    assert [e["type"] for e in loaded.closers] == ["turn/end"]
    assert (path.read_bytes() != data) is durable  # the closer written only by a durable load
    path = write_raw(tmp_path, data)
    with pytest.raises(SessionSpecError) as info:
        load_artifact(path, "g", durable=durable, revision="b150a551b8")
    assert info.value.code == "HEADER_CWD" and path.read_bytes() == data


@req("JSONL-12")
def test_jsonl12_non_durable_load_leaves_file_untouched(tmp_path: Path) -> None:
    data = lines(HEADER, START, "{torn")
    path = write_raw(tmp_path, data)
    loaded = load_artifact(path, "g", durable=False)
    assert [e["type"] for e in loaded.events] == ["turn/start", "turn/end"]
    assert path.read_bytes() == data


@req("JSONL-12")
def test_jsonl12_seed_validation_applies_after_repair(tmp_path: Path) -> None:
    bad = ev(1, "assistant/message", {"turn": 1, "step": 1, "content": []})
    bad["surfaceOp"] = "append"
    path = write_raw(tmp_path, lines(HEADER, START, bad, end(2)))
    with pytest.raises(SeedError) as info:
        load_artifact(path, "g", seed=True)  # a seeded load view; the pinned load path itself does not seed
    assert info.value.code == "SEED_PROVENANCE"
    assert [e["type"] for e in load_artifact(path, "g").events] == ["turn/start", "assistant/message", "turn/end"]


@req("JSONL-12")
def test_jsonl12_live_session_with_open_turn_is_refused() -> None:
    store = SessionStore()
    session = store.create("live")
    append_turn(session, 1)
    assert live_snapshot(session) == list(session.events)
    session.append("turn/start", {"turn": 2})
    with pytest.raises(JsonlError) as info:
        live_snapshot(session)
    assert info.value.code == "JSONL_OPEN_TURN"


def test_write_artifact_is_atomic_and_leaves_no_temp_files(tmp_path: Path) -> None:
    session = balanced_session(1, "a")
    path = tmp_path / "deep" / "dir" / "session.jsonl"
    write_artifact(path, session.header, session.events)
    write_artifact(path, session.header, session.events[:3])
    assert os.listdir(path.parent) == ["session.jsonl"]
    assert read_artifact(path).events == session.events[:3]


def test_deep_payload_round_trips_through_jsonl(tmp_path: Path) -> None:
    value: Any = 0
    for _ in range(10_000):
        value = {"k": value}
    session = Session("d")
    session.append("plugin/deep", value)
    path = tmp_path / "session.jsonl"
    write_artifact(path, session.header, session.events)
    assert json_equal(read_artifact(path).events[0]["data"], value)


@req("JSONL-2")
def test_parse_header_line_is_the_cheap_header_reader() -> None:
    from sessionspec.reference.jsonl import parse_header_line

    assert parse_header_line(json.dumps({**HEADER, "cwd": "/w", "x": 1})) == {
        "version": 0, "id": "g", "createdAt": 1, "cwd": "/w", "delegationDepth": 0,
    }
    assert parse_header_line("not json") is None
    assert parse_header_line(json.dumps({**HEADER, "delegationDepth": -1})) is None


@req("JSONL-10")
def test_project_dir(tmp_path: Path) -> None:
    from sessionspec.reference.jsonl import project_dir

    assert project_dir(tmp_path, None) == tmp_path / "_no-cwd"
    assert project_dir(tmp_path, "/a/b") == tmp_path / "--a-b--"
