"""Revision detection validates only the payloads that can be evidence.

`sessionspec.validator.detect` skips a type registered in several revisions when its payload schemas
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
from sessionspec.validator import detect


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

    assert detect._closure(Nested, "urn:x") is None
    assert detect._closure(Nested, "urn:missing") is None
    assert not detect._same_payloads([(Nested, "urn:x"), (Nested, "urn:x")])
