"""One defect does not hide the rest, and each is located where it is: a misnumbered record is reported
once and every later line is still checked; a lone surrogate in a key is located at that key; a
first line that is a JSON array is located by line and column. Unreadable side inputs (a trace or an
expectation file that is not UTF-8, a registry nested too deeply) are clean errors."""

from __future__ import annotations

import json

from cli_helpers import HEADER, cli, codes, findings, jsonl, turn_events


def _five_turns() -> list[dict]:
    return [e for t in range(5) for e in turn_events(t + 1, 12 * t)]


def _check(path: str, *extra: str):
    return cli("validate", "--format", "json", "--level", "strict", path, *extra)


def test_a_misnumbered_record_is_reported_once_and_later_defects_still_are(write):
    events = _five_turns()
    events[20]["seq"] = 92  # line 22: a wrong seq; the records after it continue from 21
    events[40]["data"]["extra"] = 1  # further down: an unknown payload key (a deviation, DEC-27) ...
    events[51]["data"]["chunk"]["type"] = "bogus"  # ... and a bad chunk type
    result = _check(write("seq.jsonl", jsonl(events)))
    assert codes(result) == ["JSONL_CORRUPT", "FORMAT_DEVIATION", "SCHEMA_VIOLATION"]
    first, extra, bogus = findings(result)
    assert (first["line"], first["seq"]) == (22, 92) and "seq 20 was expected" in first["message"]
    assert (extra["line"], extra["seq"]) == (42, 40) and (bogus["line"], bogus["seq"]) == (53, 51)
    assert result.json["files"][0]["events"] == 60  # no REPAIR_NEEDED "ends inside turn 2"


def test_gaps_duplicates_renumberings_and_missing_seqs_are_one_finding_each(write):
    for name, edit in {
        "deleted": lambda ev: ev.__delitem__(15),
        "duplicated": lambda ev: ev.insert(15, dict(ev[14])),
        "renumbered": lambda ev: [e.__setitem__("seq", e["seq"] + 100) for e in ev[15:]],
        "unnumbered": lambda ev: ev[15].__delitem__("seq"),
    }.items():
        events = _five_turns()
        edit(events)
        result = _check(write(f"{name}.jsonl", jsonl(events)))
        assert codes(result) == ["JSONL_CORRUPT"], (name, findings(result))


def test_a_lone_surrogate_in_a_key_is_located_at_that_key(write):
    lines = [json.dumps(HEADER)] + [json.dumps(e) for e in turn_events()]
    lines[2] = lines[2].replace('"source": {"kind": "user"}}', '"source": {"kind": "user"}, "k\\ud800": 1}')
    result = _check(write("key.jsonl", ("\n".join(lines) + "\n").encode()))
    (surrogate,) = [f for f in findings(result) if f["code"] == "JSON_LONE_SURROGATE"]
    assert surrogate["pointer"] == "/data/k\ud800" and surrogate["line"] == 3


def test_a_first_line_json_array_is_located_by_line_and_column(write):
    events = turn_events()
    data = "[" + ",".join(json.dumps(e) for e in events) + "]\n" + "\n".join(json.dumps(e) for e in events) + "\n"
    (finding,) = findings(_check(write("array.jsonl", data.encode())))
    assert (finding["line"], finding["column"]) == (2, 1) and "session header line" in finding["message"]
    (finding,) = findings(_check(write("bad.json", b"[1,\n2,\n x]")))
    assert (finding["line"], finding["column"]) == (3, 2)


def test_side_inputs_that_are_not_utf8_or_nest_too_deeply_are_clean_errors(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b"\xff\xfe{}\n")
    for argv in (["replay", str(bad)], ["conformance", "--expect", str(bad), "--only", "json"]):
        result = cli(*argv)
        assert result.code == 2 and "not UTF-8" in result.err, argv
    registry = tmp_path / "reg"
    (registry / "events").mkdir(parents=True)
    (registry / "schemas").mkdir()
    (registry / "events" / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    result = cli("catalog", "--registry", str(registry), "--out", str(tmp_path / "cat"))
    assert result.code == 2 and "nested too deeply" in result.err
    assert cli("validate", "--registry", str(registry), str(bad)).code == 2
