"""Each format revision's SQLite layout, resolved from spec data and served by one store (SQLITE-1 … SQLITE-5)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sessionspec.reference.persistence import open_backend
from sessionspec.reference.sqlite_store import SqliteStore, _from_varints, _varints, layout_for, schema_sql
from sessionspec.spec import load_spec
from sessionspec.spec.errors import SqliteStoreError
from sessionspec.spec.revisions import resolve_revision

PUBLISHED = "b150a551b8"
HEADER = {"version": 0, "id": "s", "createdAt": 1, "origin": "subagent", "agentPreset": "reviewer"}


def _chunks(first: int, count: int, text: str = "x") -> list[dict[str, Any]]:
    return [{"type": "assistant/chunk", "seq": first + i, "time": 10 + i,
             "data": {"turn": 1, "step": 0, "chunk": {"type": "text-delta", "index": 0, "text": text}}}
            for i in range(count)]


def test_published_layout_is_the_release_commits_layout_17() -> None:
    layout = layout_for(PUBLISHED)
    assert layout.user_version == 17 and layout_for(None).user_version == 10
    assert layout.columns("sessions") == ["id", "version", "created_at", "cwd", "parent_session", "seed_length",
                                          "origin", "delegation_depth", "agent_preset", "incarnation", "revision"]
    assert layout.columns("events") == ["session_id", "seq", "type", "time", "data", "source_event_seqs",
                                        "surface_op", "ignorable"]
    assert "data ANY NOT NULL" in schema_sql(PUBLISHED) and "data TEXT NOT NULL" in schema_sql()


def test_published_sqlite_changes_restate_nothing_equal_in_the_parent() -> None:
    """The revision names only what differs: no column added that the parent has, no patch that changes nothing."""
    changes = resolve_revision(PUBLISHED).changes["sqlite"]
    parent = {t["name"]: {c["name"]: c for c in t["columns"]} for t in load_spec().constants["sqlite"]["tables"]}
    for table, change in changes["tables"].items():
        cols = change.get("columns", {})
        assert not {c["name"] for c in cols.get("added", ())} & parent[table].keys()
        for name, patch in cols.get("changed", {}).items():
            assert any(parent[table][name].get(k) != v for k, v in patch.items()), (table, name)
    assert changes["userVersion"] != load_spec().constants["sqlite"]["userVersion"]


def test_a_change_to_a_missing_column_is_a_located_spec_error() -> None:
    from sessionspec.spec.revisions import apply_sqlite_changes

    class Bad(Exception):
        pass

    parent = load_spec().constants["sqlite"]
    with pytest.raises(Bad, match=r"events\.nope"):
        apply_sqlite_changes(parent, {"tables": {"events": {"columns": {"changed": {"nope": {"type": "ANY"}}}}}},
                             where="x", error=Bad)
    with pytest.raises(Bad, match="after 'nope'"):
        apply_sqlite_changes(parent, {"tables": {"events": {"columns": {"added": [
            {"name": "n", "type": "INTEGER", "constraint": "", "holds": "", "after": "nope"}]}}}}, where="x", error=Bad)


def test_layout_17_round_trip_packs_bounds_compresses_and_marks(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    big = {"id": "u", "role": "user", "content": [{"type": "text", "text": "y" * 9000}], "source": {"kind": "user"}}
    events = [{"type": "turn/start", "seq": 0, "time": 1, "data": {"turn": 1}}, *_chunks(1, 1500),
              {"type": "user/message", "seq": 1501, "time": 3, "data": big, "ignorable": True},
              {"type": "user/message", "seq": 1502, "time": 4, "data": big, "sourceEventSeqs": [9, 2, 2 ** 40],
               "surfaceOp": {"kind": "append"}}]
    with SqliteStore.create(path, revision=PUBLISHED) as store:
        store.append(HEADER, events[:700])
        store.append(HEADER, events[700:])
        assert store.read_session("s").events == events and store.list_sessions() == [HEADER]
        assert store.next_seq("s") == 1503
    db = sqlite3.connect(path)
    rows = db.execute("SELECT seq, type, typeof(data), source_event_seqs, ignorable FROM events ORDER BY seq").fetchall()
    db.close()
    # runs never span batches: 699 deltas, then 801 in the second batch; none over 1024 members
    assert [r[:2] for r in rows] == [(0, "turn/start"), (1, "text-chunks"), (700, "text-chunks"),
                                     (1501, "user/message"), (1502, "user/message")]
    assert [r[4] for r in rows] == [None, 0, 0, 1, None]
    assert rows[3][2] == "blob" and rows[4][3] == _varints([9, 2, 2 ** 40])


def test_a_run_over_the_member_bound_splits_and_a_short_rest_stays_scalar(tmp_path: Path) -> None:
    with SqliteStore.create(tmp_path / "s.db", revision=PUBLISHED) as store:
        store.append(HEADER, _chunks(0, 1026))
        rows = store.rows("s")
    assert [(r[0], r[1]) for r in rows] == [(0, "text-chunks"), (1024, "assistant/chunk"), (1025, "assistant/chunk")]


def test_a_run_over_the_byte_bound_takes_the_largest_prefix_within_it(tmp_path: Path) -> None:
    bound = layout_for(PUBLISHED).rows.codec["packedRowMaxDataBytes"]
    text = "t" * (bound // 4)
    with SqliteStore.create(tmp_path / "s.db", revision=PUBLISHED) as store:
        store.append(HEADER, _chunks(0, 7, text))
        rows = store.rows("s")
        assert store.read_session("s").events == _chunks(0, 7, text)
    assert [(r[0], r[1]) for r in rows] == [(0, "text-chunks"), (3, "text-chunks"), (6, "assistant/chunk")]


def test_each_revision_refuses_the_others_layout(tmp_path: Path) -> None:
    for writer, reader in ((None, PUBLISHED), (PUBLISHED, None)):
        path = tmp_path / f"{writer}.db"
        SqliteStore.create(path, revision=writer).close()
        with pytest.raises(SqliteStoreError) as info:
            SqliteStore.open(path, revision=reader)
        assert info.value.code == "SQLITE_VERSION"


def test_published_backend_repairs_a_torn_tail_after_packed_rows(tmp_path: Path) -> None:
    backend = open_backend("sqlite", tmp_path, PUBLISHED)
    try:
        backend.create({"version": 0, "id": "s", "createdAt": 1})
        events = [{"type": "turn/start", "seq": 0, "time": 1, "data": {"turn": 1}}, *_chunks(1, 5)]
        backend.simulate_torn_write("s", events)
        loaded = backend.load("s")
        assert [e["seq"] for e in loaded.events] == list(range(len(loaded.events)))
        assert loaded.events[:6] == events and loaded.events[-1]["type"] == "turn/end"
    finally:
        backend.close()


@given(st.lists(st.integers(0, 2 ** 53 - 1), max_size=20))
def test_source_seq_varints_round_trip(values: list[int]) -> None:
    assert _from_varints(_varints(values)) == values


@pytest.mark.parametrize("blob", [b"\x85", b"\x85\x00", b"\xff" * 9 + b"\x01"])
def test_malformed_varints_are_rejected(blob: bytes) -> None:
    with pytest.raises(ValueError):
        _from_varints(blob)


def test_sqlite_vectors_of_the_published_layout_are_tagged_to_it() -> None:
    doc = json.loads(Path(__file__).parents[2].joinpath("conformance/vectors/sqlite.json").read_text())
    assert doc["cases"] and all(c["revisions"] == [PUBLISHED] for c in doc["cases"])
