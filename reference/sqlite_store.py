"""The SQLite session store, upstream's database backend layout (SQLITE-1 … SQLITE-8).

One database holds every session: a ``sessions`` row per materialised
session (its header), an ``events`` row per event keyed by ``(session_id,
seq)``, and a one-row ``persistence_state`` naming the store. ``PRAGMA
application_id`` and ``PRAGMA user_version`` identify the layout. Each
format revision has its own layout, spec data (the revision's resolved
``constants["sqlite"]``): the DDL, the column lists and the header columns
are generated from it, and its ``rowCodec`` picks how events map to rows
(:class:`JsonTextRows` at the pinned revision: one row per event, JSON text;
:class:`PhysicalRows` at the published one: packed chunk rows, zstd ``data``
blobs, varint ``sourceEventSeqs`` and the ``ignorable`` marker).

Reading never writes: :meth:`SqliteStore.open` opens read-only (SQLite's
``mode=ro``) and checks the identity before anything else. Writing is an
explicit choice (:meth:`SqliteStore.create`, ``writable=True``): appends
and crash repair each run in one ``BEGIN IMMEDIATE`` transaction, so a
failure leaves the stored log as it was.
"""

from __future__ import annotations

import functools
import os
import shutil
import sqlite3
import stat
import tempfile
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, NotRequired, TypeAlias, TypedDict, cast
from urllib.parse import quote

from sessionspec.spec import constants
from sessionspec.spec.error_codes import ErrorCode
from sessionspec.spec.errors import ChunkRowError, CompressedArtifactError, PersistenceError, SessionSpecError, SqliteStoreError
from sessionspec.spec.schema_types import JsonObject, JsonValue

from . import chunk_rows, json_text
from .json_value import MAX_SAFE_INTEGER, is_json_value, is_nonneg_safe_int
from .jsonl import LoadedArtifact, _legacy_rejection, load_records
from .jsonl_read import read_entries
from .rule_table import TABLE, define

if TYPE_CHECKING:
    from sessionspec.reference.revision import RevisionLike

__all__ = ["APPLICATION_ID", "USER_VERSION", "ColumnFacts", "DecodedRow", "Layout", "RowDefect", "RowRefused",
           "SqliteStore", "SqliteValue", "StoredSession", "TableFacts", "WriterFacts", "is_sqlite", "layout_for", "layouts_for", "schema_sql"]

#: A value SQLite stores and `sqlite3` returns (INTEGER, REAL, TEXT, BLOB, NULL).
SqliteValue: TypeAlias = int | float | str | bytes | None

_SQLITE = constants()["sqlite"]
APPLICATION_ID: int = _SQLITE["applicationId"]
USER_VERSION: int = _SQLITE["userVersion"]
"""The pinned revision's layout version; :func:`layout_for` gives any revision's."""
_HEADER_MAGIC = b"SQLite format 3\x00"
_ROW_KEYS = ("seq", "type", "time", "data", "source_event_seqs", "surface_op")
_NOT_HEADER = frozenset({"incarnation", "revision"})


def _camel(column: str) -> str:
    head, *rest = column.split("_")
    return head + "".join(part.title() for part in rest)


class PlaintextBudget:
    """What the zstd ``data`` of one store may still inflate to, shared by all its rows (ZSTD-4 per store, not per
    row: the larger of 32 MiB and 64 x the file's size, `zstd_frames.plaintext_budget`)."""

    __slots__ = ("left", "total", "values", "values_left")

    def __init__(self, total: int, values: int | None = None) -> None:
        from .zstd_frames import value_budget

        self.total = self.left = total
        self.values = self.values_left = value_budget(0) if values is None else values
        """The value budget of the rows' zstd plaintext together (ZSTD-4): value marks it may hold, before parsing."""

    def take_values(self, text: bytes) -> None:
        from .zstd_frames import value_marks

        self.values_left -= value_marks(text) + 1  # (+1: the row's own event)
        if self.values_left < 0:
            raise _PastBudget("values")


class _PastBudget(Exception):
    """A row's zstd ``data`` would pass what is left of its store's budget (not a row defect: the read stops);
    its argument says which budget: ``bytes`` or ``values``."""


class JsonTextRows:
    """The pinned row codec: one row per event, ``data`` and the surface fields as JSON text."""

    counts_rows = True
    """Whether the next seq is the row count (one row per event) or follows the last row's last event."""

    def __init__(self, codec: Mapping[str, Any]) -> None:
        self.codec = codec

    def encode(self, events: Sequence[Mapping[str, Any]]) -> list[tuple[Any, ...]]:
        return [(e["seq"], e["type"], e["time"], json_text.dumps(e["data"]),
                 json_text.dumps(list(e["sourceEventSeqs"])) if "sourceEventSeqs" in e else None,
                 json_text.dumps(e["surfaceOp"]) if "surfaceOp" in e else None)
                for e in events]

    def decode(self, row: Sequence[Any], budget: PlaintextBudget | None = None) -> list[dict[str, Any]] | None:
        """A row's events, or None when it is not an event (a hole): :meth:`read_row` without its reason."""
        try:
            return self.read_row(row, budget)
        except RowRefused:
            return None

    def read_row(self, row: Sequence[Any], budget: PlaintextBudget | None = None) -> list[dict[str, Any]]:
        """The row codec itself: a row's events, or :class:`RowRefused` naming the column it refuses and why."""
        return [_row_event(row)]

    def torn_from(self, expected: int, row: Sequence[Any]) -> int:
        """Where the torn tail starts when ``row`` is the first row not kept: the first seq past the preserved
        prefix (one row per event: every later row starts there or after it; schema.ts at 2f74ac98ba and
        ed2e24f7eb)."""
        return expected


class PhysicalRows(JsonTextRows):
    """The published row codec (release commit layout 17): packed chunk rows, zstd ``data``, varint seqs.

    A packed row is marked by ``ignorable`` = the codec's sentinel (0) and
    holds a chunk row's data (CHUNK-*), bounded in members and bytes; an
    ``ignorable: true`` event has 1. ``data`` at or over the threshold is one
    zstd frame when that is smaller.
    """

    counts_rows = False

    def __init__(self, codec: Mapping[str, Any]) -> None:
        super().__init__(codec)
        self.sentinel: int = codec["packedRowSentinel"]
        self.max_members: int = codec["packedRowMaxMembers"]
        self.max_bytes: int = codec["packedRowMaxDataBytes"]
        self.threshold: int = codec["zstdDataThresholdBytes"]
        self.level: int = codec["zstdLevel"]

    # -- writing

    def _packed(self, events: Sequence[Mapping[str, Any]]) -> list[Any]:
        out: list[Any] = []
        for record in chunk_rows.pack_chunk_runs(events):
            if "seq0" not in record or chunk_rows.row_spec(record) is None:
                out.append(record)
                continue
            run = cast("list[JsonObject]", chunk_rows.decode_storage_record(record))  # (a row's member events)
            offset = 0
            while len(run) - offset >= chunk_rows.MIN_RUN:  # the largest prefix within both bounds
                size = min(len(run) - offset, self.max_members)
                while size >= chunk_rows.MIN_RUN:
                    row = chunk_rows.pack_chunk_runs(run[offset:offset + size])[0]
                    if len(json_text.dumps(row["data"]).encode("utf-8")) <= self.max_bytes:
                        break
                    size -= 1
                if size < chunk_rows.MIN_RUN:
                    out.append(run[offset])
                    offset += 1
                    continue
                out.append(row)
                offset += size
            out.extend(run[offset:])
        return out

    def _data(self, value: Any) -> str | bytes:
        text = json_text.dumps(value)
        raw = text.encode("utf-8")
        if len(raw) < self.threshold:
            return text
        import zstandard

        packed = zstandard.ZstdCompressor(level=self.level, write_content_size=True).compress(raw)
        return packed if len(packed) < len(raw) else text

    def encode(self, events: Sequence[Mapping[str, Any]]) -> list[tuple[Any, ...]]:
        rows: list[tuple[Any, ...]] = []
        for record in self._packed(events):
            if "seq0" in record:
                rows.append((record["seq0"], record["type"], record["time0"], self._data(record["data"]),
                             None, None, self.sentinel))
                continue
            sources = _varints(record["sourceEventSeqs"]) if "sourceEventSeqs" in record else None
            rows.append((record["seq"], record["type"], record["time"], self._data(record["data"]), sources,
                         json_text.dumps(record["surfaceOp"]) if "surfaceOp" in record else None,
                         1 if record.get("ignorable") is True else None))
        return rows

    # -- reading

    def torn_from(self, expected: int, row: Sequence[Any]) -> int:
        """The seq of the first row not kept (the release commit's scanRows): a row may start before the
        first seq past the prefix (overlapping a packed row's members), and the deletion must include it."""
        return int(row[0])

    def _text(self, value: Any, bound: int | None, budget: PlaintextBudget | None) -> str:
        if type(value) is str:
            return value
        if type(value) is not bytes:
            raise ValueError("data is neither text nor a blob")
        from .zstd_frames import decompress, plaintext_budget

        limit = bound if bound is not None else plaintext_budget(len(value))
        if budget is not None and budget.left <= limit:  # (a row past the store's budget is the store's finding)
            try:
                text = decompress(value, budget.left)
            except CompressedArtifactError as error:
                if error.code == "ZSTD_TOO_LARGE":
                    raise _PastBudget("bytes") from None
                raise
            budget.left -= len(text)
            budget.take_values(text)
            return text.decode("utf-8")
        text = decompress(value, limit)
        if budget is not None:
            budget.left -= len(text)
            budget.take_values(text)
        return text.decode("utf-8")

    def read_row(self, row: Sequence[Any], budget: PlaintextBudget | None = None) -> list[dict[str, Any]]:
        seq, etype, time, data, sources, surface_op, ignorable = row
        if type(seq) is not int or seq < 0:
            raise RowRefused("seq", "not a non-negative integer")
        if type(etype) is not str:
            raise RowRefused("type", "not text")
        if type(time) is not int:
            raise RowRefused("time", "not an integer")
        if ignorable is not None and ignorable not in (0, 1):
            raise RowRefused("ignorable", "neither NULL, 0 nor 1")
        column, parsed = "data", False  # (the column each step reads: a failure there is that column's)
        try:
            if ignorable == self.sentinel:
                spec = chunk_rows.row_spec({"type": etype})
                if spec is None:
                    raise RowRefused("type", "not a chunk row type, in a packed row")
                if sources is not None or surface_op is not None:
                    raise RowRefused("source_event_seqs" if sources is not None else "surface_op", "set in a packed row")
                text = self._text(data, self.max_bytes, budget)
                if len(text.encode("utf-8")) > self.max_bytes:
                    raise RowRefused("data", f"more than a packed row's {self.max_bytes} bytes")
                value: dict[str, Any] = {"type": etype, "seq0": seq, "time0": time, "data": _loads_data(data, text)}
                parsed = True
                return chunk_rows.expand_row(value, spec)
            event: dict[str, Any] = {"type": etype, "seq": seq, "time": time,
                                     "data": _loads_data(data, self._text(data, None, budget))}
            parsed = True
            if sources is not None:
                column = "source_event_seqs"
                if type(sources) is not bytes:
                    raise RowRefused(column, "not a blob", data_parsed=True)
                event["sourceEventSeqs"] = _from_varints(sources)
            if surface_op is not None:
                column = "surface_op"
                if type(surface_op) is not str:
                    raise RowRefused(column, "not text", data_parsed=True)
                event["surfaceOp"] = json_text.loads(surface_op)
            if ignorable == 1:
                event["ignorable"] = True
        except (SessionSpecError, ChunkRowError, CompressedArtifactError, ValueError, TypeError) as error:
            raise RowRefused(column, _message(error), data_parsed=parsed) from None
        return [event]


class RowRefused(Exception):
    """A row its layout's row codec does not read as events (a hole): the ``column`` refused and why (``reason``).

    ``data_parsed``: the codec parsed the row's ``data`` before refusing it; ``data_not_json``: why the stored ``data``
    text is not JSON, when the codec found that."""

    def __init__(self, column: str, reason: str, *, data_parsed: bool = False, data_not_json: str | None = None) -> None:
        super().__init__(column, reason)
        self.column, self.reason, self.data_parsed, self.data_not_json = column, reason, data_parsed, data_not_json


def _message(error: BaseException) -> str:
    """An error's own message, as a reason in a row's refusal."""
    return str(getattr(error, "message", None) or error)


def _loads_data(stored: object, text: str) -> Any:
    """A row's ``data`` parsed from ``text`` (the stored text, or a blob's plaintext); stored text that is not JSON is
    refused as such (``data_not_json``)."""
    try:
        return json_text.loads(text)
    except (SessionSpecError, ValueError, TypeError) as error:
        if type(stored) is str:
            raise RowRefused("data", f"not JSON: {_message(error)}", data_not_json=_message(error)) from None
        raise


def _varints(values: Sequence[int]) -> bytes:
    """``sourceEventSeqs`` as LEB128 varints: the first seq, then zigzag differences."""
    out = bytearray()
    previous = 0
    for index, value in enumerate(values):
        n = value if index == 0 else (value - previous) * 2 if value >= previous else (previous - value) * 2 - 1
        while n >= 0x80:
            out.append((n & 0x7F) | 0x80)
            n >>= 7
        out.append(n)
        previous = value
    return bytes(out)


def _from_varints(data: bytes) -> list[int]:
    """The inverse of :func:`_varints`; a truncated, non-canonical or out-of-range varint raises ValueError."""
    values: list[int] = []
    previous = offset = 0
    while offset < len(data):
        n = shift = 0
        while True:
            if offset >= len(data):
                raise ValueError("truncated varint")
            byte = data[offset]
            offset += 1
            n |= (byte & 0x7F) << shift
            if not byte & 0x80:
                if shift and not byte & 0x7F:
                    raise ValueError("non-canonical varint")
                break
            shift += 7
            if shift > 56:
                raise ValueError("varint out of range")
        if n > (MAX_SAFE_INTEGER if not values else 2 * MAX_SAFE_INTEGER):
            raise ValueError("varint out of range")
        value = n if not values else previous + (n // 2 if n % 2 == 0 else -((n + 1) // 2))
        if not 0 <= value <= MAX_SAFE_INTEGER:
            raise ValueError("decoded seq out of range")
        values.append(value)
        previous = value
    return values


_CODECS: dict[str, type[JsonTextRows]] = {"json-text": JsonTextRows, "physical-17": PhysicalRows}


class ColumnFacts(TypedDict):
    """One column of a layout's table (spec data: ``constants.sqlite.tables[].columns[]``)."""

    name: str
    type: str
    constraint: str
    holds: str


class TableFacts(TypedDict):
    """One table of a layout (spec data: ``constants.sqlite.tables[]``); ``primaryKey`` where it has one."""

    name: str
    description: str
    columns: list[ColumnFacts]
    primaryKey: NotRequired[list[str]]


class WriterFacts(TypedDict):
    """Which package writes a published layout besides the revision's own (``publishedLayouts[].writtenBy``)."""

    package: str
    versions: list[str]
    commit: str
    checked: str


@dataclass(frozen=True)
class Layout:
    """One SQLite layout of a revision: its version, tables (spec data) and row codec; the SQL is generated.

    ``written_by`` is ``None`` for the revision's own layout (its release
    commit's) and names the package for a layout published releases write
    besides it (``publishedLayouts``, read through the same codecs).
    """

    user_version: int
    tables: tuple[TableFacts, ...]
    rows: JsonTextRows
    written_by: WriterFacts | None = None
    revision: str = ""
    """The format revision whose layout this is."""

    def refusal_note(self) -> str | None:
        """For a layout published releases write besides the revision's own: which package writes it and that
        the release commit's backend refuses it (the requirement of ``SQLITE_VERSION``, DEC-21); else None."""
        if self.written_by is None:
            return None
        from sessionspec.spec import load_spec

        spec = load_spec(revision=self.revision)
        own = spec.constants["sqlite"]["userVersion"]
        rule = ", ".join(spec.error_codes["SQLITE_VERSION"]["requirements"])
        w = self.written_by
        return (f"SQLite layout {self.user_version}, written by {w['package']} {', '.join(w['versions'])} (upstream "
                f"{w['commit']}), read at revision {self.revision} through its row codec {self.rows.codec['name']}; "
                f"the release commit's backend (layout {own}) refuses it before reading anything "
                f"({rule}: SQLITE_VERSION; DEC-21)")

    def columns(self, table: str) -> list[str]:
        return next([c["name"] for c in t["columns"]] for t in self.tables if t["name"] == table)

    @functools.cached_property
    def header_columns(self) -> list[str]:
        return [c for c in self.columns("sessions") if c not in _NOT_HEADER]

    # The statements below are built from spec column names, never from input; values are bound parameters.

    @functools.cached_property
    def select_sessions(self) -> str:
        return f"SELECT {', '.join(self.header_columns)} FROM sessions"  # noqa: S608

    @functools.cached_property
    def select_events(self) -> str:
        return f"SELECT {', '.join(self.columns('events')[1:])} FROM events WHERE session_id = ? ORDER BY seq"  # noqa: S608

    @functools.cached_property
    def insert_event(self) -> str:
        names = self.columns("events")
        return f"INSERT INTO events ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})"  # noqa: S608

    @functools.cached_property
    def insert_session(self) -> str:
        names = [*self.header_columns, "incarnation", "revision"]
        return f"INSERT INTO sessions ({', '.join(names)}) VALUES ({', '.join('?' * (len(names) - 1))}, 0)"  # noqa: S608

    def schema_sql(self) -> str:
        statements = []
        for table in self.tables:
            parts = [f"{c['name']} {c['type']} {c['constraint']}".rstrip() for c in table["columns"]]
            if "primaryKey" in table:
                parts.append(f"PRIMARY KEY ({', '.join(table['primaryKey'])})")
            statements.append(f"CREATE TABLE IF NOT EXISTS {table['name']} (\n  " + ",\n  ".join(parts) + "\n) STRICT")
        return ";\n".join(statements) + ";"


def _from_spec(sqlite: Mapping[str, Any], revision: str) -> Layout:
    codec = sqlite["rowCodec"]
    return Layout(sqlite["userVersion"], tuple(sqlite["tables"]), _CODECS[codec["name"]](codec), sqlite.get("writtenBy"),
                  revision)


@functools.cache
def _layouts(revision_id: str) -> tuple[Layout, ...]:
    from sessionspec.spec import load_spec

    sqlite = load_spec(revision=revision_id).constants["sqlite"]
    return tuple(_from_spec(layout, revision_id) for layout in (sqlite, *sqlite.get("publishedLayouts", ())))


def layouts_for(revision: RevisionLike = None) -> tuple[Layout, ...]:
    """Every SQLite layout of a format revision: its own first, then those published releases write."""
    from sessionspec.reference.revision import revision_of

    return _layouts(revision_of(revision).id)


def layout_for(revision: RevisionLike = None, user_version: int | None = None) -> Layout:
    """The SQLite layout of a format revision (an id, a release or None for the pinned one), or its layout of
    ``user_version``; ``KeyError`` when the revision has no such layout."""
    layouts = layouts_for(revision)
    if user_version is None:
        return layouts[0]
    for layout in layouts:
        if layout.user_version == user_version:
            return layout
    raise KeyError(f"no SQLite layout {user_version} at this format revision")


def is_sqlite(prefix: bytes) -> bool:
    """Whether bytes start with the SQLite database header (content sniffing)."""
    return prefix[:16] == _HEADER_MAGIC


def schema_sql(revision: RevisionLike = None) -> str:
    """The ``CREATE TABLE`` statements of a revision's layout, generated from the spec (SQLITE-2)."""
    return layout_for(revision).schema_sql()


@dataclass(frozen=True)
class RowDefect:
    """A row its layout's row codec refuses (a hole), located: its ``session``, its ``index`` among the session's rows
    (by seq), its ``seq`` column as stored, the ``column`` refused and why (``reason``, the codec's own words).

    ``data_not_json``: why the row's ``data`` column is not JSON, when it is text that does not parse (the every-defect
    reading looks at it even when the codec refused another column first)."""

    session: str
    index: int
    seq: SqliteValue
    column: str
    reason: str
    data_not_json: str | None = None


class DecodedRow(NamedTuple):
    """One stored row (the layout's ``events`` columns after ``session_id``) with its ``events`` by the row codec
    (``None``: not an event, a hole) and, in the every-defect mode, the located ``defect`` of a hole (a named tuple:
    one is made per row read)."""

    row: tuple[SqliteValue, ...]
    events: list[dict[str, JsonValue]] | None
    defect: RowDefect | None = None


@dataclass(frozen=True)
class StoredSession:
    """One session as stored: its header, the preserved event prefix and where a torn tail starts.

    ``torn_from`` is where the rows past the preserved prefix start, as the
    layout's backend reports it (the load path deletes every row from that
    seq; the row codec's ``torn_from``), ``None`` when every row is
    preserved; ``torn_rows`` counts those rows.
    """

    header: dict[str, JsonValue]
    events: list[dict[str, JsonValue]]
    rows: int
    torn_from: int | None
    torn_rows: int = 0


def _error(message: str, code: ErrorCode, requirement: str, path: str | None, cause: BaseException | None = None
           ) -> SqliteStoreError:
    return SqliteStoreError(message, code, requirement=requirement, path=path, cause=cause)


def _known_layout(revision: RevisionLike, user_version: int | None, path: str) -> Layout:
    try:
        return layout_for(revision, user_version)
    except KeyError:
        supported = " or ".join(str(layout.user_version) for layout in layouts_for(revision))
        raise _error(f"no SQLite layout {user_version} at this format revision (it has {supported})",
                     "SQLITE_VERSION", "SQLITE-1", path) from None


def _sqlite_failure(error: sqlite3.Error | UnicodeDecodeError, path: str) -> SqliteStoreError:
    """A sqlite3 exception (or bytes SQLite gave that are not UTF-8) as a located, coded error."""
    if isinstance(error, UnicodeDecodeError):
        return _error(f"database holds text that is not UTF-8: {error}", "SQLITE_NOT_DATABASE", "SQLITE-1", path, error)
    text = str(error)
    if "interrupted" in text:
        return _error("reading the store passed its work budget of "
                      f"{WORK_FLOOR} + {WORK_PER_BYTE} x its size SQLite steps (a crafted schema or layout?)",
                      "SQLITE_NOT_DATABASE", "SQLITE-1", path, error)
    if "locked" in text or "busy" in text:
        return _error(f"database is locked by another connection: {text}", "SQLITE_LOCKED", "SQLITE-1", path, error)
    if "not a database" in text or "malformed" in text or "encrypted" in text:
        return _error(f"not a readable SQLite database: {text}", "SQLITE_NOT_DATABASE", "SQLITE-1", path, error)
    return _error(f"SQLite error: {text}", "SQLITE_NOT_DATABASE", "SQLITE-1", path, error)


#: SQLite virtual-machine steps one read-only store may take: this floor plus this many per byte of the file
#: (a real layout reads in far fewer; a crafted one stops with a finding instead of running for ever).
WORK_FLOOR = 200_000_000
WORK_PER_BYTE = 400
_PROGRESS_STEP = 10_000


def _untrusted(db: sqlite3.Connection, size: int) -> None:
    """Settings that keep a read of an untrusted database to reading data: no function reachable from the schema,
    no writes, no value longer than the file, and a work budget (docs/security.md)."""
    db.execute("PRAGMA trusted_schema = OFF")
    db.execute("PRAGMA query_only = ON")
    setconfig = getattr(db, "setconfig", None)  # Python 3.12+
    if setconfig is not None:
        setconfig(sqlite3.SQLITE_DBCONFIG_DEFENSIVE, True)  # type: ignore[attr-defined]
    db.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, max(1 << 20, size))
    budget = [(WORK_FLOOR + WORK_PER_BYTE * size) // _PROGRESS_STEP]

    def spend() -> int:
        budget[0] -= 1
        return 1 if budget[0] < 0 else 0

    db.set_progress_handler(spend, _PROGRESS_STEP)


def _primary_key(table: Mapping[str, Any]) -> list[str]:
    """The primary key a layout table declares (spec data: ``primaryKey``, or one column's constraint)."""
    if "primaryKey" in table:
        return list(table["primaryKey"])
    return [c["name"] for c in table["columns"] if c["constraint"].upper().startswith("PRIMARY KEY")]


_JOURNALS = ("-journal", "-wal")
_SIDE_FILES = {"-journal": "rollback journal", "-wal": "write-ahead log", "-shm": "shared-memory index"}


def _private_copy(where: str) -> tuple[str, str] | None:
    """A hot journal (a rollback journal, or a write-ahead log without its shared-memory index, both left by a
    writer that died) is recovered by SQLite on open, which writes the store: a read makes a private copy of
    the database and its journal and reads that instead. None when there is nothing to recover. A journal (or
    index) that is not a regular file of its own (a folder, a symbolic link, a device) is refused: SQLite would
    follow it, and whether it holds uncommitted pages cannot be told."""
    for suffix, name in _SIDE_FILES.items():
        try:
            mode = os.lstat(where + suffix).st_mode
        except OSError:
            continue
        if not stat.S_ISREG(mode):
            kind = "a symbolic link" if stat.S_ISLNK(mode) else "a folder" if stat.S_ISDIR(mode) else "not a regular file"
            raise _error(f"the store's {name} {json_text.display(where + suffix)} is {kind}; "
                         "a store's journal is a regular file of its own (nothing was read)",
                         "SQLITE_NOT_DATABASE", "SQLITE-1", where)
    for suffix in _JOURNALS:
        journal = where + suffix
        try:
            hot = os.path.getsize(journal) > 0 and (suffix == "-journal" or not os.path.exists(where + "-shm"))
        except OSError:
            continue
        if hot:
            folder = tempfile.mkdtemp(prefix="sessionspec-recover-")
            copy = os.path.join(folder, "store.db")
            try:
                shutil.copyfile(where, copy)
                shutil.copyfile(journal, copy + suffix)
            except OSError as error:
                shutil.rmtree(folder, ignore_errors=True)
                raise _error(f"the store has a hot {_SIDE_FILES[suffix]} left by a writer that did not finish, and "
                             f"it could not be recovered on a private copy: {json_text.display(str(error))}",
                             "SQLITE_NOT_DATABASE", "SQLITE-1", where) from error
            return copy, _SIDE_FILES[suffix]
    return None


def _read_uri(where: str, private: tuple[str, str] | None, writable: bool) -> str:
    """The URI a store opens by: its private copy when it had a hot journal; read-only otherwise, and a
    write-ahead-log store without a log as immutable (else SQLite would create ``-wal``/``-shm`` beside it)."""
    if private is not None:
        return f"file:{quote(private[0])}?mode=rw"
    if writable:
        return f"file:{quote(os.path.abspath(where))}?mode=rw"
    immutable = _wal_mode(where) and not os.path.exists(where + "-wal")
    return f"file:{quote(os.path.abspath(where))}?mode=ro" + ("&immutable=1" if immutable else "")


def _wal_mode(where: str) -> bool:
    """Whether the database header says write-ahead logging (file format versions 2 at offsets 18 and 19)."""
    try:
        with open(where, "rb") as handle:
            return handle.read(20)[18:20] == b"\x02\x02"
    except OSError:
        return False


def _discard(private: tuple[str, str] | None) -> None:
    if private is not None:
        shutil.rmtree(os.path.dirname(private[0]), ignore_errors=True)


class SqliteStore:
    """A handle on one session database; read-only unless opened for writing."""

    def __init__(self, connection: sqlite3.Connection, path: str, writable: bool,
                 layouts: Sequence[Layout] | None = None) -> None:
        self._db = connection
        self.path = path
        self.writable = writable
        self.store_id = ""
        self._layouts = tuple(layouts or layouts_for(None))
        self.layout = self._layouts[0]
        """The layout the store has (after opening: the one its ``user_version`` names)."""
        self.notes: list[str] = []
        """What opening did that a reader should know (a hot journal recovered on a private copy)."""
        self._private: tuple[str, str] | None = None
        from .zstd_frames import plaintext_budget, value_budget

        try:
            size = os.path.getsize(path)
        except OSError:
            size = 0
        self.budget = PlaintextBudget(plaintext_budget(size), value_budget(size))
        """What the zstd ``data`` of all the rows read through this handle may inflate to, together (ZSTD-4)."""

    # ------------------------------------------------------------ opening

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, writable: bool = False, timeout: float = 1.0,
             revision: RevisionLike = None, user_version: int | None = None) -> SqliteStore:
        """Open an existing store of a layout of ``revision`` and check its identity (SQLITE-1); read-only by default.

        Any layout of the revision opens (its own, or one published releases write: `layouts_for`), and
        ``layout`` is then the one the database's ``user_version`` names; ``user_version`` admits only that
        layout, as a backend writing one layout does.
        """
        where = os.fspath(path)
        if not os.path.isfile(where):
            raise _error(f"no such database file: {where}", "SQLITE_NOT_DATABASE", "SQLITE-1", where)
        private = None if writable else _private_copy(where)
        try:
            db = sqlite3.connect(_read_uri(where, private, writable), uri=True, timeout=timeout, isolation_level=None)
            if not writable:
                _untrusted(db, os.path.getsize(where))
        except sqlite3.Error as error:
            _discard(private)
            raise _sqlite_failure(error, where) from error
        layouts = layouts_for(revision) if user_version is None else (_known_layout(revision, user_version, where),)
        store = cls(db, where, writable, layouts)
        store._private = private
        if private is not None:
            store.notes.append(f"the store has a hot {private[1]} left by a writer that did not finish; "
                               "it was recovered on a private copy for reading, the store itself is unchanged")
        try:
            store._check_identity()
        except BaseException:
            store.close()
            raise
        return store

    @classmethod
    def create(cls, path: str | os.PathLike[str], *, journal_mode: str = _SQLITE["defaultJournalMode"],
               revision: RevisionLike = None, user_version: int | None = None) -> SqliteStore:
        """Open a store for writing, initialising a fresh file (owner-only) with the layout (SQLITE-1, SQLITE-2):
        the revision's own, or its layout of ``user_version`` (one that published releases write)."""
        where = os.fspath(path)
        if journal_mode not in _SQLITE["journalModes"]:
            raise _error(f"unsupported journal mode {journal_mode!r}", "SQLITE_FOREIGN", "SQLITE-1", where)
        layout = _known_layout(revision, user_version, where)
        Path(where).parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        try:
            fd = os.open(where, os.O_WRONLY | os.O_CREAT | os.O_EXCL, int(_SQLITE["fileMode"], 8))
            os.close(fd)
        except FileExistsError:
            pass
        try:
            db = sqlite3.connect(where, timeout=1.0, isolation_level=None)
            db.execute("PRAGMA foreign_keys = ON")
            db.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as error:
            raise _sqlite_failure(error, where) from error
        store = cls(db, where, True, (layout,))
        try:
            fresh = store._check_identity(allow_fresh=True)
            for statement in store.layout.schema_sql().split(";"):
                if statement.strip():
                    db.execute(statement)
            db.execute("INSERT OR IGNORE INTO persistence_state (singleton, store_id) VALUES (1, ?)",
                       (str(uuid.uuid4()),))
            if fresh:
                db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
                db.execute(f"PRAGMA user_version = {store.layout.user_version}")
            db.execute("COMMIT")
            db.execute(f"PRAGMA journal_mode = {journal_mode.upper()}")
            store._read_store_id()
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            db.close()
            raise
        return store

    def _check_identity(self, allow_fresh: bool = False) -> bool:
        """Reject a foreign or other-version database before reading or changing it (SQLITE-1)."""
        try:
            version = self._db.execute("PRAGMA user_version").fetchone()[0]
            app = self._db.execute("PRAGMA application_id").fetchone()[0]
            objects = self._db.execute(
                "SELECT COUNT(*) FROM sqlite_schema WHERE name NOT GLOB 'sqlite_*'").fetchone()[0]
        except (sqlite3.Error, UnicodeDecodeError) as error:
            raise _sqlite_failure(error, self.path) from error
        if version == 0 and app == 0 and objects == 0:
            if allow_fresh:
                return True
            raise _error("database holds no session store (empty, no application id)",
                         "SQLITE_FOREIGN", "SQLITE-9", self.path)
        if not TABLE.application_id_ok(app):
            raise _error(f"database belongs to another application (application_id {app:#x}, "
                         f"expected {APPLICATION_ID:#x})", "SQLITE_FOREIGN", "SQLITE-1", self.path)
        found = [layout for layout in self._layouts if layout.user_version == version]
        if not found:
            supported = " or ".join(str(layout.user_version) for layout in self._layouts)
            raise _error(f"session database layout version {version}, only {supported} is supported "
                         "at this format revision",
                         "SQLITE_VERSION", "SQLITE-1", self.path)
        self.layout = found[0]
        self._check_layout()
        if not allow_fresh:
            self._read_store_id()
        return False

    def _check_layout(self) -> None:
        """Prove from ``sqlite_schema`` that each table of the layout is a real table with the layout's columns
        and keys, and that nothing in the schema can run when read: no views, triggers, virtual tables or
        generated columns (SQLITE-9); an index is inert and allowed."""
        objects = self._schema_rows()
        for kind, name, sql in objects:
            if kind in ("view", "trigger") or (kind == "table" and sql.lstrip()[:20].upper().startswith("CREATE VIRTUAL")):
                what = "virtual table" if kind == "table" else kind
                raise _error(f"database schema holds a {what} {json_text.display(name)}; a session store has only "
                             "tables and indexes, and nothing in a store is run", "SQLITE_LAYOUT", "SQLITE-9", self.path)
        tables = {name: sql for kind, name, sql in objects if kind == "table"}
        for table in self.layout.tables:
            if table["name"] not in tables:
                raise _error(f"table {table['name']!r} is missing", "SQLITE_LAYOUT", "SQLITE-9", self.path)
            info = self._query(f"PRAGMA table_xinfo({table['name']})", ())  # name from spec data
            have = {row[1]: row for row in info}
            missing = [c["name"] for c in table["columns"] if c["name"] not in have]
            if missing:
                raise _error(f"table {table['name']!r} lacks column(s) {', '.join(missing)}",
                             "SQLITE_LAYOUT", "SQLITE-9", self.path)
            generated = [row[1] for row in info if row[6] != 0]
            if generated:
                raise _error(f"table {table['name']!r} has generated column(s) "
                             f"{', '.join(json_text.display(str(c)) for c in generated)}; a store's columns hold data",
                             "SQLITE_LAYOUT", "SQLITE-9", self.path)
            mistyped = [c for c in table["columns"] if str(have[c["name"]][2]).upper() != c["type"].upper()
                        or ("NOT NULL" in c["constraint"].upper() and not have[c["name"]][3])]
            if mistyped:
                declared = "; ".join(
                    f"{c['name']} is {json_text.display(str(have[c['name']][2])) or 'untyped'}"
                    f"{' NOT NULL' if have[c['name']][3] else ''}, the layout's {c['type']} {c['constraint']}".rstrip()
                    for c in mistyped)
                raise _error(f"table {table['name']!r} declares column(s) unlike the layout: {declared}",
                             "SQLITE_LAYOUT", "SQLITE-9", self.path)
            strict = self._query("SELECT strict FROM pragma_table_list WHERE schema = 'main' AND name = ?", (table["name"],))
            if not strict or strict[0][0] != 1:
                raise _error(f"table {table['name']!r} is not STRICT, so its columns may hold values of any type; "
                             "a session store's tables are STRICT (SQLITE-2)", "SQLITE_LAYOUT", "SQLITE-9", self.path)
            want = _primary_key(table)
            keys = [row[1] for row in sorted((row for row in info if row[5]), key=lambda row: row[5])]
            if keys != want:
                raise _error(f"table {table['name']!r} has primary key ({', '.join(map(str, keys))}), the layout's is "
                             f"({', '.join(want)})", "SQLITE_LAYOUT", "SQLITE-9", self.path)

    def _schema_rows(self) -> list[tuple[str, str, str]]:
        """The schema's objects as (type, name, sql); text that is not UTF-8 is a located finding, not a crash."""
        rows = self._query("SELECT CAST(type AS BLOB), CAST(name AS BLOB), CAST(sql AS BLOB) FROM sqlite_schema", ())
        objects = []
        for row in rows:
            try:
                kind, name, sql = (bytes(v or b"").decode("utf-8") for v in row)
            except UnicodeDecodeError:
                raise _error(f"database schema holds text that is not UTF-8 (object {bytes(row[1] or b'')!r})",
                             "SQLITE_NOT_DATABASE", "SQLITE-1", self.path) from None
            objects.append((kind, name, sql))
        return objects

    def _read_store_id(self) -> None:
        row = self._query("SELECT store_id FROM persistence_state WHERE singleton = 1", ())
        if not row or type(row[0][0]) is not str or not row[0][0]:
            raise _error("database has no store identity row", "SQLITE_LAYOUT", "SQLITE-9", self.path)
        self.store_id = row[0][0]

    def close(self) -> None:
        self._db.close()
        _discard(self._private)
        self._private = None

    def __enter__(self) -> SqliteStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _query(self, sql: str, args: Sequence[Any]) -> list[tuple[Any, ...]]:
        try:
            return self._db.execute(sql, args).fetchall()
        except (sqlite3.Error, UnicodeDecodeError) as error:
            raise _sqlite_failure(error, self.path) from error

    # ------------------------------------------------------------ reading

    def _header(self, row: Sequence[Any]) -> dict[str, Any]:
        session_id, version, created_at = row[0], row[1], row[2]
        if type(session_id) is not str or type(version) is not int or not is_nonneg_safe_int(created_at):
            raise _error(f"session row {session_id!r} is malformed", "SQLITE_CORRUPT", "SQLITE-3", self.path)
        header: dict[str, Any] = {"version": version, "id": session_id, "createdAt": created_at}
        for column, value in zip(self.layout.header_columns[3:], row[3:]):
            if value is not None:
                header[_camel(column)] = value
        return header

    def list_sessions(self) -> list[dict[str, JsonValue]]:
        """The headers of every materialised session, in id order (SQLITE-3)."""
        rows = self._query(self.layout.select_sessions + " ORDER BY id", ())
        return [self._header(row) for row in rows]

    def header(self, session_id: str) -> dict[str, JsonValue]:
        """A session's header; ``SQLITE_NO_SESSION`` when it has no row."""
        rows = self._query(self.layout.select_sessions + " WHERE id = ?", (session_id,))
        if not rows:
            raise _error(f"no session {session_id!r} in the database", "SQLITE_NO_SESSION", "SQLITE-3", self.path)
        return self._header(rows[0])

    def rows(self, session_id: str) -> list[tuple[SqliteValue, ...]]:
        """A session's raw event rows (the layout's ``events`` columns after ``session_id``) by seq."""
        return self._query(self.layout.select_events, (session_id,))

    def decode_row(self, row: Sequence[object]) -> list[dict[str, JsonValue]] | None:
        """A raw row's events by the layout's codec (None: not an event), within the store's plaintext budget
        (:meth:`decode_rows`'s decoder, for one row)."""
        return self._decode_row("", 0, tuple(row), False).events

    def decode_rows(self, session_id: str, *, every_defect: bool = False) -> Iterator[DecodedRow]:
        """A session's rows, in seq order, each with its events by the layout's row codec (None: not an event, a hole).

        The one row decoder of every reader of the form (issue #26): the load path (:meth:`read_session`, first-defect
        mode: a hole is only None, and the reader decides whether it ends a torn tail or refuses the session) and the
        validator and the inspecting commands (``every_defect``: each hole has its :class:`RowDefect`, located by
        session, row and column, with the rows around it decoded as the loader decodes them). Every row is decoded
        once, within the store's plaintext budget (ZSTD-4: ``ZSTD_TOO_LARGE`` / ``ZSTD_TOO_MANY_VALUES`` naming the
        store when its rows together pass it, which ends the read in both modes). Rows are decoded as they are taken
        (a reader that keeps only what it makes of them holds one row's events at a time)."""
        for index, row in enumerate(self.rows(session_id)):
            yield self._decode_row(session_id, index, row, every_defect)

    def _decode_row(self, session_id: str, index: int, row: tuple[Any, ...], every_defect: bool) -> DecodedRow:
        try:
            return DecodedRow(row, self.layout.rows.read_row(row, self.budget))
        except RowRefused as refused:
            if not every_defect:
                return DecodedRow(row, None)
            data_not_json = refused.data_not_json
            if data_not_json is None and not refused.data_parsed and type(row[3]) is str:  # (another column refused first)
                try:
                    json_text.loads(row[3])
                except (SessionSpecError, ValueError, TypeError) as error:
                    data_not_json = _message(error)
            return DecodedRow(row, None, RowDefect(session_id, index, row[0], refused.column, refused.reason,
                                                           data_not_json))
        except _PastBudget as past:
            if past.args == ("values",):
                from .zstd_frames import too_many_values

                values = too_many_values(self.budget.values, f"the zstd data of the store's rows up to the row of seq "
                                         f"{row[0]!r} (for all rows together)")
                raise _error(values.message, "ZSTD_TOO_MANY_VALUES", "ZSTD-4", self.path) from None
            rule = constants()["zstd"]["plaintextBudget"]
            raise _error(f"the zstd data of the store's rows inflates past its plaintext budget of {self.budget.total} "
                         f"bytes (the larger of {rule['floorBytes']} and {rule['ratio']} x the file's size, for all rows "
                         f"together) at the row of seq {row[0]!r}: a decompression bomb?", "ZSTD_TOO_LARGE", "ZSTD-4",
                         self.path) from None

    def revision(self, session_id: str) -> str:
        """A token that changes with every mutating transaction on the session (SQLITE-6)."""
        rows = self._query("SELECT incarnation, revision FROM sessions WHERE id = ?", (session_id,))
        if not rows:
            raise _error(f"no session {session_id!r} in the database", "SQLITE_NO_SESSION", "SQLITE-3", self.path)
        return f"{self.store_id}:incarnation:{rows[0][0]}:revision:{rows[0][1]}"

    def read_session(self, session_id: str) -> StoredSession:
        """The header and preserved prefix of one session (SQLITE-4, SQLITE-5).

        A row whose JSON columns do not parse, or whose seq breaks the run,
        ends the prefix when it lies after the last ``turn/end`` (a torn
        tail) and rejects the session (``SQLITE_CORRUPT``) when it lies in
        the committed region.
        """
        header = self.header(session_id)
        decoded = list(self.decode_rows(session_id))
        rows: list[tuple[Any, ...]] = [item.row for item in decoded]  # (a refusal reports a row's seq column as stored)
        where = f"{self.path}#{session_id}"

        def refuse(i: int, expected: int | None, seq: Any) -> SqliteStoreError:
            what = "unparsable event row" if expected is None else f"seq gap (expected {expected}, got {rows[i][0]})"
            return SqliteStoreError(f"corrupt session {session_id!r}: {what} in the committed region",
                                    "SQLITE_CORRUPT", requirement="SQLITE-5", seq=rows[i][0], path=where)

        # the one reader's first-defect mode over the rows (committed region, holes, numbering: JSONL-6 … JSONL-8's
        # decisions), with this form's own statement of the committed region (SQLITE-5)
        read, stopped = read_entries([item.events for item in decoded], refuse, TABLE.in_committed_region)
        preserved = cast("list[dict[str, JsonValue]]", read)  # (the rows' events: decode_row's plain dicts)
        if stopped is None:
            return StoredSession(header, preserved, len(rows), None)
        return StoredSession(header, preserved, len(rows), self.layout.rows.torn_from(len(preserved), rows[stopped]),
                             len(rows) - stopped)

    # ------------------------------------------------------------ writing

    def _require_writable(self) -> None:
        if not self.writable:
            raise _error("store is open read-only", "SQLITE_READ_ONLY", "SQLITE-1", self.path)

    def _transaction(self) -> None:
        try:
            self._db.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as error:
            raise _sqlite_failure(error, self.path) from error

    def append(self, header: JsonObject, events: Sequence[JsonObject]) -> None:
        """Append one batch in one transaction; the first append materialises the session (PERSIST-1 … PERSIST-4).

        The batch must continue the stored log (its first seq is the stored
        count) and be contiguous; every ``data`` must be a lossless JSON
        value. Any failure rolls the whole batch back.
        """
        self._require_writable()
        if not events:
            return
        session_id = cast(str, header["id"])  # a validated header's id (HDR-4)
        self._transaction()
        try:
            stored = self._next_seq(session_id)
            exists = self._db.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone()
            check_appendable(events, stored)
            if not exists:
                self._db.execute(self.layout.insert_session, (
                    *(header.get(_camel(column)) for column in self.layout.header_columns), str(uuid.uuid4())))
            self._insert(session_id, events)
            self._db.execute("UPDATE sessions SET revision = revision + 1 WHERE id = ?", (session_id,))
            self._db.execute("COMMIT")
        except BaseException as error:
            self._db.execute("ROLLBACK")
            if isinstance(error, sqlite3.Error):
                raise _sqlite_failure(error, self.path) from error
            raise

    def _next_seq(self, session_id: str) -> int:
        """The seq the next event takes: one past the last stored row's last event (a packed row holds several)."""
        if self.layout.rows.counts_rows:
            return int(self._db.execute("SELECT COUNT(*) FROM events WHERE session_id = ?", (session_id,)).fetchone()[0])
        last = self._db.execute(self.layout.select_events.replace("ORDER BY seq", "ORDER BY seq DESC LIMIT 1"),
                                (session_id,)).fetchone()
        if last is None:
            return 0
        events = self.layout.rows.decode(last)
        return int(last[0]) + (len(events) if events else 1)

    def next_seq(self, session_id: str) -> int:
        """The seq the next appended event takes (read in its own statement)."""
        try:
            return self._next_seq(session_id)
        except sqlite3.Error as error:
            raise _sqlite_failure(error, self.path) from error

    def _insert(self, session_id: str, events: Sequence[Mapping[str, Any]]) -> None:
        self._db.executemany(self.layout.insert_event,
                             [(session_id, *row) for row in self.layout.rows.encode(events)])

    def insert_raw_row(self, session_id: str, seq: int, event_type: str, data_text: str) -> None:
        """Store one event row verbatim and unchecked: how tests leave the damage a crash or a bug leaves."""
        self._require_writable()
        self._transaction()
        width = len(self.layout.columns("events"))
        try:
            self._db.execute(self.layout.insert_event,
                             (session_id, seq, event_type, 0, data_text, *([None] * (width - 5))))
            self._db.execute("COMMIT")
        except sqlite3.Error as error:  # a located refusal, never a raw sqlite3 exception
            self._db.execute("ROLLBACK")
            raise _sqlite_failure(error, self.path) from error

    def load(self, session_id: str, *, durable: bool = True, seed: bool | None = None) -> LoadedArtifact:
        """The load path (JSONL-12, SQLITE-7): checks, then crash repair in one transaction.

        With ``durable`` (requires a writable store) the torn rows are deleted
        and the closers inserted in one ``BEGIN IMMEDIATE`` transaction; else
        the repair happens only in memory.
        """
        return self.repair([session_id], durable=durable, seed=seed)[0]

    def repair(self, session_ids: Sequence[str], *, durable: bool = True,
               revisions: Mapping[str, RevisionLike] | None = None, seed: bool | None = None,
               read: Mapping[str, StoredSession] | None = None) -> list[LoadedArtifact]:
        """The load path for several sessions, all repaired in ONE transaction (or none, on any failure).

        ``revisions`` maps a session id to the format revision it is read at and its closers follow (REPAIR-8;
        default: pinned); each is seeded where that revision's load path seeds, or as ``seed`` says
        (`jsonl.load_records`). ``read``: sessions this handle has read already (:meth:`read_session`), for a repair
        in memory only (not ``durable``: a durable one reads inside its transaction), so their rows are not decoded
        again.
        """
        if durable and read:
            raise ValueError("a durable repair reads its sessions inside its transaction")
        if durable:
            self._require_writable()
            self._transaction()
        loaded = []
        try:
            for session_id in session_ids:
                stored = (read or {}).get(session_id) or self.read_session(session_id)
                revision = (revisions or {}).get(session_id)
                session, events, closers = load_records(session_id, stored.header, stored.events,
                                                        f"{self.path}#{session_id}", revision, seed=seed)
                if durable:
                    if stored.torn_from is not None:
                        self._db.execute("DELETE FROM events WHERE session_id = ? AND seq >= ?",
                                         (session_id, stored.torn_from))
                    if closers:
                        self._insert(session_id, closers)
                    if stored.torn_from is not None or closers:
                        self._db.execute("UPDATE sessions SET revision = revision + 1 WHERE id = ?", (session_id,))
                balanced = [*events, *closers]
                loaded.append(LoadedArtifact(session, stored.header, balanced, closers, stored.torn_rows))
            if durable:
                self._db.execute("COMMIT")
        except BaseException as error:
            if durable and self._db.in_transaction:
                self._db.execute("ROLLBACK")
            if isinstance(error, sqlite3.Error):
                raise _sqlite_failure(error, self.path) from error
            raise
        return loaded

    def backup_to(self, path: str | os.PathLike[str]) -> None:
        """A consistent copy of the whole database (SQLite's online backup), written to a new file."""
        target = sqlite3.connect(os.fspath(path))
        try:
            self._db.backup(target)
        except sqlite3.Error as error:
            raise _sqlite_failure(error, self.path) from error
        finally:
            target.close()


def row_to_event(row: Sequence[Any]) -> dict[str, Any] | None:
    """One event row as an event, or ``None`` when a column is not what the layout stores (a hole)."""
    try:
        return _row_event(row)
    except RowRefused:
        return None


def _row_event(row: Sequence[Any]) -> dict[str, Any]:
    """One event row of the JSON-text codec as an event; :class:`RowRefused` names the column that is not what the
    layout stores."""
    seq, etype, time, data, sources, surface_op = row
    if type(seq) is not int or type(etype) is not str or type(time) is not int or type(data) is not str:
        column, kind = next((c, k) for c, v, k in (("seq", seq, int), ("type", etype, str), ("time", time, int),
                                                   ("data", data, str)) if type(v) is not k)
        raise RowRefused(column, "not an integer" if kind is int else "not text")
    event: dict[str, Any] = {"type": etype, "seq": seq, "time": time, "data": _loads_data(data, data)}
    if sources is None and surface_op is None:
        return event
    column = "source_event_seqs"
    try:
        if sources is not None:
            event["sourceEventSeqs"] = json_text.loads(sources)
        column = "surface_op"
        if surface_op is not None:
            event["surfaceOp"] = json_text.loads(surface_op)
    except (SessionSpecError, ValueError, TypeError) as error:
        raise RowRefused(column, f"not JSON: {_message(error)}", data_parsed=True) from None
    return event


def check_appendable(events: Sequence[JsonObject], next_seq: int) -> None:
    """The backend contract's batch checks, in the upstream order (PERSIST-3 … PERSIST-5, PERSIST-9):
    the whole batch is lossless JSON, then holds no retired shape, then continues from ``next_seq``."""
    check_batch_values(events)
    TABLE.check_appendable(events, next_seq)


def check_continues(events: Sequence[Mapping[str, Any]], next_seq: int) -> None:
    """The seq rules alone (PERSIST-3, PERSIST-4), for a caller that ran :func:`check_batch_values` first."""
    TABLE.check_appendable(events, next_seq)


def check_batch_values(events: Sequence[Mapping[str, Any]]) -> None:
    """The checks of a batch that need no stored state: lossless JSON (PERSIST-5), then no retired
    shape (PERSIST-9); both come before the session is looked up, as upstream's append runs them."""
    TABLE.batch_lossless(events)
    TABLE.batch_retired(events)


def _batch_lossless(events: Sequence[Mapping[str, Any]]) -> None:
    for offset, event in enumerate(events):
        if not is_json_value(event):  # the whole envelope, its data included
            raise PersistenceError(
                f"data of {event.get('type')} event at index {offset} is not losslessly JSON-serializable",
                "PERSIST_DATA_NOT_JSON", requirement="PERSIST-5", index=offset, seq=event.get("seq"),
            )


def _check_continues(events: Sequence[Mapping[str, Any]], next_seq: int) -> None:
    for offset, event in enumerate(events):
        expected = next_seq + offset
        if event.get("seq") != expected or type(event.get("seq")) is not int:
            code: ErrorCode = "PERSIST_SEQ_CONTINUE" if offset == 0 else "PERSIST_SEQ_GAP"
            req = "PERSIST-3" if offset == 0 else "PERSIST-4"
            raise PersistenceError(
                f"append batch {'does not continue the stored log' if offset == 0 else 'has a seq gap'}: "
                f"expected seq {expected}, got {event.get('seq')!r}",
                code, requirement=req, index=offset,
            )


define("check_appendable", _check_continues)  # PERSIST-3, PERSIST-4 (check_appendable runs check_batch_values first)
define("batch_lossless", _batch_lossless)  # PERSIST-5
define("batch_retired", lambda events: _legacy_rejection(events, None, None, requirement="PERSIST-9"))  # PERSIST-9
define("application_id_ok", lambda app: app == APPLICATION_ID)  # SQLITE-1: only this format's databases open
define("in_committed_region", lambda index, last_turn_end: index <= last_turn_end)  # SQLITE-5: a hole there is corrupt
