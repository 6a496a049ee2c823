"""Persistence scenarios (op ``persistence``): one script against one fresh storage backend.

A case names the backend (``jsonl``, ``jsonl-zstd``, ``sqlite``) and carries
the whole scenario as steps; the adapter opens the backend its way in an empty
temporary location, runs the steps in order and reports a trace entry per
step: ``{"at", "do", "ok": value}`` or ``{"at", "do", "rejected": {"code",
"message"}}``. Values that JSON cannot carry (the non-JSON data of PERSIST-5)
travel as ``{"$nonJson": kind}`` and are turned into the host language's
nearest value before the append (:func:`host_value`).

With the capability ``persistence-faults`` a scenario may also leave the damage
a crash leaves at any point (``tear``: raw bytes or rows; ``truncate``: the
file cut at a byte offset), read the artifact's bytes where the format fixes
them (``bytes``, raw JSONL), ``reopen`` the location with a fresh backend, and
run any step through a second backend on the same location (``"writer":
"second"``): PROTOCOL.md §6a.
"""

from __future__ import annotations

import base64
import functools
import math
import tempfile
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from sessionspec.spec.errors import SessionSpecError

__all__ = [
    "DEEP_VALUE",
    "NON_JSON_KINDS",
    "STALE_VIEW",
    "UNREADABLE_LOG",
    "WRITERS",
    "difference_context",
    "header_refusals",
    "host_value",
    "run_persistence",
    "stale_steps",
    "unreadable_steps",
]

#: the backends a step may run through: the scenario's own, and a second one on the same location
WRITERS = ("first", "second")

def _cycle() -> dict[str, Any]:
    value: dict[str, Any] = {"type": "text", "text": "x"}
    value["self"] = value
    return value


#: the non-JSON values a scenario may ask for, and their Python stand-ins
NON_JSON_KINDS: Mapping[str, Callable[[], Any]] = {
    "nan": lambda: math.nan,
    "infinity": lambda: math.inf,
    "negative-zero": lambda: -0.0,
    "undefined": object,  # Python has no `undefined`: the nearest is an opaque non-JSON object
    "function": lambda: (lambda: 0),
    "opaque": set,
    "cycle": _cycle,
}


def host_value(value: Any) -> Any:
    """``value`` with every ``{"$nonJson": kind}`` replaced by the host value of that kind.

    Iterative: payloads may nest 10,000 levels deep (DEC-16)."""
    root: list[Any] = [None]
    stack: list[tuple[Any, Any, Any]] = [(value, root, 0)]
    while stack:
        item, parent, key = stack.pop()
        if isinstance(item, dict):
            if set(item) == {"$nonJson"} and item["$nonJson"] in NON_JSON_KINDS:
                parent[key] = NON_JSON_KINDS[item["$nonJson"]]()
                continue
            copy: Any = dict.fromkeys(item)  # keys keep their order
            parent[key] = copy
            stack.extend((v, copy, k) for k, v in item.items())
        elif isinstance(item, list):
            copy = [None] * len(item)
            parent[key] = copy
            stack.extend((v, copy, i) for i, v in enumerate(item))
        else:
            parent[key] = item
    return root[0]


def _run_step(backend: Any, step: Mapping[str, Any]) -> Any:
    do = step["do"]
    if do == "create":
        backend.create(step["header"])
        return None
    if do == "append":
        backend.append(step["id"], host_value(step["events"]))
        return None
    if do == "crash":
        backend.simulate_torn_write(step["id"], step["events"])
        return None
    if do == "load":
        loaded = backend.load(step["id"])
        return {"header": loaded.header, "events": loaded.events}
    if do == "inspect":
        header, events = backend.inspect(step["id"])
        return {"header": header, "events": events}
    if do == "list":
        return {"ids": backend.list()}
    if do == "revision":
        return {"revision": backend.revision(step["id"])}
    if do == "tear":
        backend.tear(step["id"], base64.b64decode(step.get("base64", ""), validate=True), step.get("rows", ()))
        return None
    if do == "truncate":
        backend.truncate(step["id"], int(step["drop"]))
        return None
    if do == "bytes":
        return {"base64": base64.b64encode(backend.artifact_bytes(step["id"])).decode("ascii")}
    raise ValueError(f"unknown persistence step {do!r}")


def run_persistence(args: Mapping[str, Any], open_backend: Callable[[str, str], Any] | None = None) -> dict[str, Any]:
    """Run a scenario on a fresh backend in a temporary directory; every step gets a trace entry."""
    if open_backend is None:
        from sessionspec.reference.persistence import open_backend as open_reference

        from .serving import current_revision, current_sqlite_layout

        revision, layout = current_revision(), current_sqlite_layout()

        def open_backend(kind: str, directory: str) -> Any:
            return open_reference(kind, directory, revision, sqlite_layout=layout)
    trace: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="sessionspec-persist-") as directory:
        backends: dict[str, Any] = {}  # writer -> its open backend on the one location (opened on first use)
        try:
            for index, step in enumerate(args["steps"]):
                entry: dict[str, Any] = {"at": str(index), "do": step["do"]}
                if step["do"] == "reopen":  # a restart: every open backend closed, the next step opens afresh
                    for backend in backends.values():
                        backend.close()
                    backends.clear()
                    entry["ok"] = None
                    trace.append(entry)
                    continue
                writer = step.get("writer", "first")
                if writer not in WRITERS:
                    raise ValueError(f"unknown persistence writer {writer!r}")
                try:
                    if writer not in backends:
                        backends[writer] = open_backend(args["backend"], directory)
                    entry["ok"] = _run_step(backends[writer], step)
                except SessionSpecError as error:
                    entry["rejected"] = {"code": error.code, "message": error.message}
                trace.append(entry)
        finally:
            for backend in backends.values():
                backend.close()
    return {"trace": trace}


STALE_VIEW = "stale-view"
"""The context tag of a difference met after some writer wrote through a stale view (:func:`stale_steps`)."""

#: rejections of an append that come after the session was adopted (a load's read and repair): the seq checks
_AFTER_ADOPTION = frozenset({"PERSIST_SEQ_CONTINUE", "PERSIST_SEQ_GAP"})


def _step_session(step: Mapping[str, Any]) -> Any:
    header = step.get("header")
    return header.get("id") if step.get("do") == "create" and isinstance(header, Mapping) else step.get("id")


def stale_steps(steps: Sequence[Mapping[str, Any]], trace: Sequence[Mapping[str, Any]]) -> dict[int, Any]:
    """The appends (and crashes) a writer ran on a session whose stored log changed since that writer last
    read or wrote it, by index, with the session id: the appends PERSIST-12 is about.

    A writer's view of a session starts with its accepted ``create``, its load or its adoption (the first
    append to a session it does not track, as upstream's coordinator adopts it) and goes stale when anything
    else changes the stored log: another writer's append, crash or repairing load (one that cut a torn tail
    or wrote closers), a ``tear`` or ``truncate``, or the torn tail of its own ``crash``; ``reopen`` forgets
    every view. What took effect is read from ``trace``, the reference's trace entries of ``steps``."""
    fresh: dict[tuple[str, Any], bool] = {}
    count: dict[Any, int | None] = {}  # stored events per session as far as the trace tells (None: unknown)
    torn: set[Any] = set()  # sessions whose stored log may end in a torn tail
    stale: dict[int, Any] = {}

    def changed(session: Any, by: str | None = None) -> None:
        for key in fresh:
            if key[1] == session and key[0] != by:
                fresh[key] = False

    for index, step in enumerate(steps):
        entry = trace[index] if index < len(trace) else {}
        do, writer, session = step.get("do"), step.get("writer", "first"), _step_session(step)
        ok = "ok" in entry
        rejected = entry.get("rejected")
        code = rejected.get("code") if isinstance(rejected, Mapping) else None
        key = (writer, session)
        if do == "reopen":
            fresh.clear()
        elif do in ("tear", "truncate") and ok:
            changed(session)
            torn.add(session)
            count[session] = None
        elif do == "create" and ok:
            fresh[key] = True
        elif do in ("append", "crash"):
            if key in fresh:
                if not fresh[key]:
                    stale[index] = session
            elif ok or code in _AFTER_ADOPTION:  # adopted as a load does: its repair may write (cut a torn
                changed(session, writer)  # tail, close an open turn), which no trace entry shows
                count[session] = None
                torn.discard(session)
                fresh[key] = True
            if ok:
                events = step.get("events")
                known = count.get(session, 0)
                count[session] = known + len(events) if known is not None and isinstance(events, list) else None
                changed(session, writer)
                if do == "crash":
                    fresh[key] = False  # its torn tail was written behind its own cursor
                    torn.add(session)
        elif do in ("load", "inspect") and ok:
            value = entry["ok"]
            loaded = len(value["events"]) if isinstance(value, Mapping) and isinstance(value.get("events"), list) else None
            if do == "load":
                if session in torn or count.get(session) != loaded:
                    changed(session, writer)  # the repair cut a tail or wrote closers
                torn.discard(session)
                fresh[key] = True
            count[session] = loaded
    return stale


DEEP_VALUE = "deep-value"
"""The context tag of a difference met at or after an append of a value nested deeper than
:data:`DEEP_LEVELS` (one append accepts, DEC-16): what a serialiser at its limit loses (LIVE-5)."""

DEEP_LEVELS = 1000
"""Levels past which an appended value is deep (the machines draw 1,000 and 10,000; a recursive serialiser's
default stack ends near here)."""


def deeper_than(value: Any, levels: int) -> bool:
    """Whether ``value`` nests more than ``levels`` containers deep (iterative: untrusted depth, no recursion)."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, (dict, list)):
            if depth >= levels:
                return True
            stack.extend((child, depth + 1) for child in (node.values() if isinstance(node, dict) else node))
    return False


UNREADABLE_LOG = "unreadable-log"
"""The context tag of a difference met at or after an append (or crash) to a session whose stored log the
reference's reader refuses (:func:`unreadable_steps`)."""

#: the requirement whose codes are the reader's refusals of a stored log's header line (JSONL-2)
_HEADER_RULE = "JSONL-2"


@functools.cache
def header_refusals() -> frozenset[str]:
    """The codes by which reading refuses a stored log's header line: spec data (``codes`` of JSONL-2)."""
    from sessionspec.spec import load_spec

    return frozenset(load_spec().requirements[_HEADER_RULE].get("codes", ()))


def unreadable_steps(steps: Sequence[Mapping[str, Any]], trace: Sequence[Mapping[str, Any]]) -> dict[int, Any]:
    """The appends (and crashes) the reference refused because its continuation read (PERSIST-12) refuses
    the stored log's header line (JSONL-2), by index, with the session id: a session created with a header
    that create accepts as it is (PERSIST-10) and reading refuses, such as one without ``version``. An
    implementation that appends without reading the stored log accepts them. Read from ``trace``, the
    reference's trace entries of ``steps``."""
    refused = header_refusals()
    hit: dict[int, Any] = {}
    for index, step in enumerate(steps):
        rejected = (trace[index] if index < len(trace) else {}).get("rejected")
        if step.get("do") in ("append", "crash") and isinstance(rejected, Mapping) and rejected.get("code") in refused:
            hit[index] = _step_session(step)
    return hit


def difference_context(args: Mapping[str, Any], trace: Any, pointer: str | None, *, live: bool = False) -> list[str]:
    """The context tags of a scenario's first difference at ``pointer`` (``/trace/<n>/...``), given the
    reference's trace: ``do:<step>``, the kind of step ``n`` (``do:dispose``); :data:`DEEP_VALUE` when an
    append at or before it carried a value deeper than :data:`DEEP_LEVELS`; and, for a persistence
    scenario (not ``live``, §6b), :data:`STALE_VIEW` when a stale append (:func:`stale_steps`) on the session
    of step ``n`` (on any session, for a step naming none) came at or before it, and :data:`UNREADABLE_LOG`
    when, so placed, an append the reference refused by reading the stored log's header line
    (:func:`unreadable_steps`) did."""
    steps = args.get("steps")
    parts = (pointer or "").split("/")
    if not isinstance(steps, list) or not isinstance(trace, list) or len(parts) < 3 or parts[1] != "trace" \
            or not parts[2].isdigit():
        return []
    at = int(parts[2])
    step = steps[at] if at < len(steps) and isinstance(steps[at], Mapping) else {}
    tags = [f"do:{step['do']}"] if isinstance(step.get("do"), str) else []
    if any(isinstance(s, Mapping) and s.get("do") == "append" and deeper_than(s, DEEP_LEVELS) for s in steps[:at + 1]):
        tags.append(DEEP_VALUE)
    if live:
        return tags
    session = _step_session(step)
    stale = stale_steps([s if isinstance(s, Mapping) else {} for s in steps],
                        [e if isinstance(e, Mapping) else {} for e in trace])
    if any(i <= at and (session is None or sid == session) for i, sid in stale.items()):
        tags.append(STALE_VIEW)
    unreadable = unreadable_steps([s if isinstance(s, Mapping) else {} for s in steps],
                                  [e if isinstance(e, Mapping) else {} for e in trace])
    if any(i <= at and (session is None or sid == session) for i, sid in unreadable.items()):
        tags.append(UNREADABLE_LOG)
    return tags
