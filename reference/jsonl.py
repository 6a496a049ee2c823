"""JSONL session artifacts: header line, event records, crash tails, paths (JSONL-1 … JSONL-12).

An artifact is one header line (vocabulary §8.1) followed by one compact JSON
text per storage record (an event, or a packed chunk row), each ending in
``\\n``. Reading never depends on whether the writer packed chunks
(JSONL-9). A crash can leave a torn tail; ``read_artifact`` keeps the valid
contiguous prefix, reports where the next write must truncate to, and
rejects corruption inside the committed region (up to the last ``turn/end``).

``load_artifact`` is the persistence load path (JSONL-12): identity and
version checks, legacy-vocabulary rejections, crash repair written durably
(truncate the torn tail, append the closers), then seeding a ``Session``.

All JSON text goes through ``json_text`` so any nesting depth round-trips
(DEC-16). Writers replace whole files atomically (temp file + ``os.replace``)
or append after an explicit truncation; they never touch other files.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, Literal, TypeGuard, overload

import orjson
from sessionspec.spec import FORMAT
from sessionspec.spec.errors import JsonlError, SeedError, SessionSpecError
from sessionspec.spec.inputs import read_input
from sessionspec.spec.schema_types import JsonObject, JsonValue

from . import json_text
from .atomic import write_atomic
from .chunk_rows import (
    RowSpec,
    decode_storage_record,
    expand_row_batches,
    pack_chunk_runs,
    row_spec,
)
from .json_value import gc_paused
from .jsonl_read import UNREADABLE_LINE, header_line_problem, read_damaged, read_header_line, whole_lines
from .repair import interrupted_turn_closers
from .request_header import is_rejected_reason
from .revision import revision_of, rules_for
from .rule_table import TABLE, define
from .session import Session
from .upgrade import is_refused_type, unknown_type_error

if TYPE_CHECKING:
    from sessionspec.reference.revision import RevisionLike

    from .finding import Finding
    from .json_value import FrozenDict

__all__ = [
    "REFUSAL_ORDER",
    "UNREADABLE_LINE",
    "Artifact",
    "LoadedArtifact",
    "StoredReader",
    "append_batch",
    "check_identity",
    "check_loadable",
    "encode_path_segment",
    "encode_records",
    "header_bytes",
    "header_from_line",
    "header_line",
    "header_line_problem",
    "is_legacy_record",
    "live_snapshot",
    "load_artifact",
    "load_records",
    "parse_header_line",
    "project_dir",
    "project_dir_key",
    "read_artifact",
    "read_stored",
    "session_dir",
    "session_log_path",
    "unpacked_chunks",
    "version_refusal",
    "write_artifact",
    "write_unpacked",
]

_JSONL = FORMAT.jsonl
_HEADER_TYPE: str = _JSONL["headerLineType"]
_HEADER_KEYS: tuple[str, ...] = _JSONL["headerKeyOrder"]
_OPTIONAL_KEYS = ("cwd", "parentSession", "seedLength")
_PLAIN_NAME: str = _JSONL["plainFileName"]
_COMPRESSED_NAME: str = _JSONL["compressedFileName"]
_NO_CWD: str = _JSONL["noCwdDirectory"]
_KEY_MAX: int = _JSONL["projectKeyMaxLength"]
_FORMAT_VERSION: int = FORMAT.session_format_version
_LEGACY_TYPES: list[str] = list(FORMAT.legacy_rejected_types)  # delta first, then mode/set

Compression = Literal["zstd", "none"]


# ---------------------------------------------------------------- header line


def _header_keys(revision: RevisionLike) -> Sequence[str]:
    """The header line's keys in written order, at ``revision`` (the published one adds ``origin``
    and ``agentPreset``)."""
    if revision is None:
        return _HEADER_KEYS
    from sessionspec.spec import load_spec

    keys: Sequence[str] = load_spec(revision=revision_of(revision)).constants["jsonl"]["headerKeyOrder"]
    return keys


def header_line(header: JsonObject, revision: RevisionLike = None) -> dict[str, JsonValue]:
    """The first record of an artifact, in the written key order (JSONL-1).

    Optional fields are omitted when absent (never ``null``); ``delegationDepth``
    is always written, 0 when the header has none (HDR-12). Keys the format
    (at ``revision``) does not know are not written.
    """
    if revision is None or tuple(_header_keys(revision)) == tuple(_HEADER_KEYS):  # the rule table's (pinned) line
        return TABLE.header_line(header)  # type: ignore[no-any-return]
    return _header_line(header, revision)


def _header_line(header: JsonObject, revision: RevisionLike = None) -> dict[str, JsonValue]:
    # `version` is written when the header has it: the persistence seam's create checks only JSON and createdAt
    # (PERSIST-10), so its first append writes a header without one, which reading then refuses (JSONL-2)
    missing = [key for key in ("id", "createdAt") if key not in header]
    if missing:
        raise JsonlError(
            f"session header lacks {', '.join(missing)}", "JSONL_BAD_HEADER", requirement="JSONL-1"
        )
    line: dict[str, JsonValue] = {"type": _HEADER_TYPE}
    for key in _header_keys(revision)[1:]:
        if key == "delegationDepth":
            line[key] = header.get(key, 0)
        elif key in header:
            line[key] = header[key]
    return line


def _is_header_line(value: JsonValue, revision: RevisionLike = None) -> TypeGuard[JsonObject]:
    return header_line_problem(value, revision) is None


def header_from_line(line: JsonObject, revision: RevisionLike = None) -> dict[str, JsonValue]:
    """The session header a shape-checked header line stands for (keys unknown at ``revision`` dropped)."""
    header: dict[str, JsonValue] = {"version": line["version"], "id": line["id"], "createdAt": line["createdAt"]}
    optional = _OPTIONAL_KEYS if revision is None else [
        k for k in _header_keys(revision) if k not in ("type", "version", "id", "createdAt")]
    for key in optional:
        if key in line:
            header[key] = line[key]
    header["delegationDepth"] = line["delegationDepth"]
    return header


def parse_header_line(line: str | bytes, revision: RevisionLike = None) -> dict[str, JsonValue] | None:
    """The header of one first line (the header keys of ``revision``), or ``None`` when it is not a
    well-formed header line.

    Cheap: lets a session listing read headers without parsing whole logs.
    """
    try:
        value = json_text.loads(line)
    except (SessionSpecError, ValueError):
        return None
    return header_from_line(value, revision) if _is_header_line(value, revision) else None


# ---------------------------------------------------------------- records


def encode_records(events: Iterable[JsonObject], pack: bool = True) -> bytes:
    """One batch as JSONL bytes: one compact JSON text per record, each ending in ``\\n`` (JSONL-3).

    With ``pack`` (the default), runs of delta chunks become storage rows
    (CHUNK-*); without it every event is its own line. An empty batch is
    empty bytes.
    """
    records: Sequence[JsonObject] = pack_chunk_runs(list(events)) if pack else list(events)
    if not records:
        return b""
    dumps = json_text.dumps_bytes
    # Appended one by one, not joined from a list: each small bytes object from orjson may keep
    # kilobytes of spare capacity, so a list of a million of them costs gigabytes.
    out = bytearray()
    for record in records:
        out += dumps(record)
        out += b"\n"
    return bytes(out)


def header_bytes(header: JsonObject, revision: RevisionLike = None) -> bytes:
    """The JSONL header line of ``header`` as stored at ``revision``: its record in key order, then a
    newline (JSONL-2)."""
    return json_text.dumps_bytes(header_line(header, revision)) + b"\n"


# ---------------------------------------------------------------- reading


@dataclass(frozen=True)
class Artifact:
    """What a reader recovers from an artifact's bytes.

    ``events`` is the preserved contiguous prefix (including the complete
    events of an unclosed final turn). ``truncate_offset`` is the byte end
    of the last fully preserved line (or of the header line): the next write
    truncates there first (JSONL-8). Line numbers are 1-based file lines
    (the header is line 1).
    """

    header: dict[str, JsonValue]
    header_line: JsonObject
    events: list[dict[str, JsonValue]]
    size: int
    truncate_offset: int
    #: file line of the last line holding a ``turn/end`` (the end of the committed region), if any
    committed_through_line: int | None
    #: file lines that are holes (unparsable, empty or malformed rows) after the committed region
    holes: list[int] = field(default_factory=list)
    #: file line at which reading stopped because of a hole or seq gap, if any
    stopped_at_line: int | None = None
    #: bytes after the last ``\\n`` (an incomplete final line), ignored as torn (JSONL-4)
    fragment_bytes: int = 0

    @property
    def torn(self) -> bool:
        """Whether bytes past ``truncate_offset`` exist (a torn tail to truncate)."""
        return self.truncate_offset < self.size


def _read_bytes(source: bytes | bytearray | memoryview | str | os.PathLike[str]) -> tuple[bytes, str | None]:
    if isinstance(source, (bytes, bytearray, memoryview)):
        return bytes(source), None
    path = os.fspath(source)
    data, problem = read_input(path)  # bounded, never blocking: a device or a FIFO is refused
    if data is None:
        raise JsonlError(f"cannot read {problem}", "JSONL_NO_HEADER", requirement="JSONL-2", path=path)
    return data, path


def _decode_line(raw: bytes) -> object:
    """The events one complete line stands for, or ``UNREADABLE_LINE`` (JSONL-5)."""
    if not raw:
        return UNREADABLE_LINE
    try:
        # Invalid UTF-8 reads as U+FFFD, as the reference's Buffer decoding does.
        return decode_storage_record(json_text.loads(raw, invalid_utf8="replace"))
    except (SessionSpecError, ValueError):
        return UNREADABLE_LINE


def read_artifact(source: bytes | bytearray | memoryview | str | os.PathLike[str], revision: RevisionLike = None) -> Artifact:
    """Parse an artifact's bytes (or a file) into its header (the header keys of ``revision``) and
    preserved events (JSONL-2 … JSONL-9)."""
    return _read(source, revision)[0]


def _read(source: bytes | bytearray | memoryview | str | os.PathLike[str], revision: RevisionLike = None,
          freeze: bool = False) -> tuple[Artifact, bool]:
    """:func:`read_artifact`, and whether its events are frozen: with ``freeze``, a whole, contiguous
    artifact gives its events frozen by ``freeze_parsed`` (for :meth:`Session._load`); any other
    gives plain events, as :func:`read_artifact` does."""
    data, path = _read_bytes(source)
    size = len(data)
    parsed_header = read_header_line(data, revision, where=path).value  # (first defect: a bad one raises)
    # Only `\n`-terminated lines count; a final fragment is torn (JSONL-4).
    lines = data.split(b"\n")
    fragment = len(lines.pop())

    with gc_paused(long_lived=True):  # a bulk build of acyclic values: collections during it only re-traverse them
        read = read_damaged(lines, path, freeze=freeze, complete=size - fragment)
    return Artifact(
        header=header_from_line(parsed_header, revision),
        header_line=parsed_header,
        events=read.events,
        size=size,
        truncate_offset=read.truncate_offset,
        committed_through_line=read.committed_through_line,
        holes=read.holes,
        stopped_at_line=read.stopped_at_line,
        fragment_bytes=fragment,
    ), read.frozen


class _Unpack:
    """The one unpack's encoding (CHUNK-*, JSONL-3): each record on its own line, a packed row's member events
    ``batch`` at a time, into pieces of about 1 MiB (not one write per small record). :func:`unpacked_chunks`
    pulls records through it, :func:`write_unpacked` pushes them as the whole-lines step decides them."""

    __slots__ = ("batch", "out")

    def __init__(self, batch: int) -> None:
        self.batch = batch
        self.out = bytearray()

    def record(self, value: JsonObject) -> bytes | None:
        """A record that is not a row, on its line; the piece held when it reaches 1 MiB, else None."""
        out = self.out
        out += json_text.dumps_bytes(value)
        out += b"\n"
        if len(out) < 1 << 20:
            return None
        piece = bytes(out)
        out.clear()
        return piece

    def row(self, value: JsonObject, row: RowSpec) -> Iterator[bytes]:
        """A row's member events, one piece a batch (with what was held before it)."""
        out = self.out
        orjson_dumps = orjson.dumps
        dumps = json_text.dumps_bytes
        for members in expand_row_batches(value, row, self.batch):
            for event in members:
                # built from a validated row: JSON values whose only hazard is a lone surrogate
                # (orjson refuses it), so the lossless-value walk of dumps_bytes is not needed
                try:
                    out += orjson_dumps(event)
                except orjson.JSONEncodeError:
                    out += dumps(event)
                out += b"\n"
            yield bytes(out)
            out.clear()

    def rest(self) -> bytes | None:
        """What is still held, or None."""
        if not self.out:
            return None
        piece = bytes(self.out)
        self.out.clear()
        return piece


def unpacked_chunks(header: JsonObject | None, records: Iterable[JsonObject], batch: int = 4096,
                    revision: RevisionLike = None) -> Iterator[bytes]:
    """The unpacked form of a log, a piece at a time: its header line as the reader of ``revision``
    reads it (none for ``None``), then every event on its own line (CHUNK-*, JSONL-3).

    ``records`` are stored records (a packed row is expanded ``batch`` members at a time, never whole)
    or events already read. The one unpack (`_Unpack`): :func:`write_unpacked` writes the pieces as they
    come, a whole-log caller joins them; memory is bounded by ``batch`` member events plus one record.
    """
    if header is not None:
        yield _unpacked_header(header, revision)
    unpack = _Unpack(batch)
    plain = unpack.record
    for value in records:
        row = row_spec(value)
        if row is None:
            piece = plain(value)
            if piece is not None:
                yield piece
        else:
            yield from unpack.row(value, row)
    rest = unpack.rest()
    if rest is not None:
        yield rest


def _unpacked_header(header: JsonObject, revision: RevisionLike) -> bytes:
    return json_text.dumps_bytes(header_line(header_from_line(header, revision), revision)) + b"\n"


def write_unpacked(data: bytes, handle: BinaryIO, batch: int = 4096, revision: RevisionLike = None) -> int | None:
    """Write the artifact ``data`` with every event on its own line to ``handle``; the number of events.

    :func:`unpacked_chunks`'s encoding (`_Unpack`) of the artifact's records, written as the whole-lines step
    (`whole_lines`) decides them, each line parsed once (memory bounded by the input and ``batch`` member
    events), for an artifact whose header is one (`read_header_line`) and whose lines are all whole and
    contiguous. Anything else (holes, gaps, a malformed row, a bad header) returns None with nothing written:
    what was written before the first line that is not whole is cut off again (``handle`` is seekable: the
    bytes from its position at the call are truncated). The caller then reads it with :func:`read_artifact`,
    which decides and reports exactly, and unpacks the events read.
    """
    try:
        header = read_header_line(data, revision).value
    except JsonlError:
        return None
    lines = data.split(b"\n")
    lines.pop()  # a torn fragment (or nothing): never part of the log (JSONL-4)
    start = handle.tell()
    write = handle.write
    write(_unpacked_header(header, revision))
    unpack = _Unpack(batch)
    plain, expand = unpack.record, unpack.row
    written = 0

    def put(piece: bytes) -> None:
        nonlocal written
        written += piece.count(b"\n")
        write(piece)

    def take(value: JsonObject) -> None:
        row = row_spec(value)
        if row is None:
            piece = plain(value)
            if piece is not None:
                put(piece)
        else:
            for piece in expand(value, row):
                put(piece)

    if whole_lines(lines, keep=False, take=take)[2] != len(lines):
        handle.seek(start)
        handle.truncate()
        return None
    rest = unpack.rest()
    if rest is not None:
        put(rest)
    return written


# ---------------------------------------------------------------- writing


def write_artifact(
    path: str | os.PathLike[str],
    header: JsonObject,
    events: Iterable[JsonObject] = (),
    pack: bool = True,
    *,
    revision: RevisionLike = None,
) -> None:
    """Write a whole artifact atomically: a synced temp file, then ``os.replace``; the header line
    has the keys of ``revision``.

    Parent directories are created. A reader never sees a half-written file.
    """
    write_atomic(path, header_bytes(header, revision) + encode_records(events, pack))


def append_batch(
    path: str | os.PathLike[str],
    events: Iterable[JsonObject],
    *,
    truncate_to: int | None = None,
    pack: bool = True,
) -> None:
    """Durably append one batch, first truncating a torn tail to ``truncate_to`` (JSONL-8)."""
    payload = encode_records(events, pack)
    with open(path, "r+b") as handle:
        if truncate_to is not None:
            handle.truncate(truncate_to)
        handle.seek(0, os.SEEK_END)
        handle.write(payload)
        handle.flush()
        os.fsync(handle.fileno())


# ---------------------------------------------------------------- load path


@dataclass(frozen=True)
class LoadedArtifact:
    """The result of the load path: the seeded session (None where the revision's load path does not seed,
    JSONL-12) and what repair did."""

    session: Session | None
    header: dict[str, JsonValue]
    events: list[dict[str, JsonValue]]
    closers: list[dict[str, JsonValue]]
    #: bytes of torn tail that were (or, when not durable, would be) truncated
    truncated_bytes: int


class _LegacyRecords:
    """JSONL-12 (PERSIST-9 at the append boundary): the retired shapes (delta, mode/set, fallback reason) of a
    log, noted one record at a time, and the one refusal the load path raises for them: the first record of
    each legacy type in ``TABLE.load_rejected_types``'s order, then the first legacy request/header reason."""

    def __init__(self) -> None:
        self.order = list(TABLE.load_rejected_types)
        self.types = frozenset(self.order)
        # (a legacy record's seq and request/header data are read as they are: the refusal names them)
        self.first: dict[str, Mapping[str, Any]] = {}
        self.reason: Mapping[str, Any] | None = None

    def note(self, event: JsonObject) -> None:
        """Keep ``event`` if it is a legacy record (`is_legacy_record`) and the first of its kind."""
        if is_legacy_record(event, self.types):
            self.keep(event)

    def keep(self, event: JsonObject) -> None:
        """Keep a legacy record if it is the first of its kind."""
        etype = event.get("type")
        if etype in self.types:
            self.first.setdefault(etype, event)  # type: ignore[arg-type]  # a legacy name is a str
        elif self.reason is None:
            self.reason = event

    def refusal(self, session_id: str | None, path: str | None, requirement: str = "JSONL-12") -> JsonlError | None:
        """The load path's refusal of the records noted so far, or None."""
        where = "append batch" if session_id is None else f"session {session_id!r}"
        for name in self.order:
            if name in self.first:
                seq = self.first[name].get("seq")
                return JsonlError(f"{where} contains unsupported legacy {name} event at seq {seq}",
                                  "JSONL_LEGACY_EVENT", requirement=requirement, seq=_as_seq(seq), path=path)
        if self.reason is not None:
            seq = self.reason.get("seq")
            return JsonlError(f"{where} contains unsupported legacy request/header reason "
                              f"{self.reason['data'].get('reason')!r} at seq {seq}",
                              "JSONL_LEGACY_EVENT", requirement=requirement, seq=_as_seq(seq), path=path)
        return None


def _as_seq(value: object) -> int | None:
    """A record's ``seq`` as an error locates it: an integer, else None (the message quotes what was stored)."""
    return value if type(value) is int else None


def _legacy_rejection(events: Iterable[JsonObject], session_id: str | None, path: str | None,
                      requirement: str = "JSONL-12") -> None:
    """Refuse the legacy records of ``events`` as the load path does (`_LegacyRecords`); with ``session_id``
    None, at the append boundary (PERSIST-9)."""
    legacy = _LegacyRecords()
    for event in events:
        legacy.note(event)
    refusal = legacy.refusal(session_id, path, requirement)
    if refusal is not None:
        raise refusal


def is_legacy_record(event: JsonObject, legacy: frozenset[str] | None = None) -> bool:
    """JSONL-12 (PERSIST-9 at the append boundary), one record: a retired shape the load path refuses, a
    legacy type (``TABLE.load_rejected_types``, or ``legacy`` when the caller holds them) or a request/header
    whose reason is a rejected one. The load path refuses the log at the first; the validator names each."""
    etype = event.get("type")
    try:
        if etype in (frozenset(TABLE.load_rejected_types) if legacy is None else legacy):
            return True
    except TypeError:  # an unhashable type equals no legacy name
        return False
    if etype != "request/header":
        return False
    data = event.get("data")
    return isinstance(data, dict) and is_rejected_reason(data.get("reason"))


def load_artifact(path: str | os.PathLike[str], session_id: str, *, durable: bool = True,
                  revision: RevisionLike = None, seed: bool | None = None) -> LoadedArtifact:
    """The persistence load path (JSONL-12).

    Rejects an identity mismatch, a version other than 0 and legacy records;
    computes the crash-repair closers (REPAIR-*) and, where the revision's load
    path seeds (``loadSeeds``), seeds a ``Session`` (SEED-*, HDR-*), both at
    ``revision`` (the format revision of the log: an id, a release or `Rules`;
    default: the pinned one); ``seed`` True or False overrides the revision (a
    tool that wants a seeded load view). Only once the seed is accepted, when
    ``durable`` (default), truncates the torn tail and appends the closers to
    the file. With ``durable=False``, or when loading fails, the file is left
    untouched.
    """
    artifact, frozen = _read(path, revision, freeze=True)
    session, events, closers = load_records(session_id, artifact.header, artifact.events, os.fspath(path), revision,
                                            frozen=frozen, seed=seed)
    truncated = artifact.size - artifact.truncate_offset
    if durable and (artifact.torn or closers):
        append_batch(path, closers, truncate_to=artifact.truncate_offset if artifact.torn else None)
    balanced = [*events, *closers] if session is None else session.events[: len(events) + len(closers)]
    return LoadedArtifact(session, artifact.header, balanced, closers, truncated)


def version_refusal(header: JsonObject, where: str | None = None) -> JsonlError | None:
    """JSONL-12: the load path's refusal of a stored header's format version (only the integer one it
    writes is loaded), or None; the validator reports the same refusal as its finding."""
    version = header.get("version")
    if type(version) is int and version == _FORMAT_VERSION:
        return None
    return JsonlError(f"unsupported session format version {version!r} (only {_FORMAT_VERSION} is supported)",
                      "JSONL_VERSION", requirement="JSONL-12", path=where)


def check_loadable(
    header: JsonObject, events: list[dict[str, JsonValue]], session_id: str, where: str | None,
    revision: RevisionLike = None,
) -> list[dict[str, JsonValue]]:
    """The load path's identity, version and legacy checks, shared by every storage form (JSONL-12), and
    the events as ``revision``'s load path reads them: earlier-format records upgraded and unknown types
    refused where the revision says so (JSONL-13..15); ``events`` itself where nothing changes. The load path
    of a log it does not seed (`load_records`); a seeded load reads in its one walk instead."""
    check_identity(header, session_id, where)
    return StoredReader(session_id, where, revision, legacy=True).read_all(events)


def check_identity(header: JsonObject, session_id: str, where: str | None) -> None:
    """JSONL-12: the load path's identity and version checks of a stored header."""
    if header["id"] != session_id:
        raise JsonlError(
            f"stored session identity mismatch: requested {session_id!r}, header contains {header['id']!r}",
            "JSONL_ID_MISMATCH", requirement="JSONL-12", path=where,
        )
    refusal = version_refusal(header, where)
    if refusal is not None:
        raise refusal


def load_records(
    session_id: str, header: JsonObject, events: list[dict[str, JsonValue]], where: str | None,
    revision: RevisionLike = None, *, frozen: bool = False, seed: bool | None = None, inspect: bool = False,
) -> tuple[Session | None, list[dict[str, JsonValue]], list[dict[str, JsonValue]]]:
    """The load path of every storage form (JSONL-12): the identity and version checks, then one pass over the
    stored records; returns the session (None where the revision's load path does not seed and ``seed`` does
    not override it), the records as read (JSONL-13: upgraded; ``events`` itself where nothing changed) and the
    crash-repair closers (REPAIR-*, at ``revision``).

    A seeded load reads its records in the walk of the load rules (`Session._load`, `seed_walk.LoadWalk` with
    this revision's `StoredReader`): one pass yields the records and every finding in order, and the load path
    raises the first by the refusal order (`StoredReader.first_defect`); the closers are computed from the
    walk's records and seeded after them. An unseeded load reads them in the reader's own pass
    (`StoredReader.read_all`, the same order). ``frozen``: ``events`` are ``freeze_parsed`` parses. ``inspect``:
    the records are read as inspecting reads them (`read_stored`: legacy records as stored, for the seed rules to
    judge), the load view of the inspecting commands (`sessionspec derive`, `fold`, `stats`, `repair`)."""
    check_identity(header, session_id, where)
    reader = StoredReader(session_id, where, revision, legacy=not inspect, inspect=inspect)
    if not (rules_for(revision).load_seeds if seed is None else seed):
        read = reader.read_all(events)
        return None, read, list(interrupted_turn_closers(read, revision))
    if reader.reader is not None:  # records may be rewritten (JSONL-13): into a copy, the caller's list stays
        events = list(events)
    session, closers = Session._load(session_id, events, header, reader,
                                     lambda read: list(interrupted_turn_closers(read, revision)),
                                     revision=revision, frozen=frozen)
    return session, events, closers


def read_stored(
    events: list[dict[str, JsonValue]], session_id: str, where: str | None = None, revision: RevisionLike = None,
    extra_types: Iterable[str] = (),
) -> list[dict[str, JsonValue]]:
    """The stored events as ``revision``'s reader reads them when inspecting (upstream ``readFrom``): earlier-format
    records upgraded and unknown types refused where the revision says so (JSONL-13..15), legacy records as
    stored; ``events`` itself where nothing changes. ``extra_types``: types a plugin registry adds (JSONL-15)."""
    return StoredReader(session_id, where, revision, extra_types).read_all(events)


#: The first-defect order of the load path's refusals of stored records: a legacy record anywhere (JSONL-12,
#: checked before anything is read), then the first record the upgrade refuses (JSONL-14, the message check),
#: then the first type unknown to the revision (JSONL-15, judged on the upgraded records). A seeded load raises
#: one of these before any seed rule's finding (SEED-*, the first by position).
REFUSAL_ORDER: tuple[str, ...] = ("legacy", "upgrade", "unknown")


class StoredReader:
    """The one reading of stored records, for every storage form and revision: each record as the revision's
    load path reads it (JSONL-13: upgraded; or as stored) with the load path's refusal of it, if any (JSONL-12
    legacy vocabulary, JSONL-14 and the upgraded message's seed check, JSONL-15 unknown types).

    One record at a time: `read` and `is_legacy`, reading goes on after a refused record (the walk of the load
    rules, `seed_walk.LoadWalk`: the validator's every defect, the seeded load path's one pass). The reader
    notes the refusals it found as it reads (the first legacy record of each kind, with ``legacy``; the first
    upgrade refusal; the first unknown type), and `refusal` gives the one the load path raises, the first by
    `REFUSAL_ORDER` and then by position; `first_defect` adds the walk's own findings after them. `read_all`
    is the same reading as one pass of its own (an unseeded load, inspect), raising that refusal. ``legacy``:
    legacy records are refused too (the load path). ``inspect``: legacy records are read as stored, as inspecting
    reads them (upstream ``readFrom``: `is_legacy` is False for every record; without it, the validator's reading
    names each legacy record the load path refuses).
    """

    def __init__(self, session_id: str, where: str | None = None, revision: RevisionLike = None,
                 extra_types: Iterable[str] = (), *, legacy: bool = False, inspect: bool = False) -> None:
        rules = rules_for(revision)
        self.session_id, self.where = session_id, where
        upgrade = rules.load_upgrade
        self.reader = upgrade.reader(session_id, rules.messages, where) if upgrade is not None else None
        known = rules.load_known_types
        self.known = None if known is None else known | frozenset(extra_types)
        self.legacy = _LegacyRecords() if legacy else None
        self.legacy_types = frozenset(TABLE.load_rejected_types)
        self.inspect = inspect
        #: the first record the upgrade refused (JSONL-14, the message check) and the first type refused as
        #: unknown (JSONL-15), as read so far
        self.refused: JsonlError | SeedError | None = None
        self.unknown: JsonlError | None = None

    @property
    def active(self) -> bool:
        """Whether the revision's load path reads stored records other than as stored (JSONL-13..15)."""
        return self.reader is not None or self.known is not None

    @property
    def upgraded(self) -> dict[str, int]:
        """Records upgraded so far, by stored type."""
        return self.reader.upgraded if self.reader is not None else {}

    def reads_apart(self, etype: str, members: Iterable[str] | None = None) -> bool:
        """JSONL-13..15 by type: whether the load path may read a record of type ``etype`` other than as stored
        (upgrade it, refuse it: `UpgradeReader.reads_apart`, which ``members``, the payload's keys when known, may
        rule out; a type outside the revision's registry, JSONL-15).
        `read` returns a record of any other type unchanged and unrefused, by the tests this one is made of, so
        the validator's fast pass takes this test for which records it must read through `read`."""
        reader, known = self.reader, self.known
        return (reader is not None and reader.reads_apart(etype, members)) or (known is not None and etype not in known)

    def is_legacy(self, event: JsonObject) -> bool:
        """JSONL-12: whether the stored record is one the load path refuses the log for (`is_legacy_record`);
        with ``legacy``, the first of its kind is noted; with ``inspect``, False."""
        if not self.inspect and is_legacy_record(event, self.legacy_types):
            if self.legacy is not None:
                self.legacy.keep(event)
            return True
        return False

    @overload
    def read(self, event: JsonObject, index: int) -> tuple[JsonObject, JsonlError | SeedError | None]: ...
    @overload
    def read(self, event: object, index: int) -> tuple[object, JsonlError | SeedError | None]: ...
    def read(self, event: object, index: int) -> tuple[object, JsonlError | SeedError | None]:
        """Record ``index`` as read (``event`` itself when nothing changes) and the load path's refusal of it
        as it reads: JSONL-14 or the upgraded message's seed check (the stored record is returned), else
        JSONL-15 (on the record as read), else None. A legacy record is `is_legacy`'s (JSONL-12)."""
        if self.reader is not None:
            try:
                event = self.reader.read(event, index)
            except (JsonlError, SeedError) as error:
                if self.refused is None:
                    self.refused = error
                return event, error
        if self.known is not None and is_refused_type(event, self.known):
            unknown = unknown_type_error(event, self.session_id, self.where)
            if self.unknown is None:
                self.unknown = unknown
            return event, unknown
        return event, None

    def read_all(self, events: list[dict[str, JsonValue]]) -> list[dict[str, JsonValue]]:
        """Every record as read (``events`` itself when none changed); raises the load path's first refusal."""
        legacy = self.legacy
        if not self.active:  # records read as stored: only the legacy vocabulary is refused
            if legacy is not None:
                types, test, keep = legacy.types, is_legacy_record, legacy.keep
                for event in events:
                    if test(event, types):
                        keep(event)
                self._raise()
            return events
        out: list[Any] | None = None  # (the records as read: as stored, or the upgrade's new dicts)
        read, note = self.read, self.is_legacy if legacy is not None else None
        record: JsonObject
        for index, stored in enumerate(events):
            if note is not None:
                note(stored)
            if self.refused is not None:  # the load path stopped reading here; only legacy records still count
                continue
            record, refusal = read(stored, index)
            if refusal is not None and refusal is self.refused:  # (an upgrade refusal: the record is not read)
                continue
            if record is not stored and out is None:
                out = list(events[:index])
            if out is not None:
                out.append(record)
        self._raise()
        return events if out is None else out

    def refusal(self) -> JsonlError | SeedError | None:
        """The load path's refusal of the records read so far: the first by `REFUSAL_ORDER`, or None."""
        found: dict[str, JsonlError | SeedError | None] = {
            "legacy": self.legacy.refusal(self.session_id, self.where) if self.legacy is not None else None,
            "upgrade": self.refused, "unknown": self.unknown}
        for kind in REFUSAL_ORDER:
            error = found[kind]
            if error is not None:
                return error
        return None

    def read_on(self, events: Sequence[JsonValue], start: int) -> None:
        """Read the records from ``start`` on, where the walk stopped at its first finding: only what the reader
        refuses counts now (a legacy record anywhere, an upgrade refusal, an unknown type: `refusal`)."""
        read, note, active = self.read, self.is_legacy, self.active
        for index in range(start, len(events)):
            event = events[index]
            if isinstance(event, dict):
                if active:
                    event, _ = read(event, index)
                note(event)

    def first_defect(self, first: Finding) -> SessionSpecError:
        """The error the load path raises once the walk found ``first`` and the reader read every record: the
        reader's `refusal`, else ``first``'s (a seed rule's, the first by position)."""
        refusal = self.refusal()
        if refusal is not None:
            return refusal
        assert first.error is not None  # (the walk's findings of a stored log carry the error raised)
        return first.error

    def _raise(self) -> None:
        """Raise the first of the refusals found, by `REFUSAL_ORDER`."""
        refusal = self.refusal()
        if refusal is not None:
            raise refusal


def live_snapshot(session: Session) -> list[FrozenDict]:
    """The events of a live session for a load request; refused while its turn is open (JSONL-12)."""
    events = list(session.events)
    if interrupted_turn_closers(events):
        raise JsonlError(
            f"cannot load session {session.id!r} while its live turn is open",
            "JSONL_OPEN_TURN", requirement="JSONL-12",
        )
    return events


# ---------------------------------------------------------------- paths


def _utf16_units(text: str) -> list[int]:
    raw = text.encode("utf-16-le", "surrogatepass")
    return [raw[i] | (raw[i + 1] << 8) for i in range(0, len(raw), 2)]


_SAFE = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")


def encode_path_segment(raw: str) -> str:
    """Encode a session id as one safe path segment, injectively (JSONL-10, JSONL-11).

    Works on UTF-16 code units, so a character outside the BMP becomes two
    escapes and lone surrogates survive.
    """
    if type(raw) is not str or raw == "":
        raise JsonlError("cannot encode an empty path segment", "JSONL_PATH_INVALID", requirement="JSONL-10")
    if raw == ".":
        return "~002E"
    if raw == "..":
        return "~002E~002E"
    safe = TABLE.path_safe_units
    return "".join(chr(unit) if unit in safe else f"~{unit:04X}" for unit in _utf16_units(raw))


def project_dir_key(cwd: str) -> str:
    """The readable, bounded directory key of a project path: ``--<slug>--`` (JSONL-10)."""
    if type(cwd) is not str or cwd == "":
        raise JsonlError("cannot encode an empty project path", "JSONL_PATH_INVALID", requirement="JSONL-10")
    out: list[str] = []
    separator_run = False
    safe = TABLE.path_safe_units
    for unit in _utf16_units(cwd):
        if unit in (0x2F, 0x5C, 0x3A):  # / \ :
            if not separator_run:
                out.append("-")
            separator_run = True
        else:
            out.append(chr(unit) if unit in safe else f"~{unit:04X}")
            separator_run = False
    slug = "".join(out).lstrip("-") or "root"
    return f"--{slug[:_KEY_MAX]}--"


def project_dir(root: str | os.PathLike[str], cwd: str | None) -> Path:
    """``<root>/<project key>``, or ``<root>/_no-cwd`` for a session without ``cwd``."""
    return Path(root) / (_NO_CWD if cwd is None else project_dir_key(cwd))


def session_dir(root: str | os.PathLike[str], cwd: str | None, session_id: str) -> Path:
    """``<root>/<project key or _no-cwd>/<encoded id>``."""
    return project_dir(root, cwd) / encode_path_segment(session_id)


def session_log_path(
    root: str | os.PathLike[str], cwd: str | None, session_id: str, compression: Compression = "zstd"
) -> Path:
    """The artifact path of a session (JSONL-10); the reference backend compresses by default."""
    name = _COMPRESSED_NAME if compression == "zstd" else _PLAIN_NAME
    return session_dir(root, cwd, session_id) / name


define("header_line", _header_line)  # JSONL-1
define("decode_line", _decode_line)  # JSONL-5, JSONL-7: a line's records or UNREADABLE_LINE
define("path_safe_units", _SAFE)  # JSONL-10: the UTF-16 units a path segment keeps as they are
define("load_rejected_types", _LEGACY_TYPES)  # JSONL-12: the legacy types the load path refuses
