"""The bounds of the spec's schemas, and documents that violate exactly one of them (issue 26).

A *bound* is one keyword that restricts a value (``maximum``, ``minLength``, ``pattern``, ``enum``, ``const``,
``type``, an entry of ``required``, ``additionalProperties: false``, ...) at a place in one schema document,
named by the schema's ``$id`` and the JSON pointer of the keyword. A *witness* of a bound is a document whose
verdict changes once that bound alone is deleted: the evidence that the bound does something. Most witnesses are
rejected and accepted without the bound; a *kept* witness is accepted and rejected without it (a bound of a
``oneOf`` branch that keeps a sibling branch's documents from matching twice: loosening a branch tightens the
``oneOf``).
``tests/spec/test_schema_bounds.py`` holds every bound to a witness; this module is its oracle (python-jsonschema
with the bound keywords instrumented, so one pass names the bounds a document fails and where each bound is
evaluated) and the generator of single-bound violations the corpus authors review
(``python -m sessionspec.conformance.schema_bounds`` lists the bounds without a witness).
"""

from __future__ import annotations

import copy
import functools
import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from sessionspec.reference import json_text

__all__ = [
    "BOUND_KEYWORDS",
    "EVENT",
    "OPEN_REASONS",
    "WITNESS_FILE",
    "Bound",
    "Builder",
    "Oracle",
    "bounds_of",
    "derived_bases",
    "exempt",
    "exempt_at",
    "generate",
    "kept",
    "label",
    "labelled_invalid",
    "main",
    "reached",
    "survey",
    "uncovered",
    "valid_bases",
    "violations",
    "without",
    "witnessed",
    "witnesses_at",
    "write_witnesses",
]

BOUND_KEYWORDS = frozenset({"maximum", "minimum", "exclusiveMaximum", "exclusiveMinimum", "maxLength", "minLength",
                            "maxItems", "minItems", "pattern", "enum", "const", "type", "minProperties",
                            "maxProperties", "uniqueItems", "required", "additionalProperties",
                            "unevaluatedProperties"})
EVENT = "event"
"""The root of a whole event: the envelope, then the payload schema of its registered type."""

_SUB_MAPS = ("properties", "$defs", "patternProperties", "dependentSchemas")
_SUB_ONE = ("items", "additionalProperties", "unevaluatedProperties", "not", "if", "then", "else", "contains",
            "propertyNames", "unevaluatedItems")
_SUB_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")

Pointer = tuple[str | int, ...]
Bound = tuple[str, Pointer]
"""A schema ``$id`` and the pointer (as parts) of one bound: the keyword, or ``required``'s entry."""


def subschemas(node: Any, ptr: Pointer = ()) -> Iterator[tuple[Pointer, dict[str, Any]]]:
    """Every subschema of a schema document with its pointer (the keywords that hold schemas only)."""
    if not isinstance(node, dict):
        return
    yield ptr, node
    for key, value in node.items():
        if key in _SUB_MAPS and isinstance(value, dict):
            for name, sub in value.items():
                yield from subschemas(sub, (*ptr, key, name))
        elif key in _SUB_ONE and isinstance(value, dict):
            yield from subschemas(value, (*ptr, key))
        elif key in _SUB_LISTS and isinstance(value, list):
            for i, sub in enumerate(value):
                yield from subschemas(sub, (*ptr, key, i))


def bounds_of(schema: Mapping[str, Any]) -> Iterator[Pointer]:
    """Every bound of one schema document, as a pointer."""
    for ptr, node in subschemas(schema):
        for key, value in node.items():
            if key not in BOUND_KEYWORDS:
                continue
            if key == "required":
                yield from ((*ptr, key, i) for i in range(len(value)))
            elif key in ("additionalProperties", "unevaluatedProperties"):
                if value is False:
                    yield (*ptr, key)
            else:
                yield (*ptr, key)


def without(schema: Mapping[str, Any], ptr: Pointer) -> dict[str, Any]:
    """A copy of ``schema`` with the bound at ``ptr`` deleted (a ``required`` entry: that name only)."""
    doc: dict[str, Any] = copy.deepcopy(dict(schema))
    node: Any = doc
    for part in ptr[:-1]:
        node = node[part]
    del node[ptr[-1]]
    return doc


def label(bound: Bound) -> str:
    """``envelope/session-event.json#/required/0``: the bound's schema path and pointer."""
    sid, ptr = bound
    return sid.removeprefix("https://sessionspec.dev/schema/") + "#/" + "/".join(map(str, ptr))


class Oracle:
    """python-jsonschema over one spec's schemas, instrumented to name the bounds a document meets.

    ``failed(root, doc)``: the bounds whose keyword failed while validating (a superset of those whose
    deletion could make ``doc`` valid); ``evaluated(root, doc)``: each bound with the instance paths where it
    was checked (where a violation of it can be placed); ``valid(root, doc, loosened=bound)``: the verdict,
    with one bound deleted.
    """

    def __init__(self, schemas: Mapping[str, Mapping[str, Any]], event_schema: Mapping[str, Any]) -> None:
        from jsonschema import Draft202012Validator, validators
        from referencing import Registry
        from referencing.jsonschema import DRAFT202012

        self._draft = Draft202012Validator
        self._resource = DRAFT202012.create_resource
        # Without `$schema`: jsonschema picks a resource's validator class by it, dropping the instrumented one.
        self.schemas = {sid: {k: v for k, v in copy.deepcopy(dict(doc)).items() if k != "$schema"}
                        for sid, doc in schemas.items()}
        self.event_schema = dict(event_schema)
        self._where: dict[int, tuple[str, Pointer]] = {}
        for sid, doc in self.schemas.items():
            for ptr, node in subschemas(doc):
                self._where[id(node)] = (sid, ptr)
        self.registry: Any = Registry().with_resources(
            (sid, DRAFT202012.create_resource(doc)) for sid, doc in self.schemas.items()).crawl()
        self.bounds = frozenset((sid, ptr) for sid, doc in self.schemas.items() for ptr in bounds_of(doc))
        self._notes: list[tuple[int, str, str | None, Pointer, bool]] = []
        self._path: list[str | int] = []
        base = Draft202012Validator.VALIDATORS
        wrapped: dict[str, Callable[..., Any]] = {k: self._noting(k, base[k]) for k in BOUND_KEYWORDS if k in base}
        wrapped.update(self._walking())
        self._recording = validators.extend(Draft202012Validator, wrapped)

    # -- instrumentation --------------------------------------------------------------------

    def _noting(self, keyword: str, original: Callable[..., Iterator[Any]]) -> Callable[..., Iterator[Any]]:
        notes, path = self._notes, self._path

        def check(validator: Any, value: Any, instance: Any, schema: Mapping[str, Any]) -> Iterator[Any]:
            failed = False
            for error in original(validator, value, instance, schema):
                failed = True
                missing = error.message.split("'")[1] if keyword == "required" and "'" in error.message else None
                notes.append((id(schema), keyword, missing, tuple(path), True))
                yield error
            if not failed:
                notes.append((id(schema), keyword, None, tuple(path), False))
        return check

    def _walking(self) -> dict[str, Callable[..., Iterator[Any]]]:
        """``properties``/``items``/``prefixItems``/``additionalProperties`` that keep the instance path."""
        path = self._path

        def into(validator: Any, instance: Any, schema: Any, step: str | int) -> Iterator[Any]:
            path.append(step)
            try:
                yield from validator.descend(instance, schema, path=step, schema_path=step)
            finally:
                path.pop()

        def properties(validator: Any, value: Any, instance: Any, schema: Any) -> Iterator[Any]:
            if isinstance(instance, dict):
                for name, sub in value.items():
                    if name in instance:
                        yield from into(validator, instance[name], sub, name)

        def prefix_items(validator: Any, value: Any, instance: Any, schema: Any) -> Iterator[Any]:
            if isinstance(instance, list):
                for i, (item, sub) in enumerate(zip(instance, value, strict=False)):
                    yield from into(validator, item, sub, i)

        def items(validator: Any, value: Any, instance: Any, schema: Any) -> Iterator[Any]:
            from jsonschema.exceptions import ValidationError

            if not isinstance(instance, list):
                return
            start = len(schema.get("prefixItems", ()))
            if value is False and len(instance) > start:
                yield ValidationError(f"expected at most {start} items")
                return
            for i in range(start, len(instance)):
                yield from into(validator, instance[i], value, i)

        original_additional = self._draft.VALIDATORS["additionalProperties"]
        note_additional = self._noting("additionalProperties", original_additional)

        def additional(validator: Any, value: Any, instance: Any, schema: Any) -> Iterator[Any]:
            if value is False or not isinstance(instance, dict):
                yield from note_additional(validator, value, instance, schema)
                return
            known = set(schema.get("properties", {}))
            patterns = list(schema.get("patternProperties", {}))
            for name in instance:
                if name not in known and not any(re.search(p, name) for p in patterns):
                    yield from into(validator, instance[name], value, name)

        return {"properties": properties, "prefixItems": prefix_items, "items": items, "additionalProperties": additional}

    def _run(self, root: str, document: Any) -> list[tuple[int, str, str | None, Pointer, bool]]:
        self._notes.clear()
        self._path.clear()
        schema = self.event_schema if root == EVENT else {"$ref": root}
        self.invalid = any(True for _ in self._recording(schema, registry=self.registry).iter_errors(document))
        return list(self._notes)

    def _bound(self, node_id: int, keyword: str, missing: str | None) -> Bound | None:
        if node_id not in self._where:
            return None  # a keyword of the event schema's own dispatch, not of a spec schema
        sid, ptr = self._where[node_id]
        node: Any = self.schemas[sid]
        for part in ptr:
            node = node[part]
        if keyword == "required":
            if missing not in node["required"]:
                return None
            bound = (sid, (*ptr, keyword, node["required"].index(missing)))
        else:
            bound = (sid, (*ptr, keyword))
        return bound if bound in self.bounds else None

    # -- queries --------------------------------------------------------------------------------

    def failed(self, root: str, document: Any, *, anywhere: bool = False) -> set[Bound]:
        """The bounds whose keyword failed on ``document`` (empty when the document is valid); with ``anywhere``,
        also those that failed in a branch a valid document does not take (the candidates of a kept witness)."""
        notes = self._run(root, document)
        if not self.invalid and not anywhere:
            return set()
        return {b for n, k, m, _p, failed in notes if failed and (b := self._bound(n, k, m)) is not None}

    def evaluated(self, root: str, document: Any) -> dict[Bound, list[Pointer]]:
        """Each bound checked while validating ``document`` with the instance paths where it held."""
        out: dict[Bound, list[Pointer]] = {}
        for node_id, keyword, _missing, path, failed in self._run(root, document):
            if failed or node_id not in self._where:
                continue
            sid, ptr = self._where[node_id]
            if keyword == "required":
                node: Any = self.schemas[sid]
                for part in ptr:
                    node = node[part]
                for i in range(len(node["required"])):
                    out.setdefault((sid, (*ptr, keyword, i)), []).append(path)
            elif (sid, (*ptr, keyword)) in self.bounds:
                out.setdefault((sid, (*ptr, keyword)), []).append(path)
        return out

    def valid(self, root: str, document: Any, loosened: Bound | None = None) -> bool:
        """The verdict on ``document``; with ``loosened``, of the schemas with that bound deleted."""
        registry = self.registry
        if loosened is not None:
            sid, ptr = loosened
            registry = registry.with_resource(sid, self._resource(without(self.schemas[sid], ptr))).crawl()
        schema = self.event_schema if root == EVENT else {"$ref": root}
        return bool(self._draft(schema, registry=registry).is_valid(document))

    def node(self, bound: Bound) -> tuple[dict[str, Any], str, Any]:
        """The subschema holding ``bound``, its keyword and the keyword's value (a name for ``required``)."""
        sid, ptr = bound
        node: Any = self.schemas[sid]
        keyword_at = len(ptr) - (2 if len(ptr) >= 2 and ptr[-2] == "required" else 1)
        for part in ptr[:keyword_at]:
            node = node[part]
        keyword = str(ptr[keyword_at])
        value = node[keyword][ptr[-1]] if keyword == "required" else node[keyword]
        return node, keyword, value


_PROBES: Sequence[Any] = (None, True, "x", 1.5, 0, [], {})
_TYPES: Mapping[str, type | tuple[type, ...]] = {"null": type(None), "string": str, "array": list, "object": dict}


def _of_type(value: Any, name: str) -> bool:
    if name == "integer":
        return (isinstance(value, int) and not isinstance(value, bool)) or (isinstance(value, float) and value.is_integer())
    if name == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if name == "boolean":
        return isinstance(value, bool)
    return isinstance(value, _TYPES[name])


def _replacements(node: Mapping[str, Any], keyword: str, value: Any, current: Any) -> Iterator[Any]:
    """Values that break ``keyword`` (with ``value``) where ``current`` stands, plainest first."""
    if keyword == "type":
        allowed = [value] if isinstance(value, str) else list(value)
        yield from (p for p in _PROBES if not any(_of_type(p, t) for t in allowed))
    elif keyword in ("const", "enum"):
        taken = [value] if keyword == "const" else list(value)
        for probe in (*(f"{c}-not" for c in taken if isinstance(c, str)), *(c + 1 for c in taken if isinstance(c, int)
                      and not isinstance(c, bool)), *(not c for c in taken if isinstance(c, bool)), *_PROBES):
            if probe not in taken:
                yield probe
    elif keyword == "minLength" and isinstance(current, str) and value > 0:
        yield current[: value - 1]
    elif keyword == "maxLength":
        yield "x" * (value + 1)
    elif keyword == "pattern":
        for probe in ("", " ", "x", "X-1", "-", f"{current} ", "\n"):
            if not re.search(value, probe):
                yield probe
    elif keyword in ("minimum", "exclusiveMinimum"):
        yield value - 1 if keyword == "minimum" else value
        yield value - 0.5
    elif keyword in ("maximum", "exclusiveMaximum"):
        yield value + 1 if keyword == "maximum" else value
    elif keyword == "minItems" and isinstance(current, list) and value > 0:
        yield current[: value - 1]
    elif keyword == "maxItems" and isinstance(current, list) and current:
        yield current + [current[0]] * (value + 1 - len(current))
    elif keyword == "uniqueItems" and isinstance(current, list) and current:
        yield [*current, current[0]]
    elif keyword == "minProperties" and isinstance(current, dict):
        yield dict(list(current.items())[: max(value - 1, 0)])


def violations(document: Any, path: Pointer, node: Mapping[str, Any], keyword: str, value: Any) -> Iterator[Any]:
    """Copies of ``document`` that break one bound at ``path`` (candidates: the oracle decides)."""
    def at(doc: Any) -> Any:
        for part in path:
            doc = doc[part]
        return doc

    current = at(document)
    if keyword == "required":
        if isinstance(current, dict) and value in current:
            doc = copy.deepcopy(document)
            del at(doc)[value]
            yield doc
        return
    if keyword in ("additionalProperties", "unevaluatedProperties"):
        if isinstance(current, dict):
            for extra in ("zzUnknown", "zz-unknown"):
                doc = copy.deepcopy(document)
                at(doc)[extra] = None
                yield doc
        return
    for replacement in _replacements(node, keyword, value, current):
        doc = copy.deepcopy(document)
        if not path:
            yield replacement
            continue
        parent = at_parent = doc
        for part in path[:-1]:
            at_parent = at_parent[part]
        at_parent[path[-1]] = replacement
        yield parent


# -- the witnesses the spec and the corpus hold, and generated ones ------------------------------------------

HEADER_ID = "https://sessionspec.dev/schema/session/session-header.json"
INTENT_ID = "https://sessionspec.dev/schema/envelope/surface-intent.json"
RECORD_ID = "https://sessionspec.dev/schema/storage/storage-record.json"
JSONL_HEADER_ID = "https://sessionspec.dev/schema/storage/jsonl-header.json"
EVENT_ID = "https://sessionspec.dev/schema/envelope/session-event.json"
_ROOTS = (HEADER_ID, INTENT_ID, RECORD_ID, JSONL_HEADER_ID)
"""The schemas a document the reference reads is checked against as it is, besides the event schema."""
WITNESS_FILE = Path(__file__).resolve().parent / "schema-witnesses.json"
"""Generated single-bound violations of valid documents, and the bounds still without a witness."""

Document = tuple[str, Any, str]
"""(root: a schema ``$id`` or EVENT, the document, where it comes from)."""


def _corpus_documents(revision: str, *, rejected: bool) -> Iterator[Document]:
    """The documents of the vectors of one revision, at the place the reference rejects (or accepts) them."""
    from .cases import for_revision, load_corpus

    for case in for_revision(load_corpus(), revision):
        verdict = case.expect.get("rejected")
        if (verdict is not None) != rejected:
            continue
        verdict = verdict or {}
        index, code, args = verdict.get("index"), str(verdict.get("code", "")), case.args
        source = f"vector {case.id}"
        if case.op == "load" and "header" in args and (code.startswith("HEADER_") or not rejected):
            yield HEADER_ID, args["header"], source
        if case.op == "load" and rejected and isinstance(index, int) and index < len(args.get("seed") or ()):
            yield EVENT, args["seed"][index], source
        elif case.op in ("fold", "invariants", "derive") and rejected and isinstance(index, int) \
                and index < len(args.get("events") or ()):
            yield EVENT, args["events"][index], source
        elif case.op == "append" and (code.startswith("SURFACE_") or not rejected):
            chosen = args["appends"][index:index + 1] if rejected and isinstance(index, int) else args.get("appends", [])
            for appended in chosen:
                intent = {k: v for k, v in appended.items() if k not in ("type", "data")}
                if intent:
                    yield INTENT_ID, intent, source
        elif case.op == "decode":
            yield RECORD_ID, args.get("record"), source
        elif case.op in ("jsonl-read", "jsonl-load") and (code in ("JSONL_BAD_HEADER", "JSONL_VERSION") or not rejected):
            first = str(args.get("data", {}).get("text", "")).split("\n", 1)[0]
            try:  # a log's header line: the one parsing path of log text
                yield JSONL_HEADER_ID, json_text.loads(first), source
            except ValueError:  # (JsonTextError is one)
                continue


def labelled_invalid(spec: Any, revision: str) -> list[Document]:
    """Every document labelled invalid: registry invalid examples, closed openness examples, rejected vectors."""
    out: list[Document] = []
    for etype, entry in spec.events.items():
        for i, example in enumerate(entry.get("examples", {}).get("invalid", [])):
            out.append((EVENT, example["event"], f"registry {etype} examples.invalid[{i}]"))
    for subject in spec.openness:
        if subject.get("openness") == "closed" and "unknownExample" in subject:
            out.append((subject["schemas"][0], subject["unknownExample"], f"openness {subject['subject']!r}"))
    out.extend(_corpus_documents(revision, rejected=True))
    return out


def valid_bases(spec: Any, revision: str) -> list[Document]:
    """Valid documents to break one bound of: registry valid examples and the documents of accepted vectors."""
    out: list[Document] = []
    for etype, entry in spec.events.items():
        for i, example in enumerate(entry.get("examples", {}).get("valid", [])):
            out.append((EVENT, example["event"], f"registry {etype} examples.valid[{i}]"))
    out.extend(_corpus_documents(revision, rejected=False))
    seen: set[tuple[str, str]] = set()
    unique = []
    for root, document, source in out:
        key = (root, json.dumps(document, sort_keys=True))
        if key not in seen:
            seen.add(key)
            unique.append((root, document, source))
    return unique



# -- valid documents derived from the schemas themselves ------------------------------------------------------

class _Unbuildable(Exception):
    """No instance of a subschema within the builder's depth (a recursive schema without a base case)."""


def _kind(node: Mapping[str, Any]) -> str | None:
    """The type a plain instance of ``node`` takes: its (first) ``type``, or what its keywords imply."""
    kind = node.get("type")
    if isinstance(kind, list):
        kind = kind[0]
    if kind is None and ("properties" in node or "required" in node):
        kind = "object"
    if kind is None and "items" in node:
        kind = "array"
    return kind if isinstance(kind, str) else None


def _scalar(kind: str, node: Mapping[str, Any]) -> Any:
    """The plain value of a scalar type: ``"x"`` as long as ``minLength`` asks, the lowest number at least 1 allowed."""
    if kind == "string":
        return "x" * max(node.get("minLength", 1), 1)
    if kind in ("integer", "number"):
        low = node.get("minimum", node.get("exclusiveMinimum", 0) + (1 if "exclusiveMinimum" in node else 0))
        return min(max(low, 1), node.get("maximum", 1 << 53))
    return False if kind == "boolean" else None


def _merge(into: Any, more: Any) -> Any:
    """``more`` laid over ``into``: objects merge key by key, anything else is replaced."""
    if isinstance(into, dict) and isinstance(more, dict):
        out = dict(into)
        for key, value in more.items():
            out[key] = _merge(out[key], value) if key in out else value
        return out
    return more


class Builder:
    """Deterministic plain instances of the subschemas of one spec, steered through a chosen subschema.

    ``instance(sid, target)`` builds a document of the schema ``sid`` that passes through the subschema
    ``target`` (a schema ``$id`` and pointer): where a branch (``oneOf``/``anyOf`` member, ``then``/``else``)
    leads to it, that branch is taken, and the ``if`` that guards a ``then`` is made to hold. Elsewhere the
    plainest value: ``const``, the first ``enum`` member, the first ``type``, ``minLength``/``minItems``/``minimum``
    met; ``full`` adds every optional property (so its bounds are evaluated too). The oracle judges the result:
    the builder promises no validity, only determinism.
    """

    def __init__(self, oracle: Oracle) -> None:
        self.oracle = oracle
        self._refs: dict[tuple[str, Pointer], set[tuple[str, Pointer]]] = {}
        self._reach: dict[tuple[str, Pointer, tuple[str, Pointer]], int | None] = {}

    def resolve(self, ref: str, sid: str) -> tuple[str, Pointer, Any]:
        """The subschema a ``$ref`` names from inside ``sid``: its ``$id``, pointer and node."""
        doc_id, _, fragment = ref.partition("#")
        doc_id = doc_id or sid
        node: Any = self.oracle.schemas[doc_id]
        ptr: list[str | int] = []
        for text in (p for p in fragment.split("/") if p):
            part: str | int = int(text) if isinstance(node, list) else text.replace("~1", "/").replace("~0", "~")
            node = node[part]
            ptr.append(part)
        return doc_id, tuple(ptr), node

    def _refs_under(self, sid: str, ptr: Pointer, node: Any) -> set[tuple[str, Pointer]]:
        key = (sid, ptr)
        if key not in self._refs:
            self._refs[key] = {self.resolve(sub["$ref"], sid)[:2] for _at, sub in subschemas(node, ptr)
                               if isinstance(sub.get("$ref"), str)}
        return self._refs[key]

    def distance(self, sid: str, ptr: Pointer, node: Any, target: tuple[str, Pointer] | None) -> int | None:
        """How many ``$ref``s lie between this subschema and ``target`` (None: it does not lead there)."""
        if target is None:
            return None
        key = (sid, ptr, target)
        if key not in self._reach:
            seen: set[tuple[str, Pointer]] = set()
            level = [(sid, ptr, node)]
            found: int | None = None
            hops = 0
            while level and found is None:
                following = []
                for at_sid, at_ptr, at_node in level:
                    if (at_sid, at_ptr) in seen:
                        continue
                    seen.add((at_sid, at_ptr))
                    if at_sid == target[0] and target[1][:len(at_ptr)] == at_ptr:
                        found = hops
                        break
                    for ref_sid, ref_ptr in sorted(self._refs_under(at_sid, at_ptr, at_node), key=str):
                        ref_node: Any = self.oracle.schemas[ref_sid]
                        for part in ref_ptr:
                            ref_node = ref_node[part]
                        following.append((ref_sid, ref_ptr, ref_node))
                level, hops = following, hops + 1
            self._reach[key] = found
        return self._reach[key]

    def reaches(self, sid: str, ptr: Pointer, node: Any, target: tuple[str, Pointer] | None) -> bool:
        """Whether ``target`` lies inside this subschema, structurally or through ``$ref``s."""
        return self.distance(sid, ptr, node, target) is not None

    def instance(self, sid: str, target: tuple[str, Pointer] | None = None, *, full: bool = True) -> Any:
        """A plain document of the schema ``sid`` steered through ``target`` (raises ``_Unbuildable``)."""
        return self._build(sid, (), self.oracle.schemas[sid], target, full, 0)

    def _holds(self, schema: Any, value: Any) -> bool:
        return bool(self.oracle._draft(schema, registry=self.oracle.registry).is_valid(value))

    def _build(self, sid: str, ptr: Pointer, node: Any, target: tuple[str, Pointer] | None, full: bool,
               depth: int) -> Any:
        if depth > 24 or not isinstance(node, dict):
            if node is True:
                return None
            raise _Unbuildable(label((sid, ptr)))
        full = full and depth < 12  # past that, only what is required or leads to the target
        steer = self._steer(sid, ptr, node, target)

        def build(at: Pointer, child: Any) -> Any:
            return self._build(sid, at, child, target if at == steer else None, full, depth + 1)

        value: Any = None
        have = False
        if isinstance(node.get("$ref"), str):
            ref_sid, ref_ptr, ref_node = self.resolve(node["$ref"], sid)
            value = self._build(ref_sid, ref_ptr, ref_node, target if steer == ("$ref",) else None, full, depth + 1)
            have = True
        if "const" in node:
            return copy.deepcopy(node["const"])
        if "enum" in node:
            return copy.deepcopy(node["enum"][0])
        kind = _kind(node)
        if kind == "object":
            value, have = self._object(ptr, node, value if have and isinstance(value, dict) else {}, steer, build, full), True
        elif kind == "array":
            value, have = self._array(ptr, node, steer, build, full), True
        elif kind is not None:
            value, have = _scalar(kind, node), True
        members = list(enumerate(node.get("allOf", ())))
        # the member leading to the target first: the conditions of the others are then met (or not) by the
        # document as steered, not by the plain values it had before
        members.sort(key=lambda m: (*ptr, "allOf", m[0]) != steer)
        for i, member in members:
            at = (*ptr, "allOf", i)
            value = _merge(value, self._member(sid, at, member, value, target if at == steer else None, full, depth))
            have = True
        for keyword in ("oneOf", "anyOf"):
            branches = node.get(keyword, ())
            if branches:
                chosen = next((i for i in range(len(branches)) if (*ptr, keyword, i) == steer), 0)
                value, have = _merge(value, build((*ptr, keyword, chosen), branches[chosen])), True
        if "if" in node:
            own = {k: node[k] for k in ("if", "then", "else") if k in node}
            value = _merge(value, self._member(sid, ptr, own, value, target if steer == ("if",) else None, full, depth))
            have = True
        if not have and not any(k in node for k in BOUND_KEYWORDS | {"not", "if", "$ref"}):
            return None  # an unconstrained value (a JSON value): null is one
        if not have:
            raise _Unbuildable(label((sid, ptr)))
        return value

    @staticmethod
    def _object(ptr: Pointer, node: Mapping[str, Any], obj: dict[str, Any], steer: Pointer | None,
                build: Callable[[Pointer, Any], Any], full: bool) -> dict[str, Any]:
        required = node.get("required", [])
        for name, child in node.get("properties", {}).items():
            at = (*ptr, "properties", name)
            if name in required or at == steer:
                obj[name] = build(at, child)
            elif full:
                try:  # an optional property: left out where it cannot be built (a recursion without a base)
                    obj[name] = build(at, child)
                except _Unbuildable:
                    pass
        return obj

    @staticmethod
    def _array(ptr: Pointer, node: Mapping[str, Any], steer: Pointer | None, build: Callable[[Pointer, Any], Any],
               full: bool) -> list[Any]:
        items, count = node.get("items"), node.get("minItems", 0)
        if isinstance(items, dict) and (count or steer == (*ptr, "items")):
            one = build((*ptr, "items"), items)
            return [copy.deepcopy(one) for _ in range(max(count, 1))]
        if isinstance(items, dict) and full:
            try:
                return [build((*ptr, "items"), items)]
            except _Unbuildable:
                pass
        return []

    def _steer(self, sid: str, ptr: Pointer, node: Any, target: tuple[str, Pointer] | None) -> Pointer | None:
        """The one child of a subschema to steer through toward ``target``: the nearest (fewest ``$ref``s), first in
        document order; ``("$ref",)`` for the node's reference, ``("if",)`` for its own condition."""
        if target is None or (sid == target[0] and ptr == target[1]):
            return None
        options: list[tuple[Pointer, Any, str, Pointer]] = []
        if isinstance(node.get("$ref"), str):
            ref_sid, ref_ptr, ref_node = self.resolve(node["$ref"], sid)
            options.append((("$ref",), ref_node, ref_sid, ref_ptr))
        for name, child in node.get("properties", {}).items():
            options.append(((*ptr, "properties", name), child, sid, (*ptr, "properties", name)))
        if isinstance(node.get("items"), dict):
            options.append(((*ptr, "items"), node["items"], sid, (*ptr, "items")))
        for keyword in ("allOf", "oneOf", "anyOf"):
            for i, child in enumerate(node.get(keyword, ())):
                options.append(((*ptr, keyword, i), child, sid, (*ptr, keyword, i)))
        for keyword in ("then", "else"):
            if isinstance(node.get(keyword), dict):
                options.append((("if",), node[keyword], sid, (*ptr, keyword)))
        best: tuple[int, Pointer] | None = None
        for key, child, at_sid, at_ptr in options:
            far = self.distance(at_sid, at_ptr, child, target)
            if far is not None and (best is None or far < best[0]):
                best = (far, key)
        return None if best is None else best[1]

    def _member(self, sid: str, ptr: Pointer, node: Any, so_far: Any, target: tuple[str, Pointer] | None,
                full: bool, depth: int) -> Any:
        """An ``allOf`` member (or a node's own ``if``/``then``/``else``): a condition is made to hold when its
        ``then`` leads to ``target``, else applied as ``so_far`` meets it; any other member is built as it is."""
        if "if" not in node or set(node) - {"if", "then", "else", "description", "$comment"}:
            return self._build(sid, ptr, node, target, full, depth + 1)
        then_ptr, else_ptr = (*ptr, "then"), (*ptr, "else")
        then, otherwise = node.get("then"), node.get("else")
        to_then = self.distance(sid, then_ptr, then, target) if isinstance(then, dict) else None
        to_else = self.distance(sid, else_ptr, otherwise, target) if isinstance(otherwise, dict) else None
        if to_then is not None and (to_else is None or to_then <= to_else):
            forced = _merge(so_far, self._build(sid, (*ptr, "if"), node["if"], None, False, depth + 1))
            return _merge(forced, self._build(sid, then_ptr, then, target, full, depth + 1))
        if self._holds(node["if"], so_far):
            return so_far if then is None else _merge(so_far, self._build(sid, then_ptr, then, None, full, depth + 1))
        if otherwise is None or not set(otherwise) - {"not", "description", "$comment"}:
            if (otherwise is not None and isinstance(so_far, dict) and isinstance(then, dict)
                    and set(then) <= {"required", "description"} and all(n in so_far for n in then.get("required", ()))):
                # the members only a condition allows are there (`then` requires them, `else` forbids): meet it
                return _merge(so_far, self._build(sid, (*ptr, "if"), node["if"], None, False, depth + 1))
            return so_far  # nothing to add: a `not` only forbids
        return _merge(so_far, self._build(sid, else_ptr, otherwise, target if to_else is not None else None, full,
                                          depth + 1))

def _host(bound: Bound) -> tuple[str, Pointer]:
    """The subschema holding a bound."""
    sid, ptr = bound
    return sid, ptr[:len(ptr) - (2 if len(ptr) >= 2 and ptr[-2] == "required" else 1)]


def derived_bases(oracle: Oracle, spec: Any, wanted: set[Bound]) -> list[Document]:
    """Valid documents built from the schemas, one family per subschema holding a wanted bound: for each root the
    reference reads (an event of each registered type, wrapped in a valid example's envelope; a header; an intent;
    a storage record; a JSONL header line) that reaches the subschema, the plain instance steered through it, with
    every optional property and with the required ones only. Deterministic: sorted hosts, registry order."""
    builder = Builder(oracle)
    envelopes: list[tuple[str, str, dict[str, Any]]] = []
    for etype, entry in spec.events.items():
        examples = entry.get("examples", {}).get("valid", [])
        if examples and entry.get("payloadSchema") in oracle.schemas:
            envelopes.append((etype, entry["payloadSchema"], {k: v for k, v in examples[0]["event"].items() if k != "data"}))
    others = [r for r in (HEADER_ID, INTENT_ID, RECORD_ID, JSONL_HEADER_ID, EVENT_ID) if r in oracle.schemas]
    out: list[Document] = []
    for host in sorted({_host(b) for b in wanted}, key=label):
        for etype, payload, envelope in envelopes:
            node = oracle.schemas[payload]
            if builder.reaches(payload, (), node, host):
                for full in (True, False):
                    try:
                        data = builder.instance(payload, host, full=full)
                    except _Unbuildable:
                        continue
                    out.append((EVENT, {**envelope, "data": data}, f"built {etype} through {label(host)}"))
        for root in others:
            if builder.reaches(root, (), oracle.schemas[root], host):
                for full in (True, False):
                    try:
                        doc = builder.instance(root, host, full=full)
                    except _Unbuildable:
                        continue
                    out.append((EVENT if root == EVENT_ID else root, doc, f"built {label((root, ()))} through {label(host)}"))
    return out


def witnessed(oracle: Oracle, documents: Sequence[Document]) -> dict[Bound, str]:
    """Each bound some invalid document fails with and passes without, with that document's source."""
    candidates: dict[Bound, list[Document]] = {}
    for root, document, source in documents:
        for bound in oracle.failed(root, document):
            candidates.setdefault(bound, []).append((root, document, source))
    out = {}
    for bound, found in candidates.items():
        hit = next((s for r, d, s in found if oracle.valid(r, d, loosened=bound)), None)
        if hit is not None:
            out[bound] = hit
    return out


def generate(oracle: Oracle, bases: Sequence[Document], wanted: set[Bound]) -> dict[Bound, tuple[str, Any]]:
    """For each wanted bound a document that breaks it alone: a valid base with one value changed."""
    out: dict[Bound, tuple[str, Any]] = {}
    for root, document, _source in bases:
        if not wanted - set(out):
            break
        if not oracle.valid(root, document):
            continue
        evaluated = oracle.evaluated(root, document)
        for bound in [b for b in evaluated if b in wanted and b not in out]:
            node, keyword, value = oracle.node(bound)
            for path in evaluated[bound][:3]:
                hits = (c for c in violations(document, path, node, keyword, value)
                        if not oracle.valid(root, c) and oracle.valid(root, c, loosened=bound))
                for hit in hits:  # (a witness may be null: no `next(..., None)`)
                    out[bound] = (root, hit)
                    break
                if bound in out:
                    break
    return out


def kept(oracle: Oracle, bases: Sequence[Document], wanted: set[Bound]) -> dict[Bound, tuple[str, Any]]:
    """For each wanted bound a valid base the schemas reject once that bound alone is deleted (a kept witness):
    the candidates are the bounds that failed in a branch the base does not take."""
    out: dict[Bound, tuple[str, Any]] = {}
    for root, document, _source in bases:
        if not wanted - set(out):
            break
        if not oracle.valid(root, document):
            continue
        for bound in sorted(oracle.failed(root, document, anywhere=True) & (wanted - set(out)), key=label):
            if not oracle.valid(root, document, loosened=bound):
                out[bound] = (root, document)
    return out


def exempt(bound: Bound) -> str | None:
    """Why a bound needs no witness, or None: meta-schemas, and the keywords of a condition."""
    sid, ptr = bound
    if sid.startswith("https://sessionspec.dev/schema/meta/"):
        return ("meta-schemas describe the spec's own data files, not log content; the loader refuses a broken "
                "data file (tests/spec/test_registry_check.py)")
    if "if" in ptr or "not" in ptr:
        return ("a keyword of an `if` or `not` is a condition, not a bound: deleting it changes where a branch "
                "applies (it can only reject more); the branch's own bounds have witnesses")
    return None


_OBJECT_ONLY = frozenset({"properties", "required", "additionalProperties", "patternProperties", "minProperties",
                          "maxProperties", "dependentRequired", "propertyNames", "description", "title", "$comment"})
OPEN_REASONS: Mapping[str, str] = {}
"""Why each bound left in the witness file's ``open`` list has no witness (checked: every open bound has one).
Empty: the last one (`type/message-source/user-rpc.json#/required/1` at 2f74ac98ba) has a kept witness."""


@functools.cache
def _ref_sites(oracle: Oracle) -> list[tuple[str, Pointer, str]]:
    """Every ``$ref`` of the event schema and the spec's schemas: (holder, pointer of the referring node, target
    ``$id``); the event schema's holder is EVENT."""
    builder = Builder(oracle)
    docs: list[tuple[str, Any]] = [(EVENT, oracle.event_schema), *sorted(oracle.schemas.items())]
    out = []
    for sid, doc in docs:
        for ptr, node in subschemas(doc):
            ref = node.get("$ref")
            if isinstance(ref, str):
                target = ref.partition("#")[0] or sid
                out.append((sid, ptr, target if sid != EVENT or target else builder.resolve(ref, sid)[0]))
    return out


@functools.cache
def reached(oracle: Oracle) -> frozenset[str]:
    """The schema documents a document the reference reads is checked against: the event schema (envelope and the
    payload schemas of the registered types), the header, the append intent, the storage record, the JSONL header
    line, and everything they reference."""
    sites: dict[str, set[str]] = {}
    for holder, _ptr, target in _ref_sites(oracle):
        sites.setdefault(holder, set()).add(target)
    seen: set[str] = set()
    todo = [EVENT, *_ROOTS]
    while todo:
        sid = todo.pop()
        if sid not in seen:
            seen.add(sid)
            todo.extend(sites.get(sid, ()))
    return frozenset(seen - {EVENT})


def _pins(guard: Any, keyword: str, value: Any, name: str | None) -> bool:
    """Whether an ``if`` that holds already forces a bound: ``type: object``, a required name, a required property's
    ``const``/``enum`` (the guard's values among the bound's)."""
    if not isinstance(guard, dict):
        return False
    if keyword == "type":
        return value == "object" and guard.get("type") == "object"
    if keyword == "required":
        return value in guard.get("required", ()) and guard.get("type") == "object"
    prop = guard.get("properties", {}).get(name, {})
    allowed = [prop["const"]] if "const" in prop else prop.get("enum")
    if name not in guard.get("required", ()) or not isinstance(allowed, list) or keyword not in ("const", "enum"):
        return False
    taken = [value] if keyword == "const" else list(value)
    return bool(allowed) and all(any(_same(a, t) for t in taken) for a in allowed)


def _same(a: Any, b: Any) -> bool:
    """JSON equality (``1`` is not ``true``)."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def exempt_at(oracle: Oracle, bound: Bound) -> str | None:
    """Why a bound of this revision's schemas needs no witness, beyond ``exempt``: its schema is not reached from
    any document the reference reads at this revision, or every use of it sits in a ``then`` whose ``if`` already
    forces the bound (so no document can break it alone)."""
    sid = bound[0]
    if sid not in reached(oracle):
        return "not reached at this revision: no registered type, header, intent, record or log header uses this schema"
    node, keyword, value = oracle.node(bound)
    host = _host(bound)[1]
    branches = node.get("oneOf", ())
    if keyword == "type" and value == "object" and len(branches) >= 2 and all(
            isinstance(b, dict) and set(b) <= _OBJECT_ONLY for b in branches):
        return ("a non-object meets every `oneOf` branch (their keywords constrain objects only), so `oneOf` refuses "
                "it without this bound: no document breaks it alone")
    if keyword in ("const", "enum") and len(host) == 2 and host[0] == "properties":
        name: str | None = str(host[1])
    elif keyword in ("type", "required") and host == ():
        name = None
    else:
        return None
    sites = [(holder, at) for holder, at, target in _ref_sites(oracle) if target == sid]
    if not sites or sid in _ROOTS:
        return None  # a root is read as it is, unguarded
    for holder, at in sites:
        doc: Any = oracle.event_schema if holder == EVENT else oracle.schemas[holder]
        cut = max((i for i, part in enumerate(at) if part == "then"), default=None)
        if cut is None or any(part not in ("allOf", "anyOf", "oneOf") and not isinstance(part, int)
                              for part in at[cut + 1:]):
            return None  # not a branch at the guarded instance itself
        parent: Any = doc
        for part in at[:cut]:
            parent = parent[part]
        if not _pins(parent.get("if"), keyword, value, name):
            return None
    return ("forced by its guard: every use of this schema is a `then` whose `if` already requires it, so a "
            "document breaking it takes the branch away and no document breaks it alone")


@functools.cache
def survey(revision: str) -> tuple[Oracle, frozenset[Bound], dict[Bound, str]]:
    """The oracle of one revision, its bounds, and those witnessed by the spec and the corpus."""
    from sessionspec.spec import load_spec

    spec = load_spec(revision=revision)
    oracle = Oracle(spec.schemas, spec.event_schema)
    return oracle, oracle.bounds, witnessed(oracle, labelled_invalid(spec, revision))


def witnesses_at(oracle: Oracle, entry: Mapping[str, Any]) -> bool:
    """Whether a witness entry (``bound``, ``root``, ``document``, ``kept`` for a kept witness) witnesses its bound
    under ``oracle``: its verdict with the bound is ``kept``, and the other one without it."""
    bound = {label(b): b for b in oracle.bounds}.get(entry["bound"])
    verdict = bool(entry.get("kept", False))
    return bound is not None and oracle.valid(entry["root"], entry["document"]) is verdict \
        and oracle.valid(entry["root"], entry["document"], loosened=bound) is not verdict


def write_witnesses(path: Path = WITNESS_FILE) -> tuple[int, int]:
    """Regenerate the witness file: for each revision, a generated witness of every bound the spec and the corpus
    do not witness (one entry serves every revision where it witnesses), and the bounds no generated document
    reaches (``open``). Returns (entries, open bounds)."""
    from sessionspec.spec import load_spec
    from sessionspec.spec.revisions import known_revisions

    from .report import atomic_write_text

    entries: list[dict[str, Any]] = []
    still_open: set[str] = set()
    exempted: dict[tuple[str, str], list[str]] = {}
    for revision in known_revisions():
        oracle, bounds, hit = survey(revision)
        wanted = set()
        for b in bounds:
            if exempt(b) is not None or b in hit:
                continue
            reason = exempt_at(oracle, b)
            if reason is None:
                wanted.add(b)
            else:
                exempted.setdefault((label(b), reason), []).append(revision)
        for entry in entries:
            bound = next((b for b in wanted if label(b) == entry["bound"]), None)
            if bound is not None and witnesses_at(oracle, entry):
                entry["revisions"].append(revision)
                wanted.discard(bound)
        spec = load_spec(revision=revision)
        bases = valid_bases(spec, revision)
        made = generate(oracle, bases, wanted)
        rest = wanted - set(made)
        derived = derived_bases(oracle, spec, rest) if rest else []
        if rest:
            made.update(generate(oracle, derived, rest))
        for bound, (root, document) in made.items():
            entries.append({"bound": label(bound), "revisions": [revision], "root": root, "document": document})
        rest = wanted - set(made)
        if rest:
            for bound, (root, document) in kept(oracle, [*bases, *derived], rest).items():
                entries.append({"bound": label(bound), "revisions": [revision], "root": root, "document": document,
                                "kept": True})
                made[bound] = (root, document)
        still_open |= {label(b) for b in wanted if b not in made}
    entries.sort(key=lambda e: (e["bound"], e["revisions"]))
    lines = ['{', '  "$comment": "GENERATED by `python -m sessionspec.conformance.schema_bounds --write`: for each schema '
             'bound no registry example or vector witnesses at a revision, a document that breaks it alone (invalid, '
             'valid once the bound is deleted; with `kept`, valid and invalid once it is deleted) at the revisions '
             'listed; `exempt` names the bounds no document can break '
             'alone at a revision, with the reason (schema_bounds.exempt_at); `open` lists the bounds no valid document '
             'reaches yet. tests/spec/test_schema_bounds.py checks both.",', '  "witnesses": [']
    lines.append(",\n".join("    " + json.dumps(e, ensure_ascii=False, separators=(",", ":")) for e in entries))
    lines.append("  ],")
    lines.append('  "exempt": [')
    lines.append(",\n".join("    " + json.dumps({"bound": name, "revisions": revs, "reason": reason}, ensure_ascii=False,
                                                  separators=(",", ":")) for (name, reason), revs in sorted(exempted.items())))
    lines.append("  ],")
    lines.append('  "open": ' + json.dumps(sorted(still_open), indent=4).replace("\n", "\n  ") + "\n}")
    atomic_write_text(path, "\n".join(lines) + "\n")
    return len(entries), len(still_open)


def uncovered(revision: str, data: Mapping[str, Any]) -> list[str]:
    """The bounds of ``revision`` with no witness: not exempt, not witnessed by the spec or the corpus, no entry
    of the witness file ``data`` for this revision, not listed open."""
    oracle, bounds, hit = survey(revision)
    covered = {w["bound"] for w in data["witnesses"] if revision in w["revisions"]} | set(data["open"])
    return sorted(label(b) for b in bounds if exempt(b) is None and b not in hit and label(b) not in covered
                  and exempt_at(oracle, b) is None)


def main(argv: Sequence[str] | None = None) -> int:
    """``--write``: regenerate the witness file; else list the bounds without a witness (exit 1 if any is new)."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m sessionspec.conformance.schema_bounds",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help=f"regenerate {WITNESS_FILE.name}")
    args = parser.parse_args(argv)
    if args.write:
        made, still_open = write_witnesses()
        print(f"wrote {WITNESS_FILE.name}: {made} generated witnesses, {still_open} open bounds")
        return 0
    from sessionspec.spec.revisions import known_revisions

    data = json.loads(WITNESS_FILE.read_text(encoding="utf-8"))
    new = sorted({name for revision in known_revisions() for name in uncovered(revision, data)})
    for name in new:
        print(f"no witness: {name}")
    return 1 if new else 0


if __name__ == "__main__":
    raise SystemExit(main())
