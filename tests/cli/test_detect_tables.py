"""Revision detection validates only the payloads that can be evidence.

`sessionspec.validator.detect` (through `sessionspec.validator.generated.evidence_payloads`) skips a type registered in several revisions when its payload schemas
reach equal schema documents in each (most of a log: chunks, steps, tool calls); these tests check that
such a type really accepts the same payloads everywhere, and that a type whose schemas differ is kept.
"""

from __future__ import annotations

from typing import Any, ClassVar

from cli_strategies import mutate
from hypothesis import given, settings
from hypothesis import strategies as st
from sessionspec.spec import load_spec
from sessionspec.spec.revisions import known_revisions
from sessionspec.validator import detect, generated


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

    assert generated._closure(Nested, "urn:x") is None
    assert generated._closure(Nested, "urn:missing") is None
    assert not generated._same_payloads([(Nested, "urn:x"), (Nested, "urn:x")])


# -- the payload checks generated ahead of time (`sessionspec.validator.pregen`) -------------------------

GENERATED = generated.generated_payloads(SPECS)
EVIDENCE = generated.evidence_payloads(SPECS)
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
        assert all(isinstance(check, generated.Pregenerated) for check in checks.values()), event_type


def test_other_revisions_never_get_the_generated_checks():
    rid = known_revisions()[0]
    assert generated.generated_payloads({rid: SPECS[rid]}) == {}


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


def _evidence_payloads() -> list[tuple[str, Any]]:
    """(type, payload) of every evidence type: its registry examples at every revision, and the events of logs of
    both formats (generated, and written by the npm package)."""
    import sys
    from pathlib import Path

    import orjson
    from sessionspec.reference.chunk_rows import decode_storage_record

    root = Path(__file__).resolve().parents[2]
    sys.path.insert(0, str(root / "bench"))
    from gen_logs import artifact_bytes, generate_events
    from run import to_package_revision

    found = [(t, case["event"]["data"]) for t in PAYLOADS for rid in REGISTERED[t]
             for group in SPECS[rid].events[t].get("examples", {}).values() for case in group
             if isinstance(case.get("event"), dict) and "data" in case["event"]]
    events = generate_events(300, seed=5)
    logs = [artifact_bytes(events, packed=False, session_id="s"), artifact_bytes(to_package_revision(events), packed=False,
                                                                                    session_id="s"),
            *(path.read_bytes() for path in sorted((root / "tests" / "real_logs" / "logs").glob("*.jsonl")))]
    for log in logs:
        for raw in log.splitlines()[1:]:
            for event in decode_storage_record(orjson.loads(raw)):
                if event.get("type") in PAYLOADS and "data" in event:
                    found.append((event["type"], event["data"]))
    return found


LOGGED = _evidence_payloads()


def _oracle_answer(event_type: str, revision: str, data: Any) -> bool:
    return any(error.validator in ("additionalProperties", "unevaluatedProperties")
               for error in detect._oracle(event_type, revision).iter_errors(data))


def test_the_schema_walk_decides_the_payloads_of_real_logs_as_the_oracle_does():
    """`_undefined_in` (no oracle built) answers for the payloads logs hold, and answers what the oracle answers."""
    decided = 0
    for event_type, data in LOGGED:
        for rid in PAYLOADS[event_type]:
            spec = SPECS[rid]
            quick = detect._undefined_in(spec.schemas, spec.events[event_type]["payloadSchema"], data)
            if quick is not None:
                decided += 1
                assert quick == _oracle_answer(event_type, rid, data), (event_type, rid, data)
    assert decided >= 0.9 * sum(len(PAYLOADS[t]) for t, _ in LOGGED)


@given(st.sampled_from(LOGGED), st.data())
def test_the_schema_walk_never_contradicts_the_oracle(example, data):
    event_type, payload = example
    mutated = mutate(data.draw, {"data": payload}).get("data", payload)
    for rid in PAYLOADS[event_type]:
        spec = SPECS[rid]
        quick = detect._undefined_in(spec.schemas, spec.events[event_type]["payloadSchema"], mutated)
        assert quick is None or quick == _oracle_answer(event_type, rid, mutated), (event_type, rid, mutated)


def test_the_evidence_types_read_from_the_generated_module_are_the_ones_computed_now():
    """`generated.generated_evidence_payloads` (the generated ``PAYLOADS``' types, no schema closure walked at start-up)
    is `evidence_payloads` of the same specs, in the same order; the (memoised) fingerprint is its content digest."""
    specs = {rid: SPECS[rid] for rid in known_revisions()}
    assert list(generated.generated_evidence_payloads(specs).items()) == list(generated.evidence_payloads(specs).items())
    assert generated.fingerprint(specs[known_revisions()[0]]) == generated.content_digest(
        [specs[known_revisions()[0]].event_schema, dict(specs[known_revisions()[0]].schemas)])


# -- the payloads a revision's schema rules out whole (`detect._excluded`) ---------------------------------------

EXCLUDED = detect._excluded()


def test_the_payload_schemas_rule_out_the_other_revision_where_a_required_member_is_undefined_there():
    """The derived fact decides the usual evidence (identified messages, a turn/start without its trigger) both ways,
    and nothing for a type whose payloads one member's value tells apart (turn/end: a reason kind)."""
    pinned, published = known_revisions()
    for event_type in ("user/message", "turn/start", "assistant/message"):
        assert EXCLUDED[event_type] == {pinned: {published}, published: {pinned}}, event_type
    assert EXCLUDED["turn/end"] == {pinned: frozenset(), published: frozenset()}
    assert set(EXCLUDED) == set(PAYLOADS)


def _no_payload_fits_both(event_type: str, payload: Any) -> None:
    for rid, ruled_out in EXCLUDED[event_type].items():
        if PAYLOADS[event_type][rid].is_valid(payload):
            for other in ruled_out:
                assert not PAYLOADS[event_type][other].is_valid(payload), (event_type, rid, other, payload)
                assert not SPECS[other].validator(SPECS[other].events[event_type]["payloadSchema"]).is_valid(payload)


def test_no_logged_payload_fits_a_revision_its_own_rules_out():
    assert any(PAYLOADS[t][rid].is_valid(d) and EXCLUDED[t][rid] for t, d in LOGGED for rid in PAYLOADS[t])
    for event_type, payload in LOGGED:
        _no_payload_fits_both(event_type, payload)


@given(st.sampled_from(LOGGED), st.data())
def test_no_mutated_payload_fits_a_revision_its_own_rules_out(example, data):
    event_type, payload = example
    mutated = mutate(data.draw, {"data": payload})
    _no_payload_fits_both(event_type, mutated.get("data", payload) if isinstance(mutated, dict) else payload)


_NAMES = st.sampled_from(["a", "b", "c"])


def _object_schemas(refs: list[str]) -> st.SearchStrategy[Any]:
    """Small schemas of what `_object_shape` reads (type, required, properties, additionalProperties,
    patternProperties, $ref to ``refs``, allOf) and what it must not trust (anyOf, if/then), two keywords or so each."""
    keywords = {
        "type": st.sampled_from(["object", "string", ["object"], ["object", "null"]]),
        "required": st.lists(_NAMES, min_size=1, max_size=2),
        "properties": st.dictionaries(_NAMES, st.sampled_from([True, {"type": "integer"}]), max_size=2),
        "additionalProperties": st.sampled_from([False, False, True, {"type": "integer"}]),
        "patternProperties": st.just({"^a": True}),
        **({"$ref": st.sampled_from(refs)} if refs else {})}
    leaf = st.lists(st.sampled_from(sorted(keywords)), max_size=3, unique=True).flatmap(
        lambda names: st.fixed_dictionaries({name: keywords[name] for name in names}))
    return st.recursive(leaf, lambda inner: st.one_of(
        st.builds(lambda base, branches: {**base, "allOf": branches}, leaf, st.lists(inner, min_size=1, max_size=2)),
        st.builds(lambda base, branches: {**base, "anyOf": branches}, leaf, st.lists(inner, min_size=1, max_size=2)),
        st.builds(lambda base, test, then: {**base, "if": test, "then": then}, leaf, inner, inner)), max_leaves=3)


#: Every object of those names with an integer or a string member, and two values that are not objects.
_VALUES = [*({name: value for name, value in zip("abc", values) if value is not None}
             for values in __import__("itertools").product([None, 0, "x"], repeat=3)), "x", None]


@settings(max_examples=300)
@given(st.data())
def test_an_exclusion_read_off_two_schemas_is_never_contradicted_by_a_value_both_accept(data):
    """`_exclusive` of two `_object_shape`s (of documents that ``$ref`` each other) against python-jsonschema: a value
    valid at both never meets an exclusion (every pair of four documents, every value of `_VALUES`)."""
    from jsonschema import Draft202012Validator
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT202012

    documents = {"urn:s:c": {"$id": "urn:s:c", **data.draw(_object_schemas([]))},
                 "urn:s:d": {"$id": "urn:s:d", **data.draw(_object_schemas(["urn:s:c"]))}}
    for uri in ("urn:s:a", "urn:s:b"):
        documents[uri] = {"$id": uri, **data.draw(_object_schemas(["urn:s:c", "urn:s:d"]))}
    registry = Registry().with_resources(
        (uri, Resource.from_contents(doc, default_specification=DRAFT202012)) for uri, doc in documents.items())
    accepted = {uri: {i for i, value in enumerate(_VALUES)
                      if Draft202012Validator(doc, registry=registry).is_valid(value)}
                for uri, doc in documents.items()}
    shapes = {uri: detect._object_shape(documents, uri) for uri in documents}
    for one in documents:
        for other in documents:
            if one != other and detect._exclusive(shapes[one], shapes[other]):
                assert not accepted[one] & accepted[other], (documents, one, other)
