"""Compile the spec's JSON Schemas into fast Python predicates.

`python-jsonschema` validates a few thousand events per second: far too slow
for logs of hundreds of thousands of events. This module turns each schema
(Draft 2020-12, as the spec writes them) into generated Python source for the
keyword subset the spec uses, so a valid event costs a handful of dict and
type tests. The schema stays the single source of truth: nothing here
restates the vocabulary.

Exactness rules:

* the predicate's verdict equals ``jsonschema``'s ``is_valid`` for every JSON
  value (tests compare both on registry examples and Hypothesis mutations);
* a keyword that the oracle's validator class implements but this compiler
  does not (``multipleOf``, ``contains``, ``unevaluated*``, ``$dynamicRef``,
  ``format`` when a format checker is on, ...) is delegated, for that
  subschema only, to the oracle itself;
* keywords the oracle ignores (annotations, unknown words) are ignored here too;
* only the verdict is computed here. Error *locations* always come from the
  oracle (`CompiledSchema.errors`), so both paths report identical pointers.

Two optimisations keep logs fast: schemas that accept every JSON value (the
recursive ``JsonValue`` definitions) compile to nothing, so payloads nested
100,000 levels deep are never walked; and ``anyOf``/``oneOf`` over branches
that each pin a required key with ``const`` (discriminated unions on ``type``
or ``kind``) dispatch through a dict instead of trying every branch.
"""

from __future__ import annotations

import functools
import itertools
import math
import numbers
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from types import CodeType
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias

from sessionspec.spec.schema_types import JsonObject, JsonValue

if TYPE_CHECKING:  # jsonschema and referencing load only when a schema is compiled or an error located
    from jsonschema.exceptions import ValidationError
    from referencing import Registry, Resource

__all__ = ["PASSIVE_KEYWORDS", "CompiledSchema", "Resolved", "Resolver", "compile_schema", "root_scope", "schema_accepts", "schema_errors"]


Schema: TypeAlias = "JsonObject | bool"
"""A JSON Schema document (an object, or ``true``/``false``)."""


class Oracle(Protocol):
    """What the compiler uses of a python-jsonschema validator (the oracle): its public members only."""

    VALIDATORS: Mapping[str, object]

    def is_valid(self, instance: JsonValue) -> bool: ...

    def iter_errors(self, instance: JsonValue) -> Iterable[ValidationError]: ...

    def descend(self, instance: JsonValue, schema: Schema, *, resolver: Resolver) -> Iterable[ValidationError]: ...


class Resolved(Protocol):
    """What a `Resolver.lookup` gives: the schema a ``$ref`` names, and the scope to evaluate it in."""

    @property
    def contents(self) -> Schema: ...

    @property
    def resolver(self) -> Resolver: ...


class Resolver(Protocol):
    """What the compiler uses of a `referencing` resolver (its public methods only)."""

    def lookup(self, ref: str) -> Resolved: ...

    def in_subresource(self, subresource: Resource[Schema]) -> Resolver: ...


def schema_accepts(oracle: Oracle, schema: Schema, resolver: Resolver, instance: JsonValue) -> bool:
    """The oracle's verdict on `instance` for a subschema evaluated in `resolver`'s scope.

    Uses the validator's public `descend` (what keyword implementations call), so no private
    attribute of jsonschema is touched.
    """
    return next(iter(oracle.descend(instance, schema, resolver=resolver)), None) is None


def _equal(one: Any, two: Any) -> bool:
    """JSON Schema equality (`const`, `enum`, `uniqueItems`): 1 == 1.0, but a bool equals only a bool."""
    if one is two:
        return True
    if isinstance(one, str) or isinstance(two, str):
        return bool(one == two)
    if isinstance(one, Sequence) and isinstance(two, Sequence):
        return len(one) == len(two) and all(_equal(a, b) for a, b in zip(one, two))
    if isinstance(one, Mapping) and isinstance(two, Mapping):
        return one.keys() == two.keys() and all(_equal(one[k], two[k]) for k in one)
    if isinstance(one, bool) or isinstance(two, bool):
        return type(one) is type(two) and bool(one == two)
    return bool(one == two)

_MISSING = object()
_LITERAL_INT = 2**63  # a wider int from a schema is a constant the code reads (its repr may be refused)
_ALL_TYPES = frozenset({"null", "boolean", "number", "string", "array", "object"})
# Keywords this compiler implements exactly (others known to the oracle fall back).
_COMPILED = frozenset(
    {
        "type", "enum", "const", "properties", "required", "additionalProperties", "patternProperties",
        "propertyNames", "minProperties", "maxProperties", "dependentRequired", "items", "prefixItems",
        "minItems", "maxItems", "uniqueItems", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
        "minLength", "maxLength", "pattern", "allOf", "anyOf", "oneOf", "not", "if", "then", "else", "$ref",
    }
)
# `then`/`else` are evaluated by `if`; alone they mean nothing (as in the oracle).
PASSIVE_KEYWORDS = frozenset({"then", "else", "$defs", "definitions", "$id", "$schema", "$anchor", "$comment"})


def _is_number(x: Any) -> bool:
    return isinstance(x, numbers.Number) and not isinstance(x, bool)


_SCALAR_TYPES = frozenset({int, float, str, type(None)})


def _unique(x: list[Any]) -> bool:
    """``uniqueItems``: a set when every item is a hashable non-bool scalar (same equality as the oracle)."""
    if set(map(type, x)) <= _SCALAR_TYPES:
        return len(set(x)) == len(x)
    return not any(_equal(a, b) for i, a in enumerate(x) for b in x[i + 1:])


def _is_integer(x: Any) -> bool:
    if isinstance(x, bool):
        return False
    if isinstance(x, int):
        return True
    return isinstance(x, float) and x.is_integer()


_TYPE_TESTS: dict[str, str] = {
    "object": "isinstance({v}, dict)",
    "array": "isinstance({v}, list)",
    "string": "isinstance({v}, str)",
    "null": "{v} is None",
    "boolean": "isinstance({v}, bool)",
    "integer": "(type({v}) is int or _is_integer({v}))",
    "number": "(type({v}) is int or type({v}) is float or _is_number({v}))",
}


def _const_verdict(schema: Any, value: str, known: frozenset[str]) -> bool | None:
    """Whether a string `value` satisfies a small `schema` (``const``/``enum``/``type`` only), or None."""
    if schema is True or schema is False:
        return schema
    if not isinstance(schema, dict) or "$ref" in schema:
        return None
    verdict = True
    for kw, expected in schema.items():
        if kw not in known or kw in PASSIVE_KEYWORDS:
            continue
        if kw == "const":
            verdict = verdict and (isinstance(expected, str) and expected == value)
        elif kw == "enum":
            if not isinstance(expected, list):
                return None
            verdict = verdict and any(isinstance(e, str) and e == value for e in expected)
        elif kw == "type":
            names = [expected] if isinstance(expected, str) else expected
            if not isinstance(names, list):
                return None
            verdict = verdict and "string" in names
        else:
            return None
    return verdict


class _Compiler:
    """Generates one Python module of predicates for a schema and everything it references."""

    def __init__(self, oracle: Any, fallback_keywords: frozenset[str]) -> None:
        self.oracle = oracle
        self.known = frozenset(oracle.VALIDATORS)
        self.fallback_keywords = fallback_keywords
        self.lines: list[str] = []
        self.env: dict[str, Any] = {
            "_M": _MISSING,
            "_is_integer": _is_integer,
            "_is_number": _is_number,
            "_equal": _equal,
            "_uniq": _unique,
            "_INT": frozenset({int}),
            "_NUM": frozenset({int, float}),
            "_STR": frozenset({str}),
            "_len": len,
        }
        self.functions: dict[int, str] = {}
        self.counter = itertools.count()
        self.tail: list[str] = []  # dispatch tables, defined after every function
        self.fallbacks: list[str] = []  # keywords delegated to the oracle (for reports and tests)
        self.universal_cache: dict[int, frozenset[str]] = {}
        self.inlining: set[int] = set()
        self._keep: list[Any] = []  # keeps schema objects alive so id() keys stay unique
        # Partial evaluation: variable -> {key: str value} known to hold (the variable is a dict with
        # those keys and values). Set only while emitting a function specialised for one tag value.
        self.facts: dict[str, dict[str, str]] = {}

    # -- helpers ---------------------------------------------------------
    def const(self, value: Any, prefix: str = "_c") -> str:
        name = f"{prefix}{next(self.counter)}"
        self.env[name] = value
        return name

    def var(self) -> str:
        return f"x{next(self.counter)}"

    def lit(self, value: Any) -> str:
        """Source text for a value taken from a schema: the repr of a checked ``str``, ``bool``, ``None``,
        machine-sized ``int`` or finite ``float`` (a literal equal to the value), else the name of a
        constant the code reads. Schema content is only ever data to the generated code."""
        kind = type(value)
        if value is None or kind is str or kind is bool or (kind is float and math.isfinite(value)) or (
                kind is int and -_LITERAL_INT < value < _LITERAL_INT):
            return repr(value)
        return self.const(value)

    @staticmethod
    def sub_resolver(schema: Any, resolver: Resolver) -> Resolver:
        if isinstance(schema, dict) and "$id" in schema:
            from referencing.jsonschema import DRAFT202012

            return resolver.in_subresource(DRAFT202012.create_resource(schema))
        return resolver

    # -- universal schemas -------------------------------------------------
    def covered_types(self, schema: Any, resolver: Resolver, active: dict[int, bool], guarded: bool) -> frozenset[str]:
        """JSON types on which `schema` accepts *every* value (greatest fixpoint over guarded recursion)."""
        if schema is True:
            return _ALL_TYPES
        if not isinstance(schema, dict):
            return frozenset()
        key = id(schema)
        if key in active:
            return _ALL_TYPES if guarded or active[key] else frozenset()
        if key in self.universal_cache:
            return self.universal_cache[key]
        self._keep.append(schema)
        active[key] = guarded
        resolver = self.sub_resolver(schema, resolver)
        try:
            types = _ALL_TYPES
            for kw, value in schema.items():
                if kw not in self.known or kw in PASSIVE_KEYWORDS:
                    continue
                if kw == "type":
                    names = {value} if isinstance(value, str) else set(value)
                    if "integer" in names and "number" not in names:
                        names.discard("integer")
                    types = types & frozenset(names)
                elif kw == "items":
                    if self.covered_types(value, resolver, active, True) != _ALL_TYPES:
                        types = types - {"array"}
                elif kw == "additionalProperties":
                    if self.covered_types(value, resolver, active, True) != _ALL_TYPES:
                        types = types - {"object"}
                elif kw == "anyOf":
                    union: frozenset[str] = frozenset()
                    for branch in value:
                        union = union | self.covered_types(branch, self.sub_resolver(branch, resolver), active, guarded)
                    types = types & union
                elif kw == "allOf":
                    for branch in value:
                        types = types & self.covered_types(branch, self.sub_resolver(branch, resolver), active, guarded)
                elif kw == "$ref":
                    resolved = resolver.lookup(value)
                    types = types & self.covered_types(resolved.contents, resolved.resolver, active, guarded)
                else:
                    return frozenset()  # any other assertion: not provably universal
            if len(active) == 1:  # no assumption about an enclosing schema was used
                self.universal_cache[key] = types
            return types
        finally:
            del active[key]

    def is_universal(self, schema: Any, resolver: Resolver) -> bool:
        return self.covered_types(schema, resolver, {}, False) == _ALL_TYPES

    # -- functions -------------------------------------------------------
    def function(self, schema: Any, resolver: Resolver) -> str:
        """Name of the generated predicate for `schema` (compiled once, recursion-safe)."""
        key = id(schema)
        if key in self.functions:
            return self.functions[key]
        self._keep.append(schema)
        name = f"_v{next(self.counter)}"
        self.functions[key] = name
        # a shared function knows nothing about its caller's value
        return self._define(name, schema, resolver, {})

    def specialised(self, schema: Any, resolver: Resolver, key: str, value: str) -> str:
        """A predicate for `schema` valid only for dicts whose `key` is the string `value`.

        Conditions on that key (``if``, tag tables, discriminated unions) are decided while
        compiling, so the generated code runs only the branch that applies.
        """
        return self._define(f"_s{next(self.counter)}", schema, resolver, {"x": {key: value}})

    def _define(self, name: str, schema: Any, resolver: Resolver, facts: dict[str, dict[str, str]]) -> str:
        """Emit ``def name(x)`` checking `schema`, knowing only `facts` about ``x``."""
        saved, self.facts = self.facts, facts
        try:
            body: list[str] = []
            self.emit(schema, resolver, "x", body, 1)
        finally:
            self.facts = saved
        self.lines.append(f"def {name}(x):")
        self.lines.extend(body)
        self.lines.append("    return True")
        self.lines.append("")
        return name

    def static_verdict(self, schema: Any, resolver: Resolver, v: str) -> bool | None:
        """The verdict of `schema` on `v` when the facts about `v` decide it, else None."""
        facts = self.facts.get(v)
        if facts is None:
            return None
        if schema is True or schema is False:
            return schema
        if not isinstance(schema, dict) or "$id" in schema:
            return None
        verdict = True
        for kw, value in schema.items():
            if kw not in self.known or kw in PASSIVE_KEYWORDS:
                continue
            if kw == "type":
                names = [value] if isinstance(value, str) else value
                if not isinstance(names, list):
                    return None
                if "object" not in names:
                    return False
            elif kw == "required":
                if not isinstance(value, list) or not all(isinstance(r, str) and r in facts for r in value):
                    return None
            elif kw == "properties":
                if not isinstance(value, dict):
                    return None
                for prop, sub in value.items():
                    if prop not in facts:
                        return None
                    known = _const_verdict(sub, facts[prop], self.known)
                    if known is None:
                        return None
                    verdict = verdict and known
            else:
                return None
        return verdict

    def emit(self, schema: Any, resolver: Resolver, v: str, out: list[str], ind: int) -> None:  # noqa: C901 - one branch per JSON Schema keyword family
        """Append statements that ``return False`` when ``v`` does not satisfy `schema`."""
        pad = "    " * ind
        if schema is True:
            return
        if schema is False or not isinstance(schema, dict):
            out.append(f"{pad}return False")
            return
        resolver = self.sub_resolver(schema, resolver)
        if self.is_universal(schema, resolver):
            return
        known = [kw for kw in schema if kw in self.known and kw not in PASSIVE_KEYWORDS]
        unsupported = [kw for kw in known if kw not in _COMPILED or kw in self.fallback_keywords]
        if unsupported:
            # Delegate this whole subschema to the oracle: exact by construction.
            self.fallbacks.extend(unsupported)
            name = self.const(functools.partial(schema_accepts, self.oracle, schema, resolver), "_fb")
            out.append(f"{pad}if not {name}({v}): return False")
            return
        types = schema.get("type")
        type_names = [types] if isinstance(types, str) else list(types) if isinstance(types, list) else None
        only = type_names[0] if type_names and len(type_names) == 1 else None
        fast = self.int_fast_test(schema, v) if only in ("integer", "number") else None
        if fast is not None:
            # The common case (a plain int within the bounds) in one test; the full checks otherwise.
            out.append(f"{pad}if not ({fast}):")
            out.append(f"{pad}    if not ({_TYPE_TESTS[str(only)].format(v=v)}): return False")
            self.emit_scalar(schema, v, out, ind + 1, only)
        elif type_names is not None and not (v in self.facts and "object" in type_names):
            # (with facts, `v` is known to be a dict)
            test = " or ".join(_TYPE_TESTS[t].format(v=v) for t in type_names) or "False"
            out.append(f"{pad}if not ({test}): return False")
        if "enum" in schema:
            self.emit_enum(schema["enum"], v, out, pad)
        if "const" in schema:
            self.emit_const(schema["const"], v, out, pad)
        self.emit_object(schema, resolver, v, out, ind, known_dict=only == "object" or v in self.facts)
        self.emit_array(schema, resolver, v, out, ind, known_list=only == "array")
        if fast is None:
            self.emit_scalar(schema, v, out, ind, only)
        self.emit_all_of(schema.get("allOf", ()), resolver, v, out, ind)
        if "anyOf" in schema:
            self.emit_union(schema["anyOf"], resolver, v, out, pad, exactly_one=False)
        if "oneOf" in schema:
            self.emit_union(schema["oneOf"], resolver, v, out, pad, exactly_one=True)
        if "not" in schema:
            negated = schema["not"]
            neg_resolver = self.sub_resolver(negated, resolver)
            if negated is True or self.is_universal(negated, neg_resolver):
                out.append(f"{pad}return False")
                return
            expr = self.cond_expr(negated, neg_resolver, v)
            if expr is None:
                expr = f"{self.function(negated, neg_resolver)}({v})"
            out.append(f"{pad}if {expr}: return False")
        if "if" in schema:
            cond_resolver = self.sub_resolver(schema["if"], resolver)
            static = self.static_verdict(schema["if"], cond_resolver, v)
            if static is not None:
                branch = "then" if static else "else"
                if branch in schema:
                    self.emit(schema[branch], resolver, v, out, ind)
                return self.emit_ref(schema, resolver, v, out, ind)
            expr = self.cond_expr(schema["if"], cond_resolver, v)
            if expr is None:
                expr = f"{self.function(schema['if'], cond_resolver)}({v})"
            then_body: list[str] = []
            else_body: list[str] = []
            if "then" in schema:
                self.emit(schema["then"], resolver, v, then_body, ind + 1)
            if "else" in schema:
                self.emit(schema["else"], resolver, v, else_body, ind + 1)
            out.append(f"{pad}if {expr}:")
            out.extend(then_body or [f"{pad}    pass"])
            out.append(f"{pad}else:")
            out.extend(else_body or [f"{pad}    pass"])
        self.emit_ref(schema, resolver, v, out, ind)

    def emit_ref(self, schema: dict[str, Any], resolver: Resolver, v: str, out: list[str], ind: int) -> None:
        pad = "    " * ind
        if "$ref" in schema:
            resolved = resolver.lookup(schema["$ref"])
            target = resolved.contents
            if target is True or self.is_universal(target, resolved.resolver):
                return
            key = id(target)
            if key not in self.inlining and len(self.inlining) < 12:
                # Inline the referenced schema: a call per $ref would dominate the cost of small events.
                self.inlining.add(key)
                try:
                    self.emit(target, self.sub_resolver(target, resolved.resolver), v, out, ind)
                finally:
                    self.inlining.discard(key)
                return
            name = self.function(target, resolved.resolver)
            out.append(f"{pad}if not {name}({v}): return False")

    def cond_expr(self, schema: Any, resolver: Resolver, v: str, depth: int = 0) -> str | None:
        """A boolean expression for small schemas (conditions of ``if``/``not``), or None."""
        if schema is True:
            return "True"
        if schema is False:
            return "False"
        if not isinstance(schema, dict) or depth > 3 or "$id" in schema:
            return None
        words = [kw for kw in schema if kw in self.known and kw not in PASSIVE_KEYWORDS]
        if any(kw not in ("type", "const", "enum", "required", "properties") for kw in words):
            return None
        parts: list[str] = []
        types = schema.get("type")
        names = [types] if isinstance(types, str) else types if isinstance(types, list) else None
        if names is not None:
            parts.append("(" + (" or ".join(_TYPE_TESTS[t].format(v=v) for t in names) or "False") + ")")
        if "const" in schema:
            c = schema["const"]
            if isinstance(c, str):
                parts.append(f"(isinstance({v}, str) and {v} == {self.lit(c)})")
            else:
                parts.append(f"_equal({v}, {self.const(c)})")
        if "enum" in schema:
            values = schema["enum"]
            if values and all(isinstance(e, str) for e in values):
                parts.append(f"(isinstance({v}, str) and {v} in {self.const(frozenset(values))})")
            else:
                parts.append(f"any(_equal({v}, e) for e in {self.const(tuple(values))})")
        obj: list[str] = []
        required = [r for r in schema.get("required", ()) if isinstance(r, str)]
        if required:
            obj.append(f"{v}.keys() >= {self.const(frozenset(required))}")
        for key, sub in schema.get("properties", {}).items():
            inner = self.cond_expr(sub, self.sub_resolver(sub, resolver), f"{v}[{self.lit(key)}]", depth + 1)
            if inner is None:
                return None
            if inner != "True":
                obj.append(f"({inner})" if key in required else f"({self.lit(key)} not in {v} or ({inner}))")
        if obj:
            body = " and ".join(obj)
            parts.append(f"({body})" if names == ["object"] else f"(not isinstance({v}, dict) or ({body}))")
        return " and ".join(parts) or "True"

    def if_discriminator(self, branch: Any) -> tuple[str, str] | None:
        """``(key, value)`` when `branch` is exactly ``{if: <object whose required key equals value>, then: ...}``."""
        if not isinstance(branch, dict) or set(branch) - {"if", "then", "$comment", "description", "title"}:
            return None
        cond = branch.get("if")
        if "then" not in branch or not isinstance(cond, dict):
            return None
        if set(cond) - {"type", "properties", "required", "$comment", "description", "title"}:
            return None
        if cond.get("type") != "object":  # without it the condition also holds for non-objects
            return None
        props, required = cond.get("properties"), cond.get("required")
        if not isinstance(props, dict) or len(props) != 1 or not isinstance(required, list):
            return None
        ((key, sub),) = props.items()
        if required != [key] or not isinstance(sub, dict) or set(sub) - {"const", "description", "title"}:
            return None
        if not isinstance(sub.get("const"), str):
            return None
        return key, sub["const"]

    def emit_all_of(self, branches: Any, resolver: Resolver, v: str, out: list[str], ind: int) -> None:
        """``allOf``; runs of ``if <tag is c> then T`` members become one dict lookup on the tag."""
        pad = "    " * ind
        groups: dict[str, dict[str, list[str]]] = {}
        inline: dict[str, dict[str, tuple[Any, Resolver]]] = {}
        facts = self.facts.get(v, {})
        for branch in branches:
            disc = self.if_discriminator(branch)
            if disc is None:
                self.emit(branch, resolver, v, out, ind)
                continue
            key, value = disc
            then = branch["then"]
            if key in facts:
                # The tag is known: the condition is decided now; inline the branch that applies.
                if facts[key] == value:
                    self.emit(then, self.sub_resolver(branch, resolver), v, out, ind)
                continue
            then_resolver = self.sub_resolver(branch, resolver)
            name = self.function(then, self.sub_resolver(then, then_resolver))
            groups.setdefault(key, {}).setdefault(value, []).append(name)
            inline.setdefault(key, {})[value] = (then, then_resolver)
        for key, table in groups.items():
            if len(table) <= 16 and all(len(fns) == 1 for fns in table.values()):
                # A short if/elif chain on the tag with each branch inlined and specialised on it.
                tag = self.var()
                out.append(f"{pad}{tag} = {v}.get({self.lit(key)}, _M)" if v in self.facts else
                           f"{pad}{tag} = {v}.get({self.lit(key)}, _M) if isinstance({v}, dict) else _M")
                for n, (value, (then, then_resolver)) in enumerate(inline[key].items()):
                    out.append(f"{pad}{'if' if n == 0 else 'elif'} {tag} == {self.lit(value)}:")
                    body: list[str] = []
                    saved = self.facts.get(v)
                    self.facts[v] = {**(saved or {}), key: value}
                    try:
                        self.emit(then, then_resolver, v, body, ind + 1)
                    finally:
                        if saved is None:
                            del self.facts[v]
                        else:
                            self.facts[v] = saved
                    out.extend(body or [f"{pad}    pass"])
                continue
            table_name = f"_tab{next(self.counter)}"
            entries = ", ".join(f"{self.lit(value)}: ({''.join(n + ', ' for n in fns)})" for value, fns in table.items())
            self.tail.append(f"{table_name} = {{{entries}}}")
            tag, fns = self.var(), self.var()
            out.append(f"{pad}{tag} = {v}.get({self.lit(key)}, _M) if isinstance({v}, dict) else _M")
            out.append(f"{pad}if isinstance({tag}, str):")
            out.append(f"{pad}    {fns} = {table_name}.get({tag})")
            out.append(f"{pad}    if {fns} is not None:")
            out.append(f"{pad}        for f in {fns}:")
            out.append(f"{pad}            if not f({v}): return False")

    def emit_enum(self, values: list[Any], v: str, out: list[str], pad: str) -> None:
        if values and all(isinstance(e, str) for e in values):
            name = self.const(frozenset(values))
            out.append(f"{pad}if not (isinstance({v}, str) and {v} in {name}): return False")
        else:
            name = self.const(tuple(values))
            out.append(f"{pad}if not any(_equal({v}, e) for e in {name}): return False")

    def emit_const(self, value: Any, v: str, out: list[str], pad: str) -> None:
        if isinstance(value, str):
            out.append(f"{pad}if not (isinstance({v}, str) and {v} == {self.lit(value)}): return False")
        elif value is None:
            out.append(f"{pad}if {v} is not None: return False")
        else:
            name = self.const(value)
            out.append(f"{pad}if not _equal({v}, {name}): return False")

    def emit_object(self, schema: dict[str, Any], resolver: Resolver, v: str, out: list[str], ind: int, known_dict: bool) -> None:  # noqa: C901 - one branch per object keyword of JSON Schema
        words = ("properties", "required", "additionalProperties", "patternProperties", "propertyNames",
                 "minProperties", "maxProperties", "dependentRequired")
        if not any(w in schema for w in words):
            return
        if not known_dict:
            inner: list[str] = []
            self.emit_object(schema, resolver, v, inner, ind + 1, known_dict=True)
            if inner:  # every subschema may accept everything: then there is nothing to guard
                out.append(f"{'    ' * ind}if isinstance({v}, dict):")
                out.extend(inner)
            return
        pad = "    " * ind
        props: dict[str, Any] = schema.get("properties", {})
        required = [r for r in schema.get("required", ()) if isinstance(r, str)]
        if required:
            name = self.const(frozenset(required))
            out.append(f"{pad}if not ({v}.keys() >= {name}): return False")
        if "minProperties" in schema:
            out.append(f"{pad}if len({v}) < {self.lit(schema['minProperties'])}: return False")
        if "maxProperties" in schema:
            out.append(f"{pad}if len({v}) > {self.lit(schema['maxProperties'])}: return False")
        for key, deps in schema.get("dependentRequired", {}).items():
            name = self.const(frozenset(deps))
            out.append(f"{pad}if {self.lit(key)} in {v} and not ({v}.keys() >= {name}): return False")
        patterns: dict[str, Any] = schema.get("patternProperties", {})
        addl = schema.get("additionalProperties", True)
        if addl is False and not patterns:
            name = self.const(frozenset(props))
            out.append(f"{pad}if not ({v}.keys() <= {name}): return False")
        required_set = set(required)
        for key, sub in props.items():
            sub_resolver = self.sub_resolver(sub, resolver)
            if sub is True or self.is_universal(sub, sub_resolver):
                continue
            if self.never(sub, resolver):
                out.append(f"{pad}return False" if key in required_set else f"{pad}if {self.lit(key)} in {v}: return False")
                continue
            fact = self.facts.get(v, {}).get(key)
            if fact is not None:
                known = _const_verdict(sub, fact, self.known)
                if known is True:
                    continue  # decided by the facts
                if known is False:
                    out.append(f"{pad}return False")
                    continue
            body: list[str] = []
            x = self.var()
            if key in required_set:
                out.append(f"{pad}{x} = {v}[{self.lit(key)}]")
                self.emit(sub, sub_resolver, x, out, ind)
            else:
                self.emit(sub, sub_resolver, x, body, ind + 1)
                if body:
                    out.append(f"{pad}{x} = {v}.get({self.lit(key)}, _M)")
                    out.append(f"{pad}if {x} is not _M:")
                    out.extend(body)
        if patterns or (addl is not True and addl is not False) or (addl is False and patterns) or "propertyNames" in schema:
            k, x = self.var(), self.var()
            loop: list[str] = []
            for pattern, sub in patterns.items():
                regex = self.const(re.compile(pattern), "_re")
                body = []
                self.emit(sub, self.sub_resolver(sub, resolver), x, body, ind + 2)
                if body:
                    loop.append(f"{pad}    if {regex}.search({k}):")
                    loop.extend(body)
            if addl is not True:
                conds = []
                if props:
                    conds.append(f"{k} not in {self.const(frozenset(props))}")
                for pattern in patterns:
                    conds.append(f"not {self.const(re.compile(pattern), '_re')}.search({k})")
                body = []
                self.emit(addl, self.sub_resolver(addl, resolver), x, body, ind + 2)
                if body:
                    loop.append(f"{pad}    if {' and '.join(conds) or 'True'}:")
                    loop.extend(body)
            if "propertyNames" in schema:
                body = []
                sub = schema["propertyNames"]
                self.emit(sub, self.sub_resolver(sub, resolver), k, body, ind + 1)
                loop.extend(body)
            if loop:
                out.append(f"{pad}for {k}, {x} in {v}.items():")
                out.extend(loop)

    def emit_array(self, schema: dict[str, Any], resolver: Resolver, v: str, out: list[str], ind: int, known_list: bool) -> None:
        words = ("items", "prefixItems", "minItems", "maxItems", "uniqueItems")
        if not any(w in schema for w in words):
            return
        if not known_list:
            inner: list[str] = []
            self.emit_array(schema, resolver, v, inner, ind + 1, known_list=True)
            if inner:
                out.append(f"{'    ' * ind}if isinstance({v}, list):")
                out.extend(inner)
            return
        pad = "    " * ind
        if "minItems" in schema:
            out.append(f"{pad}if len({v}) < {self.lit(schema['minItems'])}: return False")
        if "maxItems" in schema:
            out.append(f"{pad}if len({v}) > {self.lit(schema['maxItems'])}: return False")
        if schema.get("uniqueItems") is True:
            out.append(f"{pad}if not _uniq({v}): return False")
        prefix = schema.get("prefixItems", [])
        for i, sub in enumerate(prefix):
            body: list[str] = []
            x = self.var()
            self.emit(sub, self.sub_resolver(sub, resolver), x, body, ind + 1)
            if body:
                out.append(f"{pad}if len({v}) > {i}:")
                out.append(f"{pad}    {x} = {v}[{i}]")
                out.extend(body)
        if "items" in schema:
            sub = schema["items"]
            if sub is False:
                out.append(f"{pad}if len({v}) > {len(prefix)}: return False")
            else:
                body = []
                x = self.var()
                sub_resolver = self.sub_resolver(sub, resolver)
                self.emit(sub, sub_resolver, x, body, ind + 2)
                if body:
                    source = f"{v}[{len(prefix)}:]" if prefix else v
                    fast = None if prefix else self.bulk_test(sub, sub_resolver, v)
                    if fast is None:
                        out.append(f"{pad}for {x} in {source}:")
                        out.extend(line[4:] for line in body)
                    else:
                        # Whole-list test in C for the common case; the item loop decides otherwise.
                        out.append(f"{pad}if not ({fast}):")
                        out.append(f"{pad}    for {x} in {source}:")
                        out.extend(body)

    def int_fast_test(self, schema: dict[str, Any], v: str) -> str | None:
        """``type(v) is int and <bounds>`` for a numeric schema with bounds (None without bounds)."""
        parts = []
        for word, op in (("minimum", ">="), ("maximum", "<="), ("exclusiveMinimum", ">"), ("exclusiveMaximum", "<")):
            if word in schema:
                if type(schema[word]) not in (int, float):
                    return None
                parts.append(f"{v} {op} {self.lit(schema[word])}")
        if not parts or any(w in schema for w in ("minLength", "maxLength", "pattern")):
            return None
        return f"type({v}) is int and " + " and ".join(parts)

    def never(self, schema: Any, resolver: Resolver) -> bool:
        """Whether `schema` rejects every value (``false`` or ``not`` of a universal schema)."""
        if schema is False:
            return True
        if not isinstance(schema, dict):
            return False
        words = [kw for kw in schema if kw in self.known and kw not in PASSIVE_KEYWORDS]
        if words != ["not"]:
            return False
        negated = schema["not"]
        return negated is True or self.is_universal(negated, self.sub_resolver(negated, self.sub_resolver(schema, resolver)))

    def bulk_test(self, schema: Any, resolver: Resolver, v: str) -> str | None:
        """An expression that is true only if every item of list `v` satisfies a simple scalar `schema`.

        Simple: after ``$ref``, only ``type`` (one of integer/number/string) with numeric bounds or
        length bounds. The expression tests the item types as a set (``bool`` is never ``int`` here)
        and the bounds through ``min``/``max``; when it is false the per-item loop decides.
        """
        for _ in range(8):
            if not isinstance(schema, dict):
                return None
            resolver = self.sub_resolver(schema, resolver)
            words = [kw for kw in schema if kw in self.known and kw not in PASSIVE_KEYWORDS]
            if words == ["$ref"]:
                resolved = resolver.lookup(schema["$ref"])
                schema, resolver = resolved.contents, resolved.resolver
                continue
            break
        else:
            return None
        kind = schema.get("type")
        numeric = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")
        lengths = ("minLength", "maxLength")
        allowed = {"integer": numeric, "number": numeric, "string": lengths}.get(kind) if isinstance(kind, str) else None
        if allowed is None or any(kw not in ("type", *allowed) for kw in words):
            return None
        types = {"integer": "_INT", "number": "_NUM", "string": "_STR"}[str(kind)]
        parts = [f"set(map(type, {v})) <= {types}"]
        bounds = []
        for word, expr in (("minimum", "min({v}) >= {b}"), ("maximum", "max({v}) <= {b}"),
                           ("exclusiveMinimum", "min({v}) > {b}"), ("exclusiveMaximum", "max({v}) < {b}"),
                           ("minLength", "min(map(len, {v})) >= {b}"), ("maxLength", "max(map(len, {v})) <= {b}")):
            if word in schema:
                bound = schema[word]
                if type(bound) not in (int, float):
                    return None
                bounds.append(expr.format(v=v, b=self.lit(bound)))
        if bounds:
            parts.append(f"(not {v} or ({' and '.join(bounds)}))")
        return " and ".join(parts)

    def emit_scalar(self, schema: dict[str, Any], v: str, out: list[str], ind: int, only: str | None) -> None:
        pad = "    " * ind
        numeric = [(w, op) for w, op in (("minimum", "<"), ("maximum", ">"), ("exclusiveMinimum", "<="),
                                        ("exclusiveMaximum", ">=")) if w in schema]
        if numeric:
            if only in ("integer", "number"):
                guard = ""
            else:
                guard = f"{_TYPE_TESTS['number'].format(v=v)} and "
            for word, op in numeric:
                out.append(f"{pad}if {guard}{v} {op} {self.lit(schema[word])}: return False")
        strings = [(w, op) for w, op in (("minLength", "<"), ("maxLength", ">")) if w in schema]
        if strings or "pattern" in schema:
            guard = "" if only == "string" else f"isinstance({v}, str) and "
            for word, op in strings:
                out.append(f"{pad}if {guard}len({v}) {op} {self.lit(schema[word])}: return False")
            if "pattern" in schema:
                regex = self.const(re.compile(schema["pattern"]), "_re")
                out.append(f"{pad}if {guard}not {regex}.search({v}): return False")

    # -- unions ------------------------------------------------------------
    def discriminator(self, branch: Any, resolver: Resolver, depth: int = 0) -> tuple[str, frozenset[str]] | None:
        """``(key, values)`` when `branch` can only accept objects whose required `key` is one of `values`."""
        if not isinstance(branch, dict) or depth > 4:
            return None
        resolver = self.sub_resolver(branch, resolver)
        if "$ref" in branch and not any(k in self.known and k not in PASSIVE_KEYWORDS for k in branch if k != "$ref"):
            resolved = resolver.lookup(branch["$ref"])
            return self.discriminator(resolved.contents, resolved.resolver, depth + 1)
        if branch.get("type") != "object":
            return None
        required = branch.get("required", ())
        for key, sub in branch.get("properties", {}).items():
            if key not in required or not isinstance(sub, dict):
                continue
            if isinstance(sub.get("const"), str):
                return key, frozenset({sub["const"]})
            enum = sub.get("enum")
            if isinstance(enum, list) and enum and all(isinstance(e, str) for e in enum):
                return key, frozenset(enum)
        return None

    def emit_union(self, branches: list[Any], resolver: Resolver, v: str, out: list[str], pad: str, exactly_one: bool) -> None:
        discs = [self.discriminator(b, resolver) for b in branches]
        facts = self.facts.get(v, {})
        known = [(b, d) for b, d in zip(branches, discs) if d is None or d[0] not in facts or facts[d[0]] in d[1]]
        if len(known) < len(branches):
            # A branch that pins a known tag to other values cannot accept `v`: drop it now.
            branches = [b for b, _ in known]
            discs = [d for _, d in known]
        names = [self.function(b, self.sub_resolver(b, resolver)) for b in branches]
        keys = {d[0] for d in discs if d is not None}
        if len(keys) == 1 and sum(d is not None for d in discs) >= 2:
            # Dispatch on the tag: a branch that pins the tag to other values cannot accept `v`.
            key = keys.pop()
            free = [n for n, d in zip(names, discs) if d is None]
            table: dict[str, list[str]] = {}
            for n, d in zip(names, discs):
                if d is not None:
                    for value in d[1]:
                        table.setdefault(value, []).append(n)
            table_name, free_name = f"_tab{next(self.counter)}", f"_free{next(self.counter)}"
            entries = ", ".join(f"{self.lit(value)}: ({', '.join(fns + free)},)" for value, fns in table.items())
            self.tail.append(f"{table_name} = {{{entries}}}")
            self.tail.append(f"{free_name} = ({''.join(n + ', ' for n in free)})")
            tag, fns = self.var(), self.var()
            out.append(f"{pad}{tag} = {v}.get({self.lit(key)}, _M) if isinstance({v}, dict) else _M")
            out.append(f"{pad}{fns} = {table_name}.get({tag}, {free_name}) if isinstance({tag}, str) else {free_name}")
            if exactly_one:
                out.append(f"{pad}if sum(1 for f in {fns} if f({v})) != 1: return False")
            else:
                out.append(f"{pad}if not any(f({v}) for f in {fns}): return False")
        elif exactly_one:
            out.append(f"{pad}if ({' + '.join(f'bool({n}({v}))' for n in names) or '0'}) != 1: return False")
        else:
            out.append(f"{pad}if not ({' or '.join(f'{n}({v})' for n in names) or 'False'}): return False")


def root_scope(compiler: _Compiler, schema: Schema, registry: Registry | None) -> Resolver:
    """The oracle's own root scope for `schema`, rebuilt through referencing's public API."""
    from referencing import Registry
    from referencing.jsonschema import DRAFT202012

    resolver: Resolver = (registry if registry is not None else Registry()).resolver_with_root(
        DRAFT202012.create_resource(schema))
    return compiler.sub_resolver(schema, resolver)


#: Every name generated code may read: its own definitions, the compiler's helpers, a few builtins and methods.
_GENERATED_NAME = re.compile(r"_(?:v|s|c|tab|free|re|fb)\d+")
_ALLOWED_NAMES = frozenset({"isinstance", "dict", "list", "str", "bool", "int", "float", "type", "len", "set", "map",
                            "min", "max", "sum", "any", "get", "keys", "items", "search"})
_VALUE_TYPES = (str, int, float, bool, type(None))


class GeneratedCodeError(ValueError):
    """The compiler wrote code outside its own vocabulary (a bug: schema content must stay data)."""


def checked_code(source: str, env: Mapping[str, Any]) -> CodeType:
    """`source` compiled, after proving from its bytecode that schema content entered it only as values:
    every global, attribute and function name is a generated one, a helper in `env` or an allowed
    builtin or method; every constant is a str, int, bool, None or finite float (or a tuple of them)."""
    try:
        code = compile(source, "<fastschema>", "exec")
    except (SyntaxError, ValueError) as exc:  # pragma: no cover - a compiler bug, reported as one
        raise GeneratedCodeError(f"generated predicates do not compile: {exc}") from None
    todo = [code]
    while todo:
        unit = todo.pop()
        if unit is not code and not (_GENERATED_NAME.fullmatch(unit.co_name) or unit.co_name == "<genexpr>"):
            raise GeneratedCodeError(f"generated predicates define {unit.co_name!r}")
        for name in unit.co_names:
            if not (name in _ALLOWED_NAMES or name in env or _GENERATED_NAME.fullmatch(name)):
                raise GeneratedCodeError(f"generated predicates name {name!r}")
        consts = list(unit.co_consts)
        while consts:
            value = consts.pop()
            if isinstance(value, CodeType):
                todo.append(value)
            elif type(value) is tuple:
                consts.extend(value)
            elif type(value) not in _VALUE_TYPES or (type(value) is float and not math.isfinite(value)):
                raise GeneratedCodeError(f"generated predicates hold the constant {value!r}")
    return code


class CompiledSchema:
    """A schema compiled to a predicate, with the oracle kept for error reports."""

    def __init__(self, schema: Schema, oracle: Oracle, *, registry: Registry | None = None,
                 fallback_keywords: frozenset[str] = frozenset()) -> None:
        """`registry` holds the schemas `schema` refers to (the one the oracle was built with)."""
        self.schema = schema
        self.oracle = oracle
        compiler = _Compiler(oracle, fallback_keywords)
        root_resolver = self.root_resolver = root_scope(compiler, schema, registry)
        name = compiler.function(schema, root_resolver)
        self.tag_key, tags = _root_tags(compiler, schema)
        specialised = {tag: compiler.specialised(schema, root_resolver, self.tag_key or "", tag) for tag in tags}
        source = "\n".join(compiler.lines + compiler.tail)
        self.source = source
        env = compiler.env
        exec(checked_code(source, env), env)  # noqa: S102 - the predicates generated from the schemas, checked to hold schema content only as values
        self._predicate: Callable[[Any], bool] = env[name]
        #: tag value -> predicate valid only for dicts whose `tag_key` is exactly that ``str``: the
        #: conditions on the tag are decided at compile time (one straight-line check per type).
        self.by_tag: dict[str, Callable[[Any], bool]] = {tag: env[fn] for tag, fn in specialised.items()}
        self.fallbacks = tuple(sorted(set(compiler.fallbacks)))
        self.compiler = compiler  # kept for analyses of the same schema (`sessionspec.validator.schemavary`)

    @property
    def predicate(self) -> Callable[[JsonValue], bool]:
        """The root predicate: exact for every instance (`by_tag` holds the faster ones for tagged dicts)."""
        return self._predicate

    def predicate_for(self, instance: JsonValue) -> Callable[[JsonValue], bool]:
        """The fastest exact predicate for `instance` (specialised on its tag when it has a known one)."""
        if type(instance) is dict and self.tag_key is not None:
            tag = instance.get(self.tag_key)
            if type(tag) is str:
                return self.by_tag.get(tag, self._predicate)
        return self._predicate

    def is_valid(self, instance: JsonValue) -> bool:
        """The fast verdict; a value too deep for the generated recursion is judged by the oracle."""
        try:
            return self.predicate_for(instance)(instance)
        except RecursionError:
            try:
                return bool(self.oracle.is_valid(instance))
            except RecursionError:
                return False

    def errors(self, instance: JsonValue, limit: int = 20) -> list[ValidationError]:
        """The oracle's errors (for locations and messages), most relevant leaf first per error."""
        return schema_errors(self.oracle, instance, limit)


def _root_tags(compiler: _Compiler, schema: Any) -> tuple[str | None, list[str]]:
    """``(key, values)`` when the root dispatches on a tag (``allOf`` of ``if key == value then ...``)."""
    if not isinstance(schema, dict) or not isinstance(schema.get("allOf"), list):
        return None, []
    discs = [compiler.if_discriminator(b) for b in schema["allOf"]]
    keys = {d[0] for d in discs if d is not None}
    if len(keys) != 1:
        return None, []
    key = keys.pop()
    return key, list(dict.fromkeys(d[1] for d in discs if d is not None))


def schema_errors(oracle: Oracle, instance: JsonValue, limit: int = 20) -> list[ValidationError]:
    from jsonschema.exceptions import best_match

    out: list[ValidationError] = []
    try:
        for error in _iter_sorted(oracle, instance):
            leaf = best_match([error])
            out.append(leaf if leaf is not None else error)
            if len(out) >= limit:
                break
    except RecursionError:
        pass
    return out


def _iter_sorted(oracle: Oracle, instance: JsonValue) -> Iterator[ValidationError]:
    return iter(sorted(oracle.iter_errors(instance), key=lambda e: (list(map(str, e.absolute_path)), e.message)))


def compile_schema(schema: Schema, oracle: Oracle, registry: Registry | None = None) -> CompiledSchema:
    """Compile `schema` (its references in `registry`, as for the oracle) into a `CompiledSchema`."""
    return CompiledSchema(schema, oracle, registry=registry)
