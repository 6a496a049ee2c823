"""Message derivation (DERIVE-1..12)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sessionspec.reference import (
    FrozenDict,
    FrozenList,
    MessageLog,
    SurfaceState,
    derive_event_message,
    derive_messages,
    fold_surface,
    freeze_json_value,
)
from strategies import PROVENANCE, LogBuilder, session_logs

TEXT = [{"type": "text", "text": "hello"}]


class LiveLog:
    """A minimal live log: frozen events + SurfaceState + MessageLog, as a Session wires them."""

    def __init__(self) -> None:
        self.events: list[Any] = []
        self.surface = SurfaceState(self.events)
        self.log = MessageLog()

    def append(self, event: dict[str, Any]) -> None:
        frozen = freeze_json_value(event)
        plan = self.surface.check(frozen)
        self.events.append(frozen)
        self.surface.apply(plan)

    def messages(self) -> list[Any]:
        return self.log.messages(self.events, self.surface)


def test_derive1_surface_order_and_omissions() -> None:
    b = LogBuilder()
    b.turn_start()
    first = b.user("one")
    b.step_start()
    b.assistant("", [])  # empty content: a node that derives nothing
    b.assistant("two")
    b.step_end()
    b.compact(0, 0, "summary")  # replaces "one" at its position
    b.turn_end()
    messages = derive_messages(b.events)
    assert [m["content"][0]["text"] for m in messages] == ["summary", "two"]
    assert first["seq"] not in fold_surface(b.events)["nodes"]


def test_derive2_user_and_steering_project_content_verbatim() -> None:
    source = {"kind": "plugin", "plugin": "p"}
    user = {"type": "user/message", "seq": 0, "time": 0, "data": {"content": TEXT, "source": source}, "surfaceOp": "append"}
    steer = {"type": "steering/message", "seq": 1, "time": 0, "data": {"content": TEXT, "source": source, "turn": 3}, "surfaceOp": "append"}
    empty = {"type": "user/message", "seq": 2, "time": 0, "data": {"content": [], "source": source}, "surfaceOp": "append"}
    assert derive_event_message(user) == {"role": "user", "content": TEXT}
    assert derive_event_message(steer) == {"role": "user", "content": TEXT}
    assert derive_event_message(empty) == {"role": "user", "content": []}


def test_derive3_assistant_keeps_whole_provenance_drops_usage() -> None:
    provenance = {"provider": "p", "model": "m", "replayState": {"opaque": [1, 2]}}
    event = {
        "type": "assistant/message",
        "seq": 0,
        "time": 0,
        "data": {"turn": 1, "step": 1, "content": TEXT, "provenance": provenance, "usage": {"inputTokens": 1, "outputTokens": 1}},
        "surfaceOp": "append",
    }
    assert derive_event_message(event) == {"role": "assistant", "content": TEXT, "provenance": provenance}
    no_provenance = {**event, "data": {"turn": 1, "step": 1, "content": TEXT}}
    message = derive_event_message(no_provenance)
    assert message == {"role": "assistant", "content": TEXT} and "provenance" not in message


def test_derive4_empty_assistant_content_projects_to_nothing() -> None:
    event = {"type": "assistant/message", "seq": 0, "time": 0, "data": {"content": [], "provenance": PROVENANCE}, "surfaceOp": "append"}
    assert derive_event_message(event) is None
    assert derive_messages([event]) == []
    assert fold_surface([event])["nodes"] == [0]  # still a surface node


def test_derive5_tool_result_projection() -> None:
    data = {"turn": 1, "step": 2, "callId": "c1", "content": TEXT, "isError": False, "error": {"name": "E", "code": "X"}, "meta": {"m": 1}}
    event = {"type": "tool/result", "seq": 0, "time": 0, "data": data, "surfaceOp": "append"}
    assert derive_event_message(event) == {
        "role": "user",
        "content": [{"type": "tool-result", "toolCallId": "c1", "content": TEXT, "isError": False}],
    }
    errored = {**event, "data": {**data, "isError": True}}
    assert derive_event_message(errored)["content"][0]["isError"] is True  # type: ignore[index]


@pytest.mark.parametrize(
    "type_",
    ["turn/start", "turn/end", "step/start", "step/end", "assistant/chunk", "tool/call", "request/header", "todo/write", "plugin/x", "context/message"],
)
def test_derive6_other_types_project_to_nothing(type_: str) -> None:
    event = {"type": type_, "seq": 0, "time": 0, "data": {"content": TEXT, "header": {"system": "s"}}}
    assert derive_event_message(event) is None


def test_derive7_new_list_each_call_immutable_shared_messages() -> None:
    live = LiveLog()
    live.append({"type": "user/message", "seq": 0, "time": 0, "data": {"content": TEXT}, "surfaceOp": "append"})
    first = live.messages()
    second = live.messages()
    assert first == second and first is not second
    assert first[0] is second[0]  # shared, never re-derived
    live.append({"type": "user/message", "seq": 1, "time": 0, "data": {"content": TEXT}, "surfaceOp": "append"})
    assert len(first) == 1 and len(live.messages()) == 2
    message = first[0]
    assert type(message) is FrozenDict and type(message["content"]) is FrozenList
    with pytest.raises(TypeError):
        message["role"] = "assistant"
    with pytest.raises(TypeError):
        message["content"][0]["text"] = "changed"
    assert message["content"] is live.events[0]["data"]["content"]  # content shares the frozen log data
    first.append("callers may change their own list")
    assert len(live.messages()) == 2


def test_derive7_plain_event_content_is_frozen_copy() -> None:
    content = [{"type": "text", "text": "x"}]
    message = derive_event_message({"type": "user/message", "seq": 0, "time": 0, "data": {"content": content}, "surfaceOp": "append"})
    content[0]["text"] = "changed"
    assert message is not None and message["content"] == [{"type": "text", "text": "x"}]


@given(session_logs(), st.data())
def test_derive8_incremental_equals_from_scratch_after_any_prefix(events: list[dict[str, Any]], data: st.DataObject) -> None:
    live = LiveLog()
    checkpoints = set(data.draw(st.lists(st.integers(0, max(len(events) - 1, 0)), max_size=6)))
    for i, event in enumerate(events):
        live.append(event)
        if i in checkpoints:
            assert live.messages() == derive_messages(events[: i + 1])
    assert live.messages() == derive_messages(events)


def test_derive8_rebuilt_after_replace() -> None:
    live = LiveLog()
    b = LogBuilder()
    b.user("a")
    b.user("b")
    for e in b.events:
        live.append(e)
    before = live.messages()
    b.compact(0, 1, "sum")
    live.append(b.events[-1])
    after = live.messages()
    assert [m["content"][0]["text"] for m in after] == ["sum"]
    assert [m["content"][0]["text"] for m in before] == ["a", "b"]


def test_derive9_shadowed_messages_gone_replacement_in_place() -> None:
    b = LogBuilder()
    b.user("a")
    b.user("b")
    b.user("c")
    b.compact(1, 1, "B")
    assert [m["content"][0]["text"] for m in derive_messages(b.events)] == ["a", "B", "c"]


@given(session_logs(replaces=False), st.data())
def test_derive10_interleaved_log_only_events_change_nothing(events: list[dict[str, Any]], data: st.DataObject) -> None:
    noisy: list[dict[str, Any]] = []
    renumber: dict[int, int] = {}
    for event in events:
        if data.draw(st.booleans()):
            noisy.append({"type": "plugin/noise", "seq": len(noisy), "time": 0, "data": None})
        renumber[event["seq"]] = len(noisy)
        copy_ = dict(event, seq=len(noisy))
        if "sourceEventSeqs" in copy_:
            copy_["sourceEventSeqs"] = [renumber[s] for s in copy_["sourceEventSeqs"]]
        noisy.append(copy_)
    assert derive_messages(noisy) == derive_messages(events)


@given(session_logs())
def test_derive11_node_message_equals_derive_event_message(events: list[dict[str, Any]]) -> None:
    nodes = fold_surface(events)["nodes"]
    expected = [m for m in (derive_event_message(events[s]) for s in nodes) if m is not None]
    assert derive_messages(events) == expected


def test_derive12_request_header_data_never_appears() -> None:
    b = LogBuilder()
    b.turn_start()
    b.header(system="SECRET SYSTEM", tools=[{"name": "SECRET_TOOL"}])
    b.user("hi")
    b.turn_end()
    text = repr(derive_messages(b.events))
    assert "SECRET" not in text and "mock-1" not in text
