"""OOB-1 … OOB-11: `SessionStore.append_out_of_band`."""

from __future__ import annotations

import asyncio
import math
from typing import Any

import pytest
from sessionspec.reference.session import Session
from sessionspec.reference.store import SessionStore, default_out_of_band_types
from sessionspec.spec.errors import AppendError, OutOfBandError

req = pytest.mark.req
TRIGGER = {"kind": "injection", "source": {"kind": "plugin", "plugin": "test"}}
TYPE = "test/log-only"


def make_store() -> SessionStore:
    store = SessionStore()
    store.admit_out_of_band(TYPE)
    return store


def types(session: Session) -> list[str]:
    return [e["type"] for e in session.events]


def oob(store: SessionStore, session: Session, data: Any = None, trigger: Any = TRIGGER, type: str = TYPE) -> Any:
    return asyncio.run(store.append_out_of_band(session, type, {"value": "x"} if data is None else data, trigger))


@req("OOB-1")
def test_oob1_unadmitted_type_rejected_before_touching_the_log() -> None:
    store = SessionStore()
    session = store.create("s")
    with pytest.raises(OutOfBandError) as info:
        oob(store, session)
    assert info.value.code == "OOB_NOT_ADMITTED"
    assert session.seq == 0
    # admission precedes the liveness check
    with pytest.raises(OutOfBandError) as info:
        oob(store, Session("bare"))
    assert info.value.code == "OOB_NOT_ADMITTED"


@req("OOB-1")
@pytest.mark.parametrize(
    "event_type",
    ["user/message", "assistant/message", "tool/result", "steering/message", "turn/start", "turn/end",
     "step/start", "step/end", "turn/custom"],
)
def test_oob1_surface_and_lifecycle_types_can_never_be_admitted(event_type: str) -> None:
    store = SessionStore()
    with pytest.raises(OutOfBandError) as info:
        store.admit_out_of_band(event_type)
    assert info.value.code == "OOB_INADMISSIBLE_TYPE"
    assert event_type not in store.out_of_band_types
    with pytest.raises(OutOfBandError) as oob_info:
        oob(store, store.create("s"), type=event_type)
    assert oob_info.value.code == "OOB_NOT_ADMITTED"


@req("OOB-1")
def test_oob1_registry_out_of_band_types_are_admitted_by_default() -> None:
    defaults = default_out_of_band_types()
    assert {"session/title", "session/title-llm-request"} <= defaults
    store = SessionStore()
    session = store.create("s")
    event = oob(store, session, {"title": "t"}, {"kind": "session-title"}, type="session/title")
    assert event["type"] == "session/title"
    assert SessionStore(out_of_band_types=frozenset()).out_of_band_types == frozenset()


@req("OOB-2")
def test_oob2_non_live_session_rejected() -> None:
    store = make_store()
    prepared = store.prepare("p")
    live = store.create("l")
    store.detach(live)
    for session in (prepared, live, Session("bare")):
        with pytest.raises(OutOfBandError) as info:
            oob(store, session)
        assert info.value.code == "SESSION_NOT_LIVE"
        assert "not live" in str(info.value)
        assert session.seq == 0


@req("OOB-3")
def test_oob3_overlapping_sequence_rejected_first_completes() -> None:
    async def scenario() -> tuple[Any, Session]:
        store = make_store()
        session = store.create("overlap")
        release = asyncio.Event()

        async def checkpoint(s: Session) -> None:
            await release.wait()

        store.on("session/flush", checkpoint)
        first = asyncio.ensure_future(store.append_out_of_band(session, TYPE, {"value": "first"}, TRIGGER))
        await asyncio.sleep(0)
        with pytest.raises(OutOfBandError) as info:
            await asyncio.wait_for(store.append_out_of_band(session, TYPE, {"value": "overlap"}, TRIGGER), 5)
        assert info.value.code == "OOB_IN_PROGRESS"
        assert "out-of-band append in progress" in str(info.value)
        release.set()
        return await first, session

    event, session = asyncio.run(scenario())
    assert event["data"] == {"value": "first"}
    assert types(session) == ["turn/start", TYPE, "turn/end"]


@req("OOB-4")
def test_oob4_open_turn_joins_without_boundaries_or_flush() -> None:
    store = make_store()
    session = store.create("open")
    flushes: list[int] = []
    store.on("session/flush", lambda s: flushes.append(1))
    session.append("turn/start", {"turn": 1, "trigger": {"kind": "message", "source": {"kind": "user"}}})
    session.append("step/start", {"turn": 1, "step": 1})
    session.append("plugin/other", {})  # the latest boundary is still turn/start
    event = oob(store, session, {"value": "inside"})
    assert event == {"type": TYPE, "seq": 3, "time": event["time"], "data": {"value": "inside"}}
    assert types(session) == ["turn/start", "step/start", "plugin/other", TYPE]
    assert flushes == []


@req("OOB-5")
def test_oob5_closed_log_gets_a_zero_step_turn_and_flush() -> None:
    store = make_store()
    session = store.create("closed")
    flushed: list[list[str]] = []
    store.on("session/flush", lambda s: flushed.append(types(s)))
    first = oob(store, session, {"value": "first"})
    second = oob(store, session, {"value": "second"})
    assert (first["seq"], second["seq"]) == (1, 4)
    assert [(e["type"], e["seq"], e["data"]) for e in session.events] == [
        ("turn/start", 0, {"turn": 1, "trigger": TRIGGER}),
        (TYPE, 1, {"value": "first"}),
        ("turn/end", 2, {"turn": 1, "reason": {"kind": "completed"}}),
        ("turn/start", 3, {"turn": 2, "trigger": TRIGGER}),
        (TYPE, 4, {"value": "second"}),
        ("turn/end", 5, {"turn": 2, "reason": {"kind": "completed"}}),
    ]
    assert flushed == [types(session)[:3], types(session)]


@req("OOB-5")
def test_oob5_turn_number_follows_latest_turn_start() -> None:
    store = make_store()
    session = store.create("numbered")
    session.append("turn/start", {"turn": 7})
    session.append("turn/end", {"turn": 7, "reason": {"kind": "completed"}})
    oob(store, session)
    assert session.events[2]["data"]["turn"] == 8 and session.events[4]["data"]["turn"] == 8


@req("OOB-6")
def test_oob6_failed_turn_start_leaves_log_unchanged_and_skips_flush() -> None:
    store = make_store()
    session = store.create("start-failure")
    flushes: list[int] = []
    store.on("session/flush", lambda s: flushes.append(1))
    with pytest.raises(AppendError) as info:
        oob(store, session, trigger={"kind": "injection", "bad": math.inf})
    assert info.value.code == "APPEND_DATA_NOT_JSON"
    assert session.seq == 0 and flushes == []


@req("OOB-7")
def test_oob7_failed_target_still_closes_turn_and_flushes() -> None:
    store = make_store()
    session = store.create("rejected")
    flushes: list[int] = []
    store.on("session/flush", lambda s: flushes.append(1))
    with pytest.raises(AppendError, match="non-JSON-serializable"):
        oob(store, session, {"value": {1}})
    assert types(session) == ["turn/start", "turn/end"]
    assert session.events[1]["data"] == {"turn": 1, "reason": {"kind": "completed"}}
    assert flushes == [1]


@req("OOB-7")
def test_oob7_target_error_wins_over_flush_error() -> None:
    store = make_store()
    session = store.create("both-fail")

    def fail(s: Session) -> None:
        raise RuntimeError("disk failed")

    store.on("session/flush", fail)
    with pytest.raises(AppendError):
        oob(store, session, {"value": math.nan})
    assert types(session) == ["turn/start", "turn/end"]


@req("OOB-8")
def test_oob8_flush_failure_raised_with_balanced_log() -> None:
    store = make_store()
    session = store.create("flush-failure")
    store.on("session/flush", lambda s: (_ for _ in ()).throw(RuntimeError("disk failed")))
    with pytest.raises(RuntimeError, match="disk failed"):
        oob(store, session, {"value": "accepted"})
    assert types(session) == ["turn/start", TYPE, "turn/end"]


@req("OOB-9")
def test_oob9_detach_during_sequence_is_deferred_until_settled() -> None:
    store = make_store()
    session = store.prepare("dispose")
    detach = store.enter(session)
    store.announce(session)
    seen: dict[str, Any] = {}
    disposed: list[str] = []
    store.on("session/event", lambda s, e: detach() if e["type"] == "turn/start" else None)
    store.on("session/flush", lambda s: seen.__setitem__("live", store.get(s.id) is s))
    store.on("session/disposed", lambda s: disposed.append(s.id))
    oob(store, session, {"value": "last"})
    assert types(session) == ["turn/start", TYPE, "turn/end"]
    assert seen == {"live": True}
    assert store.get(session.id) is None and disposed == ["dispose"]


@req("OOB-10")
def test_oob10_in_progress_mark_cleared_on_every_outcome() -> None:
    store = make_store()
    session = store.create("retry")
    state = {"fail": True}

    def flaky(s: Session) -> None:
        if state["fail"]:
            state["fail"] = False
            raise RuntimeError("once")

    store.on("session/flush", flaky)
    with pytest.raises(RuntimeError):
        oob(store, session)
    with pytest.raises(AppendError):
        oob(store, session, {"value": math.inf})
    with pytest.raises(AppendError):
        oob(store, session, trigger={"x": math.inf})
    assert oob(store, session)["type"] == TYPE


@req("OOB-11")
def test_oob11_trigger_only_on_turn_start_and_no_surface_metadata() -> None:
    store = make_store()
    session = store.create("shape")
    event = oob(store, session, {"value": "v"}, {"kind": "session-title"})
    assert "surfaceOp" not in event and "sourceEventSeqs" not in event
    start, target, end = session.events
    assert start["data"] == {"turn": 1, "trigger": {"kind": "session-title"}}
    assert "trigger" not in target["data"] and "trigger" not in end["data"]
    assert end["data"]["reason"] == {"kind": "completed"}
