"""One switch, two revisions: the published revision's behaviour through the same Session and store code."""

from __future__ import annotations

import asyncio

import pytest
from sessionspec.reference import derive_event_message, fold_surface, interrupted_turn_closers
from sessionspec.reference.invariants import check_invariants
from sessionspec.reference.request_header import canonical_header, header_equals
from sessionspec.reference.revision import rules_for
from sessionspec.reference.session import Session
from sessionspec.reference.store import SessionStore
from sessionspec.spec.errors import HeaderError, SeedError, SessionForkError, SurfaceError
from sessionspec.spec.revisions import UnknownRevision

PUB = "b150a551b8"


def user(seq: int, text: str = "hi", id: str | None = None) -> dict:
    return {"type": "user/message", "seq": seq, "time": 1, "surfaceOp": "append",
            "data": {"id": f"u{seq}" if id is None else id, "role": "user", "source": {"kind": "user"}, "content": [{"type": "text", "text": text}]}}


def assistant(seq: int, content: list) -> dict:
    return {"type": "assistant/message", "seq": seq, "time": 1, "surfaceOp": "append",
            "data": {"turn": 1, "step": 1, "message": {"id": f"a{seq}", "role": "assistant",
                                                       "source": {"kind": "model", "provider": "p", "model": "m"}, "content": content}}}


def test_rules_come_from_the_revision_data():
    pinned, published = rules_for(None), rules_for("0.1.1-rc.2")
    assert pinned.surface_types == {"user/message", "assistant/message", "tool/result", "steering/message"}
    assert published.surface_types == {"user/message", "assistant/message", "tool/result"}
    assert (pinned.messages.name, published.messages.name) == ("flat", "identified")
    assert pinned.seed_end_marker is None and published.seed_end_marker == "session/end-seed"
    assert pinned.out_of_band and not published.out_of_band
    with pytest.raises(UnknownRevision):
        rules_for("0.0.1-rc.1")


def test_a_seeded_session_gains_the_marker_once_and_remembers_where_live_events_start():
    s = Session("s", [user(0)], revision=PUB)
    assert [e["type"] for e in s.events] == ["user/message", "session/end-seed"]
    assert s.first_live_seq == 1 and s.events[1]["data"] == {}
    again = Session("t", s.events, revision=PUB)
    assert list(again.events) == list(s.events)  # SEED-14: no second marker
    assert Session("e", [], revision=PUB).seq == 1
    assert Session("n", revision=PUB).seq == 0
    assert Session("p", [{"type": "turn/start", "seq": 0, "time": 1, "data": {"turn": 1, "trigger": {"kind": "retry"}}}]).seq == 1


def test_published_seed_checks_identified_messages_and_pinned_shapes_are_refused():
    flat = {"type": "user/message", "seq": 0, "time": 1, "surfaceOp": "append",
            "data": {"content": [], "source": {"kind": "user"}}}
    with pytest.raises(SeedError) as info:
        Session("s", [flat], revision=PUB)
    assert (info.value.code, info.value.requirement) == ("SEED_MESSAGE", "SEED-18")
    Session("s", [flat])  # the pinned revision takes it
    with pytest.raises(SeedError) as info:
        Session("s", [user(0, id="")], revision=PUB)
    assert info.value.code == "SEED_MESSAGE"


def test_derivation_returns_the_stored_message_and_skips_empty_assistant_content():
    event = user(0)
    assert derive_event_message(event, PUB) == event["data"]
    assert derive_event_message(assistant(1, []), PUB) is None
    assert derive_event_message(assistant(1, [{"type": "text", "text": "x"}]), PUB)["id"] == "a1"
    steering = {"type": "steering/message", "seq": 0, "time": 1, "data": {"content": [], "source": {"kind": "user"}, "turn": 1}}
    assert derive_event_message(steering, PUB) is None and derive_event_message(steering) == {"role": "user", "content": []}


def test_steering_leaves_the_surface_at_the_published_revision():
    steering = {"type": "steering/message", "seq": 0, "time": 1, "surfaceOp": "append",
                "data": {"content": [], "source": {"kind": "user"}, "turn": 1}}
    with pytest.raises(SurfaceError) as info:
        fold_surface([steering], PUB)
    assert info.value.code == "SURFACE_LOG_ONLY_MARKER"
    assert fold_surface([steering])["nodes"] == [0]


def test_a_tool_result_rewrite_must_keep_the_message_id():
    call = [{"type": "tool-call", "id": "c1", "name": "x", "arguments": {}}]
    def result(seq: int, mid: str, text: str, **extra: object) -> dict:
        return {"type": "tool/result", "seq": seq, "time": 1, "surfaceOp": "append", **extra,
                "data": {"turn": 1, "step": 1, "message": {"id": mid, "role": "user", "source": {"kind": "tool", "callId": "c1"},
                         "content": [{"type": "tool-result", "toolCallId": "c1", "content": [{"type": "text", "text": text}]}]}}}
    log = [assistant(0, call), result(1, "r1", "big")]
    replace = {"surfaceOp": {"op": "replace", "start": 1, "end": 1}, "sourceEventSeqs": [1]}
    assert fold_surface([*log, {**result(2, "r1", "small"), **replace}], PUB)["nodes"] == [0, 2]
    with pytest.raises(SurfaceError):
        fold_surface([*log, {**result(2, "other", "small"), **replace}], PUB)


def test_fork_allows_a_between_turn_boundary_and_the_child_gets_its_own_marker():
    store = SessionStore(revision=PUB)
    seed = [{"type": "turn/start", "seq": 0, "time": 1, "data": {"turn": 1}},
            {"type": "turn/end", "seq": 1, "time": 1, "data": {"turn": 1, "reason": {"kind": "completed"}}}, user(2)]
    source = store.create("src", seed=seed)
    child = store.fork(source, 2, "child")
    assert [e["type"] for e in child.events] == ["turn/start", "turn/end", "user/message", "session/end-seed"]
    assert child.header["seedLength"] == 3
    pinned = SessionStore()
    with pytest.raises(SessionForkError) as info:
        pinned.fork(pinned.create("src", seed=seed[:2] + [{**seed[2], "data": {"content": [], "source": {"kind": "user"}}}]), 2)
    assert info.value.code == "OPEN_TURN"


def test_flush_reports_whether_a_listener_ran_only_where_the_revision_says_so():
    for revision, expected in ((None, (None, None)), (PUB, (False, True))):
        store = SessionStore(revision=revision)
        session = store.create("s")
        before = asyncio.run(store.flush(session))
        store.on("session/flush", lambda s: None)
        assert (before, asyncio.run(store.flush(session))) == expected


def test_repair_closers_carry_identified_messages_with_deterministic_ids():
    log = [{"type": "turn/start", "seq": 0, "time": 5, "data": {"turn": 1}},
           {"type": "step/start", "seq": 1, "time": 5, "data": {"turn": 1, "step": 1}},
           assistant(2, [{"type": "tool-call", "id": "c1", "name": "x", "arguments": {}}])]
    result = interrupted_turn_closers(log, PUB)[0]
    assert result["data"]["message"]["id"] == "interrupted-tool-result-c1-3"
    assert result["data"]["error"]["code"] == "TOOL_NOT_STARTED"
    assert "callId" in interrupted_turn_closers([{**e, "data": {**e["data"]}} for e in log[:2]] + [
        {**log[2], "data": {"turn": 1, "step": 1, "content": log[2]["data"]["message"]["content"], "provenance": {"provider": "p", "model": "m"}}}])[0]["data"]


def test_invariant_enclosure_follows_the_revision():
    plugin = [{"type": "plugin/x", "seq": 0, "time": 1, "data": None}]
    assert [e.code for e in check_invariants(plugin)] == ["INV_NO_OPEN_TURN"]
    assert check_invariants(plugin, PUB) == []
    todo = [{"type": "todo/write", "seq": 0, "time": 1, "data": {"todos": []}}]
    assert [e.code for e in check_invariants(todo, PUB)] == ["INV_NO_OPEN_TURN"]


def test_headers_carry_adapter_defaults_and_header_fields_at_the_published_revision():
    header = {"config": {"provider": "p", "model": "m", "maxTokens": 3}, "adapterDefaults": {"maxTokens": True}}
    assert "adapterDefaults" in canonical_header(header, PUB) and "adapterDefaults" not in canonical_header(header)
    assert not header_equals(header, {"config": header["config"]}, PUB) and header_equals(header, {"config": header["config"]})
    # markers compare as given (upstream `!==`): a false marker differs from an absent one, equals a false one
    unset = {"config": header["config"], "adapterDefaults": {"maxTokens": False}}
    assert not header_equals(unset, {"config": header["config"]}, PUB)
    assert header_equals(unset, {"config": header["config"], "adapterDefaults": {"maxTokens": False}}, PUB)
    with pytest.raises(HeaderError) as info:
        Session("s", header={"version": 0, "id": "s", "createdAt": 1, "origin": "parent"}, revision=PUB)
    assert info.value.code == "HEADER_ORIGIN"
    assert Session("s", header={"version": 0, "id": "s", "createdAt": 1, "origin": "parent"}).header["origin"] == "parent"


def test_out_of_band_does_not_exist_at_the_published_revision():
    store = SessionStore(revision=PUB)
    session = store.create("s")
    with pytest.raises(NotImplementedError):
        asyncio.run(store.append_out_of_band(session, "session/title", {}, {"kind": "retry"}))
