"""The source of `sessionspec.spec.schema_types`: Python types generated from the spec's JSON Schemas.

`python -m sessionspec.validator.pregen` writes it with the other generated modules (a test fails when it is
stale). ``common/json-value.json`` becomes the recursive `JsonValue` alias; the envelope, surface-marker and
header schemas become `TypedDict` types named by their ``title``, so a signature says which document it takes
and the types change when the schemas do, never by hand. The results of the adapter protocol's operations that
the reference returns as they are (``spec/protocol/ops/<op>.json#/$defs/result``; `PROTOCOL_RESULTS`) become
`TypedDict` types too (`fold_surface` returns a `SurfaceFold`).
"""

from __future__ import annotations

import json
import keyword
from collections.abc import Mapping
from importlib import resources
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the module this one generates: the generator must run without it
    from sessionspec.spec.schema_types import JsonObject

__all__ = ["PROTOCOL_RESULTS", "TYPED_SCHEMAS", "render_schema_types"]

_BASE = "https://sessionspec.dev/schema/"
#: the schemas rendered as named types, in the order written (a type names only earlier ones)
TYPED_SCHEMAS = (
    "envelope/surface-op.json",
    "envelope/session-event.json",
    "session/session-header.json",
    "storage/jsonl-header.json",
)
#: protocol operation -> the name of the type of its result (``spec/protocol/ops/<op>.json#/$defs/result``)
PROTOCOL_RESULTS = {"fold": "SurfaceFold"}
_SCALARS = {"string": "str", "integer": "int", "number": "float", "boolean": "bool", "null": "None"}
_INTEGERS = ("common/safe-int.json", "common/signed-safe-int.json")


class _Renderer:
    def __init__(self, schemas: Mapping[str, JsonObject]) -> None:
        self.schemas: Mapping[str, Any] = schemas  # schema documents, read member by member
        self.named: dict[str, str] = {}  # $id -> the type's name, once rendered
        self.out: list[str] = []

    def type_of(self, schema: Any, name: str) -> str:
        """The annotation for ``schema``; a nested object with properties becomes a TypedDict called ``name``."""
        if not isinstance(schema, Mapping):
            return "JsonValue"
        ref = schema.get("$ref")
        if isinstance(ref, str):
            return self.ref(ref, name)
        if "const" in schema:
            return f"Literal[{_literal(schema['const'])}]"
        if "enum" in schema and all(isinstance(v, str) for v in schema["enum"]):
            return "Literal[" + ", ".join(_literal(v) for v in schema["enum"]) + "]"
        for key in ("oneOf", "anyOf"):
            if key in schema:
                parts = [self.type_of(sub, f"{name}{_form(sub, i)}") for i, sub in enumerate(schema[key])]
                return _union(parts)
        kind = schema.get("type")
        if isinstance(kind, list):
            return _union([self.type_of({**schema, "type": one}, name) for one in kind])
        if kind in _SCALARS:
            return _SCALARS[kind]
        if kind == "array":
            return f"list[{self.type_of(schema.get('items'), name + 'Item')}]"
        if kind == "object" or "properties" in schema:
            return self.typed_dict(schema, name) if schema.get("properties") else "JsonObject"
        return "JsonValue"

    def ref(self, ref: str, name: str) -> str:
        target = ref.removeprefix(_BASE)
        if target in _INTEGERS or target == "protocol/common.json#/$defs/safeInt":
            return "int"
        if target == "common/json-value.json":
            return "JsonValue"
        if ref in self.named:
            return self.named[ref]
        schema = self.schemas.get(ref)
        title = schema.get("title") if isinstance(schema, Mapping) else None
        return self.type_of(schema, title if isinstance(title, str) else name)

    def typed_dict(self, schema: Mapping[str, Any], name: str) -> str:
        required = set(schema.get("required", ()))
        fields = []
        for key, sub in schema["properties"].items():
            if isinstance(sub, Mapping) and sub.get("not") == {}:
                continue  # a member the schema forbids
            annotation = self.type_of(sub, name + key[:1].upper() + key[1:])
            fields.append((key, annotation if key in required else f"NotRequired[{annotation}]"))
        doc = [f"#: {line}" for line in _wrap(str(schema.get("description", "")))]
        if all(key.isidentifier() and not keyword.iskeyword(key) for key, _ in fields):
            self.out += ["", *doc, f"class {name}(TypedDict):", *(f"    {key}: {annotation}" for key, annotation in fields)]
        else:  # a key that is no identifier: the functional form
            self.out += ["", *doc, f"{name} = TypedDict({_literal(name)}, {{",
                         *(f"    {_literal(key)}: {annotation}," for key, annotation in fields), "})"]
        return name

    def named_type(self, sid: str) -> None:
        schema = self.schemas[sid]
        name = schema["title"]
        if "properties" in schema:
            self.named[sid] = self.typed_dict(schema, name)
            return
        annotation = self.type_of(schema, name)  # a union (the surface marker): an alias
        self.out += ["", f"{name}: TypeAlias = {annotation}"]
        self.named[sid] = name


def protocol_results() -> dict[str, JsonObject]:
    """`PROTOCOL_RESULTS`' operation -> its result schema, from the package's protocol schemas."""
    root = resources.files("sessionspec.spec").joinpath("protocol", "ops")
    return {op: json.loads(root.joinpath(f"{op}.json").read_text(encoding="utf-8"))["$defs"]["result"]
            for op in PROTOCOL_RESULTS}


def _form(schema: Any, index: int) -> str:
    """The name suffix of a ``oneOf``/``anyOf`` branch: ``Object`` for its object form, else its index."""
    return "Object" if isinstance(schema, Mapping) and schema.get("type") == "object" else str(index)


def _union(parts: list[str]) -> str:
    unique = list(dict.fromkeys(parts))
    if len(unique) == 1:
        return unique[0]
    return " | ".join(unique)


def _literal(value: object) -> str:
    return json.dumps(value) if isinstance(value, str) else repr(value)


def _wrap(text: str, width: int = 110) -> list[str]:
    words, lines, line = text.split(), [], ""
    for word in words:
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    return [*lines, line] if line else lines


def render_schema_types(schemas: Mapping[str, JsonObject], results: Mapping[str, JsonObject] | None = None) -> str:
    """The module's source from the spec's schemas (``load_spec().schemas``: ``$id`` -> schema) and the protocol's
    results (operation -> result schema; default `protocol_results`)."""
    renderer = _Renderer(schemas)
    for path in TYPED_SCHEMAS:
        renderer.named_type(_BASE + path)
    results = protocol_results() if results is None else results
    for op, name in PROTOCOL_RESULTS.items():
        about = f"The result of the adapter protocol's `{op}` (spec/protocol/ops/{op}.json#/$defs/result)."
        renderer.typed_dict({**results[op], "description": about}, name)
    names = ["JsonObject", "JsonValue", *(renderer.named[_BASE + path] for path in TYPED_SCHEMAS),
             *PROTOCOL_RESULTS.values()]
    json_value = renderer.schemas[_BASE + "common/json-value.json"]
    head = [
        '"""GENERATED by `python -m sessionspec.validator.pregen` from spec/schemas/ and spec/protocol/ops/: do not',
        "edit by hand.",
        "",
        "Types of the documents the format defines: JSON values, the event envelope, the surface marker, the",
        "headers and the protocol results the reference returns (`sessionspec.validator.pregen_types` says how each",
        "schema becomes a type).",
        '"""',
        "",
        "# no `from __future__ import annotations`: a TypedDict reads NotRequired[...] when the class is made",
        "from collections.abc import Mapping, Sequence",
        "from typing import Literal, NotRequired, TypeAlias, TypedDict, Union",
        "",
        f"__all__ = {sorted(names)!r}".replace("'", '"'),
        "",
        "# common/json-value.json: any JSON value, recursively (containers as read-only views, so frozen and plain",
        "# values are both one).",
        *(f"#: {line}" for line in _wrap(str(json_value.get("description", "")))),
        'JsonValue: TypeAlias = Union[bool, int, float, str, Sequence["JsonValue"], Mapping[str, "JsonValue"], None]',
        "#: a JSON object as read: an event, a header, a payload, before its schema is checked",
        "JsonObject: TypeAlias = Mapping[str, JsonValue]",
    ]
    return "\n".join(head + renderer.out) + "\n"
