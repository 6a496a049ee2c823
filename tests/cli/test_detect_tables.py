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

GENERATED = pregen.generated_payload_checks(SPECS)
EVIDENCE = pregen.evidence_payloads(SPECS)
EVIDENCE_EXAMPLES = [(t, case["event"]["data"]) for t in EVIDENCE for rid in EVIDENCE[t]
                     for group in SPECS[rid].events[t].get("examples", {}).values() for case in group
                     if isinstance(case.get("event"), dict) and "data" in case["event"]]


def test_detection_uses_the_generated_checks_for_the_installed_revisions():
    assert GENERATED is not None
    assert {t: set(checks) for t, checks in GENERATED.items()} == {t: set(ids) for t, ids in EVIDENCE.items()}
    assert PAYLOADS is not None and set(PAYLOADS) == set(EVIDENCE)


def test_other_revisions_never_get_the_generated_checks():
    rid = known_revisions()[0]
    assert pregen.generated_payload_checks({rid: SPECS[rid]}) is None


@given(st.sampled_from(EVIDENCE_EXAMPLES), st.data())
def test_generated_payload_checks_agree_with_python_jsonschema(example, data):
    etype, payload = example
    if data.draw(st.booleans()):
        mutated = mutate(data.draw, {"data": payload})
        payload = mutated.get("data") if isinstance(mutated, dict) else mutated
    assert GENERATED is not None
    for rid, check in GENERATED[etype].items():
        oracle = SPECS[rid].validator(SPECS[rid].events[etype]["payloadSchema"])
        assert check.is_valid(payload) == oracle.is_valid(payload), (etype, rid)
