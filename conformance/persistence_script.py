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
import math
import tempfile
from collections.abc import Callable, Mapping
from typing import Any

from sessionspec.spec.errors import SessionSpecError

__all__ = ["NON_JSON_KINDS", "WRITERS", "host_value", "run_persistence"]

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
