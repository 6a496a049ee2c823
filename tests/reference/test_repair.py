"""Crash-repair closers (REPAIR-1..12)."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given
from sessionspec.reference import fold_surface, interrupted_turn_closers
from sessionspec.reference.invariants import check_invariants
from sessionspec.reference.session import validate_seed
from sessionspec.spec import constants
from strategies import LogBuilder, crash_logs, session_logs

REPAIR = constants()["repair"]
NOT_STARTED = REPAIR["notStarted"]
UNKNOWN = REPAIR["outcomeUnknown"]


def open_step_log() -> LogBuilder:
    b = LogBuilder(time0=1000)
    b.turn_start()
    b.user()
    b.step_start()
    return b


def test_repair1_balanced_or_empty_log_needs_nothing() -> None:
    assert interrupted_turn_closers([]) == []
    b = LogBuilder()
    b.user("idle, outside any turn")
    assert interrupted_turn_closers(b.events) == []
    b.turn_start()
    b.turn_end()
    assert interrupted_turn_closers(b.events) == []


def test_repair2_open_turn_only() -> None:
    b = LogBuilder(time0=50)
    b.turn_start()
    b.user()
    last = b.events[-1]
    assert interrupted_turn_closers(b.events) == [
        {"type": "turn/end", "seq": last["seq"] + 1, "time": last["time"], "data": {"turn": 1, "reason": {"kind": "interrupted"}}}
    ]


def test_repair2_open_step_closed_before_turn() -> None:
    b = open_step_log()
    closers = interrupted_turn_closers(b.events)
    assert [c["type"] for c in closers] == ["step/end", "turn/end"]
    assert closers[0]["data"] == {"turn": 1, "step": 1}


def test_repair3_repair8_repair9_not_started_call() -> None:
    b = open_step_log()
    b.assistant("", ["call-1"])
    closers = interrupted_turn_closers(b.events)
    result = closers[0]
    assert result == {
        "type": "tool/result",
        "seq": b.seq,
        "time": b.time,
        "data": {
            "turn": 1,
            "step": 1,
            "callId": "call-1",
            "content": [{"type": "text", "text": NOT_STARTED["text"]}],
            "isError": True,
            "error": {"name": "ToolNotStartedError", "code": "TOOL_NOT_STARTED"},
        },
        "surfaceOp": "append",
    }
    assert "sourceEventSeqs" not in result
    assert NOT_STARTED["text"] == "The tool call was interrupted before the Harness recorded it as started. Retry it if it is still needed."


def test_repair4_repair9_started_call_gets_outcome_unknown_with_provenance() -> None:
    b = open_step_log()
    b.assistant("", ["call-1"])
    call = b.tool_call("call-1")
    result = interrupted_turn_closers(b.events)[0]
    assert result["data"]["error"] == {"name": "ToolOutcomeUnknownError", "code": "TOOL_OUTCOME_UNKNOWN"}
    assert result["data"]["content"] == [{"type": "text", "text": UNKNOWN["text"]}]
    assert result["sourceEventSeqs"] == [call["seq"]]
    assert list(result) == ["type", "seq", "time", "data", "surfaceOp", "sourceEventSeqs"]  # surfaceOp first
    assert UNKNOWN["text"].startswith("The tool call was interrupted after it was recorded") and UNKNOWN["text"].endswith("Do not retry blindly.")


def test_repair4_call_for_unknown_id_ignored() -> None:
    b = open_step_log()
    b.tool_call("stray")
    assert [c["type"] for c in interrupted_turn_closers(b.events)] == ["step/end", "turn/end"]


def test_repair3_repeated_id_keeps_position_and_restarts_entry() -> None:
    b = open_step_log()
    b.assistant("", ["a", "b"])
    b.tool_call("a")
    b.assistant("", ["a"])  # re-announced: the recorded call seq is forgotten
    closers = interrupted_turn_closers(b.events)
    assert [c["data"]["callId"] for c in closers[:2]] == ["a", "b"]
    assert "sourceEventSeqs" not in closers[0]


def test_repair5_answered_calls_are_not_repeated() -> None:
    b = open_step_log()
    b.assistant("", ["a", "b"])
    call_a = b.tool_call("a")
    b.tool_result("a", sources=[call_a["seq"]])
    b.tool_call("b")
    closers = interrupted_turn_closers(b.events)
    assert [c["data"]["callId"] for c in closers if c["type"] == "tool/result"] == ["b"]


def test_repair5_replacement_result_also_answers() -> None:
    b = open_step_log()
    b.assistant("", ["a"])
    events = b.events + [
        {"type": "tool/result", "seq": b.seq, "time": 0, "data": {"callId": "a"}, "surfaceOp": {"op": "replace", "start": 1, "end": 1}}
    ]
    assert [c["type"] for c in interrupted_turn_closers(events)] == ["step/end", "turn/end"]


def test_repair6_order_results_then_step_then_turn() -> None:
    b = open_step_log()
    b.assistant("", ["x", "y", "z"])
    b.tool_call("y")
    closers = interrupted_turn_closers(b.events)
    assert [(c["type"], c["data"].get("callId")) for c in closers] == [
        ("tool/result", "x"),
        ("tool/result", "y"),
        ("tool/result", "z"),
        ("step/end", None),
        ("turn/end", None),
    ]
    assert [("sourceEventSeqs" in c) for c in closers[:3]] == [False, True, False]


def test_repair7_seqs_continue_and_time_reused() -> None:
    b = open_step_log()
    b.assistant("", ["x"])
    b.add("plugin/late", None, dt=500)
    closers = interrupted_turn_closers(b.events)
    assert [c["seq"] for c in closers] == [b.seq, b.seq + 1, b.seq + 2]
    assert {c["time"] for c in closers} == {b.events[-1]["time"]}


def test_repair10_closed_step_calls_and_earlier_turns_never_answered() -> None:
    b = open_step_log()
    b.assistant("", ["old"])
    b.step_end()
    closers = interrupted_turn_closers(b.events)
    assert [c["type"] for c in closers] == ["turn/end"]
    b2 = LogBuilder()
    b2.turn_start()
    b2.step_start()
    b2.assistant("", ["earlier"])
    b2.turn_end()  # a turn/end mid-step still clears everything
    b2.turn_start()
    assert [c["type"] for c in interrupted_turn_closers(b2.events)] == ["turn/end"]
    b3 = open_step_log()
    b3.assistant("", ["q"])
    b3.step_end()
    b3.step_start()
    b3.assistant("", ["r"])
    assert [c["data"]["callId"] for c in interrupted_turn_closers(b3.events) if c["type"] == "tool/result"] == ["r"]


def test_repair_turn_end_reason_from_constants() -> None:
    closers = interrupted_turn_closers(open_step_log().events)
    assert closers[-1]["data"]["reason"] == REPAIR["turnEndReason"] == {"kind": "interrupted"}
    closers[-1]["data"]["reason"]["kind"] = "mutated"  # new dicts each call
    assert interrupted_turn_closers(open_step_log().events)[-1]["data"]["reason"] == {"kind": "interrupted"}


@given(crash_logs())
def test_repair11_repair12_any_crash_tail_repairs_into_a_valid_balanced_log(events: list[dict[str, Any]]) -> None:
    before = copy.deepcopy(events)
    closers = interrupted_turn_closers(events)
    assert events == before  # REPAIR-12: nothing removed or changed
    repaired = events + closers
    validate_seed(repaired)  # SEED-* including the surface rules (SURF)
    fold_surface(repaired)
    assert check_invariants(repaired) == []
    assert interrupted_turn_closers(repaired) == []  # every open turn is closed
    opens = sum(1 for e in repaired if e["type"] == "turn/start")
    assert opens == sum(1 for e in repaired if e["type"] == "turn/end")


@given(session_logs())
def test_repair1_generated_balanced_logs_need_no_closers(events: list[dict[str, Any]]) -> None:
    assert interrupted_turn_closers(events) == []
    assert check_invariants(events) == []
