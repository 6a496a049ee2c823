"""The one reader's first-defect mode over entries that are not lines (a SQLite session's rows): JSONL-6 … JSONL-8's
decisions, with the storage form's own refusal and statement of the committed region (SQLITE-5)."""

from __future__ import annotations

from typing import Any

import pytest
from sessionspec.reference.jsonl_read import read_entries
from sessionspec.spec.errors import SessionSpecError, SqliteStoreError


def _ev(seq: int, etype: str = "x/y") -> dict[str, Any]:
    return {"type": etype, "seq": seq, "time": 1, "data": {}}


def _refuse(i: int, expected: int | None, seq: Any) -> SessionSpecError:
    return SqliteStoreError(f"entry {i} expected {expected} got {seq}", "SQLITE_CORRUPT", requirement="SQLITE-5")


@pytest.mark.req("SQLITE-5", "JSONL-7")
@pytest.mark.parametrize(("entries", "kept", "stopped"), [
    ([[_ev(0)], [_ev(1), _ev(2)], [_ev(3, "turn/end")]], 4, None),
    ([[_ev(0, "turn/end")], None, [_ev(1)]], 1, 1),  # a hole after the last turn/end: a torn tail
    ([[_ev(0, "turn/end")], [_ev(1)], [_ev(5)], [_ev(2)]], 2, 2),  # a seq gap after it
    ([[_ev(0, "turn/end")], [_ev(0)]], 1, 1),  # a row overlapping the prefix
    ([[_ev(0)], [], [_ev(1)]], 2, None),  # a row of no records
])
def test_reading_stops_at_the_first_defect_past_the_committed_region(entries: list[Any], kept: int,
                                                                       stopped: int | None) -> None:
    events, at = read_entries(entries, _refuse)
    assert [e["seq"] for e in events] == list(range(kept)) and at == stopped


@pytest.mark.req("SQLITE-5", "JSONL-7")
@pytest.mark.parametrize(("entries", "where"), [
    ([[_ev(0)], None, [_ev(1, "turn/end")]], (1, None, None)),
    ([[_ev(0)], [_ev(2)], [_ev(3, "turn/end")]], (1, 1, 2)),
    ([[_ev(0)], [_ev(1)], [_ev(1, "turn/end")]], (2, 2, 1)),
])
def test_a_defect_in_the_committed_region_is_the_forms_refusal(entries: list[Any], where: tuple[Any, ...]) -> None:
    with pytest.raises(SqliteStoreError) as info:
        read_entries(entries, _refuse)
    assert info.value.message == "entry %s expected %s got %s" % where


@pytest.mark.req("SQLITE-5")
def test_the_committed_region_is_the_forms_own_statement() -> None:
    entries = [[_ev(0)], None, [_ev(1, "turn/end")]]
    events, at = read_entries(entries, _refuse, committed=lambda i, end: False)  # nothing committed: a torn tail
    assert [e["seq"] for e in events] == [0] and at == 1
