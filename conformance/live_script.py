"""Live persistence scenarios (op ``live``): a store with a backend attached as the seam attaches it.

One case is one scenario on a fresh backend (``jsonl``, ``jsonl-zstd``,
``sqlite``) whose write path listens to a fresh store: sessions are created in
the store, appended to live (``session/event``), flushed (``session/flush``),
and the backend is disposed; ``stored`` reads what is durable through a second,
fresh backend on the same location. ``fail-writes`` makes the next durable
writes fail, ``on`` adds a scripted store listener that fails. PROTOCOL.md §6b.
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Callable, Mapping
from typing import Any

from sessionspec.spec.errors import SessionSpecError

from .persistence_script import host_value

__all__ = ["ScriptedFailure", "run_live"]


class ScriptedFailure(Exception):
    """A failure the scenario asked for (a listener's, or a durable write's): code ``SCRIPTED``."""

    code = "SCRIPTED"


def _rejection(error: BaseException) -> dict[str, Any] | None:
    from sessionspec.reference.live_persistence import LivePersistenceError

    if isinstance(error, ScriptedFailure) or (  # a disposal whose drains failed only as the scenario asked
            isinstance(error, LivePersistenceError) and all(isinstance(f, ScriptedFailure) for f in error.failures)):
        return {"code": "SCRIPTED"}
    if isinstance(error, SessionSpecError):
        return {"code": error.code}
    return None


class _Scenario:
    def __init__(self, kind: str, directory: str, open_backend: Callable[[str, str], Any]) -> None:
        from sessionspec.reference.live_persistence import LivePersistence
        from sessionspec.reference.store import SessionStore

        from .serving import current_clock, current_revision

        self.kind, self.directory, self.open_backend = kind, directory, open_backend
        self.store = SessionStore(revision=current_revision(), clock=current_clock())
        self.failing_writes = 0
        backend = open_backend(kind, directory)
        self.live = LivePersistence(self.store, backend, write=self._write)
        self.backend = backend
        self.sessions: dict[str, Any] = {}
        self.tasks: dict[str, asyncio.Task[Any]] = {}

    def _write(self, session_id: str, events: list[dict[str, Any]]) -> None:
        if self.failing_writes > 0:
            self.failing_writes -= 1
            raise ScriptedFailure("scripted durable-write failure")
        self.backend.append(session_id, events)

    def _listener(self, outcome: str) -> Callable[..., Any]:
        def listener(*_: Any) -> Any:
            if outcome == "raise":
                raise ScriptedFailure("scripted listener failure")

            async def failing() -> None:
                raise ScriptedFailure("scripted listener rejection")

            return failing() if outcome == "reject" else None

        return listener

    def session(self, name: str) -> Any:
        if name not in self.sessions:
            raise ValueError(f"unknown session {name!r}")
        return self.sessions[name]

    async def dispose(self) -> None:
        self.live.close()

    def stored(self) -> dict[str, Any]:
        """Every stored session as a fresh reader of the same location reads it, without repair."""
        reader = self.open_backend(self.kind, self.directory)
        try:
            sessions = {}
            for session_id in reader.list():
                header, events = reader.inspect(session_id)
                sessions[session_id] = {"header": header, "events": events}
        finally:
            reader.close()
        return {"sessions": sessions}

    async def step(self, step: Mapping[str, Any]) -> Any:
        do = step["do"]
        if do == "create":
            meta = step.get("meta", {"cwd": "/work"})
            session = self.store.create(step["id"], meta=meta)
            self.sessions[step["id"]] = session
            return {"id": session.id}
        if do == "append":
            intent = {k: step[k] for k in ("surfaceOp", "sourceEventSeqs") if k in step}
            event = self.session(step["id"]).append(step["type"], host_value(step["data"]), intent or None)
            return {"seq": event["seq"]}
        if do == "fail-writes":
            self.failing_writes = int(step["count"])
            return None
        if do == "on":
            self.store.on(step["event"], self._listener(step.get("outcome", "return")))
            return None
        if do == "flush":
            await self.store.flush(self.session(step["id"]))
            return None
        if do == "dispose":
            await self.dispose()
            return None
        if do == "stored":
            return self.stored()
        raise ValueError(f"unknown live step {do!r}")


async def _run(args: Mapping[str, Any], scenario: _Scenario) -> list[dict[str, Any]]:
    trace: list[dict[str, Any]] = []
    for index, step in enumerate(args["steps"]):
        entry: dict[str, Any] = {"at": str(index), "do": step["do"]}
        if step["do"] == "await":
            task = scenario.tasks.pop(step["promise"])
            await asyncio.wait([task])
            error = task.exception()
            outcome: Any = task.result() if error is None else error
        elif "async" in step:
            scenario.tasks[step["async"]] = asyncio.ensure_future(scenario.step(step))
            entry["started"] = True
            trace.append(entry)
            for _ in range(5):  # quiescence (PROTOCOL.md §6): let started work run until it blocks
                await asyncio.sleep(0)
            continue
        else:
            try:
                outcome = await scenario.step(step)
            except Exception as caught:  # noqa: BLE001 - classified below; anything else is re-raised
                outcome = caught
        if isinstance(outcome, BaseException):
            rejection = _rejection(outcome)
            if rejection is None:
                raise outcome
            entry["rejected"] = rejection
        else:
            entry["ok"] = outcome
        trace.append(entry)
        for _ in range(5):
            await asyncio.sleep(0)
    return trace


def run_live(args: Mapping[str, Any], open_backend: Callable[[str, str], Any] | None = None) -> dict[str, Any]:
    """Run a live scenario on a fresh backend in a temporary directory; every step gets a trace entry."""
    if open_backend is None:
        from sessionspec.reference.persistence import open_backend as open_reference

        from .serving import current_revision, current_sqlite_layout

        revision, layout = current_revision(), current_sqlite_layout()

        def open_backend(kind: str, directory: str) -> Any:
            return open_reference(kind, directory, revision, sqlite_layout=layout)
    with tempfile.TemporaryDirectory(prefix="sessionspec-live-") as directory:
        scenario = _Scenario(args["backend"], directory, open_backend)
        try:
            trace = asyncio.run(_run(args, scenario))
        finally:
            if not scenario.live.closed:
                scenario.backend.close()
    return {"trace": trace}
