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

from collections.abc import Iterable, Iterator, Mapping
from itertools import accumulate, islice
from operator import sub
from types import MappingProxyType
from typing import Any

from sessionspec.spec import FORMAT, RowLayout
from sessionspec.spec.errors import ChunkRowError
from sessionspec.spec.schema_types import JsonObject, JsonValue

from .json_value import MAX_SAFE_INTEGER, FrozenDict, freeze_parsed, gc_paused
from .json_value import _fd as _frozen_dict  # the shallow FrozenDict of a dict we own
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
    "expand_row",
    "expand_row_batches",
    "pack_chunk_runs",
    "row_parts",
    "row_spec",
    "validate_row",
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
# A packable delta's envelope and data keys, exactly; checked by length (see _pack).
_EVENT_LEN = len({"type", "seq", "time", "data"})
_DATA_LEN = len({"turn", "step", "chunk"})


_ABSENT: Any = object()  # a run-constant field a delta does not have
_NO_KEY: Any = object()  # a dict key no stored value has


class RowSpec:
    """One row tag's layout, derived from the spec constants (the decoder's own view of it)."""

    __slots__ = (
        "base_len",
        "chunk_keys",
        "chunk_type",
        "data_keys",
        "data_keys_min",
        "fixed",
        "fixed_pair",
        "list_key",
        "may_lack",
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
        # For the key check by length (see _pack): the number of chunk keys that are not run-constant.
        self.base_len = len(self.chunk_keys) - len(self.fixed)
        # For the fast packer: the run-constant fields padded to two with a key no chunk has, and
        # the ones a delta may lack (the optional ones and the padding).
        self.fixed_pair: tuple[Any, Any] = (*self.fixed, _NO_KEY, _NO_KEY)[:2]
        self.may_lack = frozenset((*self.optional, _NO_KEY))


_ROWS: dict[str, RowSpec] = {tag: RowSpec(layout) for tag, layout in FORMAT.chunk_rows.items()}
ROW_SPECS: Mapping[str, RowSpec] = MappingProxyType(_ROWS)
"""Row tag -> its layout (read-only)."""
_BY_CHUNK_TYPE: dict[str, RowSpec] = {row.chunk_type: row for row in _ROWS.values()}
if not all(len(row.fixed) <= 2 for row in _ROWS.values()):  # the packer reads them as a pair (fixed_pair)
    raise ImportError("a chunk row layout has more than two run-constant fields; chunk_rows reads at most two")


def _row(row: RowSpec, first: Mapping[str, Any], times: list[int], members: list[str]) -> dict[str, Any]:
    """The row of a run of packable deltas (CHUNK-6): its first event, member times and members."""
    fdata = first["data"]
    fchunk = fdata["chunk"]
    data: dict[str, Any] = {
        "turn": fdata["turn"],
        "step": fdata["step"],
        "index": fchunk["index"],
        "dt": list(map(sub, islice(times, 1, None), times)),
    }
    for key in row.fixed:
        if key in fchunk:
            data[key] = fchunk[key]
    data[row.list_key] = members
    return {"type": row.tag, "seq0": first["seq"], "time0": first["time"], "data": data}


def pack_chunk_runs(events: Iterable[JsonObject]) -> list[JsonObject]:
    """Records to store for a batch: runs of >= MIN_RUN packable deltas become rows (CHUNK-1..7).

    Pure: the input is not modified and events are passed through as the same
    objects. Runs never span calls.
    """
    return _pack(events if events.__class__ is list else list(events))


def _plain(value: Any) -> dict[str, Any]:
    """``value`` read as an exact dict when it is some other dict subclass (whose subscripts may do anything);
    TypeError when it is not an object (the packer's refusal, as for any value of the wrong type)."""
    if isinstance(value, dict):
        return dict(value)
    raise TypeError("not an object")


def _pack(events: list[Mapping[str, Any]]) -> list[Any]:  # one loop: a helper called per event ran 1.5-1.8x the instructions
    """The packing rule, in one pass (CHUNK-2 … CHUNK-4).

    A delta packs (CHUNK-2, DEC-13) when its envelope, data and chunk have exactly the keys of its
    layout and every value has its exact type (integers ``int``, never ``bool`` or an integral
    float), seq a non-negative safe integer and time a safe integer. The keys are checked by length:
    a key read and found to have its type is present, so a container of the layout's length that
    has all of them has no other key. Two packable deltas continue one run (CHUNK-3) when their run
    keys are equal -- layout, turn, step, index and the run-constant fields the rule table's
    ``run_fields`` names for the layout, an absent one included -- the seqs are consecutive and the
    time gap is a safe integer. Runs of at least ``TABLE.min_run`` (CHUNK-4) become rows
    (``TABLE.build_row``); they are kept as ranges of the batch, so the events between rows are
    copied a slice at a time. The cheapest refusals come first: most events are not deltas.
    """
    # (first, end, layout, first event, member times, members) of each run long enough to pack: the
    # times and members are gathered by the scan, which has just read them, not read from the run again
    runs: list[tuple[int, int, RowSpec, Any, list[int], list[str]]] = []
    min_run = TABLE.min_run
    run_fields = TABLE.run_fields
    # per layout with run-constant fields: (first field, second, may the first be absent, may the second,
    # is the first in the run key, is the second)
    fixed = {row: (*row.fixed_pair, row.fixed_pair[0] in row.may_lack, row.fixed_pair[1] in row.may_lack,
                   row.fixed_pair[0] in run_fields[row.tag], row.fixed_pair[1] in run_fields[row.tag])
             for row in _ROWS.values()}
    start = 0  # the current run's first position
    kind: Any = None  # its layout
    head: Any = None  # its first event, as read
    run_key: tuple[Any, ...] | None = None  # its run key; None: no run
    last_seq = 0
    last_time = 0
    times: list[int] = []  # the current run's member times and members
    members: list[str] = []
    high = MAX_SAFE_INTEGER
    low = -MAX_SAFE_INTEGER  # (a local: `-high` would build a new int at every test)
    layouts = _BY_CHUNK_TYPE
    absent = _ABSENT
    chunk_event = _CHUNK_EVENT_TYPE
    frozen = FrozenDict
    string = str
    integer = int
    event_len = _EVENT_LEN
    data_len = _DATA_LEN
    for position, event in enumerate(events):
        key: tuple[Any, ...] | None = None  # the run key of a packable delta, else None
        try:
            if event.__class__ is not dict and event.__class__ is not frozen:
                event = _plain(event)
            if event["type"] == chunk_event:
                data = event["data"]
                if data.__class__ is not dict and data.__class__ is not frozen:
                    data = _plain(data)
                chunk = data["chunk"]
                if chunk.__class__ is not dict and chunk.__class__ is not frozen:
                    chunk = _plain(chunk)
                chunk_type = chunk["type"]
                row = layouts.get(chunk_type)
                if row is not None and len(event) == event_len and len(data) == data_len:
                    seq = event["seq"]
                    time = event["time"]
                    turn = data["turn"]
                    step = data["step"]
                    index = chunk["index"]
                    member = chunk[row.member_key]
                    if (
                        chunk_type.__class__ is string and member.__class__ is string and seq.__class__ is integer
                        and time.__class__ is integer and turn.__class__ is integer and step.__class__ is integer
                        and index.__class__ is integer and 0 <= seq <= high and low <= time <= high
                    ):
                        if not row.fixed:
                            if len(chunk) == row.base_len:
                                key = (row, turn, step, index)
                        else:  # up to two run-constant fields
                            first, second, lack_a, lack_b, key_a, key_b = fixed[row]
                            a = chunk.get(first, absent)
                            b = chunk.get(second, absent)
                            if (
                                (a.__class__ is string or (a is absent and lack_a))
                                and (b.__class__ is string or (b is absent and lack_b))
                                and len(chunk) == row.base_len + (a is not absent) + (b is not absent)
                            ):
                                key = (row, turn, step, index, a if key_a else None, b if key_b else None)
        except (KeyError, TypeError):  # a key missing, not an object, an unhashable chunk type: not a packable delta
            key = None
        if key is not None:
            if key != run_key or seq != last_seq + 1 or not low <= time - last_time <= high:  # CHUNK-3
                if run_key is not None and position - start >= min_run:
                    runs.append((start, position, kind, head, times, members))
                start = position
                kind = row
                head = event
                run_key = key
                times = [time]
                members = [member]
            else:
                times.append(time)
                members.append(member)
            last_seq = seq
            last_time = time
        elif run_key is not None:
            if position - start >= min_run:
                runs.append((start, position, kind, head, times, members))
            run_key = None
    if run_key is not None and len(events) - start >= min_run:
        runs.append((start, len(events), kind, head, times, members))
    return _with_rows(events, runs)


def _with_rows(events: list[Mapping[str, Any]], runs: list[tuple[int, int, RowSpec, Any, list[int], list[str]]]) -> list[Any]:
    """The batch with each run replaced by its row (CHUNK-6, the rule table's row builder)."""
    out: list[Any] = []
    build_row = TABLE.build_row
    done = 0
    for first, end, row, head, times, members in runs:
        out += events[done:first]
        out.append(build_row(row, head, times, members))
        done = end
    out += events[done:]
    return out


def _malformed(tag: str, why: str) -> ChunkRowError:
    return ChunkRowError(f"malformed {tag} storage row: {why}", requirement="CHUNK-9")


def _is_number(value: object) -> bool:
    """A JSON number for turn/step/index: int or finite float, never bool (DEC-13)."""
    t = type(value)
    return t is int or (t is float and value - value == 0)  # type: ignore[operator]


def _row_shape(value: Mapping[str, Any], row: RowSpec) -> tuple[Mapping[str, Any], list[str], list[int]]:
    """CHUNK-9's storage shape of a row, in the order of behaviours.md section 16: its envelope, ``seq0`` and
    ``time0``, the data keys and their value types; returns (data, members, gaps). The members' arithmetic is
    `_member_bounds`.

    The per-member checks are whole-list operations (``set(map(type, ...))``, ``max(map(abs, ...))``), so a row
    costs a few C-level passes however many members it has; every message is independent of which member
    failed, so the order of the checks is all that matters.
    """
    tag = row.tag
    if value.keys() != ROW_ENVELOPE_KEYS:
        raise _malformed(tag, "envelope must be exactly {type, seq0, time0, data}")
    seq0 = value["seq0"]
    if type(seq0) is not int or not 0 <= seq0 <= MAX_SAFE_INTEGER:
        raise _malformed(tag, "seq0 must be a non-negative safe integer")
    time0 = value["time0"]
    if not _is_safe(time0):
        raise _malformed(tag, "time0 must be a safe integer")
    data = value["data"]
    if not isinstance(data, dict):
        raise _malformed(tag, "data must be an object")
    if not (data.keys() == row.data_keys or (row.optional and data.keys() == row.data_keys_min)):
        shown = ", ".join(k + ("?" if k in row.optional else "") for k in FORMAT.chunk_rows[tag].data_keys)
        raise _malformed(tag, f"data must be exactly {{{shown}}}")
    for key in row.fixed:
        if key in data and type(data[key]) is not str:
            names = " and ".join(row.fixed)
            raise _malformed(tag, f"{names} must be strings")
    turn, step, index = data["turn"], data["step"], data["index"]
    if not (
        (turn.__class__ is int or _is_number(turn))
        and (step.__class__ is int or _is_number(step))
        and (index.__class__ is int or _is_number(index))
    ):
        raise _malformed(tag, "turn/step/index must be numbers")
    payload = data[row.list_key]
    if not isinstance(payload, list) or not payload or set(map(type, payload)) != _STR_ONLY:
        raise _malformed(tag, f"{row.list_key} must be a non-empty list of strings")
    dt = data["dt"]
    if not isinstance(dt, list) or (dt and (set(map(type, dt)) != _INT_ONLY or max(map(abs, dt)) > MAX_SAFE_INTEGER)):
        raise _malformed(tag, "dt must be a list of safe integers")
    return data, payload, dt


def _member_bounds(row: RowSpec, seqs: range, time0: int, dt: list[int]) -> tuple[int, int, int]:
    """CHUNK-9's arithmetic of a row's members, of seqs ``seqs`` (the rule table's ``member_seqs``), from ``time0``
    with gaps ``dt`` (safe integers): one gap between each two members, every member's seq and time a safe integer.
    Returns the lowest, the highest and the last member time. Empty ``seqs`` are refused by the gap count (the shape
    refuses an empty member list first)."""
    tag = row.tag
    count = len(seqs)
    if len(dt) != count - 1:
        raise _malformed(tag, f"dt length {len(dt)} does not match {count} members")
    if seqs[-1] > MAX_SAFE_INTEGER:
        raise _malformed(tag, "member seqs must stay safe integers")
    if not dt or min(dt) >= 0:  # times that never go back: the first is the lowest, the last the highest
        low = time0
        high = last = time0 + sum(dt)
    else:
        times = list(accumulate(dt, initial=time0))
        low = min(times)
        high = max(times)
        last = times[-1]
    if low < -MAX_SAFE_INTEGER or high > MAX_SAFE_INTEGER:
        raise _malformed(tag, "member times must stay safe integers")
    return low, high, last


_STR_ONLY = {str}
_INT_ONLY = {int}


def validate_row(value: JsonObject, row: RowSpec) -> tuple[JsonObject, list[str], list[int]]:
    """CHUNK-9 for a row with layout ``row`` (:func:`row_spec`): the rule table's ``row_shape`` then its
    ``member_bounds``; (data, members, member times), or :class:`ChunkRowError`."""
    return _validated(value, row)[:3]


def row_parts(value: JsonObject, row: RowSpec) -> tuple[JsonObject, list[str], list[int], range, tuple[int, int, int]]:
    """CHUNK-9 and CHUNK-11 for a row with layout ``row``, as the rule table decides them: its ``row_shape``, the
    members' seqs (``member_seqs``), then its ``member_bounds``. (data, members, gaps, member seqs, (lowest, highest,
    last member time)), or :class:`ChunkRowError`: the one composition, which the decoder and the validator's pass
    (a row read as a dict) both ask."""
    data, payload, dt = TABLE.row_shape(value, row)
    seqs = TABLE.member_seqs(value["seq0"], len(payload))
    return data, payload, dt, seqs, TABLE.member_bounds(row, seqs, value["time0"], dt)


def _validated(value: Mapping[str, Any], row: RowSpec) -> tuple[Any, list[str], list[int], range]:
    """:func:`validate_row`, and the members' seqs (CHUNK-11, the rule table's ``member_seqs``) it asked for."""
    data, payload, dt, seqs, _ = row_parts(value, row)
    return data, payload, list(accumulate(dt, initial=value["time0"])), seqs


def expand_row(value: JsonObject, row: RowSpec) -> list[dict[str, JsonValue]]:
    """The member events of a row with layout ``row`` (:func:`row_spec`), validated first (CHUNK-9):
    plain dicts in the format's key order; raises :class:`ChunkRowError`."""
    data, payload, times, seqs = _validated(value, row)
    return _members(seqs, data, row, payload, times)


def expand_row_frozen(value: Mapping[str, Any], row: RowSpec) -> list[FrozenDict]:
    """:func:`expand_row` with every member frozen (DEC-5), built directly rather than frozen afterwards
    (the load path, ``jsonl``); ``value`` must come from ``json_text``'s fast reader (so its strings and
    numbers are lossless but for ``-0.0``). Raises :class:`ChunkRowError`, or ``NotLossless`` when
    turn, step or index is ``-0.0`` (the general path then reports it)."""
    data, payload, times, seqs = _validated(value, row)
    turn = data["turn"]
    step = data["step"]
    index = data["index"]
    if turn.__class__ is not int or step.__class__ is not int or index.__class__ is not int:  # floats: -0.0?
        return list(map(freeze_parsed, _members(seqs, data, row, payload, times)))
    fd = _frozen_dict
    chunk_type = row.chunk_type
    member_key = row.member_key
    event_type = _CHUNK_EVENT_TYPE
    base = {"type": chunk_type, "index": index}
    for key in row.fixed:
        if key in data:
            base[key] = data[key]
    return [
        fd({"type": event_type, "seq": seq, "time": time,
            "data": fd({"turn": turn, "step": step, "chunk": fd({**base, member_key: member})})})
        for seq, time, member in zip(seqs, times, payload)
    ]


def expand_row_batches(value: JsonObject, row: RowSpec, batch: int) -> Iterator[list[dict[str, JsonValue]]]:
    """:func:`expand_row` ``batch`` members at a time (validated once, before the first batch), so that a
    streaming writer never holds a long row's member events all at once."""
    data, payload, times, seqs = _validated(value, row)
    for start in range(0, len(payload), batch):
        stop = start + batch
        yield _members(seqs[start:stop], data, row, payload[start:stop], times[start:stop])


def _member_seqs(seq0: int, count: int) -> range:
    """CHUNK-11: the seqs of a row's ``count`` members, one by one from ``seq0``. The one statement of a row's
    numbering (the rule table's ``member_seqs``): the row's decoding numbers its members by it, and the load path
    and the validator's pass place a row by it (`jsonl_read.row_in_place`)."""
    return range(seq0, seq0 + count)


def _members(seqs: range, data: Mapping[str, Any], row: RowSpec, payload: list[str], times: list[int]) -> list[dict[str, Any]]:
    turn = data["turn"]
    step = data["step"]
    index = data["index"]
    chunk_type = row.chunk_type
    member_key = row.member_key
    event_type = _CHUNK_EVENT_TYPE
    if not row.fixed:
        return [
            {"type": event_type, "seq": seq, "time": time,
             "data": {"turn": turn, "step": step, "chunk": {"type": chunk_type, "index": index, member_key: member}}}
            for seq, time, member in zip(seqs, times, payload)
        ]
    base = {"type": chunk_type, "index": index}
    for key in row.fixed:
        if key in data:
            base[key] = data[key]
    return [
        {"type": event_type, "seq": seq, "time": time,
         "data": {"turn": turn, "step": step, "chunk": {**base, member_key: member}}}
        for seq, time, member in zip(seqs, times, payload)
    ]


def row_spec(value: object) -> RowSpec | None:
    """The layout of a stored record whose ``type`` is a row tag, else None (CHUNK-8)."""
    if value.__class__ is not dict and not isinstance(value, dict):
        return None
    tag = value.get("type")
    return _ROWS.get(tag) if tag.__class__ is str else None


def decode_storage_record(value: JsonValue) -> list[JsonValue]:
    """The events one stored record holds (CHUNK-8..11).

    A value that is not an object, or whose ``type`` is not a row tag, is
    returned as ``[value]`` unvalidated; a row is validated and expanded into
    plain event dicts, or :class:`ChunkRowError` is raised.
    """
    row = row_spec(value)
    if row is None:
        return [value]
    members: list[Any] = expand_row(value, row)  # type: ignore[arg-type]  # a spec only for a row object
    return members


def decode_storage_records(values: Iterable[JsonValue]) -> list[JsonValue]:
    """Concatenated :func:`decode_storage_record` of several records.

    A bulk build of acyclic values that the caller keeps (the decoded log), so the cyclic GC is paused
    meanwhile (collections during it would only re-traverse the growing output) and what was built is
    moved to the oldest generation at the end, as a load's events are (``gc_paused(long_lived=True)``):
    the first young collection after it would traverse every decoded event and free none.
    """
    out: list[Any] = []
    append = out.append
    extend = out.extend
    rows = _ROWS
    with gc_paused(long_lived=True):
        for value in values:
            if value.__class__ is dict:  # the common case, inlined: a parsed record
                tag = value.get("type")
                row = rows.get(tag) if tag.__class__ is str else None
            else:
                row = row_spec(value)
            if row is None:
                append(value)
            else:
                extend(expand_row(value, row))  # type: ignore[arg-type]  # a spec only for a row object
    return out


define("run_fields", MappingProxyType({tag: row.fixed for tag, row in _ROWS.items()}))  # CHUNK-3: the run-constant fields a run holds equal
define("min_run", MIN_RUN)  # CHUNK-4
define("build_row", _row)  # CHUNK-6 (and the row layout)
define("row_shape", _row_shape)  # CHUNK-9: the storage shape
define("member_bounds", _member_bounds)  # CHUNK-9: the members' seqs and times
define("member_seqs", _member_seqs)  # CHUNK-11: a row's numbering
