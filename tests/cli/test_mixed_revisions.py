"""Mixed revisions are the normal case (issue 22, DEC-24): a pinned-revision log resumed by the published
package is read at the published revision, whose load path reads all of it; detection weighs the whole log;
the inspect commands show what a load gives, or refuse."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import cli, jsonl, turn_events
from sessionspec.reference.derive import derive_messages
from sessionspec.reference.jsonl import load_artifact
from sessionspec.reference.surface import fold_surface
from sessionspec.validator.detect import detect_in_blocks, detect_in_bytes, detect_revision

PINNED, PUB = "2f74ac98ba", "b150a551b8"
LOGS = Path(__file__).resolve().parents[1] / "real_logs" / "logs"


def published_turn(turn: int, seq: int, close: bool = True) -> list[dict[str, Any]]:
    """A turn as the published package appends it to a resumed session: identified messages, no trigger."""
    t = 1767225600000 + seq
    events: list[dict[str, Any]] = [
        {"type": "turn/start", "seq": seq, "time": t, "data": {"turn": turn}},
        {"type": "user/message", "seq": seq + 1, "time": t, "surfaceOp": "append",
         "data": {"id": f"u{turn}", "role": "user", "source": {"kind": "user"}, "content": [{"type": "text", "text": "go on"}]}},
        {"type": "step/start", "seq": seq + 2, "time": t, "data": {"turn": turn, "step": 1}},
        {"type": "assistant/message", "seq": seq + 3, "time": t, "surfaceOp": "append", "data": {
            "turn": turn, "step": 1, "message": {
                "id": f"a{turn}", "role": "assistant", "source": {"kind": "model", "provider": "p", "model": "m"},
                "content": [{"type": "tool-call", "id": f"c{turn}", "name": "bash", "arguments": "{}"}]}}},
        {"type": "tool/call", "seq": seq + 4, "time": t,
         "data": {"turn": turn, "step": 1, "callId": f"c{turn}", "name": "bash", "arguments": "{}"}},
    ]
    if close:
        events += [
            {"type": "tool/result", "seq": seq + 5, "time": t, "surfaceOp": "append", "sourceEventSeqs": [seq + 4],
             "data": {"turn": turn, "step": 1, "message": {
                 "id": f"r{turn}", "role": "user", "source": {"kind": "tool", "callId": f"c{turn}"},
                 "content": [{"type": "tool-result", "toolCallId": f"c{turn}", "content": [{"type": "text", "text": "ok"}]}]}}},
            {"type": "step/end", "seq": seq + 6, "time": t, "data": {"turn": turn, "step": 1}},
            {"type": "turn/end", "seq": seq + 7, "time": t, "data": {"turn": turn, "reason": {"kind": "completed"}}},
        ]
    return events


def resumed(pinned_turns: int, published_turns: int = 2, crash: bool = False) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    for turn in range(1, pinned_turns + 1):
        events += turn_events(turn, len(events))
    for turn in range(pinned_turns + 1, pinned_turns + published_turns + 1):
        last = turn == pinned_turns + published_turns
        events += published_turn(turn, len(events), close=not (crash and last))
    return events


def _write(tmp_path: Path, events: list[dict[str, Any]], name: str = "log.jsonl") -> Path:
    path = tmp_path / name
    path.write_bytes(jsonl(events))
    return path


@pytest.mark.parametrize("pinned_turns", [1, 12, 400])  # 400 turns: past the old 16 pieces and 4096 events
def test_a_pinned_log_resumed_by_the_published_package_is_read_at_the_published_revision(tmp_path, pinned_turns):
    path = _write(tmp_path, resumed(pinned_turns))
    [report] = cli("validate", "--format", "json", "--level", "strict", str(path)).json["files"]
    assert (report["revision"], report["errors"], report["warnings"]) == (PUB, 0, 0), report
    assert report["revisionReason"].startswith(f"resumed: {PINNED} content up to line ")
    assert report["upgraded"]["turn/start"] == pinned_turns
    # derive and fold equal the reference's load at that revision, and say nothing
    loaded = list(load_artifact(path, "s1", durable=False, revision=PUB).session.events)
    derived = cli("derive", str(path))
    assert derived.code == 0 and derived.err == ""
    assert derived.json == json.loads(json.dumps(derive_messages(loaded, PUB)))
    assert cli("fold", str(path)).json == json.loads(json.dumps(fold_surface(loaded, PUB)))
    # naming the revision that reads it changes nothing and warns about nothing
    given = cli("validate", "--format", "json", "--revision", PUB, str(path)).json["files"][0]
    assert given["revisionReason"] == "given" and given["errors"] == 0
    assert cli("derive", "--revision", PUB, str(path)).err == ""


def test_a_crashed_resumed_log_is_repaired_in_the_published_shape(tmp_path):
    path = _write(tmp_path, resumed(12, crash=True))
    out = tmp_path / "repaired.jsonl"
    repaired = cli("repair", str(path), "-o", str(out))
    assert repaired.code == 0, repaired.err
    closer = json.loads(out.read_bytes().splitlines()[-3])
    assert closer["data"]["message"]["id"].startswith("interrupted-tool-result-c14-")
    assert cli("validate", "--format", "json", "--level", "strict", str(out)).json["files"][0]["errors"] == 0


def test_one_missing_field_does_not_flip_a_pinned_log_and_hide_its_schema_error(tmp_path):
    """A pinned log whose second turn/start lost its trigger: that record alone fits the published schema,
    everything around it is pinned: the log stays pinned and the missing field is reported."""
    events = turn_events(1, 0) + turn_events(2, 12) + turn_events(3, 24)
    del events[12]["data"]["trigger"]
    path = _write(tmp_path, events)
    [report] = cli("validate", "--format", "json", str(path)).json["files"]
    assert report["revision"] == PINNED, report["revisionReason"]
    assert [(f["code"], f["seq"]) for f in report["findings"]] == [("SCHEMA_VIOLATION", 12)]
    assert report["revisionReason"].startswith(f"mostly {PINNED} content")
    # the same record in a log's first turn, before any other evidence, is still outweighed
    first = turn_events(1, 0) + turn_events(2, 12)
    del first[0]["data"]["trigger"]
    assert detect_revision(first).revision == PINNED


def test_content_only_the_reader_can_hold_outranks_the_count(tmp_path):
    """Pinned turns around one published turn (not a resumed log: pinned content after it, and more of it): the
    published turn's identified messages hold members no pinned schema defines, which only the release can hold,
    and the release reads the pinned records upgraded: read at the release (DEC-24). What a record lacks does not
    count so (test_one_missing_field_does_not_flip_a_pinned_log_and_hide_its_schema_error)."""
    events = turn_events(1, 0) + published_turn(2, 12)
    for turn in range(3, 6):
        events += turn_events(turn, len(events))
    detection = detect_revision(events)
    assert detection.scores[PINNED] > detection.scores[PUB]
    assert detection.revision == PUB, detection.reason
    assert detection.reason.startswith(f"interleaved; only {PUB} can hold user/message (a member only it defines)")
    [report] = cli("validate", "--format", "json", "--level", "strict", str(_write(tmp_path, events))).json["files"]
    assert (report["revision"], report["errors"]) == (PUB, 0), report["findings"]


def test_detection_reads_the_whole_file_block_by_block(tmp_path):
    """The published content starts past the first 4 MiB: still weighed (no head-only detection)."""
    turns = (5 << 20) // len(jsonl(turn_events())) + 1
    events = resumed(turns, 1)
    path = _write(tmp_path, events)
    assert cli("validate", "--format", "json", str(path)).json["files"][0]["revision"] == PUB


def test_block_boundaries_do_not_change_detection():
    data = jsonl(resumed(3))
    whole = detect_in_bytes(data)
    for size in (1, 7, 64, 1000):
        blocks = (data[i:i + size] for i in range(0, len(data), size))
        assert detect_in_blocks(blocks) == whole
    assert whole.revision == PUB


def test_detection_keeps_only_counts_and_a_few_examples():
    """O(1) memory per record: a generator is consumed once and nothing grows with the log but counts."""
    detection = detect_revision(e for e in resumed(300))
    assert detection.scores[PINNED] > 300 and len(detection.evidence) <= 3 and len(detection.reason) < 200


def test_derive_fold_and_stats_of_a_crashed_published_log_show_the_closers_a_load_adds():
    path = str(LOGS / "published-crashed.jsonl.zstd")
    derived = cli("derive", path)
    assert derived.code == 0 and derived.json[-1]["id"].startswith("interrupted-tool-result-call_run-")
    assert derived.err.count("\n") == 1 and "3 closer(s) its crash repair adds" in derived.err
    fold = cli("fold", path)
    assert fold.json["nodes"][-1] == 17 and "crash repair" in fold.err
    stats = cli("stats", "--format", "json", path)
    assert stats.json["surfaceSize"] == len(fold.json["nodes"]) and stats.json["events"] == 17


def test_the_default_ok_line_is_short_and_the_evidence_is_in_verbose_and_json(tmp_path):
    path = _write(tmp_path, resumed(12))
    plain = cli("validate", str(path))
    assert plain.out.splitlines()[0] == f"{path}: ok: 160 events"
    verbose = cli("validate", "-v", str(path)).out.splitlines()[0]
    assert verbose.startswith(f"{path}: ok: 160 events, 0 error(s), 0 warning(s), revision {PUB} (resumed: ")
    assert cli("validate", "--format", "json", str(path)).json["files"][0]["revisionReason"].startswith("resumed: ")
    broken = resumed(1)
    del broken[0]["data"]["turn"]
    invalid = cli("validate", str(_write(tmp_path, broken, "bad.jsonl"))).out.splitlines()
    assert invalid[1] == f"{tmp_path / 'bad.jsonl'}: INVALID: 28 events, 1 error(s), 0 warning(s), revision {PUB}"


def _with_hook(dialect: str) -> list[dict[str, Any]]:
    """A pinned turn holding a hook record of ``dialect``, then a published turn (a resumed log)."""
    events = turn_events(1, 0)
    hook = {"type": "hook/invoked", "seq": 11, "time": events[-1]["time"],
            "data": {"turn": 1, "point": "Stop", "dialect": dialect, "handlerId": f"{dialect}:Stop:1"}}
    events = [*events[:11], hook, {**events[11], "seq": 12}]
    return events + published_turn(2, len(events))


@pytest.mark.parametrize("level", ["schema", "strict"])
def test_earlier_format_records_the_release_keeps_as_stored_are_not_flagged(tmp_path, level):
    """A pinned hook record (dialect 'claude', a name the published revision dropped) in a resumed log: the
    release's load path keeps it as stored (`jsonl.loadUpgrade.otherEarlierRecords`), so it is no finding;
    a dialect no revision has is still one: a deviation, since no reader of the release reads a hook record's
    members (`readers` in its constants, DEC-27), failing only with `--fail-on deviation`."""
    report = cli("validate", "--format", "json", "--level", level, str(_write(tmp_path, _with_hook("claude")))).json
    [entry] = report["files"]
    assert (entry["revision"], entry["errors"], entry["keptAsStored"]) == (PUB, 0, {"hook/invoked": 1}), entry
    bad_log = str(_write(tmp_path, _with_hook("bogus"), "bad.jsonl"))
    bad = cli("validate", "--format", "json", "--level", level, bad_log).json["files"][0]
    assert [(f["code"], f["seq"], f["pointer"]) for f in bad["findings"]] == [("FORMAT_DEVIATION", 11, "/data/dialect")]
    assert cli("validate", "--fail-on", "deviation", "--level", level, bad_log).code == 1


SETTINGS = ["permission/preset", "sandbox/mode", "approval/policy", "plan/mode"]


def _settings(seq: int = 0) -> list[dict[str, Any]]:
    """One of each settings event, with a valid example payload from the published registry."""
    from sessionspec.spec import load_spec

    spec = load_spec(revision=PUB)
    return [{"type": t, "seq": seq + k, "time": 1767225600000,
             "data": spec.events[t]["examples"]["valid"][0]["event"]["data"]} for k, t in enumerate(SETTINGS)]


@pytest.mark.parametrize("turns", [0, 1])
def test_settings_before_the_first_turn_are_allowed_at_the_published_revision(tmp_path, turns):
    """The release writes settings between turns, the first included (its invariant companion constrains only
    core execution events): no INV_NO_OPEN_TURN without flags, with or without a turn after them."""
    events = _settings() + (published_turn(1, len(SETTINGS)) if turns else [])
    [report] = cli("validate", "--format", "json", "--level", "strict", str(_write(tmp_path, events))).json["files"]
    assert (report["revision"], report["errors"], report["warnings"]) == (PUB, 0, 0), report
    pinned = cli("validate", "--format", "json", "--level", "strict", "--revision", PINNED,
                 str(_write(tmp_path, _settings(), "p.jsonl"))).json["files"][0]
    assert {f["code"] for f in pinned["findings"]} == {"INV_NO_OPEN_TURN"}  # the pinned rule (INV-10)


def test_a_torn_tail_in_a_log_without_turn_end_is_not_said_to_follow_one(tmp_path):
    events = turn_events(1, 0, close=False)
    path = tmp_path / "torn.jsonl"
    path.write_bytes(jsonl(events) + b'{"type":"step/st\n')
    [torn] = [f for f in cli("validate", "--format", "json", str(path)).json["files"][0]["findings"]
              if f["code"] == "JSONL_TORN_TAIL"]
    assert "after the last turn/end" not in torn["message"] and "no turn/end" in torn["message"], torn


def test_two_writers_reusing_seqs_are_described_as_what_is_there(tmp_path):
    """Two writers appended other records under the same seqs: not 'records repeated', and a run is in a row."""
    first = turn_events(1, 0) + published_turn(2, 12)
    other = [{**e, "time": e["time"] + 1, "data": {**e["data"], "turn": 2}} for e in turn_events(2, 12)[:6]]
    path = _write(tmp_path, first + other + published_turn(3, 20))  # in the committed region
    [corrupt] = [f for f in cli("validate", "--format", "json", str(path)).json["files"][0]["findings"]
                 if f["code"] == "JSONL_CORRUPT"]
    assert "repeated" not in corrupt["message"] and "reuse seqs 12-17 with other content" in corrupt["message"]
    again = _write(tmp_path, first + first[12:18] + published_turn(3, 20), "again.jsonl")  # the same again
    [repeat] = [f for f in cli("validate", "--format", "json", str(again)).json["files"][0]["findings"]
                if f["code"] == "JSONL_CORRUPT"]
    assert "6 records repeated in a row (seqs 12-17)" in repeat["message"], repeat
