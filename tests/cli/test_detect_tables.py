"""Revision detection validates only the payloads that can be evidence.

`sessionspec.validator.detect` (through `sessionspec.validator.pregen.evidence_payloads`) skips a type registered in several revisions when its payload schemas
reach equal schema documents in each (most of a log: chunks, steps, tool calls); these tests check that
such a type really accepts the same payloads everywhere, and that a type whose schemas differ is kept.
"""

from __future__ import annotations

from typing import Any, ClassVar

from cli_strategies import mutate
from hypothesis import given
from hypothesis import strategies as st
from sessionspec.spec import load_spec
from sessionspec.spec.revisions import known_revisions
from sessionspec.validator import detect, pregen


def _specs() -> dict[str, Any]:
    return {rid: load_spec(revision=rid) for rid in known_revisions()}


SPECS = _specs()
REGISTERED, PAYLOADS = detect._tables()
SHARED = sorted(t for t, revs in REGISTERED.items() if len(revs) > 1)
SKIPPED = [t for t in SHARED if t not in PAYLOADS]
EXAMPLES = [(t, case["event"]["data"]) for t in SKIPPED for rid in REGISTERED[t]
            for group in SPECS[rid].events[t].get("examples", {}).values() for case in group
            if isinstance(case.get("event"), dict) and "data" in case["event"]]


def test_the_skipped_types_are_the_common_ones_and_the_differing_ones_are_kept():
    assert "assistant/chunk" in SKIPPED and "step/start" in SKIPPED
    assert "user/message" in PAYLOADS and "turn/start" in PAYLOADS  # their payloads differ between revisions
    assert EXAMPLES


@given(st.sampled_from(EXAMPLES), st.data())
def test_a_skipped_type_accepts_the_same_payloads_in_every_revision(example, data):
    etype, payload = example
    payload = mutate(data.draw, payload)
    verdicts = {SPECS[rid].validator(SPECS[rid].events[etype]["payloadSchema"]).is_valid(payload)
                for rid in REGISTERED[etype]}
    assert len(verdicts) == 1, etype


def test_a_reference_the_walk_cannot_follow_keeps_the_check():
    spec = SPECS[known_revisions()[0]]

    class Nested:
        schemas: ClassVar[dict[str, Any]] = {**spec.schemas, "urn:x": {"$id": "urn:x", "properties": {"a": {"$id": "urn:y"}}}}

    assert pregen._closure(Nested, "urn:x") is None
    assert pregen._closure(Nested, "urn:missing") is None
    assert not pregen._same_payloads([(Nested, "urn:x"), (Nested, "urn:x")])


# -- the payload checks generated ahead of time (`sessionspec.validator.pregen`) -------------------------

GENERATED = pregen.generated_payloads(SPECS)
EVIDENCE = pregen.evidence_payloads(SPECS)
EVIDENCE_EXAMPLES = [(t, case["event"]["data"]) for t in EVIDENCE for rid in EVIDENCE[t]
                     for group in SPECS[rid].events[t].get("examples", {}).values() for case in group
                     if isinstance(case.get("event"), dict) and "data" in case["event"]]


def test_detection_uses_the_generated_checks_for_the_installed_revisions():
    """Each revision's `SchemaSet.payload` hands detection the predicate generated for it (no compiling)."""
    wanted: dict[str, set[str]] = {}
    for ids in EVIDENCE.values():
        for rid, schema_id in ids.items():
            wanted.setdefault(rid, set()).add(schema_id)
    assert {rid: set(fns) for rid, fns in GENERATED.items()} == wanted
    assert set(PAYLOADS) == set(EVIDENCE)
    for event_type, checks in PAYLOADS.items():
        assert set(checks) == set(EVIDENCE[event_type])
        assert all(isinstance(check, pregen.Pregenerated) for check in checks.values()), event_type


def test_other_revisions_never_get_the_generated_checks():
    rid = known_revisions()[0]
    assert pregen.generated_payloads({rid: SPECS[rid]}) == {}


def test_a_payload_schema_without_a_generated_check_is_compiled_by_the_same_interface():
    from sessionspec.validator.fastschema import CompiledSchema
    from sessionspec.validator.lint import schema_set

    rid = known_revisions()[0]
    schemas = schema_set(revision=rid)
    schema_id = SPECS[rid].events["assistant/chunk"]["payloadSchema"]  # the same everywhere: never evidence
    compiled = schemas.payload(schema_id)
    assert type(compiled) is CompiledSchema and schemas.payload(schema_id) is compiled
    for group in SPECS[rid].events["assistant/chunk"]["examples"].values():
        for case in group:
            data = case["event"].get("data")
            assert compiled.is_valid(data) == compiled.oracle.is_valid(data)


@given(st.sampled_from(EVIDENCE_EXAMPLES), st.data())
def test_generated_payload_checks_agree_with_python_jsonschema(example, data):
    etype, payload = example
    if data.draw(st.booleans()):
        mutated = mutate(data.draw, {"data": payload})
        payload = mutated.get("data") if isinstance(mutated, dict) else mutated
    for rid, check in PAYLOADS[etype].items():
        oracle = SPECS[rid].validator(SPECS[rid].events[etype]["payloadSchema"])
        assert check.is_valid(payload) == oracle.is_valid(payload), (etype, rid)
