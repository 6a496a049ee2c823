"""The compiled fast path and python-jsonschema (the oracle) must give identical verdicts."""

from __future__ import annotations

import copy
from typing import Any

import jsonschema
import referencing
from cli_helpers import turn_events
from cli_strategies import EDGE_NUMBERS, EXAMPLES, JSON, SCHEMAS, mutated_events, vector_events
from cli_strategies import set_at as _set
from cli_strategies import value_at as _get
from hypothesis import given
from hypothesis import strategies as st
from referencing.jsonschema import DRAFT202012
from sessionspec.validator.fastschema import CompiledSchema

_JSON = JSON


def _agree(value: Any) -> None:
    """The specialised predicate, the generic one and the oracle give one verdict."""
    oracle = SCHEMAS.event.oracle.is_valid(value)
    assert SCHEMAS.event.is_valid(value) == oracle, value
    assert SCHEMAS.event.predicate(value) == oracle, value


def test_registry_examples_agree():
    assert len(EXAMPLES) > 50
    for event in EXAMPLES + turn_events():
        _agree(event)


def test_conformance_vector_events_agree():
    events = vector_events()
    assert len(events) > 100
    for event in events:
        _agree(event)


def test_every_type_has_a_specialised_predicate():
    assert set(SCHEMAS.event.by_tag) == set(SCHEMAS.spec.events)


@given(st.sampled_from(EXAMPLES + turn_events()), st.data())
def test_integer_and_float_edges_agree(event, data):
    """1.0 where the schema says integer, big ints, -0.0, bools: the same verdict as the oracle."""
    event = copy.deepcopy(event)
    numeric = [p for p in _paths(event) if p and type(_get(event, p)) in (int, float)]
    for path in data.draw(st.lists(st.sampled_from(numeric), max_size=3)) if numeric else []:
        _set(event, path, data.draw(EDGE_NUMBERS))
    _agree(event)


def _paths(value: Any, prefix: tuple = ()) -> list[tuple]:
    from cli_strategies import paths

    return paths(value, prefix)


@given(mutated_events())
def test_mutations_agree(event):
    _agree(event)


@given(_JSON)
def test_arbitrary_values_agree(value):
    _agree(value)


def test_error_locations_come_from_the_oracle():
    event = turn_events()[1]
    event["data"]["content"][0]["text"] = 5
    assert not SCHEMAS.event.is_valid(event)
    errors = SCHEMAS.event.errors(event)
    expected = {tuple(e.absolute_path) for e in SCHEMAS.event.oracle.iter_errors(event)}
    assert {tuple(e.absolute_path) for e in errors} <= expected | {("data", "content", 0, "text")}
    assert any(tuple(e.absolute_path) == ("data", "content", 0, "text") for e in errors)


def _compile(*schemas: dict[str, Any]) -> tuple[CompiledSchema, Any]:
    registry = referencing.Registry().with_resources([(s["$id"], DRAFT202012.create_resource(s)) for s in schemas])
    oracle = jsonschema.Draft202012Validator(schemas[-1], registry=registry)
    return CompiledSchema(schemas[-1], oracle, registry=registry), oracle


def test_uncompiled_keywords_fall_back_to_the_oracle():
    compiled, oracle = _compile({"$id": "urn:t", "type": "object", "properties": {"n": {"multipleOf": 3}, "l": {"contains": {"const": 1}}}})
    assert set(compiled.fallbacks) == {"multipleOf", "contains"}
    for value in ({"n": 9}, {"n": 10}, {"l": [2, 1]}, {"l": [2]}, {"n": 1.5}, []):
        assert compiled.is_valid(value) == oracle.is_valid(value)


@given(_JSON)
def test_keyword_subset_agrees(value):
    compiled, oracle = _compile(
        {"$id": "urn:leaf", "type": ["string", "integer"], "minLength": 1, "maxLength": 3, "minimum": 0, "exclusiveMaximum": 5, "pattern": "^a"},
        {"$id": "urn:root", "anyOf": [
            {"$ref": "urn:leaf"},
            {"type": "array", "prefixItems": [{"const": 1}], "items": {"enum": [True, 0, None]}, "minItems": 1, "maxItems": 3, "uniqueItems": True},
            {"type": "object", "patternProperties": {"^x": {"type": "number"}}, "additionalProperties": {"not": {"type": "null"}},
             "propertyNames": {"maxLength": 4}, "minProperties": 1, "dependentRequired": {"a": ["b"]}},
            {"if": {"type": "boolean"}, "then": {"const": False}, "else": False},
            {"oneOf": [{"type": "number"}, {"type": "integer"}]},
        ]},
    )
    assert compiled.is_valid(value) == oracle.is_valid(value)


def test_recursive_json_value_schema_compiles_to_nothing():
    compiled, _ = _compile({"$id": "urn:jv", "anyOf": [{"type": ["null", "boolean", "number", "string"]},
                                                      {"type": "array", "items": {"$ref": "#"}},
                                                      {"type": "object", "additionalProperties": {"$ref": "#"}}]})
    deep: Any = []
    for _ in range(50_000):
        deep = [deep]
    assert compiled.is_valid(deep)  # no walk, no RecursionError
