"""Values for the differential tests of the fast paths: registry examples, vector events, mutations.

Every fast path (compiled predicates, msgspec types, row families, the whole-log pass) must never
accept what the exact path rejects; these are the inputs the tests feed to both.
"""

from __future__ import annotations

import copy
from typing import Any

from cli_helpers import turn_events
from hypothesis import strategies as st
from sessionspec.validator.lint import SchemaSet, schema_set

SCHEMAS: SchemaSet = schema_set()
MAX_SAFE = 2**53 - 1


def _examples() -> list[Any]:
    out = []
    for entry in SCHEMAS.spec.events.values():
        for kind in ("valid", "invalid"):
            for example in entry.get("examples", {}).get(kind, []):
                if "event" in example:
                    out.append(example["event"])
    return out


def _depth(value: Any, limit: int = 60) -> int:
    """Nesting depth, capped (iterative)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        if depth > limit:
            return depth
        if isinstance(node, dict):
            stack.extend((v, depth + 1) for v in node.values())
        elif isinstance(node, list):
            stack.extend((v, depth + 1) for v in node)
    return deepest


def vector_events() -> list[Any]:
    """Every event-like or row-like object in the conformance vectors (shallow enough for the oracle)."""
    from sessionspec.conformance.cases import load_corpus

    out: list[Any] = []
    seen: set[int] = set()
    for case in load_corpus():
        stack = [case.args]
        while stack:
            node = stack.pop()
            if isinstance(node, dict):
                if isinstance(node.get("type"), str) and ("seq" in node or "seq0" in node) and id(node) not in seen:
                    seen.add(id(node))
                    if _depth(node) <= 60:
                        out.append(node)
                stack.extend(node.values())
            elif isinstance(node, list):
                stack.extend(node)
    return out


EXAMPLES = _examples()

JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 2**54) | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6,
)
# Numbers at the edges of the schemas' integer/number rules (DEC-3, JSON-1).
EDGE_NUMBERS = st.sampled_from([0, 1, -1, 1.0, 1.5, -0.0, 0.0, True, False, MAX_SAFE, MAX_SAFE + 1, -MAX_SAFE,
                                -MAX_SAFE - 1, 2**63, 2**64 + 1, 10**30, 1e300, 1e16, 2.0**53])
KEYS = st.sampled_from(["type", "seq", "time", "data", "surfaceOp", "sourceEventSeqs", "kind", "content", "text",
                        "turn", "step", "chunk", "provenance", "reason", "source", "index", "op", "start", "end"])


def paths(value: Any, prefix: tuple = ()) -> list[tuple]:
    out = [prefix]
    if isinstance(value, dict):
        for k, v in value.items():
            out += paths(v, prefix + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += paths(v, prefix + (i,))
    return out


def value_at(value: Any, path: tuple) -> Any:
    """The part of ``value`` that a :func:`paths` entry names."""
    for token in path:
        value = value[token]
    return value


def set_at(value: Any, path: tuple, new: Any) -> None:
    """Replace the part of ``value`` that a non-empty :func:`paths` entry names."""
    value_at(value, path[:-1])[path[-1]] = new


def mutate(draw: st.DrawFn, event: Any, rounds: int | None = None) -> Any:
    """One to three random edits of a deep copy: replace, delete, add, retag, edge number."""
    event = copy.deepcopy(event)
    for _ in range(rounds if rounds is not None else draw(st.integers(1, 3))):
        candidates = paths(event)
        path = draw(st.sampled_from(candidates))
        if not path:
            continue
        parent = value_at(event, path[:-1])
        action = draw(st.sampled_from(["replace", "delete", "add", "retag", "number"]))
        if action == "replace":
            parent[path[-1]] = draw(JSON)
        elif action == "number":
            parent[path[-1]] = draw(EDGE_NUMBERS)
        elif action == "delete":
            del parent[path[-1]]
        elif action == "add" and isinstance(parent, dict):
            parent[draw(KEYS)] = draw(JSON)
        elif action == "retag" and isinstance(parent, dict):
            parent["type"] = draw(st.sampled_from(sorted(SCHEMAS.spec.events)[:10] + ["text", "tool-call", "usage", "x/y"]))
    return event


@st.composite
def mutated_events(draw: st.DrawFn) -> Any:
    """A registry example or a log event, with one to three random edits."""
    return mutate(draw, draw(st.sampled_from(EXAMPLES + turn_events())))
