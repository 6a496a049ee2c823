"""The store-script interpreter of the reference adapter (op ``store``)."""

from __future__ import annotations

from sessionspec.conformance.adapter import ReferenceAdapter


def store(*script):
    return ReferenceAdapter().handle({"seq": 1, "op": "store", "args": {"script": list(script)}})


def calls(reply):
    return [(t["call"], t["event"]) for t in reply["result"]["trace"] if "call" in t]


def test_async_steps_start_before_their_listeners_run_and_settle_at_await():
    reply = store(
        {"do": "on", "event": "session/flush", "listener": "f", "outcome": "wait", "gate": "g"},
        {"do": "create", "id": "x", "as": "s"},
        {"do": "flush", "session": "s", "async": "p"},
        {"do": "release", "gate": "g", "outcome": "reject"},
        {"do": "await", "promise": "p"},
    )
    trace = [t for t in reply["result"]["trace"] if t.get("do") != "on"]
    assert trace[1] == {"at": "2", "do": "flush", "started": True}
    assert trace[2]["call"] == "f"
    assert trace[-1] == {"at": "4", "do": "await", "rejected": {"code": "SCRIPTED", "listener": "f"}}


def test_observers_see_committed_events_and_a_reentrant_append_is_rejected_inside():
    reply = store(
        {"do": "on", "event": "session/event", "listener": "obs", "once": True,
         "actions": [{"do": "append", "session": "s", "type": "plugin/y", "data": 2}]},
        {"do": "create", "id": "x", "as": "s"},
        {"do": "append", "session": "s", "type": "plugin/x", "data": 1},
    )
    trace = reply["result"]["trace"]
    inner = next(t for t in trace if t.get("at") == "obs#1.0")
    assert inner["rejected"] == {"code": "APPEND_REENTRANT"}
    assert next(t for t in trace if "call" in t)["eventSeq"] == 0
    assert [e["type"] for e in reply["result"]["sessions"]["s"]["events"]] == ["plugin/x"]


def test_sessions_without_a_name_get_an_at_handle_and_report_liveness():
    reply = store(
        {"do": "create", "id": "src", "as": "s", "seed": [
            {"type": "turn/start", "seq": 0, "time": 1, "data": {"turn": 1, "trigger": {"kind": "message"}}},
            {"type": "turn/end", "seq": 1, "time": 1, "data": {"turn": 1, "reason": {"kind": "completed"}}}]},
        {"do": "fork", "source": "s", "childId": "kid"},
        {"do": "list"},
        {"do": "get", "id": "kid"},
    )
    result = reply["result"]
    assert result["trace"][-2]["ok"] == ["s", "@kid"]
    assert result["sessions"]["@kid"]["header"]["parentSession"] == "src"
    assert result["sessions"]["@kid"]["live"] is True


def test_a_broken_script_is_an_adapter_error_not_a_rejection():
    assert store({"do": "detach", "handle": "nope"})["kind"] == "errored"
    assert store({"do": "announce", "session": "ghost"})["kind"] == "errored"
    reply = store(
        {"do": "on", "event": "session/created", "listener": "l",
         "actions": [{"do": "append", "session": "ghost", "type": "t", "data": 1}]},
        {"do": "create", "id": "x", "as": "s"},
    )
    assert reply["kind"] == "errored" and "ghost" in reply["message"]  # not swallowed by listener containment


def test_two_stores_are_independent_and_one_session_cannot_join_both():
    reply = store(
        {"do": "prepare", "id": "x", "as": "s"},
        {"do": "enter", "session": "s"},
        {"do": "enter", "session": "s", "store": "other"},
        {"do": "get", "id": "x", "store": "other"},
    )
    trace = reply["result"]["trace"]
    assert trace[2]["rejected"] == {"code": "SESSION_ALREADY_ATTACHED"}
    assert trace[3]["ok"] is None


def test_checker_steps_misused_are_adapter_errors_and_a_violating_live_session_fails_install():
    assert store({"do": "uninstall-invariants"})["kind"] == "errored"
    assert store({"do": "install-invariants"}, {"do": "install-invariants"})["kind"] == "errored"
    reply = store(
        {"do": "create", "id": "x", "as": "s", "seed": [{"type": "plugin/x", "seq": 0, "time": 1, "data": 1}]},
        {"do": "install-invariants"},
        {"do": "append", "session": "s", "type": "plugin/x", "data": 2},
    )
    trace = reply["result"]["trace"]
    assert trace[1] == {"at": "1", "do": "install-invariants", "rejected": {"code": "INV_NO_OPEN_TURN"}}
    assert trace[2]["ok"]["seq"] == 1  # the failed install left no checker behind


def test_a_veto_rejects_only_its_type_and_its_detach_removes_it():
    reply = store(
        {"do": "create", "id": "x", "as": "s"},
        {"do": "veto", "validator": "v", "type": "plugin/no", "detach": "off"},
        {"do": "append", "session": "s", "type": "plugin/ok", "data": 1},
        {"do": "append", "session": "s", "type": "plugin/no", "data": 2},
        {"do": "detach", "handle": "off"},
        {"do": "append", "session": "s", "type": "plugin/no", "data": 3},
    )
    trace = reply["result"]["trace"]
    assert trace[3] == {"at": "3", "do": "append", "rejected": {"code": "SCRIPTED", "listener": "v"}}
    assert [e["data"] for e in reply["result"]["sessions"]["s"]["events"]] == [1, 3]


def test_scoped_listeners_hear_only_sessions_entered_through_their_scope():
    reply = store(
        {"do": "on", "event": "session/created", "listener": "a", "scope": "A"},
        {"do": "prepare", "id": "x", "as": "s"},
        {"do": "enter", "session": "s", "scope": "A"},
        {"do": "announce", "session": "s"},
        {"do": "create", "id": "y", "as": "t"},
    )
    assert calls(reply) == [("a", "session/created")]
    assert next(t for t in reply["result"]["trace"] if "call" in t)["session"] == "s"
