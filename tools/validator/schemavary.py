"""Which constraints of a schema fall on the *varying* parts of a family of instances.

A packed chunk row stands for many member events that differ only in a few
places (``seq``, ``time`` and the member text); everything else is shared.
Checking every member against the event schema one by one costs a Python
call per member. Instead, `varying_constraints` walks the schema once along
a *template* instance and returns, for each varying location, the scalar
constraints (type, numeric bounds, length bounds, patterns) that apply there,
provided that:

* no decision of the schema (``if``, ``not``, the branch chosen in ``anyOf``
  / ``oneOf``, ``const``/``enum`` on an enclosing object) depends on a varying
  location or on a *per-family* location (a value shared by the members of
  one row but not by all rows: turn, step, index, tool call id);
* every constraint found at a varying location is a plain scalar one.

Then a member is valid exactly when the first member is valid (shared parts,
decided once) and each varying value meets the returned constraints (checked
in bulk with ``min``/``max``). Anything the analysis cannot prove raises
`Unsupported`, and the caller falls back to checking members one by one, so
the verdict stays exact. The schemas stay the single source of truth.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from sessionspec.validator.fastschema import PASSIVE_KEYWORDS, CompiledSchema, Resolver, schema_accepts

if TYPE_CHECKING:
    from sessionspec.spec.schema_types import JsonObject

__all__ = ["ScalarBounds", "Unsupported", "varying_constraints"]

Path = tuple[str, ...]

# Keywords that only look at an object's key set or type: equal for every member (same keys).
_KEYSET = frozenset({"type", "required", "minProperties", "maxProperties", "dependentRequired", "propertyNames"})
# Keywords that ignore objects (they constrain arrays, numbers or strings only).
_NOT_FOR_OBJECTS = frozenset(
    {
        "items", "prefixItems", "minItems", "maxItems", "uniqueItems", "contains", "minContains", "maxContains",
        "unevaluatedItems", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
        "minLength", "maxLength", "pattern", "format", "contentEncoding", "contentMediaType", "contentSchema",
    }
)
_SCALAR = frozenset({"type", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength", "maxLength", "pattern"})


class Unsupported(Exception):
    """The analysis cannot prove the shortcut exact for this schema and template."""


@dataclass
class ScalarBounds:
    """The conjunction of the scalar constraints found at one location."""

    types: frozenset[str] | None = None  # None: any type
    lo: int | float | None = None
    lo_open: bool = False
    hi: int | float | None = None
    hi_open: bool = False
    min_len: int | None = None
    max_len: int | None = None
    patterns: list[re.Pattern[str]] = field(default_factory=list)

    def add(self, schema: JsonObject) -> None:
        """Conjoin the scalar keywords of `schema` (a subschema the registry check passed as a JSON Schema)."""
        kind = schema.get("type")
        if kind is not None:
            names = frozenset([kind] if isinstance(kind, str) else cast("Iterable[str]", kind))
            if "number" in names:
                names = names | {"integer"}
            self.types = names if self.types is None else self.types & names
        for word, is_low, is_open in (("minimum", True, False), ("exclusiveMinimum", True, True),
                                      ("maximum", False, False), ("exclusiveMaximum", False, True)):
            if word in schema:
                bound = schema[word]
                if type(bound) is not int and type(bound) is not float:
                    raise Unsupported(f"non-numeric {word}")
                if is_low and (self.lo is None or bound > self.lo or (bound == self.lo and is_open)):
                    self.lo, self.lo_open = bound, is_open
                if not is_low and (self.hi is None or bound < self.hi or (bound == self.hi and is_open)):
                    self.hi, self.hi_open = bound, is_open
        for word in ("minLength", "maxLength"):
            if word in schema:
                bound = schema[word]
                if type(bound) is not int:
                    raise Unsupported(f"non-integer {word}")
                if word == "minLength":
                    self.min_len = bound if self.min_len is None else max(self.min_len, bound)
                else:
                    self.max_len = bound if self.max_len is None else min(self.max_len, bound)
        if "pattern" in schema:
            self.patterns.append(re.compile(cast(str, schema["pattern"])))  # a str (the meta-schema's)

    def ints_ok(self, low: int, high: int) -> bool:
        """Whether every ``int`` from `low` to `high` (the extremes of the values) passes."""
        if self.types is not None and "integer" not in self.types:
            return False
        if self.lo is not None and (low < self.lo or (self.lo_open and low == self.lo)):
            return False
        if self.hi is not None and (high > self.hi or (self.hi_open and high == self.hi)):  # noqa: SIM103 - each early return names a reason the analysis gives up
            return False
        return True

    def admits_ints(self, low: int, high: int) -> bool:
        """Whether every int in [low, high] passes (then a check on such values can be skipped)."""
        return self.ints_ok(low, high)

    def admits_all_strings(self) -> bool:
        return (self.types is None or "string" in self.types) and self.min_len in (None, 0) \
            and self.max_len is None and not self.patterns

    def admits_all_numbers(self) -> bool:
        """Every int and every finite float passes."""
        return (self.types is None or "number" in self.types) and self.lo is None and self.hi is None

    def value_ok(self, value: object) -> bool:
        """Whether one JSON scalar passes (``bool`` never counts as a number)."""
        if type(value) is str:
            return self.strs_ok([value])
        if type(value) is int:
            return self.ints_ok(value, value)
        if type(value) is float:
            if self.types is not None and "number" not in self.types and not ("integer" in self.types and value.is_integer()):
                return False
            if self.lo is not None and (value < self.lo or (self.lo_open and value == self.lo)):
                return False
            if self.hi is not None and (value > self.hi or (self.hi_open and value == self.hi)):  # noqa: SIM103 - each early return names a reason the analysis gives up
                return False
            return True
        if type(value) is bool:
            return self.types is None or "boolean" in self.types
        if value is None:
            return self.types is None or "null" in self.types
        return False  # containers are never per-row scalars

    def strs_ok(self, values: list[str]) -> bool:
        """Whether every ``str`` of `values` passes."""
        if self.types is not None and "string" not in self.types:
            return False
        if self.min_len is not None and min(map(len, values)) < self.min_len:
            return False
        if self.max_len is not None and max(map(len, values)) > self.max_len:
            return False
        return all(all(map(p.search, values)) for p in self.patterns)


class _Walker:
    def __init__(self, compiled: CompiledSchema, sensitive: Iterable[Path]) -> None:
        self.compiler = compiled.compiler
        self.oracle = compiled.oracle
        self.known = self.compiler.known
        self.sensitive = tuple(sensitive)

    def universal(self, schema: Any, resolver: Resolver) -> bool:
        return schema is True or self.compiler.is_universal(schema, resolver)

    # -- does a subschema look at any of these locations? (conservative) -----------------
    def touches(self, schema: Any, resolver: Resolver, paths: tuple[Path, ...], depth: int = 0) -> bool:
        if not paths or schema is True or schema is False:
            return False
        if not isinstance(schema, dict) or depth > 64:
            return True
        resolver = self.compiler.sub_resolver(schema, resolver)
        if any(not p for p in paths):
            return not self.universal(schema, resolver)
        props = schema.get("properties", {})
        patterns = schema.get("patternProperties", {})
        for kw, value in schema.items():
            if kw not in self.known or kw in PASSIVE_KEYWORDS or kw in _KEYSET or kw in _NOT_FOR_OBJECTS:
                continue
            if kw in ("properties", "patternProperties", "additionalProperties"):
                for head, rest in _split(paths):
                    for sub in _subschemas_for(head, props, patterns, schema, kw):
                        if self.touches(sub, resolver, rest, depth + 1):
                            return True
            elif kw == "$ref":
                resolved = resolver.lookup(value)
                if self.touches(resolved.contents, resolved.resolver, paths, depth + 1):
                    return True
            elif kw in ("allOf", "anyOf", "oneOf"):
                if any(self.touches(b, resolver, paths, depth + 1) for b in value):
                    return True
            elif kw in ("not", "if", "then", "else"):
                if self.touches(value, resolver, paths, depth + 1):
                    return True
            else:  # const, enum, dependentSchemas, unevaluatedProperties, anything unknown
                return True
        return False

    def constant_verdict(self, schema: Any, resolver: Resolver, instance: Any, sensitive: tuple[Path, ...]) -> bool:
        """The verdict of a decision that provably ignores every sensitive location."""
        if self.touches(schema, resolver, sensitive):
            raise Unsupported("a decision depends on a varying or per-row value")
        if schema is True or schema is False:
            return schema
        return schema_accepts(self.oracle, schema, resolver, instance)

    # -- the constraints at one varying location ------------------------------------------
    def leaves(self, schema: Any, resolver: Resolver, instance: Any, path: Path, sensitive: tuple[Path, ...],
               depth: int = 0) -> list[tuple[Any, Resolver]]:
        if depth > 64:
            raise Unsupported("schema too deep")
        if schema is True:
            return []
        if not isinstance(schema, dict):
            raise Unsupported("false schema on the path")
        resolver = self.compiler.sub_resolver(schema, resolver)
        if not path:
            return [] if self.universal(schema, resolver) else [(schema, resolver)]
        if not isinstance(instance, dict):
            raise Unsupported("path through a non-object")
        head, rest = path[0], path[1:]
        child, child_sensitive = instance.get(head), tuple(p[1:] for p in sensitive if p and p[0] == head)
        props = schema.get("properties", {})
        patterns = schema.get("patternProperties", {})
        out: list[tuple[Any, Resolver]] = []
        for kw, value in schema.items():
            if kw not in self.known or kw in PASSIVE_KEYWORDS or kw in _KEYSET or kw in _NOT_FOR_OBJECTS:
                continue
            if kw in ("properties", "patternProperties", "additionalProperties"):
                for sub in _subschemas_for(head, props, patterns, schema, kw):
                    out += self.leaves(sub, resolver, child, rest, child_sensitive, depth + 1)
            elif kw == "$ref":
                resolved = resolver.lookup(value)
                out += self.leaves(resolved.contents, resolved.resolver, instance, path, sensitive, depth + 1)
            elif kw == "allOf":
                for branch in value:
                    out += self.leaves(branch, resolver, instance, path, sensitive, depth + 1)
            elif kw in ("anyOf", "oneOf"):
                out += self.union(kw, value, resolver, instance, path, sensitive, depth)
            elif kw == "if":
                branch = "then" if self.constant_verdict(value, resolver, instance, sensitive) else "else"
                if branch in schema:
                    out += self.leaves(schema[branch], resolver, instance, path, sensitive, depth + 1)
            elif kw in ("then", "else"):
                continue
            elif kw == "not":
                self.constant_verdict(value, resolver, instance, sensitive)  # decided by the first member
            else:
                raise Unsupported(f"{kw} on an object that holds a varying value")
        return out

    def union(self, kw: str, branches: list[Any], resolver: Resolver, instance: Any, path: Path,
              sensitive: tuple[Path, ...], depth: int) -> list[tuple[Any, Resolver]]:
        touching: list[Any] = []
        constant_true = 0
        for branch in branches:
            if self.excluded(branch, resolver, instance, sensitive):
                continue
            if self.touches(branch, resolver, sensitive):
                touching.append(branch)
            elif self.constant_verdict(branch, resolver, instance, sensitive):
                constant_true += 1
        if kw == "anyOf" and constant_true:
            return []
        if len(touching) == 1 and constant_true == 0:
            return self.leaves(touching[0], resolver, instance, path, sensitive, depth + 1)
        if not touching and (kw == "oneOf" and constant_true == 1):
            return []
        raise Unsupported(f"{kw} whose branch choice depends on a varying value")

    def excluded(self, branch: Any, resolver: Resolver, instance: Any, sensitive: tuple[Path, ...]) -> bool:
        """A branch that pins a shared tag to other values never accepts any member."""
        disc = self.compiler.discriminator(branch, resolver)
        if disc is None or not isinstance(instance, dict):
            return False
        key, values = disc
        if any(p and p[0] == key for p in sensitive) or key not in instance:
            return False
        return not (isinstance(instance[key], str) and instance[key] in values)


def _split(paths: tuple[Path, ...]) -> list[tuple[str, tuple[Path, ...]]]:
    """Non-empty paths grouped by their first key: ``[(key, rests), ...]``."""
    out: dict[str, list[Path]] = {}
    for p in paths:
        out.setdefault(p[0], []).append(p[1:])
    return [(k, tuple(v)) for k, v in out.items()]


def _subschemas_for(head: str, props: Any, patterns: Any, schema: dict[str, Any], kw: str) -> list[Any]:
    """The subschemas that keyword `kw` of `schema` applies to property `head`."""
    if kw == "properties":
        return [props[head]] if isinstance(props, dict) and head in props else []
    matching = [sub for pattern, sub in (patterns or {}).items() if re.search(pattern, head)]
    if kw == "patternProperties":
        return matching
    if (isinstance(props, dict) and head in props) or matching:
        return []
    return [schema["additionalProperties"]]


def _bounds(walker: _Walker, leaves: list[tuple[Any, Resolver]]) -> ScalarBounds:
    bounds = ScalarBounds()
    todo = list(leaves)
    while todo:
        schema, resolver = todo.pop()
        if schema is True:
            continue
        if not isinstance(schema, dict):
            raise Unsupported("false schema at a varying location")
        resolver = walker.compiler.sub_resolver(schema, resolver)
        if walker.universal(schema, resolver):
            continue
        for kw, value in schema.items():
            if kw not in walker.known or kw in PASSIVE_KEYWORDS or kw in _SCALAR:
                continue
            if kw == "$ref":
                resolved = resolver.lookup(value)
                todo.append((resolved.contents, resolved.resolver))
            elif kw == "allOf":
                todo.extend((b, resolver) for b in value)
            else:
                raise Unsupported(f"{kw} at a varying location")
        bounds.add(schema)
    return bounds


def varying_constraints(compiled: CompiledSchema, template: JsonObject, varying: Iterable[Path],
                        per_row: Iterable[Path] = ()) -> dict[Path, ScalarBounds]:
    """For each varying path, the scalar constraints the schema puts there (see the module docstring).

    `template` is one member with any placeholder at the varying and per-row paths; `per_row`
    paths must not steer any decision either, but get no bounds (pass them as varying to get
    bounds too). Raises `Unsupported` when the shortcut cannot be proven exact.
    """
    varying = tuple(varying)
    walker = _Walker(compiled, varying + tuple(per_row))
    resolver = compiled.root_resolver
    out: dict[Path, ScalarBounds] = {}
    for path in varying:
        leaves = walker.leaves(compiled.schema, resolver, template, path, walker.sensitive)
        out[path] = _bounds(walker, leaves)
    return out
