"""Chunk rows: lossless storage packing of streamed delta chunks (CHUNK-1..16).

Providers stream token-sized ``assistant/chunk`` deltas; a run of
consecutive deltas of one block is stored as ONE row (``text-chunks``,
``reasoning-chunks``, ``tool-call-chunks``) and expanded back exactly on read.
Rows are a storage vocabulary, never session events.

The encoder whitelists exact shapes (DEC-13: integers must be ``int``, never
``bool`` or an integral float, so packing never changes a value's type);
anything else is stored verbatim, so unknown shapes lose compression, never
data. The decoder validates a row-tagged value completely before expanding
and raises :class:`ChunkRowError` naming what is wrong (CHUNK-9); the order of
the checks is that of behaviours.md section 16.

The row tags, member keys and ``MIN_RUN`` come from the spec constants.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

from sessionspec.spec import FORMAT, RowLayout
from sessionspec.spec.errors import ChunkRowError

from .json_value import MAX_SAFE_INTEGER, gc_paused
from .json_value import is_safe_int as _is_safe
from .rule_table import TABLE, define

__all__ = [
    "MIN_RUN",
    "NUMBER_KEYS",
    "ROW_ENVELOPE_KEYS",
    "ROW_SPECS",
    "ROW_TYPES",
    "RowSpec",
    "decode_storage_record",
    "decode_storage_records",
    "pack_chunk_runs",
]

MIN_RUN: int = FORMAT.chunk_min_run
"""Minimum run length that packs (a format constant: CHUNK-4)."""

ROW_TYPES: tuple[str, ...] = tuple(FORMAT.chunk_rows)
"""The three row tags."""

_CHUNK_EVENT_TYPE = "assistant/chunk"
NUMBER_KEYS: tuple[str, ...] = ("turn", "step", "index")
"""Row data keys holding JSON numbers (CHUNK-9)."""
_BASE_KEYS = (*NUMBER_KEYS, "dt")
ROW_ENVELOPE_KEYS: frozenset[str] = frozenset({"type", "seq0", "time0", "data"})
"""The keys of a stored row, exactly (CHUNK-9)."""
_EVENT_KEYS = frozenset({"type", "seq", "time", "data"})
_EVENT_DATA_KEYS = frozenset({"turn", "step", "chunk"})


class RowSpec:
    """One row tag's layout, derived from the spec constants (the decoder's own view of it)."""

    __slots__ = (
        "chunk_keys",
        "chunk_keys_min",
        "chunk_type",
        "data_keys",
        "data_keys_min",
        "fixed",
        "list_key",
        "member_key",
        "optional",
        "tag",
    )

    def __init__(self, layout: RowLayout) -> None:
        self.tag = layout.tag
        self.chunk_type: str = layout.chunk_type
        self.member_key: str = layout.member_key
        self.list_key: str = layout.list_key
        data_keys = layout.data_keys
        self.optional: tuple[str, ...] = layout.optional_data_keys
        # Run-constant chunk fields (tool call id and name): string-valued by the format.
        self.fixed: tuple[str, ...] = tuple(k for k in data_keys if k not in _BASE_KEYS and k != self.list_key)
        self.data_keys = frozenset(data_keys)
        self.data_keys_min = frozenset(k for k in data_keys if k not in self.optional)
        self.chunk_keys = frozenset(("type", "index", self.member_key, *self.fixed))
        self.chunk_keys_min = frozenset(k for k in self.chunk_keys if k not in self.optional)


_ROWS: dict[str, RowSpec] = {tag: RowSpec(layout) for tag, layout in FORMAT.chunk_rows.items()}
ROW_SPECS: Mapping[str, RowSpec] = MappingProxyType(_ROWS)
"""Row tag -> its layout (read-only)."""
_BY_CHUNK_TYPE: dict[str, RowSpec] = {row.chunk_type: row for row in _ROWS.values()}


def _keys_are(value: Mapping[str, Any], exact: frozenset[str]) -> bool:
    """Whether ``value`` has exactly the keys ``exact`` (one C-level containment test)."""
    return len(value) == len(exact) and value.keys() >= exact


def _classify(event: Any) -> RowSpec | None:
    """The row layout an event packs into, or None to store it verbatim (CHUNK-2, DEC-13)."""
    if not isinstance(event, dict) or event.get("type") != _CHUNK_EVENT_TYPE or not _keys_are(event, _EVENT_KEYS):
        return None
    seq = event["seq"]
    if type(seq) is not int or not 0 <= seq <= MAX_SAFE_INTEGER or not _is_safe(event["time"]):
        return None
    data = event["data"]
    if not isinstance(data, dict) or not _keys_are(data, _EVENT_DATA_KEYS):
        return None
    if type(data["turn"]) is not int or type(data["step"]) is not int:
        return None
    chunk = data["chunk"]
    if not isinstance(chunk, dict) or type(chunk.get("index")) is not int:
        return None
    chunk_type = chunk.get("type")
    row = _BY_CHUNK_TYPE.get(chunk_type) if isinstance(chunk_type, str) else None
    if row is None:
        return None
    if not (_keys_are(chunk, row.chunk_keys) or (row.optional and _keys_are(chunk, row.chunk_keys_min))):
        return None
    if type(chunk[row.member_key]) is not str:
        return None
    for key in row.fixed:
        if key in chunk and type(chunk[key]) is not str:
            return None
    return row


def _continues(prev: Mapping[str, Any], nxt: Mapping[str, Any], row: RowSpec) -> bool:
    """Whether ``nxt`` extends a run ending in ``prev`` (CHUNK-3)."""
    if nxt["seq"] != prev["seq"] + 1:
        return False
    if not -MAX_SAFE_INTEGER <= nxt["time"] - prev["time"] <= MAX_SAFE_INTEGER:
        return False
    a = prev["data"]
    b = nxt["data"]
    if a["turn"] != b["turn"] or a["step"] != b["step"]:
        return False
    ca = a["chunk"]
    cb = b["chunk"]
    if ca["index"] != cb["index"]:
        return False
    for key in row.fixed:  # noqa: SIM110 - an explicit loop is faster than all() over a generator (pack hot path)
        if (key in ca) != (key in cb) or ca.get(key) != cb.get(key):
            return False
    return True


def _build_row(row: RowSpec, run: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    first = run[0]
    fdata = first["data"]
    fchunk = fdata["chunk"]
    data: dict[str, Any] = {
        "turn": fdata["turn"],
        "step": fdata["step"],
        "index": fchunk["index"],
        "dt": [run[i + 1]["time"] - run[i]["time"] for i in range(len(run) - 1)],
    }
    for key in row.fixed:
        if key in fchunk:
            data[key] = fchunk[key]
    data[row.list_key] = [event["data"]["chunk"][row.member_key] for event in run]
    return {"type": row.tag, "seq0": first["seq"], "time0": first["time"], "data": data}


def pack_chunk_runs(events: Iterable[Mapping[str, Any]]) -> list[Any]:
    """Records to store for a batch: runs of >= MIN_RUN packable deltas become rows (CHUNK-1..7).

    Pure: the input is not modified and events are passed through as the same
    objects. Runs never span calls.
    """
    out: list[Any] = []
    run: list[Mapping[str, Any]] = []
    kind: RowSpec | None = None
    continues, build_row, min_run = TABLE.run_continues, TABLE.build_row, TABLE.min_run

    def flush() -> None:
        if kind is not None and len(run) >= min_run:
            out.append(build_row(kind, run))
        else:
            out.extend(run)

    for event in events:
        row = _classify(event)
        if row is None:
            flush()
            run = []
            kind = None
            out.append(event)
            continue
        if row is kind and run and continues(run[-1], event, row):
            run.append(event)
            continue
        flush()
        kind = row
        run = [event]
    flush()
    return out


def _malformed(tag: str, why: str) -> ChunkRowError:
    return ChunkRowError(f"malformed {tag} storage row: {why}", requirement="CHUNK-9")


def _is_number(value: object) -> bool:
    """A JSON number for turn/step/index: int or finite float, never bool (DEC-13)."""
    t = type(value)
    return t is int or (t is float and value - value == 0)  # type: ignore[operator]


def _validate_row(value: Mapping[str, Any], row: RowSpec) -> tuple[Mapping[str, Any], list[str], list[int]]:
    tag = row.tag
    if not _keys_are(value, ROW_ENVELOPE_KEYS):
        raise _malformed(tag, "envelope must be exactly {type, seq0, time0, data}")
    seq0 = value["seq0"]
    if type(seq0) is not int or not 0 <= seq0 <= MAX_SAFE_INTEGER:
        raise _malformed(tag, "seq0 must be a non-negative safe integer")
    if not _is_safe(value["time0"]):
        raise _malformed(tag, "time0 must be a safe integer")
    data = value["data"]
    if not isinstance(data, dict):
        raise _malformed(tag, "data must be an object")
    if not (_keys_are(data, row.data_keys) or (row.optional and _keys_are(data, row.data_keys_min))):
        shown = ", ".join(k + ("?" if k in row.optional else "") for k in FORMAT.chunk_rows[tag].data_keys)
        raise _malformed(tag, f"data must be exactly {{{shown}}}")
    for key in row.fixed:
        if key in data and type(data[key]) is not str:
            names = " and ".join(row.fixed)
            raise _malformed(tag, f"{names} must be strings")
    if not (_is_number(data["turn"]) and _is_number(data["step"]) and _is_number(data["index"])):
        raise _malformed(tag, "turn/step/index must be numbers")
    payload = data[row.list_key]
    if not isinstance(payload, list) or not payload:
        raise _malformed(tag, f"{row.list_key} must be a non-empty list of strings")
    for member in payload:
        if type(member) is not str:
            raise _malformed(tag, f"{row.list_key} must be a non-empty list of strings")
    dt = data["dt"]
    if not isinstance(dt, list):
        raise _malformed(tag, "dt must be a list of safe integers")
    # One pass: gap types (checked first) and the running member times (checked last).
    time = value["time0"]
    times = [time]
    time_escapes = False
    for gap in dt:
        if type(gap) is not int or not -MAX_SAFE_INTEGER <= gap <= MAX_SAFE_INTEGER:
            raise _malformed(tag, "dt must be a list of safe integers")
        time += gap
        if not -MAX_SAFE_INTEGER <= time <= MAX_SAFE_INTEGER:
            time_escapes = True
        times.append(time)
    if len(dt) != len(payload) - 1:
        raise _malformed(tag, f"dt length {len(dt)} does not match {len(payload)} members")
    if seq0 + len(payload) - 1 > MAX_SAFE_INTEGER:
        raise _malformed(tag, "member seqs must stay safe integers")
    if time_escapes:
        raise _malformed(tag, "member times must stay safe integers")
    return data, payload, times


def decode_storage_record(value: Any) -> list[Any]:
    """The events one stored record holds (CHUNK-8..11).

    A value that is not an object, or whose ``type`` is not a row tag, is
    returned as ``[value]`` unvalidated; a row is validated and expanded into
    plain event dicts, or :class:`ChunkRowError` is raised.
    """
    if not isinstance(value, dict):
        return [value]
    tag = value.get("type")
    row = _ROWS.get(tag) if isinstance(tag, str) else None
    if row is None:
        return [value]
    data, payload, times = TABLE.validate_row(value, row)
    turn = data["turn"]
    step = data["step"]
    index = data["index"]
    fixed = [(k, data[k]) for k in row.fixed if k in data]
    chunk_type = row.chunk_type
    member_key = row.member_key
    seq0 = value["seq0"]
    event_type = _CHUNK_EVENT_TYPE
    if not fixed:
        return [
            {
                "type": event_type,
                "seq": seq0 + k,
                "time": times[k],
                "data": {"turn": turn, "step": step, "chunk": {"type": chunk_type, "index": index, member_key: member}},
            }
            for k, member in enumerate(payload)
        ]
    events = []
    for k, member in enumerate(payload):
        chunk: dict[str, Any] = {"type": chunk_type, "index": index}
        for key, fixed_value in fixed:
            chunk[key] = fixed_value  # noqa: PERF403 - builds the chunk in the key order of the format
        chunk[member_key] = member
        events.append({"type": event_type, "seq": seq0 + k, "time": times[k], "data": {"turn": turn, "step": step, "chunk": chunk}})
    return events


def decode_storage_records(values: Iterable[Any]) -> list[Any]:
    """Concatenated :func:`decode_storage_record` of several records.

    A bulk build of acyclic values, so the cyclic GC is paused meanwhile
    (collections during it would only re-traverse the growing output).
    """
    out: list[Any] = []
    with gc_paused():
        for value in values:
            out.extend(decode_storage_record(value))
    return out


define("run_continues", _continues)  # CHUNK-3
define("min_run", MIN_RUN)  # CHUNK-4
define("build_row", _build_row)  # CHUNK-6 (and the row layout)
define("validate_row", _validate_row)  # CHUNK-9
