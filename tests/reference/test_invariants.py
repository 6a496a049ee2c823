"""INV-1 … INV-13: the optional relational checker."""

from __future__ import annotations

from typing import Any

import pytest
from sessionlog_builders import APPEND, balanced_session, text
from sessionspec.reference.invariants import INV_CODES, InvariantChecker, InvariantTrace, check_invariants
from sessionspec.reference.session import Session
from sessionspec.reference.store import SessionStore
from sessionspec.spec.errors import InvariantError

req = pytest.mark.req


class Log:
    """A tiny event-list builder (plain dicts, contiguous seqs)."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []

    def add(self, type: str, data: Any = None, **extra: Any) -> Log:
        event = {"type": type, "seq": len(self.events), "time": 0, "data": {} if data is None else data}
        event.update(extra)
        self.events.append(event)
        return self

    def turn(self, n: int = 1) -> Log:
        return self.add("turn/start", {"turn": n, "trigger": {"kind": "message"}})

    def end(self, n: int = 1) -> Log:
        return self.add("turn/end", {"turn": n, "reason": {"kind": "completed"}})

    def step(self, n: int = 1, turn: int = 1) -> Log:
        return self.add("step/start", {"turn": turn, "step": n})

    def step_end(self, n: int = 1, turn: int = 1) -> Log:
        return self.add("step/end", {"turn": turn, "step": n})


def codes(events: list[dict[str, Any]]) -> list[tuple[int | None, str, str | None]]:
    return [(e.seq, e.code, e.requirement) for e in check_invariants(events)]


def test_clean_balanced_log_passes() -> None:
    assert check_invariants(balanced_session(3).events) == []
    assert {e.code for e in []} <= INV_CODES


@req("INV-1")
def test_inv1_seq_must_strictly_increase() -> None:
    events = Log().add("user/message", surfaceOp="append").events
    events.append({"type": "user/message", "seq": 0, "time": 0, "data": {}, "surfaceOp": "append"})
    events.append({"type": "user/message", "seq": "x", "time": 0, "data": {}, "surfaceOp": "append"})
    assert [c[1:] for c in codes(events)] == [("INV_SEQ_NOT_INCREASING", "INV-1")] * 2


@req("INV-2")
def test_inv2_turn_start() -> None:
    assert codes(Log().turn(1).turn(1).events) == [(1, "INV_TURN_ALREADY_OPEN", "INV-2")]
    assert codes(Log().turn(1).turn(2).events) == [
        (1, "INV_TURN_ALREADY_OPEN", "INV-2"),
        (1, "INV_TURN_NUMBER", "INV-2"),
    ]
    assert codes(Log().turn(2).events) == [(0, "INV_TURN_NUMBER", "INV-2")]
    assert codes(Log().turn(1).end(1).turn(1).events) == [(2, "INV_TURN_NUMBER", "INV-2")]
    assert codes(Log().turn(1).end(1).turn(2).end(2).events) == []
    assert codes(Log().add("turn/start", {"turn": True}).events) == [(0, "INV_TURN_NUMBER", "INV-2")]
    # the next expected step resets to 1 in each turn
    log = Log().turn(1).step(1).step_end(1).step(2).step_end(2).end(1).turn(2).step(1, 2).step_end(1, 2).end(2)
    assert codes(log.events) == []


@req("INV-3")
def test_inv3_turn_end() -> None:
    assert codes(Log().end(1).events) == [(0, "INV_TURN_MISMATCH", "INV-3")]
    assert codes(Log().turn(1).end(2).events) == [(1, "INV_TURN_MISMATCH", "INV-3")]
    assert codes(Log().turn(1).step(1).end(1).events) == [(2, "INV_STEP_STILL_OPEN", "INV-3")]
    assert codes(Log().turn(1).add("turn/end", {"reason": {"kind": "completed"}}).events) == [
        (1, "INV_TURN_MISMATCH", "INV-3")
    ]


@req("INV-4")
def test_inv4_step_start() -> None:
    assert codes(Log().step(1).events) == [(0, "INV_TURN_MISMATCH", "INV-4")]
    assert codes(Log().turn(1).step(1, turn=2).events) == [(1, "INV_TURN_MISMATCH", "INV-4")]
    assert codes(Log().turn(1).step(1).step(1).events) == [(2, "INV_STEP_ALREADY_OPEN", "INV-4")]
    assert [c[1] for c in codes(Log().turn(1).step(1).step(2).events)] == ["INV_STEP_ALREADY_OPEN", "INV_STEP_NUMBER"]
    assert codes(Log().turn(1).step(2).events) == [(1, "INV_STEP_NUMBER", "INV-4")]
    assert codes(Log().turn(1).step(1).step_end(1).step(1).events) == [(3, "INV_STEP_NUMBER", "INV-4")]


@req("INV-5")
@pytest.mark.parametrize("event_type", ["step/end", "assistant/chunk", "assistant/message", "tool/call"])
def test_inv5_step_scoped_events_name_the_open_step(event_type: str) -> None:
    extra = {"surfaceOp": "append"} if event_type == "assistant/message" else {}
    ok = Log().turn(1).step(1).add(event_type, {"turn": 1, "step": 1, "callId": "c"}, **extra)
    assert codes(ok.events) == []
    for data in ({"turn": 1, "step": 2}, {"turn": 2, "step": 1}, {"turn": 1}, {"turn": 1, "step": 1.0 + 1}):
        bad = Log().turn(1).step(1).add(event_type, data, **extra)
        assert codes(bad.events) == [(2, "INV_STEP_MISMATCH", "INV-5")]
    no_step = Log().turn(1).add(event_type, {"turn": 1, "step": 1}, **extra)
    assert codes(no_step.events) == [(1, "INV_STEP_MISMATCH", "INV-5")]


@req("INV-5")
def test_inv5_numbers_compare_by_value_but_bool_is_not_a_number() -> None:
    log = Log().turn(1).step(1).add("assistant/chunk", {"turn": 1.0, "step": 1})
    assert codes(log.events) == []
    log = Log().turn(1).step(1).add("assistant/chunk", {"turn": True, "step": 1})
    assert codes(log.events) == [(2, "INV_STEP_MISMATCH", "INV-5")]


def _result(call_id: str, turn: int = 1, step: int = 1, **data: Any) -> dict[str, Any]:
    return {"turn": turn, "step": step, "callId": call_id, "content": text("r"), "isError": False, **data}


@req("INV-6")
def test_inv6_calls_pending_until_step_end() -> None:
    call = {"turn": 1, "step": 1, "callId": "c1", "name": "n", "arguments": "{}"}
    log = Log().turn(1).step(1).add("tool/call", call).step_end(1).step(2)
    log.add("tool/result", _result("c1", step=2), surfaceOp="append")
    assert codes(log.events) == [(5, "INV_CALL_NOT_PENDING", "INV-7")]
    unanswered = Log().turn(1).step(1).add("tool/call", call).step_end(1).end(1)
    assert codes(unanswered.events) == []


@req("INV-7")
def test_inv7_appended_result_pairs_with_a_pending_call() -> None:
    call = {"turn": 1, "step": 1, "callId": "c1", "name": "n", "arguments": "{}"}
    good = Log().turn(1).step(1).add("tool/call", call).add("tool/result", _result("c1"), surfaceOp="append")
    assert codes(good.events) == []
    twice = Log().turn(1).step(1).add("tool/call", call)
    twice.add("tool/result", _result("c1"), surfaceOp="append").add("tool/result", _result("c1"), surfaceOp="append")
    assert codes(twice.events) == [(4, "INV_CALL_NOT_PENDING", "INV-7")]
    unknown = Log().turn(1).step(1).add("tool/result", _result("zz"), surfaceOp="append")
    assert codes(unknown.events) == [(2, "INV_CALL_NOT_PENDING", "INV-7")]
    wrong_step = Log().turn(1).step(1).add("tool/call", call).add("tool/result", _result("c1", step=2), surfaceOp="append")
    assert codes(wrong_step.events) == [(3, "INV_STEP_MISMATCH", "INV-7")]


@req("INV-7")
def test_inv7_not_started_synthetic_result_needs_no_call() -> None:
    data = _result("c9", isError=True, error={"name": "ToolNotStartedError", "code": "TOOL_NOT_STARTED"})
    log = Log().turn(1).step(1).add("tool/result", data, surfaceOp="append")
    assert codes(log.events) == []
    other = _result("c9", isError=True, error={"name": "X", "code": "TOOL_OUTCOME_UNKNOWN"})
    log = Log().turn(1).step(1).add("tool/result", other, surfaceOp="append")
    assert codes(log.events) == [(2, "INV_CALL_NOT_PENDING", "INV-7")]
    not_error = _result("c9", isError=False, error={"code": "TOOL_NOT_STARTED"})
    log = Log().turn(1).step(1).add("tool/result", not_error, surfaceOp="append")
    assert codes(log.events) == [(2, "INV_CALL_NOT_PENDING", "INV-7")]


@req("INV-8")
def test_inv8_replacement_result_needs_only_an_open_turn() -> None:
    replace = {"op": "replace", "start": 0, "end": 0}
    inside = Log().turn(1).add("tool/result", _result("c", turn=9, step=9), surfaceOp=replace, sourceEventSeqs=[0])
    assert codes(inside.events) == []
    outside = Log().add("tool/result", _result("c"), surfaceOp=replace, sourceEventSeqs=[0])
    assert codes(outside.events) == [(0, "INV_NO_OPEN_TURN", "INV-8")]


@req("INV-9")
def test_inv9_user_message_allowed_anywhere() -> None:
    log = Log().add("user/message", surfaceOp="append").turn(1).add("user/message", surfaceOp="append").end(1)
    log.add("user/message", surfaceOp="append")
    assert codes(log.events) == []


@req("INV-10")
@pytest.mark.parametrize("event_type", ["steering/message", "todo/write", "request/header", "plugin/anything", "prompt/blocked"])
def test_inv10_other_types_need_an_open_turn(event_type: str) -> None:
    assert codes(Log().add(event_type).events) == [(0, "INV_NO_OPEN_TURN", "INV-10")]
    assert codes(Log().turn(1).add(event_type).end(1).events) == []


def test_check_invariants_reports_all_violations_and_continues() -> None:
    log = Log().turn(2).add("todo/write").step(3, turn=2).end(2).add("plugin/x").turn(3)
    found = codes(log.events)
    assert found == [
        (0, "INV_TURN_NUMBER", "INV-2"),
        (2, "INV_STEP_NUMBER", "INV-4"),
        (3, "INV_STEP_STILL_OPEN", "INV-3"),
        (4, "INV_NO_OPEN_TURN", "INV-10"),
        (5, "INV_TURN_NUMBER", "INV-2"),
    ]
    assert all(e.index == e.seq for e in check_invariants(log.events))


def test_trace_is_a_pure_fold() -> None:
    start = InvariantTrace()
    after = start.advance({"type": "turn/start", "seq": 0, "data": {"turn": 1}})
    assert start == InvariantTrace() and after.open_turn == 1 and after.last_seq == 0
    with pytest.raises(InvariantError):
        after.advance({"type": "turn/start", "seq": 1, "data": {"turn": 2}})
    assert after.open_turn == 1


# ---------------------------------------------------------------- the installed checker


@req("INV-11")
def test_inv11_rejected_event_leaves_trace_unchanged() -> None:
    store = SessionStore()
    checker = InvariantChecker().install(store)
    session = store.create("s")
    session.append("turn/start", {"turn": 1})
    trace = checker.trace_of(session)
    with pytest.raises(InvariantError) as info:
        session.append("turn/start", {"turn": 2})
    assert info.value.code == "INV_TURN_ALREADY_OPEN" and session.seq == 1
    assert checker.trace_of(session) is trace

    def veto(s: Session, candidate: Any) -> None:
        if candidate["type"] == "step/start":
            raise ValueError("vetoed by another validator")

    remove = store.add_pre_commit_validator(veto)
    with pytest.raises(ValueError):
        session.append("step/start", {"turn": 1, "step": 1})
    assert checker.trace_of(session) is trace
    remove()
    session.append("step/start", {"turn": 1, "step": 1})
    assert checker.trace_of(session).open_step == 1  # type: ignore[union-attr]


@req("INV-11")
def test_inv11_sessions_are_tracked_independently() -> None:
    store = SessionStore()
    InvariantChecker().install(store)
    a, b = store.create("a"), store.create("b")
    a.append("turn/start", {"turn": 1})
    b.append("turn/start", {"turn": 1})
    a.append("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
    with pytest.raises(InvariantError):
        a.append("todo/write", {"todos": []})
    b.append("todo/write", {"todos": []})


@req("INV-12")
def test_inv12_uninstall_removes_effects_and_reinstall_replays() -> None:
    store = SessionStore()
    checker = InvariantChecker().install(store)
    session = store.create("s")
    with pytest.raises(InvariantError):
        session.append("todo/write", {})
    checker.uninstall()
    session.append("todo/write", {})  # no longer checked
    assert session.seq == 1
    with pytest.raises(InvariantError) as info:
        InvariantChecker().install(store)  # replays the live log, which now violates INV-10
    assert info.value.code == "INV_NO_OPEN_TURN"
    store.detach(session)
    fresh = store.create("t")
    fresh.append("turn/start", {"turn": 1})
    reinstalled = InvariantChecker().install(store)
    assert reinstalled.trace_of(fresh).open_turn == 1  # type: ignore[union-attr]
    with pytest.raises(InvariantError):
        fresh.append("turn/start", {"turn": 2})


@req("INV-12")
def test_inv12_checker_replays_on_announce() -> None:
    store = SessionStore()
    InvariantChecker().install(store)
    good = balanced_session(1).events
    assert store.create("ok", seed=good).seq == len(good)
    prepared = store.prepare("late", seed=good[:2])  # open turn: fine
    store.enter(prepared)
    store.announce(prepared)
    prepared.append("step/start", {"turn": 1, "step": 1})


@req("INV-13")
def test_inv13_without_checker_append_accepts_relational_violations() -> None:
    session = Session("s")
    session.append("turn/end", {"turn": 9})
    session.append("step/end", {"turn": 1, "step": 1})
    session.append("tool/result", _result("nobody"), APPEND)
    assert session.seq == 3
    assert [e.code for e in check_invariants(session.events)] == [
        "INV_TURN_MISMATCH", "INV_STEP_MISMATCH", "INV_STEP_MISMATCH", "INV_CALL_NOT_PENDING",
    ]


# -- the mutable fold (check_invariants, the CLI) against the pure trace -----------------------
from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from sessionspec.reference.invariants import InvariantFold  # noqa: E402
from strategies import session_logs  # noqa: E402

_ODD_VALUES = st.sampled_from([None, True, False, 0, 1, 1.0, 2, "1", [], {}])


@st.composite
def invariant_logs(draw: st.DrawFn) -> list[Any]:
    """Valid logs, then damaged: events dropped, repeated, swapped, seq/turn/step/callId/type replaced."""
    events: list[Any] = [dict(e) for e in draw(session_logs(max_turns=3, replaces=False))]
    for _ in range(draw(st.integers(0, 4))):
        if not events:
            break
        i = draw(st.integers(0, len(events) - 1))
        action = draw(st.sampled_from(["drop", "repeat", "swap", "seq", "turn", "step", "callId", "type", "surfaceOp", "junk"]))
        event = events[i] if isinstance(events[i], dict) else {}
        if action == "drop":
            del events[i]
        elif action == "repeat":
            events.insert(i, event)
        elif action == "swap" and i + 1 < len(events):
            events[i], events[i + 1] = events[i + 1], events[i]
        elif action == "seq":
            events[i] = {**event, "seq": draw(_ODD_VALUES | st.integers(-2, 200))}
        elif action in ("turn", "step", "callId") and isinstance(event.get("data"), dict):
            events[i] = {**event, "data": {**event["data"], action: draw(_ODD_VALUES)}}
        elif action == "type":
            events[i] = {**event, "type": draw(st.sampled_from(["assistant/chunk", "assistant/message", "tool/result",
                                                                  "turn/start", "step/end", "x/y", None]))}
        elif action == "surfaceOp":
            events[i] = {**event, "surfaceOp": draw(st.sampled_from(["append", {"op": "replace"}, None]))}
        elif action == "junk":
            events[i] = draw(st.sampled_from([None, [], "event", {"data": []}]))
    return events


def _key(e: InvariantError) -> tuple[Any, ...]:
    return (e.code, e.requirement, e.index, e.seq, e.message)


@given(invariant_logs())
def test_fast_fold_reports_exactly_what_the_pure_trace_reports(events: list[Any]) -> None:
    trace, fold, expected = InvariantTrace(), InvariantFold(), []
    for index, event in enumerate(events):
        trace, errors = trace.step(event, index=index)
        expected.extend(errors)
        assert [_key(e) for e in fold.step(event, index)] == [_key(e) for e in errors]
        assert fold.snapshot() == trace  # the same state after every event
    assert [_key(e) for e in check_invariants(events)] == [_key(e) for e in expected]


@pytest.mark.parametrize("turn, step", [(True, 1), (1, 1.0), (None, 1), (1, "1"), (2, 1)])
def test_in_step_shortcut_declines_what_is_not_a_plain_match(turn: Any, step: Any) -> None:
    fold = InvariantFold()
    for event in Log().turn().step().events:
        assert not fold.step(event)
    before = fold.snapshot()
    assert fold.in_step(2, turn, step) is False
    assert fold.snapshot() == before
    assert fold.in_step(2, 1, 1) is True and fold.last_seq == 2
    assert fold.in_step(2, 1, 1) is False  # INV-1: seq must increase
