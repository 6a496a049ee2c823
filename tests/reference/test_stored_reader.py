"""The one reading of stored records (`jsonl.StoredReader`, JSONL-12..15) in its two modes.

Every defect (`read`, `is_legacy`: the validator) locates each refused record and reads on; first defect
(`read_all`: the load path of every storage form, and inspect) raises the one refusal the load path raises:
a legacy record anywhere first (JSONL-12), then the first record the upgrade refuses (JSONL-14 or the
upgraded message's seed check), then the first type the revision does not know (JSONL-15).
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sessionspec.reference import jsonl
from sessionspec.reference.rule_table import TABLE
from sessionspec.spec.errors import JsonlError, SeedError, SessionSpecError

PUB = "b150a551b8"
SID = "s"

# Records of every kind the reading decides on: current and earlier-format ones, malformed earlier-format
# ones, a replacing result without a message id, unknown and ignorable types, legacy vocabulary.
_RECORDS: list[dict[str, Any]] = [
    {"type": "turn/start", "data": {"turn": 1, "trigger": {"kind": "message"}}},
    {"type": "turn/start", "data": {"turn": 1}},
    {"type": "turn/start", "data": {"turn": True, "trigger": {"kind": "m"}}},
    {"type": "user/message", "surfaceOp": "append",
     "data": {"content": [{"type": "text", "text": "hi"}], "source": {"kind": "user"}}},
    {"type": "turn/end", "data": {"turn": 1, "reason": {"kind": "disposed"}}},
    {"type": "turn/end", "data": {"turn": 1, "reason": {"kind": 3}}},
    {"type": "steering/message", "data": None},
    {"type": "tool/result", "surfaceOp": {"op": "replace", "start": 0, "end": 0},
     "data": {"turn": 1, "step": 1, "callId": "c", "content": [], "isError": False}},
    {"type": "plugin/x", "data": {}},
    {"type": "plugin/x", "ignorable": True, "data": {}},
    {"type": "mode/set", "data": {}},
    {"type": "request/header-delta", "data": {}},
    {"type": "request/header", "data": {"reason": "fallback"}},
]


@st.composite
def _logs(draw: st.DrawFn) -> list[dict[str, Any]]:
    picked = draw(st.lists(st.sampled_from(_RECORDS), max_size=8))
    return [{**record, "seq": seq, "time": 5} for seq, record in enumerate(picked)]


def _expected(events: list[dict[str, Any]], revision: str | None) -> tuple[str, Any] | None:
    """The load path's refusal as the every-defect mode's findings give it: the first by kind, then by position
    (the upgrade's first refusal is read before any other, so its state is the load path's)."""
    reader = jsonl.StoredReader(SID, None, revision)
    found: dict[str, list[tuple[str, Any]]] = {"legacy": [], "upgrade": [], "unknown": []}
    legacy_order = list(TABLE.load_rejected_types)
    legacy: list[tuple[int, int, dict[str, Any]]] = []
    for index, event in enumerate(events):
        if reader.is_legacy(event):
            rank = legacy_order.index(event["type"]) if event["type"] in legacy_order else len(legacy_order)
            legacy.append((rank, index, event))
        _, refusal = reader.read(event, index)
        if refusal is not None:
            kind = "unknown" if refusal.code == "JSONL_UNKNOWN_TYPE" else "upgrade"
            found[kind].append((refusal.code, refusal.seq))
    found["legacy"] = [("JSONL_LEGACY_EVENT", event["seq"]) for _, _, event in sorted(legacy, key=lambda x: x[:2])]
    for kind in jsonl.REFUSAL_ORDER:
        if found[kind]:
            return found[kind][0]
    return None


@pytest.mark.req("JSONL-12", "JSONL-13", "JSONL-14", "JSONL-15")
@pytest.mark.parametrize("revision", [None, PUB])
@given(events=_logs())
def test_the_first_defect_is_the_first_every_defect_finding_by_kind(revision: str | None, events: list[Any]) -> None:
    expected = _expected(events, revision)
    try:
        read = jsonl.StoredReader(SID, None, revision, legacy=True).read_all(events)
    except (JsonlError, SeedError) as error:
        assert (error.code, error.seq) == expected
        return
    assert expected is None
    assert len(read) == len(events)


@pytest.mark.req("JSONL-13")
def test_records_read_as_stored_are_the_stored_list_itself() -> None:
    """Nothing upgraded: the stored list is returned as it is (the load path keeps its frozen events)."""
    events = [{**_RECORDS[0], "seq": 0, "time": 5}]
    assert jsonl.StoredReader(SID, None, None, legacy=True).read_all(events) is events
    current = [{"type": "turn/start", "seq": 0, "time": 5, "data": {"turn": 1}}]
    assert jsonl.StoredReader(SID, None, PUB, legacy=True).read_all(current) is current
    upgraded = jsonl.StoredReader(SID, None, PUB, legacy=True).read_all(events)
    assert upgraded is not events and upgraded[0]["data"] == {"turn": 1} and events[0]["data"]["trigger"]


@pytest.mark.req("JSONL-12")
def test_inspecting_reads_legacy_records_as_stored_and_loading_refuses_them() -> None:
    events = [{**_RECORDS[10], "seq": 0, "time": 5}, {**_RECORDS[12], "seq": 1, "time": 5}]
    assert jsonl.read_stored(events, SID) is events
    with pytest.raises(JsonlError) as info:
        jsonl.check_loadable({"id": SID, "version": 0}, events, SID, "here")
    assert (info.value.code, info.value.seq, info.value.path) == ("JSONL_LEGACY_EVENT", 0, "here")


@pytest.mark.req("JSONL-14")
def test_every_defect_mode_reads_on_after_a_refused_record() -> None:
    events = [{**_RECORDS[2], "seq": 0, "time": 5}, {**_RECORDS[5], "seq": 1, "time": 5},
              {**_RECORDS[8], "seq": 2, "time": 5}]
    reader = jsonl.StoredReader(SID, None, PUB)
    codes = [getattr(reader.read(e, i)[1], "code", None) for i, e in enumerate(events)]
    assert codes == ["JSONL_LEGACY_MALFORMED", "JSONL_LEGACY_MALFORMED", "JSONL_UNKNOWN_TYPE"]
    with pytest.raises(SessionSpecError) as info:
        jsonl.read_stored(events, SID, None, PUB)
    assert (info.value.code, info.value.seq) == ("JSONL_LEGACY_MALFORMED", 0)


@pytest.mark.req("JSONL-13", "JSONL-15")
@given(st.lists(st.sampled_from(_RECORDS), min_size=1, max_size=8), st.sampled_from([None, PUB]))
def test_a_record_of_a_type_not_read_apart_is_read_as_stored_and_unrefused(records: list[Any],
                                                                           revision: str | None) -> None:
    """`reads_apart` is the reader's own dispatch (JSONL-13..15 by type): a record of any type it clears comes back
    as the stored object itself, with no refusal, wherever it stands in the log; which is what lets a reader of the
    log (the validator's fast pass) skip those records."""
    reader = jsonl.StoredReader(SID, None, revision)
    for index, stored in enumerate({**r, "seq": i, "time": i} for i, r in enumerate(records)):
        read, refusal = reader.read(stored, index)
        data = stored.get("data")
        if not reader.reads_apart(stored["type"], data if isinstance(data, dict) else None):
            assert read is stored and refusal is None, stored


@pytest.mark.req("JSONL-13")
def test_the_readers_dispatch_is_its_reads_apart_test(monkeypatch: pytest.MonkeyPatch) -> None:
    """A variant of the test (as a mutant would make it) decides the reading: a type it no longer names is read as
    stored, even an earlier-format record the upgrade would rewrite or refuse; the unchanged test upgrades it."""
    from sessionspec.reference import upgrade

    earlier = {"type": "turn/start", "seq": 0, "time": 0, "data": {"turn": 1, "trigger": {"kind": "message"}}}
    read, refusal = jsonl.StoredReader(SID, None, PUB).read(earlier, 0)
    assert read is not earlier and refusal is None
    malformed = {"type": "turn/start", "seq": 0, "time": 0, "data": {"turn": True, "trigger": {"kind": "m"}}}
    assert jsonl.StoredReader(SID, None, PUB).read(malformed, 0)[1] is not None
    monkeypatch.setattr(upgrade.UpgradeReader, "reads_apart", lambda self, etype, members=None: etype != "turn/start")
    reader = jsonl.StoredReader(SID, None, PUB)
    assert not reader.reads_apart("turn/start")
    read, refusal = reader.read(earlier, 0)
    assert read is earlier and refusal is None and reader.upgraded == {}
    read, refusal = reader.read(malformed, 0)
    assert read is malformed and refusal is None
