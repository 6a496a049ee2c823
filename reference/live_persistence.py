"""A storage backend attached to a live ``SessionStore`` the way the persistence seam wires it.

Upstream's coordinator (``session-persistence`` ``coordinator.ts`` at ``2f74ac98ba``;
``coordinator.ts`` + ``write-behind.ts`` at ``b150a551b8``) installs four store
listeners: ``session/created`` registers the header (lazy materialisation) and
persists the seed once; ``session/event`` copies each committed event into a
per-session write-behind queue; ``session/flush`` drains the queue durably and
fails when the durable write fails; ``session/disposed`` drains a retiring
session. Disposing the backend drains every live session, then closes it.
The promises the suite checks are the LIVE-* requirements. What a caller can
observe is the state at a barrier (flush, retirement, disposal); when the writes
between barriers happen is a scheduling choice, so this model writes at barriers
only. How a barrier writes is the revision's (``liveWrites``, LIVE-2): at
``2f74ac98ba`` every ``session/event`` starts an eager drain in the background,
and a barrier first settles it (a failed eager drain is logged, its batch kept)
and then writes what is still queued, failing only when that write fails; at
``b150a551b8`` the barrier's write is the only one, and the barrier fails with it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from sessionspec.spec.schema_types import JsonValue

from .json_value import thaw_json_value
from .persistence import Backend
from .session import Session
from .store import SessionStore

__all__ = ["LivePersistence", "LivePersistenceError"]

logger = logging.getLogger("sessionspec.reference.live_persistence")


class LivePersistenceError(Exception):
    """Disposal could not make every live session durable (upstream: an ``AggregateError``)."""

    def __init__(self, failures: list[BaseException]) -> None:
        super().__init__(f"{len(failures)} live session(s) could not be drained at disposal")
        self.failures = failures


class _Live:
    """One live session's write state: events not yet durable, in seq order (LIVE-1, LIVE-3)."""

    __slots__ = ("created", "eager_due", "pending")

    def __init__(self) -> None:
        self.pending: list[dict[str, Any]] = []
        self.created = False
        self.eager_due = False  # an eager drain was started and has not settled (liveWrites "eager")


class LivePersistence:
    """Write-behind persistence of every session of ``store`` into ``backend`` (LIVE-1..LIVE-4).

    ``write`` is the one durable write (default ``backend.append``); a scenario
    wraps it to make writes fail on purpose.
    """

    def __init__(self, store: SessionStore, backend: Backend,
                 write: Callable[[str, list[dict[str, JsonValue]]], None] | None = None) -> None:
        self.store = store
        self.backend = backend
        self.write = write or backend.append
        self._live: dict[int, tuple[Session, _Live]] = {}
        self._closed = False
        self._off = [
            store.on("session/created", self._on_created),
            store.on("session/event", self._on_event),
            store.on("session/flush", self._on_flush),
            store.on("session/disposed", self._on_disposed),
        ]

    def _state(self, session: Session) -> _Live:
        found = self._live.get(id(session))
        if found is None:
            found = (session, _Live())
            self._live[id(session)] = found
        return found[1]

    def _on_created(self, session: Session) -> None:
        state = self._state(session)
        self.backend.create(dict(session.header))  # lazy: nothing is stored until the first batch
        state.created = True
        state.pending.extend(thaw_json_value(event) for event in session.events)  # the seed, persisted once

    def _on_event(self, session: Session, event: Mapping[str, Any]) -> None:
        state = self._state(session)
        state.pending.append(thaw_json_value(event))
        state.eager_due = self.store.rules.live_writes_eager

    def _drain(self, session: Session) -> None:
        """Write the whole pending prefix as one batch; on failure keep it, in order, for the next barrier (LIVE-3).

        A started eager drain settles first: its failure is not the barrier's (nothing is lost, the
        barrier writes the batch again), so it is logged at info level, not raised."""
        state = self._state(session)
        if state.eager_due:
            state.eager_due = False
            try:
                self._write_pending(session, state)
            except Exception as error:  # noqa: BLE001 - the append never saw it; the barrier writes again
                logger.info("session %r: eager drain failed (buffered events retained): %r", session.id, error)
        self._write_pending(session, state)

    def _write_pending(self, session: Session, state: _Live) -> None:
        if not state.pending:
            return
        batch = list(state.pending)
        self.write(session.id, batch)
        del state.pending[: len(batch)]

    async def _on_flush(self, session: Session) -> None:
        self._drain(session)

    def _on_disposed(self, session: Session) -> None:
        try:
            self._drain(session)
        except Exception as error:  # noqa: BLE001 - disposal is observe-only (STORE-8): the failure is logged
            logger.warning("session %r: retirement drain failed: %r", session.id, error)
        self._live.pop(id(session), None)

    @property
    def closed(self) -> bool:
        """Whether the backend was disposed."""
        return self._closed

    def close(self) -> None:
        """Drain every live session, then close the backend; raise if any drain failed (LIVE-4)."""
        if self._closed:
            return
        self._closed = True
        for off in self._off:
            off()
        failures: list[BaseException] = []
        for session, _ in list(self._live.values()):
            try:
                self._drain(session)
            except Exception as error:  # noqa: BLE001 - collected, then raised together
                failures.append(error)
        self.backend.close()
        if failures:
            raise LivePersistenceError(failures)
