"""The persistence seam over the three storage forms (PERSIST-1 … PERSIST-8).

A backend stores whole sessions: ``create`` registers a header (nothing is
written: lazy materialisation), ``append`` stores one contiguous batch,
``load`` runs the load path with durable crash repair, ``inspect`` reads
without repairing (as the revision's reader reads, JSONL-13..15), ``list`` names the materialised sessions and
``revision`` is a change-detection token. :class:`JsonlBackend` keeps one
artifact per session under a root (raw or zstd-framed); :class:`SqliteBackend`
keeps every session in one database. Both keep the same contract, which the
``persistence`` conformance area checks through the adapter protocol.

``simulate_torn_write`` exists for that contract too: it stores a batch and
then leaves the tail a crash would leave in this form (a partial line, a
truncated frame, an unparsable row), so one scenario can test every backend.
The fault hooks ``tear`` (raw bytes or rows a crashed writer left),
``truncate`` (a file cut at a byte offset) and ``artifact_bytes`` serve the
``persistence-faults`` steps of the same scenarios (PROTOCOL.md §6a).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, cast

from sessionspec.spec import constants
from sessionspec.spec.errors import HeaderError, JsonlError, PersistenceError, StoreError
from sessionspec.spec.schema_types import JsonObject, JsonValue

from . import json_text
from .json_value import is_json_value, is_nonneg_safe_int
from .jsonl import (
    Compression,
    LoadedArtifact,
    append_batch,
    encode_path_segment,
    encode_records,
    load_artifact,
    parse_header_line,
    read_artifact,
    read_stored,
    session_log_path,
    write_artifact,
)
from .jsonl_zstd import (
    append_compressed_batch,
    load_compressed_artifact,
    read_compressed_artifact,
    read_compressed_header,
    write_compressed_artifact,
)
from .rule_table import TABLE, define
from .sqlite_store import SqliteStore, check_appendable, check_batch_values, check_continues
from .zstd_frames import compress_frame

if TYPE_CHECKING:
    from sessionspec.reference.revision import RevisionLike

__all__ = ["Backend", "JsonlBackend", "SqliteBackend", "check_appendable", "open_backend"]

_JSONL = constants()["jsonl"]
_TORN_RECORD = b'{"type":"turn/end","seq":'


class Backend(Protocol):
    """What every storage backend offers (the upstream persistence seam, synchronously)."""

    def create(self, header: JsonObject) -> None: ...
    def append(self, session_id: str, events: Sequence[JsonObject]) -> None: ...
    def load(self, session_id: str) -> LoadedArtifact: ...
    def inspect(self, session_id: str) -> tuple[dict[str, JsonValue], list[dict[str, JsonValue]]]: ...
    def list(self) -> list[str]: ...
    def revision(self, session_id: str) -> str | None: ...
    def simulate_torn_write(self, session_id: str, events: Sequence[JsonObject]) -> None: ...
    def tear(self, session_id: str, data: bytes, rows: Sequence[JsonObject]) -> None: ...
    def truncate(self, session_id: str, drop: int) -> None: ...
    def artifact_bytes(self, session_id: str) -> bytes: ...
    def close(self) -> None: ...


def _checked_header(header: Mapping[str, Any]) -> dict[str, Any]:
    """A creation header as the seam's ``create`` checks it (PERSIST-10): a lossless JSON value with a
    non-negative safe integer ``createdAt``, as a plain dict. The other header rules (HDR-*) are the
    load path's: a header that breaks them is stored and refused when the session is loaded."""
    if not is_json_value(header):
        raise HeaderError("session metadata must be losslessly JSON-serializable", "HEADER_NOT_JSON",
                          requirement="HDR-2")
    created_at = header.get("createdAt") if isinstance(header, Mapping) else None
    if not isinstance(header, Mapping) or not TABLE.created_at_ok(created_at):
        raise HeaderError("session metadata createdAt must be a non-negative safe integer", "HEADER_CREATED_AT",
                          requirement="PERSIST-10")
    return cast("dict[str, JsonValue]", json_text.loads(json_text.dumps(header)))  # a Mapping's text is an object


def _already_exists(session_id: str) -> StoreError:
    """What create raises for an id this backend tracks or that is stored readably (PERSIST-10)."""
    return StoreError(f"session {session_id!r} already exists in this backend", "SESSION_ALREADY_EXISTS",
                      requirement="PERSIST-10")


def _no_session(session_id: Any, where: str) -> PersistenceError:
    """What every step on a session with nothing stored raises (PERSIST-11): located, never a KeyError."""
    return TABLE.no_session(session_id, where)  # type: ignore[no-any-return]


def _no_session_error(session_id: Any, where: str) -> PersistenceError:
    return PersistenceError(f"session {session_id!r} not found (nothing is stored for it)", "PERSIST_NO_SESSION",
                            requirement="PERSIST-11", path=where)


define("created_at_ok", is_nonneg_safe_int)  # PERSIST-10: create checks createdAt (and lossless JSON) only
define("no_session", _no_session_error)  # PERSIST-11: nothing stored is this located refusal


class JsonlBackend:
    """One artifact per session under ``root``: ``session.jsonl`` or ``session.jsonl.zstd``."""

    def __init__(self, root: str | os.PathLike[str], compression: Compression = "zstd", *, revision: RevisionLike = None) -> None:
        self.root = Path(root)
        self.compression: Compression = compression
        self.format_revision = revision
        self._created: dict[str, dict[str, Any]] = {}
        self._tracked: set[str] = set()  # sessions this backend loaded or appended to (PERSIST-12)

    @property
    def artifact_name(self) -> str:
        return str(_JSONL["compressedFileName"] if self.compression == "zstd" else _JSONL["plainFileName"])

    def _find(self, session_id: str) -> Path | None:
        if not self.root.is_dir() or not any(entry.is_dir() for entry in self.root.iterdir()):
            return None  # upstream encodes the id per project folder: with none, nothing is stored (PERSIST-11)
        segment = encode_path_segment(session_id)
        hits = [p for p in self.root.glob(f"*/{segment}/{self.artifact_name}") if p.is_file()]
        return hits[0] if len(hits) == 1 else None

    def _read(self, path: Path) -> tuple[dict[str, Any], list[dict[str, Any]], int | None, list[dict[str, Any]]]:
        """Header, preserved events, the offset a torn tail starts at (None when clean) and the complete
        records that tail still holds (a torn zstd frame's; they are re-written when it is cut, ZSTD-7)."""
        if self.compression == "zstd":
            compressed = read_compressed_artifact(path, revision=self.format_revision)
            return compressed.header, compressed.events, compressed.decoded.torn_start, compressed.recovered
        raw = read_artifact(path, self.format_revision)
        return raw.header, raw.events, raw.truncate_offset if raw.torn else None, []

    def create(self, header: JsonObject) -> None:
        checked = _checked_header(header)
        session_id = checked.get("id")
        if not isinstance(session_id, str):  # upstream keys it by that value: no append by id can reach it
            return
        if session_id in self._created or session_id in self._tracked or self._stored(session_id):
            raise _already_exists(session_id)
        self._created[session_id] = checked

    def _stored(self, session_id: str) -> bool:
        """Whether an artifact is stored for the id, read as the collision probe of create reads it (PERSIST-10:
        the stored prefix through this form's reader, no repair, no upgrade): a stored log that reader refuses
        refuses the create with the reader's code. An id no path can hold (JSONL-10) has none, so its create
        is accepted as any other (PERSIST-10: lazy, the path is the first write's) and that write refuses it."""
        try:
            path = self._find(session_id)
        except JsonlError as error:
            if error.code == "JSONL_PATH_INVALID":
                return False
            raise
        if path is None:
            return False
        self._read(path)
        return True

    def append(self, session_id: str, events: Sequence[JsonObject]) -> None:
        check_batch_values(events)
        if not events:
            return
        path = self._find(session_id)
        if path is not None and session_id not in self._created and session_id not in self._tracked:
            self.load(session_id)  # adopt a session this backend does not track: as a load, repair written (PERSIST-12)
        if path is None:
            header = self._created.get(session_id)
            if header is None:
                raise _no_session(session_id, os.fspath(self.root))
            check_continues(events, 0)
            target = session_log_path(self.root, header.get("cwd"), session_id, self.compression)
            if self.compression == "zstd":
                write_compressed_artifact(target, header, events, revision=self.format_revision)
            else:
                write_artifact(target, header, events, revision=self.format_revision)
            return
        _, stored, torn, recovered = self._read(path)
        check_continues(events, len(stored))
        if self.compression == "zstd":  # the torn frame is cut: its complete records go back first (ZSTD-7)
            append_compressed_batch(path, [*recovered, *events], truncate_to=torn)
        else:
            append_batch(path, events, truncate_to=torn)

    def _existing(self, session_id: str) -> Path:
        path = self._find(session_id)
        if path is None:
            raise _no_session(session_id, os.fspath(self.root))
        return path

    def load(self, session_id: str) -> LoadedArtifact:
        path = self._existing(session_id)
        if self.compression == "zstd":
            loaded = load_compressed_artifact(path, session_id, revision=self.format_revision)
        else:
            loaded = load_artifact(path, session_id, revision=self.format_revision)
        self._tracked.add(session_id)
        return loaded

    def inspect(self, session_id: str) -> tuple[dict[str, JsonValue], list[dict[str, JsonValue]]]:
        path = self._existing(session_id)
        header, events, _, _ = self._read(path)
        return header, read_stored(events, session_id, os.fspath(path), self.format_revision)

    def list(self) -> list[str]:
        ids = []
        for path in sorted(self.root.glob(f"*/*/{self.artifact_name}")) if self.root.is_dir() else []:
            if self.compression == "zstd":
                header = read_compressed_header(path, self.format_revision)
            else:
                with open(path, "rb") as handle:
                    header = parse_header_line(handle.readline().rstrip(b"\n"), self.format_revision)
            if header is not None:
                ids.append(cast(str, header["id"]))  # (a header line's id: a string, JSONL-2)
        return sorted(ids)

    def revision(self, session_id: str) -> str | None:
        """The change-detection token; None when nothing is stored (PERSIST-11: absence, not an error)."""
        path = self._find(session_id)
        if path is None:
            return None
        info = os.stat(path)
        return f"{info.st_dev}:{info.st_ino}:{info.st_size}:{info.st_mtime_ns}:{info.st_ctime_ns}"

    def simulate_torn_write(self, session_id: str, events: Sequence[JsonObject]) -> None:
        self.append(session_id, events)
        path = self._existing(session_id)
        with open(path, "ab") as handle:
            if self.compression == "zstd":
                frame = compress_frame(encode_records([{"type": "turn/end", "seq": 0, "time": 0, "data": {}}]))
                handle.write(frame[: len(frame) - 5])  # the last block and checksum never reached the disk
            else:
                handle.write(_TORN_RECORD)

    def _artifact(self, session_id: str) -> Path:
        """The stored artifact a fault step works on: an id no path can hold has none (PERSIST_NO_SESSION)."""
        try:
            return self._existing(session_id)
        except JsonlError as error:
            if error.code == "JSONL_PATH_INVALID":
                raise _no_session(session_id, os.fspath(self.root)) from None
            raise

    def tear(self, session_id: str, data: bytes, rows: Sequence[JsonObject]) -> None:
        """Append ``data`` to the stored artifact unchecked: the bytes a write cut by a crash left."""
        with open(self._artifact(session_id), "ab") as handle:
            handle.write(data)

    def truncate(self, session_id: str, drop: int) -> None:
        """Cut the stored artifact ``drop`` bytes short (at most to nothing): a crash at that byte offset."""
        path = self._artifact(session_id)
        size = os.stat(path).st_size
        os.truncate(path, max(0, size - drop))

    def artifact_bytes(self, session_id: str) -> bytes:
        return self._artifact(session_id).read_bytes()

    def close(self) -> None:
        pass


class SqliteBackend:
    """Every session in one SQLite database (created on first use, owner-only)."""

    def __init__(self, path: str | os.PathLike[str], journal_mode: str = "wal", *, revision: RevisionLike = None,
                 user_version: int | None = None) -> None:
        self.store = SqliteStore.create(path, journal_mode=journal_mode, revision=revision, user_version=user_version)
        self.format_revision = revision
        self._created: dict[str, dict[str, Any]] = {}
        self._tracked: set[str] = set()  # sessions this backend loaded or appended to (PERSIST-12)

    def create(self, header: JsonObject) -> None:
        checked = _checked_header(header)
        session_id = checked.get("id")
        if not isinstance(session_id, str):  # upstream keys it by that value: no append by id can reach it
            return
        if session_id in self._created or session_id in self._tracked:
            raise _already_exists(session_id)
        if self._has(session_id):
            self.store.read_session(session_id)  # the collision probe reads the stored prefix (PERSIST-10)
            raise _already_exists(session_id)
        self._created[session_id] = checked

    def _header(self, session_id: str) -> dict[str, Any]:
        created = self._created.get(session_id)
        if created is not None:
            return created
        self._stored(session_id)
        return self.store.header(session_id)

    def append(self, session_id: str, events: Sequence[JsonObject]) -> None:
        check_batch_values(events)
        if not events:
            return
        if session_id not in self._created and session_id not in self._tracked and self._has(session_id):
            self.load(session_id)  # adopt a session this backend does not track: as a load, repair written (PERSIST-12)
        self.store.append(self._header(session_id), events)

    def _has(self, session_id: str) -> bool:
        return isinstance(session_id, str) and session_id in self.list()

    def _stored(self, session_id: str) -> None:
        if not self._has(session_id):
            raise _no_session(session_id, f"{self.store.path}#{session_id}")

    def load(self, session_id: str) -> LoadedArtifact:
        self._stored(session_id)
        loaded = self.store.repair([session_id], revisions={session_id: self.format_revision})[0]
        self._tracked.add(session_id)
        return loaded

    def inspect(self, session_id: str) -> tuple[dict[str, JsonValue], list[dict[str, JsonValue]]]:
        self._stored(session_id)
        stored = self.store.read_session(session_id)
        return stored.header, read_stored(stored.events, session_id, f"{self.store.path}#{session_id}",
                                          self.format_revision)

    def list(self) -> list[str]:
        return sorted(cast(str, h["id"]) for h in self.store.list_sessions())  # (the sessions table's TEXT key)

    def revision(self, session_id: str) -> str | None:
        """The change-detection token; None when nothing is stored (PERSIST-11: absence, not an error)."""
        return self.store.revision(session_id) if self._has(session_id) else None

    def simulate_torn_write(self, session_id: str, events: Sequence[JsonObject]) -> None:
        self.append(session_id, events)
        self._stored(session_id)  # an empty batch stores nothing: a created-only session has no row to tear
        self.store.insert_raw_row(session_id, self.store.next_seq(session_id), "turn/end", _TORN_RECORD.decode())

    def tear(self, session_id: str, data: bytes, rows: Sequence[JsonObject]) -> None:
        """Insert ``rows`` (``type``, ``data`` text) verbatim at the next seqs, time 0: the rows a writer that
        crashed between its transactions committed, unchecked (a row's text may be cut anywhere)."""
        self._stored(session_id)
        for row in rows:
            self.store.insert_raw_row(session_id, self.store.next_seq(session_id), str(row["type"]), str(row["data"]))

    def truncate(self, session_id: str, drop: int) -> None:
        raise ValueError("a SQLite database is not cut at a byte offset (use tear rows)")

    def artifact_bytes(self, session_id: str) -> bytes:
        raise ValueError("a SQLite database's bytes are not fixed by the format")

    def close(self) -> None:
        self.store.close()


def open_backend(kind: str, directory: str | os.PathLike[str], revision: RevisionLike = None, *,
                 sqlite_layout: int | None = None) -> Backend:
    """A fresh backend of ``kind`` (``jsonl``, ``jsonl-zstd`` or ``sqlite``) under an empty directory;
    its load path reads, repairs and seeds at ``revision`` (default: pinned); a SQLite one has the
    revision's layout ``sqlite_layout`` (default: its own)."""
    if kind == "jsonl":
        return JsonlBackend(directory, "none", revision=revision)
    if kind == "jsonl-zstd":
        return JsonlBackend(directory, "zstd", revision=revision)
    if kind == "sqlite":
        return SqliteBackend(Path(directory) / "sessions.db", revision=revision, user_version=sqlite_layout)
    raise ValueError(f"unknown persistence backend {kind!r}")
