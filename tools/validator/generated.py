"""The generated module's readers: what a run takes from `sessionspec.validator.core_fast`.

`sessionspec.validator.pregen` writes that module ahead of time; this module reads it at run time, and is all a
run imports of it (the generator imports the whole validator to build its tables; nothing a run imports
imports the generator). Each table of the generated module is keyed by the `fingerprint` of the schemas it was
built from, so a spec whose schemas differ (a plugin registry, an edited but not regenerated spec) never uses
it and is compiled here instead (`compiled_parts`): the generated file can be stale but never wrong.
"""

from __future__ import annotations

import functools
import json
import typing
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType, SimpleNamespace
from typing import TYPE_CHECKING, Any, cast

import orjson
from sessionspec.spec.schema_types import JsonObject, JsonValue
from sessionspec.validator.fastschema import CompiledSchema, Oracle, Resolver, _Compiler, root_scope


def _sha256_constructor() -> Callable[[bytes], Any]:
    """The SHA-256 that `hashlib` falls back to when it has no OpenSSL: the same digests, without loading OpenSSL
    (about 2.5 ms of every process's start-up, #24); `hashlib`'s own on a Python that has neither module."""
    for name in ("_sha256", "_sha2"):  # CPython 3.11, CPython 3.12 and later
        try:
            return cast("Callable[[bytes], Any]", __import__(name).sha256)
        except (ImportError, AttributeError):
            continue
    import hashlib  # pragma: no cover - another Python

    return hashlib.sha256  # pragma: no cover


_SHA256 = _sha256_constructor()


def _hexdigest(data: bytes) -> str:
    return str(_SHA256(data).hexdigest())


if TYPE_CHECKING:
    from sessionspec.spec.loader import Spec
    from sessionspec.validator.mstypes import FastTypes

__all__ = ["HEADER_SCHEMA_ID", "ROW_SCHEMA_ID", "Parts", "Pregenerated", "compiled_parts", "content_digest",
           "evidence_payloads", "fingerprint", "generated_evidence_payloads", "generated_parts", "generated_payloads",
           "revision_specs", "revisions_fingerprint", "struct_prefix"]


_MODULE = "sessionspec.validator.core_fast"


HEADER_SCHEMA_ID = "https://sessionspec.dev/schema/storage/jsonl-header.json"


ROW_SCHEMA_ID = "https://sessionspec.dev/schema/storage/chunk-row.json"


def fingerprint(spec: Spec) -> str:
    """A digest of everything the generated code depends on in `spec`: the schemas and the event dispatch (once per
    loaded spec: its schemas and registry are read-only)."""
    known = _FINGERPRINTS.get(id(spec))
    if known is None or known[0] is not spec:
        if len(_FINGERPRINTS) >= 32:  # (a long-lived process loading registries: a bound on what it keeps)
            del _FINGERPRINTS[next(iter(_FINGERPRINTS))]
        known = _FINGERPRINTS[id(spec)] = (spec, content_digest([spec.event_schema, dict(spec.schemas)]))
    return known[1]


_FINGERPRINTS: dict[int, tuple[Any, str]] = {}


#: orjson's canonical text of a JSON value: sorted keys; a value of a type that is no JSON value (a date, a dataclass, a
#: subclass of str, int, dict or list) refused, not written as some other value
_CANONICAL = orjson.OPT_SORT_KEYS | orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS | (
    orjson.OPT_PASSTHROUGH_SUBCLASS)
#: what an orjson text is marked with: a stdlib json text (ASCII JSON) never starts so
_ORJSON_MARK = b"orjson:"


def _holds_null(text: bytes) -> bool:
    """Whether orjson's text holds a null (what it writes for None, and for an infinite or NaN float too): a null
    starts the text or follows a colon, a comma or a bracket (outside a string, nothing else comes before one)."""
    return text.startswith(b"null") or b":null" in text or b",null" in text or b"[null" in text


def content_digest(value: object) -> str:
    """A digest of a JSON value (the data `json.loads` gives: a spec's or a registry's) that tells every two values
    apart: the SHA-256 of its canonical text. That text is orjson's (about ten times faster to write than stdlib
    json's: two of every validate process's start-up, #24) where it tells the value apart, marked as such; else stdlib
    json's, which writes an infinite bound, NaN, an integer beyond 64 bits, a lone surrogate and a key that is not a
    string as themselves: orjson writes the first two as ``null`` (so a text holding a null takes stdlib json's) and
    refuses the rest."""
    try:
        fast: bytes | None = orjson.dumps(value, option=_CANONICAL)
    except TypeError:  # (orjson.JSONEncodeError is one)
        fast = None
    if fast is not None and not _holds_null(fast):
        return _hexdigest(_ORJSON_MARK + fast)
    text = json.dumps(value, sort_keys=True, ensure_ascii=True, allow_nan=True, separators=(",", ":"))
    return _hexdigest(text.encode("ascii"))


def evidence_payloads(specs: dict[str, Spec]) -> dict[str, dict[str, str]]:
    """Type -> {revision: payload schema id} for the types registered in several revisions whose
    payloads may be valid in some of them only (the payload evidence)."""
    out: dict[str, dict[str, str]] = {}
    for event_type in sorted({t for spec in specs.values() for t in spec.events}):
        ids = {rid: spec.events[event_type]["payloadSchema"] for rid, spec in specs.items() if event_type in spec.events}
        if len(ids) > 1 and not _same_payloads([(specs[rid], schema_id) for rid, schema_id in ids.items()]):
            out[event_type] = ids
    return out


def _same_payloads(schemas: list[tuple[Any, str]]) -> bool:
    """Whether these (spec, payload schema id) pairs provably accept the same payloads: each id reaches
    equal schema documents through ``$ref``. Such a type is never evidence, so its events cost no
    validation (chunks, most of a log)."""
    closures = {_closure(spec, schema_id) for spec, schema_id in schemas}
    return len(closures) == 1 and None not in closures


def _closure(spec: Any, schema_id: str) -> bytes | None:
    """The schema documents `schema_id` reaches through ``$ref`` in `spec`, as one canonical value;
    None when a reference cannot be followed here (a nested ``$id``, a target outside the loaded schemas)."""
    from urllib.parse import urldefrag, urljoin

    seen: dict[str, Any] = {}
    todo = [schema_id]
    while todo:
        uri = urldefrag(todo.pop())[0]
        if uri in seen:
            continue
        doc = seen[uri] = spec.schemas.get(uri)
        if doc is None:
            return None
        stack: list[Any] = [doc]
        while stack:
            node = stack.pop()
            if isinstance(node, dict):
                for key, value in node.items():
                    if key in ("$ref", "$dynamicRef") and isinstance(value, str):
                        todo.append(urljoin(uri, value))
                    elif key == "$id" and node is not doc:
                        return None
                    else:
                        stack.append(value)
            elif isinstance(node, list):
                stack.extend(node)
    return orjson.dumps(seen, option=orjson.OPT_SORT_KEYS)


def revision_specs() -> dict[str, Spec]:
    from sessionspec.spec.loader import load_spec
    from sessionspec.spec.revisions import known_revisions

    return {rid: load_spec(revision=rid) for rid in known_revisions()}


def revisions_fingerprint(specs: dict[str, Spec]) -> str:
    """A digest of every revision's schemas and dispatch: what the generated payload checks depend on."""
    return _hexdigest(" ".join(f"{rid}:{fingerprint(spec)}" for rid, spec in sorted(specs.items())).encode())


def generated_evidence_payloads(specs: dict[str, Spec]) -> dict[str, dict[str, str]]:
    """`evidence_payloads` as the generated module holds it (its ``PAYLOADS`` are exactly those types at those
    revisions), or computed now when the module was generated from other revisions."""
    try:
        module: Any = __import__(_MODULE, fromlist=["PAYLOADS"])
    except ImportError:
        return evidence_payloads(specs)
    if getattr(module, "REVISIONS_FINGERPRINT", None) != revisions_fingerprint(specs):
        return evidence_payloads(specs)
    return {event_type: {rid: spec.events[event_type]["payloadSchema"] for rid, spec in specs.items() if rid in by_rev}
            for event_type, by_rev in module.PAYLOADS.items()}


def generated_payloads(specs: dict[str, Spec]) -> dict[str, dict[str, Callable[[JsonValue], bool]]]:
    """Revision -> {payload schema id: predicate} from the generated module: revision detection's payload
    schemas at each revision (`evidence_payloads`), or nothing when it was generated from other revisions.
    Callers take them through `lint.SchemaSet.payload`, which compiles the schemas this leaves out."""
    try:
        module: Any = __import__(_MODULE, fromlist=["PAYLOADS"])
    except ImportError:
        return {}
    if getattr(module, "REVISIONS_FINGERPRINT", None) != revisions_fingerprint(specs):
        return {}
    out: dict[str, dict[str, Callable[[JsonValue], bool]]] = {}
    for event_type, by_rev in module.PAYLOADS.items():
        for rid, fn in by_rev.items():
            out.setdefault(rid, {})[specs[rid].events[event_type]["payloadSchema"]] = fn
    return out


def struct_prefix(spec: Spec) -> str:
    """What every msgspec struct name of `spec` starts with: nothing at the default revision, else the revision's
    id, so the generated module holds each revision's structs under names of their own."""
    from sessionspec.spec.revisions import DEFAULT_REVISION

    rid = spec.revision.id
    return "" if rid == DEFAULT_REVISION else f"r{rid}_"


class Pregenerated(CompiledSchema):
    """A `CompiledSchema` whose predicates come from the generated module.

    The oracle (python-jsonschema) and the compiler's schema analyses are built only
    when something asks for them: an error to locate, a packed row's plan.
    """

    def __init__(self, schema: JsonObject, make_oracle: Callable[[], Oracle],
                 entry: tuple[Callable[[JsonValue], bool], dict[str, Callable[[JsonValue], bool]], str | None],
                 spec: Spec) -> None:
        self.schema = schema
        self._make_oracle = make_oracle
        self._spec = spec  # its `registry` (importing `referencing`, crawling every schema) only when asked for
        self._predicate, self.by_tag, self.tag_key = entry
        self.fallbacks = ()
        #: the packed rows' schema analysis for this schema, written with it (`fastlog.row_bounds_table`; the event
        #: schema's only)
        self.row_bounds: dict[tuple[str, tuple[str, ...]], tuple[Any, Any, Any]] = {}

    @functools.cached_property
    def oracle(self) -> Oracle:  # type: ignore[override]  # built on first use, then an attribute as in the base
        return self._make_oracle()

    @functools.cached_property
    def compiler(self) -> _Compiler:  # type: ignore[override]
        return _Compiler(self.oracle, frozenset())

    @functools.cached_property
    def root_resolver(self) -> Resolver:  # type: ignore[override]
        return root_scope(self.compiler, self.schema, self._spec.registry)


@dataclass(frozen=True)
class Parts:
    """The compiled pieces of one spec that the validator builds on. The msgspec types (`fast_types`) are built by
    `build_fast_types` when first asked: a revision whose event predicate alone is asked (the parent's, for the
    earlier-format records its child's load path keeps as stored) builds no structs and no decoder (#24)."""

    event: CompiledSchema
    header: CompiledSchema
    row: CompiledSchema
    build_fast_types: Callable[[], FastTypes]

    @functools.cached_property
    def fast_types(self) -> FastTypes:
        """The msgspec types translated from the same schemas (built once, on first use)."""
        return self.build_fast_types()


def compiled_parts(spec: Spec) -> Parts:
    """Compile `spec`'s schemas and translate them to msgspec types now (the run-time path)."""
    from sessionspec.validator.mstypes import build_fast_types

    event = CompiledSchema(spec.event_schema, spec.event_validator(), registry=spec.registry)
    row = CompiledSchema(spec.schemas[ROW_SCHEMA_ID], spec.validator(ROW_SCHEMA_ID), registry=spec.registry)
    header = CompiledSchema(spec.schemas[HEADER_SCHEMA_ID], spec.validator(HEADER_SCHEMA_ID), registry=spec.registry)
    return Parts(event, header, row, functools.partial(build_fast_types, event, row, struct_prefix(spec)))


def generated_parts(spec: Spec, module: ModuleType | SimpleNamespace | None = None) -> Parts | None:
    """The parts for `spec` from the generated module (or from `module`, a namespace holding `render`'s
    output), or None when it was generated from other schemas."""
    from sessionspec.validator.mstypes import FastTypes

    if module is None:
        try:
            module = __import__(_MODULE, fromlist=["PARTS"])
        except ImportError:
            return None
    found = getattr(module, "PARTS", {}).get(fingerprint(spec))
    if found is None:
        return None
    event, header, row, build_structs, events, rows, skipped = found

    def fast_types() -> FastTypes:
        import msgspec

        structs = build_structs()
        tags = {cls: cls.__struct_config__.tag for cls in structs}
        return FastTypes(msgspec.json.Decoder(typing.Union[structs]), msgspec.json.Encoder(), tags,
                         events, rows, dict(skipped))

    event_schema = Pregenerated(spec.event_schema, spec.event_validator, event, spec)
    event_schema.row_bounds = getattr(module, "ROW_BOUNDS", {}).get(fingerprint(spec), {})
    return Parts(
        event_schema,
        Pregenerated(spec.schemas[HEADER_SCHEMA_ID], lambda: spec.validator(HEADER_SCHEMA_ID), header, spec),
        Pregenerated(spec.schemas[ROW_SCHEMA_ID], lambda: spec.validator(ROW_SCHEMA_ID), row, spec),
        fast_types,
    )
