"""The adapter protocol: message shapes, the operation table and schema checks.

An implementation under test is driven through an *adapter*: a program that
reads one JSON request per line on stdin and writes one JSON reply per line
on stdout (``PROTOCOL.md`` is the normative description). This module holds
the facts both sides share: the protocol version, the capability and
operation vocabularies, constructors for requests and replies, and
validation against the JSON Schemas under ``spec/protocol/`` (loaded from
package data, so an installed wheel validates too).

Every operation is *stateless*: a request carries everything needed to build
the situation it tests (seed, header, appends, store script), so requests can
run in any order, in parallel, after an adapter restart, or alone from a
saved trace.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from typing import Any, Literal

__all__ = [
    "CAPABILITIES",
    "OPS",
    "PROTOCOL_VERSION",
    "REPLY_KINDS",
    "SCHEMA_BASE",
    "Op",
    "ProtocolViolation",
    "beyond_limits",
    "crashed",
    "errored",
    "is_valid",
    "needs_big_integers",
    "needs_persistence_faults",
    "rejected",
    "request",
    "result",
    "schema_registry",
    "skipped",
    "validate",
    "validate_reply",
    "validate_request",
]

PROTOCOL_VERSION = 1
"""Bumped only for incompatible changes; ``start`` fails on a mismatch."""

SCHEMA_BASE = "https://sessionspec.dev/schema/protocol/"

CAPABILITIES: tuple[str, ...] = (
    "load",
    "append",
    "derive",
    "fold",
    "fork",
    "store-lifecycle",
    "out-of-band",
    "oob-admission",
    "chunk-rows",
    "repair",
    "request-header",
    "find-last-message-turn-end",
    "json-value",
    "jsonl",
    "invariants",
    "scopes",
    "big-integers",
    "persistence-jsonl",
    "persistence-jsonl-zstd",
    "persistence-sqlite",
    "validator-policy",
    "live-persistence",
    "persistence-faults",
)
"""What an adapter may claim in ``start``. A case whose capability is not
claimed is reported as skipped, never as failed. ``oob-admission`` is the
run-time out-of-band admission registry (DEC-8): the TypeScript package
restricts admissible types at compile time only, so it cannot claim it.
``scopes`` is scope-filtered dispatch (STORE-16, a SHOULD for implementations
that model owner scopes): ``scope`` on store-script ``on``/``enter`` steps.
``big-integers`` reads and writes integers a binary64 double cannot hold
exactly (§9); a request holding one needs it (:func:`needs_big_integers`).
``persistence-<backend>`` is one storage backend of the ``persistence`` op
(a case names its backend; the op itself needs no other capability).
``validator-policy`` is the project's own read-only validator: a case whose
requirements all bind only the validator (``binds: ["validator"]`` in
``spec/requirements.json``, e.g. a read-only refusal a store would heal, or
a budget that is a project decision) needs it (:attr:`Case.needs`); stores,
backends and session cores do not claim it.
``live-persistence`` is the op ``live``: a backend attached to a live store
the way the persistence seam attaches it (write-behind, flush, disposal); an
adapter that lacks the case's backend replies ``skipped``.
``persistence-faults`` is the fault steps of ``persistence`` scenarios
(``tear``, ``truncate``, ``bytes``, ``reopen`` and ``"writer": "second"``):
the damage a crash leaves at any byte offset or between transactions, the
raw artifact's bytes, a restart, a second writer on the same location."""

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_MAX_SAFE = 2**53 - 1


def beyond_limits(request: Any, limits: Any) -> str | None:
    """Why ``request`` exceeds the JSON limits an adapter declares in ``start`` (``limits``), or None.

    A language's JSON library may refuse what the format allows (serde_json: 128 levels, no lone
    surrogate); such a request is skipped with this reason, not errored. Iterative: 10,000 levels deep."""
    if not isinstance(limits, dict) or not limits:
        return None
    max_depth = limits.get("maxDepth")
    surrogates = limits.get("loneSurrogates", True) is not False
    deepest = 0
    stack: list[tuple[Any, int]] = [(request, 1)]
    while stack:
        v, depth = stack.pop()
        if isinstance(v, dict):
            deepest = max(deepest, depth)
            stack.extend((x, depth + 1) for x in v.values())
            if not surrogates:
                stack.extend((k, depth) for k in v)
        elif isinstance(v, list):
            deepest = max(deepest, depth)
            stack.extend((x, depth + 1) for x in v)
        elif not surrogates and isinstance(v, str) and _LONE_SURROGATE.search(v):
            return "the adapter declares limits.loneSurrogates false; the request holds a lone surrogate"
    if isinstance(max_depth, int) and deepest > max_depth:
        return f"the adapter declares limits.maxDepth {max_depth}; the request nests {deepest} levels"
    return None


_FAULT_STEPS = frozenset({"tear", "truncate", "bytes", "reopen"})


def needs_persistence_faults(op: str, args: Any) -> bool:
    """Whether a ``persistence`` scenario uses a fault step or a second writer (capability
    ``persistence-faults``, PROTOCOL.md §6a)."""
    if op != "persistence" or not isinstance(args, dict) or not isinstance(args.get("steps"), list):
        return False
    return any(isinstance(step, dict) and (step.get("do") in _FAULT_STEPS or "writer" in step)
               for step in args["steps"])


def needs_big_integers(value: Any) -> bool:
    """Whether ``value`` holds an integer no binary64 double holds exactly (PROTOCOL.md §9).

    Such a request is beyond what a JavaScript adapter can even read, so it is
    tagged with the ``big-integers`` capability instead of sent to everyone.
    Iterative: payloads may be 10,000 levels deep."""
    stack = [value]
    while stack:
        v = stack.pop()
        if type(v) is int:
            if not -_MAX_SAFE <= v <= _MAX_SAFE and int(float(v)) != v:
                return True
        elif isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return False

REPLY_KINDS: tuple[str, ...] = ("result", "rejected", "crashed", "errored", "skipped")

ReplyKind = Literal["result", "rejected", "crashed", "errored", "skipped"]


@dataclass(frozen=True, slots=True)
class Op:
    """One protocol operation: its wire name, the capability it needs, a summary."""

    name: str
    capability: str | None
    summary: str


OPS: Mapping[str, Op] = {
    op.name: op
    for op in (
        Op("start", None, "handshake: protocol version in, implementation facts and capabilities out"),
        Op("stop", None, "last request; the adapter replies and exits"),
        Op("load", "load", "construct a session from a seed and/or header; report its state"),
        Op("append", "append", "load, then append a sequence; stop at the first rejection"),
        Op("derive", "derive", "derived messages, per-event projections and request header of a session"),
        Op("fold", "fold", "fold_surface over an event list"),
        Op("fork", "fork", "create a live source in a store and fork it"),
        Op("store", "store-lifecycle", "run a store-lifecycle script; report the observed trace"),
        Op("oob", "out-of-band", "one out-of-band append on a live session"),
        Op("repair", "repair", "crash-repair closers of an event list"),
        Op("pack", "chunk-rows", "pack chunk runs of an event list into storage records"),
        Op("decode", "chunk-rows", "decode one storage record into events"),
        Op("canonical-header", "request-header", "canonical form of a request header"),
        Op("fold-request-header", "request-header", "request header in force after an event list"),
        Op("header-equals", "request-header", "equality of two request headers"),
        Op("find-last-message-turn-end", "find-last-message-turn-end", "index of the last message-triggered turn/end"),
        Op("json-value", "json-value", "is a (JSON-representable) value a lossless JSON value"),
        Op("jsonl-read", "jsonl", "read a JSONL artifact: header, preserved events, committed bytes"),
        Op("jsonl-load", "jsonl", "persistence load path: identity checks, repair, seeding"),
        Op("jsonl-write", "jsonl", "write a header and event batches as JSONL text"),
        Op("jsonl-path", "jsonl", "path encoding: session id segment, project key, log path"),
        Op("invariants", "invariants", "relational invariant check of an event list (first violation)"),
        Op("persistence", None, "run a persistence scenario on one fresh storage backend; report a trace"),
        Op("live", "live-persistence", "run a live-persistence scenario: a store whose sessions a fresh backend writes behind"),
        Op("zstd-read", "persistence-jsonl-zstd", "read a zstd-framed artifact: header, events, frames, torn frame"),
        Op("sqlite-read", "persistence-sqlite", "build a database from SQL, open it as a session store, read it"),
    )
}


class ProtocolViolation(ValueError):
    """A message does not follow the protocol; ``pointer`` locates the problem."""

    def __init__(self, message: str, pointer: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.pointer = pointer

    def __str__(self) -> str:
        return f"{self.pointer or '/'}: {self.message}"


# -- constructors --------------------------------------------------------------------


def request(seq: int, op: str, args: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A request line: ``{"seq", "op", "args"}``."""
    return {"seq": seq, "op": op, "args": dict(args or {})}


def result(seq: int, value: Any) -> dict[str, Any]:
    """The operation completed; ``value`` is its (op-specific) result."""
    return {"seq": seq, "kind": "result", "result": value}


def rejected(
    seq: int,
    code: str | None,
    message: str,
    *,
    index: int | None = None,
    phase: str | None = None,
    state: Any = None,
    has_state: bool = False,
) -> dict[str, Any]:
    """The implementation refused the input on purpose (the spec's "reject")."""
    reply: dict[str, Any] = {"seq": seq, "kind": "rejected", "code": code, "message": message}
    if index is not None:
        reply["index"] = index
    if phase is not None:
        reply["phase"] = phase
    if has_state or state is not None:
        reply["state"] = state
    return reply


def crashed(seq: int, error_class: str, message: str, *, detail: str | None = None) -> dict[str, Any]:
    """The implementation threw an error it does not define: a failure of the case, not a rejection."""
    reply: dict[str, Any] = {"seq": seq, "kind": "crashed", "class": error_class, "message": message}
    if detail:
        reply["detail"] = detail
    return reply


def errored(seq: int | None, message: str, *, detail: str | None = None) -> dict[str, Any]:
    """The adapter broke: it could not run the request (a bug in the adapter, never a verdict)."""
    reply: dict[str, Any] = {"seq": seq, "kind": "errored", "message": message}
    if detail:
        reply["detail"] = detail
    return reply


def skipped(seq: int, reason: str) -> dict[str, Any]:
    """The adapter declines this request (e.g. an unsupported variant)."""
    return {"seq": seq, "kind": "skipped", "reason": reason}


# -- schemas ---------------------------------------------------------------------------


def _schema_files() -> list[Any]:
    root = resources.files("sessionspec.spec").joinpath("protocol")
    found = []
    pending = [root]
    while pending:
        node = pending.pop()
        for child in node.iterdir():
            if child.is_dir():
                pending.append(child)
            elif child.name.endswith(".json"):
                found.append(child)
    return sorted(found, key=lambda f: f.name)


@functools.cache
def schema_registry() -> Any:
    """A ``referencing.Registry`` holding every protocol schema by its ``$id``."""
    from referencing import Registry, Resource

    resources_ = []
    for file in _schema_files():
        contents = json.loads(file.read_text(encoding="utf-8"))
        resources_.append((contents["$id"], Resource.from_contents(contents)))
    return Registry().with_resources(resources_)


@functools.cache
def _validator(name: str) -> Any:
    from jsonschema import Draft202012Validator

    uri = name if name.startswith("https://") else SCHEMA_BASE + name
    schema = schema_registry().contents(uri.split("#")[0])
    if "#" in uri:
        schema = {"$ref": uri}
    return Draft202012Validator(schema, registry=schema_registry())


_CLIP_DEPTH = 200


def _clip_deep(value: Any) -> Any:
    """A copy of ``value`` with containers below depth 200 replaced by ``null``.

    Protocol schemas never constrain payload contents that deep (they are any
    JSON value), while jsonschema recurses and renders values in messages; the
    clip keeps 10,000-deep payloads (DEC-16) checkable without recursion.
    """
    root: list[Any] = [None]
    stack: list[tuple[Any, Any, Any, int]] = [(value, root, 0, 0)]
    while stack:
        item, parent, key, depth = stack.pop()
        if isinstance(item, dict):
            if depth >= _CLIP_DEPTH:
                parent[key] = None
                continue
            copy: Any = {}
            parent[key] = copy
            stack.extend((v, copy, k, depth + 1) for k, v in item.items())
        elif isinstance(item, list):
            if depth >= _CLIP_DEPTH:
                parent[key] = None
                continue
            copy = [None] * len(item)
            parent[key] = copy
            stack.extend((v, copy, i, depth + 1) for i, v in enumerate(item))
        else:
            parent[key] = item
    return root[0]


@functools.cache
def _compiled(name: str) -> Any:
    """The protocol schema ``name`` compiled to a predicate by the validator's one compiler (`lint.compiled_schema`)."""
    from sessionspec.validator.lint import compiled_schema

    oracle = _validator(name)
    return compiled_schema(oracle.schema, oracle, schema_registry())


def is_valid(instance: Any, schema: str) -> bool:
    """The verdict of :func:`validate` without its error, from the schema compiled to a predicate (fast).

    ``schema`` names a whole schema file (``"report.json"``); a fragment is judged by the oracle.
    """
    if "#" in schema:
        return bool(_validator(schema).is_valid(_clip_deep(instance)))
    return bool(_compiled(schema).is_valid(instance))


def validate(instance: Any, schema: str) -> None:
    """Raise :class:`ProtocolViolation` (best-matching error) unless ``instance`` fits ``schema``.

    ``schema`` is a file name under ``spec/protocol/`` (``"request.json"``), a
    full ``$id``, or either with a ``#/$defs/...`` fragment.
    """
    from jsonschema.exceptions import best_match

    try:
        error = best_match(_validator(schema).iter_errors(_clip_deep(instance)))
    except RecursionError:  # pragma: no cover - schemas never recurse into payloads
        raise ProtocolViolation(f"message too deeply nested to validate against {schema}") from None
    if error is not None:
        pointer = "".join(f"/{part}" for part in error.absolute_path)
        raise ProtocolViolation(error.message, pointer)


def validate_request(message: Any) -> None:
    """Check a request envelope and, for a known op, its ``args``."""
    validate(message, "request.json")
    validate(message["args"], f"ops/{message['op']}.json#/$defs/args")


def validate_reply(message: Any, op: str | None = None) -> None:
    """Check a reply envelope and, when ``op`` is given, a ``result`` payload."""
    validate(message, "reply.json")
    if op is not None and message.get("kind") == "result":
        validate(message["result"], f"ops/{op}.json#/$defs/result")
