"""find_last_message_turn_end (FIND-1..4)."""

from __future__ import annotations

from typing import Any

from sessionspec.reference import find_last_message_turn_end
from strategies import LogBuilder


def start(seq: int, turn: Any, kind: str = "message") -> dict[str, Any]:
    return {"type": "turn/start", "seq": seq, "time": seq, "data": {"turn": turn, "trigger": {"kind": kind}}}


def end(seq: int, turn: Any) -> dict[str, Any]:
    return {"type": "turn/end", "seq": seq, "time": seq, "data": {"turn": turn, "reason": {"kind": "completed"}}}


def test_find1_last_closed_message_turn() -> None:
    b = LogBuilder()
    b.turn_start()
    b.user()
    b.turn_end()
    first_end = b.events[-1]
    assert find_last_message_turn_end(b.events) is first_end
    b.turn_start()
    b.turn_end()
    assert find_last_message_turn_end(b.events) is b.events[-1]
    b.turn_start()  # open turn: the answer stays the last closed one
    assert find_last_message_turn_end(b.events) is b.events[-2]


def test_find1_pending_mark_cleared_by_its_end() -> None:
    events = [start(0, 1), end(1, 1), end(2, 1)]
    assert find_last_message_turn_end(events) is events[1]


def test_find2_other_triggers_ignored_even_when_later() -> None:
    events = [start(0, 1), end(1, 1)]
    for i, kind in enumerate(["injection", "retry", "session-title", "goal"], start=1):
        events += [start(2 * i, i + 1, kind), end(2 * i + 1, i + 1)]
    assert find_last_message_turn_end(events) is events[1]


def test_find3_end_without_its_start_in_the_list_ignored() -> None:
    events = [start(0, 1), end(1, 1), start(2, 2), end(3, 2)]
    assert find_last_message_turn_end(events[3:]) is None
    assert find_last_message_turn_end(events[1:2]) is None
    assert find_last_message_turn_end(events[1:]) is events[3]  # turn 2 starts inside the list


def test_find4_returns_the_list_object_or_none() -> None:
    assert find_last_message_turn_end([]) is None
    events = [start(0, 1), end(1, 1)]
    result = find_last_message_turn_end(events)
    assert result is events[1]


def test_find_turn_numbers_compare_like_javascript_numbers() -> None:
    assert find_last_message_turn_end([start(0, 1), end(1, 1.0)]) is not None
    assert find_last_message_turn_end([start(0, 1), end(1, True)]) is None
    assert find_last_message_turn_end([start(0, "1"), end(1, 1)]) is None
