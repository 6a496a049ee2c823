"""Hypothesis strategies derived from the spec's own schemas: instances of every registry type, header and row.

The fast evaluations of the schemas (the compiled predicates, the generated `core_fast` module, the msgspec
types, detection's payload checks) are tested against python-jsonschema on values drawn here. The values
are built from the schema documents themselves (types, properties, required keys, bounds, patterns, enums,
tag dispatch by ``if``/``then``), so a new type or a new bound is exercised without a hand-written example;
`schema_mutants` then edits them at random, so both sides of every bound are drawn.

The generator aims at valid instances but need not be exact: the tests compare verdicts on whatever it
draws, and `test_schema_evaluations.py` checks that it reaches a valid instance of every schema.
"""

from __future__ import annotations

import copy
import functools
import json
from collections.abc import Mapping
from typing import Any

from cli_strategies import JSON, mutate
from hypothesis import strategies as st

JSON_VALUE_ID = "https://sessionspec.dev/schema/common/json-value.json"
_MAX_SAFE = 2**53 - 1
_DEPTH = 10  # beyond it a schema yields any JSON value (deep enough for every payload of the spec)


def _absolute(schema: Any, base: str) -> Any:
    """A copy of `schema` whose fragment-only ``$ref`` (``#/$defs/x``) name their document."""
    if isinstance(schema, dict):
        out = {k: _absolute(v, base) for k, v in schema.items()}
        ref = out.get("$ref")
        if isinstance(ref, str) and ref.startswith("#"):
            out["$ref"] = base + ref
        return out
    if isinstance(schema, list):
        return [_absolute(v, base) for v in schema]
    return schema


class Instances:
    """Strategies for the instances of one spec's schemas (its ``schemas`` by ``$id``)."""

    def __init__(self, spec: Any, *, edges: bool = True) -> None:
        """`edges`: now and then a drawn part breaks one keyword of its schema (a string one shorter than
        ``minLength``, a number past its bound, a required key left out, an unknown key, a value outside the
        enum), so the far side of every bound is drawn too; without it the drawn values aim at valid ones."""
        self.spec = spec
        self.edges = edges
        self.documents = {sid: _absolute(doc, sid) for sid, doc in spec.schemas.items()}

    def lookup(self, ref: str) -> Any:
        """The subschema a (absolute) ``$ref`` names."""
        uri, _, pointer = ref.partition("#")
        node = self.documents[uri]
        for token in filter(None, pointer.split("/")):
            token = token.replace("~1", "/").replace("~0", "~")
            node = node[int(token)] if isinstance(node, list) else node[token]
        return node

    # -- flattening: $ref and allOf merged into one keyword set, conditionals kept aside -----------------

    def flat(self, schema: Any, depth: int = 0) -> dict[str, Any]:
        """`schema` with its ``$ref`` and ``allOf`` merged in; ``if``/``then``/``else`` listed under ``__conds``."""
        if schema is True or schema == {}:
            return {}
        if schema is False:
            return {"not": {}}
        out: dict[str, Any] = {}
        own = dict(schema)
        if own.get("$id") == JSON_VALUE_ID:
            return {}  # every JSON value: no keyword to meet
        parts = [self.lookup(own.pop("$ref"))] if "$ref" in own else []
        parts += own.pop("allOf", [])
        conds = []
        if "if" in own:
            conds.append((own.pop("if"), own.pop("then", True), own.pop("else", True)))
        own.pop("then", None), own.pop("else", None)
        for part in [own, *(self.flat(p, depth + 1) for p in parts)]:
            _merge(out, part)
        out.setdefault("__conds", [])
        out["__conds"] = [*out["__conds"], *conds]
        return out

    # -- generation --------------------------------------------------------------------------------------

    def of(self, schema: Any, depth: int = 0, fixed: Mapping[str, st.SearchStrategy[Any]] | None = None
           ) -> st.SearchStrategy[Any]:
        """Instances of `schema` (mostly valid); `fixed` gives the strategy of some properties of an object."""
        if depth > _DEPTH:
            return JSON
        flat = self.flat(schema)
        base = self._plain(flat, depth, fixed or {})
        if not flat.get("__conds"):
            return base
        return base.flatmap(lambda value: self._conditioned(flat, value, depth, fixed or {}))

    def _conditioned(self, flat: dict[str, Any], value: Any, depth: int,
                     fixed: Mapping[str, st.SearchStrategy[Any]]) -> st.SearchStrategy[Any]:
        """Regenerate `value` under the branches its conditions choose, its discriminators kept."""
        merged = {k: v for k, v in flat.items() if k != "__conds"}
        chosen = False
        for condition, then, otherwise in flat["__conds"]:
            holds = self.accepts(condition, value)
            branch = then if holds else otherwise
            if branch is True:
                continue
            chosen = True
            _merge(merged, self.flat(branch))
            if isinstance(value, dict):  # keep what the condition looked at
                for key in _condition_keys(condition):
                    if key in value:
                        merged.setdefault("properties", {})
                        merged["properties"] = {**merged["properties"],
                                                key: {"allOf": [merged["properties"].get(key, True), {"const": value[key]}]}}
        if not chosen:
            return st.just(value)
        return self.of(merged, depth + 1, fixed) if merged.get("__conds") else self._plain(merged, depth, fixed)

    def accepts(self, schema: Any, value: Any) -> bool:
        """The oracle's verdict on a subschema (to pick a branch while generating)."""
        return _oracle(self, json.dumps(schema, sort_keys=True))(value)

    def _edge(self, valid: st.SearchStrategy[Any], *invalid: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        """`valid`, or (one draw in 16) one of the `invalid` strategies: a part that breaks one keyword."""
        if not self.edges or not invalid:
            return valid
        broken = st.one_of(invalid)
        return st.integers(0, 15).flatmap(lambda k: broken if k == 0 else valid)

    def _plain(self, flat: dict[str, Any], depth: int, fixed: Mapping[str, st.SearchStrategy[Any]]
               ) -> st.SearchStrategy[Any]:
        if "const" in flat:
            return self._edge(st.just(copy.deepcopy(flat["const"])), JSON, st.just("x"))
        if "enum" in flat:
            return self._edge(st.sampled_from(flat["enum"]).map(copy.deepcopy), JSON, st.just("x"))
        branches = flat.get("oneOf") or flat.get("anyOf")
        if branches:
            rest = {k: v for k, v in flat.items() if k not in ("oneOf", "anyOf", "__conds")}
            return st.one_of([self.of({"allOf": [rest, branch]} if rest else branch, depth + 1, fixed)
                              for branch in branches])
        kinds = flat.get("type")
        if kinds is None:
            kinds = _implied_type(flat)
        if isinstance(kinds, list):
            return st.one_of([self._plain({**flat, "type": kind}, depth, fixed) for kind in kinds])
        if kinds == "object":
            return self._object(flat, depth, fixed)
        if kinds == "array":
            items = self.of(flat.get("items", True), depth + 1)
            low = flat.get("minItems", 0)
            high = min(flat.get("maxItems", low + 3), low + 3)
            broken = [st.lists(items, max_size=low - 1)] if low else []
            if "maxItems" in flat:
                broken.append(st.lists(items, min_size=flat["maxItems"] + 1, max_size=flat["maxItems"] + 2))
            if flat.get("uniqueItems"):
                broken.append(items.map(lambda v: [v, copy.deepcopy(v)]))
                valid = st.lists(items, min_size=low, max_size=high, unique_by=lambda v: json.dumps(v, sort_keys=True))
            else:
                valid = st.lists(items, min_size=low, max_size=high)
            return self._edge(valid, *broken, JSON)
        if kinds in ("integer", "number"):
            return self._edge(_numbers(flat, kinds), _past_bounds(flat, kinds), JSON)
        if kinds == "string":
            return self._edge(_strings(flat), *_broken_strings(flat), JSON)
        if kinds == "boolean":
            return self._edge(st.booleans(), st.sampled_from([0, 1, None, "true"]))
        if kinds == "null":
            return self._edge(st.none(), st.sampled_from([0, False, ""]))
        return JSON

    def _object(self, flat: dict[str, Any], depth: int, fixed: Mapping[str, st.SearchStrategy[Any]]
                ) -> st.SearchStrategy[dict[str, Any]]:
        properties = {key: sub for key, sub in flat.get("properties", {}).items()
                      if self.flat(sub).get("not") not in ({}, True)}  # a forbidden key is never drawn
        required = set(flat.get("required", ()))
        fields = {key: fixed[key] if key in fixed else self.of(sub, depth + 1) for key, sub in properties.items()}
        fields.update({key: fixed[key] for key in fixed if key not in fields})
        extra = flat.get("additionalProperties", True)
        extras: st.SearchStrategy[dict[str, Any]] = st.just({})
        if extra is not False and (not properties or flat.get("minProperties")):
            low = flat.get("minProperties", 0)
            extras = st.dictionaries(st.text(min_size=1, max_size=6), self.of(extra, depth + 1),
                                     min_size=low, max_size=min(low + 2, flat.get("maxProperties", low + 2)))

        closed = extra is False

        @st.composite
        def build(draw: st.DrawFn) -> dict[str, Any]:
            out = dict(draw(extras))
            for key, strategy in fields.items():
                if key in required or key in fixed or draw(st.booleans()):
                    out[key] = draw(strategy)
            for key in required - out.keys():  # required but not described: any value
                out[key] = draw(JSON)
            return out

        @st.composite
        def broken(draw: st.DrawFn) -> dict[str, Any]:
            out = draw(build())
            droppable = sorted(required - fixed.keys())
            if droppable and (not closed or draw(st.booleans())):
                del out[draw(st.sampled_from(droppable))]
            else:
                out[draw(st.sampled_from(["zz", "x", "TYPE"]))] = draw(JSON)
            return out

        return self._edge(build(), broken()) if required or closed else build()

    def event(self, event_type: str, depth: int = 0) -> st.SearchStrategy[dict[str, Any]]:
        """Events of one registered type: the spec's event schema (envelope and payload dispatch), its type fixed."""
        return self.of(self.spec.event_schema, depth, fixed={"type": st.just(event_type)})

    def events(self) -> st.SearchStrategy[dict[str, Any]]:
        """Events of every registered type."""
        return st.sampled_from(sorted(self.spec.events)).flatmap(self.event)


@functools.lru_cache(maxsize=512)
def _oracle(instances: Instances, text: str) -> Any:
    from jsonschema import Draft202012Validator

    validator = Draft202012Validator(json.loads(text), registry=instances.spec.registry)
    return validator.is_valid


def _condition_keys(condition: Any) -> list[str]:
    return list(condition.get("properties", {})) if isinstance(condition, dict) else []


def _implied_type(flat: dict[str, Any]) -> str | None:
    if {"properties", "required", "additionalProperties", "minProperties"} & flat.keys():
        return "object"
    if {"items", "minItems", "maxItems", "uniqueItems"} & flat.keys():
        return "array"
    if {"minLength", "maxLength", "pattern"} & flat.keys():
        return "string"
    if {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"} & flat.keys():
        return "number"
    return None


def _merge(into: dict[str, Any], part: dict[str, Any]) -> None:
    """Conjunction of two keyword sets, as far as generation needs it."""
    for key, value in part.items():
        if key not in into:
            into[key] = value
        elif key == "properties":
            into[key] = {**into[key], **{k: ({"allOf": [into[key][k], v]} if k in into[key] else v) for k, v in value.items()}}
        elif key == "required":
            into[key] = sorted(set(into[key]) | set(value))
        elif key == "__conds":
            into[key] = [*into[key], *value]
        elif key in ("minimum", "minLength", "minItems", "minProperties", "exclusiveMinimum"):
            into[key] = max(into[key], value)
        elif key in ("maximum", "maxLength", "maxItems", "maxProperties", "exclusiveMaximum"):
            into[key] = min(into[key], value)
        elif key == "additionalProperties":
            into[key] = False if False in (into[key], value) else into[key]
        elif key == "type" and isinstance(into[key], list) and not isinstance(value, list):
            into[key] = value if value in into[key] else into[key]
        elif key == "items":
            into[key] = {"allOf": [into[key], value]}


def _numbers(flat: dict[str, Any], kind: str) -> st.SearchStrategy[Any]:
    low = flat.get("minimum", -_MAX_SAFE)
    high = flat.get("maximum", _MAX_SAFE)
    if "exclusiveMinimum" in flat:
        low = max(low, flat["exclusiveMinimum"] + 1)
    if "exclusiveMaximum" in flat:
        high = min(high, flat["exclusiveMaximum"] - 1)
    low, high = int(low), int(high)
    whole = st.one_of(st.integers(max(low, -3), min(high, 1_000)) if max(low, -3) <= min(high, 1_000) else st.nothing(),
                      st.sampled_from(sorted({low, high})), st.integers(low, high))
    if kind == "integer":
        return whole
    return st.one_of(whole, st.floats(low, high, allow_nan=False, allow_infinity=False))


def _strings(flat: dict[str, Any]) -> st.SearchStrategy[str]:
    low, high = flat.get("minLength", 0), flat.get("maxLength")
    cap = high if high is not None else low + 12
    if "pattern" in flat:
        return st.from_regex(flat["pattern"]).filter(lambda s: low <= len(s) <= cap)
    return st.text(min_size=low, max_size=cap)


def _past_bounds(flat: dict[str, Any], kind: str) -> st.SearchStrategy[Any]:
    """Numbers just outside the schema's bounds, a fraction where it says integer, and the wrong kinds."""
    out: list[Any] = [True, "1", None]
    for word, step in (("minimum", -1), ("maximum", 1), ("exclusiveMinimum", 0), ("exclusiveMaximum", 0)):
        if word in flat:
            out += [flat[word] + step, flat[word] + step / 2]
    if kind == "integer":
        out += [1.5, 2**53, -(2**53)]
    return st.sampled_from(out)


def _broken_strings(flat: dict[str, Any]) -> list[st.SearchStrategy[Any]]:
    """Strings one outside the length bounds, or that miss the pattern; a number in place of a string."""
    out: list[st.SearchStrategy[Any]] = [st.sampled_from([0, None, ["a"]])]
    if flat.get("minLength", 0) > 0:
        out.append(st.text(max_size=flat["minLength"] - 1))
    if "maxLength" in flat:
        out.append(st.text(min_size=flat["maxLength"] + 1, max_size=flat["maxLength"] + 2))
    if "pattern" in flat:
        out.append(st.text(max_size=12))
    return out


def schema_mutants(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Instances as drawn, or with one to three random edits (the far side of a bound, a wrong kind)."""

    @st.composite
    def edited(draw: st.DrawFn) -> Any:
        value = draw(strategy)
        return value if draw(st.booleans()) else mutate(draw, value)

    return edited()
