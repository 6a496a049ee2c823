"""One row decoder of a SQLite store per reading (issue #26): the load path (`SqliteStore.read_session`) and the CLI
(`tools/storage._session_unit`, every SQLite input of validate, stats, derive, fold and repair) read a session's rows
through `SqliteStore.decode_rows`, the layout's row codec called once per row. The CLI keeps no row decoding of its
own: a second statement of it creeping back (a row decoded twice, or a refused row's data parsed again by the CLI)
fails here. The every-defect mode locates each hole (session, row, seq, column) with the rows around it decoded."""

from __future__ import annotations

import sqlite3
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import HEADER, cli, published_events, turn_events
from sessionspec.reference import json_text
from sessionspec.reference.sqlite_store import JsonTextRows, PhysicalRows, RowDefect, SqliteStore
from sessionspec.spec.errors import SqliteStoreError

PUB = "b150a551b8"


class _Decodes(Counter[str]):
    rows: int = 0


@pytest.fixture
def decodes(monkeypatch: pytest.MonkeyPatch) -> _Decodes:
    found = _Decodes()
    for codec in (JsonTextRows, PhysicalRows):
        original = codec.__dict__["read_row"]

        def counted(self: Any, *args: Any, _original: Any = original, **kwargs: Any) -> Any:
            found["row decodings"] += 1
            return _original(self, *args, **kwargs)

        monkeypatch.setattr(codec, "read_row", counted)
    loads = json_text.loads

    def parse(*args: Any, **kwargs: Any) -> Any:
        caller = sys._getframe(1).f_globals.get("__name__", "")
        if caller == "sessionspec.storage":  # (the logical JSONL the rows become is the validator's to parse)
            found[f"row data parsed by the CLI ({sys._getframe(1).f_code.co_name})"] += 1
        return loads(*args, **kwargs)

    monkeypatch.setattr(json_text, "loads", parse)
    return found


def _pinned(path: Path) -> int:
    """A store of two sessions: one closed, one crashed inside its second turn; a row of bad JSON in the torn
    tail and one with bad JSON in ``surface_op``. The number of event rows."""
    with SqliteStore.create(path) as store:
        store.append(dict(HEADER, id="a"), turn_events(1))
        store.append(dict(HEADER, id="b"), turn_events(1) + turn_events(2, start_seq=12, close=False))
    con = sqlite3.connect(path)
    con.execute("UPDATE events SET data = '{\"turn\":' WHERE session_id = 'b' AND seq = 20")
    con.execute("UPDATE events SET surface_op = 'append' WHERE session_id = 'b' AND seq = 22")
    con.commit()
    count = int(con.execute("SELECT COUNT(*) FROM events").fetchone()[0])
    con.close()
    return count


def _published(path: Path) -> int:
    """A store of the published layout (packed chunk rows, varint seqs) with a torn tail: a packed row of a type
    that has no chunk rows. The number of event rows."""
    with SqliteStore.create(path, revision=PUB) as store:
        store.append({"version": 0, "id": "p", "createdAt": 1, "delegationDepth": 0}, published_events("p"))
    con = sqlite3.connect(path)
    con.execute("INSERT INTO events VALUES ('p', 100, 'user/message', 5, '{}', NULL, NULL, 0)")
    con.commit()
    count = int(con.execute("SELECT COUNT(*) FROM events").fetchone()[0])
    con.close()
    return count


COMMANDS = [["validate", "--format", "json"], ["validate", "--level", "load"], ["validate", "--level", "strict"],
            ["validate", "--exact"], ["stats"], ["derive"], ["fold"]]


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
@pytest.mark.parametrize("form", [_pinned, _published], ids=["layout-10", "layout-17"])
def test_each_command_decodes_each_row_once(tmp_path: Path, decodes: _Decodes, command: list[str], form: Any) -> None:
    path = tmp_path / "store.db"
    rows = form(path)
    decodes.clear()
    session = [] if command[0] == "validate" else ["--session", "b" if form is _pinned else "p"]
    result = cli(*command, str(path), *session)
    assert result.code in (0, 1), result.err
    if command[0] == "validate":
        assert "JSONL_TORN_TAIL" in result.out  # the torn row was read, and located
    expected = rows if not session else rows - (12 if form is _pinned else 0)  # (session a's rows are not read)
    assert decodes == {"row decodings": expected}


def test_repair_decodes_each_row_once_per_pass(tmp_path: Path, decodes: _Decodes) -> None:
    """repair reads a store's rows twice: the input's once (the revision check, whose sessions the dry run that refuses
    an unloadable session takes: `SqliteStore.repair(read=...)`) and the copy's, in the repair's transaction."""
    path = tmp_path / "store.db"
    rows = _pinned(path)
    decodes.clear()
    result = cli("repair", str(path), "-o", str(tmp_path / "out.db"))
    assert result.code == 0, result.err
    assert decodes == {"row decodings": 2 * rows}


def test_every_defect_mode_locates_each_hole_and_decodes_the_rows_around_it(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    with SqliteStore.create(path) as store:
        store.append(dict(HEADER, id="a"), turn_events(1))
    con = sqlite3.connect(path)
    con.execute("UPDATE events SET data = '[1,' WHERE seq = 2")  # committed region: the loader refuses the session
    con.execute("UPDATE events SET source_event_seqs = '[1,' WHERE seq = 7")
    con.execute("UPDATE events SET surface_op = 'x', data = '{' WHERE seq = 9")
    con.commit()
    con.close()
    with SqliteStore.open(path) as store:
        decoded = list(store.decode_rows("a", every_defect=True))
        holes = [d.defect for d in decoded if d.events is None]
        assert [(h.session, h.index, h.seq, h.column) for h in holes if h] == [
            ("a", 2, 2, "data"), ("a", 7, 7, "source_event_seqs"), ("a", 9, 9, "data")]
        assert all(isinstance(h, RowDefect) for h in holes)
        assert holes[0] is not None and holes[0].data_not_json is not None and holes[0].reason.startswith("not JSON")
        assert holes[1] is not None and holes[1].data_not_json is None  # its data is JSON: another column refused
        assert [d.events[0]["seq"] for d in decoded if d.events] == [0, 1, 3, 4, 5, 6, 8, 10, 11]
        first = list(store.decode_rows("a"))  # the load path's mode: the same events, no reasons
        assert [d.events for d in first] == [d.events for d in decoded]
        assert all(d.defect is None for d in first)
        with pytest.raises(SqliteStoreError) as refused:  # the first hole refuses the session, as before
            store.read_session("a")
    assert refused.value.code == "SQLITE_CORRUPT" and refused.value.seq == 2
    assert "unparsable event row in the committed region" in refused.value.message


def test_a_column_refused_before_data_still_says_why_data_is_not_json(tmp_path: Path) -> None:
    """A packed row whose type has no chunk rows is refused at ``type``; its stored data text is still judged once."""
    path = tmp_path / "store.db"
    _published(path)
    con = sqlite3.connect(path)
    con.execute("INSERT INTO events VALUES ('p', 101, 'user/message', 5, '{oops', NULL, NULL, 0)")
    con.commit()
    con.close()
    with SqliteStore.open(path, revision=PUB) as store:
        holes = [d.defect for d in store.decode_rows("p", every_defect=True) if d.defect is not None]
    assert [(h.seq, h.column, h.data_not_json is None) for h in holes] == [(100, "type", True), (101, "type", False)]
