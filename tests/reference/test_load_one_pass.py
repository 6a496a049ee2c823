"""The seeded load path reads a stored log in one pass: the walk of the load rules (`seed_walk.LoadWalk`) reads each
record through the revision's `jsonl.StoredReader` and checks it, and the error raised is chosen from that pass's
findings by the refusal order (`StoredReader.first_defect`: a legacy record anywhere, then the first upgrade
refusal, then the first unknown type, then the first seed rule's finding), not by a reading pass before it.

The oracle is the two-step composition the load path was before (the reader's own pass, `check_loadable`, then
the repair closers and a `Session` seeded from what it read): the same exception (class, code, message, seq,
cause) or the same events and closers, on logs of every kind of record the reading decides on and of damaged
envelopes the seed rules refuse.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sessionspec.reference import jsonl, jsonl_zstd
from sessionspec.reference.repair import interrupted_turn_closers
from sessionspec.reference.session import Session
from sessionspec.reference.sqlite_store import SqliteStore
from sessionspec.reference.upgrade import UpgradeReader
from sessionspec.spec.errors import SessionSpecError
from test_stored_reader import _RECORDS, PUB, SID, _expected

HEADER: dict[str, Any] = {"type": "session", "version": 0, "id": SID, "createdAt": 1767225600000, "cwd": "/work",
                          "delegationDepth": 0}

#: Records the seed rules refuse (SEED-3 envelope, SEED-9 numbering) while the reading reads them as stored.
_DAMAGED: list[dict[str, Any]] = [
    {"type": "turn/start", "data": {"turn": 1}, "seq": 99},
    {"type": "turn/start", "data": {"turn": 1}, "time": "late"},
    {"type": "turn/end", "data": {"turn": 1, "reason": {"kind": "completed"}}, "extra": 1},
]


@st.composite
def _logs(draw: st.DrawFn) -> list[dict[str, Any]]:
    picked = draw(st.lists(st.sampled_from(_RECORDS + _DAMAGED + _RECORDS[:2]), max_size=8))
    return [{"seq": seq, "time": 5, **record} for seq, record in enumerate(picked)]


def _two_pass(events: list[dict[str, Any]], revision: str | None) -> tuple[Any, Any, Any]:
    read = jsonl.check_loadable(HEADER, events, SID, "here", revision)
    closers = list(interrupted_turn_closers(read, revision))
    session = Session(SID, [*read, *closers], HEADER, revision=revision)
    return session, read, closers


def _outcome(load: Any) -> tuple[Any, ...]:
    try:
        session, read, closers = load()
    except SessionSpecError as error:
        cause = error.__cause__
        return ("error", type(error), error.code, str(error), error.seq,
                None if cause is None else (type(cause), str(cause)))
    marker = [dict(e) for e in session.events if e["type"] != "session/end-seed"]  # (its time: the wall clock)
    return ("loaded", marker, [dict(e) for e in read], closers)


@pytest.mark.req("JSONL-12", "JSONL-13", "JSONL-14", "JSONL-15", "SEED-1")
@pytest.mark.parametrize("revision", [None, PUB])
@given(events=_logs())
def test_the_one_pass_raises_what_the_reading_then_the_seed_raised(revision: str | None,
                                                                 events: list[dict[str, Any]]) -> None:
    one = _outcome(lambda: jsonl.load_records(SID, HEADER, [dict(e) for e in events], "here", revision, seed=True))
    two = _outcome(lambda: _two_pass([dict(e) for e in events], revision))
    assert one == two
    expected = _expected(events, revision)  # the reading's refusal, from the every-defect reading's findings
    if expected is not None:
        assert one[:1] == ("error",) and (one[2], one[4]) == expected


def _log(*records: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"seq": seq, "time": 5, **record} for seq, record in enumerate(records)]


_TURN = {"type": "turn/start", "data": {"turn": 1}}
_BAD_SEQ = {"type": "turn/start", "data": {"turn": 1}, "seq": 7}  # SEED-9 at position 0
_MODE_SET = {"type": "mode/set", "data": {}}
_DELTA = {"type": "request/header-delta", "data": {}}
_MALFORMED = {"type": "turn/start", "data": {"turn": True, "trigger": {"kind": "m"}}}  # JSONL-14 at b150a551b8
_UNKNOWN = {"type": "plugin/x", "data": {}}  # JSONL-15 at b150a551b8


@pytest.mark.req("JSONL-12", "JSONL-14", "JSONL-15")
@pytest.mark.parametrize(("revision", "records", "code", "seq"), [
    # a seed rule's finding at the first record loses to a legacy record at the last (JSONL-12: the whole file)
    (None, (_BAD_SEQ, _TURN, _MODE_SET), "JSONL_LEGACY_EVENT", 2),
    (PUB, (_BAD_SEQ, _TURN, _MODE_SET), "JSONL_LEGACY_EVENT", 2),
    # the legacy kinds in the rule table's order, not by position
    (None, (_TURN, _MODE_SET, _DELTA), "JSONL_LEGACY_EVENT", None),
    # an upgrade refusal after an unknown type, and after a seed rule's finding
    (PUB, (_UNKNOWN, _TURN, _MALFORMED), "JSONL_LEGACY_MALFORMED", 2),
    (PUB, (_BAD_SEQ, _MALFORMED), "JSONL_LEGACY_MALFORMED", 1),
    # an unknown type after a seed rule's finding
    (PUB, (_BAD_SEQ, _TURN, _UNKNOWN), "JSONL_UNKNOWN_TYPE", 2),
    # no refusal of the reading: the first seed rule's finding, by position
    (PUB, (_TURN, _BAD_SEQ, {"type": "turn/start", "data": {"turn": 1}, "time": "x"}), "SEED_NOT_CONTIGUOUS", None),
])
def test_the_refusal_order_is_chosen_from_the_one_pass(revision: str | None, records: tuple[dict[str, Any], ...],
                                                       code: str, seq: int | None) -> None:
    events = _log(*records)
    with pytest.raises(SessionSpecError) as info:
        jsonl.load_records(SID, HEADER, events, "here", revision, seed=True)
    assert info.value.code == code
    if seq is not None:
        assert info.value.seq == seq
    assert _outcome(lambda: jsonl.load_records(SID, HEADER, _log(*records), "here", revision, seed=True)) == \
        _outcome(lambda: _two_pass(_log(*records), revision))
    if records[1:] == (_MODE_SET, _DELTA):  # which legacy kind the load path names: the table's first
        assert "request/header-delta" in str(info.value) or "mode/set" in str(info.value)
        assert str(info.value) == str(_two_pass_error(events, revision))


def _two_pass_error(events: list[dict[str, Any]], revision: str | None) -> SessionSpecError:
    with pytest.raises(SessionSpecError) as info:
        _two_pass(events, revision)
    return info.value


# -------------------------------------------------------------------- one reader, one read of each record

class _Counts:
    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.readers = self.read_all = self.records = 0
        init, read_all, read = jsonl.StoredReader.__init__, jsonl.StoredReader.read_all, UpgradeReader.read

        def counted_init(reader: Any, *args: Any, **kwargs: Any) -> None:
            self.readers += 1
            init(reader, *args, **kwargs)

        def counted_read_all(reader: Any, events: Any) -> Any:
            self.read_all += 1
            return read_all(reader, events)

        def counted_read(reader: Any, stored: Any, index: int) -> Any:
            self.records += 1
            return read(reader, stored, index)

        monkeypatch.setattr(jsonl.StoredReader, "__init__", counted_init)
        monkeypatch.setattr(jsonl.StoredReader, "read_all", counted_read_all)
        monkeypatch.setattr(UpgradeReader, "read", counted_read)


_STORED = _log(_TURN, {"type": "turn/end", "data": {"turn": 1, "reason": {"kind": "completed"}}})


@pytest.mark.req("JSONL-12")
@pytest.mark.parametrize("revision", [None, PUB])
@pytest.mark.parametrize("form", ["jsonl", "zstd", "sqlite"])
def test_a_seeded_load_constructs_one_reader_and_reads_each_record_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, revision: str | None, form: str) -> None:
    if form == "jsonl":
        path = tmp_path / "log.jsonl"
        jsonl.write_artifact(path, HEADER, _STORED)
        load = lambda: [jsonl.load_artifact(path, SID, durable=False, revision=revision, seed=True)]  # noqa: E731
    elif form == "zstd":
        path = tmp_path / "log.jsonl.zst"
        jsonl_zstd.write_compressed_artifact(path, HEADER, _STORED)
        load = lambda: [jsonl_zstd.load_compressed_artifact(path, SID, durable=False, revision=revision,  # noqa: E731
                                                            seed=True)]
    else:
        with SqliteStore.create(tmp_path / "store.sqlite") as store:
            store.append(HEADER, _STORED)
        store = SqliteStore.open(tmp_path / "store.sqlite")
        load = lambda: store.repair([SID], durable=False, revisions={SID: revision}, seed=True)  # noqa: E731
    counts = _Counts(monkeypatch)
    (loaded,) = load()
    assert loaded.session is not None and [e["type"] for e in loaded.events] == ["turn/start", "turn/end"]
    assert counts.readers == 1  # one stored reader per load, the walk's
    assert counts.read_all == 0  # no reading pass of its own before the walk
    assert counts.records == (len(_STORED) if revision == PUB else 0)  # each stored record read once (JSONL-13)
