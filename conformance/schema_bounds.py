"""The bounds of the spec's schemas, and documents that violate exactly one of them (issue 26).

A *bound* is one keyword that restricts a value (``maximum``, ``minLength``, ``pattern``, ``enum``, ``const``,
``type``, an entry of ``required``, ``additionalProperties: false``, ...) at a place in one schema document,
named by the schema's ``$id`` and the JSON pointer of the keyword. A *witness* of a bound is a document the
schemas reject and accept once that bound alone is deleted: the evidence that the bound does something.
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

__all__ = ["BOUND_KEYWORDS", "EVENT", "WITNESS_FILE", "Bound", "Oracle", "bounds_of", "exempt", "generate", "label",
           "labelled_invalid", "main", "survey", "uncovered", "valid_bases", "violations", "without", "witnessed", "witnesses_at", "write_witnesses"]

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

    def failed(self, root: str, document: Any) -> set[Bound]:
        """The bounds whose keyword failed on ``document`` (empty when the document is valid)."""
        notes = self._run(root, document)
        if not self.invalid:
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
                hit = next((c for c in violations(document, path, node, keyword, value)
                            if not oracle.valid(root, c) and oracle.valid(root, c, loosened=bound)), None)
                if hit is not None:
                    out[bound] = (root, hit)
                    break
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


@functools.cache
def survey(revision: str) -> tuple[Oracle, frozenset[Bound], dict[Bound, str]]:
    """The oracle of one revision, its bounds, and those witnessed by the spec and the corpus."""
    from sessionspec.spec import load_spec

    spec = load_spec(revision=revision)
    oracle = Oracle(spec.schemas, spec.event_schema)
    return oracle, oracle.bounds, witnessed(oracle, labelled_invalid(spec, revision))


def witnesses_at(oracle: Oracle, entry: Mapping[str, Any]) -> bool:
    """Whether a witness entry (``bound``, ``root``, ``document``) witnesses its bound under ``oracle``."""
    bound = {label(b): b for b in oracle.bounds}.get(entry["bound"])
    return bound is not None and not oracle.valid(entry["root"], entry["document"]) \
        and oracle.valid(entry["root"], entry["document"], loosened=bound)


def write_witnesses(path: Path = WITNESS_FILE) -> tuple[int, int]:
    """Regenerate the witness file: for each revision, a generated witness of every bound the spec and the corpus
    do not witness (one entry serves every revision where it witnesses), and the bounds no generated document
    reaches (``open``). Returns (entries, open bounds)."""
    from sessionspec.spec import load_spec
    from sessionspec.spec.revisions import known_revisions

    from .report import atomic_write_text

    entries: list[dict[str, Any]] = []
    still_open: set[str] = set()
    for revision in known_revisions():
        oracle, bounds, hit = survey(revision)
        wanted = {b for b in bounds if exempt(b) is None and b not in hit}
        for entry in entries:
            bound = next((b for b in wanted if label(b) == entry["bound"]), None)
            if bound is not None and witnesses_at(oracle, entry):
                entry["revisions"].append(revision)
                wanted.discard(bound)
        made = generate(oracle, valid_bases(load_spec(revision=revision), revision), wanted)
        for bound, (root, document) in made.items():
            entries.append({"bound": label(bound), "revisions": [revision], "root": root, "document": document})
        still_open |= {label(b) for b in wanted if b not in made}
    entries.sort(key=lambda e: (e["bound"], e["revisions"]))
    lines = ['{', '  "$comment": "GENERATED by `python -m sessionspec.conformance.schema_bounds --write`: for each schema '
             'bound no registry example or vector witnesses at a revision, a document that breaks it alone (invalid, '
             'valid once the bound is deleted) at the revisions listed; `open` lists the bounds no valid document '
             'reaches yet. tests/spec/test_schema_bounds.py checks both.",', '  "witnesses": [']
    lines.append(",\n".join("    " + json.dumps(e, ensure_ascii=False, separators=(",", ":")) for e in entries))
    lines.append("  ],")
    lines.append('  "open": ' + json.dumps(sorted(still_open), indent=4).replace("\n", "\n  ") + "\n}")
    atomic_write_text(path, "\n".join(lines) + "\n")
    return len(entries), len(still_open)


def uncovered(revision: str, data: Mapping[str, Any]) -> list[str]:
    """The bounds of ``revision`` with no witness: not exempt, not witnessed by the spec or the corpus, no entry
    of the witness file ``data`` for this revision, not listed open."""
    _oracle, bounds, hit = survey(revision)
    covered = {w["bound"] for w in data["witnesses"] if revision in w["revisions"]} | set(data["open"])
    return sorted(label(b) for b in bounds if exempt(b) is None and b not in hit and label(b) not in covered)


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
