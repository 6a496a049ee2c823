"""``SessionStore``: live sessions, their lifecycle edges and notifications.

Lifecycle (STORE-*): ``prepare`` builds an unpublished session; ``enter``
publishes it and returns its detach function; ``announce`` emits
``session/created``; detaching emits the paired ``session/disposed`` (only
for announced entries). ``create`` is the three steps bound to an owner
(``Scope``) whose disposal detaches the session (DEC-15), with rollback when
a ``session/created`` listener raises.

Live notifications (vocabulary §9.1): ``session/created``,
``session/disposed`` and ``session/event`` are synchronous emits with
per-listener containment (failures are logged, DEC-17), ``session/flush`` is
the awaited parallel checkpoint behind ``flush``. Listeners registered with a
scope receive only sessions entered through that scope (STORE-16).

Pre-commit validators (DEC-7) run inside an append's publish window after
the surface check; a raise vetoes the append. A validator may return a
callable that the store runs right after the commit (used by the invariant
checker to advance its trace only for committed events).

Re-entrancy: while an entry is announcing, publishing an append or running
an out-of-band sequence, a detach request is deferred until that operation
unwinds (STORE-10, OOB-9).
"""

from __future__ import annotations

import builtins
import functools
import inspect
import logging
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # asyncio loads when an awaitable listener appears, not with every reader of the package
    import asyncio

    from sessionspec.reference.revision import RevisionLike, Rules

from sessionspec.spec import FORMAT, SURFACE_TYPES
from sessionspec.spec.errors import OutOfBandError, SessionForkError, StoreError
from sessionspec.spec.schema_types import JsonObject, JsonValue

from .json_value import FrozenDict, is_nonneg_safe_int
from .revision import rules_for
from .rule_table import TABLE, define
from .session import Clock, Session, now_ms
from .surface import SurfacePlan

__all__ = ["LISTENER_NAMES", "Scope", "SessionStore", "default_out_of_band_types"]

logger = logging.getLogger("sessionspec.reference.store")

LISTENER_NAMES = ("session/created", "session/disposed", "session/event", "session/flush")
_NOT_META = frozenset(("version", "id"))  # header keys the store sets itself (HDR-11)
_NOT_COPIED = frozenset(("version", "id", "createdAt"))
_MINT_PREFIX: str = FORMAT.minted_session_id_prefix
_INADMISSIBLE_PREFIXES = ("turn/", "step/")

Listener = Callable[..., object]  # called with the event's arguments; what it returns is ignored
Validator = Callable[[Session, FrozenDict], "Callable[[], None] | None"]
Detach = Callable[[], None]


@functools.cache
def default_out_of_band_types() -> frozenset[str]:
    """The types the event registry marks out-of-band, admitted by default (DEC-8)."""
    from sessionspec.spec import load_spec

    return frozenset(load_spec().out_of_band_types)


class Scope:
    """An owner with a disposal hook (DEC-15) and a dispatch scope (STORE-16).

    Sessions created with ``scope=`` are detached when it is disposed;
    listeners registered with ``scope=`` are removed then, and receive only
    sessions entered through this scope. ``dispose`` is idempotent.
    """

    __slots__ = ("_disposers", "_next", "disposed", "name")

    def __init__(self, name: str | None = None) -> None:
        self.name = name
        self._disposers: dict[int, Callable[[], None]] = {}
        self._next = 0
        self.disposed = False

    def add_disposer(self, disposer: Callable[[], None]) -> Callable[[], None]:
        """Run ``disposer`` on disposal; returns a function that unregisters it."""
        if self.disposed:
            raise RuntimeError(f"scope {self.name!r} is already disposed")
        key = self._next
        self._next += 1
        self._disposers[key] = disposer

        def remove() -> None:
            self._disposers.pop(key, None)

        return remove

    def dispose(self) -> None:
        """Run every disposer, newest first; a failing disposer is logged, not raised."""
        if self.disposed:
            return
        self.disposed = True
        while self._disposers:
            _key, disposer = self._disposers.popitem()  # newest first
            try:
                disposer()
            except Exception:
                logger.warning("scope %r: a disposer raised", self.name, exc_info=True)

    def __enter__(self) -> Scope:
        return self

    def __exit__(self, *exc: object) -> None:
        self.dispose()

    def __repr__(self) -> str:
        return f"Scope({self.name!r}{', disposed' if self.disposed else ''})"


class _Entry:
    """All mutable lifecycle state of one exact store entry (one enter … detach)."""

    __slots__ = (
        "announced",
        "announcing",
        "appending",
        "detach_requested",
        "id",
        "out_of_band",
        "owner_release",
        "scope",
        "session",
        "store",
    )

    def __init__(self, store: SessionStore, session: Session, scope: Scope | None) -> None:
        self.store = store
        self.id = session.id
        self.session = session
        self.scope = scope
        self.announced = False
        self.announcing = False
        self.appending = False
        self.out_of_band = False
        self.detach_requested = False
        self.owner_release: Callable[[], None] | None = None

    def busy(self) -> bool:
        return self.announcing or self.appending or self.out_of_band

    def settle(self) -> None:
        """Carry out a deferred detach once no operation is in flight (STORE-10)."""
        if self.detach_requested and not (self.announcing or self.appending or self.out_of_band):
            self.store._remove(self)

    def publish(self, session: Session, event: FrozenDict, plan: SurfacePlan) -> None:
        """APPEND-1 stages (g) validators, (h) commit, (i) observers (APPEND-9 … APPEND-11)."""
        store = self.store
        self.appending = True
        try:
            observers = store._snapshot("session/event", self)  # fixed before commit (STORE-15)
            commits: list[Callable[[], None]] | None = None
            for validator in store._validators:
                after = validator(session, event)
                if after is not None:
                    if commits is None:
                        commits = []
                    commits.append(after)
            session._commit(event, plan)
            if commits is not None:
                for after in commits:
                    try:
                        after()
                    except Exception:
                        logger.warning("session %r: a post-commit hook raised", self.id, exc_info=True)
            if observers:
                store._contained(observers, "session/event", self.id, (session, event))
        finally:
            self.appending = False
            if self.detach_requested:
                self.settle()


class SessionStore:
    """The in-memory store of live sessions (vocabulary §9.2)."""

    def __init__(self, *, out_of_band_types: frozenset[str] | None = None, revision: RevisionLike = None,
                 clock: Clock | None = None) -> None:
        """``revision`` is the format revision of every session the store builds (default: the pinned one);
        ``clock`` stamps their events and synthesised ``createdAt`` (default: the wall clock, ``now_ms``)."""
        self._clock = clock
        self._rules = rules = rules_for(revision)
        self._entries: dict[str, _Entry] = {}
        self._counter = 0
        self._listeners: dict[str, tuple[tuple[Listener, Scope | None], ...]] = dict.fromkeys(LISTENER_NAMES, ())
        self._validators: tuple[Validator, ...] = ()
        self._dispatch_cache: dict[tuple[str, Scope | None], tuple[Listener, ...]] = {}
        self._admitted: set[str] = set()
        defaults = rules.out_of_band_types if out_of_band_types is None else out_of_band_types
        for event_type in defaults:
            self.admit_out_of_band(event_type)
        self._root = Scope("store")
        self._tasks: set[asyncio.Future[Any]] = set()

    @property
    def rules(self) -> Rules:
        """The format revision's behaviour every session of this store follows."""
        return self._rules

    # ------------------------------------------------------------ registration
    def on(self, name: str, listener: Listener, scope: Scope | None = None) -> Callable[[], None]:
        """Register a listener; returns a function that removes it.

        With ``scope``, the listener receives only sessions entered through that
        scope and is removed when the scope is disposed (STORE-16).
        """
        if name not in self._listeners:
            raise ValueError(f"unknown store event {name!r}; expected one of {', '.join(LISTENER_NAMES)}")
        if scope is not None and scope.disposed:
            raise RuntimeError(f"scope {scope.name!r} is already disposed")
        record = (listener, scope)
        self._listeners[name] = (*self._listeners[name], record)
        self._dispatch_cache.clear()
        release: Callable[[], None] | None = None

        def off() -> None:
            current = self._listeners[name]
            for i, item in enumerate(current):
                if item is record:
                    self._listeners[name] = current[:i] + current[i + 1 :]
                    self._dispatch_cache.clear()
                    break
            if release is not None:
                release()

        if scope is not None:
            release = scope.add_disposer(off)
        return off

    def add_pre_commit_validator(self, validator: Validator) -> Callable[[], None]:
        """Install ``validator(session, candidate)``; a raise vetoes the append (DEC-7, APPEND-10).

        It may return a callable, run right after the commit. Returns a remover.
        """
        self._validators = (*self._validators, validator)

        def remove() -> None:
            self._validators = tuple(v for v in self._validators if v is not validator)

        return remove

    def admit_out_of_band(self, event_type: str) -> None:
        """Admit a log-only type to ``append_out_of_band`` (DEC-8, OOB-1)."""
        if type(event_type) is not str:
            raise TypeError("an event type must be a str")
        if event_type in SURFACE_TYPES or event_type.startswith(_INADMISSIBLE_PREFIXES):
            raise OutOfBandError(
                f"event type {event_type!r} can never be appended out of band (surface or turn/step lifecycle)",
                "OOB_INADMISSIBLE_TYPE", requirement="OOB-1",
            )
        self._admitted.add(event_type)

    @property
    def out_of_band_types(self) -> frozenset[str]:
        """The currently admitted out-of-band types."""
        return frozenset(self._admitted)

    # ------------------------------------------------------------ dispatch helpers
    def _snapshot(self, name: str, entry: _Entry) -> tuple[Listener, ...]:
        """The listeners of ``name`` that receive ``entry`` (STORE-16), as an immutable tuple.

        Cached per (name, scope) and dropped whenever a listener is added or
        removed, so the append hot path does no filtering.
        """
        key = (name, entry.scope)
        cached = self._dispatch_cache.get(key)
        if cached is None:
            scope = entry.scope
            cached = tuple(fn for fn, s in self._listeners[name] if s is None or s is scope)
            if len(self._dispatch_cache) > 256:  # bound the cache: scopes come and go
                self._dispatch_cache.clear()
            self._dispatch_cache[key] = cached
        return cached

    def _watch(self, result: Any, name: str, session_id: str) -> None:
        """Observe an awaitable a contained listener returned; log its failure (APPEND-11, STORE-8)."""
        if not inspect.isawaitable(result):
            return
        import asyncio

        try:
            future = asyncio.ensure_future(result)
        except RuntimeError:  # no running event loop: it can never run
            if inspect.iscoroutine(result):
                result.close()
            logger.warning("session %r: %s listener returned an awaitable outside an event loop", session_id, name)
            return
        self._tasks.add(future)

        def done(task: asyncio.Future[Any]) -> None:
            self._tasks.discard(task)
            if not task.cancelled() and task.exception() is not None:
                logger.warning("session %r: %s listener rejected: %r", session_id, name, task.exception())

        future.add_done_callback(done)

    def _contained(self, listeners: tuple[Listener, ...], name: str, session_id: str, args: tuple[Any, ...]) -> None:
        for listener in listeners:
            try:
                result = listener(*args)
            except Exception as error:  # noqa: BLE001 - containment is the contract
                logger.warning("session %r: %s listener threw: %r", session_id, name, error)
                continue
            if result is not None:
                self._watch(result, name, session_id)

    # ------------------------------------------------------------ lifecycle
    def prepare(
        self,
        id: str | None = None,
        *,
        seed: Iterable[JsonValue] | None = None,
        meta: JsonObject | None = None,
    ) -> Session:
        """Build an unpublished session (STORE-1, STORE-2, HDR-11).

        Without ``id`` the store mints ``session-<n>``, skipping live ids. The
        id collision check runs before any seed or header validation.
        """
        if id is None:
            while True:
                self._counter += 1
                session_id = f"{_MINT_PREFIX}{self._counter}"
                if session_id not in self._entries:
                    break
        else:
            if type(id) is not str:
                raise TypeError(f"a session id must be a str, got {type(id).__name__}")
            session_id = id
        if session_id in self._entries:
            raise StoreError(f"session {session_id!r} already exists", "SESSION_ALREADY_EXISTS",
                             requirement="STORE-1")
        if meta is None:
            meta = {}
        elif not isinstance(meta, Mapping):
            raise TypeError("meta must be a mapping")
        meta_keys = set(self._rules.header_keys) - _NOT_META
        unknown = set(meta) - meta_keys
        if unknown:
            raise TypeError(f"unknown meta keys {sorted(map(str, unknown))}; expected {sorted(meta_keys)}")
        created_at = meta.get("createdAt")
        header: dict[str, Any] = {
            "version": FORMAT.session_format_version,
            "id": session_id,
            "createdAt": created_at if created_at is not None else (now_ms() if self._clock is None else self._clock()),
        }
        for key in self._rules.header_keys:
            if key in meta and key not in _NOT_COPIED:
                header[key] = meta[key]
        return Session(session_id, seed, header, revision=self._rules, clock=self._clock)

    def enter(self, session: Session, scope: Scope | None = None) -> Detach:
        """Publish a prepared session and return its detach function (STORE-3, STORE-4).

        ``scope`` is the dispatch scope captured for this entry (STORE-16). No
        ``session/created`` is emitted; call ``announce`` next.
        """
        session_id = session.id
        if session_id in self._entries:
            raise StoreError(f"session {session_id!r} already exists", "SESSION_ALREADY_EXISTS",
                             requirement="STORE-3")
        if session._entry is not None:
            raise StoreError(f"session {session_id!r} is already attached to a store",
                             "SESSION_ALREADY_ATTACHED", requirement="STORE-3")
        entry = _Entry(self, session, scope)
        self._entries[session_id] = entry
        session._entry = entry
        entered = True

        def detach() -> None:
            nonlocal entered
            if not entered:
                return
            entered = False
            if entry.busy():
                entry.detach_requested = True
                return
            self._remove(entry)

        return detach

    def _remove(self, entry: _Entry) -> None:
        """Remove one exact entry and emit its paired disposal (STORE-9)."""
        entry.detach_requested = False
        if self._entries.get(entry.id) is not entry:
            return
        del self._entries[entry.id]
        if entry.session._entry is entry:
            entry.session._entry = None
        if entry.owner_release is not None:
            entry.owner_release()
            entry.owner_release = None
        if TABLE.disposal_announced(entry):
            try:
                listeners = self._snapshot("session/disposed", entry)
                self._contained(listeners, "session/disposed", entry.id, (entry.session,))
            except Exception as error:  # noqa: BLE001
                logger.warning("session %r: session/disposed dispatch threw: %r", entry.id, error)

    def _live_entry(self, session: Session) -> _Entry | None:
        entry = session._entry
        if entry is None or entry.store is not self or self._entries.get(entry.id) is not entry:
            return None
        return entry  # type: ignore[return-value]

    def _require_live(self, session: Session, requirement: str) -> _Entry:
        entry = self._live_entry(session)
        if entry is None:
            raise StoreError(f"session {session.id!r} is not live in this store", "SESSION_NOT_LIVE",
                             requirement=requirement)
        return entry

    def announce(self, session: Session) -> None:
        """Emit ``session/created`` once for a live, unannounced entry (STORE-6 … STORE-8).

        A listener that raises stops the dispatch and makes ``announce`` raise;
        a listener's failing awaitable is only logged.
        """
        entry = self._require_live(session, "STORE-6")
        if entry.announced or entry.announcing:
            raise StoreError(f"session {entry.id!r} was already announced", "SESSION_ALREADY_ANNOUNCED",
                             requirement="STORE-6")
        entry.announced = True
        entry.announcing = True
        try:
            for listener in self._snapshot("session/created", entry):
                result = listener(session)
                if result is not None:
                    self._watch(result, "session/created", entry.id)
        finally:
            entry.announcing = False
            entry.settle()

    def create(
        self,
        id: str | None = None,
        *,
        seed: Iterable[JsonValue] | None = None,
        meta: JsonObject | None = None,
        scope: Scope | None = None,
    ) -> Session:
        """``prepare`` + ``enter`` + ``announce``, owned by ``scope`` (STORE-11).

        Disposing the owner (``scope``, or the store's own root owner, see
        ``dispose``) detaches the session. If a ``session/created`` listener
        raises, the entry is rolled back (paired disposal) and the error is
        raised (STORE-7).
        """
        owner = scope if scope is not None else self._root
        if owner.disposed:
            raise RuntimeError(f"owner scope {owner.name!r} is already disposed")
        session = self.prepare(id, seed=seed, meta=meta)
        detach = self.enter(session, scope)
        entry = session._entry
        assert isinstance(entry, _Entry)
        entry.owner_release = owner.add_disposer(detach)
        try:
            self.announce(session)
        except BaseException:
            detach()
            raise
        return session

    def detach(self, session: Session) -> None:
        """Detach a live session of this store (deferred while it is busy); a no-op otherwise."""
        entry = self._live_entry(session)
        if entry is None:
            return
        if entry.busy():
            entry.detach_requested = True
        else:
            self._remove(entry)

    def dispose(self) -> None:
        """Dispose the store's root owner: detaches every session created without a scope."""
        self._root.dispose()

    # ------------------------------------------------------------ queries
    def get(self, id: str) -> Session | None:
        """The live session with this id, or ``None`` (STORE-12)."""
        entry = self._entries.get(id)
        return entry.session if entry is not None else None

    def list(self) -> list[Session]:
        """A new list of the live sessions, in entry order (STORE-12)."""
        return [entry.session for entry in self._entries.values()]

    def __contains__(self, session: object) -> bool:
        return isinstance(session, Session) and self._live_entry(session) is not None

    def __len__(self) -> int:
        return len(self._entries)

    # ------------------------------------------------------------ flush
    async def flush(self, session: Session) -> bool | None:
        """The awaited parallel durability checkpoint (STORE-13, STORE-14).

        Every ``session/flush`` listener is started in registration order
        before any is awaited; all settle; then the failure of the
        earliest-registered failing listener is raised. At a revision whose
        flush reports participation it returns whether any listener ran.
        """
        import asyncio

        entry = self._require_live(session, "STORE-13")
        outcomes: list[Any] = []
        pending: list[asyncio.Future[Any]] = []
        for listener in self._snapshot("session/flush", entry):
            try:
                result = listener(session)
            except Exception as error:  # noqa: BLE001 - a sync raise is that listener's failure
                TABLE.sync_flush_failure(outcomes, error)
                continue
            if inspect.isawaitable(result):
                future = asyncio.ensure_future(result)
                pending.append(future)
                outcomes.append(future)
            else:
                outcomes.append(None)
        if pending:
            await asyncio.wait(pending)
        # Retrieve every settled failure (so none is reported as "never retrieved"),
        # then raise the earliest-registered one.
        failures: list[BaseException] = []
        for outcome in outcomes:
            if isinstance(outcome, BaseException):
                failures.append(outcome)
            elif isinstance(outcome, asyncio.Future):
                if outcome.cancelled():
                    failures.append(asyncio.CancelledError())
                elif (failure := outcome.exception()) is not None:
                    failures.append(failure)
        if failures:
            raise failures[0]
        return bool(outcomes) if self._rules.flush_reports_participation else None

    # ------------------------------------------------------------ out of band
    async def append_out_of_band(
        self, session: Session, type: str, data: JsonValue, trigger: JsonValue
    ) -> FrozenDict:
        """Append one admitted log-only event outside the agent loop (OOB-1 … OOB-11).

        With an open turn the event joins it. Otherwise it is wrapped in a
        zero-step turn (``turn/start``, event, ``turn/end`` completed) followed
        by an awaited ``flush``. A detach requested meanwhile is deferred
        until the whole sequence has settled. Absent from revisions that
        retired it (OOB-*).
        """
        if not self._rules.out_of_band:
            raise NotImplementedError(f"append_out_of_band does not exist at format revision {self._rules.id}")
        if type not in self._admitted:
            raise OutOfBandError(f"event type {type!r} is not admitted for out-of-band appends",
                                 "OOB_NOT_ADMITTED", requirement="OOB-1")
        entry = self._live_entry(session)
        if entry is None:
            raise OutOfBandError(f"session {session.id!r} is not live in this store", "SESSION_NOT_LIVE",
                                 requirement="OOB-2")
        if entry.out_of_band:
            raise OutOfBandError(f"session {session.id!r} already has an out-of-band append in progress",
                                 "OOB_IN_PROGRESS", requirement="OOB-3")
        entry.out_of_band = True
        try:
            log = session._log
            last_boundary = None
            for event in reversed(log):
                if event["type"] == "turn/start" or event["type"] == "turn/end":
                    last_boundary = event
                    break
            if TABLE.turn_is_open(last_boundary):
                return session.append(type, data)  # OOB-4
            turn = 1
            for event in reversed(log):
                if event["type"] == "turn/start":
                    turn = _next_turn(event["data"])
                    break
            accepted: FrozenDict | None = None
            failure: BaseException | None = None
            opened = False
            try:
                session.append("turn/start", {"turn": turn, "trigger": trigger})
                opened = True
                accepted = session.append(type, data)
            except Exception as error:  # noqa: BLE001 - re-raised below, after balancing
                failure = error
            if opened:
                session.append("turn/end", {"turn": turn, "reason": {"kind": "completed"}})
                try:
                    await TABLE.out_of_band_flush(self, session)
                except Exception as error:  # noqa: BLE001
                    if failure is None:
                        failure = error
            if failure is not None:
                raise failure
            assert accepted is not None
            return accepted
        finally:
            entry.out_of_band = False
            entry.settle()

    # ------------------------------------------------------------ fork
    def fork(
        self,
        source: Session | str,
        boundary: int | None = None,
        child_id: str | None = None,
        *,
        scope: Scope | None = None,
    ) -> Session:
        """Create a live child from a closed-turn prefix of a live source (FORK-1 … FORK-12)."""
        if child_id is not None and child_id in self._entries:
            raise SessionForkError(f"session {child_id!r} already exists", "SESSION_ALREADY_EXISTS",
                                   requirement="FORK-1")
        live = self._resolve_fork_source(source)
        seed = TABLE.fork_seed(self, live, boundary)
        meta: dict[str, Any] = {}
        if "cwd" in live.header:
            meta["cwd"] = live.header["cwd"]
        meta["parentSession"] = live.id
        meta["seedLength"] = TABLE.seed_length(seed)
        return self.create(child_id, seed=seed, meta=meta, scope=scope)

    def _resolve_fork_source(self, source: Session | str) -> Session:
        if isinstance(source, str):
            live = self.get(source)
            if live is None:
                raise SessionForkError(f"session {source!r} not found", "SESSION_NOT_FOUND", requirement="FORK-2")
            return live
        if not isinstance(source, Session):
            raise TypeError("a fork source is a Session or a session id")
        live = self.get(source.id)
        if live is None:
            raise SessionForkError(f"session {source.id!r} not found", "SESSION_NOT_FOUND", requirement="FORK-2")
        if live is not source:
            raise SessionForkError(f"session {source.id!r} is not the live store instance", "SESSION_NOT_LIVE",
                                   requirement="FORK-2")
        return source

    def _fork_seed(self, session: Session, requested: Any) -> builtins.list[FrozenDict]:
        log = session._log
        if requested is None:
            if not log:
                return []  # FORK-3
            boundary = log[-1]["seq"]  # FORK-4
        else:
            boundary = requested
        if not is_nonneg_safe_int(boundary):
            raise SessionForkError(
                f"fork boundary for session {session.id!r} must be a non-negative safe integer, got {boundary!r}",
                "INVALID_BOUNDARY", requirement="FORK-5",
            )
        if boundary >= len(log):
            last = log[-1]["seq"] if log else "none"
            raise SessionForkError(
                f"fork boundary {boundary} does not exist in session {session.id!r} (last seq: {last})",
                "INVALID_BOUNDARY", requirement="FORK-6",
            )
        event = log[boundary]
        if event["seq"] != boundary:
            raise SessionForkError(
                f"fork boundary {boundary} does not match a contiguous event seq in session {session.id!r}",
                "INVALID_BOUNDARY", requirement="FORK-7",
            )
        if self._rules.fork_between_turns:
            for earlier in reversed(log[: boundary + 1]):
                if earlier["type"] == "turn/end":
                    break
                if earlier["type"] == "turn/start":
                    turn = earlier["data"].get("turn") if isinstance(earlier["data"], dict) else None
                    raise SessionForkError(
                        f"fork boundary {boundary} in session {session.id!r} ends inside open turn {turn!r}",
                        "OPEN_TURN", requirement="FORK-8",
                    )
        elif event["type"] != "turn/end":
            raise SessionForkError(
                f"fork boundary {boundary} in session {session.id!r} must be turn/end, got {event['type']}",
                "OPEN_TURN", requirement="FORK-8",
            )
        return log[: boundary + 1]


def _next_turn(data: Any) -> Any:
    """``lastStart.data.turn + 1`` (OOB-5); a missing or non-numeric turn counts as 0."""
    turn = data.get("turn") if isinstance(data, dict) else None
    if type(turn) is int or type(turn) is float:
        return turn + 1
    return 1


def _keep_sync_failure(outcomes: builtins.list[Any], error: Exception) -> None:
    """STORE-13: a listener that raises synchronously is that listener's failure; the others still start."""
    outcomes.append(error)


def _turn_is_open(last_boundary: Mapping[str, Any] | None) -> bool:
    """OOB-4: the last turn boundary is a turn/start (an out-of-band event then joins that turn)."""
    return last_boundary is not None and last_boundary["type"] == "turn/start"


define("disposal_announced", lambda entry: entry.announced)  # STORE-9: only announced entries are disposed
define("sync_flush_failure", _keep_sync_failure)
define("turn_is_open", _turn_is_open)
define("out_of_band_flush", lambda store, session: store.flush(session))  # OOB-8: its failure is raised
define("fork_seed", SessionStore._fork_seed)  # FORK-5 … FORK-8: the boundary checks and the seed
define("seed_length", len)  # FORK-9: seedLength is the seed's length
