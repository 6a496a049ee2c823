"""Which format revision reads a log: evidence weighed over its whole content, judged by the spec data.

Two kinds of evidence, both derived from the revisions' resolved registries
(nothing here names a type or a field):

* an event whose type is registered in some revisions but not in others
  (``steering/message`` only at the pinned revision, ``session/end-seed`` only
  at the published one, ...);
* an event of a type registered everywhere whose payload is valid against the
  payload schema of some revisions only (a ``user/message`` holding an
  identified message, an ``assistant/message`` with top-level ``provenance``);
* an event outside any turn of a type some revisions allow there and others do
  not (INV-10: settings written before the first turn at the published one).

A log's revision is the one whose load path reads all of its content (DEC-24):

* evidence for one revision only: that revision;
* evidence for several, where one of them (the *reader*) reads the others'
  records upgraded on load (JSONL-13): a log of the earlier format resumed by the
  reader-only content, and is read at the reader. Content interleaved otherwise
  is not a resumed log. When the reader's content holds what no earlier revision
  can hold (a type only it registers, a payload member only its schemas define:
  the earlier schemas reject it as an unexpected property), only the reader reads
  the log whole and it is read there, whatever the counts; else the evidence is
  weighed, and the revision with more evidence wins (the reader on a tie), so
  one stray record (a ``turn/start`` that lost a field: evidence by what it
  lacks, which an earlier revision can hold) neither flips a log nor hides its
  schema error;
* no evidence, or evidence no one revision reads whole: the default revision, and
  the detection says why.

Every event is looked at once and only counts and a few examples are kept, so
detection is one streaming pass in O(1) memory per record.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sessionspec.reference import json_text, jsonl_read
from sessionspec.spec import load_spec
from sessionspec.spec.errors import JsonTextError
from sessionspec.spec.revisions import DEFAULT_REVISION, known_revisions
from sessionspec.spec.schema_types import JsonValue

if TYPE_CHECKING:
    from sessionspec.validator.fastschema import CompiledSchema

__all__ = ["Detection", "InlineDetection", "detect_in_blocks", "detect_in_bytes", "detect_revision", "reads_upgraded"]

EXAMPLES = 3
"""Pieces of evidence kept per revision for the report (the rest are counted)."""


@dataclass(frozen=True)
class Detection:
    """The revision a log is read at, and why."""

    revision: str
    evidence: tuple[str, ...] = ()
    ambiguous: bool = False
    note: str = ""
    scores: dict[str, int] = field(default_factory=dict)
    # the evidence a load path reads or refuses (types, payloads), without where the settings are: placement
    # outside a turn is a strict-level rule (INV-10), which any revision's load path reads through (None: = scores)
    content: dict[str, int] | None = None

    @property
    def reason(self) -> str:
        """Why this revision, in one short line."""
        return self.note or f"detected: {'; '.join(self.evidence)}"

    def describe(self) -> str:
        """One line for a report."""
        return f"revision {self.revision} ({self.reason})"

    def in_store(self, layout: int | None, owner: str | None) -> Detection:
        """This detection for a session stored in SQLite ``layout``: a log without revision-specific content
        is read at ``owner``, the one revision whose layouts include it (None: several or none do)."""
        if owner is None or owner == self.revision or any(self.scores.values()):
            return self
        return Detection(owner, (), False,
                         f"no revision-specific content; SQLite layout {layout} is a layout of revision {owner} only",
                         self.scores, self.content)

    def contradiction(self, given: str) -> str | None:
        """What to tell a user who named revision ``given`` for a log with content ``given``'s load path does
        not read (None when it reads it all: its own content, or earlier-format records it reads upgraded)."""
        content = self.scores if self.content is None else self.content
        unread = [r for r, score in sorted(content.items())
                  if score and r != given and not reads_upgraded(given, r)]
        if not unread:
            return None
        return f"its content shows revision {', '.join(unread)}, which {given}'s load path does not read"


def reads_upgraded(reader: str, earlier: str) -> bool:
    """Whether revision ``reader``'s load path reads records of revision ``earlier`` upgraded: ``earlier`` is
    an ancestor of ``reader`` and ``reader`` upgrades earlier-format records on load (JSONL-13)."""
    from sessionspec.reference.revision import rules_for
    from sessionspec.spec.revisions import revision_chain

    return earlier in {r.id for r in revision_chain(reader)[:-1]} and rules_for(reader).load_upgrade is not None


@functools.cache
def _tables() -> tuple[dict[str, frozenset[str]], dict[str, dict[str, CompiledSchema]]]:
    """Type -> revisions registering it; type -> {revision: its compiled payload schema} for the shared types
    whose payloads can be evidence (from each revision's `SchemaSet`: generated ahead of time for the installed
    revisions, compiled at first use otherwise)."""
    from sessionspec.validator.generated import generated_evidence_payloads
    from sessionspec.validator.lint import schema_set

    specs = {r: load_spec(revision=r) for r in known_revisions()}
    registered: dict[str, set[str]] = {}
    for rid, spec in specs.items():
        for event_type in spec.events:
            registered.setdefault(event_type, set()).add(rid)
    payloads = {event_type: {rid: schema_set(revision=rid).payload(schema_id) for rid, schema_id in ids.items()}
                for event_type, ids in generated_evidence_payloads(specs).items()}
    return {t: frozenset(r) for t, r in registered.items()}, payloads


@functools.cache
def _excluded() -> dict[str, dict[str, frozenset[str]]]:
    """Type -> {revision R: the revisions whose payload schema no payload valid at R's accepts}, for the types whose
    payloads can be evidence: a payload valid at R's schema is known to miss those revisions' without checking it
    (`_exclusive`), so a record a revision's generated struct read is checked only where it may fit."""
    from sessionspec.validator.generated import generated_evidence_payloads

    specs = {r: load_spec(revision=r) for r in known_revisions()}
    out: dict[str, dict[str, frozenset[str]]] = {}
    for event_type, ids in generated_evidence_payloads(specs).items():
        shapes = {rid: _object_shape(specs[rid].schemas, schema_id) for rid, schema_id in ids.items()}
        out[event_type] = {rid: frozenset(o for o in ids if o != rid and _exclusive(shapes[rid], shapes[o]))
                           for rid in ids}
    return out


def _exclusive(valid: tuple[frozenset[str], frozenset[str] | None], other: tuple[frozenset[str], frozenset[str] | None]
               ) -> bool:
    """Whether no value valid at a schema of shape ``valid`` is valid at one of shape ``other`` (shapes:
    `_object_shape`): one of them requires a member the other, closed, does not define (an unexpected property
    there, or a required member missing)."""
    (required, defined), (other_required, other_defined) = valid, other
    return bool((other_defined is not None and required - other_defined)
                or (defined is not None and other_required - defined))


def _object_shape(schemas: Any, uri: str) -> tuple[frozenset[str], frozenset[str] | None]:
    """What every value valid at the schema at ``uri`` (``schemas``: $id -> document) is known to be, read off the
    subschemas it must meet whole (itself, and through ``$ref`` and ``allOf``): (the members it holds, being an
    object: ``required`` where some such subschema says ``type: object``; nothing else), (the only members it may
    hold when an object: the ``properties`` of such a subschema with ``additionalProperties: false`` and no
    ``patternProperties``; None: any). A subschema it cannot reach only leaves out what it would add."""
    from urllib.parse import urljoin

    required: set[str] = set()
    defined: frozenset[str] | None = None
    is_object = False
    todo = [(uri, uri)]
    seen: set[tuple[str, str]] = set()
    nodes: list[tuple[Any, str]] = []
    while todo:
        base, ref = todo.pop()
        if (base, ref) in seen:
            continue
        seen.add((base, ref))
        target = _resolve(schemas, base, ref)
        if target is not None:
            nodes.append(target)
        while nodes:
            node, at = nodes.pop()
            if type(node) is not dict:
                continue
            if type(node.get("$id")) is str:
                at = urljoin(at, node["$id"])
            if node.get("type") == "object" or node.get("type") == ["object"]:
                is_object = True
            if type(node.get("required")) is list:
                required.update(name for name in node["required"] if type(name) is str)
            members = node.get("properties", {})
            if node.get("additionalProperties") is False and "patternProperties" not in node and type(members) is dict:
                defined = frozenset(members) if defined is None else defined & frozenset(members)
            if type(node.get("$ref")) is str:
                todo.append((at, node["$ref"]))
            if type(node.get("allOf")) is list:
                nodes.extend((branch, at) for branch in node["allOf"])
    return (frozenset(required) if is_object else frozenset()), defined


class _Tally:
    """Evidence for one revision: how much, where it starts and ends (event index), and its first examples."""

    __slots__ = ("_where", "beyond", "count", "examples", "first", "first_at", "held", "last")

    def __init__(self) -> None:
        self._where: Callable[[], str] | None = None
        self.count = 0
        self.first = self.last = -1
        self.first_at = ""
        self.examples: list[str] = []
        # the revisions that cannot hold some of this revision's content (a type they do not register, a member
        # their payload schema does not define), with the first such content (`held`)
        self.beyond: set[str] = set()
        self.held = ""

    def add(self, index: int, what: str, where: Callable[[], str]) -> None:
        if not self.count:
            self.first, self.first_at = index, where()
        self.count += 1
        self.last, self._where = index, where
        if len(self.examples) < EXAMPLES:
            self.examples.append(f"{what} at {where()}")

    def add_line(self, number: int) -> None:
        """`add` of one more piece of evidence at line ``number``, once the first and the examples are recorded (an
        inline detection counting a settled type in bulk: its label is the line, made when asked)."""
        self.count += 1
        self.last, self._where = number, None

    def holds(self, others: Iterable[str], what: str, where: Callable[[], str]) -> None:
        """Content here that ``others`` cannot hold."""
        new = set(others) - self.beyond
        if new:
            self.beyond |= new
            self.held = self.held or f"{what} at {where()}"

    def ends_at(self) -> str:
        """Where the last piece of evidence is (labelled only when asked; None: counted in bulk by an inline
        detection, whose index is the line number)."""
        return f"line {self.last}" if self._where is None else self._where()


@functools.cache
def _oracle(event_type: str, revision: str) -> Any:
    """The oracle of ``event_type``'s payload schema at ``revision`` (for what it says, not only whether)."""
    from sessionspec.validator.lint import schema_set

    schemas = schema_set(revision=revision)
    return schemas.payload(schemas.spec.events[event_type]["payloadSchema"]).oracle


def _holds_undefined(event_type: str, revision: str, data: Any) -> bool:
    """Whether ``data`` holds a member the payload schema of ``event_type`` at ``revision`` does not define:
    an unexpected property that the schema reports directly (not the best match among alternatives).

    Asked of the schema documents first (`_undefined_in`), which decide it for the usual payloads without building
    the oracle (python-jsonschema: a third of a short run's start-up); the oracle decides what they leave open."""
    spec = load_spec(revision=revision)
    found = _undefined_in(spec.schemas, spec.events[event_type]["payloadSchema"], data)
    if found is not None:
        return found
    try:
        return any(error.validator in ("additionalProperties", "unevaluatedProperties")
                   for error in _oracle(event_type, revision).iter_errors(data))
    except RecursionError:
        return False


#: Keywords that never make the oracle report an unexpected property directly: annotations, assertions on the
#: instance itself, ``propertyNames`` (whose instances are strings), and the applicators whose failures the oracle
#: reports as one error of their own (``oneOf``, ``anyOf``, ``not``: the errors inside are only its context).
_NO_DIRECT_MEMBER_ERROR = frozenset({
    "$schema", "$id", "$comment", "$anchor", "$defs", "title", "description", "examples", "default", "deprecated",
    "readOnly", "writeOnly", "format", "contentMediaType", "contentEncoding", "type", "required", "enum", "const",
    "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minLength", "maxLength", "pattern",
    "minItems", "maxItems", "uniqueItems", "minProperties", "maxProperties", "dependentRequired", "propertyNames",
    "oneOf", "anyOf", "not", "then", "else"})
_DEPTH = 64


def _undefined_in(schemas: Any, uri: str, data: Any) -> bool | None:
    """`_holds_undefined` read off the schema documents (``schemas``: $id -> document) for the schema at ``uri``:
    True when the oracle surely reports an unexpected property (``additionalProperties: false`` and a member
    neither ``properties`` names, reached through ``$ref``, ``allOf``, ``properties``, ``items``, ``prefixItems`` or
    an ``if`` decided here), False when it surely reports none, None when a keyword it does not follow is met
    (``patternProperties``, ``unevaluatedProperties``, an ``if`` it cannot decide, ...): the oracle then decides."""
    target = _resolve(schemas, uri, uri)
    return None if target is None else _walk(schemas, target[0], target[1], data, 0)


def _resolve(schemas: Any, base: str, ref: str) -> tuple[Any, str] | None:
    """(schema, its base URI) that ``ref`` names from ``base``; None for what is not a plain document or pointer."""
    from urllib.parse import unquote, urldefrag, urljoin

    uri, fragment = urldefrag(urljoin(base, ref))
    node = schemas.get(uri)
    if node is None or (fragment and not fragment.startswith("/")):
        return None
    for part in fragment.split("/")[1:] if fragment else ():
        key = unquote(part).replace("~1", "/").replace("~0", "~")
        if type(node) is dict and key in node:
            node = node[key]
        elif type(node) is list and key.isdigit() and int(key) < len(node):
            node = node[int(key)]
        else:
            return None
    return node, uri


def _walk(schemas: Any, schema: Any, base: str, value: Any, depth: int) -> bool | None:  # noqa: C901 - one branch per keyword
    if type(schema) is bool:
        return False  # true accepts all; false's error is its own, not an unexpected property
    if type(schema) is not dict or depth > _DEPTH:
        return None
    if "$id" in schema:
        from urllib.parse import urljoin

        if type(schema["$id"]) is not str:
            return None
        base = urljoin(base, schema["$id"])
    undecided = False

    def sub(result: bool | None) -> bool:
        nonlocal undecided
        undecided = undecided or result is None
        return result is True

    for key, keyword in schema.items():
        if key in _NO_DIRECT_MEMBER_ERROR:
            continue
        if key == "$ref":
            target = _resolve(schemas, base, keyword) if type(keyword) is str else None
            if sub(None if target is None else _walk(schemas, target[0], target[1], value, depth + 1)):
                return True
        elif key == "allOf":
            if type(keyword) is not list:
                return None
            for branch in keyword:
                if sub(_walk(schemas, branch, base, value, depth + 1)):
                    return True
        elif key == "properties":
            if type(keyword) is not dict:
                return None
            if type(value) is dict:
                for name, member in value.items():
                    if name in keyword and sub(_walk(schemas, keyword[name], base, member, depth + 1)):
                        return True
        elif key == "additionalProperties":
            if "patternProperties" in schema or type(schema.get("properties", {})) is not dict:
                return None
            if type(value) is dict:
                named = schema.get("properties", {})
                extra = [member for name, member in value.items() if name not in named]
                if extra and keyword is False:
                    return True
                for member in extra:
                    if sub(_walk(schemas, keyword, base, member, depth + 1)):
                        return True
        elif key in ("items", "prefixItems"):
            if type(value) is list:
                if key == "prefixItems":
                    if type(keyword) is not list:
                        return None
                    pairs = list(zip(keyword, value))
                else:
                    prefix = schema.get("prefixItems", [])
                    if type(prefix) is not list:
                        return None
                    pairs = [(keyword, item) for item in value[len(prefix):]]
                for item_schema, item in pairs:
                    if sub(_walk(schemas, item_schema, base, item, depth + 1)):
                        return True
        elif key == "if":
            holds = _simple_valid(keyword, value)
            if holds is None:
                return None
            branch = schema.get("then" if holds else "else")
            if branch is not None and sub(_walk(schemas, branch, base, value, depth + 1)):
                return True
        else:
            return None  # patternProperties, unevaluated*, dependentSchemas, contains, $dynamicRef, ...: the oracle
    return None if undecided else False


def _simple_valid(schema: Any, value: Any) -> bool | None:
    """Whether ``value`` is valid for an ``if`` schema of a tag test (``type: object``, ``required``, ``properties``
    whose members are a string ``const`` or ``enum`` of strings); None for any other schema."""
    if type(schema) is bool:
        return schema
    if type(schema) is not dict or not set(schema) <= {"type", "required", "properties"}:
        return None
    kind, required, members = schema.get("type", "object"), schema.get("required", []), schema.get("properties", {})
    if kind != "object" or type(required) is not list or type(members) is not dict:
        return None
    tests: list[tuple[str, frozenset[str]]] = []
    for name, member in members.items():
        if type(member) is not dict or len(member) != 1:
            return None
        if "const" in member and type(member["const"]) is str:
            tests.append((name, frozenset([member["const"]])))
        elif "enum" in member and type(member["enum"]) is list and all(type(v) is str for v in member["enum"]):
            tests.append((name, frozenset(member["enum"])))
        else:
            return None
    if type(value) is not dict:
        return "type" not in schema
    return all(name in value for name in required) and all(
        name not in value or (type(value[name]) is str and value[name] in allowed) for name, allowed in tests)


@functools.cache
def _outside_turns() -> tuple[tuple[str, str], dict[str, frozenset[str]]]:
    """The types opening and closing a turn; type -> the revisions that allow it outside any turn, for the
    registered types where revisions differ (INV-10: `Rules.needs_open_turn`)."""
    from sessionspec.reference.invariants import TURN_BOUNDS
    from sessionspec.reference.revision import rules_for

    revisions = known_revisions()
    rules = [rules_for(r) for r in revisions]
    types = sorted({t for r in rules for t in r.known_types} - set(TURN_BOUNDS))
    allowed = {t: frozenset(r.id for r in rules if t in r.known_types and not r.needs_open_turn(t)) for t in types}
    return TURN_BOUNDS, {t: a for t, a in allowed.items() if 0 < len(a) < len(revisions)}


class _Detector:
    """One streaming pass of detection: feed events with `add`, then ask `result`."""

    def __init__(self) -> None:
        self.registered, self.payloads = _tables()
        self.all_revisions = frozenset(known_revisions())
        self.others = len(self.all_revisions) - 1  # the revisions a revision's content can be beyond
        self.tallies = {r: _Tally() for r in known_revisions()}
        (self.opens, self.closes), self.outside = _outside_turns()
        self.in_turn = False
        self.placed = dict.fromkeys(known_revisions(), 0)
        # type -> (the revisions registering it, those that do not), for the types registered in some revisions only
        self.partial = {t: (revs, self.all_revisions - revs) for t, revs in self.registered.items()
                        if revs != self.all_revisions}
        # type -> (its payload checks, the label of its payload evidence, {revision R: the checks a payload valid at R
        # may pass: R's own and those of the revisions `_excluded` does not rule out}), for the types whose payloads
        # can be evidence
        excluded = _excluded()
        self.checks = {t: (pairs, f"{t} payload of this revision",
                           {rid: tuple(pair for pair in pairs if pair[0] not in excluded.get(t, {}).get(rid, ()))
                            for rid, _ in pairs})
                       for t, checks in self.payloads.items()
                       for pairs in [tuple((rid, v.is_valid) for rid, v in checks.items())]}

    def add(self, index: int, event: Any, where: Callable[[], str], valid_at: str | None = None) -> None:
        """One event; ``valid_at``: a revision whose schemas are known to accept it (its payload is not checked)."""
        if type(event) is not dict:
            return
        etype = event.get("type")
        if type(etype) is not str:
            return
        self.add_typed(index, etype, event, _data_of, where, valid_at)

    def add_typed(self, index: int, etype: str, event: Any, data_of: Callable[[Any], Any], where: Callable[[], str],
                  valid_at: str | None = None) -> None:
        """`add` of an event of type ``etype`` whose payload ``data_of(event)`` gives (asked only when a check needs
        it: a record a generated struct read need not be converted when its type decides)."""
        if etype == self.opens or etype == self.closes:
            self.in_turn = etype == self.opens
        elif not self.in_turn:  # where a revision allows the type outside a turn and another does not (INV-10)
            for rid in self.outside.get(etype, ()):
                self.tallies[rid].add(index, f"{etype} outside a turn", where)
                self.placed[rid] += 1
        partial = self.partial.get(etype)
        if partial is not None:
            revs, others = partial  # the others do not register the type: they cannot hold it
            for rid in revs:
                tally = self.tallies[rid]
                tally.add(index, etype, where)
                if not tally.beyond >= others:
                    tally.holds(others, etype, where)
            return
        found = self.checks.get(etype)
        if found is None:
            return
        checks, label, fitting = found
        possible = fitting.get(valid_at, checks) if valid_at is not None else checks
        if len(possible) == 1 and possible[0][0] == valid_at:
            # every other revision's payload schema rejects what valid_at's accepts (`_excluded`): its evidence alone
            tally = self.tallies[valid_at]
            tally.add(index, label, where)
            if len(tally.beyond) < self.others:
                self._held(tally, etype, [rid for rid, _ in checks if rid != valid_at], data_of(event), where)
            return
        data = data_of(event)
        fits = [rid for rid, is_valid in possible if rid == valid_at or is_valid(data)]
        if 0 < len(fits) < len(checks):
            misfits = [rid for rid, _ in checks if rid not in fits]
            for rid in fits:
                tally = self.tallies[rid]
                tally.add(index, label, where)
                if len(tally.beyond) < self.others:
                    self._held(tally, etype, misfits, data, where)

    def settled(self, etype: str, valid_at: str) -> tuple[tuple[_Tally, ...], bool | None, bool] | bool:
        """What `add_typed` does from now on with an event of type ``etype`` a struct of ``valid_at`` read, when that
        no longer depends on its payload or on the evidence so far: (the tallies it counts for, the turn it opens
        (True) or closes (False) or None, whether its place outside a turn is evidence: then it is only counted inside
        one). True: not yet (an example or a revision it is beyond still to record); False: never (its payload is
        checked)."""
        tallies = self.tallies
        partial = self.partial.get(etype)
        if partial is not None:
            counted = tuple(tallies[rid] for rid in partial[0])
            if not all(t.beyond >= partial[1] for t in counted):
                return True
        else:
            found = self.checks.get(etype)
            if found is None:
                counted = ()
            else:
                checks, _, fitting = found
                possible = fitting.get(valid_at, checks)
                if not (len(possible) == 1 and possible[0][0] == valid_at):
                    return False
                counted = (tallies[valid_at],)
                if len(counted[0].beyond) < self.others:
                    return True
        if not all(t.count and len(t.examples) >= EXAMPLES for t in counted):
            return True
        bound = True if etype == self.opens else False if etype == self.closes else None
        return counted, bound, bound is None and etype in self.outside

    def _held(self, tally: _Tally, etype: str, misfits: list[str], data: Any, where: Callable[[], str]) -> None:
        """The revisions of ``misfits`` (whose payload schemas reject ``data``) that cannot hold it, for ``tally``:
        asked until every other revision is known to miss some content (O(1) oracle runs in the usual log)."""
        held = [o for o in misfits if o not in tally.beyond and _holds_undefined(etype, o, data)]
        if held:
            tally.holds(held, f"{etype} (a member only it defines)", where)

    def result(self) -> Detection:
        detection = self._result()
        content = {r: t.count - self.placed[r] for r, t in self.tallies.items()}
        return dataclasses.replace(detection, content=content)

    def _result(self) -> Detection:
        tallies = self.tallies
        scores = {r: t.count for r, t in tallies.items()}
        supported = [r for r in known_revisions() if scores[r]]
        if len(supported) == 1:
            rid = supported[0]
            more = scores[rid] - 1
            return Detection(rid, tuple(tallies[rid].examples), False,
                             f"detected: {tallies[rid].examples[0]}" + (f" and {more} more" if more else ""), scores)
        if not supported:
            return Detection(DEFAULT_REVISION, (), True, "no revision-specific content; read at the default revision",
                             scores)
        readers = [r for r in supported if all(reads_upgraded(r, o) for o in supported if o != r)]
        if len(readers) != 1:
            detail = ", ".join(f"{r}: {tallies[r].examples[0]}" for r in supported)
            return Detection(DEFAULT_REVISION, (), True,
                             f"ambiguous, content of revisions no one revision reads whole ({detail}); "
                             "read at the default revision", scores)
        reader = readers[0]
        earlier = [r for r in supported if r != reader]
        first = tallies[reader]
        if all(tallies[o].last < first.first for o in earlier):
            last = max((tallies[o] for o in earlier), key=lambda t: t.last)
            return Detection(reader, (tallies[earlier[0]].examples[0], first.examples[0]), False,
                             f"resumed: {', '.join(earlier)} content up to {last.ends_at()}, read upgraded by "
                             f"{reader}'s load path; {reader} content from {first.first_at}", scores)
        if all(o in first.beyond for o in earlier):
            # the reader's content holds what the earlier revisions cannot: only the reader reads the log whole
            return Detection(reader, tuple(first.examples), False,
                             f"interleaved; only {reader} can hold {first.held}, and its load path reads the "
                             f"{', '.join(earlier)} records upgraded",
                             scores)
        heaviest = max(earlier, key=lambda r: scores[r])
        if scores[heaviest] > scores[reader]:
            return Detection(heaviest, tuple(tallies[heaviest].examples), False,
                             f"mostly {heaviest} content ({scores[heaviest]} against {scores[reader]} of {reader}, "
                             f"interleaved: not a resumed log; first {reader} content: {first.examples[0]})", scores)
        return Detection(reader, tuple(first.examples), False,
                         f"mostly {reader} content ({scores[reader]} against {scores[heaviest]} of {heaviest}, "
                         f"interleaved), whose load path reads the earlier-format records upgraded", scores)


def _data_of(event: dict[str, Any]) -> Any:
    return event.get("data")


def detect_revision(events: Iterable[JsonValue], lines: Sequence[int | None] | None = None) -> Detection:
    """The revision of a log from its events, in one pass. Evidence is labelled with ``lines`` (file lines) when
    given, else with the event's seq (a database has no lines)."""
    detector = _Detector()
    for index, event in enumerate(events):
        detector.add(index, event, _where(event, index, lines))
    return detector.result()


def _where(event: Any, index: int, lines: Sequence[int | None] | None) -> Callable[[], str]:
    def where() -> str:
        if lines is not None and index < len(lines) and lines[index] is not None:
            return f"line {lines[index]}"
        seq = event.get("seq") if type(event) is dict else None
        return f"seq {seq}" if type(seq) is int else f"event {index}"
    return where


#: Bytes of a log fed to detection at a time (`detect_in_bytes`).
_BLOCK = 1 << 20


#: What the writers begin every line with: the envelope's type comes first.
_PREFIX = b'{"type":"'


@functools.cache
def _candidates() -> re.Pattern[bytes]:
    """The newline before each line detection must parse: one whose leading envelope type can be evidence
    (registered in some revisions only, with payloads that differ, a turn bound, or allowed outside a turn by
    some revisions only), is escaped, or is not where the writers put it. Any other line (chunks, step bounds,
    the header: most of a log) is never parsed."""
    registered, payloads = _tables()
    everywhere = frozenset(known_revisions())
    bounds, outside = _outside_turns()
    wanted = sorted({t for t, revs in registered.items() if revs != everywhere} | set(payloads) | set(bounds)
                    | set(outside))
    types = b"|".join(re.escape(t.encode()) for t in wanted)
    prefix = re.escape(_PREFIX)
    # a run of lines of white space only holds nothing to parse: it is one match (group `blank`, consumed whole,
    # possessively), so a million blank lines are one C-speed step, not a failed match attempt per line
    return re.compile(b"\\n(?:(?P<blank>(?:[ \t\r]*+\n)++)|" + prefix + b"(?:(?:" + types + rb')"|[^"\n]*\\)|(?!'
                      + prefix + b"))")


def detect_in_blocks(blocks: Iterable[bytes], *, by_seq: bool = False) -> Detection:
    """`detect_revision` on a JSONL log read block by block: memory is one block and one line; evidence is
    labelled with file lines, or with seqs when ``by_seq`` (the logical log of a database)."""
    detector = _Detector()
    for index, (number, raw) in enumerate(_candidate_lines(blocks)):
        try:
            value = json_text.loads(raw)
        except JsonTextError:
            continue
        detector.add(index, value, _where(value, index, None) if by_seq else _line_label(number))
    return detector.result()


class InlineDetection:
    """`detect_in_blocks` fed by a reader that parses every line itself (the validator's fast pass): it hands over
    each line `picks` chooses, in file order, with its number and its value, and `result` is the detection the
    whole file's `detect_in_blocks` gives (the same events, the same order and labels), with no second read."""

    def __init__(self) -> None:
        self.detector = _Detector()
        self.pattern = _candidates()

    def picks(self, raw: bytes) -> bool:
        """Whether detection parses this line (without its newline): `_candidates`' choice, as `_picked` makes it."""
        if not raw:
            return False
        match = self.pattern.match(b"\n" + raw + b"\n")
        return match is not None and match.start("blank") < 0

    def feed(self, number: int, value: JsonValue, valid_at: str | None = None) -> None:
        """Line ``number`` (1 = the first line), a picked line, with the value it parses to; ``valid_at``: a revision
        whose event schema accepts the value (a generated struct of that revision's read it), so whose payload
        schema does: its payload check is skipped."""
        self.detector.add(number, value, lambda: f"line {number}", valid_at)

    def struct_feeder(self, tags: Mapping[type, str], data_of: Callable[[object], JsonValue], valid_at: str
                      ) -> Callable[[int, object], None]:
        """`feed` for the picked lines a generated struct of revision ``valid_at`` read whole (canonical lines: each
        value is its struct's): called with the line's number and its struct, whose type ``tags`` names, and whose
        payload as a plain value ``data_of(struct)`` gives, asked only when a check needs it. Once a struct type's
        events only count (`_Detector.settled`), they are counted in bulk: the tallies' counts and last lines."""
        detector = self.detector
        add, settled = detector.add_typed, detector.settled
        quiet: dict[type, tuple[tuple[_Tally, ...], bool | None, bool]] = {}
        pending: dict[type, bool] = {}  # the struct types not yet settled (False: never)

        def feed(number: int, obj: object) -> None:
            cls = obj.__class__
            found = quiet.get(cls)
            if found is not None:
                counted, bound, inside = found
                if bound is not None:
                    detector.in_turn = bound
                elif inside and not detector.in_turn:
                    add(number, tags[cls], obj, data_of, lambda: f"line {number}", valid_at)
                    return
                for tally in counted:
                    tally.add_line(number)
                return
            add(number, tags[cls], obj, data_of, lambda: f"line {number}", valid_at)
            if pending.get(cls, True):
                state = settled(tags[cls], valid_at)
                if type(state) is tuple:
                    quiet[cls] = state
                else:
                    pending[cls] = bool(state)
        return feed

    def result(self) -> Detection:
        return self.detector.result()


def _line_label(number: _LazyLine) -> Callable[[], str]:
    return lambda: f"line {int(number)}"


def _candidate_lines(blocks: Iterable[bytes]) -> Iterator[tuple[_LazyLine, bytes]]:
    """(line number, line) of each line of a byte stream cut into blocks that `_candidates` picks; a line
    cut by a block boundary is joined once."""
    pattern = _candidates()
    pending: list[bytes] = []
    before = 0  # lines before the current chunk
    for block in blocks:
        cut = block.rfind(b"\n")
        if cut < 0:
            pending.append(block)
            continue
        chunk = b"".join([*pending, block[: cut + 1]]) if pending else block[: cut + 1]
        pending = [block[cut + 1:]] if cut + 1 < len(block) else []
        yield from _picked(pattern, chunk, before)
        before += chunk.count(b"\n")
    tail = b"".join(pending)
    if tail:
        yield from _picked(pattern, tail + b"\n", before)


def _picked(pattern: re.Pattern[bytes], chunk: bytes, before: int) -> Iterator[tuple[_LazyLine, bytes]]:
    """The picked lines of ``chunk`` (whole lines, each ending in a newline), numbered after ``before``."""
    led = b"\n" + chunk
    search = pattern.search
    pos = 0
    while (match := search(led, pos)) is not None:
        if match.start("blank") >= 0:
            pos = match.end() - 1  # the newline before the line after the run
            continue
        start = match.start() + 1
        end = led.find(b"\n", start)
        pos = match.end() if match.end() > match.start() + 1 else start
        if end > start:
            yield _LazyLine(led, start - 1, before), led[start:end]


class _LazyLine:
    """The number of the line starting after ``led[start]``, counted only when a label asks for it (most
    evidence is only counted); ordered by position like a line number."""

    __slots__ = ("before", "led", "start")

    def __init__(self, led: bytes, start: int, before: int) -> None:
        self.led, self.start, self.before = led, start, before

    def __int__(self) -> int:
        return self.before + self.led.count(b"\n", 0, self.start) + 1


def detect_in_bytes(data: bytes, *, by_seq: bool = False) -> Detection:
    """`detect_revision` on the raw bytes of a log (a JSONL artifact or a JSON array)."""
    if jsonl_read.holds_event_array(data):  # (the load path's statement of the form)
        try:
            parsed = json_text.loads(data)
        except JsonTextError:
            parsed = None
        return detect_revision(parsed if isinstance(parsed, list) else [])
    return detect_in_blocks((data[i:i + _BLOCK] for i in range(0, len(data), _BLOCK)), by_seq=by_seq)
