"""`sessionspec validate` on hostile input: a clear located finding, never a traceback, nothing modified."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest
from cli_helpers import HEADER, cli, codes, findings, jsonl, turn_events


def _check(path: str, *extra: str):
    before = hashlib.sha256(Path(path).read_bytes()).hexdigest() if os.path.isfile(path) else None
    result = cli("validate", "--format", "json", *extra, path)
    assert "Traceback" not in result.out + result.err
    if before is not None:
        assert hashlib.sha256(Path(path).read_bytes()).hexdigest() == before  # never modified
    return result


def test_valid_log_exits_0(write):
    result = _check(write("ok.jsonl", jsonl(turn_events() + turn_events(2, 12))), "--level", "strict")
    assert result.code == 0, result.out
    assert findings(result) == []


@pytest.mark.req("JSONL-4")
def test_truncated_last_line_is_a_crash_tail(write):
    data = jsonl(turn_events())
    result = _check(write("t.jsonl", data + b'{"type":"turn/start","seq":12,"ti'))
    assert result.code == 0 and result.json["files"][0]["needsRepair"]  # every load cuts it (DEC-25)
    assert _check(write("t1.jsonl", data + b'{"type":"x"'), "--fail-on", "repair").code == 1
    (tail,) = [f for f in findings(result) if f["code"] == "JSONL_TORN_TAIL"]
    assert tail["severity"] == "warning" and tail["requirement"] == "JSONL-4" and tail["line"] == 14
    assert "crash tail" in tail["message"]
    assert "JSONL_CORRUPT" not in codes(result)
    assert _check(write("t2.jsonl", data + b'{"type":"x"'), "--fail-on", "error").code == 0


@pytest.mark.req("JSONL-7")
def test_corruption_in_the_middle_is_told_apart_from_a_tail(write):
    lines = jsonl(turn_events()).split(b"\n")
    lines[5] = lines[5][:30]  # a damaged line before the last turn/end
    result = _check(write("c.jsonl", b"\n".join(lines)))
    corrupt = [f for f in findings(result) if f["code"] == "JSONL_CORRUPT"]
    assert corrupt and corrupt[0]["line"] == 6 and corrupt[0]["severity"] == "error"
    assert "committed region" in corrupt[0]["message"]
    # The same damage after the last turn/end is a torn tail, not corruption.
    events = turn_events() + turn_events(2, 12, close=False)
    lines = jsonl(events).split(b"\n")
    lines[16] = lines[16][:30]
    result = _check(write("tail.jsonl", b"\n".join(lines)))
    assert "JSONL_CORRUPT" not in codes(result)
    tail = [f for f in findings(result) if f["code"] == "JSONL_TORN_TAIL"]
    assert tail[0]["line"] == 17 and "drops it and the" in tail[0]["message"]


def test_invalid_utf8_is_located(write):
    data = jsonl(turn_events()).replace(b'"text":"hi"', b'"text":"h\xff"')
    result = _check(write("u.jsonl", data))
    (bad,) = [f for f in findings(result) if f["code"] == "JSON_TEXT_INVALID"]
    assert bad["line"] == 3 and bad["column"] > 1 and "UTF-8" in bad["message"]
    assert result.code == 1


@pytest.mark.req("JSONL-2")
def test_bom_rejected_as_bad_header(write):
    result = _check(write("bom.jsonl", b"\xef\xbb\xbf" + jsonl(turn_events())))
    (bad,) = [f for f in findings(result) if f["code"] == "JSONL_BAD_HEADER"]
    assert bad["line"] == 1 and "byte order mark" in bad["message"]
    assert codes(result) == ["JSONL_BAD_HEADER"]  # the events after it are still checked, and are fine


@pytest.mark.req("JSONL-5", "JSONL-7")
def test_blank_lines_are_holes(write):
    lines = jsonl(turn_events()).split(b"\n")
    lines.insert(4, b"")
    result = _check(write("blank.jsonl", b"\n".join(lines)))
    (hole,) = [f for f in findings(result) if f["code"] == "JSONL_CORRUPT"]
    assert hole["line"] == 5 and "empty line" in hole["message"]
    trailing = _check(write("blank2.jsonl", jsonl(turn_events()) + b"\n"))
    assert [f["code"] for f in findings(trailing)] == ["JSONL_TORN_TAIL"]


@pytest.mark.req("JSONL-3")
def test_crlf_line_ends_warned_once(write):
    data = jsonl(turn_events()).replace(b"\n", b"\r\n")
    result = _check(write("crlf.jsonl", data))
    assert codes(result) == ["JSONL_CRLF"]
    assert findings(result)[0]["severity"] == "warning" and "13 line(s)" in findings(result)[0]["message"]


@pytest.mark.req("JSON-12")
def test_duplicate_keys_located(write):
    data = jsonl(turn_events()).replace(b'"source":{"kind":"user"}},"surfaceOp"', b'"source":{"kind":"user","kind":"x"}},"surfaceOp"')
    result = _check(write("dup.jsonl", data))
    (dup,) = [f for f in findings(result) if f["code"] == "JSON_DUPLICATE_KEY"]
    assert dup["line"] == 3 and dup["pointer"] == "/data/source/kind"


@pytest.mark.req("JSON-12")
@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_literals(write, literal):
    data = jsonl(turn_events()).replace(b'"step":1}}\n{"type":"assistant/chunk","seq":3', f'"step":{literal}}}}}\n{{"type":"assistant/chunk","seq":3'.encode(), 1)
    result = _check(write("nan.jsonl", data))
    bad = [f for f in findings(result) if f["code"] == "JSONL_CORRUPT"]
    assert bad and bad[0]["line"] == 4 and literal in bad[0]["message"]


@pytest.mark.req("DEC-3", "SEED-3")
def test_integers_beyond_the_safe_range(write):
    events = turn_events()
    events[1]["data"]["content"][0]["n"] = 2**60  # a payload integer: kept exactly, but warned about
    events[10]["time"] = 2**53  # an envelope field: a loader rejects it
    result = _check(write("big.jsonl", jsonl(events)), "--level", "load")
    unsafe = {(f["line"], f["pointer"]) for f in findings(result) if f["code"] == "JSON_UNSAFE_INTEGER"}
    assert unsafe == {(3, "/data/content/0/n"), (12, "/time")}
    assert [f["line"] for f in findings(result) if f["code"] == "SEED_ENVELOPE"] == [12]
    huge = jsonl(turn_events()).replace(b'"turn":1,"step":1}', b'"turn":123456789012345678901234567890,"step":1}', 1)
    result = _check(write("huge.jsonl", huge), "--level", "load")
    assert any(f["code"] == "JSON_UNSAFE_INTEGER" and "123456789012345678901234567890" in f["message"] for f in findings(result))


@pytest.mark.req("DEC-16", "JSON-6")
def test_nesting_100000_levels_deep_does_not_recurse(write):
    deep = "[" * 100_000 + "]" * 100_000
    line = '{"type":"tool/result","seq":9,"time":1,"data":{"turn":1,"step":1,"callId":"c1","content":[],"isError":false,"meta":' + deep + '},"sourceEventSeqs":[8],"surfaceOp":"append"}'
    lines = jsonl(turn_events()).split(b"\n")
    lines[10] = line.encode()
    result = _check(write("deep.jsonl", b"\n".join(lines)), "--level", "strict")
    assert result.code == 0, result.out  # any depth is valid (DEC-16): no finding, no RecursionError


def test_lone_surrogates(write):
    data = jsonl(turn_events()).replace(b'"text":"hi"', b'"text":"h\\ud800i"')
    result = _check(write("sur.jsonl", data))
    (f,) = findings(result)
    assert f["code"] == "JSON_LONE_SURROGATE" and f["pointer"] == "/data/content/0/text" and f["severity"] == "warning"


def test_fifty_megabyte_line(write):
    events = turn_events()
    events[9]["data"]["content"][0]["text"] = "x" * 50_000_000
    data = jsonl(events)
    assert _check(write("big-ok.jsonl", data)).code == 0
    cut = data.replace(b'"isError":false', b'"isError":fals', 1)
    result = _check(write("big-bad.jsonl", cut))
    bad = [f for f in findings(result) if f["code"] == "JSONL_CORRUPT"]
    assert bad and bad[0]["line"] == 11 and len(bad[0]["message"]) < 400


@pytest.mark.req("JSONL-2")
def test_empty_file(write):
    result = _check(write("empty.jsonl", b""))
    assert result.code == 1 and codes(result) == ["JSONL_NO_HEADER"] and "empty" in findings(result)[0]["message"]


@pytest.mark.req("JSONL-2")
def test_missing_header_line(write):
    result = _check(write("nohdr.jsonl", jsonl(turn_events(), header=None)))
    assert codes(result) == ["JSONL_BAD_HEADER"]
    assert "header line is missing" in findings(result)[0]["message"]


@pytest.mark.req("JSONL-1", "JSONL-2")
def test_header_line_not_first(write):
    events = turn_events()
    lines = jsonl(events, header=None).split(b"\n")
    lines.insert(2, json.dumps(HEADER).encode())
    result = _check(write("late.jsonl", b"\n".join(lines)))
    bad = [f for f in findings(result) if f["code"] == "JSONL_BAD_HEADER"]
    assert [f["line"] for f in bad] == [1, 3] and "must be the first line" in bad[1]["message"]


def test_directory_and_unreadable_file(tmp_path, monkeypatch):
    empty_dir = tmp_path / "nothing"
    empty_dir.mkdir()
    result = _check(str(empty_dir))
    assert result.code == 2 and "no *.jsonl" in result.json["inputErrors"][0]
    assert cli("derive", str(tmp_path)).code == 2  # a directory is not a log file
    assert "is a directory" in cli("derive", str(tmp_path)).err
    target = tmp_path / "locked.jsonl"
    target.write_bytes(jsonl(turn_events()))
    real_open = os.open

    def deny(path, *args, **kwargs):
        if str(path) == str(target):
            raise PermissionError(13, "Permission denied", path)
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", deny)  # root reads a chmod-000 file, so deny it here
    result = cli("validate", str(target))
    assert result.code == 2 and "Permission denied" in result.out
    assert cli("validate", str(tmp_path / "missing.jsonl")).code == 2


def test_report_continues_after_a_bad_event_without_knock_ons(write):
    events = turn_events() + turn_events(2, 12)
    del events[1]["surfaceOp"]  # seq 1 rejected (SURF-3) ...
    events[7]["data"]["provenance"] = {"provider": "", "model": "m"}  # ... and seq 7 (SEED-6): both reported
    compaction = {"type": "user/message", "seq": 24, "time": 5, "data": {"content": [], "source": {"kind": "user"}},
                  "sourceEventSeqs": [1, 7], "surfaceOp": {"op": "replace", "start": 1, "end": 7}}
    events.append(compaction)  # knock-on only: names rejected events, not reported again
    result = _check(write("multi.jsonl", jsonl(events)), "--level", "load")
    assert codes(result) == ["SURFACE_MARKER_MISSING", "SEED_PROVENANCE"]
    assert [f["seq"] for f in findings(result)] == [1, 7]
    assert result.json["files"][0]["knockOnSuppressed"] == 1


def test_json_array_input_and_seed_gap(write):
    events = turn_events()
    del events[4]
    result = _check(write("a.json", json.dumps(events).encode()))
    (gap,) = findings(result)
    assert gap["code"] == "SEED_NOT_CONTIGUOUS" and gap["pointer"] == "/4/seq"
