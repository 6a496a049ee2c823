"""Every fast evaluation of the schemas gives python-jsonschema's verdict, on instances drawn from the schemas.

The validator's accelerators are one interface, `lint.schema_set(registry, revision)` (a `SchemaSet`): the
compiled predicates of the event, header and row schemas (`fastschema`; for the core spec built ahead of
time into `core_fast.py`), the msgspec types translated from the same schemas (`mstypes`) and revision
detection's payload checks. None of them restates a schema: each is derived from the schema documents, and
these tests hold each to the oracle at every installed revision on values drawn from the registry's own
schemas (`schema_instances`), valid ones and their random edits.
"""

from __future__ import annotations

import collections
import functools
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, Phase, find, given, settings
from hypothesis import strategies as st
from schema_instances import Instances, schema_mutants
from sessionspec.reference import json_text
from sessionspec.spec.loader import load_spec
from sessionspec.spec.revisions import known_revisions
from sessionspec.validator import generated
from sessionspec.validator.lint import SchemaSet, schema_set

REVISIONS = tuple(known_revisions())
_SLOW = settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large],
                 deadline=None)


@functools.cache
def _instances(revision: str, edges: bool = True) -> Instances:
    return Instances(load_spec(revision=revision), edges=edges)


def _schemas(revision: str) -> SchemaSet:
    return schema_set(revision=revision)


def _decoded(schemas: SchemaSet, value: Any) -> bool:
    """Whether the msgspec types take `value`, written canonically, and write it back unchanged."""
    fast = schemas.fast_types
    try:
        raw = json_text.dumps_bytes(value)
        return bool(fast.encoder.encode(fast.decoder.decode(raw)) == raw)
    except (msgspec.MsgspecError, ValueError, RecursionError):
        return False


def _events() -> st.SearchStrategy[tuple[str, Any]]:
    return st.sampled_from(REVISIONS).flatmap(lambda rid: schema_mutants(_instances(rid).events()).map(lambda e: (rid, e)))


@pytest.mark.parametrize("revision", REVISIONS)
def test_the_drawn_instances_reach_a_valid_event_of_every_type(revision: str) -> None:
    """The strategies are not vacuous: each registered type has valid events among them."""
    instances = _instances(revision, edges=False)
    oracle = instances.spec.event_validator()
    for event_type in sorted(instances.spec.events):
        found = find(instances.event(event_type), oracle.is_valid,
                     settings=settings(max_examples=200, database=None, phases=[Phase.generate],
                                       suppress_health_check=list(HealthCheck)))
        assert found["type"] == event_type


def test_the_core_schemas_are_the_generated_module() -> None:
    """What the tests below hold to the oracle at the pinned revision is what validate runs: core_fast.py."""
    assert isinstance(_schemas(REVISIONS[0]).event, generated.Pregenerated)


@_SLOW
@given(_events())
def test_event_predicates_agree_with_the_oracle(drawn: tuple[str, Any]) -> None:
    revision, event = drawn
    compiled = _schemas(revision).event
    verdict = compiled.oracle.is_valid(event)
    assert compiled.is_valid(event) == verdict, (revision, event)
    tag = event.get("type") if isinstance(event, dict) else None
    specialised = compiled.by_tag.get(tag) if isinstance(tag, str) else None
    if specialised is not None:
        assert specialised(event) == verdict, (revision, event)


@_SLOW
@given(_events())
def test_msgspec_types_never_accept_what_the_oracle_rejects(drawn: tuple[str, Any]) -> None:
    revision, event = drawn
    schemas = _schemas(revision)
    if _decoded(schemas, event):
        assert schemas.event.oracle.is_valid(event), (revision, event)


@_SLOW
@given(st.sampled_from(REVISIONS).flatmap(
    lambda rid: schema_mutants(_instances(rid).of({"$ref": generated.ROW_SCHEMA_ID})).map(lambda r: (rid, r))))
def test_row_predicate_and_types_agree_with_the_oracle(drawn: tuple[str, Any]) -> None:
    revision, row = drawn
    schemas = _schemas(revision)
    verdict = schemas.row.oracle.is_valid(row)
    assert schemas.row.is_valid(row) == verdict, (revision, row)
    tag = row.get("type") if isinstance(row, dict) else None
    if isinstance(tag, str) and tag in schemas.fast_types.rows and _decoded(schemas, row):
        assert verdict, (revision, row)


@_SLOW
@given(st.sampled_from(REVISIONS).flatmap(
    lambda rid: schema_mutants(_instances(rid).of({"$ref": generated.HEADER_SCHEMA_ID})).map(lambda h: (rid, h))))
def test_header_predicate_agrees_with_the_oracle(drawn: tuple[str, Any]) -> None:
    revision, header = drawn
    compiled = _schemas(revision).header
    assert compiled.is_valid(header) == compiled.oracle.is_valid(header), (revision, header)


@functools.cache
def _payload_checks() -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """Detection's payload checks, as it takes them: each revision's `SchemaSet.payload`."""
    specs = {rid: load_spec(revision=rid) for rid in REVISIONS}
    checks = {event_type: {rid: _schemas(rid).payload(schema_id) for rid, schema_id in ids.items()}
              for event_type, ids in generated.evidence_payloads(specs).items()}
    assert all(isinstance(c, generated.Pregenerated) for by_rev in checks.values() for c in by_rev.values()), \
        "core_fast.py was generated for other revisions"
    return specs, checks


def _payloads() -> st.SearchStrategy[tuple[str, Any]]:
    specs, checks = _payload_checks()
    drawn = [(t, rid) for t in sorted(checks) for rid in sorted(checks[t])]
    return st.sampled_from(drawn).flatmap(lambda pair: schema_mutants(
        _instances(pair[1]).of({"$ref": specs[pair[1]].events[pair[0]]["payloadSchema"]})).map(lambda d: (pair[0], d)))


@_SLOW
@given(_payloads())
def test_detection_payload_checks_agree_with_the_oracle_at_every_revision(drawn: tuple[str, Any]) -> None:
    """A payload drawn at one revision is judged at each revision that registers its type, as detection does."""
    event_type, data = drawn
    specs, checks = _payload_checks()
    for rid, check in checks[event_type].items():
        oracle = specs[rid].validator(specs[rid].events[event_type]["payloadSchema"])
        assert check.is_valid(data) == oracle.is_valid(data), (event_type, rid, data)


def _broken_alone(revision: str) -> list[tuple[str, Any, str]]:
    """Every document that breaks one schema bound alone: each valid base (registry examples, accepted vectors)
    with one value changed where the oracle evaluated the bound (`conformance.schema_bounds`), as (root, document,
    bound). Each distinct document once (under the first bound that made it): about a third of them are made
    again by another bound or base, and judging a document twice adds no coverage, only oracle time."""
    from sessionspec.conformance import schema_bounds as sb

    spec = load_spec(revision=revision)
    oracle = sb.Oracle(spec.schemas, spec.event_schema)
    out, seen = [], collections.Counter[sb.Bound]()
    made: set[tuple[str, str]] = set()
    for root, document, _source in sb.valid_bases(spec, revision):
        if root not in (sb.EVENT, sb.JSONL_HEADER_ID, sb.RECORD_ID) or not oracle.valid(root, document):
            continue
        for bound, where in oracle.evaluated(root, document).items():
            seen[bound] += 1
            if seen[bound] > 3:  # three documents per bound: its places in different dispatches
                continue
            node, keyword, value = oracle.node(bound)
            for path in where[:2]:
                for broken in sb.violations(document, path, node, keyword, value):
                    key = (root, json_text.dumps(broken))  # equal text: the same document to every evaluation
                    if key not in made:
                        made.add(key)
                        out.append((root, broken, sb.label(bound)))
    return out


@pytest.mark.parametrize("revision", REVISIONS)
def test_every_bound_broken_alone_gets_the_oracles_verdict(revision: str) -> None:
    """Deterministic: each bound a valid document reaches, broken alone, is judged by every fast evaluation as the
    oracle judges it (a predicate that drops one `minLength` fails here, whatever Hypothesis draws)."""
    from sessionspec.conformance import schema_bounds as sb

    schemas = _schemas(revision)
    documents = _broken_alone(revision)
    assert len({bound for _, _, bound in documents}) > 100
    for root, document, bound in documents:
        if root == sb.JSONL_HEADER_ID:
            compiled = schemas.header
        elif root == sb.RECORD_ID and isinstance(document, dict) and isinstance(document.get("type"), str) \
                and document["type"] in schemas.fast_types.rows:
            compiled = schemas.row
        elif root == sb.RECORD_ID:
            continue  # a stored record that is not a row is an event under another root: the EVENT bases cover it
        else:
            compiled = schemas.event
        verdict = compiled.oracle.is_valid(document)
        assert compiled.is_valid(document) == verdict, (bound, document)
        if root != sb.JSONL_HEADER_ID and _decoded(schemas, document):
            assert verdict, (bound, document)


@functools.cache
def _bases(revision: str) -> tuple[tuple[str, Any, str], ...]:
    """The valid bases, the documents labelled invalid and the documents built from the schemas at `revision`."""
    from sessionspec.conformance import schema_bounds as sb

    spec = load_spec(revision=revision)
    oracle = sb.Oracle(spec.schemas, spec.event_schema)
    return (*sb.valid_bases(spec, revision), *sb.labelled_invalid(spec, revision),
            *sb.derived_bases(oracle, spec, set(oracle.bounds)))


@functools.cache
def _broken_per_type(revision: str) -> tuple[tuple[str, Any, str], ...]:
    """For each event type and each bound one of its valid events reaches (the bases above), one such event with
    that bound broken (`schema_bounds.violations`, at the first place the oracle evaluated it). Per type, not per
    bound: the compiled and pregenerated predicates inline a shared schema (a provenance, a content block) into
    each type's predicate, so a copy wrong in one type is only seen through that type."""
    from sessionspec.conformance import schema_bounds as sb

    spec = load_spec(revision=revision)
    oracle = sb.Oracle(spec.schemas, spec.event_schema)
    out, seen, made = [], set(), set()
    for root, document, _source in _bases(revision):
        key = json_text.dumps(document)
        if root != sb.EVENT or not isinstance(document, dict) or key in made or not oracle.valid(root, document):
            continue
        made.add(key)
        for bound, where in oracle.evaluated(root, document).items():
            if (document.get("type"), bound) in seen:
                continue
            node, keyword, value = oracle.node(bound)
            for broken in sb.violations(document, where[0], node, keyword, value):
                if json_text.dumps(broken) not in made:
                    made.add(json_text.dumps(broken))
                    seen.add((document.get("type"), bound))
                    out.append((sb.EVENT, broken, f"{document.get('type')} with {sb.label(bound)} broken"))
                    break
    return tuple(out)


@functools.cache
def _built_and_witnessed(made_at: str) -> tuple[tuple[str, Any, str], ...]:
    """The documents `conformance.schema_bounds` holds the schema bounds of `made_at` to, each distinct one once,
    as (root, document, source): its valid bases (registry valid examples, accepted vectors'
    documents), the documents labelled invalid (registry invalid examples, closed openness examples, rejected
    vectors' documents: the witnesses of most bounds), the valid documents `derived_bases` builds from the schemas
    themselves, steered through every subschema holding a bound (every `oneOf`/`anyOf` branch and `then` reaching
    one; full and required-only), and every generated witness of `conformance/schema-witnesses.json` (invalid at
    its revisions, valid once its bound is deleted; listed under the first of them). Every one is judged at every
    revision below: what one revision's schemas build is an edge case of the other's."""
    from sessionspec.conformance import schema_bounds as sb

    pooled = list(_bases(made_at))
    witnesses = json_text.loads(sb.WITNESS_FILE.read_text(encoding="utf-8"))["witnesses"]
    pooled.extend((w["root"], w["document"], f"witness of {w['bound']} at {','.join(w['revisions'])}")
                  for w in witnesses if w["revisions"][0] == made_at)
    out, seen = [], set()
    for root, document, source in pooled:
        key = (root, json_text.dumps(document))
        if key not in seen:
            seen.add(key)
            out.append((root, document, source))
    return tuple(out)


@functools.cache
def _oracle_verdicts(made_at: str, revision: str) -> tuple[tuple[str, Any, str, bool], ...]:
    """Each document made at `made_at` with the evaluation that judges it at `revision` (`event`: an event, or a stored
    record that is not a chunk row; `header`: a JSONL header line; `row`: a chunk row) and python-jsonschema's
    verdict there; with `made_at`'s events with one bound broken per type, at `made_at` only. (Intent and session-header documents
    have no fast evaluation of their own: left out.)"""
    from sessionspec.conformance import schema_bounds as sb

    schemas = _schemas(revision)
    out = []
    broken = _broken_per_type(made_at) if revision == made_at else ()
    for root, document, source in (*_built_and_witnessed(made_at), *broken):
        tag = document.get("type") if isinstance(document, dict) else None
        if root == sb.EVENT:
            which = "event"
        elif root == sb.JSONL_HEADER_ID:
            which = "header"
        elif root == sb.RECORD_ID:
            which = "row" if isinstance(tag, str) and tag in schemas.fast_types.rows else "event"
        else:
            continue
        out.append((which, document, source, bool(getattr(schemas, which).oracle.is_valid(document))))
    return tuple(out)


def _disagreements(made_at: str) -> tuple[list[tuple[str, str, bool, bool]], collections.Counter[str]]:
    """Every document made at `made_at` a fast evaluation of any revision judges otherwise than python-jsonschema, as
    (evaluation, source, fast verdict, oracle verdict): the compiled or pregenerated predicates (`is_valid`; the
    root `predicate`, exact for every instance, whose per-type code is a copy of its own; the type's own `by_tag`
    predicate where there is one), and the msgspec decode, which may only accept what the
    schema accepts. With counts of what was judged, to show the comparison is not vacuous."""
    found: list[tuple[str, str, bool, bool]] = []
    counts = collections.Counter[str]()
    for revision in REVISIONS:
        schemas = _schemas(revision)
        for which, document, source, verdict in _oracle_verdicts(made_at, revision):
            compiled = getattr(schemas, which)
            counts[f"{which} {'valid' if verdict else 'invalid'}"] += 1
            fast = compiled.is_valid(document)
            if fast != verdict:
                found.append((f"{which}.is_valid", source, fast, verdict))
            if compiled.predicate(document) != verdict:  # the root predicate, exact for every instance (fastlog's generic)
                found.append((f"{which}.predicate", source, not verdict, verdict))
            tag = document.get(compiled.tag_key or "type") if isinstance(document, dict) else None
            specialised = compiled.by_tag.get(tag) if isinstance(tag, str) else None
            if specialised is not None:
                counts["by_tag"] += 1
                if specialised(document) != verdict:
                    found.append((f"{which}.by_tag[{tag}]", source, not verdict, verdict))
            if which != "header" and isinstance(tag, str) and tag in (schemas.fast_types.events | schemas.fast_types.rows):
                counts["struct"] += 1
                if _decoded(schemas, document):
                    counts["decoded"] += 1
                    if not verdict:
                        found.append(("msgspec", source, True, verdict))
    return found, counts


@pytest.mark.parametrize("made_at", REVISIONS)
def test_built_documents_and_witnesses_get_the_oracles_verdict_at_every_revision(made_at: str) -> None:
    """Deterministic and complete (no sampling): every document built from the schemas of `made_at`, each of its
    events with one bound broken per type, and every generated witness of `made_at`, judged at every revision by
    every fast evaluation as python-jsonschema judges it."""
    found, counts = _disagreements(made_at)
    assert found == []
    assert counts["event valid"] > 500 and counts["event invalid"] > 2500, counts  # the bases, the broken, the witnesses
    assert counts["header valid"] and counts["header invalid"] and counts["row valid"] and counts["row invalid"], counts
    assert counts["by_tag"] > 3000 and counts["decoded"] > 250, counts


def test_a_wrong_predicate_or_struct_is_found_by_the_built_documents(monkeypatch: pytest.MonkeyPatch) -> None:
    """The comparison above can fail: one type's predicate accepting everything, or missing one bound (it accepts
    that bound's witness, nothing else new), or a decoder accepting every JSON text (a struct looser than its
    schema), is named by it."""
    from sessionspec.conformance import schema_bounds as sb

    revision = REVISIONS[0]
    schemas = _schemas(revision)
    monkeypatch.setitem(schemas.event.by_tag, "user/message", lambda _value: True)
    found, _ = _disagreements(revision)
    assert found and {where for where, *_ in found} == {"event.is_valid", "event.by_tag[user/message]"}, found
    monkeypatch.undo()
    assert _disagreements(revision)[0] == []
    witness = next(w for w in json_text.loads(sb.WITNESS_FILE.read_text(encoding="utf-8"))["witnesses"]
                   if w["root"] == sb.EVENT and w["revisions"][0] == revision and w["bound"].startswith("payload/")
                   and isinstance(w["document"], dict) and w["document"].get("type") in schemas.event.by_tag)
    tag, predicate = witness["document"]["type"], schemas.event.by_tag[witness["document"]["type"]]
    monkeypatch.setitem(schemas.event.by_tag, tag, lambda value: value == witness["document"] or predicate(value))
    found, _ = _disagreements(revision)  # the witness, and any equal document made another way (a broken base)
    assert f"witness of {witness['bound']} at {','.join(witness['revisions'])}" in {source for _, source, *_ in found}
    assert {(where, fast, verdict) for where, _, fast, verdict in found} == {("event.is_valid", True, False),
                                                                             (f"event.by_tag[{tag}]", True, False)}
    monkeypatch.undo()
    monkeypatch.setattr(schemas.fast_types, "decoder", msgspec.json.Decoder(msgspec.Raw))
    found, _ = _disagreements(revision)
    assert found and {where for where, *_ in found} == {"msgspec"}, found
