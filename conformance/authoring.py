"""Helpers for corpus authors: draft a case from the reference, format vector files.

Expected outputs come from the reference but are *reviewed*: ``draft_case``
runs the in-process reference adapter once and returns a complete case dict
(id included) for a human to read before it goes into a vector file; nothing
here rewrites existing vectors. ``format_case_file`` gives every vector file
the same layout (pretty near the top, compact deep inside, deep chains as the
nest forms of :mod:`.nesting`, so every file loads with any default JSON parser) so diffs
in review stay small.

Typical use, from a scratch script or a REPL::

    from sessionspec.conformance.authoring import draft_case, write_case_file
    case = draft_case("a replace whose start follows its end is rejected", ["SURF-5"],
                      "append", {"appends": [...]})
    write_case_file("conformance/vectors/surf.json", "surf", "Surface fold", [case, ...])
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from . import nesting, protocol, wire
from .cases import case_id, load_case_file
from .compare import normalise_reply

__all__ = ["draft_case", "format_case_file", "requirement_levels", "write_case_file"]


@functools.cache
def requirement_levels() -> dict[str, str]:
    """Requirement id -> level, from the spec."""
    from .coverage import load_requirements

    return {r["id"]: r.get("level", "MUST") for r in load_requirements()}


def draft_case(
    description: str,
    requirements: Sequence[str],
    op: str,
    args: Mapping[str, Any],
    *,
    capability: str | None = None,
    level: str | None = None,
    ignore: Sequence[str] = (),
    with_state: bool = False,
    comment: str | None = None,
    revisions: Sequence[str] | None = None,
) -> dict[str, Any]:
    """A case whose expectation is what the reference replies (for review).

    A rejection keeps ``code`` and ``index`` (and the state when
    ``with_state``); an ``errored`` or ``skipped`` reply raises, because a
    case must describe behaviour, not an adapter failure. With ``revisions``
    the reference answers at the first of them and the case applies only to
    those revisions.
    """
    from .adapter import ReferenceAdapter

    message = wire.loads(wire.dumps(protocol.request(1, op, args)))
    adapter = ReferenceAdapter(revision=revisions[0] if revisions else None)
    reply = wire.loads(wire.dumps(adapter.handle(message)))
    reply = normalise_reply(op, args, reply)
    if reply["kind"] == "result":
        expect: dict[str, Any] = {"result": reply["result"]}
    elif reply["kind"] == "rejected":
        rejected = {k: reply[k] for k in ("code", "index", "phase") if reply.get(k) is not None}
        if with_state and "state" in reply:
            rejected["state"] = reply["state"]
        expect = {"rejected": rejected}
    else:
        raise ValueError(f"the reference {reply['kind']} on this input: {reply.get('message') or reply.get('reason')}")
    levels = requirement_levels()
    case: dict[str, Any] = {
        "description": description,
        "requirements": list(requirements),
        "level": level or ("MUST" if any(levels.get(r, "MUST") == "MUST" for r in requirements) else "SHOULD"),
        "capability": capability or protocol.OPS[op].capability or "load",
        **({"revisions": list(revisions)} if revisions else {}),
        "input": {"op": op, "args": dict(args)},
        "expect": expect,
    }
    if ignore:
        case["compare"] = {"ignore": list(ignore)}
    if comment:
        case["comment"] = comment
    return {"id": case_id(case), **case}


def _format(value: Any, indent: int, depth: int) -> str:
    pad = "  " * indent
    inner = "  " * (indent + 1)
    if depth <= 0 or not isinstance(value, dict | list) or not value:
        return wire.dumps(value)
    compact = wire.dumps(value)
    if len(compact) + len(pad) <= 100:
        return compact
    if isinstance(value, list):
        items = [inner + _format(v, indent + 1, depth - 1) for v in value]
        return "[\n" + ",\n".join(items) + "\n" + pad + "]"
    items = [inner + wire.dumps(k) + ": " + _format(v, indent + 1, depth - 1) for k, v in value.items()]
    return "{\n" + ",\n".join(items) + "\n" + pad + "}"


def format_case_file(area: str, description: str, cases: Sequence[Mapping[str, Any]]) -> str:
    """The text of a vector file (stable layout, ids recomputed and checked)."""
    data = {
        "$schema": protocol.SCHEMA_BASE + "case-file.json",
        "area": area,
        "description": description,
        "cases": [nesting.describe({"id": case_id(c), **{k: v for k, v in c.items() if k != "id"}})
                  for c in (nesting.expand(c) for c in cases)],
    }
    text = _format(data, 0, 6) + "\n"
    load_case_file(text, f"{area}.json")  # refuse to produce a file the loader would reject
    return text


def write_case_file(path: str | Path, area: str, description: str, cases: Sequence[Mapping[str, Any]]) -> None:
    """Write a vector file atomically."""
    from .report import atomic_write_text

    atomic_write_text(path, format_case_file(area, description, cases))
