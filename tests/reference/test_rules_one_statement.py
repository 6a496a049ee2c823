"""Each rule is one function, and every path that decides it asks that function.

SEED-3 (the envelope) is `envelope_findings`: the seed and load paths raise its first finding,
located; `is_event_envelope` is "no findings". The seed entry's check of a message payload is the message
shape's `seed_problem` alone, except for the types it names as checking with rules of its own
(`SEED_ENTRY_OWN_TYPES`): a caller that has asked that check may take the entry of the others as held. SURF-7 (an append's `sourceEventSeqs`) is the rule
table's `check_sources`: a variant of it holds on every plain append (`SurfaceState.check`,
`try_append`, `fold_surface`, `plain_append_sources`, a session's append and seed).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sessionspec.reference import (
    Session,
    SurfaceState,
    check_seed_entry,
    envelope_defects,
    envelope_findings,
    fold_surface,
    is_event_envelope,
    plain_append_sources,
    rule_table,
)
from sessionspec.reference.revision import rules_for
from sessionspec.reference.session import SEED_DATA_RULE_TYPES, SEED_ENTRY_OWN_TYPES
from sessionspec.spec import FORMAT
from sessionspec.spec.errors import SeedError, SessionSpecError, SurfaceError
from sessionspec.spec.revisions import known_revisions

MAX = FORMAT.max_safe_integer
VALUES = st.sampled_from([0, 1, 7, -1, -MAX, MAX, MAX + 1, 1.0, True, None, "t", "1", {}, []])
ENVELOPES = st.dictionaries(
    st.sampled_from(["type", "seq", "time", "data", "ignorable", "surfaceOp", "sourceEventSeqs", "x", "a/b~"]),
    VALUES, max_size=7,
)


@pytest.mark.req("SEED-3")
def test_envelope_findings_locate_each_member_at_fault() -> None:
    found = envelope_findings({"type": 1, "seq": -1, "time": 1.0, "a/b~": 0})
    assert [f.pointer for f in found] == ["/type", "/seq", "/time", "/data", "/a~1b~0"]
    assert {(f.code, f.requirement) for f in found} == {("SEED_ENVELOPE", "SEED-3")}
    assert envelope_findings({"type": "t", "seq": 0, "time": 0, "data": None}) == ()
    assert envelope_defects({"type": "t", "seq": 0, "time": -5, "data": None}) == {"/time"}


@pytest.mark.req("SEED-3")
def test_ignorable_and_negative_times_follow_the_revision() -> None:
    for revision in known_revisions():
        rules = rules_for(revision)
        event = {"type": "t", "seq": 0, "time": -5, "data": None, "ignorable": False}
        pointers = {f.pointer for f in envelope_findings(event, rules)}
        assert ("/time" in pointers) is not rules.negative_time
        assert ("/ignorable" in pointers) is True  # an unknown key, or a known one that is not true
        assert is_event_envelope({**event, "ignorable": True}, rules) is (
            rules.negative_time and "ignorable" in rules.envelope_keys)


@pytest.mark.req("SEED-3")
@given(ENVELOPES, st.sampled_from([None, *known_revisions()]))
def test_the_seed_check_raises_the_first_envelope_finding(event: dict[str, Any], revision: str | None) -> None:
    rules = rules_for(revision)
    event = {**event, "seq": 0} if "seq" in event and event["seq"].__class__ is int and event["seq"] >= 0 else event
    found = envelope_findings(event, rules)
    assert is_event_envelope(event, rules) == (not found)
    try:
        check_seed_entry(event, 0, rules)
    except SeedError as error:
        if error.code == "SEED_ENVELOPE":
            assert found and error.path == found[0].pointer and error.requirement == "SEED-3"
        else:
            assert not found
    else:
        assert not found


_WORDS = st.sampled_from(["user", "assistant", "model", "tool", "tool-result", "text", "c1", "", "x"])
_MESSAGE_KEYS = st.sampled_from(["id", "role", "source", "kind", "content", "provenance", "provider", "model",
                                 "message", "callId", "toolCallId", "type", "isError", "turn", "reason", "header",
                                 "config"])
PAYLOADS = st.recursive(
    st.one_of(_WORDS, st.sampled_from([0, 1, None, True])),
    lambda inner: st.one_of(st.lists(inner, max_size=2), st.dictionaries(_MESSAGE_KEYS, inner, max_size=6)),
    max_leaves=14,
)
_SOURCED = {"id": "m", "role": "assistant", "source": {"kind": "model", "provider": "p", "model": "m"}, "content": []}
_TEMPLATES = [  # payloads each revision's message check accepts (pinned flat ones, published identified ones)
    {"turn": 1, "content": [], "provenance": {"provider": "p", "model": "m"}},
    {"turn": 1, "message": _SOURCED},
    {"id": "u", "role": "user", "source": {"kind": "user"}, "content": []},
    {"turn": 1, "message": {"id": "t", "role": "user", "source": {"kind": "tool", "callId": "c"},
                            "content": [{"type": "tool-result", "toolCallId": "c", "content": []}]}},
]


def _varied(template: dict[str, Any], extra: dict[str, Any], drop: str | None) -> dict[str, Any]:
    return {k: v for k, v in {**template, **extra}.items() if k != drop}


MESSAGE_PAYLOADS = st.one_of(
    PAYLOADS,
    st.builds(_varied, st.sampled_from(_TEMPLATES), st.dictionaries(_MESSAGE_KEYS, PAYLOADS, max_size=2),
              st.sampled_from([None, "turn", "message", "content", "provenance", "id", "source"])),
)


@pytest.mark.req("SEED-11")
@settings(max_examples=400)
@given(MESSAGE_PAYLOADS, st.sampled_from(sorted(SEED_DATA_RULE_TYPES | {"user/message", "tool/result"})),
       st.sampled_from([None, *known_revisions()]))
def test_the_seed_entry_of_a_type_without_rules_of_its_own_is_the_message_check(
        data: Any, etype: str, revision: str | None) -> None:
    # (the validator's fast pass asks the entry of a message the load path's reader has just checked only for the
    # types with rules of its own: exact only while the entry of every other type is that check)
    rules = rules_for(revision)
    if etype in SEED_ENTRY_OWN_TYPES:
        return
    problem = rules.messages.seed_problem(etype, data)
    try:
        check_seed_entry({"type": etype, "seq": 3, "time": 0, "data": data}, 3, rules)
    except SeedError as error:
        assert problem is not None and (error.code, error.requirement) == (problem.code, problem.requirement)
    else:
        assert problem is None


def test_each_type_with_rules_of_its_own_has_an_entry_the_message_check_accepts_and_the_entry_refuses() -> None:
    refused = {
        "request/header-delta": {},
        "request/header": {"header": {"config": {}}},
        "turn/end": {"turn": 1, "reason": {"kind": "aborted", "why": "x"}},
    }
    assert set(refused) == SEED_ENTRY_OWN_TYPES
    for etype, data in refused.items():
        found = False
        for revision in known_revisions():
            rules = rules_for(revision)
            assert rules.messages.seed_problem(etype, data) is None
            with contextlib.suppress(SeedError):
                check_seed_entry({"type": etype, "seq": 0, "time": 0, "data": data}, 0, rules)
                continue
            found = True
        assert found, etype


def _refusing_source(cited: int) -> rule_table.RuleSet:
    """A tightened SURF-7: no append may cite seq ``cited``."""
    def build(entry: Any) -> Any:
        def check(state: Any, event: Any, etype: str, seq: int, shadowed: Any, *rest: Any, **options: Any) -> None:
            if cited in (event.get("sourceEventSeqs") or ()):
                raise SurfaceError(f"the variant refuses a source {cited}", "SURFACE_SOURCES_INVALID",
                                   requirement="SURF-7")
            entry(state, event, etype, seq, shadowed, *rest, **options)

        return check

    return rule_table.default().derive("check_sources", build)


def _log() -> list[dict[str, Any]]:
    return [
        {"type": "user/message", "seq": 0, "time": 0, "data": {"text": "hi"}, "surfaceOp": "append"},
        {"type": "tool/result", "seq": 1, "time": 0, "data": {"callId": "c", "content": "x"},
         "surfaceOp": "append", "sourceEventSeqs": [0]},
    ]


@pytest.fixture
def refusing() -> Iterator[None]:
    with rule_table.use(_refusing_source(0)):
        yield


@pytest.mark.req("SURF-7")
def test_a_tightened_sources_rule_holds_on_every_plain_append(refusing: None) -> None:
    log = _log()
    with pytest.raises(SurfaceError):
        fold_surface(log)
    state = SurfaceState(log)
    state.advance(log[0])
    with pytest.raises(SurfaceError):
        state.check(log[1])
    assert state.try_append("tool/result", "append", [0]) is False
    assert state.length == 1
    assert plain_append_sources([0], 1, "tool/result") is False


@pytest.mark.req("SURF-7")
def test_a_tightened_sources_rule_holds_for_a_session(refusing: None) -> None:
    with pytest.raises(SessionSpecError):
        Session("s", seed=_log())


@pytest.mark.req("SURF-7")
@given(st.one_of(st.lists(st.one_of(st.integers(-1, 6), VALUES), max_size=4), VALUES),
       st.sampled_from(sorted(FORMAT.surface_types)))
def test_plain_append_sources_is_the_verdict_of_check(sources: Any, etype: str) -> None:
    state = SurfaceState({})
    state.skip(5)
    event = {"type": etype, "seq": 5, "time": 0, "data": {}, "surfaceOp": "append", "sourceEventSeqs": sources}
    try:
        state.check(event)
    except SurfaceError as error:
        assert error.requirement == "SURF-7"
        accepted = False
    else:
        accepted = True
    assert plain_append_sources(sources, 5, etype) is accepted
    assert state.try_append(etype, "append", sources) is accepted
    assert state.length == 5 + accepted


def test_the_reference_never_asks_whether_an_entry_is_its_own() -> None:
    """`rule_table.is_own` is for accelerators outside the reference (the validator's typed chunk rows): no module of
    the reference calls it, so the reference's every path reads the entry itself; and it tells a variant apart."""
    import ast
    from pathlib import Path

    from sessionspec import reference

    root = Path(reference.__file__).parent
    callers = [path.name for path in sorted(root.glob("*.py")) if path.name != "rule_table.py"
               for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
               if isinstance(node, (ast.Name, ast.Attribute)) and getattr(node, "id", getattr(node, "attr", None)) == "is_own"]
    assert callers == []
    assert rule_table.is_own("row_shape")
    with rule_table.use(rule_table.default().derive("row_shape", lambda own: lambda value, row: own(value, row))):
        assert not rule_table.is_own("row_shape")
    assert rule_table.is_own("row_shape")
