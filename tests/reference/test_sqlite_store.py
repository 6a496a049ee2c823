"""SQLITE-1 … SQLITE-8: the SQLite store on real database files (stdlib sqlite3, no mocks)."""

from __future__ import annotations

import hashlib
import os
import sqlite3
from pathlib import Path

import pytest
from sessionspec.reference.jsonl import read_artifact
from sessionspec.reference.sqlite_store import APPLICATION_ID, USER_VERSION, SqliteStore
from sessionspec.spec.errors import JsonlError, PersistenceError, SqliteStoreError
from storage_fixtures import HEADER, one_turn, open_turn, write_db, write_raw


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_sqlite1_sqlite2_fresh_store_layout_and_pragmas(tmp_path: Path) -> None:
    path = write_db(tmp_path / "s.db", [one_turn()])
    assert os.stat(path).st_mode & 0o777 == 0o600
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID == 0x44534850
    assert db.execute("PRAGMA user_version").fetchone()[0] == USER_VERSION == 10
    tables = {name: sql for name, sql in db.execute("SELECT name, sql FROM sqlite_schema WHERE type = 'table'")}
    assert set(tables) == {"persistence_state", "sessions", "events"}
    assert all(sql.rstrip().endswith("STRICT") for sql in tables.values())
    assert [r[1] for r in db.execute("PRAGMA table_info(events)")] == [
        "session_id", "seq", "type", "time", "data", "source_event_seqs", "surface_op"]
    db.close()


@pytest.mark.parametrize(("setup", "code"), [
    ("CREATE TABLE t (x)", "SQLITE_FOREIGN"),
    ("PRAGMA application_id = 1234", "SQLITE_FOREIGN"),
    (f"PRAGMA application_id = {0x44534850}; PRAGMA user_version = 9", "SQLITE_VERSION"),
    (f"PRAGMA application_id = {0x44534850}; PRAGMA user_version = 10", "SQLITE_LAYOUT"),
])
def test_sqlite1_foreign_or_other_version_rejects_before_any_change(tmp_path: Path, setup: str, code: str) -> None:
    path = tmp_path / "other.db"
    db = sqlite3.connect(path)
    db.executescript(setup)
    db.close()
    before = digest(path)
    for opener in (SqliteStore.open, SqliteStore.create):
        with pytest.raises(SqliteStoreError) as info:
            opener(path)
        assert info.value.code == code
    assert digest(path) == before


def test_sqlite1_not_a_database(tmp_path: Path) -> None:
    path = tmp_path / "junk.db"
    path.write_bytes(b"definitely not sqlite\n" * 100)
    with pytest.raises(SqliteStoreError) as info:
        SqliteStore.open(path)
    assert info.value.code == "SQLITE_NOT_DATABASE"


def test_sqlite3_sqlite4_rows_read_as_the_raw_twin(tmp_path: Path) -> None:
    header = {**HEADER, "parentSession": "p0", "seedLength": 0}
    batches = [one_turn(), one_turn(6, 2)]
    raw = read_artifact(write_raw(tmp_path / "session.jsonl", batches, header))
    with SqliteStore.open(write_db(tmp_path / "s.db", batches, header)) as store:
        assert store.list_sessions() == [raw.header]
        stored = store.read_session("s1")
        assert stored.events == raw.events and stored.torn_from is None
        row = store.rows("s1")[1]
        assert row[4] is None and row[5] == '"append"'  # NULL when absent, JSON text when present
        with pytest.raises(SqliteStoreError) as info:
            store.header("missing")
        assert info.value.code == "SQLITE_NO_SESSION"


def test_sqlite5_row_gap_after_last_turn_end_is_a_torn_tail_and_in_committed_region_rejects(tmp_path: Path) -> None:
    path = write_db(tmp_path / "s.db", [one_turn(), open_turn(6)])
    db = sqlite3.connect(path)
    db.execute("UPDATE events SET seq = 9 WHERE seq = 7")
    db.commit()
    with SqliteStore.open(path) as store:
        stored = store.read_session("s1")
        assert [e["seq"] for e in stored.events] == list(range(7)) and stored.torn_from == 7
    db.execute("DELETE FROM events WHERE seq = 2")
    db.commit()
    db.close()
    with SqliteStore.open(path) as store, pytest.raises(SqliteStoreError) as info:
        store.read_session("s1")
    assert info.value.code == "SQLITE_CORRUPT" and info.value.seq == 3 and info.value.path.endswith("#s1")


def test_sqlite5_unparsable_data_in_the_committed_region_rejects(tmp_path: Path) -> None:
    path = write_db(tmp_path / "s.db", [one_turn()])
    db = sqlite3.connect(path)
    db.execute("UPDATE events SET data = '{not json' WHERE seq = 1")
    db.commit()
    db.close()
    with SqliteStore.open(path) as store, pytest.raises(SqliteStoreError) as info:
        store.read_session("s1")
    assert info.value.code == "SQLITE_CORRUPT"


def test_sqlite6_sqlite7_repair_is_one_transaction_and_moves_the_revision(tmp_path: Path) -> None:
    path = write_db(tmp_path / "s.db", [one_turn(), open_turn(6)])
    db = sqlite3.connect(path)
    db.execute("UPDATE events SET data = 'torn' WHERE seq = 7")
    db.commit()
    db.close()
    with SqliteStore.open(path) as store:
        before = store.revision("s1")
        with pytest.raises(SqliteStoreError) as info:
            store.load("s1")
        assert info.value.code == "SQLITE_READ_ONLY"
        assert store.load("s1", durable=False).closers[-1]["data"]["reason"] == {"kind": "interrupted"}
        assert store.revision("s1") == before
    with SqliteStore.open(path, writable=True) as store:
        loaded = store.load("s1")
        assert [e["type"] for e in loaded.events[6:]] == ["turn/start", "turn/end"]
        assert loaded.truncated_bytes == 1  # one torn row deleted
        after = store.revision("s1")
        assert after != before
        assert store.read_session("s1").events == loaded.events
        assert store.load("s1").closers == [] and store.revision("s1") == after
        store.append(HEADER, one_turn(8, 3))
        assert store.revision("s1") != after


def test_persist3_persist4_persist5_rejected_batches_store_nothing(tmp_path: Path) -> None:
    path = write_db(tmp_path / "s.db", [one_turn()])
    with SqliteStore.open(path, writable=True) as store:
        revision = store.revision("s1")
        cases = [
            (one_turn(), "PERSIST_SEQ_CONTINUE"),
            (one_turn(7, 2), "PERSIST_SEQ_CONTINUE"),
            ([*one_turn(6, 2)[:2], one_turn(9, 2)[2]], "PERSIST_SEQ_GAP"),
            ([{**one_turn(6, 2)[0]}, {**one_turn(6, 2)[1], "data": {"x": float("nan")}}], "PERSIST_DATA_NOT_JSON"),
        ]
        for batch, code in cases:
            with pytest.raises(PersistenceError) as info:
                store.append(HEADER, batch)
            assert info.value.code == code
        assert "user/message" in str(info.value)
        assert store.revision("s1") == revision and len(store.rows("s1")) == 6


def test_persist2_a_session_appears_with_its_first_append(tmp_path: Path) -> None:
    with SqliteStore.create(tmp_path / "s.db") as store:
        store.append({**HEADER, "id": "empty"}, [])
        assert store.list_sessions() == []
        store.append(HEADER, one_turn())
        assert [h["id"] for h in store.list_sessions()] == ["s1"]


def test_sqlite8_locked_database_is_reported_not_waited_on(tmp_path: Path) -> None:
    path = write_db(tmp_path / "s.db", [one_turn()])
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(SqliteStoreError) as info:
            SqliteStore.open(path, timeout=0.1)
        assert info.value.code == "SQLITE_LOCKED"
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_sqlite8_wal_database_reads_with_uncheckpointed_commits(tmp_path: Path) -> None:
    path = write_db(tmp_path / "s.db", [one_turn()], journal_mode="wal")
    writer = sqlite3.connect(path)
    writer.execute("PRAGMA wal_autocheckpoint = 0")
    with SqliteStore.open(path, writable=True) as store:
        store.append(HEADER, one_turn(6, 2))
    with SqliteStore.open(path) as store:
        assert len(store.read_session("s1").events) == 12
    writer.close()


def test_jsonl12_version_check_on_database_load(tmp_path: Path) -> None:
    path = write_db(tmp_path / "s.db", [one_turn()], {**HEADER, "version": 1})
    with SqliteStore.open(path) as store, pytest.raises(JsonlError) as info:
        store.load("s1", durable=False)
    assert info.value.code == "JSONL_VERSION" and info.value.path.endswith("s.db#s1")
