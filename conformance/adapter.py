"""The reference implementation behind the adapter protocol.

:class:`ReferenceAdapter` maps each protocol request onto the public API of
``sessionspec.reference`` and each outcome onto a reply: a value becomes
``result``, an error of the reference's own hierarchy (a deliberate
rejection with a stable ``code``) becomes ``rejected``, any other exception
raised inside ``sessionspec.reference`` becomes ``crashed`` (the
implementation failed the case), and anything else becomes ``errored`` (an
adapter bug, never a verdict).

The same object serves the in-process fast path and the subprocess adapter
(``python -m sessionspec.conformance.reference_adapter``); both see exactly
the JSON the protocol carries. This module is also the worked example for
adapter authors: each handler is a few lines of "build the situation, call
the API, report what is observable".
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import logging
import os
import tempfile
import threading
import traceback
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Literal

from sessionspec import __version__

from . import protocol
from .serving import CLOCK as _CLOCK
from .serving import REVISION as _REVISION
from .serving import SQLITE_LAYOUT as _SQLITE_LAYOUT
from .serving import current_clock, current_revision, current_sqlite_layout
from .store_script import ScriptedFailure, append_step, run_script

__all__ = ["ReferenceAdapter", "Rejection", "session_state"]

CAPABILITIES = list(protocol.CAPABILITIES)



def _capabilities(revision: str | None) -> list[str]:
    """The reference claims every capability its revision has (no out-of-band or find where retired)."""
    from sessionspec.reference.revision import rules_for

    rules = rules_for(revision)
    absent = set()
    if not rules.out_of_band:
        absent |= {"out-of-band", "oob-admission"}
    if not rules.find_last_message_turn_end:
        absent.add("find-last-message-turn-end")
    return [c for c in CAPABILITIES if c not in absent]


class Rejection(Exception):
    """A deliberate refusal to report as a ``rejected`` reply."""

    def __init__(
        self, code: str | None, message: str, *, index: int | None = None, phase: str | None = None,
        state: Any = None, has_state: bool = False,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.index = index
        self.phase = phase
        self.state = state
        self.has_state = has_state


def _spec_error() -> type[Exception]:
    from sessionspec.spec.errors import SessionSpecError

    return SessionSpecError


def _rejection(error: Any, **overrides: Any) -> Rejection:
    fields: dict[str, Any] = {"index": getattr(error, "index", None)}
    fields.update(overrides)
    return Rejection(error.code, error.message, **fields)


@contextlib.contextmanager
def setup_phase() -> Iterator[None]:
    """Rejections while building a case's situation are reported with ``phase: setup``."""
    try:
        yield
    except _spec_error() as error:
        raise _rejection(error, phase="setup") from error


def setup_append(session: Any, step: Mapping[str, Any]) -> None:
    """An append that builds an op's situation: its rejection is ``phase: setup`` without an
    ``index`` (only the seed entry is a position these ops define, PROTOCOL.md §2)."""
    try:
        append_step(session, step)
    except _spec_error() as error:
        raise _rejection(error, phase="setup", index=None) from error


# -- quiet contained failures ------------------------------------------------------------

_quiet = threading.local()


class _QuietFilter(logging.Filter):
    """Drop the reference's "listener failed (contained)" warnings while a scripted
    listener fails on purpose; they are expected, and the trace reports them."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not getattr(_quiet, "on", False)


_STORE_LOGGER = logging.getLogger("sessionspec.reference.store")
_STORE_LOGGER.addFilter(_QuietFilter())


@contextlib.contextmanager
def quiet_store_logs() -> Iterator[None]:
    previous = getattr(_quiet, "on", False)
    _quiet.on = True
    try:
        yield
    finally:
        _quiet.on = previous


# -- shared builders ----------------------------------------------------------------------


def session_state(session: Any) -> dict[str, Any]:
    """The observable state of a session (``common.json#/$defs/sessionState``)."""
    surface = session.surface
    return {
        "header": session.header,
        "events": list(session.events),
        "seq": session.seq,
        "surface": {"nodes": list(surface.nodes), "replaceGeneration": surface.replace_generation},
    }


def new_session(spec: Mapping[str, Any]) -> Any:
    """``Session(id, seed, header)`` from a ``sessionInput`` (without its appends)."""
    from sessionspec.reference.session import NO_HEADER, Session

    return Session(spec.get("id", "s"), spec.get("seed"), spec.get("header", NO_HEADER), revision=current_revision(),
                   clock=current_clock())


def _attached(spec: Mapping[str, Any], *, invariants: bool) -> tuple[Any, Any]:
    """A session entered and announced in a fresh store (checker installed if asked)."""
    from sessionspec.reference.store import SessionStore

    store = SessionStore(revision=current_revision(), clock=current_clock())
    if invariants:
        from sessionspec.reference.invariants import InvariantChecker

        InvariantChecker().install(store)
    session = new_session(spec)
    store.enter(session)
    store.announce(session)
    return store, session


def _build(spec: Mapping[str, Any], *, invariants: bool = False) -> Any:
    if invariants:
        return _attached(spec, invariants=True)[1]
    return new_session(spec)


# -- op handlers -------------------------------------------------------------------------


def op_start(args: Mapping[str, Any]) -> Any:
    from sessionspec.spec.revisions import resolve_revision

    return {
        "protocolVersion": protocol.PROTOCOL_VERSION,
        "implementation": {
            "name": "sessionspec-reference",
            "version": __version__,
            "language": "python",
            "homepage": "https://sessionspec.dev",
        },
        "specRevision": resolve_revision(current_revision()).id,
        "sqliteLayout": _served_layout(),
        "capabilities": _capabilities(current_revision()),
    }


def _served_layout() -> int:
    """The SQLite layout the served backend has: the one asked for, else the revision's own."""
    from sessionspec.reference.sqlite_store import layout_for

    return layout_for(current_revision(), current_sqlite_layout()).user_version


def op_stop(args: Mapping[str, Any]) -> Any:
    return {}


def op_load(args: Mapping[str, Any]) -> Any:
    try:
        session = _build(args, invariants=bool(args.get("invariants")))
    except _spec_error() as error:
        raise _rejection(error) from error
    return session_state(session)


def op_append(args: Mapping[str, Any]) -> Any:
    with setup_phase():
        session = _build(args, invariants=bool(args.get("invariants")))
    for index, step in enumerate(args.get("appends", ())):
        try:
            append_step(session, step)
        except _spec_error() as error:
            raise _rejection(error, index=index, state=session_state(session)) from error
    return session_state(session)


def op_derive(args: Mapping[str, Any]) -> Any:
    with setup_phase():
        session = new_session(args)
        session.derive_messages()  # exercised incrementally, after the seed and after every append
        for step in args.get("appends", ()):
            setup_append(session, step)
            session.derive_messages()
    return {
        "messages": session.derive_messages(),
        "eventMessages": [session.derive_event_message(e) for e in session.events],
        "requestHeader": session.request_header(),
    }


def op_fold(args: Mapping[str, Any]) -> Any:
    from sessionspec.reference import fold_surface

    try:
        return fold_surface(args["events"], current_revision())
    except _spec_error() as error:
        raise _rejection(error) from error


def op_fork(args: Mapping[str, Any]) -> Any:
    from sessionspec.reference.store import SessionStore

    store = SessionStore(revision=current_revision(), clock=current_clock())
    with setup_phase():
        for other in args.get("live", ()):
            store.create(other)
        source = new_session(args["source"])
        store.enter(source)
        store.announce(source)
        for step in args["source"].get("appends", ()):
            setup_append(source, step)
    ref = source if args.get("by", "object") == "object" else source.id
    try:
        child = store.fork(ref, args.get("boundary"), args.get("childId"))
    except _spec_error() as error:
        raise _rejection(error, state={"live": [s.id for s in store.list()]}) from error
    return {"child": session_state(child), "live": [s.id for s in store.list()]}


def op_oob(args: Mapping[str, Any]) -> Any:
    from sessionspec.reference.store import SessionStore

    store = SessionStore(out_of_band_types=frozenset() if "admit" in args else None, clock=current_clock())
    try:
        for event_type in args.get("admit", [args["type"]]):
            store.admit_out_of_band(event_type)
    except _spec_error() as error:
        raise _rejection(error) from error
    with setup_phase():
        session = new_session(args["session"])
        for step in args["session"].get("appends", ()):
            setup_append(session, step)
        store.enter(session)
        store.announce(session)
    flushes = 0
    behaviour = args.get("flush", "return")

    def on_flush(_session: Any) -> Any:
        nonlocal flushes
        flushes += 1
        if behaviour == "raise":
            raise ScriptedFailure("flush")
        if behaviour == "reject":
            async def fail() -> None:
                await asyncio.sleep(0)
                raise ScriptedFailure("flush")

            return fail()
        return None

    store.on("session/flush", on_flush)
    try:
        with quiet_store_logs():
            event = asyncio.run(store.append_out_of_band(session, args["type"], args["data"], args["trigger"]))
    except ScriptedFailure as failure:
        state = {"events": list(session.events), "flushes": flushes}
        raise Rejection("SCRIPTED", str(failure), state=state) from failure
    except _spec_error() as error:
        raise _rejection(error, state={"events": list(session.events), "flushes": flushes}) from error
    return {"event": event, "events": list(session.events), "flushes": flushes}


def op_store(args: Mapping[str, Any]) -> Any:
    with quiet_store_logs():
        return run_script(args["script"])


def _events_op(fn: Callable[[Any], Any]) -> Callable[[Mapping[str, Any]], Any]:
    def handler(args: Mapping[str, Any]) -> Any:
        try:
            return fn(args)
        except _spec_error() as error:
            raise _rejection(error) from error

    return handler


def _repair(args: Mapping[str, Any]) -> Any:
    from sessionspec.reference import interrupted_turn_closers

    return {"closers": list(interrupted_turn_closers(args["events"], current_revision()))}


def _pack(args: Mapping[str, Any]) -> Any:
    from sessionspec.reference import pack_chunk_runs

    return {"records": list(pack_chunk_runs(args["events"]))}


def _decode(args: Mapping[str, Any]) -> Any:
    from sessionspec.reference import decode_storage_record

    return {"events": list(decode_storage_record(args["record"]))}


def _canonical(args: Mapping[str, Any]) -> Any:
    from sessionspec.reference import canonical_header

    return {"header": canonical_header(args["header"], current_revision())}


def _fold_header(args: Mapping[str, Any]) -> Any:
    from sessionspec.reference import fold_request_header

    return {"header": fold_request_header(args["events"], args.get("start"), current_revision())}


def _equals(args: Mapping[str, Any]) -> Any:
    from sessionspec.reference import header_equals

    return {"equal": bool(header_equals(args["a"], args["b"], current_revision()))}


def _find(args: Mapping[str, Any]) -> Any:
    from sessionspec.reference import find_last_message_turn_end

    events = args["events"]
    found = find_last_message_turn_end(events)
    if found is None:
        return {"index": None}
    for index, event in enumerate(events):
        if event is found:  # FIND-4: the answer is an element of the given list
            return {"index": index}
    raise RuntimeError("find_last_message_turn_end returned an event that is not in its input")


def _json_value(args: Mapping[str, Any]) -> Any:
    from sessionspec.reference import is_json_value

    return {"isJsonValue": bool(is_json_value(args["value"]))}


def _invariants(args: Mapping[str, Any]) -> Any:
    from sessionspec.reference.invariants import check_invariants

    found = check_invariants(args["events"], current_revision())
    if found:
        raise _rejection(found[0])
    return {"valid": True}


def _bytes(data: Mapping[str, Any]) -> bytes:
    if "text" in data:
        return str(data["text"]).encode("utf-8", "surrogatepass")
    return base64.b64decode(data["base64"], validate=True)


def _as_bytes_json(raw: bytes) -> dict[str, str]:
    try:
        return {"text": raw.decode("utf-8")}
    except UnicodeDecodeError:
        return {"base64": base64.b64encode(raw).decode("ascii")}


def _jsonl_read(args: Mapping[str, Any]) -> Any:
    from sessionspec.reference import jsonl

    artifact = jsonl.read_artifact(_bytes(args["data"]), current_revision())
    return {"header": artifact.header, "events": artifact.events, "committedBytes": artifact.truncate_offset}


def _jsonl_load(args: Mapping[str, Any]) -> Any:
    from sessionspec.reference import jsonl

    with tempfile.TemporaryDirectory(prefix="sessionspec-load-") as tmp:
        path = os.path.join(tmp, "session.jsonl")
        with open(path, "wb") as handle:
            handle.write(_bytes(args["data"]))
        loaded = jsonl.load_artifact(path, args["id"], revision=current_revision())
        with open(path, "rb") as handle:
            written = handle.read()
    return {"header": loaded.header, "events": loaded.events, "closers": loaded.closers, "data": _as_bytes_json(written)}


def _jsonl_write(args: Mapping[str, Any]) -> Any:
    from sessionspec.reference import json_text, jsonl

    pack = args.get("packChunks", True)
    out = (json_text.dumps(jsonl.header_line(args["header"], current_revision())) + "\n").encode("utf-8")
    for batch in args["batches"]:
        out += jsonl.encode_records(batch, pack)
    return {"data": _as_bytes_json(out)}


def _jsonl_path(args: Mapping[str, Any]) -> Any:
    from sessionspec.reference import jsonl

    fn = args["fn"]
    if fn == "segment":
        return {"path": jsonl.encode_path_segment(args["value"])}
    if fn == "project":
        return {"path": jsonl.project_dir_key(args["cwd"])}
    compression: Literal["zstd", "none"] = "zstd" if args.get("compressed", True) else "none"
    return {"path": jsonl.session_log_path(args["root"], args.get("cwd"), args["id"], compression).as_posix()}


def _zstd_read(args: Mapping[str, Any]) -> Any:
    from sessionspec.reference.jsonl_zstd import read_compressed_artifact

    artifact = read_compressed_artifact(_bytes(args["data"]), budget=args.get("budget"), revision=current_revision())
    return {"header": artifact.header, "events": artifact.events, "frames": len(artifact.decoded.frames),
            "torn": artifact.torn, "recovered": len(artifact.recovered)}


def _sqlite_read(args: Mapping[str, Any]) -> Any:
    import sqlite3

    from sessionspec.reference.sqlite_store import SqliteStore

    with tempfile.TemporaryDirectory(prefix="sessionspec-sqlite-") as tmp:
        path = os.path.join(tmp, "sessions.db")
        db = sqlite3.connect(path, isolation_level=None)
        try:
            for statement in args["sql"]:
                db.execute(statement)
        finally:
            db.close()
        with SqliteStore.open(path, revision=current_revision(), user_version=_served_layout()) as store:
            out: dict[str, Any] = {"sessions": store.list_sessions()}
            if "id" in args:
                stored = store.read_session(args["id"])
                out["session"] = {"header": stored.header, "events": stored.events, "tornFrom": stored.torn_from}
    return out


def _persistence(args: Mapping[str, Any]) -> Any:
    from .persistence_script import run_persistence

    return run_persistence(args)


def _live(args: Mapping[str, Any]) -> Any:
    from .live_script import run_live

    return run_live(args)


HANDLERS: Mapping[str, Callable[[Mapping[str, Any]], Any]] = {
    "start": op_start,
    "stop": op_stop,
    "load": op_load,
    "append": op_append,
    "derive": op_derive,
    "fold": op_fold,
    "fork": op_fork,
    "store": op_store,
    "oob": op_oob,
    "repair": _events_op(_repair),
    "pack": _events_op(_pack),
    "decode": _events_op(_decode),
    "canonical-header": _events_op(_canonical),
    "fold-request-header": _events_op(_fold_header),
    "header-equals": _events_op(_equals),
    "find-last-message-turn-end": _events_op(_find),
    "json-value": _events_op(_json_value),
    "jsonl-read": _events_op(_jsonl_read),
    "jsonl-load": _events_op(_jsonl_load),
    "jsonl-write": _events_op(_jsonl_write),
    "jsonl-path": _events_op(_jsonl_path),
    "invariants": _events_op(_invariants),
    "persistence": _persistence,
    "live": _live,
    "zstd-read": _events_op(_zstd_read),
    "sqlite-read": _events_op(_sqlite_read),
}


class ReferenceAdapter:
    """Serve protocol requests (already-parsed JSON) with the reference implementation."""

    def __init__(self, handlers: Mapping[str, Callable[[Mapping[str, Any]], Any]] | None = None,
                 revision: str | None = None, sqlite_layout: int | None = None,
                 clock: Callable[[], int] | None = None) -> None:
        """``revision``: the format revision to serve (an id or a release; default: the pinned one);
        ``sqlite_layout``: the layout its SQLite backend has (one of the revision's; default: its own);
        ``clock``: what stamps the served sessions' events (default: the wall clock; a deterministic one,
        ``reference.SteppingClock``, makes a run of requests repeat exactly)."""
        from sessionspec.reference.sqlite_store import layout_for
        from sessionspec.spec.revisions import resolve_revision

        self.handlers = dict(HANDLERS if handlers is None else handlers)
        self.revision = resolve_revision(revision).id
        self.sqlite_layout = layout_for(self.revision, sqlite_layout).user_version  # KeyError: not a layout of it
        self.clock = clock

    def handle(self, message: Any) -> dict[str, Any]:
        """One request in, one reply out; never raises."""
        if not isinstance(message, dict) or type(message.get("seq")) is not int:
            return protocol.errored(None, "request is not an object with an integer seq")
        seq = message["seq"]
        handler = self.handlers.get(message.get("op"))  # type: ignore[arg-type]
        if handler is None:
            return protocol.skipped(seq, f"operation {message.get('op')!r} is not supported by this adapter")
        args = message.get("args")
        if not isinstance(args, dict):
            return protocol.errored(seq, "request args is not an object")
        token, layout = _REVISION.set(self.revision), _SQLITE_LAYOUT.set(self.sqlite_layout)
        clock = _CLOCK.set(self.clock)
        try:
            value = handler(args)
        except Rejection as r:
            return protocol.rejected(
                seq, r.code, r.message, index=r.index, phase=r.phase, state=r.state, has_state=r.has_state
            )
        except Exception as exc:  # noqa: BLE001 - a crash of the implementation, or of the adapter
            detail = "".join(traceback.format_exception(exc))[-4000:]
            if _raised_by_implementation(exc):
                return protocol.crashed(seq, type(exc).__name__, str(exc), detail=detail)
            return protocol.errored(seq, f"{type(exc).__name__}: {exc}", detail=detail)
        finally:
            _REVISION.reset(token)
            _SQLITE_LAYOUT.reset(layout)
            _CLOCK.reset(clock)
        return protocol.result(seq, value)


def _raised_by_implementation(exc: BaseException) -> bool:
    """Whether the innermost Python frame of ``exc`` is reference code (a crash, not an adapter bug)."""
    import sessionspec.reference

    tb = exc.__traceback__
    if tb is None:
        return False
    while tb.tb_next is not None:
        tb = tb.tb_next
    home = os.path.dirname(os.path.abspath(sessionspec.reference.__file__))
    return os.path.dirname(os.path.abspath(tb.tb_frame.f_code.co_filename)) == home
