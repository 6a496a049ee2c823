"""APPEND-1 … APPEND-15: `Session.append`, its stages and its atomicity."""

from __future__ import annotations

import asyncio
import logging
import math
from typing import Any

import pytest
from sessionlog_builders import APPEND, CONFIG, PROVENANCE, USER_SOURCE, append_turn, balanced_session, text
from sessionspec.reference.json_value import FrozenDict, FrozenList
from sessionspec.reference.session import Session, now_ms
from sessionspec.reference.store import SessionStore
from sessionspec.spec.errors import AppendError, SeedError, SurfaceError

req = pytest.mark.req
STORE_LOGGER = "sessionspec.reference.store"


def state_of(session: Session) -> tuple[Any, ...]:
    """Everything observable about a session, as plain values."""
    return (
        session.seq,
        [dict(e) for e in session.events],
        list(session.surface.nodes),
        session.surface.replace_generation,
        session.derive_messages(),
        session.request_header(),
    )


def cyclic() -> dict[str, Any]:
    value: dict[str, Any] = {}
    value["self"] = value
    return value


# ---------------------------------------------------------------- APPEND-1


@req("APPEND-1")
def test_append1_data_check_precedes_legacy_check() -> None:
    session = Session("s")
    with pytest.raises(AppendError) as info:
        session.append("request/header-delta", {"bad": {1, 2}})
    assert info.value.code == "APPEND_DATA_NOT_JSON"


@req("APPEND-1")
def test_append1_legacy_check_precedes_metadata_check() -> None:
    session = Session("s")
    with pytest.raises(AppendError) as info:
        session.append("request/header-delta", {}, {"surfaceOp": math.nan})
    assert info.value.code == "APPEND_LEGACY_HEADER_DELTA"


@req("APPEND-1")
def test_append1_metadata_check_precedes_reentrancy_and_reentrancy_precedes_surface() -> None:
    store = SessionStore()
    session = store.create("s")
    seen: list[str] = []

    def observer(s: Session, event: Any) -> None:
        if event["type"] != "turn/start":
            return
        for args in (("user/message", {}, {"surfaceOp": {1}}), ("user/message", {})):
            try:
                s.append(*args)
            except AppendError as error:
                seen.append(error.code)

    store.on("session/event", observer)
    session.append("turn/start", {"turn": 1})
    assert seen == ["APPEND_METADATA_NOT_JSON", "APPEND_REENTRANT"]


@req("APPEND-1")
def test_append1_surface_check_precedes_validators_and_validators_precede_commit() -> None:
    store = SessionStore()
    session = store.create("s")
    calls: list[tuple[int, int]] = []

    def validator(s: Session, candidate: Any) -> None:
        calls.append((candidate["seq"], len(s.events)))

    store.add_pre_commit_validator(validator)
    with pytest.raises(SurfaceError):
        session.append("user/message", {"content": []})
    assert calls == []
    session.append("turn/start", {"turn": 1})
    assert calls == [(0, 0)]  # validators run before the commit


@req("APPEND-1")
def test_append1_only_notification_failure_does_not_reject() -> None:
    store = SessionStore()
    session = store.create("s")
    store.on("session/event", lambda s, e: 1 / 0)
    event = session.append("turn/start", {"turn": 1})
    assert session.events[-1] == event


# ---------------------------------------------------------------- APPEND-2


@req("APPEND-2")
@pytest.mark.parametrize(
    "data",
    [
        {1, 2},
        (1, 2),
        {"x": math.inf},
        {"x": -math.inf},
        {"x": math.nan},
        -0.0,
        {"x": [0, -0.0]},
        {1: "int key"},
        b"bytes",
        object(),
    ],
    ids=["set", "tuple", "inf", "-inf", "nan", "neg-zero", "nested-neg-zero", "int-key", "bytes", "object"],
)
def test_append2_non_json_data_rejected_without_change(data: Any) -> None:
    session = balanced_session(1)
    before = state_of(session)
    with pytest.raises(AppendError) as info:
        session.append("plugin/x", data)
    assert info.value.code == "APPEND_DATA_NOT_JSON"
    assert info.value.requirement == "APPEND-2"
    assert "non-JSON-serializable data" in str(info.value)
    assert state_of(session) == before


@req("APPEND-2")
def test_append2_cycle_rejected() -> None:
    session = Session("s")
    with pytest.raises(AppendError) as info:
        session.append("plugin/x", cyclic())
    assert info.value.code == "APPEND_DATA_NOT_JSON"
    assert session.seq == 0


@req("APPEND-2")
def test_append2_shared_non_cyclic_container_accepted() -> None:
    shared = {"a": 1}
    event = Session("s").append("plugin/x", {"one": shared, "two": shared})
    assert event["data"] == {"one": {"a": 1}, "two": {"a": 1}}


# ---------------------------------------------------------------- APPEND-3


@req("APPEND-3")
@pytest.mark.parametrize("data", [{}, None, {"header": {"config": CONFIG}}, [1]])
def test_append3_header_delta_rejected_with_any_data(data: Any) -> None:
    session = Session("s")
    with pytest.raises(AppendError) as info:
        session.append("request/header-delta", data)
    assert info.value.code == "APPEND_LEGACY_HEADER_DELTA"
    assert session.seq == 0


@req("APPEND-3")
def test_append3_fallback_reason_rejected_other_reasons_accepted() -> None:
    session = Session("s")
    with pytest.raises(AppendError) as info:
        session.append("request/header", {"header": {"config": CONFIG}, "reason": "fallback"})
    assert info.value.code == "APPEND_LEGACY_FALLBACK"
    assert session.seq == 0
    for reason in ("initial", "resume", "change", "anything-else"):
        session.append("request/header", {"header": {"config": CONFIG}, "reason": reason})
    session.append("request/header", ["fallback"])  # not an object: no reason to check
    assert session.seq == 5


# ---------------------------------------------------------------- APPEND-4


@req("APPEND-4")
def test_append4_unsupplied_metadata_is_absent_not_null() -> None:
    session = Session("s")
    log_only = session.append("turn/start", {"turn": 1})
    assert "surfaceOp" not in log_only and "sourceEventSeqs" not in log_only
    message = session.append("user/message", {"content": []}, {"surfaceOp": "append"})
    assert "sourceEventSeqs" not in message
    assert list(message) == ["type", "seq", "time", "data", "surfaceOp"]
    message2 = session.append("user/message", {"content": []}, {"surfaceOp": "append", "sourceEventSeqs": [1]})
    assert list(message2) == ["type", "seq", "time", "data", "sourceEventSeqs", "surfaceOp"]


@req("APPEND-4")
@pytest.mark.parametrize(
    "intent", [{"surfaceOp": {"op": "replace", "start": math.inf, "end": 0}}, {"surfaceOp": "append", "sourceEventSeqs": (0,)}]
)
def test_append4_non_json_metadata_rejected(intent: dict[str, Any]) -> None:
    session = Session("s")
    session.append("user/message", {"content": []}, APPEND)
    with pytest.raises(AppendError) as info:
        session.append("user/message", {"content": []}, intent)
    assert info.value.code == "APPEND_METADATA_NOT_JSON"
    assert session.seq == 1


@req("APPEND-4")
def test_append4_supplied_null_marker_is_present_and_invalid() -> None:
    session = Session("s")
    with pytest.raises(SurfaceError) as info:
        session.append("user/message", {"content": []}, {"surfaceOp": None})
    assert info.value.code == "SURFACE_MARKER_INVALID"
    with pytest.raises(SurfaceError) as info:
        session.append("turn/start", {}, {"surfaceOp": None})
    assert info.value.code == "SURFACE_LOG_ONLY_MARKER"


# ---------------------------------------------------------------- APPEND-5 / APPEND-6


@req("APPEND-5")
@pytest.mark.parametrize("event_type", ["user/message", "assistant/message", "tool/result", "steering/message"])
def test_append5_surface_type_without_marker_rejected(event_type: str) -> None:
    session = Session("s")
    for intent in (None, {}, {"sourceEventSeqs": [0]}):
        with pytest.raises(SurfaceError) as info:
            session.append(event_type, {"content": []}, intent)
        assert info.value.code == "SURFACE_MARKER_MISSING"
        assert "requires a surfaceOp marker" in str(info.value)
    assert session.seq == 0


@req("APPEND-6")
def test_append6_log_only_type_with_metadata_rejected() -> None:
    session = Session("s")
    session.append("turn/start", {"turn": 1})
    with pytest.raises(SurfaceError) as info:
        session.append("turn/end", {"turn": 1}, {"surfaceOp": "append"})
    assert info.value.code == "SURFACE_LOG_ONLY_MARKER"
    assert "not surface-eligible" in str(info.value)
    with pytest.raises(SurfaceError) as info:
        session.append("context/message", {"content": []}, {"sourceEventSeqs": [0]})
    assert info.value.code == "SURFACE_LOG_ONLY_SOURCES"
    assert session.seq == 1


# ---------------------------------------------------------------- APPEND-7 / APPEND-8


@req("APPEND-7")
def test_append7_committed_event_shape() -> None:
    session = balanced_session(1)
    data = {"k": [1, {"x": "y"}]}
    low = now_ms()
    event = session.append("plugin/x", data)
    high = now_ms()
    assert list(event) == ["type", "seq", "time", "data"]
    assert event["type"] == "plugin/x"
    assert event["seq"] == session.seq - 1
    assert type(event["time"]) is int and low <= event["time"] <= high
    assert event["data"] == data and event["data"] is not data
    assert session.events[-1] == event
    assert session.events[-1] is event


@req("APPEND-8")
def test_append8_returned_event_is_deeply_immutable() -> None:
    session = Session("s")
    event = session.append("plugin/x", {"list": [1, {"deep": []}]})
    assert isinstance(event, FrozenDict)
    with pytest.raises(TypeError):
        event["seq"] = 9  # type: ignore[index]
    with pytest.raises(TypeError):
        event["data"]["list"].append(2)
    with pytest.raises(TypeError):
        event["data"]["list"][1]["deep"].append(3)
    with pytest.raises(TypeError):
        del event["data"]["list"]
    with pytest.raises(TypeError):
        session.events[0]["data"].update({"x": 1})
    assert session.events[0] == {"type": "plugin/x", "seq": 0, "time": event["time"],
                                 "data": {"list": [1, {"deep": []}]}}


@req("APPEND-8")
def test_append8_mutating_caller_inputs_after_append_changes_nothing() -> None:
    session = Session("s")
    session.append("user/message", {"content": []}, APPEND)
    data = {"content": text("a"), "source": {"kind": "user"}}
    seqs = [0]
    intent = {"surfaceOp": {"op": "replace", "start": 0, "end": 0}, "sourceEventSeqs": seqs}
    session.append("user/message", data, intent)
    data["content"].append({"type": "text", "text": "b"})
    data["source"]["kind"] = "evil"
    seqs.append(99)
    intent["surfaceOp"]["end"] = 5  # type: ignore[index]
    event = session.events[1]
    assert event["data"] == {"content": text("a"), "source": {"kind": "user"}}
    assert event["sourceEventSeqs"] == [0]
    assert event["surfaceOp"] == {"op": "replace", "start": 0, "end": 0}


# ---------------------------------------------------------------- APPEND-9


@req("APPEND-9")
def test_append9_reentrant_append_from_observer_is_contained(caplog: pytest.LogCaptureFixture) -> None:
    store = SessionStore()
    session = store.create("s")
    received: list[tuple[str, Any]] = []

    def reenter(s: Session, event: Any) -> None:
        received.append(("first", event["seq"]))
        s.append("plugin/inner", {})

    store.on("session/event", reenter)
    store.on("session/event", lambda s, e: received.append(("second", e["seq"])))
    with caplog.at_level(logging.WARNING, logger=STORE_LOGGER):
        event = session.append("plugin/outer", {})
    assert event["seq"] == 0
    assert [e["type"] for e in session.events] == ["plugin/outer"]
    assert received == [("first", 0), ("second", 0)]
    assert any("reenter" in r.getMessage() for r in caplog.records)


@req("APPEND-9")
def test_append9_reentrant_append_from_validator_is_rejected() -> None:
    store = SessionStore()
    session = store.create("s")
    outcome: list[str] = []

    def validator(s: Session, candidate: Any) -> None:
        try:
            s.append("plugin/inner", {})
        except AppendError as error:
            outcome.append(error.code)

    store.add_pre_commit_validator(validator)
    session.append("plugin/outer", {})
    assert outcome == ["APPEND_REENTRANT"]
    assert session.seq == 1


@req("APPEND-9")
def test_append9_window_closes_after_publication() -> None:
    store = SessionStore()
    session = store.create("s")
    store.on("session/event", lambda s, e: None)
    session.append("plugin/a", {})
    session.append("plugin/b", {})  # the previous window is closed
    assert session.seq == 2


# ---------------------------------------------------------------- APPEND-10


@req("APPEND-10")
def test_append10_validator_veto_rejects_atomically() -> None:
    store = SessionStore()
    session = store.create("s")
    append_turn(session, 1)
    session.append("turn/start", {"turn": 2})
    session.append("user/message", {"content": text("x"), "source": USER_SOURCE}, APPEND)
    notified: list[int] = []
    store.on("session/event", lambda s, e: notified.append(e["seq"]))
    seen: list[Any] = []

    class Veto(Exception):
        pass

    def validator(s: Session, candidate: Any) -> None:
        seen.append((candidate, len(s.events), s.seq))
        raise Veto("no")

    remove = store.add_pre_commit_validator(validator)
    before = state_of(session)
    nodes = session.surface.nodes[:2]
    with pytest.raises(Veto):
        session.append(
            "user/message",
            {"content": text("summary"), "source": USER_SOURCE},
            {"surfaceOp": {"op": "replace", "start": nodes[0], "end": nodes[1]}, "sourceEventSeqs": list(nodes)},
        )
    assert state_of(session) == before
    assert notified == []
    candidate, length, seq = seen[0]
    assert isinstance(candidate, FrozenDict) and candidate["seq"] == before[0]
    assert length == seq == before[0]
    remove()
    event = session.append("plugin/after", {})
    assert event["seq"] == before[0]
    assert notified == [before[0]]


# ---------------------------------------------------------------- APPEND-11


@req("APPEND-11")
def test_append11_observers_run_in_order_and_failures_are_contained(caplog: pytest.LogCaptureFixture) -> None:
    store = SessionStore()
    session = store.create("s")
    calls: list[Any] = []

    def first(s: Session, event: Any) -> None:
        calls.append(("first", s is session, s.events[-1] == event))
        raise RuntimeError("boom")

    store.on("session/event", first)
    store.on("session/event", lambda s, e: calls.append(("second", e["seq"])))
    with caplog.at_level(logging.WARNING, logger=STORE_LOGGER):
        event = session.append("plugin/x", {"v": 1})
    assert event["data"] == {"v": 1}
    assert calls == [("first", True, True), ("second", 0)]
    assert any("boom" in r.getMessage() for r in caplog.records)


@req("APPEND-11")
def test_append11_failing_async_observer_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    async def scenario() -> None:
        store = SessionStore()
        session = store.create("s")
        later: list[int] = []

        async def failing(s: Session, event: Any) -> None:
            raise RuntimeError("async boom")

        store.on("session/event", failing)
        store.on("session/event", lambda s, e: later.append(e["seq"]))
        event = session.append("plugin/x", {})
        assert event["seq"] == 0 and later == [0]
        await asyncio.sleep(0)
        await asyncio.sleep(0)

    with caplog.at_level(logging.WARNING, logger=STORE_LOGGER):
        asyncio.run(scenario())
    assert any("async boom" in r.getMessage() for r in caplog.records)


# ---------------------------------------------------------------- APPEND-12 / APPEND-13


@req("APPEND-12")
def test_append12_events_snapshot_identity_and_length() -> None:
    session = Session("s")
    session.append("plugin/a", {})
    first = session.events
    assert session.events is first
    assert isinstance(first, FrozenList)
    with pytest.raises(TypeError):
        first.append({})  # type: ignore[arg-type]
    session.append("plugin/b", {})
    assert len(first) == 1
    second = session.events
    assert second is not first and len(second) == 2
    assert session.events is second


@req("APPEND-13")
def test_append13_seq_is_log_length_and_events_are_contiguous() -> None:
    session = balanced_session(2)
    assert session.seq == len(session.events)
    assert [e["seq"] for e in session.events] == list(range(session.seq))
    with pytest.raises(SurfaceError):
        session.append("user/message", {})
    assert session.seq == len(session.events)


# ---------------------------------------------------------------- APPEND-14


@req("APPEND-14")
def test_append14_unattached_sessions_publish_nothing() -> None:
    store = SessionStore()
    heard: list[str] = []
    validated: list[str] = []
    store.on("session/event", lambda s, e: heard.append(s.id))
    store.add_pre_commit_validator(lambda s, e: validated.append(s.id))
    bare = Session("bare")
    prepared = store.prepare("prepared")
    live = store.create("live")
    detach_target = store.prepare("detached")
    detach = store.enter(detach_target)
    store.announce(detach_target)
    detach()
    for session in (bare, prepared, detach_target):
        session.append("plugin/x", {})
        with pytest.raises(SurfaceError):
            session.append("user/message", {})  # always-on checks still run
    live.append("plugin/x", {})
    assert heard == ["live"] and validated == ["live"]


# ---------------------------------------------------------------- APPEND-15


@req("APPEND-15")
def test_append15_no_payload_validation_beyond_always_on_checks() -> None:
    session = Session("s")
    session.append("assistant/message", {"content": text("x")}, APPEND)  # no provenance
    session.append("request/header", {"header": {"config": {}}, "reason": "initial"})  # no provider/model
    session.append("turn/end", {"turn": 7, "reason": {"kind": "aborted", "reason": "x"}})
    session.append("totally/unknown", None)
    session.append("turn/start", {"turn": "not-a-number"})
    session.append("step/start", {"turn": -3, "step": 1.5})
    assert session.seq == 6
    # Re-seeding rejects each record (the seed-only checks run before contiguity).
    expected = ["SEED_PROVENANCE", "SEED_REQUEST_HEADER_CONFIG", "SEED_ABORTED_REASON"]
    for index, code in enumerate(expected):
        with pytest.raises(SeedError) as info:
            Session("copy", session.events[index : index + 1])
        assert info.value.code == code


def test_append_rejects_non_string_type_and_bad_intent() -> None:
    session = Session("s")
    with pytest.raises(TypeError):
        session.append(3, {})  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        session.append("user/message", {}, ["append"])  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        session.append("user/message", {}, {"surface_op": "append"})
    assert session.seq == 0


def test_append_accepts_deep_payload_10000_levels() -> None:
    value: Any = "leaf"
    for _ in range(10_000):
        value = [value]
    session = Session("s")
    event = session.append("plugin/deep", value)
    node = event["data"]
    depth = 0
    while isinstance(node, list):
        node = node[0]
        depth += 1
    assert depth == 10_000 and node == "leaf"
    assert Session("copy", session.events).seq == 1
    assert PROVENANCE  # builders import sanity


def test_every_code_raised_by_these_modules_is_listed_in_errors_json() -> None:
    """Codes are API: session/store/invariants/jsonl raise only codes of ``spec/errors.json``."""
    import ast
    import json
    from importlib import resources
    from pathlib import Path

    import sessionspec.reference as ref
    from sessionspec.spec import load_spec
    from sessionspec.spec.revisions import known_revisions

    listed = {e["code"] for e in json.loads(resources.files("sessionspec.spec").joinpath("errors.json").read_text())["errors"]}
    listed |= {code for r in known_revisions() for code in load_spec(revision=r).error_codes}
    found: set[str] = set()
    for name in ("session.py", "store.py", "invariants.py", "jsonl.py"):
        tree = ast.parse((Path(ref.__file__).parent / name).read_text(encoding="utf-8"))
        exported = {
            elt.value
            for node in ast.walk(tree)
            if isinstance(node, (ast.Assign, ast.AugAssign))
            and any(
                isinstance(t, ast.Name) and t.id == "__all__"
                for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
            )
            for elt in getattr(node.value, "elts", [])
            if isinstance(elt, ast.Constant)
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                value = node.value
                if value.isupper() and "_" in value and value.replace("_", "").isalnum() and value not in exported:
                    found.add(value)
    assert found and found <= listed, sorted(found - listed)
