"""msgspec types generated from the spec's JSON Schemas: an accept-fast decoder for log lines.

``msgspec`` decodes a JSON line straight into typed structs, checking types,
bounds and closed key sets in C, several times faster than parsing to dicts
and then running a Python predicate. This module *derives* those types from
the same JSON Schemas the oracle uses (nothing about the vocabulary is
restated), under one rule: **a value the generated type accepts is valid for
the schema**. The translation may be stricter than the schema (it then only
rejects, and the caller falls back to the exact path), never looser:

* objects become structs that forbid unknown fields (``additionalProperties``
  is at least as permissive); optional properties default to ``UNSET`` and
  are left out on encoding, so ``encode(decode(line)) == line`` holds for
  canonical lines and the caller can use that identity as its lossless-JSON
  guard (a duplicate key or a non-canonical number breaks it);
* ``number`` and ``integer`` are both ``int`` (so ``1.0`` or ``1.5`` is
  rejected, which only costs the fallback: log numbers are whole in practice);
  every ``int`` is also bounded to the safe range, because a wider integer is a
  validator finding (DEC-3). No accepted struct holds a float outside a
  ``JsonValue``, so none holds ``-0.0`` (JSON-2) and the log pass need not scan
  for it (`sessionspec.validator.fastlog`);
* ``const``/``enum`` of strings (or of booleans: the published envelope's ``ignorable: true``) become
  ``Literal``; ``minLength``/``maxLength``
  and ``minItems``/``maxItems`` and numeric bounds become ``Meta``;
  ``uniqueItems`` (of ints or strings) becomes a ``__post_init__`` check;
* a tag dispatch (``allOf`` of ``if <key> is <value> then ...``) becomes a
  tagged union: one struct per tag value, the tag's own ``if`` conditions
  decided for that value, unknown tags rejected;
* ``oneOf``/``anyOf`` become a union only when the branches are mutually
  exclusive by construction (different JSON kinds, or different tags);
* schemas that accept every JSON value (``JsonValue``) become ``Any``, with a
  ``__post_init__`` check that every integer in it is safe and no number in it
  is ``-0.0``;
* anything else raises `Unsupported`; a type or tag that cannot be translated
  is left out of the union, so its lines take the exact path.

`tests/cli/test_mstypes.py` checks the rule against python-jsonschema on the
registry examples, the conformance vectors, Hypothesis mutations and the
integer/float edge cases.
"""

from __future__ import annotations

import functools
import keyword
import math
import re
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, Union

import msgspec
import orjson
from sessionspec.spec import FORMAT
from sessionspec.validator.fastschema import PASSIVE_KEYWORDS, CompiledSchema, schema_accepts

__all__ = ["FastTypes", "Unsupported", "build_fast_types", "in_key_order"]

_MAX: int = FORMAT.max_safe_integer
_STRICT = orjson.OPT_STRICT_INTEGER
_META_WORDS = {"minItems": "min_length", "maxItems": "max_length", "minLength": "min_length",
               "maxLength": "max_length", "minimum": "ge", "maximum": "le",
               "exclusiveMinimum": "gt", "exclusiveMaximum": "lt"}
_OBJECT_WORDS = frozenset({"type", "properties", "required", "additionalProperties", "$ref", "allOf", "if", "then", "else"})


class Unsupported(Exception):
    """The schema (or this part of it) has no exact-subset msgspec translation."""


def _any_ok(value: Any) -> bool:
    """A decoded ``JsonValue`` is lossless when every integer is safe (orjson refuses wider ones) and no float is
    ``-0.0`` (a text holding ``-0.0`` is refused too, which only costs the fallback)."""
    try:
        text = orjson.dumps(value, option=_STRICT)
    except orjson.JSONEncodeError:
        return False
    return b"-0.0" not in text


@dataclass
class _Obj:
    """The object-level parts gathered for one location (through ``$ref``, ``allOf`` and decided ``if``s)."""

    props: dict[str, list[tuple[Any, Any]]] = field(default_factory=dict)
    required: set[str] = field(default_factory=set)
    additional: list[tuple[Any, Any]] = field(default_factory=list)  # additionalProperties schemas
    alternatives: list[tuple[list[Any], Any]] = field(default_factory=list)  # oneOf/anyOf branches
    dispatch: dict[str, dict[str, list[tuple[Any, Any]]]] = field(default_factory=dict)  # key -> tag -> thens


@dataclass
class FastTypes:
    """The generated decoder and what is known about each struct class."""

    decoder: msgspec.json.Decoder[object]  # a generated struct per event type or row tag, else None
    encoder: msgspec.json.Encoder
    tags: dict[type, str]  # struct class -> its tag value (event type or row tag)
    events: frozenset[str]  # event types with a struct
    rows: frozenset[str]  # row tags with a struct
    skipped: dict[str, str]  # type or tag -> why it has no struct


class _Translator:
    def __init__(self, compiled: CompiledSchema, prefix: str = "") -> None:
        self.prefix = prefix  # struct names of one revision's types (`generated.struct_prefix`): one module holds every revision's
        self.compiler = compiled.compiler
        self.oracle = compiled.oracle
        self.known = self.compiler.known
        self.cache: dict[tuple[int, tuple[tuple[str, str], ...]], Any] = {}
        self.active: set[tuple[int, tuple[tuple[str, str], ...]]] = set()
        self.keep: list[Any] = []
        self.counter: dict[str, int] = {}
        self.dropped: dict[str, str] = {}  # "<where>:<tag>" -> why a tag has no struct

    # -- helpers ---------------------------------------------------------------
    def words(self, schema: dict[str, Any]) -> list[str]:
        return [kw for kw in schema if kw in self.known and kw not in PASSIVE_KEYWORDS]

    def universal(self, schema: Any, resolver: Any) -> bool:
        return schema is True or self.compiler.is_universal(schema, resolver)

    def flatten(self, schema: Any, resolver: Any) -> tuple[Any, Any]:
        """Follow schemas that are only a ``$ref`` (annotations aside)."""
        for _ in range(32):
            if not isinstance(schema, dict):
                return schema, resolver
            resolver = self.compiler.sub_resolver(schema, resolver)
            if self.words(schema) != ["$ref"]:
                return schema, resolver
            resolved = resolver.lookup(schema["$ref"])
            schema, resolver = resolved.contents, resolved.resolver
        raise Unsupported("$ref chain too long")

    def accepts(self, schema: Any, resolver: Any, value: Any) -> bool:
        if schema is True or schema is False:
            return schema
        return schema_accepts(self.oracle, schema, resolver, value)

    def static(self, cond: Any, resolver: Any, facts: dict[str, str]) -> bool:
        """The verdict of an ``if`` on an object whose tag values in `facts` are known."""
        saved = self.compiler.facts
        self.compiler.facts = {"x": facts} if facts else {}
        try:
            verdict = self.compiler.static_verdict(cond, resolver, "x")
        finally:
            self.compiler.facts = saved
        if verdict is None:
            raise Unsupported("a condition that is not decided by the tag")
        return verdict

    def name(self, hint: str) -> str:
        """A struct name from `hint` (schema text): ASCII letters, digits and ``_`` only, so it is a plain identifier."""
        stem = re.sub(r"[^0-9A-Za-z_]", "_", hint)[:40]
        stem = stem if stem[:1].isalpha() else f"S{stem}"
        # numbered per stem, not per translator: another type's structs never renumber these (a local diff)
        self.counter[stem] = self.counter.get(stem, 0) + 1
        return f"{self.prefix}{stem}_{self.counter[stem]}"

    # -- translation -------------------------------------------------------------
    def translate(self, schema: Any, resolver: Any, facts: dict[str, str] | None = None, hint: str = "T") -> Any:
        """The msgspec type for `schema` (a subset of it); raises `Unsupported`."""
        facts = facts or {}
        if schema is True:
            return Any
        if schema is False:
            raise Unsupported("false schema")
        schema, resolver = self.flatten(schema, resolver)
        if not isinstance(schema, dict):
            raise Unsupported("not a schema object")
        if self.universal(schema, resolver):
            return Any
        key = (id(schema), tuple(sorted(facts.items())))
        if key in self.cache:
            return self.cache[key]
        if key in self.active:
            raise Unsupported("recursive schema")
        self.active.add(key)
        self.keep.append(schema)
        try:
            result = _decodable(self._translate(schema, resolver, facts, hint))
        finally:
            self.active.discard(key)
        self.cache[key] = result
        return result

    def _translate(self, schema: dict[str, Any], resolver: Any, facts: dict[str, str], hint: str) -> Any:
        words = set(self.words(schema))
        kind = schema.get("type")
        if kind == "object" or (kind is None and words & {"properties", "required", "additionalProperties"}
                                and words <= _OBJECT_WORDS) or (kind is None and words and words <= {"allOf", "$ref", "if", "then", "else"}):
            return self.object(schema, resolver, facts, hint)
        if words <= {"oneOf", "anyOf"} and len(words) == 1:
            return self.union(schema[words.pop()], resolver, hint)
        if "const" in words or "enum" in words:
            if words - {"const", "enum", "type"}:
                raise Unsupported("const/enum with other keywords")
            values = [schema["const"]] if "const" in schema else schema["enum"]
            if "const" in schema and "enum" in schema:
                values = [v for v in schema["enum"] if self.accepts({"const": schema["const"]}, resolver, v)]
            values = [v for v in values if type(v) in (str, bool) and ("type" not in schema or self.accepts({"type": kind}, resolver, v))]
            if not values or len({type(v) for v in values}) != 1:
                raise Unsupported("no string value" if not values else "strings and booleans in one enum")
            return Literal[tuple(values)]
        if isinstance(kind, list):
            if words - {"type"}:
                raise Unsupported("type list with other keywords")
            return self.exclusive_union([self._scalar(k, {}) for k in kind])
        if isinstance(kind, str):
            return self._typed(kind, schema, resolver, words, hint)
        raise Unsupported(f"keywords {sorted(words)}")

    def _typed(self, kind: str, schema: dict[str, Any], resolver: Any, words: set[str], hint: str) -> Any:
        if kind == "array":
            if words - {"type", "items", "minItems", "maxItems", "uniqueItems"}:
                raise Unsupported(f"array keywords {sorted(words)}")
            item = self.translate(schema["items"], resolver, hint=hint + "_item") if "items" in schema else Any
            marks: list[Any] = []
            if schema.get("uniqueItems") is True:
                # Python set equality is the schema's equality for ints and for strings (bool excluded).
                if _base(item) not in (int, str):
                    raise Unsupported("uniqueItems of non-scalar items")
                marks.append(_UNIQUE)
            meta = {_META_WORDS[w]: schema[w] for w in ("minItems", "maxItems") if w in schema}
            if meta:
                marks.append(_meta(meta))
            out = list[item]  # type: ignore[valid-type]
            return Annotated[(out, *marks)] if marks else out
        if kind == "object":
            return self.object(schema, resolver, {}, hint)
        allowed = {"string": {"type", "minLength", "maxLength"}, "boolean": {"type"}, "null": {"type"},
                   "integer": {"type", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"},
                   "number": {"type", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"}}.get(kind)
        if allowed is None or words - allowed:
            raise Unsupported(f"{kind} keywords {sorted(words)}")
        return self._scalar(kind, {w: schema[w] for w in words if w != "type"})

    def _scalar(self, kind: str, bounds: dict[str, Any]) -> Any:
        meta = {_META_WORDS[w]: v for w, v in bounds.items()}
        if any(type(v) not in (int, float) or not math.isfinite(v) for v in meta.values()):
            raise Unsupported("a non-numeric or non-finite bound")
        if kind == "string":
            return Annotated[str, _meta(meta)] if meta else str
        if kind == "boolean":
            return bool
        if kind == "null":
            return None
        if kind in ("integer", "number"):
            # ints: the schema's bounds as whole numbers, within the safe range (a wider int is a finding)
            low, high = -_MAX, _MAX
            for word, bound in bounds.items():
                if word == "minimum":
                    low = max(low, math.ceil(bound))
                elif word == "exclusiveMinimum":
                    low = max(low, math.floor(bound) + 1)
                elif word == "maximum":
                    high = min(high, math.floor(bound))
                elif word == "exclusiveMaximum":
                    high = min(high, math.ceil(bound) - 1)
            if low > high:
                raise Unsupported("no integer within the bounds")
            whole = _SAFE_INT if (low, high) == (-_MAX, _MAX) else Annotated[int, msgspec.Meta(ge=low, le=high)]
            return whole  # also for "number": no float, hence no -0.0, in an accepted struct (module docstring)
        raise Unsupported(f"type {kind}")

    def exclusive_union(self, members: list[Any]) -> Any:
        """A union msgspec accepts; its members must be mutually exclusive (checked by msgspec's rules)."""
        out = Union[tuple(members)]  # type: ignore[valid-type]
        try:
            msgspec.json.Decoder(out)
        except TypeError as exc:
            raise Unsupported(f"union: {exc}") from None
        return out

    def union(self, branches: list[Any], resolver: Any, hint: str) -> Any:
        # Branches of different JSON kinds, or structs with different tags, exclude each other:
        # msgspec refuses any other union, which is then unsupported.
        members = [self.translate(b, resolver, hint=f"{hint}_{i}") for i, b in enumerate(branches)]
        flat: list[Any] = []
        for m in members:
            flat.extend(m.__args__ if getattr(m, "__origin__", None) is Union else [m])
        if any(m is Any for m in flat):
            raise Unsupported("union with a universal branch")
        try:
            return self.exclusive_union(flat)
        except Unsupported:
            pass
        # Structs that share a tag: keep, per tag, one struct X that every other branch Y with that
        # tag provably rejects (Y requires a key X never has), so accepting X still means exactly one.
        by_tag: dict[Any, list[tuple[Any, Any]]] = {}
        for branch, member in zip(branches, members):
            if not isinstance(msgspec.inspect.type_info(member), msgspec.inspect.StructType):
                raise Unsupported("union of a struct and a same-kind non-struct")
            by_tag.setdefault(msgspec.inspect.type_info(member).tag, []).append((branch, member))  # type: ignore[attr-defined]  # checked to be a StructType just above
        chosen: list[Any] = []
        for group in by_tag.values():
            pick = next((m for b, m in group if all(self.required_outside(ob, resolver, m) for ob, om in group if om is not m)), None)
            if pick is None:
                raise Unsupported("union branches that overlap")
            chosen.append(pick)
        return self.exclusive_union(chosen)

    def required_outside(self, branch: Any, resolver: Any, struct: Any) -> bool:
        """Whether `branch` requires a key that `struct` never has (so it rejects all the struct accepts)."""
        parts = _Obj()
        try:
            self.gather(branch, resolver, {}, parts)
        except Unsupported:
            return False
        info = msgspec.inspect.type_info(struct)
        keys = {f.encode_name for f in info.fields} | ({info.tag_field} if info.tag_field else set())  # type: ignore[attr-defined]  # a struct's type info
        return bool(parts.required - keys)

    # -- objects -------------------------------------------------------------------
    def gather(self, schema: Any, resolver: Any, facts: dict[str, str], obj: _Obj, depth: int = 0,  # noqa: C901 - one branch per JSON Schema keyword the translation understands
               probe: bool = False) -> None:
        """Collect the object-level parts of `schema`; `probe` only discovers a tag dispatch."""
        if depth > 32:
            raise Unsupported("object schema too deep")
        if schema is True:
            return
        if not isinstance(schema, dict):
            raise Unsupported("false schema in an object")
        resolver = self.compiler.sub_resolver(schema, resolver)
        if self.universal(schema, resolver):
            return
        for kw in self.words(schema):
            value = schema[kw]
            if kw == "type":
                if value != "object":
                    raise Unsupported("object schema with another type")
            elif kw == "properties":
                for key, sub in value.items():
                    obj.props.setdefault(key, []).append((sub, resolver))
            elif kw == "required":
                obj.required.update(value)
            elif kw == "additionalProperties":
                obj.additional.append((value, resolver))  # structs forbid unknown fields: never more permissive
            elif kw == "$ref":
                resolved = resolver.lookup(value)
                self.gather(resolved.contents, resolved.resolver, facts, obj, depth + 1, probe)
            elif kw == "allOf":
                for branch in value:
                    disc = self.compiler.if_discriminator(branch)
                    if disc is None:
                        self.gather(branch, resolver, facts, obj, depth + 1, probe)
                        continue
                    tag_key, tag = disc
                    branch_resolver = self.compiler.sub_resolver(branch, resolver)
                    if tag_key in facts:
                        if facts[tag_key] == tag:
                            self.gather(branch["then"], branch_resolver, facts, obj, depth + 1, probe)
                    else:
                        obj.dispatch.setdefault(tag_key, {}).setdefault(tag, []).append((branch["then"], branch_resolver))
            elif kw == "if":
                if probe:
                    continue  # decided once the tag is known
                absent = _required_key_of(value)
                try:
                    verdict = self.static(value, resolver, facts)
                except Unsupported:
                    if absent is None:
                        raise
                    # Undecided, but false whenever a key the ``if`` requires is absent: the struct forbids
                    # that key (stricter: a value holding it takes the exact path), so only ``else`` applies.
                    obj.props.setdefault(absent, []).append((False, resolver))
                    verdict = False
                branch = "then" if verdict else "else"
                if branch in schema:
                    self.gather(schema[branch], resolver, facts, obj, depth + 1)
            elif kw in ("then", "else"):
                continue
            elif kw == "not" and isinstance(value, dict) and self.words(value) == ["required"] and (
                    (required := _required_key_of(value)) is not None):
                # holds whenever a key the negated schema requires is absent: the struct forbids that key (stricter)
                obj.props.setdefault(required, []).append((False, resolver))
            elif kw in ("oneOf", "anyOf") and not probe:
                obj.alternatives.append((value, resolver))
            elif kw in ("oneOf", "anyOf"):
                continue
            else:
                raise Unsupported(f"{kw} on an object")

    def object(self, schema: dict[str, Any], resolver: Any, facts: dict[str, str], hint: str) -> Any:
        probe = _Obj()
        self.gather(schema, resolver, facts, probe, probe=True)
        if not probe.dispatch:
            whole = _Obj()
            self.gather(schema, resolver, facts, whole)
            if not whole.props and not whole.required and len(whole.additional) == 1:
                # A map: `{type: object, additionalProperties: S}`.
                value = self.translate(*whole.additional[0], hint=hint + "_value")
                return dict[str, value]  # type: ignore[valid-type]
            return self.choose(whole, schema, resolver, facts, hint, None, None)
        if len(probe.dispatch) != 1:
            raise Unsupported("dispatch on several keys")
        ((tag_key, tags),) = probe.dispatch.items()
        members = []
        for tag in tags:
            parts = _Obj()
            try:
                self.gather(schema, resolver, {**facts, tag_key: tag}, parts)
                members.append(self.choose(parts, schema, resolver, {**facts, tag_key: tag}, f"{hint}_{tag}", tag_key, tag))
            except Unsupported as exc:
                self.dropped[f"{hint}:{tag}"] = str(exc)
                continue  # subset: this tag takes the exact path
        if not members:
            raise Unsupported("no tag of the dispatch is supported")
        return self.exclusive_union(members)

    def choose(self, obj: _Obj, schema: Any, resolver: Any, facts: dict[str, str], hint: str,
               tag_key: str | None, tag: str | None) -> Any:
        """The struct for `obj`; with a ``oneOf``/``anyOf`` among its parts, the struct of one branch
        that every other branch provably rejects (a branch requiring a key the struct never has)."""
        if not obj.alternatives:
            return self.struct(obj, hint, tag_key, tag)
        if len(obj.alternatives) != 1:
            raise Unsupported("several oneOf/anyOf on one object")
        ((branches, branch_resolver),) = obj.alternatives
        candidates: list[tuple[_Obj, Any]] = []
        for i, branch in enumerate(branches):
            parts = _Obj(dict(obj.props), set(obj.required), list(obj.additional))
            parts.props = {k: list(v) for k, v in obj.props.items()}
            try:
                self.gather(branch, branch_resolver, facts, parts)
                candidates.append((parts, self.struct(parts, f"{hint}_{i}", tag_key, tag)))
            except Unsupported:
                candidates.append((parts, None))
        for parts, struct in candidates:
            if struct is None:
                continue
            info = msgspec.inspect.type_info(struct)
            keys = {f.encode_name for f in info.fields} | ({tag_key} if tag_key else set())  # type: ignore[attr-defined]  # a struct's type info
            if all(other is parts or (other.required - keys) for other, _ in candidates):
                return struct
        raise Unsupported("overlapping oneOf/anyOf branches")

    def struct(self, obj: _Obj, hint: str, tag_key: str | None, tag: str | None) -> Any:
        if obj.alternatives:
            raise Unsupported("nested oneOf/anyOf")
        if obj.dispatch:
            raise Unsupported("nested dispatch")
        fields: list[tuple[str, Any, Any]] = []
        rename: dict[str, str] = {}
        unique: list[str] = []
        universal: list[str] = []
        for key, subs in obj.props.items():
            if key == tag_key:
                if not all(self.accepts(s, r, tag) for s, r in subs):
                    raise Unsupported("the tag value fails its own property schema")
                continue
            kind = self.property(subs, hint + "_" + key)
            if kind is _FORBIDDEN:
                if key in obj.required:
                    raise Unsupported(f"required property {key} is forbidden")
                continue
            attr = key if key.isascii() and key.isidentifier() and not keyword.iskeyword(key) and not key.startswith("_") else f"f_{len(fields)}"
            if attr != key:
                rename[attr] = key
            required = key in obj.required
            fields.append((attr, kind, msgspec.NODEFAULT) if required else (attr, Union[kind, msgspec.UnsetType], msgspec.UNSET))
            if _unique_list(kind):
                unique.append(attr)
            if _contains_any(kind):
                universal.append(attr)
        names = {key for key, _ in obj.props.items()}
        if not obj.required <= names | ({tag_key} if tag_key else set()):
            raise Unsupported("a required property without a schema")  # its value would be unchecked
        namespace = {"__post_init__": _post_init(unique, universal)} if unique or universal else {}
        # gc=False: a decoded struct holds only decoded values, so it is never part of a reference cycle;
        # untracked structs are cheaper to create and free (about 8% of decoding a log of chunks).
        options: dict[str, Any] = {"kw_only": True, "forbid_unknown_fields": True, "gc": False}
        if tag_key is not None:
            options.update(tag_field=tag_key, tag=tag)
        if rename:
            options["rename"] = rename
        try:
            struct = msgspec.defstruct(self.name(hint), fields, namespace=namespace, **options)
        except (TypeError, ValueError) as exc:  # UnicodeEncodeError: a key with a lone surrogate (no UTF-8 text holds it)
            raise Unsupported(f"msgspec refuses the struct: {exc}") from None
        return _decodable(struct)

    def property(self, subs: list[tuple[Any, Any]], hint: str) -> Any:
        """The type of one property from all the subschemas that apply to it (their conjunction)."""
        main: list[tuple[Any, Any]] = []
        extra: dict[str, Any] = {}
        for sub, resolver in subs:
            sub, resolver = self.flatten(sub, resolver)
            if self.universal(sub, resolver):
                continue
            if self.compiler.never(sub, resolver):
                return _FORBIDDEN
            if isinstance(sub, dict) and self.words(sub) and set(self.words(sub)) <= set(_META_WORDS):
                extra.update({_META_WORDS[w]: sub[w] for w in self.words(sub)})
                continue
            if not any(sub is m for m, _ in main):
                main.append((sub, resolver))
        if not main:
            if extra:
                raise Unsupported("bounds without a type")
            return Any
        if len(main) != 1:
            raise Unsupported("several schemas for one property")
        kind = self.translate(main[0][0], main[0][1], hint=hint)
        if extra:
            base = _base(kind)
            base_origin = getattr(base, "__origin__", None)
            # Lengths only (a second bound on an int could widen the safe range): on a list or a string
            # without that length bound already.
            if not set(extra) <= {"min_length", "max_length"} or base_origin is Union or not (base is str or base_origin is list):
                raise Unsupported("bounds on this kind")
            kind = _decodable(Annotated[kind, _meta(extra)])
        return kind


_FORBIDDEN = object()
_SAFE_INT = Annotated[int, msgspec.Meta(ge=-_MAX, le=_MAX)]


class _Unique:
    """Annotated marker: the list's items must be unique (checked in ``__post_init__``)."""


_UNIQUE = _Unique()


def _required_key_of(cond: Any) -> str | None:
    """A key an ``if`` schema requires (its first ``required`` one), else None: without that key the ``if`` fails."""
    required = cond.get("required") if isinstance(cond, dict) else None
    return required[0] if isinstance(required, list) and required and isinstance(required[0], str) else None


def _base(kind: Any) -> Any:
    """`kind` without its ``Annotated`` metadata."""
    return kind.__origin__ if hasattr(kind, "__metadata__") else kind


def _unique_list(kind: Any) -> bool:
    return any(m is _UNIQUE for m in getattr(kind, "__metadata__", ()))


def _contains_any(kind: Any) -> bool:
    if kind is Any:
        return True
    return any(_contains_any(a) for a in getattr(kind, "__args__", ()) if not isinstance(a, (str, msgspec.Meta)))


def _meta(words: dict[str, Any]) -> msgspec.Meta:
    """msgspec's constraint for bounds taken from a schema, or Unsupported when it cannot state them
    exactly (a non-finite or non-numeric bound, a length that is a float or beyond msgspec's range)."""
    if any(type(v) not in (int, float) or not math.isfinite(v) for v in words.values()):
        raise Unsupported("a non-numeric or non-finite bound")
    try:
        return msgspec.Meta(**words)
    except (TypeError, ValueError) as exc:
        raise Unsupported(f"msgspec refuses the bound: {exc}") from None


def _decodable(kind: Any) -> Any:
    """`kind` if msgspec accepts it as a type (it refuses e.g. two bounds of the same name), else Unsupported."""
    try:
        msgspec.json.Decoder(kind)
    except (TypeError, ValueError) as exc:  # UnicodeEncodeError too: a name or value with a lone surrogate
        raise Unsupported(f"msgspec refuses the type: {exc}") from None
    return kind


def _post_init(unique: list[str], universal: list[str]) -> Callable[[Any], None]:
    """Checks msgspec cannot express: ``uniqueItems`` and safe integers inside ``JsonValue`` parts."""
    unset = msgspec.UNSET
    if len(unique) == 1 and not universal:  # (the usual one: a list of distinct items; the same check, one name bound)
        only = unique[0]

        def unique_only(self: Any) -> None:
            value = getattr(self, only)
            if value is not unset and len(set(value)) != len(value):
                raise ValueError(f"{only}: items must be unique")

        unique_only.checks = (tuple(unique), tuple(universal))  # type: ignore[attr-defined]  # for pregen
        return unique_only

    def __post_init__(self: Any) -> None:  # noqa: N807 - installed as the generated structs' msgspec `__post_init__` hook
        for name in unique:
            value = getattr(self, name)
            if value is not unset and len(set(value)) != len(value):
                raise ValueError(f"{name}: items must be unique")
        for name in universal:
            value = getattr(self, name)
            if value is not unset and not _any_ok(value):
                raise ValueError(f"{name}: an integer beyond the safe range")

    __post_init__.checks = (tuple(unique), tuple(universal))  # type: ignore[attr-defined]  # for pregen
    return __post_init__


def build_fast_types(event: CompiledSchema, rows: CompiledSchema | None = None, prefix: str = "") -> FastTypes:
    """One decoder for every event type (and chunk row tag) that translates (see the module docstring).

    `rows` is the schema of a stored chunk row (a tag dispatch over the row tags); `prefix` starts every struct
    name (`generated.struct_prefix`: the revision's, so the generated module can hold every revision's structs).
    """
    tags: dict[type, str] = {}
    skipped: dict[str, str] = {}
    members: list[Any] = []
    found: dict[str, set[str]] = {"events": set(), "rows": set()}
    for group, compiled in (("events", event), ("rows", rows)):
        if compiled is None:
            continue
        translator = _Translator(compiled, prefix)
        resolver = compiled.root_resolver
        try:
            union = translator.translate(compiled.schema, resolver, hint=group)
        except Unsupported as exc:
            skipped[group] = str(exc)
            continue
        skipped.update(translator.dropped)
        for cls in getattr(union, "__args__", (union,)):
            info = msgspec.inspect.type_info(cls)
            if not isinstance(info, msgspec.inspect.StructType) or info.tag_field != "type" or not isinstance(info.tag, str):
                skipped[f"{group}:{cls!r}"] = "not a struct tagged by type"
                continue
            if any(info.tag == t for t in tags.values()):
                skipped[f"{group}:{info.tag}"] = "tag already used"
                continue
            tags[cls] = info.tag
            found[group].add(info.tag)
            members.append(cls)
    try:
        decoder = msgspec.json.Decoder(Union[tuple(members)] if members else type(None))
    except (TypeError, ValueError) as exc:  # pragma: no cover - each member was checked alone
        skipped["*"] = f"msgspec refuses the union: {exc}"
        tags, found, decoder = {}, {"events": set(), "rows": set()}, msgspec.json.Decoder(type(None))
    return FastTypes(decoder, msgspec.json.Encoder(), tags, frozenset(found["events"]), frozenset(found["rows"]), skipped)


# -- member order -------------------------------------------------------------------------------

def in_key_order(cls: type[msgspec.Struct], value: object) -> type[msgspec.Struct] | None:
    """A struct class that accepts exactly what the generated struct `cls` accepts, its fields (and those of its
    struct-typed fields, where `value` holds an object) in the order of `value`'s keys; None when `value`'s keys are
    not `cls`'s members (the tag first).

    Member order is no rule of a schema (a JSON object is unordered): the generated struct encodes its fields in the
    schema's property order, so a line a writer wrote in another order decodes but does not re-encode to itself. Its
    struct in the line's order does (`fastlog`'s lossless proof), with the same field types, defaults, tag and checks.
    """
    order = _key_order(cls, value)
    return None if order is None else _ordered(cls, order)


@functools.lru_cache(maxsize=64)
def union_decoder(members: tuple[type[msgspec.Struct], ...]) -> msgspec.json.Decoder[Any]:
    """A decoder of the union of the generated structs ``members`` (some in another member order: `in_key_order`)."""
    return msgspec.json.Decoder(Union[members])


def _struct_in(kind: Any) -> Any:
    """The struct class of a field type that is one (alone or beside ``UNSET``), else None."""
    if isinstance(kind, type) and issubclass(kind, msgspec.Struct):
        return kind
    if typing.get_origin(kind) is Union:
        found = [k for k in typing.get_args(kind) if k is not msgspec.UnsetType]
        if len(found) == 1 and isinstance(found[0], type) and issubclass(found[0], msgspec.Struct):
            return found[0]
    return None


@functools.lru_cache(maxsize=512)
def _fields_by_name(cls: Any) -> dict[str, Any]:
    """`cls`'s fields by their JSON names, in its order."""
    return {f.encode_name: f for f in msgspec.structs.fields(cls)}


def _key_order(cls: Any, value: Any) -> tuple[tuple[str, Any], ...] | None:
    """`value`'s keys as `cls`'s members, each with the key order of its value when that member is a struct."""
    if type(value) is not dict:
        return None
    config = cls.__struct_config__
    fields = _fields_by_name(cls)
    keys = list(value)
    if config.tag_field is not None:
        if not keys or keys[0] != config.tag_field:
            return None
        keys = keys[1:]
    order: list[tuple[str, Any]] = []
    for key in keys:
        found = fields.get(key)
        if found is None:
            return None
        sub = _struct_in(found.type)
        inner = _key_order(sub, value[key]) if sub is not None and type(value[key]) is dict else ()
        if inner is None:
            return None
        order.append((key, inner))
    return tuple(order)


@functools.lru_cache(maxsize=512)
def _ordered(cls: Any, order: tuple[tuple[str, Any], ...]) -> Any:
    fields = _fields_by_name(cls)
    nested = dict(order)
    keys = [k for k, _ in order] + [k for k in fields if k not in nested]
    specs: list[tuple[Any, ...]] = []
    same = keys == list(fields)
    for key in keys:
        info = fields[key]
        kind = info.type
        if nested.get(key):
            sub = _struct_in(kind)
            variant = _ordered(sub, nested[key])
            if variant is not sub:
                same = False
                kind = variant if kind is sub else Union[variant, msgspec.UnsetType]
        specs.append((info.name, kind) if info.required else (info.name, kind, info.default))
    if same:
        return cls  # already in that order
    config = cls.__struct_config__
    options: dict[str, Any] = {"kw_only": True, "forbid_unknown_fields": config.forbid_unknown_fields, "gc": config.gc}
    if config.tag_field is not None:
        options.update(tag_field=config.tag_field, tag=config.tag)
    rename = {f.name: f.encode_name for f in fields.values() if f.name != f.encode_name}
    if rename:
        options["rename"] = rename
    hook = cls.__dict__.get("__post_init__")
    namespace = {"__post_init__": hook} if hook is not None else {}
    return msgspec.defstruct(cls.__name__ + "_in_order", specs, namespace=namespace, **options)
