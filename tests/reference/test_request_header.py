"""Request header canonical form, equality and folds (REQ-1..8)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from sessionspec.reference import (
    FrozenDict,
    RequestHeaderFold,
    SurfaceError,
    call_config_equals,
    canonical_header,
    derive_event_message,
    fold_request_header,
    fold_surface,
    header_equals,
)
from sessionspec.spec import constants

CONFIG = {"provider": "mock", "model": "m"}


def tool(name: str, description: str = "d") -> dict[str, Any]:
    return {"name": name, "description": description, "parameters": {"type": "object"}}


def header_event(seq: int, header: Any, reason: str = "change") -> dict[str, Any]:
    return {"type": "request/header", "seq": seq, "time": seq, "data": {"header": header, "reason": reason}}


def test_req1_canonical_header() -> None:
    assert canonical_header({"config": CONFIG, "system": "", "tools": []}) == {"config": CONFIG}
    full = {"config": CONFIG, "system": "s", "tools": [tool("a")], "messagePrefix": [1]}
    before = copy.deepcopy(full)
    canon = canonical_header(full)
    assert canon == {"config": CONFIG, "system": "s", "tools": [tool("a")]}
    assert canon["config"] is full["config"]  # passed through unchanged
    assert full == before
    assert canonical_header({"config": CONFIG, "system": None, "tools": None}) == {"config": CONFIG}
    assert list(canonical_header({"tools": [1], "system": "s", "config": CONFIG})) == ["config", "system", "tools"]


def test_req2_fold_takes_last_snapshot_or_returns_start_itself() -> None:
    start = {"config": CONFIG, "system": "baseline"}
    unrelated = [{"type": "turn/start", "seq": 0, "time": 0, "data": {"turn": 1}}]
    assert fold_request_header(unrelated) is None
    assert fold_request_header(unrelated, start) is start
    events = [
        header_event(0, {"config": CONFIG, "system": "first"}, "initial"),
        {"type": "user/message", "seq": 1, "time": 1, "data": {"content": []}, "surfaceOp": "append"},
        header_event(2, {"config": {"provider": "mock", "model": "other"}, "tools": []}),
        {"type": "request/header-like", "seq": 3, "time": 3, "data": {"header": {"config": {}}}},
    ]
    assert fold_request_header(events) == {"config": {"provider": "mock", "model": "other"}}
    assert fold_request_header(events[:1], start) == {"config": CONFIG, "system": "first"}


def test_req3_incremental_fold_is_frozen_and_equals_offline_fold() -> None:
    fold = RequestHeaderFold()
    events: list[Any] = []
    assert fold.fold(events) is None
    events.append(header_event(0, {"config": CONFIG, "system": "a", "tools": [tool("x")]}))
    first = fold.fold(events)
    assert first == fold_request_header(events) and type(first) is FrozenDict
    with pytest.raises(TypeError):
        first["tools"].append(1)  # type: ignore[index]
    events.append({"type": "turn/end", "seq": 1, "time": 1, "data": {}})
    assert fold.fold(events) is first  # unchanged until the next header
    events.append(header_event(2, {"config": CONFIG}))
    assert fold.fold(events) == {"config": CONFIG} and fold.consumed == 3
    pushed = RequestHeaderFold()
    for e in events:
        pushed.push(e)
    assert pushed.value == fold.value and pushed.consumed == 3


def test_req4_header_equals() -> None:
    base = canonical_header({"config": CONFIG, "system": "s", "tools": [tool("a")]})
    assert header_equals(base, copy.deepcopy(base))
    assert not header_equals(base, {**base, "config": {"provider": "mock", "model": "other"}})
    assert not header_equals(base, {**base, "system": "other"})
    assert not header_equals(base, {**base, "tools": []})
    assert not header_equals(base, {**base, "tools": [tool("a", "changed")]})
    assert not header_equals({"config": CONFIG, "tools": [tool("a"), tool("b")]}, {"config": CONFIG, "tools": [tool("b"), tool("a")]})
    assert header_equals({"config": CONFIG}, {"config": CONFIG, "tools": []})
    assert not header_equals({"config": CONFIG}, {"config": CONFIG, "system": ""})  # absent != ''
    reordered = {"parameters": {"type": "object"}, "name": "a", "description": "d"}
    assert not header_equals({"config": CONFIG, "tools": [tool("a")]}, {"config": CONFIG, "tools": [reordered]})


def test_req5_call_config_equals() -> None:
    assert call_config_equals(CONFIG, dict(CONFIG))
    assert not call_config_equals(CONFIG, {**CONFIG, "temperature": 0.5})
    assert call_config_equals({**CONFIG, "temperature": 0.5}, {**CONFIG, "temperature": 0.5})
    assert not call_config_equals({**CONFIG, "maxTokens": 10}, {**CONFIG, "maxTokens": 11})
    assert not call_config_equals({**CONFIG, "maxTokens": None}, CONFIG)  # present null != absent
    assert call_config_equals({**CONFIG, "stop": ["a", "b"]}, {**CONFIG, "stop": ["a", "b"]})
    assert not call_config_equals({**CONFIG, "stop": ["a", "b"]}, {**CONFIG, "stop": ["b", "a"]})
    assert not call_config_equals({**CONFIG, "stop": ["a"]}, {**CONFIG, "stop": ["a", "b"]})
    assert not call_config_equals({**CONFIG, "stop": []}, CONFIG)
    assert not call_config_equals(CONFIG, {"provider": "mock", "model": "x"})
    assert not call_config_equals(CONFIG, {"model": "m"})


def test_req6_reason_vocabulary_from_the_spec() -> None:
    assert constants()["requestHeaderReasons"] == ["initial", "resume", "change"]
    assert constants()["rejectedRequestHeaderReasons"] == ["fallback"]


def test_req7_no_delta_vocabulary() -> None:
    import sessionspec.reference.request_header as module

    names = [n for n in dir(module) if not n.startswith("_")]
    assert not [n for n in names if "delta" in n.lower() or "diff" in n.lower() or "apply" in n.lower()]
    assert "request/header-delta" in constants()["legacyRejectedTypes"]


def test_req8_request_header_is_log_only() -> None:
    event = header_event(0, {"config": CONFIG})
    with pytest.raises(SurfaceError) as info:
        fold_surface([{**event, "surfaceOp": "append"}])
    assert info.value.code == "SURFACE_LOG_ONLY_MARKER"
    assert derive_event_message(event) is None
