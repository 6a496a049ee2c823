"""Crafted SQLite stores are untrusted input (issue 25): nothing in a store's schema runs, a hot journal is
recovered on a private copy, schema bytes that are not UTF-8 are a located finding; every reading
command ends under CPU and memory limits (hostile_limits) with a finding, exit 1 or 2, no traceback."""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from hostile_limits import run_limited
from storage_fixtures import one_turn, write_db

#: a view that never ends when read (a recursive CTE sorted, so SQLite spills it to disk)
_ENDLESS = ("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT 's1' AS session_id, x AS seq, "
            "'t' AS type, 0 AS time, '{}' AS data, NULL AS source_event_seqs, NULL AS surface_op FROM c ORDER BY x DESC")

_LOOSE_EVENTS = ("CREATE TABLE events (session_id TEXT NOT NULL, seq INTEGER NOT NULL, type TEXT NOT NULL, "
                 "time INTEGER NOT NULL, data TEXT NOT NULL, source_event_seqs TEXT, surface_op TEXT, "
                 "PRIMARY KEY (session_id, seq))")

CRAFTS = {
    "events-view": ["ALTER TABLE events RENAME TO ev0", f"CREATE VIEW events AS {_ENDLESS}"],
    "sessions-view": ["ALTER TABLE sessions RENAME TO s0",
                      "CREATE VIEW sessions AS SELECT s0.* FROM s0, s0 a, s0 b, s0 c, s0 d, s0 e, s0 f, s0 g"],
    "state-view": ["ALTER TABLE persistence_state RENAME TO p0",
                   "CREATE VIEW persistence_state AS SELECT 1 AS singleton, zeroblob(900000000) AS store_id"],
    "trigger": ["CREATE TABLE x(a)", "CREATE TRIGGER t AFTER INSERT ON x BEGIN SELECT 1; END"],
    "virtual-table": ["CREATE VIRTUAL TABLE v USING rtree(id, a, b)"],
    "generated-column": ["ALTER TABLE events ADD COLUMN g TEXT GENERATED ALWAYS AS (upper(type)) VIRTUAL"],
    "no-primary-key": ["CREATE TABLE e2 AS SELECT * FROM events", "DROP TABLE events",
                       "ALTER TABLE e2 RENAME TO events"],
    # tables with the layout's columns and keys whose columns may hold any type: blobs, reals, text seqs
    "not-strict": ["ALTER TABLE events RENAME TO ev0", _LOOSE_EVENTS, "INSERT INTO events SELECT * FROM ev0",
                   "DROP TABLE ev0", "UPDATE events SET data = CAST(data AS BLOB), time = time + 0.5"],
    "untyped-columns": ["ALTER TABLE events RENAME TO ev0", _LOOSE_EVENTS.replace(" INTEGER", "").replace(" TEXT", ""),
                        "INSERT INTO events SELECT * FROM ev0", "DROP TABLE ev0", "UPDATE events SET seq = seq || 'x'"],
    "nullable-data": ["ALTER TABLE events RENAME TO ev0", _LOOSE_EVENTS.replace("data TEXT NOT NULL", "data TEXT")
                      + " STRICT", "INSERT INTO events SELECT * FROM ev0", "DROP TABLE ev0",
                      "UPDATE events SET data = NULL"],
    "schema-not-utf8": ["PRAGMA writable_schema = ON",
                        "UPDATE sqlite_schema SET name = CAST(X'78FF' AS TEXT), tbl_name = CAST(X'78FF' AS TEXT), "
                        "sql = CAST(X'435245415445205441424C45207846462028612920' AS TEXT) "
                        "WHERE name = 'persistence_state'"],
}


def _commands(store: Path, out: Path) -> list[list[str]]:
    return [["validate", str(store)], ["validate", "--format", "json", str(store)], ["header", str(store)],
            ["stats", str(store)], ["derive", str(store)], ["fold", str(store)], ["repair", str(store), "-o", str(out)]]


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_db(tmp_path_factory.mktemp("base") / "base.db", [one_turn()])


@pytest.mark.parametrize("craft", sorted(CRAFTS))
def test_crafted_schema_is_refused_without_running(craft: str, base: Path, tmp_path: Path) -> None:
    store = tmp_path / f"{craft}.db"
    shutil.copy(base, store)
    db = sqlite3.connect(store)
    for statement in CRAFTS[craft]:
        db.execute(statement)
    db.commit()
    db.close()
    before = hashlib.sha256(store.read_bytes()).hexdigest()
    for result in run_limited(_commands(store, tmp_path / "out.db")):
        assert result["code"] in (1, 2), result
        assert "SQLITE_LAYOUT" in result["out"] + result["err"] or "SQLITE_NOT_DATABASE" in result["out"] + result[
            "err"], result
        assert str(store) in result["out"] + result["err"], result  # located: names the store
    assert hashlib.sha256(store.read_bytes()).hexdigest() == before
    assert sorted(os.listdir(tmp_path)) == [store.name]  # no journal, no output, no temp file


def _killed_writer(store: Path) -> None:
    """A writer that dies inside a big transaction: the store holds its pages, the journal the old ones."""
    code = ("import os, sqlite3, sys\n"
            "db = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
            "db.execute('PRAGMA cache_size = 1'); db.execute('BEGIN'); db.execute('CREATE TABLE junk(x)')\n"
            "for _ in range(2000): db.execute('INSERT INTO junk VALUES (?)', ('x' * 500,))\n"
            "os._exit(9)\n")
    subprocess.run([sys.executable, "-c", code, str(store)], check=False)


def test_hot_journal_is_recovered_on_a_private_copy(base: Path, tmp_path: Path) -> None:
    store = tmp_path / "hot.db"
    shutil.copy(base, store)
    _killed_writer(store)
    journal = Path(f"{store}-journal")
    assert journal.stat().st_size > 0
    before = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in tmp_path.iterdir()}
    validate, header = run_limited([["validate", str(store)], ["header", str(store)]])
    assert validate["code"] == 0, validate
    assert "recovered on a private copy" in validate["out"], validate
    assert '"id": "s1"' in header["out"], header
    assert {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in tmp_path.iterdir()} == before


@pytest.mark.parametrize("side", ["-journal", "-wal", "-shm"])
@pytest.mark.parametrize("kind", ["folder", "symlink", "fifo"])
def test_a_journal_that_is_not_a_regular_file_is_refused(side: str, kind: str, base: Path, tmp_path: Path) -> None:
    """SQLite would follow a journal (or index) that is a link or a folder, or copy it: refused, nothing read."""
    store = tmp_path / "odd.db"
    shutil.copy(base, store)
    target = Path(f"{store}{side}")
    outside = tmp_path / "outside"
    outside.write_bytes(b"\0" * 4096)
    if kind == "folder":
        target.mkdir()
    elif kind == "symlink":
        target.symlink_to(outside)
    else:
        os.mkfifo(target)
    if side == "-shm":
        Path(f"{store}-wal").touch()
    before = sorted(os.listdir(tmp_path))
    for result in run_limited(_commands(store, tmp_path / "out.db")):
        assert result["code"] == 1, result
        assert "SQLITE_NOT_DATABASE" in result["out"] + result["err"], result
        assert "is a regular file of its own" in result["out"] + result["err"], result
        assert "Traceback" not in result["err"], result
    assert sorted(os.listdir(tmp_path)) == before
    assert outside.read_bytes() == b"\0" * 4096


def test_reading_a_wal_store_creates_nothing_beside_it(base: Path, tmp_path: Path) -> None:
    store = write_db(tmp_path / "wal.db", [one_turn()], journal_mode="wal")
    for suffix in ("-wal", "-shm"):
        Path(f"{store}{suffix}").unlink(missing_ok=True)
    (result,) = run_limited([["validate", str(store)]])
    assert result["code"] == 0, result
    assert sorted(os.listdir(tmp_path)) == ["wal.db"]


def test_a_read_past_the_work_budget_stops_with_a_finding(base: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The progress handler's budget (WORK_FLOOR + WORK_PER_BYTE x size steps) ends a read that runs too long;
    shrunk to nothing here, every read of the store stops at once with a finding naming the budget."""
    from cli_helpers import cli
    from sessionspec.reference import sqlite_store

    monkeypatch.setattr(sqlite_store, "WORK_FLOOR", 0)
    monkeypatch.setattr(sqlite_store, "WORK_PER_BYTE", 0)
    monkeypatch.setattr(sqlite_store, "_PROGRESS_STEP", 1)
    result = cli("validate", str(base))
    assert result.code == 1 and "work budget" in result.out and "SQLITE_NOT_DATABASE" in result.out, result.out
    monkeypatch.undo()
    assert cli("validate", str(base)).code == 0
