"""A change declared once in a revision's data reaches every consumer: schemas, catalogs, vectors, reference.

A synthetic child of the published revision declares its changes in its ``changes``
(constants of crash repair and of the load path, a schema patch, a removed type, a retired
requirement) and nothing else;
each consumer must show each one without any code naming the revision.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from sessionspec.catalog import render_persistence, render_revisions, revision_catalog_name
from sessionspec.conformance.cases import for_revision, load_corpus
from sessionspec.reference import jsonl
from sessionspec.reference.repair import interrupted_turn_closers
from sessionspec.reference.session import Session
from sessionspec.spec import load_spec
from sessionspec.spec import revisions as rv
from sessionspec.spec.errors import JsonlError
from sessionspec.spec.loader import SCHEMA_BASE

PUBLISHED = "b150a551b8"
CHILD = "fffffff016"
FEEDBACK = SCHEMA_BASE + "payload/feedback/record.json"


@pytest.fixture
def child(monkeypatch: pytest.MonkeyPatch) -> str:
    rv.requirement_revisions()  # cached from the real data: other tests never see the synthetic revision
    rv._release_index()
    real = rv._revisions()
    synthetic = rv.Revision(
        id=CHILD, title="Synthetic child", date="2026-12-01", parent=PUBLISHED, source="tests",
        changes={
            "summary": "A test revision.",
            "constants": {"repair": {"interruptedMessageIdFormat": "synthetic-{callId}-{seq}"},
                          "jsonl": {"loadUpgrade": {"messageIdFormat": "synthetic:{sessionId}:{seq}"},
                                    "unknownTypesOnLoad": "accepted"}},
            "schemas": {FEEDBACK: {"properties": {"text": {"minLength": 1}}}},
            "events": {"removed": {"team/task": "Tasks left the team vocabulary."}},
            "requirements": {"retired": {"FORK-8": "No fork boundary rule."}},
        },
    )
    monkeypatch.setattr(rv, "_revisions", lambda: {**real, CHILD: synthetic})
    return CHILD


def test_the_declared_changes_reach_the_schemas(child: str) -> None:
    spec, parent = load_spec(revision=child), load_spec(revision=PUBLISHED)
    assert not spec.validator(FEEDBACK).is_valid({"text": ""}) and parent.validator(FEEDBACK).is_valid({"text": ""})
    task = parent.events["team/task"]["examples"]["invalid"][0]["event"]
    assert "team/task" not in spec.events and not parent.event_validator().is_valid(task)
    assert spec.event_validator().is_valid(task)  # an unregistered type: envelope only
    assert "FORK-8" not in spec.requirements and "FORK-8" in parent.requirements


def test_the_declared_changes_reach_the_catalogs(child: str) -> None:
    catalog = render_persistence(load_spec(revision=child))
    assert "#### `team/task`" not in catalog and "#### `team/message/queued`" in catalog
    changes = render_revisions().split(f"## {child}: changes from {PUBLISHED}", 1)[1]
    assert "| `team/task` | removed | Tasks left the team vocabulary. |" in changes
    assert "FORK-8" in changes and "payload/feedback/record.json" in changes
    assert revision_catalog_name(child) in render_revisions()


def test_the_declared_changes_reach_the_vectors(child: str) -> None:
    corpus = load_corpus()
    fork8 = {c.id for c in corpus if "FORK-8" in c.requirements}
    assert fork8 & {c.id for c in for_revision(corpus, PUBLISHED)}
    assert not fork8 & {c.id for c in for_revision(corpus, child)}


def test_the_declared_changes_reach_the_reference(child: str) -> None:
    events = [
        {"type": "turn/start", "seq": 0, "time": 5, "data": {"turn": 1}},
        {"type": "step/start", "seq": 1, "time": 5, "data": {"turn": 1, "step": 1}},
        {"type": "assistant/message", "seq": 2, "time": 5, "surfaceOp": "append", "data": {"turn": 1, "step": 1, "message": {
            "id": "a1", "role": "assistant", "source": {"kind": "model", "provider": "p", "model": "m"},
            "content": [{"type": "tool-call", "id": "c1", "name": "read", "arguments": "{}"}]}}},
    ]
    assert interrupted_turn_closers(events, child)[0]["data"]["message"]["id"] == "synthetic-c1-3"
    assert interrupted_turn_closers(events, PUBLISHED)[0]["data"]["message"]["id"] == "interrupted-tool-result-c1-3"
    session = Session("s", [*events, *interrupted_turn_closers(events, child)], revision=child)
    assert session.revision == child


def test_the_declared_load_path_changes_reach_every_storage_form(child: str, tmp_path: Path) -> None:
    """The load path's minted ids and vocabulary guard follow the revision's constants, not code."""
    header = {"version": 0, "id": "s", "createdAt": 1, "delegationDepth": 0}
    flat = {"type": "user/message", "seq": 0, "time": 5, "surfaceOp": "append", "data": {"content": [], "source": {"kind": "user"}}}
    plugin = {"type": "plugin/x", "seq": 1, "time": 5, "data": {}}
    jsonl.write_artifact(tmp_path / "s.jsonl", header, [flat, plugin])
    loaded = jsonl.load_artifact(tmp_path / "s.jsonl", "s", durable=False, revision=child)
    assert loaded.events[0]["data"]["id"] == "synthetic:s:0" and len(loaded.events) == 2
    with pytest.raises(JsonlError) as info:
        jsonl.load_artifact(tmp_path / "s.jsonl", "s", durable=False, revision=PUBLISHED)
    assert info.value.code == "JSONL_UNKNOWN_TYPE"
