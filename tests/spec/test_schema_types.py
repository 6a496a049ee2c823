"""The generated types (`sessionspec.spec.schema_types`) say what the schemas say (#26).

`tests/cli/test_pregen.py` fails when the module is stale; these check that the generator reads the schemas
right: each object schema's TypedDict has its required members as required keys and its other (allowed)
members as optional keys, the surface marker is its two forms, and the JSON value alias is recursive.
"""

from __future__ import annotations

import typing

import pytest
from sessionspec.spec import schema_types
from sessionspec.spec.loader import load_spec
from sessionspec.validator.pregen_types import TYPED_SCHEMAS

_BASE = "https://sessionspec.dev/schema/"
SCHEMAS = load_spec().schemas


@pytest.mark.parametrize("path", [p for p in TYPED_SCHEMAS if "properties" in SCHEMAS[_BASE + p]])
def test_a_typed_dict_has_the_schemas_required_and_optional_members(path: str) -> None:
    schema = SCHEMAS[_BASE + path]
    typed = getattr(schema_types, schema["title"])
    allowed = {key for key, sub in schema["properties"].items() if sub.get("not") != {}}
    assert typed.__required_keys__ == frozenset(schema["required"])
    assert typed.__optional_keys__ == frozenset(allowed - set(schema["required"]))


def test_the_surface_marker_is_append_or_a_replace_object() -> None:
    forms = typing.get_args(schema_types.SurfaceOp)
    assert typing.Literal["append"] in forms
    (replace,) = [form for form in forms if typing.is_typeddict(form)]
    assert replace.__required_keys__ == frozenset({"op", "start", "end"})


def test_json_value_is_recursive() -> None:
    forms = set(typing.get_args(schema_types.JsonValue))
    assert {bool, int, float, str, type(None)} <= forms
    assert all("JsonValue" in repr(form) for form in forms - {bool, int, float, str, type(None)})


def test_a_changed_schema_changes_the_types() -> None:
    from sessionspec.validator.pregen_types import render_schema_types

    changed = dict(SCHEMAS)
    header = dict(changed[_BASE + "session/session-header.json"])
    header["required"] = [*header["required"], "cwd"]
    changed[_BASE + "session/session-header.json"] = header
    text = render_schema_types(changed)
    assert "    cwd: str\n" in text and "    cwd: NotRequired[str]\n" in render_schema_types(SCHEMAS)


def test_a_protocol_result_type_is_its_result_schema() -> None:
    """`SurfaceFold` (what `fold_surface` returns) has the members of `fold`'s result schema, its seqs as ints."""
    from sessionspec.validator.pregen_types import PROTOCOL_RESULTS, protocol_results, render_schema_types

    results = protocol_results()
    for op, name in PROTOCOL_RESULTS.items():
        typed = getattr(schema_types, name)
        assert typed.__required_keys__ == frozenset(results[op]["required"])
    assert schema_types.SurfaceFold.__annotations__["nodes"] == list[int]
    item = typing.get_args(schema_types.SurfaceFold.__annotations__["replacements"])[0]
    assert item.__required_keys__ == frozenset({"seq", "start", "end", "shadowedSeqs"})
    changed = {**results, "fold": {**results["fold"], "required": ["nodes"]}}
    assert "    replacements: NotRequired[list[SurfaceFoldReplacementsItem]]\n" in render_schema_types(SCHEMAS, changed)
