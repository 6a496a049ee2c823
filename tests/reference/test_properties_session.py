"""Hypothesis properties of sessions, the store, fork, repair and the JSONL reader."""

from __future__ import annotations

import logging
import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sessionspec.reference import json_text
from sessionspec.reference.invariants import check_invariants
from sessionspec.reference.json_value import FrozenDict, FrozenList, json_equal, thaw_json_value
from sessionspec.reference.jsonl import encode_records, header_line, read_artifact
from sessionspec.reference.repair import interrupted_turn_closers
from sessionspec.reference.session import Session
from sessionspec.reference.store import SessionStore
from sessionspec.reference.surface import fold_surface
from sessionspec.spec.errors import SessionSpecError

PROVENANCE = {"provider": "acme", "model": "m-1"}
USER = {"kind": "user"}
pytestmark = pytest.mark.filterwarnings("ignore")


def txt(value: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": value}]


# ---------------------------------------------------------------- a simulated agent


@st.composite
def agent_sessions(draw: st.DrawFn, max_turns: int = 3, close_last: bool = True) -> Session:
    """A session built through ``append`` the way an agent loop would (INV-clean).

    It mixes prompts, steps, chunk deltas, tool calls (answered, unanswered,
    never started), compaction replaces of arbitrary node ranges and
    content-only tool/result prunes; ``derive_messages`` is sampled midway
    to exercise the incremental cache.
    """
    session = Session("agent")
    call_counter = 0
    turns = draw(st.integers(1, max_turns))
    for turn in range(1, turns + 1):
        session.append("turn/start", {"turn": turn, "trigger": {"kind": "message", "source": USER}})
        if draw(st.booleans()):
            session.append("user/message", {"content": txt(f"prompt {turn}"), "source": USER}, {"surfaceOp": "append"})
        for step in range(1, draw(st.integers(0, 3)) + 1):
            session.append("step/start", {"turn": turn, "step": step})
            if draw(st.booleans()):
                session.append("request/header", {"header": {"config": PROVENANCE, "system": f"s{turn}"}, "reason": "initial"})
            chunk_seqs = []
            for i in range(draw(st.integers(0, 4))):
                kind = draw(st.sampled_from(["text-delta", "reasoning-delta"]))
                event = session.append(
                    "assistant/chunk", {"turn": turn, "step": step, "chunk": {"type": kind, "index": 0, "text": f"d{i}"}}
                )
                chunk_seqs.append(event["seq"])
            calls = []
            for _ in range(draw(st.integers(0, 2))):
                call_counter += 1
                calls.append(f"call-{call_counter}")
            content = ([] if draw(st.booleans()) and not calls else txt("answer")) + [
                {"type": "tool-call", "id": c, "name": "read", "arguments": "{}"} for c in calls
            ]
            session.append(
                "assistant/message",
                {"turn": turn, "step": step, "content": content, "provenance": PROVENANCE},
                {"surfaceOp": "append", "sourceEventSeqs": chunk_seqs},
            )
            for call_id in calls:
                fate = draw(st.sampled_from(["answered", "answered", "unanswered", "not-started"]))
                if fate == "not-started":
                    continue
                call = session.append(
                    "tool/call", {"turn": turn, "step": step, "callId": call_id, "name": "read", "arguments": "{}"}
                )
                if fate == "answered":
                    session.append(
                        "tool/result",
                        {"turn": turn, "step": step, "callId": call_id, "content": txt("x" * draw(st.integers(0, 30))),
                         "isError": draw(st.booleans())},
                        {"surfaceOp": "append", "sourceEventSeqs": [call["seq"]]},
                    )
            session.append("step/end", {"turn": turn, "step": step})
            if draw(st.booleans()):
                session.derive_messages()
        _maybe_prune(draw, session)
        _maybe_compact(draw, session)
        if turn < turns or close_last:
            session.append("turn/end", {"turn": turn, "reason": {"kind": draw(st.sampled_from(["completed", "aborted"]))}})
    return session


def _maybe_prune(draw: st.DrawFn, session: Session) -> None:
    results = [s for s in session.surface.nodes if session.events[s]["type"] == "tool/result"]
    if results and draw(st.booleans()):
        target = draw(st.sampled_from(results))
        data = thaw_json_value(session.events[target]["data"])
        data["content"] = txt("[pruned]")
        session.append("tool/result", data, {"surfaceOp": {"op": "replace", "start": target, "end": target},
                                            "sourceEventSeqs": [target]})


def _maybe_compact(draw: st.DrawFn, session: Session) -> None:
    nodes = list(session.surface.nodes)
    if nodes and draw(st.booleans()):
        i = draw(st.integers(0, len(nodes) - 1))
        j = draw(st.integers(i, len(nodes) - 1))
        session.append(
            "user/message",
            {"content": txt("summary"), "source": {"kind": "plugin", "plugin": "compact"}},
            {"surfaceOp": {"op": "replace", "start": nodes[i], "end": nodes[j]}, "sourceEventSeqs": nodes[i : j + 1]},
        )


def observable(session: Session) -> tuple[Any, ...]:
    return (
        session.seq,
        list(session.events),
        list(session.surface.nodes),
        session.surface.replace_generation,
        session.derive_messages(),
        session.request_header(),
    )


# ---------------------------------------------------------------- SEED-14 / DERIVE-8


@pytest.mark.req("SEED-14", "DERIVE-8", "SURF-12")
@given(agent_sessions())
def test_replay_from_seed_reproduces_everything(session: Session) -> None:
    replay = Session("replay", session.events)
    assert replay.events == session.events
    assert replay.seq == session.seq
    assert replay.derive_messages() == session.derive_messages()
    assert replay.surface.nodes == session.surface.nodes
    assert replay.surface.replace_generation == session.surface.replace_generation
    assert replay.request_header() == session.request_header()
    assert fold_surface(session.events)["nodes"] == list(session.surface.nodes)
    plain = Session("plain", json_text.loads(json_text.dumps(list(session.events))))
    assert plain.derive_messages() == session.derive_messages()
    assert check_invariants(session.events) == []


# ---------------------------------------------------------------- atomic rejection

JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=3)
    | st.sampled_from([math.inf, math.nan, -0.0, 0.5]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=2), inner, max_size=3)
    | st.frozensets(st.integers(0, 2), max_size=2) | st.tuples(inner),
    max_leaves=6,
)


@st.composite
def append_attempts(draw: st.DrawFn, session: Session) -> tuple[str, Any, Any]:
    seqs = list(range(session.seq + 2))
    event_type = draw(st.sampled_from([
        "user/message", "assistant/message", "tool/result", "steering/message", "turn/start", "plugin/x",
        "request/header", "request/header-delta",
    ]))
    data = draw(JSONISH | st.just({"reason": "fallback"}) | st.just({"content": txt("c"), "callId": "call-1"}))
    op = draw(st.none() | st.just("append") | st.just("prepend") | st.builds(
        lambda a, b: {"op": "replace", "start": a, "end": b}, st.sampled_from(seqs), st.sampled_from(seqs)
    ) | st.just({"op": "replace", "start": 0}))
    sources = draw(st.none() | st.lists(st.sampled_from(seqs) | st.just(-1) | st.just(math.nan), max_size=4))
    intent: dict[str, Any] | None = None
    if op is not None or sources is not None:
        intent = {}
        if op is not None:
            intent["surfaceOp"] = op
        if sources is not None:
            intent["sourceEventSeqs"] = sources
    return event_type, data, intent


@pytest.mark.req("APPEND-1", "APPEND-10", "SURF-11")
@settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(agent_sessions(max_turns=2), st.data())
def test_rejected_append_changes_nothing(session: Session, data: st.DataObject) -> None:
    store = SessionStore()
    store.enter(session)
    notified: list[int] = []
    store.on("session/event", lambda s, e: notified.append(e["seq"]))
    veto = data.draw(st.booleans())
    store.add_pre_commit_validator(lambda s, e: (_ for _ in ()).throw(ValueError("veto")) if veto else None)
    for _ in range(3):
        attempt = data.draw(append_attempts(session))
        before = observable(session)
        held_events = session.events
        try:
            event = session.append(*attempt)
        except (SessionSpecError, ValueError):
            assert observable(session) == before
            assert session.events is held_events
            continue
        assert not veto
        assert session.seq == before[0] + 1
        assert session.events[:-1] == before[1] and session.events[-1] is event
        assert notified[-1] == event["seq"]
    assert notified == sorted(set(notified))


# ---------------------------------------------------------------- fork


@pytest.mark.req("FORK-9", "FORK-10")
@given(agent_sessions(), st.data(), st.sampled_from([None, "/work/p"]))
def test_fork_child_equals_source_prefix(session: Session, data: st.DataObject, cwd: str | None) -> None:
    store = SessionStore()
    meta = {"delegationDepth": 1} | ({"cwd": cwd} if cwd else {})
    source = store.create("src", seed=session.events, meta=meta)
    ends = [e["seq"] for e in source.events if e["type"] == "turn/end"]
    boundary = data.draw(st.sampled_from(ends))
    child = store.fork(source, boundary)
    assert child.events == source.events[: boundary + 1]
    assert child.header["parentSession"] == "src" and child.header["seedLength"] == boundary + 1
    assert "delegationDepth" not in child.header
    assert child.header.get("cwd") == cwd
    assert child.derive_messages() == Session("ref", source.events[: boundary + 1]).derive_messages()


# ---------------------------------------------------------------- repair


@pytest.mark.req("REPAIR-11", "INV-7")
@given(agent_sessions(close_last=False), st.data())
def test_repair_turns_any_crash_tail_into_an_invariant_clean_log(session: Session, data: st.DataObject) -> None:
    cut = data.draw(st.integers(0, session.seq))
    prefix = list(session.events[:cut])
    closers = interrupted_turn_closers(prefix)
    repaired = prefix + closers
    assert check_invariants(repaired) == []
    assert interrupted_turn_closers(repaired) == []
    Session("repaired", repaired)  # SEED-* accept it
    # The same through the JSONL reader: a torn fragment and the repair.
    header = Session("agent").header
    raw = json_text.dumps_bytes(header_line(header)) + b"\n" + encode_records(prefix)
    torn = raw + data.draw(st.sampled_from([b"", b'{"type":"assist', b"\n"]))
    artifact = read_artifact(torn)
    assert artifact.events == prefix
    assert artifact.truncate_offset == len(raw)


# ---------------------------------------------------------------- immutability


def _containers(value: Any) -> list[Any]:
    out, stack = [], [value]
    while stack:
        node = stack.pop()
        if isinstance(node, (dict, list)):
            out.append(node)
            stack.extend(node.values() if isinstance(node, dict) else node)
    return out


@pytest.mark.req("APPEND-8", "DERIVE-7", "DEC-5")
@given(agent_sessions(max_turns=2), st.data())
def test_mutating_returned_events_and_messages_raises(session: Session, data: st.DataObject) -> None:
    values = [session.events, session.header, *session.derive_messages()]
    target = data.draw(st.sampled_from(values))
    containers = _containers(target)
    node = data.draw(st.sampled_from(containers))
    assert isinstance(node, (FrozenDict, FrozenList))
    before = [thaw_json_value(e) for e in session.events]
    mutations = (
        [lambda: node.__setitem__("k", 1), lambda: node.pop("k", None), lambda: node.clear(),
         lambda: node.update({"k": 1}), lambda: node.setdefault("k", 1)]
        if isinstance(node, dict)
        else [lambda: node.append(1), lambda: node.clear(), lambda: node.extend([1]), lambda: node.insert(0, 1),
              lambda: node.sort(), lambda: node.reverse()]
    )
    with pytest.raises(TypeError):
        data.draw(st.sampled_from(mutations))()
    assert json_equal([thaw_json_value(e) for e in session.events], before)


# ---------------------------------------------------------------- listener failures


@pytest.mark.req("APPEND-11", "STORE-9")
@given(st.lists(st.sampled_from(["ok", "raise", "reenter", "detach"]), min_size=1, max_size=5), st.integers(1, 3))
def test_failing_listener_never_undoes_a_committed_append(kinds: list[str], count: int) -> None:
    logging.getLogger("sessionspec.reference.store").setLevel(logging.CRITICAL)
    store = SessionStore()
    session = store.create("s")
    heard: list[tuple[int, int]] = []

    def make(i: int, kind: str) -> Any:
        def listener(s: Session, e: Any) -> None:
            heard.append((i, e["seq"]))
            if kind == "raise":
                raise RuntimeError("listener failure")
            if kind == "reenter":
                s.append("plugin/inner", {})
            if kind == "detach":
                store.detach(s)

        return listener

    for i, kind in enumerate(kinds):
        store.on("session/event", make(i, kind))
    returned = [session.append("plugin/x", {"n": n}) for n in range(count)]
    assert list(session.events) == returned
    detached_at = 0 if "detach" in kinds else None
    expected_rounds = 1 if detached_at is not None else count
    assert heard == [(i, seq) for seq in range(expected_rounds) for i in range(len(kinds))]
    assert (store.get("s") is None) == ("detach" in kinds)
