"""Chunk-row storage codec (CHUNK-1..16, DEC-13)."""

from __future__ import annotations

import collections
import copy
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sessionspec.reference import (
    MIN_RUN,
    ROW_TYPES,
    ChunkRowError,
    decode_storage_record,
    dumps,
    freeze_json_value,
    json_equal,
    loads,
    pack_chunk_runs,
)
from sessionspec.spec import constants
from sessionspec.spec.errors import JsonValueError
from strategies import MAX_SAFE, chunk_batches, session_logs


def delta(seq: int, time: int = 0, text: str = "t", kind: str = "text-delta", turn: Any = 1, step: Any = 1, index: Any = 0, **chunk_extra: Any) -> dict[str, Any]:
    if kind == "tool-call-delta":
        chunk: dict[str, Any] = {"type": kind, "index": index, "id": chunk_extra.pop("id", "c1")}
        if "name" in chunk_extra:
            chunk["name"] = chunk_extra.pop("name")
        chunk["argumentsDelta"] = text
    else:
        chunk = {"type": kind, "index": index, "text": text}
    chunk.update(chunk_extra)
    return {"type": "assistant/chunk", "seq": seq, "time": time, "data": {"turn": turn, "step": step, "chunk": chunk}}


def decode_all(records: list[Any]) -> list[Any]:
    out: list[Any] = []
    for record in records:
        out.extend(decode_storage_record(loads(dumps(record))))
    return out


def test_chunk_constants_from_spec() -> None:
    assert MIN_RUN == constants()["chunkRows"]["minRun"] == 3
    assert ROW_TYPES == ("text-chunks", "reasoning-chunks", "tool-call-chunks")


def test_chunk1_pure_and_order_preserving() -> None:
    events = [delta(0), {"type": "turn/start", "seq": 1, "time": 0, "data": {}}, delta(2), delta(3), delta(4)]
    before = copy.deepcopy(events)
    records = pack_chunk_runs(events)
    assert events == before
    assert records[0] is events[0] and records[1] is events[1]
    assert decode_all(records) == events
    frozen = freeze_json_value(events)
    assert pack_chunk_runs(frozen) == records


def test_chunk2_chunk4_chunk6_text_row_shape() -> None:
    events = [delta(5, 100, "a"), delta(6, 103, "b"), delta(7, 102, "c")]
    (row,) = pack_chunk_runs(events)
    assert row == {"type": "text-chunks", "seq0": 5, "time0": 100, "data": {"turn": 1, "step": 1, "index": 0, "dt": [3, -1], "texts": ["a", "b", "c"]}}
    assert list(row) == ["type", "seq0", "time0", "data"]
    reasoning = pack_chunk_runs([delta(i, kind="reasoning-delta") for i in range(3)])
    assert reasoning[0]["type"] == "reasoning-chunks"


def test_chunk6_tool_call_row_name_presence() -> None:
    named = pack_chunk_runs([delta(i, kind="tool-call-delta", text=str(i), name="read") for i in range(3)])
    assert named == [{"type": "tool-call-chunks", "seq0": 0, "time0": 0, "data": {"turn": 1, "step": 1, "index": 0, "dt": [0, 0], "id": "c1", "name": "read", "args": ["0", "1", "2"]}}]
    nameless = pack_chunk_runs([delta(i, kind="tool-call-delta") for i in range(3)])
    assert "name" not in nameless[0]["data"] and nameless[0]["data"]["args"] == ["t", "t", "t"]


def test_chunk4_two_members_stay_events_three_pack() -> None:
    two = [delta(0), delta(1)]
    assert pack_chunk_runs(two) == two
    assert len(pack_chunk_runs([delta(0), delta(1), delta(2)])) == 1


@pytest.mark.parametrize(
    ("second", "why"),
    [
        (delta(2), "seq gap"),
        (delta(1, kind="reasoning-delta"), "kind change"),
        (delta(1, turn=2), "turn change"),
        (delta(1, step=2), "step change"),
        (delta(1, index=1), "index change"),
    ],
)
def test_chunk3_run_breaks(second: dict[str, Any], why: str) -> None:
    third = dict(second, seq=second["seq"] + 1)
    records = pack_chunk_runs([delta(0), second, third])
    assert len(records) == 3, why


def test_chunk3_tool_call_identity_must_match() -> None:
    def kinds(*tail: dict[str, Any]) -> list[str]:
        head = [delta(0, kind="tool-call-delta", name="read"), delta(1, kind="tool-call-delta", name="read")]
        return [r["type"] for r in pack_chunk_runs(head + [dict(e, seq=i + 2) for i, e in enumerate(tail)])]

    same = delta(0, kind="tool-call-delta", name="read")
    assert kinds(same) == ["tool-call-chunks"]
    # a change of name presence, name value or id ends the run of two (left verbatim)
    for other in (delta(0, kind="tool-call-delta"), delta(0, kind="tool-call-delta", name="write"), delta(0, kind="tool-call-delta", id="c2", name="read")):
        assert kinds(other, other, other) == ["assistant/chunk", "assistant/chunk", "tool-call-chunks"]


def test_chunk3_gap_overflow_splits_run() -> None:
    events = [delta(0, -MAX_SAFE), delta(1, MAX_SAFE), delta(2, MAX_SAFE), delta(3, MAX_SAFE)]
    records = pack_chunk_runs(events)
    assert records[0] is events[0] and records[1]["type"] == "text-chunks" and len(records) == 2
    assert decode_all(records) == events
    exact = [delta(0, 0), delta(1, MAX_SAFE), delta(2, 0)]
    assert pack_chunk_runs(exact)[0]["data"]["dt"] == [MAX_SAFE, -MAX_SAFE]


@pytest.mark.parametrize(
    "event",
    [
        dict(delta(1), surfaceOp="append"),  # stray envelope key
        dict(delta(1), time=1.5),  # fractional time
        dict(delta(1), time=2**53),  # unsafe time
        dict(delta(1), seq=True),
        delta(1, text=5),  # non-string text
        delta(1, turn=1.0),  # DEC-13: integral float never packs
        delta(1, step=True),
        delta(1, index=0.0),
        delta(1, extra="x"),
        {"type": "assistant/chunk", "seq": 1, "time": 0, "data": None},
        {"type": "assistant/chunk", "seq": 1, "time": 0, "data": {"turn": 1, "step": 1, "chunk": "x"}},
        {"type": "assistant/chunk", "seq": 1, "time": 0, "data": {"turn": 1, "step": 1, "chunk": {"type": "text-delta", "text": "x"}}},
        {"type": "assistant/chunk", "seq": 1, "time": 0, "data": {"turn": 1, "step": 1, "chunk": delta(0)["data"]["chunk"], "x": 1}},
        delta(1, kind="tool-call-delta", name=None),
    ],
    ids=lambda e: repr(e)[:60],
)
def test_chunk13_chunk16_dec13_near_misses_stored_verbatim(event: dict[str, Any]) -> None:
    events = [delta(0), event, delta(2), delta(3), delta(4)]
    records = pack_chunk_runs(events)
    assert records[0] is events[0] and records[1] is event
    assert records[2]["type"] == "text-chunks" and records[2]["seq0"] == 2
    assert decode_all(records) == events


@pytest.mark.parametrize("kind", ["block-start", "block-end", "usage", "finish"])
def test_chunk14_non_delta_chunks_never_pack(kind: str) -> None:
    events = [{"type": "assistant/chunk", "seq": i, "time": 0, "data": {"turn": 1, "step": 1, "chunk": {"type": kind, "index": 0}}} for i in range(4)]
    assert pack_chunk_runs(events) == events


def test_chunk5_non_packable_event_ends_the_run() -> None:
    events = [delta(0), delta(1), {"type": "tool/call", "seq": 2, "time": 0, "data": {}}, delta(3), delta(4), delta(5)]
    records = pack_chunk_runs(events)
    assert [r["type"] for r in records] == ["assistant/chunk", "assistant/chunk", "tool/call", "text-chunks"]


def test_chunk7_runs_never_span_calls() -> None:
    events = [delta(i) for i in range(4)]
    halves = pack_chunk_runs(events[:2]) + pack_chunk_runs(events[2:])
    assert halves == events


@pytest.mark.parametrize("value", [None, "x", 5, [1, 2], {"type": "turn/start", "seq": 0}, {"no": "type"}, {"type": "Text-chunks"}])
def test_chunk8_non_rows_pass_through_unvalidated(value: Any) -> None:
    result = decode_storage_record(value)
    assert result == [value] and result[0] is value


def good_row(**over: Any) -> dict[str, Any]:
    row = {"type": "text-chunks", "seq0": 3, "time0": 10, "data": {"turn": 1, "step": 1, "index": 0, "dt": [1, 2], "texts": ["a", "b", "c"]}}
    data_over = over.pop("data_over", {})
    row.update(over)
    if data_over:
        row["data"] = {**row["data"], **data_over}
    for key in [k for k, v in data_over.items() if v is DROP]:
        del row["data"][key]
    for key in [k for k, v in over.items() if v is DROP]:
        del row[key]
    return row


DROP: Any = object()


@pytest.mark.parametrize(
    ("row", "fragment"),
    [
        (good_row(extra=1), "envelope"),
        (good_row(time0=DROP), "envelope"),
        (good_row(seq0=-1), "seq0"),
        (good_row(seq0=1.0), "seq0"),
        (good_row(seq0=True), "seq0"),
        (good_row(time0=2**53), "time0"),
        (good_row(time0=0.5), "time0"),
        (good_row(data=[1]), "data must be an object"),
        (good_row(data_over={"x": 1}), "data must be exactly"),
        (good_row(data_over={"texts": DROP}), "data must be exactly"),
        (good_row(data_over={"turn": "1"}), "turn/step/index"),
        (good_row(data_over={"index": True}), "turn/step/index"),
        (good_row(data_over={"step": None}), "turn/step/index"),
        (good_row(data_over={"texts": []}), "non-empty list of strings"),
        (good_row(data_over={"texts": ["a", 1, "c"]}), "non-empty list of strings"),
        (good_row(data_over={"texts": "abc"}), "non-empty list of strings"),
        (good_row(data_over={"dt": [1, 2.0]}), "dt must be a list of safe integers"),
        (good_row(data_over={"dt": [1, True]}), "dt must be a list of safe integers"),
        (good_row(data_over={"dt": [1, 2**53]}), "dt must be a list of safe integers"),
        (good_row(data_over={"dt": [1]}), "dt length 1 does not match 3 members"),
        (good_row(seq0=MAX_SAFE - 1), "member seqs"),
        (good_row(time0=MAX_SAFE - 2), "member times"),
        (good_row(time0=-MAX_SAFE, data_over={"dt": [-1, 2]}), "member times"),
    ],
)
def test_chunk9_malformed_rows_rejected(row: dict[str, Any], fragment: str) -> None:
    with pytest.raises(ChunkRowError) as info:
        decode_storage_record(row)
    err = info.value
    assert err.code == "CHUNK_ROW_MALFORMED" and err.requirement == "CHUNK-9"
    assert "malformed text-chunks storage row" in err.message and fragment in err.message


def test_chunk9_tool_row_id_and_name_types() -> None:
    row = {"type": "tool-call-chunks", "seq0": 0, "time0": 0, "data": {"turn": 1, "step": 1, "index": 0, "dt": [], "id": "c", "args": ["x"]}}
    assert decode_storage_record(row)[0]["data"]["chunk"] == {"type": "tool-call-delta", "index": 0, "id": "c", "argumentsDelta": "x"}
    for bad in ({"id": 5}, {"name": 5}, {"name": None}):
        with pytest.raises(ChunkRowError, match="must be strings"):
            decode_storage_record({**row, "data": {**row["data"], **bad}})
    with pytest.raises(ChunkRowError, match="data must be exactly"):
        decode_storage_record({**row, "data": {**row["data"], "texts": ["x"]}})


def test_chunk9_check_order_follows_the_precedence_table() -> None:
    # envelope beats seq0 beats time0 beats data ...; each row violates two rules
    with pytest.raises(ChunkRowError, match="envelope"):
        decode_storage_record(good_row(extra=1, seq0=-1))
    with pytest.raises(ChunkRowError, match="seq0"):
        decode_storage_record(good_row(seq0=-1, time0=0.5))
    with pytest.raises(ChunkRowError, match="time0"):
        decode_storage_record(good_row(time0=0.5, data=None))
    with pytest.raises(ChunkRowError, match="turn/step/index"):
        decode_storage_record(good_row(data_over={"turn": None, "texts": []}))
    with pytest.raises(ChunkRowError, match="non-empty"):
        decode_storage_record(good_row(data_over={"texts": [], "dt": "x"}))
    with pytest.raises(ChunkRowError, match="dt must be"):
        decode_storage_record(good_row(seq0=MAX_SAFE, data_over={"dt": [0.5, 1]}))
    with pytest.raises(ChunkRowError, match="dt length"):
        decode_storage_record(good_row(seq0=MAX_SAFE, data_over={"dt": [1]}))
    with pytest.raises(ChunkRowError, match="member seqs"):
        decode_storage_record(good_row(seq0=MAX_SAFE, time0=MAX_SAFE))


def test_chunk10_chunk11_dec13_short_rows_expand_exactly() -> None:
    one = {"type": "reasoning-chunks", "seq0": 7, "time0": 5, "data": {"turn": 2, "step": 3, "index": 1, "dt": [], "texts": ["r"]}}
    assert decode_storage_record(one) == [
        {"type": "assistant/chunk", "seq": 7, "time": 5, "data": {"turn": 2, "step": 3, "chunk": {"type": "reasoning-delta", "index": 1, "text": "r"}}}
    ]
    two = good_row(data_over={"dt": [-4], "texts": ["a", "b"]})
    assert [(e["seq"], e["time"]) for e in decode_storage_record(two)] == [(3, 10), (4, 6)]
    floats = good_row(data_over={"turn": 1.5, "index": 2.0})
    assert decode_storage_record(floats)[0]["data"]["turn"] == 1.5  # DEC-13: decoder accepts finite floats
    with pytest.raises(ChunkRowError):
        decode_storage_record(good_row(data_over={"turn": float("inf")}))


@given(chunk_batches())
def test_chunk12_pack_then_decode_is_identity(events: list[Any]) -> None:
    records = pack_chunk_runs(events)
    decoded = decode_all(records)
    assert len(decoded) == len(events)
    assert all(json_equal(a, b) for a, b in zip(decoded, events))
    for record in records:
        if isinstance(record, dict) and record.get("type") in ROW_TYPES:
            assert len(record["data"]["dt"]) >= MIN_RUN - 1


@given(session_logs())
def test_chunk12_realistic_logs_round_trip(events: list[Any]) -> None:
    records = pack_chunk_runs(events)
    assert json_equal(decode_all(records), events)


def test_chunk15_rows_are_not_event_types() -> None:
    for tag in ROW_TYPES:
        assert "/" not in tag


# ------------------------------------------------ the fast packer (issue 13)

class _Str(str):
    """A str subclass: never an exact chunk type (DEC-13)."""


def _damage(event: dict[str, Any], how: int) -> Any:
    """One way to bend a delta the fast packer treats specially (deferred range checks, container types)."""
    data = event["data"]
    chunk = data["chunk"]
    if how == 0:
        return dict(event, seq=-1 - event["seq"])  # negative seq: refused by the deferred check
    if how == 1:
        return dict(event, seq=MAX_SAFE + 1)
    if how == 2:
        return dict(event, time=MAX_SAFE + 1)
    if how == 3:
        return collections.OrderedDict(event)  # another dict subclass: the fast form defers
    if how == 4:
        return collections.defaultdict(int, event)  # subscripting it would add a key
    if how == 5:
        return dict(event, data=MappingProxyType(data))  # a mapping that is not a dict: stored verbatim
    if how == 6:
        return dict(event, data=dict(data, chunk=dict(chunk, type=_Str(chunk["type"]))))
    if how == 7:
        return dict(event, data=dict(data, chunk=dict(chunk, type=[chunk["type"]])))  # unhashable chunk type
    if how == 8:
        return dict(event, data=dict(data, chunk={k: v for k, v in chunk.items() if k != "index"}))
    if how == 9:
        return dict(event, data=dict(data, chunk=collections.OrderedDict(chunk)))
    if how == 10:
        return {k: v for k, v in event.items() if k != "time"}
    if how == 11:
        return dict(event, data=dict(data, chunk={k: v for k, v in chunk.items() if k != "id"}))  # a required field missing
    return dict(event, data=dict(data, chunk=dict(chunk, extra="x")))  # a key no layout has


def _decoded(records: list[Any]) -> list[Any]:
    out: list[Any] = []
    for record in records:
        if isinstance(record, dict) and record.get("type") in ROW_TYPES:
            out += decode_storage_record(record)
        else:
            out.append(record)
    return out


@given(chunk_batches(), st.sampled_from([0, MAX_SAFE - 12, -3, -60]), st.lists(st.tuples(st.integers(0, 40), st.integers(0, 12)), max_size=3), st.booleans())
def test_packing_bent_batches_keeps_every_event(events: list[Any], offset: int, damage: list[tuple[int, int]], frozen: bool) -> None:
    """Batches with shifted seqs (out of the safe range too) and bent deltas: every event that is not
    packed is passed through as the same object, every row holds at least MIN_RUN members with safe
    seqs and times and decodes to the events it replaced, and the input is not touched (CHUNK-1..7)."""
    events = [dict(event, seq=event["seq"] + offset) if isinstance(event, dict) and isinstance(event.get("seq"), int) else event for event in events]
    for at, how in damage:
        if at < len(events) and isinstance(events[at].get("data"), dict) and isinstance(events[at]["data"].get("chunk"), dict):
            events[at] = _damage(events[at], how)
    if frozen:
        events = [_frozen(event) for event in events]
    before = [repr(event) for event in events]
    packed = pack_chunk_runs(events)
    position = 0
    for record in packed:
        if any(record is event for event in events):
            assert record is events[position]
            position += 1
            continue
        assert type(record) is dict and record["type"] in ROW_TYPES
        members = decode_storage_record(record)
        assert len(members) >= MIN_RUN
        assert all(0 <= m["seq"] <= MAX_SAFE and abs(m["time"]) <= MAX_SAFE for m in members)
        assert json_equal(members, events[position:position + len(members)])
        position += len(members)
    assert position == len(events)
    assert [repr(event) for event in events] == before  # nothing touched


def _frozen(event: Any) -> Any:
    try:
        return freeze_json_value(event)
    except JsonValueError:  # a bent event that is no JSON value stays as it is
        return event


@pytest.mark.parametrize("how", range(13))
def test_a_bent_delta_in_a_run(how: int) -> None:
    """Each bend of a run's middle member: only another dict subclass still packs (it is a dict);
    any other bend stores the member verbatim and splits the run (CHUNK-2, CHUNK-3)."""
    events = [delta(i, 1000 + i, kind="tool-call-delta" if how % 2 or how >= 11 else "text-delta") for i in range(7)]
    events[3] = _damage(events[3], how)
    packed = pack_chunk_runs(events)
    assert (len(packed) == 1) == (how in (3, 4, 9))
    if len(packed) != 1:
        assert any(record is events[3] for record in packed)
    assert json_equal(_decoded(packed), events) or how in (3, 4, 9)


@pytest.mark.parametrize(("seq0", "time0"), [(-1, 0), (-3, 0), (MAX_SAFE - 3, 0), (0, MAX_SAFE - 2), (0, -MAX_SAFE - 1)])
def test_packing_at_the_edges_of_the_safe_range(seq0: int, time0: int) -> None:
    """Seqs and times that leave the safe range inside a would-be run: only the safe members pack."""
    events = [delta(seq0 + i, time0 + i) for i in range(5)]
    packed = pack_chunk_runs(events)
    assert len(packed) > 1
    safe = [e for e in events if 0 <= e["seq"] <= MAX_SAFE and abs(e["time"]) <= MAX_SAFE]
    rows = [r for r in packed if not any(r is e for e in events)]
    assert sum(len(decode_storage_record(r)) for r in rows) == (len(safe) if len(safe) >= MIN_RUN else 0)
    assert json_equal(_decoded(packed), events)


def test_which_single_events_pack() -> None:
    """A run of three copies of an event packs exactly when the event is a packable delta (CHUNK-2)."""
    samples = [(delta(0), True), (delta(0, kind="tool-call-delta"), True), (delta(0, kind="tool-call-delta", name="x"), True),
               (delta(0, kind="tool-call-delta", name=None), False), (delta(0, kind="tool-call-delta", id=None), False),
               (delta(0, extra="x"), False), (delta(0, turn=True), False), (delta(0, text=None), False),
               (_damage(delta(0, kind="tool-call-delta"), 11), False), (_damage(delta(0, kind="tool-call-delta"), 12), False)]
    for sample, packs in samples:
        run = [dict(sample, seq=i) for i in range(3)]
        assert (len(pack_chunk_runs(run)) == 1) == packs, sample


@pytest.mark.req("CHUNK-3")
def test_chunk3_tool_name_change_splits_the_run() -> None:
    """The run-constant fields (rule table ``run_fields``): a changed or dropped tool name ends the run."""
    for names in (["a", "a", "a", "b", "b", "b"], ["a", "a", "a", None, None, None]):
        events = [delta(i, i, kind="tool-call-delta", **({"name": n} if n else {})) for i, n in enumerate(names)]
        packed = pack_chunk_runs(events)
        assert len(packed) == 2 and json_equal(_decoded(packed), events)
