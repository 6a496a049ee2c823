"""The SQLite session store, upstream's database backend layout (SQLITE-1 … SQLITE-8).

One database holds every session: a ``sessions`` row per materialised
session (its header), an ``events`` row per event keyed by ``(session_id,
seq)`` with ``data`` and the two surface fields as JSON text, and a
one-row ``persistence_state`` naming the store. ``PRAGMA application_id``
and ``PRAGMA user_version`` identify the layout; the table layout itself
is spec data (``constants()["sqlite"]``), from which the DDL is generated.

Reading never writes: :meth:`SqliteStore.open` opens read-only (SQLite's
``mode=ro``) and checks the identity before anything else. Writing is an
explicit choice (:meth:`SqliteStore.create`, ``writable=True``): appends
and crash repair each run in one ``BEGIN IMMEDIATE`` transaction, so a
failure leaves the stored log as it was.
"""

from __future__ import annotations

import os
import sqlite3
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from sessionspec.spec import constants
from sessionspec.spec.errors import PersistenceError, SessionSpecError, SqliteStoreError

from . import json_text
from .json_value import is_json_value, is_nonneg_safe_int
from .jsonl import LoadedArtifact, check_loadable
from .repair import interrupted_turn_closers
from .rule_table import TABLE, define
from .session import Session

__all__ = ["APPLICATION_ID", "USER_VERSION", "SqliteStore", "StoredSession", "is_sqlite", "schema_sql"]

_SQLITE = constants()["sqlite"]
APPLICATION_ID: int = _SQLITE["applicationId"]
USER_VERSION: int = _SQLITE["userVersion"]
_HEADER_MAGIC = b"SQLite format 3\x00"
# Constant column lists, never input: the queries below are static text with bound parameters.
_EVENT_ROWS = "SELECT seq, type, time, data, source_event_seqs, surface_op FROM events WHERE session_id = ? ORDER BY seq"
_SESSION_ROWS = "SELECT id, version, created_at, cwd, parent_session, seed_length, delegation_depth FROM sessions"
_INSERT_EVENT = (
    "INSERT INTO events (session_id, seq, type, time, data, source_event_seqs, surface_op) VALUES (?, ?, ?, ?, ?, ?, ?)"
)
_OPTIONAL_HEADER = (("cwd", "cwd"), ("parent_session", "parentSession"), ("seed_length", "seedLength"),
                    ("delegation_depth", "delegationDepth"))


def is_sqlite(prefix: bytes) -> bool:
    """Whether bytes start with the SQLite database header (content sniffing)."""
    return prefix[:16] == _HEADER_MAGIC


def schema_sql() -> str:
    """The ``CREATE TABLE`` statements of the layout, generated from the spec (SQLITE-2)."""
    statements = []
    for table in _SQLITE["tables"]:
        parts = [f"{c['name']} {c['type']} {c['constraint']}".rstrip() for c in table["columns"]]
        if "primaryKey" in table:
            parts.append(f"PRIMARY KEY ({', '.join(table['primaryKey'])})")
        statements.append(f"CREATE TABLE IF NOT EXISTS {table['name']} (\n  " + ",\n  ".join(parts) + "\n) STRICT")
    return ";\n".join(statements) + ";"


@dataclass(frozen=True)
class StoredSession:
    """One session as stored: its header, the preserved event prefix and where a torn tail starts.

    ``torn_from`` is the first seq of rows past the preserved prefix (deleted
    by the load path), ``None`` when every row is preserved.
    """

    header: dict[str, Any]
    events: list[dict[str, Any]]
    rows: int
    torn_from: int | None


def _error(message: str, code: str, requirement: str, path: str | None, cause: BaseException | None = None
           ) -> SqliteStoreError:
    return SqliteStoreError(message, code, requirement=requirement, path=path, cause=cause)


def _sqlite_failure(error: sqlite3.Error, path: str) -> SqliteStoreError:
    """A sqlite3 exception as a located, coded error."""
    text = str(error)
    if "locked" in text or "busy" in text:
        return _error(f"database is locked by another connection: {text}", "SQLITE_LOCKED", "SQLITE-1", path, error)
    if "not a database" in text or "malformed" in text or "encrypted" in text:
        return _error(f"not a readable SQLite database: {text}", "SQLITE_NOT_DATABASE", "SQLITE-1", path, error)
    return _error(f"SQLite error: {text}", "SQLITE_NOT_DATABASE", "SQLITE-1", path, error)


class SqliteStore:
    """A handle on one session database; read-only unless opened for writing."""

    def __init__(self, connection: sqlite3.Connection, path: str, writable: bool) -> None:
        self._db = connection
        self.path = path
        self.writable = writable
        self.store_id = ""

    # ------------------------------------------------------------ opening

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, writable: bool = False, timeout: float = 1.0) -> SqliteStore:
        """Open an existing store and check its identity (SQLITE-1); read-only by default."""
        where = os.fspath(path)
        if not os.path.isfile(where):
            raise _error(f"no such database file: {where}", "SQLITE_NOT_DATABASE", "SQLITE-1", where)
        mode = "rw" if writable else "ro"
        try:
            db = sqlite3.connect(f"file:{quote(os.path.abspath(where))}?mode={mode}", uri=True,
                                 timeout=timeout, isolation_level=None)
        except sqlite3.Error as error:
            raise _sqlite_failure(error, where) from error
        store = cls(db, where, writable)
        try:
            store._check_identity()
        except BaseException:
            db.close()
            raise
        return store

    @classmethod
    def create(cls, path: str | os.PathLike[str], *, journal_mode: str = _SQLITE["defaultJournalMode"]) -> SqliteStore:
        """Open a store for writing, initialising a fresh file (owner-only) with the layout (SQLITE-1, SQLITE-2)."""
        where = os.fspath(path)
        if journal_mode not in _SQLITE["journalModes"]:
            raise _error(f"unsupported journal mode {journal_mode!r}", "SQLITE_FOREIGN", "SQLITE-1", where)
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
        store = cls(db, where, True)
        try:
            fresh = store._check_identity(allow_fresh=True)
            for statement in schema_sql().split(";"):
                if statement.strip():
                    db.execute(statement)
            db.execute("INSERT OR IGNORE INTO persistence_state (singleton, store_id) VALUES (1, ?)",
                       (str(uuid.uuid4()),))
            if fresh:
                db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
                db.execute(f"PRAGMA user_version = {USER_VERSION}")
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
        except sqlite3.Error as error:
            raise _sqlite_failure(error, self.path) from error
        if version == 0 and app == 0 and objects == 0:
            if allow_fresh:
                return True
            raise _error("database holds no session store (empty, no application id)",
                         "SQLITE_FOREIGN", "SQLITE-1", self.path)
        if not TABLE.application_id_ok(app):
            raise _error(f"database belongs to another application (application_id {app:#x}, "
                         f"expected {APPLICATION_ID:#x})", "SQLITE_FOREIGN", "SQLITE-1", self.path)
        if version != USER_VERSION:
            raise _error(f"session database layout version {version}, only {USER_VERSION} is supported",
                         "SQLITE_VERSION", "SQLITE-1", self.path)
        self._check_layout()
        if not allow_fresh:
            self._read_store_id()
        return False

    def _check_layout(self) -> None:
        for table in _SQLITE["tables"]:
            try:
                have = {row[1] for row in self._db.execute(f"PRAGMA table_info({table['name']})")}
            except sqlite3.Error as error:
                raise _sqlite_failure(error, self.path) from error
            missing = [c["name"] for c in table["columns"] if c["name"] not in have]
            if missing:
                raise _error(f"table {table['name']!r} lacks column(s) {', '.join(missing)}"
                             if have else f"table {table['name']!r} is missing",
                             "SQLITE_LAYOUT", "SQLITE-2", self.path)

    def _read_store_id(self) -> None:
        row = self._query("SELECT store_id FROM persistence_state WHERE singleton = 1", ())
        if not row or type(row[0][0]) is not str or not row[0][0]:
            raise _error("database has no store identity row", "SQLITE_LAYOUT", "SQLITE-2", self.path)
        self.store_id = row[0][0]

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> SqliteStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _query(self, sql: str, args: Sequence[Any]) -> list[tuple[Any, ...]]:
        try:
            return self._db.execute(sql, args).fetchall()
        except sqlite3.Error as error:
            raise _sqlite_failure(error, self.path) from error

    # ------------------------------------------------------------ reading

    def _header(self, row: Sequence[Any]) -> dict[str, Any]:
        session_id, version, created_at = row[0], row[1], row[2]
        if type(session_id) is not str or type(version) is not int or not is_nonneg_safe_int(created_at):
            raise _error(f"session row {session_id!r} is malformed", "SQLITE_CORRUPT", "SQLITE-3", self.path)
        header: dict[str, Any] = {"version": version, "id": session_id, "createdAt": created_at}
        for (_, key), value in zip(_OPTIONAL_HEADER, row[3:7]):
            if value is not None:
                header[key] = value
        return header

    def list_sessions(self) -> list[dict[str, Any]]:
        """The headers of every materialised session, in id order (SQLITE-3)."""
        rows = self._query(_SESSION_ROWS + " ORDER BY id", ())
        return [self._header(row) for row in rows]

    def header(self, session_id: str) -> dict[str, Any]:
        """A session's header; ``SQLITE_NO_SESSION`` when it has no row."""
        rows = self._query(_SESSION_ROWS + " WHERE id = ?", (session_id,))
        if not rows:
            raise _error(f"no session {session_id!r} in the database", "SQLITE_NO_SESSION", "SQLITE-3", self.path)
        return self._header(rows[0])

    def rows(self, session_id: str) -> list[tuple[Any, ...]]:
        """A session's raw event rows ``(seq, type, time, data, source_event_seqs, surface_op)`` by seq."""
        return self._query(_EVENT_ROWS, (session_id,))

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
        rows = self.rows(session_id)
        events: list[Any] = [row_to_event(row) for row in rows]
        last_end = max((i for i, e in enumerate(events) if e is not None and e["type"] == "turn/end"), default=-1)
        preserved: list[dict[str, Any]] = []
        for i, event in enumerate(events):
            if event is None or event["seq"] != i:
                if TABLE.in_committed_region(i, last_end):
                    what = "unparsable event row" if event is None else f"seq gap (expected {i}, got {rows[i][0]})"
                    raise SqliteStoreError(f"corrupt session {session_id!r}: {what} in the committed region",
                                           "SQLITE_CORRUPT", requirement="SQLITE-5", seq=rows[i][0],
                                           path=f"{self.path}#{session_id}")
                break
            preserved.append(event)
        torn_from = len(preserved) if len(preserved) < len(rows) else None
        return StoredSession(header, preserved, len(rows), torn_from)

    # ------------------------------------------------------------ writing

    def _require_writable(self) -> None:
        if not self.writable:
            raise _error("store is open read-only", "SQLITE_READ_ONLY", "SQLITE-1", self.path)

    def _transaction(self) -> None:
        try:
            self._db.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as error:
            raise _sqlite_failure(error, self.path) from error

    def append(self, header: Mapping[str, Any], events: Sequence[Mapping[str, Any]]) -> None:
        """Append one batch in one transaction; the first append materialises the session (PERSIST-1 … PERSIST-4).

        The batch must continue the stored log (its first seq is the stored
        count) and be contiguous; every ``data`` must be a lossless JSON
        value. Any failure rolls the whole batch back.
        """
        self._require_writable()
        if not events:
            return
        session_id = header["id"]
        self._transaction()
        try:
            stored = self._db.execute("SELECT COUNT(*) FROM events WHERE session_id = ?", (session_id,)).fetchone()[0]
            exists = self._db.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone()
            check_appendable(events, stored)
            if not exists:
                self._db.execute(
                    "INSERT INTO sessions (id, version, created_at, cwd, parent_session, seed_length, "
                    "delegation_depth, incarnation, revision) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0)",
                    (session_id, header["version"], header["createdAt"], header.get("cwd"),
                     header.get("parentSession"), header.get("seedLength"), header.get("delegationDepth"),
                     str(uuid.uuid4())),
                )
            self._insert(session_id, events)
            self._db.execute("UPDATE sessions SET revision = revision + 1 WHERE id = ?", (session_id,))
            self._db.execute("COMMIT")
        except BaseException as error:
            self._db.execute("ROLLBACK")
            if isinstance(error, sqlite3.Error):
                raise _sqlite_failure(error, self.path) from error
            raise

    def _insert(self, session_id: str, events: Iterable[Mapping[str, Any]]) -> None:
        self._db.executemany(_INSERT_EVENT, [
            (session_id, e["seq"], e["type"], e["time"], json_text.dumps(e["data"]),
             json_text.dumps(list(e["sourceEventSeqs"])) if "sourceEventSeqs" in e else None,
             json_text.dumps(e["surfaceOp"]) if "surfaceOp" in e else None)
            for e in events
        ])

    def insert_raw_row(self, session_id: str, seq: int, event_type: str, data_text: str) -> None:
        """Store one event row verbatim and unchecked: how tests leave the damage a crash or a bug leaves."""
        self._require_writable()
        self._transaction()
        self._db.execute(_INSERT_EVENT, (session_id, seq, event_type, 0, data_text, None, None))
        self._db.execute("COMMIT")

    def load(self, session_id: str, *, durable: bool = True) -> LoadedArtifact:
        """The load path (JSONL-12, SQLITE-7): checks, then crash repair in one transaction.

        With ``durable`` (requires a writable store) the torn rows are deleted
        and the closers inserted in one ``BEGIN IMMEDIATE`` transaction; else
        the repair happens only in memory.
        """
        return self.repair([session_id], durable=durable)[0]

    def repair(self, session_ids: Sequence[str], *, durable: bool = True,
               revisions: Mapping[str, Any] | None = None) -> list[LoadedArtifact]:
        """The load path for several sessions, all repaired in ONE transaction (or none, on any failure).

        ``revisions`` maps a session id to the format revision it is read at and its closers follow (REPAIR-8;
        default: pinned).
        """
        if durable:
            self._require_writable()
            self._transaction()
        loaded = []
        try:
            for session_id in session_ids:
                stored = self.read_session(session_id)
                revision = (revisions or {}).get(session_id)
                events = check_loadable(stored.header, stored.events, session_id, f"{self.path}#{session_id}", revision)
                closers = list(interrupted_turn_closers(events, revision))
                if durable:
                    if stored.torn_from is not None:
                        self._db.execute("DELETE FROM events WHERE session_id = ? AND seq >= ?",
                                         (session_id, stored.torn_from))
                    if closers:
                        self._insert(session_id, closers)
                    if stored.torn_from is not None or closers:
                        self._db.execute("UPDATE sessions SET revision = revision + 1 WHERE id = ?", (session_id,))
                balanced = [*events, *closers]
                session = Session(session_id, balanced, stored.header, revision=revision)
                loaded.append(LoadedArtifact(session, stored.header, balanced, closers, stored.rows - len(stored.events)))
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
    seq, etype, time, data, sources, surface_op = row
    if type(seq) is not int or type(etype) is not str or type(time) is not int or type(data) is not str:
        return None
    try:
        event: dict[str, Any] = {"type": etype, "seq": seq, "time": time, "data": json_text.loads(data)}
        if sources is not None:
            event["sourceEventSeqs"] = json_text.loads(sources)
        if surface_op is not None:
            event["surfaceOp"] = json_text.loads(surface_op)
    except (SessionSpecError, ValueError, TypeError):
        return None
    return event


def check_appendable(events: Sequence[Mapping[str, Any]], next_seq: int) -> None:
    """The backend contract's batch checks: contiguous seqs from ``next_seq``, JSON data (PERSIST-2 … PERSIST-5)."""
    TABLE.check_appendable(events, next_seq)


def _check_appendable(events: Sequence[Mapping[str, Any]], next_seq: int) -> None:
    for offset, event in enumerate(events):
        expected = next_seq + offset
        if event.get("seq") != expected or type(event.get("seq")) is not int:
            code, req = ("PERSIST_SEQ_CONTINUE", "PERSIST-3") if offset == 0 else ("PERSIST_SEQ_GAP", "PERSIST-4")
            raise PersistenceError(
                f"append batch {'does not continue the stored log' if offset == 0 else 'has a seq gap'}: "
                f"expected seq {expected}, got {event.get('seq')!r}",
                code, requirement=req, index=offset,
            )
        if not is_json_value(event.get("data")):
            raise PersistenceError(
                f"data of {event.get('type')} event at seq {expected} is not losslessly JSON-serializable",
                "PERSIST_DATA_NOT_JSON", requirement="PERSIST-5", index=offset, seq=expected,
            )


define("check_appendable", _check_appendable)  # PERSIST-3 … PERSIST-5
define("application_id_ok", lambda app: app == APPLICATION_ID)  # SQLITE-1: only this format's databases open
define("in_committed_region", lambda index, last_turn_end: index <= last_turn_end)  # SQLITE-5: a hole there is corrupt
