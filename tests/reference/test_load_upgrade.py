"""The published load path: earlier-format records upgraded, malformed ones and unknown types refused (JSONL-13..15).

The behaviour is the revision's data (``jsonl.loadUpgrade``, ``jsonl.unknownTypesOnLoad``, its registry)
read by one strategy; the pinned revision loads records as stored. Every storage form's load path reads it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from sessionspec.conformance.cases import for_revision, load_corpus
from sessionspec.conformance.harness import InProcessConnection
from sessionspec.conformance.runner import run_cases
from sessionspec.reference import jsonl
from sessionspec.reference.jsonl_zstd import load_compressed_artifact, write_compressed_artifact
from sessionspec.reference.persistence import open_backend
from sessionspec.reference.revision import rules_for
from sessionspec.reference.sqlite_store import SqliteStore
from sessionspec.spec import load_spec
from sessionspec.spec.errors import JsonlError, SeedError

PUB = "b150a551b8"
HEADER = {"version": 0, "id": "s", "createdAt": 1, "delegationDepth": 0}
PINNED_LOG = [
    {"type": "turn/start", "seq": 0, "time": 5, "data": {"turn": 1, "trigger": {"kind": "message"}}},
    {"type": "user/message", "seq": 1, "time": 5, "surfaceOp": "append",
     "data": {"content": [{"type": "text", "text": "hi"}], "source": {"kind": "user"}}},
    {"type": "turn/end", "seq": 2, "time": 5, "data": {"turn": 1, "reason": {"kind": "disposed"}}},
]
UPGRADED = [
    {"type": "turn/start", "seq": 0, "time": 5, "data": {"turn": 1}},
    {"type": "user/message", "seq": 1, "time": 5, "surfaceOp": "append",
     "data": {"content": [{"type": "text", "text": "hi"}], "source": {"kind": "user"}, "id": "legacy-message:s:1",
              "role": "user"}},
    {"type": "turn/end", "seq": 2, "time": 5, "data": {"turn": 1, "reason": {"kind": "aborted", "reason": {"kind": "disposed"}}}},
]


def _write(tmp_path: Path, events: list[dict[str, Any]]) -> Path:
    path = tmp_path / "session.jsonl"
    jsonl.write_artifact(path, HEADER, events)
    return path


def _plain(value: Any) -> Any:
    return json.loads(json.dumps(value))


def test_the_pinned_revision_loads_records_as_stored_and_the_published_one_upgrades_them(tmp_path: Path) -> None:
    path = _write(tmp_path, PINNED_LOG)
    before = path.read_bytes()
    assert _plain(jsonl.load_artifact(path, "s").events) == PINNED_LOG
    loaded = jsonl.load_artifact(path, "s", revision=PUB)
    assert _plain(loaded.events) == UPGRADED
    assert _plain(loaded.session.events[:3]) == UPGRADED
    assert path.read_bytes() == before  # the upgrade is a reading: the stored file is not rewritten


def test_every_storage_form_reads_through_the_same_upgrade_and_guard(tmp_path: Path) -> None:
    zstd = tmp_path / "session.jsonl.zstd"
    write_compressed_artifact(zstd, HEADER, PINNED_LOG)
    assert _plain(load_compressed_artifact(zstd, "s", revision=PUB).events) == UPGRADED
    with SqliteStore.create(tmp_path / "sessions.db") as store:
        store.append(HEADER, PINNED_LOG)
        assert _plain(store.repair(["s"], durable=False, revisions={"s": PUB})[0].events) == UPGRADED
        assert _plain(store.repair(["s"], durable=False)[0].events) == PINNED_LOG
        store.append(HEADER, [{"type": "plugin/x", "seq": 3, "time": 5, "data": {}}])
        with pytest.raises(JsonlError) as info:
            store.repair(["s"], durable=False, revisions={"s": PUB})
        assert (info.value.code, info.value.requirement, info.value.seq) == ("JSONL_UNKNOWN_TYPE", "JSONL-15", 3)


def test_unknown_types_are_judged_by_the_revisions_vocabulary_and_the_ignorable_marker(tmp_path: Path) -> None:
    known = load_spec(revision=PUB).events  # the revision's registry: no second list of it
    assert rules_for(PUB).load_known_types == frozenset(known) and rules_for(None).load_known_types is None
    assert "steering/message" not in known and "steering/message" in load_spec().events  # its events.removed
    plugin = {"type": "plugin/x", "seq": 0, "time": 5, "data": {}}
    path = _write(tmp_path, [plugin])
    assert len(jsonl.load_artifact(path, "s", durable=False).events) == 1  # the pinned load path has no guard
    with pytest.raises(JsonlError) as info:
        jsonl.load_artifact(path, "s", durable=False, revision=PUB)
    assert (info.value.code, info.value.seq) == ("JSONL_UNKNOWN_TYPE", 0)
    path = _write(tmp_path, [{**plugin, "ignorable": True}])
    assert _plain(jsonl.load_artifact(path, "s", durable=False, revision=PUB).events)[0]["ignorable"] is True


@pytest.mark.parametrize(("event", "what"), [
    ({"type": "turn/start", "seq": 0, "time": 5, "data": {"turn": 1, "trigger": None}}, "a trigger that is not an object"),
    ({"type": "turn/start", "seq": 0, "time": 5, "data": {"turn": True, "trigger": {"kind": "m"}}}, "a boolean turn"),
    ({"type": "turn/end", "seq": 0, "time": 5, "data": {"turn": 1, "reason": {"kind": 3}}}, "a reason kind that is not a string"),
    ({"type": "turn/end", "seq": 0, "time": 5, "data": {"turn": 1, "reason": {"kind": "aborted", "why": 1}}}, "an aborted reason with detail"),
    ({"type": "turn/end", "seq": 0, "time": 5, "data": {"turn": 1, "reason": {"kind": "error", "step": -1, "message": "m"}}}, "a negative step"),
    ({"type": "turn/end", "seq": 0, "time": 5,
      "data": {"turn": 1, "reason": {"kind": "error", "step": 1, "failure": {"message": "m", "code": "C", "status": "500"}}}},
     "a failure status that is not a number"),
    ({"type": "turn/end", "seq": 0, "time": 5, "data": {"turn": 1, "reason": {"kind": "error", "step": 1, "message": "m", "code": None}}},
     "a null code"),
    ({"type": "steering/message", "seq": 0, "time": 5, "data": None}, "steering without an object"),
    ({"type": "steering/message", "seq": 0, "time": 5, "data": {"turn": 1.5, "content": [], "source": {}}}, "a fractional turn"),
])
def test_a_malformed_earlier_format_record_refuses_the_load_with_its_seq(tmp_path: Path, event: dict[str, Any], what: str) -> None:
    path = _write(tmp_path, [event])
    with pytest.raises(JsonlError) as info:
        jsonl.load_artifact(path, "s", durable=False, revision=PUB)
    assert (info.value.code, info.value.requirement, info.value.seq) == ("JSONL_LEGACY_MALFORMED", "JSONL-14", 0), what


def test_a_rewrite_of_a_node_without_a_message_id_has_none_and_is_refused_as_a_seeded_message(tmp_path: Path) -> None:
    events = [
        {"type": "turn/start", "seq": 0, "time": 5, "data": {"turn": 1}},
        {"type": "tool/result", "seq": 1, "time": 5, "surfaceOp": {"op": "replace", "start": 0, "end": 0},
         "data": {"turn": 1, "step": 1, "callId": "c", "content": [], "isError": False}},
    ]
    path = _write(tmp_path, events)
    with pytest.raises(SeedError) as info:
        jsonl.load_artifact(path, "s", durable=False, revision=PUB)
    assert (info.value.code, info.value.requirement, info.value.seq) == ("SEED_MESSAGE", "SEED-18", 1)


def _cases(requirement: str) -> list[Any]:
    return [c for c in for_revision(load_corpus(), PUB) if requirement in c.requirements and c.area == "jsonl-upgrade"]


def _passing(cases: list[Any]) -> list[str]:
    run = run_cases(cases, lambda: InProcessConnection(revision=PUB))
    assert len(run.results) == len(cases)
    return [r.case.id for r in run.results if r.outcome == "passed"]


@pytest.mark.parametrize("requirement", ["JSONL-13", "JSONL-14"])
def test_the_vectors_catch_a_load_path_without_the_upgrade(monkeypatch: pytest.MonkeyPatch, requirement: str) -> None:
    monkeypatch.setattr(rules_for(PUB), "load_upgrade", None)
    cases = _cases(requirement)
    assert len(cases) >= 5 and _passing(cases) == []


def test_the_vectors_catch_a_load_path_without_the_vocabulary_guard(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rules_for(PUB), "load_known_types", None)
    refusals = [c for c in _cases("JSONL-15") if c.expect.get("rejected", {}).get("code") == "JSONL_UNKNOWN_TYPE"]
    assert len(refusals) >= 4 and _passing(refusals) == []


def test_the_vectors_catch_a_guard_that_runs_before_the_upgrade(monkeypatch: pytest.MonkeyPatch) -> None:
    """The one reader's first-defect order: a log with a malformed earlier-format record and an unknown type is
    refused for the first (the release upgrades the whole log before its guard); the vectors catch the swap."""
    monkeypatch.setattr(jsonl, "REFUSAL_ORDER", ("legacy", "unknown", "upgrade"))
    ordering = [c for c in _cases("JSONL-15") if c.expect.get("rejected", {}).get("code") not in (None, "JSONL_UNKNOWN_TYPE")]
    assert len(ordering) == 2 and _passing(ordering) == []


@pytest.mark.parametrize("kind", ["jsonl", "jsonl-zstd", "sqlite"])
def test_inspect_reads_as_the_revisions_reader_without_repairing(tmp_path: Path, kind: str) -> None:
    """The persistence seam's inspect (upstream readFrom) upgrades and refuses like load, and writes nothing."""
    backend = open_backend(kind, tmp_path / "pinned", revision=None)
    published = open_backend(kind, tmp_path / "published", revision=PUB)
    try:
        for b in (backend, published):
            b.create(HEADER)
            b.append("s", PINNED_LOG)
        assert _plain(backend.inspect("s")[1]) == PINNED_LOG
        token = published.revision("s")
        assert _plain(published.inspect("s")[1]) == UPGRADED and published.revision("s") == token
        published.append("s", [{"type": "plugin/x", "seq": 3, "time": 5, "data": {}}])
        with pytest.raises(JsonlError) as info:
            published.inspect("s")
        assert (info.value.code, info.value.seq) == ("JSONL_UNKNOWN_TYPE", 3)
    finally:
        backend.close()
        published.close()


_UPGRADE_PROBES = [
    *PINNED_LOG,
    {"type": "turn/start", "seq": 0, "time": 5, "data": {"turn": 1}},
    {"type": "turn/start", "seq": 0, "time": 5, "data": {"turn": 0, "trigger": 3}},
    {"type": "turn/start", "seq": 0, "time": 5, "data": {"turn": 1, "extra": {"kind": "x"}}},
    {"type": "turn/start", "seq": 0, "time": 5, "data": []},
    {"type": "turn/end", "seq": 2, "time": 5, "data": {"turn": 1, "reason": {"kind": "completed"}}},
    {"type": "steering/message", "seq": 1, "time": 5, "data": {"turn": 1, "content": [], "source": {"kind": "user"}}},
    {"type": "assistant/message", "seq": 3, "time": 5, "data": {"turn": 1, "step": 1, "content": [],
                                                               "provenance": {"provider": "p", "model": "m"}}},
    {"type": "step/start", "seq": 3, "time": 5, "data": {"turn": 1, "step": 1, "trigger": {}}},
]


@pytest.mark.parametrize("event", _UPGRADE_PROBES, ids=lambda e: f"{e['type']}:{sorted(e['data']) if isinstance(e['data'], dict) else e['data']}")
def test_a_shape_the_upgrade_may_not_rewrite_is_read_as_stored(event: dict[str, Any]) -> None:
    """`upgrade.may_rewrite` (what the validator's fast pass asks of a struct's payload members): where it says no,
    the published load path's reader returns the very record, unchanged and not counted, and refuses nothing."""
    from sessionspec.reference.upgrade import UPGRADED_TYPES, may_rewrite

    rules = rules_for(PUB)
    assert rules.load_upgrade is not None
    data = event["data"]
    members = data if isinstance(data, dict) else {}
    if may_rewrite(event["type"], members) and isinstance(data, dict):
        assert event["type"] in UPGRADED_TYPES
        return
    reader = rules.load_upgrade.reader("s", rules.messages)
    stored = json.loads(json.dumps(event))
    try:
        read = reader.read(stored, 0)
    except (JsonlError, SeedError) as error:  # (only a message check of the revision's message shape: not the upgrade)
        assert not isinstance(error, JsonlError), error
        return
    assert read is stored and read == event and not reader.upgraded
    assert may_rewrite("turn/start", {"turn", "trigger"}) and not may_rewrite("turn/start", {"turn"})
    assert not may_rewrite("step/start", {"turn", "step", "trigger"}) and may_rewrite("user/message", {"content"})
