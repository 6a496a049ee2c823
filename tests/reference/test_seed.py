"""SEED-1 … SEED-16: constructing a session from a seed."""

from __future__ import annotations

import math
from typing import Any

import pytest
from sessionlog_builders import CONFIG, PROVENANCE, balanced_session, plain, text
from sessionspec.reference.invariants import InvariantChecker
from sessionspec.reference.json_value import FrozenDict
from sessionspec.reference.session import Session, validate_seed
from sessionspec.reference.store import SessionStore
from sessionspec.spec.errors import HeaderError, InvariantError, SeedError

req = pytest.mark.req


def ev(seq: int, type: str = "plugin/x", data: Any = None, **extra: Any) -> dict[str, Any]:
    event: dict[str, Any] = {"type": type, "seq": seq, "time": 1000 + seq, "data": data}
    event.update(extra)
    return event


def seed_error(seed: list[Any]) -> SeedError:
    with pytest.raises(SeedError) as info:
        Session("s", seed)
    return info.value


GOOD = [ev(0, "turn/start", {"turn": 1}), ev(1, "user/message", {"content": []}, surfaceOp="append")]


@req("SEED-1")
def test_seed1_first_failing_entry_index_and_no_publication() -> None:
    seed = [*GOOD, ev(2, "plugin/x", {"bad": math.inf}), ev(99)]
    error = seed_error(seed)
    assert error.index == 2 and error.code == "SEED_NOT_JSON"
    assert "index 2" in str(error)
    store = SessionStore()
    created: list[str] = []
    store.on("session/created", lambda s: created.append(s.id))
    with pytest.raises(SeedError):
        store.create("x", seed=seed)
    assert store.get("x") is None and created == [] and store.list() == []


@req("SEED-2")
@pytest.mark.parametrize("entry", [{"type": "a", "seq": 0, "time": 0, "data": {1}}, (1, 2), {"type": "a", 1: 2}])
def test_seed2_non_json_entry_rejected(entry: Any) -> None:
    error = seed_error([entry])
    assert (error.code, error.index, error.requirement) == ("SEED_NOT_JSON", 0, "SEED-2")


@req("SEED-3")
@pytest.mark.parametrize(
    "entry",
    [
        "not an object",
        None,
        [1, 2],
        {"type": "a", "seq": 0, "time": 0},  # no data
        {"type": 1, "seq": 0, "time": 0, "data": None},
        {"seq": 0, "time": 0, "data": None},
        {"type": "a", "seq": -1, "time": 0, "data": None},
        {"type": "a", "seq": 0.0, "time": 0, "data": None},
        {"type": "a", "seq": True, "time": 0, "data": None},
        {"type": "a", "seq": 2**53, "time": 0, "data": None},
        {"type": "a", "seq": 0, "time": -5, "data": None},
        {"type": "a", "seq": 0, "time": "1", "data": None},
        {"type": "a", "seq": 0, "time": 0, "data": None, "extra": 1},
    ],
)
def test_seed3_invalid_envelope_rejected(entry: Any) -> None:
    error = seed_error([entry])
    assert (error.code, error.index) == ("SEED_ENVELOPE", 0)
    assert "invalid event envelope" in str(error)


@req("SEED-3")
def test_seed3_null_data_and_all_optional_keys_accepted() -> None:
    session = Session("s", [ev(0, "plugin/x", None), ev(1, "user/message", [], surfaceOp="append", sourceEventSeqs=[0])])
    assert session.seq == 2


@req("SEED-4")
def test_seed4_header_delta_rejected_before_envelope() -> None:
    error = seed_error([{"type": "request/header-delta", "bogus": True}])
    assert error.code == "SEED_LEGACY_HEADER_DELTA"
    error = seed_error([*GOOD, ev(2, "request/header-delta", {})])
    assert (error.code, error.index) == ("SEED_LEGACY_HEADER_DELTA", 2)


@req("SEED-5")
@pytest.mark.parametrize(
    "data",
    [
        {"header": {"config": {"model": "m"}}},
        {"header": {"config": {"provider": "", "model": "m"}}},
        {"header": {"config": {"provider": "p", "model": 3}}},
        {"header": {"config": None}},
        {"header": "text"},
        {},
        [],  # a JavaScript array is an object: it has no header either
    ],
)
def test_seed5_request_header_needs_provider_and_model(data: Any) -> None:
    error = seed_error([ev(0, "request/header", data)])
    assert (error.code, error.requirement) == ("SEED_REQUEST_HEADER_CONFIG", "SEED-5")


@req("SEED-5")
def test_seed5_does_not_apply_to_non_object_data() -> None:
    assert Session("s", [ev(0, "request/header", "x"), ev(1, "request/header", None)]).seq == 2
    assert Session("s", [ev(0, "request/header", {"header": {"config": CONFIG}, "reason": "initial"})]).seq == 1


@req("SEED-6")
@pytest.mark.parametrize("provenance", [None, {}, {"provider": "p"}, {"provider": "p", "model": ""}, "p/m"])
def test_seed6_assistant_message_needs_provenance(provenance: Any) -> None:
    data: dict[str, Any] = {"turn": 1, "step": 1, "content": text("x")}
    if provenance is not None:
        data["provenance"] = provenance
    error = seed_error([ev(0, "assistant/message", data, surfaceOp="append")])
    assert (error.code, error.requirement) == ("SEED_PROVENANCE", "SEED-6")


@req("SEED-7")
def test_seed7_reason_bearing_aborted_rejected() -> None:
    error = seed_error([ev(0, "turn/end", {"turn": 1, "reason": {"kind": "aborted", "reason": "user"}})])
    assert (error.code, error.requirement) == ("SEED_ABORTED_REASON", "SEED-7")
    accepted = [
        ev(0, "turn/end", {"turn": 1, "reason": {"kind": "aborted"}}),
        ev(1, "turn/end", {"turn": 1, "reason": {"kind": "error", "step": 1, "failure": {"message": "m", "code": "c"}}}),
        ev(2, "turn/end", {"turn": 1, "reason": "aborted"}),
        ev(3, "turn/end", {"turn": 1, "reason": ["aborted", 1]}),
    ]
    assert Session("s", accepted).seq == 4


@req("SEED-8")
def test_seed8_fallback_reason_rejected() -> None:
    error = seed_error([ev(0, "request/header", {"header": {"config": CONFIG}, "reason": "fallback"})])
    assert (error.code, error.requirement) == ("SEED_LEGACY_FALLBACK", "SEED-8")


@req("SEED-9")
def test_seed9_seq_must_equal_index() -> None:
    error = seed_error([ev(0), ev(2)])
    assert (error.code, error.index, error.requirement) == ("SEED_NOT_CONTIGUOUS", 1, "SEED-9")
    error = seed_error([ev(1)])
    assert (error.code, error.index) == ("SEED_NOT_CONTIGUOUS", 0)


@req("SEED-10")
@pytest.mark.parametrize(
    ("entry", "code"),
    [
        (ev(2, "user/message", {"content": []}), "SURFACE_MARKER_MISSING"),
        (ev(2, "context/message", {"content": []}, surfaceOp="append"), "SURFACE_LOG_ONLY_MARKER"),
        (ev(2, "plugin/x", None, sourceEventSeqs=[0]), "SURFACE_LOG_ONLY_SOURCES"),
        (ev(2, "user/message", {}, surfaceOp={"op": "replace", "start": 0, "end": 1}, sourceEventSeqs=[1]),
         "SURFACE_REPLACE_RANGE"),
        (ev(2, "user/message", {}, surfaceOp={"op": "replace", "start": 1, "end": 1}), "SURFACE_SOURCES_COVERAGE"),
        (ev(2, "user/message", {}, surfaceOp="append", sourceEventSeqs=[2]), "SURFACE_SOURCES_INVALID"),
        (ev(2, "user/message", {}, surfaceOp="prepend"), "SURFACE_MARKER_INVALID"),
    ],
)
def test_seed10_surface_violation_rejected_with_index(entry: dict[str, Any], code: str) -> None:
    error = seed_error([*GOOD, entry])
    assert (error.code, error.index) == (code, 2)
    assert error.requirement is not None and error.requirement.startswith("SURF-")


@req("SEED-11")
def test_seed11_check_order_within_an_entry() -> None:
    # delta beats JSON? No: JSON first, then delta.
    assert seed_error([{"type": "request/header-delta", "seq": 0, "time": 0, "data": {1}}]).code == "SEED_NOT_JSON"
    # envelope beats provider/model
    assert seed_error([{"type": "request/header", "seq": 0, "time": 0, "data": {}, "x": 1}]).code == "SEED_ENVELOPE"
    # provider/model beats aborted/fallback/seq
    bad_header = {"header": {"config": {}}, "reason": "fallback"}
    assert seed_error([ev(5, "request/header", bad_header)]).code == "SEED_REQUEST_HEADER_CONFIG"
    # fallback beats contiguity
    fallback = {"header": {"config": CONFIG}, "reason": "fallback"}
    assert seed_error([ev(5, "request/header", fallback)]).code == "SEED_LEGACY_FALLBACK"
    # aborted shape beats contiguity
    assert seed_error([ev(5, "turn/end", {"reason": {"kind": "aborted", "x": 1}})]).code == "SEED_ABORTED_REASON"
    # contiguity beats surface
    assert seed_error([ev(5, "user/message", {})]).code == "SEED_NOT_CONTIGUOUS"


@req("SEED-11")
def test_seed11_header_is_validated_after_every_entry() -> None:
    with pytest.raises(SeedError):
        Session("s", [ev(1)], {"version": 1})
    with pytest.raises(HeaderError):
        Session("s", [ev(0)], {"version": 1})


@req("SEED-12")
def test_seed12_seed_is_detached() -> None:
    seed = [ev(0, "plugin/x", {"list": [1]})]
    session = Session("s", seed)
    seed[0]["data"]["list"].append(2)
    seed[0]["type"] = "changed"
    seed.append(ev(1))
    assert session.events == [ev(0, "plugin/x", {"list": [1]})]
    assert isinstance(session.events[0], FrozenDict)
    with pytest.raises(TypeError):
        session.events[0]["data"]["list"].append(3)


@req("SEED-13")
def test_seed13_unknown_types_accepted() -> None:
    session = Session("s", [{"type": "plugin/event", "seq": 0, "time": 1, "data": None}])
    assert session.events[0]["type"] == "plugin/event"


@req("SEED-14")
def test_seed14_replay_reproduces_everything() -> None:
    source = balanced_session(3)
    nodes = list(source.surface.nodes)
    source.append("turn/start", {"turn": 4})
    source.append(
        "user/message",
        {"content": text("summary"), "source": {"kind": "plugin", "plugin": "compact"}},
        {"surfaceOp": {"op": "replace", "start": nodes[0], "end": nodes[3]}, "sourceEventSeqs": nodes[:4]},
    )
    source.append("turn/end", {"turn": 4, "reason": {"kind": "completed"}})
    replay = Session("other", source.events)
    assert replay.events == source.events
    assert replay.seq == source.seq
    assert replay.derive_messages() == source.derive_messages()
    assert replay.surface.nodes == source.surface.nodes
    assert replay.surface.replace_generation == source.surface.replace_generation == 1
    assert replay.request_header() == source.request_header()


@req("SEED-15")
def test_seed15_events_of_another_session_are_a_valid_seed() -> None:
    source = balanced_session(2)
    assert Session("a", source.events).events == source.events
    assert Session("b", tuple(source.events)).events == source.events
    assert Session("c", source.events[:13]).seq == 13
    assert validate_seed(source.events) == list(source.events)


@req("SEED-16")
def test_seed16_installed_checker_vetoes_creation_from_a_bad_seed() -> None:
    store = SessionStore()
    checker = InvariantChecker().install(store)
    disposed: list[str] = []
    store.on("session/disposed", lambda s: disposed.append(s.id))
    bad_seed = plain(balanced_session(1).events)[:3]
    bad_seed.append(ev(3, "turn/start", {"turn": 5}))  # turn 1 still open
    with pytest.raises(InvariantError) as info:
        store.create("child", seed=bad_seed)
    assert info.value.code == "INV_TURN_ALREADY_OPEN"
    assert store.get("child") is None and disposed == ["child"]
    checker.uninstall()
    assert store.create("child", seed=bad_seed).seq == 4
    assert PROVENANCE
