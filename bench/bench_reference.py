"""The Python side of the side-by-side benchmark: timed operations on the reference.

`bench/run.py` prepares the logs (one file per log and revision), opens each
log here and in the Node script
(`conformance/adapters/node-dsh-session/bench.mjs`), and alternates single
timed runs of the same operation between the two, so both implementations
see the same machine load. The operation names, the suites and the `meta`
each operation reports are the same on both sides, so the results can be
joined row by row and the meta compared (both implementations must agree on
message, node, record and event counts; a timing of an operation that
computed something else would be meaningless).

Every operation starts from what a caller of the library has: the parsed
JSON values of the log file (plain dicts, as ``orjson`` gives them), or the
file itself for the read operations. Preparing that input is never timed,
and a full garbage collection runs before each timed run, outside the clock.
What an operation built (its result, the session it appended to) is kept until
the clock has stopped and freed after it, as the Node side's objects live until
its next collection, outside its clock: the CPU time is the operation's, not the
deallocation of its output.
"""

from __future__ import annotations

import gc
import io
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import orjson

__all__ = ["NODE_OPS", "OWN_GC_OPS", "REPEAT_CALLS", "SUITES", "PythonLog", "append_args", "load_records"]

#: Operations per log kind, in run order (the Node script has the same table, minus `validate`).
SUITES: dict[str, tuple[str, ...]] = {
    "mix": ("parse", "read", "load", "validate", "seed", "append", "fold", "pack", "unpack"),
    "tools": ("read", "load", "append", "fold", "unpack"),
    "chat": ("read", "load", "append", "fold", "unpack"),
    "nocompact": ("seed",),
    "replaces": ("fold",),
}
#: Operations the TypeScript package has no counterpart for.
PYTHON_ONLY = frozenset({"validate"})
NODE_OPS = {kind: tuple(op for op in ops if op not in PYTHON_ONLY) for kind, ops in SUITES.items()}

#: Operations whose library code moves what it built to the oldest GC generation when it returns
#: (``json_value.gc_paused(long_lived=True)``), which it skips in a process that uses ``gc.freeze()``:
#: `bench/run.py` releases its frozen inputs (``gc.unfreeze()``) while it times these.
OWN_GC_OPS = frozenset({"read", "load", "seed", "unpack"})

#: A repeated derive is one cheap call; each timed run averages this many calls.
REPEAT_CALLS = 20

_perf = time.perf_counter


def load_records(path: Path) -> tuple[dict[str, Any], list[Any]]:
    """(header line, parsed storage records) of a JSONL artifact: the untimed input of the pure operations."""
    lines = path.read_bytes().split(b"\n")
    header = orjson.loads(lines[0])
    return header, [orjson.loads(line) for line in lines[1:] if line]


def append_args(events: Iterable[dict[str, Any]]) -> list[tuple[str, Any, dict[str, Any] | None]]:
    """(type, data, intent) per event: what a harness passes to ``Session.append``."""
    out: list[tuple[str, Any, dict[str, Any] | None]] = []
    for event in events:
        intent = {key: event[key] for key in ("surfaceOp", "sourceEventSeqs") if key in event}
        out.append((event["type"], event["data"], intent or None))
    return out


class PythonLog:
    """One opened log: its parsed inputs, and one method per operation.

    ``run(op)`` performs one run and returns ``(times, meta)``: ``times`` maps
    a result name to seconds (``seed`` yields ``seed``, ``derive-first`` and
    ``derive-repeat`` from the same session), ``meta`` what was computed.
    """

    def __init__(self, path: Path, revision: str | None = None) -> None:
        from sessionspec.reference import decode_storage_records

        self.path = path
        #: the format revision the session operations run at (None: the pinned default)
        self.revision = revision
        header_line, self.records = load_records(path)
        self.events: list[Any] = decode_storage_records(self.records)
        self.session_id: str = header_line["id"]
        self.args = append_args(self.events)
        self._collect = True
        #: what the running operation built, freed once its CPU time is taken
        self._kept: Any = None
        #: CPU seconds (user + system) of the last ``run``, the whole operation method
        self.cpu = 0.0

    def run(self, op: str, collect: bool = True) -> tuple[dict[str, float], dict[str, Any]]:
        """One run of ``op``; ``collect=False`` skips the untimed full GCs (for profiling the work alone)."""
        method = getattr(self, "op_" + op.replace("-", "_"), None)
        if method is None:
            raise ValueError(f"unknown operation {op!r}")
        self._collect = collect
        if collect:
            gc.collect()
        cpu = time.process_time()
        result: tuple[dict[str, float], dict[str, Any]] = method(op)
        self.cpu = time.process_time() - cpu
        self._kept = None  # the operation's output, freed outside the clock
        return result

    def _time(self, op: str, body: Any) -> tuple[dict[str, float], Any]:
        start = _perf()
        value = self._kept = body()
        return {op: _perf() - start}, value

    # ------------------------------------------------------------ operations
    def op_parse(self, op: str) -> tuple[dict[str, float], dict[str, Any]]:
        """The floor any reader pays: read the file, orjson every line, check nothing."""
        def parse() -> int:
            loads = orjson.loads
            count = 0
            for line in self.path.read_bytes().split(b"\n"):
                if line:
                    loads(line)
                    count += 1
            return count
        times, count = self._time(op, parse)
        return times, {"lines": count}

    def op_read(self, op: str) -> tuple[dict[str, float], dict[str, Any]]:
        from sessionspec.reference.jsonl import read_artifact

        times, artifact = self._time(op, lambda: read_artifact(self.path))
        return times, {"events": len(artifact.events)}

    def op_load(self, op: str) -> tuple[dict[str, float], dict[str, Any]]:
        from sessionspec.reference.jsonl import load_artifact

        times, loaded = self._time(op, lambda: load_artifact(self.path, self.session_id, durable=False, seed=True,
                                                                     revision=self.revision))
        return times, {"events": loaded.session.seq}

    def op_validate(self, op: str) -> tuple[dict[str, float], dict[str, Any]]:
        from sessionspec.cli import run as cli_run

        out, err = io.StringIO(), io.StringIO()
        times, code = self._time(op, lambda: cli_run(["validate", "--level", "schema", "--quiet", str(self.path)], out, err))
        if code != 0:
            raise RuntimeError(f"validate found problems in the generated log {self.path} (exit {code}): "
                               f"{out.getvalue()[:2000]}{err.getvalue()[:2000]}")
        return times, {"events": len(self.events)}

    def op_seed(self, op: str) -> tuple[dict[str, float], dict[str, Any]]:
        """seed-load, then the first and a repeated derive on that session."""
        from sessionspec.reference import Session

        start = _perf()
        session = self._kept = Session(self.session_id, self.events, revision=self.revision)
        t_seed = _perf() - start
        if self._collect:
            gc.collect()
        start = _perf()
        derived = session.derive_messages()
        t_first = _perf() - start
        start = _perf()
        for _ in range(REPEAT_CALLS):
            session.derive_messages()
        t_repeat = (_perf() - start) / REPEAT_CALLS
        times = {"seed": t_seed, "derive-first": t_first, "derive-repeat": t_repeat}
        return times, {"events": session.seq, "messages": len(derived)}

    def op_append(self, op: str) -> tuple[dict[str, float], dict[str, Any]]:
        from sessionspec.reference import Session

        args = self.args

        def append_all() -> Session:
            session = Session(self.session_id, revision=self.revision)
            append = session.append
            for etype, data, intent in args:
                append(etype, data, intent)
            return session
        times, session = self._time(op, append_all)
        return times, {"events": session.seq}

    def op_fold(self, op: str) -> tuple[dict[str, float], dict[str, Any]]:
        from sessionspec.reference import fold_surface

        times, folded = self._time(op, lambda: fold_surface(self.events, self.revision))
        return times, {"nodes": len(folded["nodes"]), "replaces": len(folded["replacements"])}

    def op_pack(self, op: str) -> tuple[dict[str, float], dict[str, Any]]:
        from sessionspec.reference import pack_chunk_runs

        times, packed = self._time(op, lambda: pack_chunk_runs(self.events))
        return times, {"records": len(packed)}

    def op_unpack(self, op: str) -> tuple[dict[str, float], dict[str, Any]]:
        from sessionspec.reference import decode_storage_records

        times, events = self._time(op, lambda: decode_storage_records(self.records))
        return times, {"events": len(events)}
