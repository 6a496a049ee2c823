"""Where a SQLite torn tail starts, per layout, as each upstream backend reports and deletes it (SQLITE-5, SQLITE-7).

Layouts 10 and 14 store one row per event, and their backends report the first seq past the preserved
prefix (``base + preserved.length``: schema.ts at 2f74ac98ba and ed2e24f7eb). The release commit's layout 17
packs rows, and its backend reports the seq of the first physical row it does not keep
(compression.ts ``scanRows`` at b150a551b8: ``tornFrom: physical.seq``), then deletes every row from that seq:
the two differ for a gap (the row starts past the prefix) and for a row overlapping the prefix (a row
starting inside a packed row's members), which a deletion from the first seq past the prefix would keep.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from sessionspec.reference.sqlite_store import SqliteStore

PUB = "b150a551b8"
HEADER = {"version": 0, "id": "s", "createdAt": 1}
TURN = [{"type": "turn/start", "seq": 0, "time": 1, "data": {"turn": 1}},
        {"type": "turn/end", "seq": 1, "time": 2, "data": {"turn": 1, "reason": "completed"}}]


def _chunks(first: int, count: int) -> list[dict[str, Any]]:
    return [{"type": "assistant/chunk", "seq": first + i, "time": 10 + i,
             "data": {"turn": 2, "step": 0, "chunk": {"type": "text-delta", "index": 0, "text": "x"}}}
            for i in range(count)]


def _store(path: Path, layout: int | None, events: list[dict[str, Any]], extra: list[tuple[Any, ...]]) -> None:
    with SqliteStore.create(path, revision=PUB, user_version=layout) as store:
        store.append(HEADER, events)
    db = sqlite3.connect(path)
    width = len(db.execute("SELECT * FROM events LIMIT 1").description)
    for row in extra:
        db.execute(f"INSERT INTO events VALUES ({', '.join('?' * width)})", ("s", *row, *[None] * (width - 1 - len(row))))  # noqa: S608 - placeholders only
    db.commit()
    db.close()


@pytest.mark.parametrize(("layout", "torn_from"), [(17, 9), (14, 2)])
def test_a_gap_after_the_last_turn_end_is_torn_from_where_each_backend_says(tmp_path: Path, layout: int,
                                                                           torn_from: int) -> None:
    path = tmp_path / "s.db"
    _store(path, layout, TURN, [(9, "turn/start", 3, '{"turn":2}')])
    with SqliteStore.open(path, revision=PUB) as store:
        stored = store.read_session("s")
    assert (stored.events, stored.torn_from) == (TURN, torn_from)


def test_a_row_overlapping_a_packed_row_is_deleted_by_repair(tmp_path: Path) -> None:
    """Layout 17: a packed row holds 2..6; a row at seq 5 after it is torn from 5 (not 7), and repair deletes it."""
    path = tmp_path / "s.db"
    events = [*TURN, {"type": "turn/start", "seq": 2, "time": 3, "data": {"turn": 2}}, *_chunks(3, 4)]
    _store(path, 17, events, [(5, "step/start", 9, '{"turn":2,"step":1}')])
    with SqliteStore.open(path, revision=PUB, writable=True) as store:
        stored = store.read_session("s")
        assert (len(stored.events), stored.torn_from) == (7, 5)
        [loaded] = store.repair(["s"])
        assert loaded.truncated_bytes == 1  # one torn row deleted
        again = store.read_session("s")
    assert again.torn_from is None and [e["seq"] for e in again.events] == list(range(len(again.events)))
    assert again.events[:7] == events and again.events[-1]["type"] == "turn/end"


def test_torn_rows_count_rows_not_events(tmp_path: Path) -> None:
    """A layout-17 tail after packed rows: the count of torn rows is of rows (it was rows minus events)."""
    path = tmp_path / "s.db"
    _store(path, 17, [*TURN, {"type": "turn/start", "seq": 2, "time": 3, "data": {"turn": 2}}, *_chunks(3, 9)],
           [(12, "turn/end", 9, '{"turn":')])
    with SqliteStore.open(path, revision=PUB, writable=True) as store:
        [loaded] = store.repair(["s"])
    assert loaded.truncated_bytes == 1
