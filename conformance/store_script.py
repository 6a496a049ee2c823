"""The store-lifecycle script interpreter of the reference adapter (op ``store``).

A script is a list of steps (``PROTOCOL.md`` § store) run against one or more
``SessionStore`` instances. Scripted listeners record every call they
receive and then return, raise, fail asynchronously or wait on a gate, and
may run further steps from inside the notification (a created listener that
detaches, an observer that appends re-entrantly, ...). The result is the
observed trace: step outcomes and listener calls, interleaved in the order
they happened.

Scripts may also install and remove the optional relational checker
(``install-invariants``, ``uninstall-invariants``) and register a scripted
pre-commit validator (``veto``), which is how INV-11 (a vetoed or rejected
event leaves the checker's trace unchanged) and INV-12 (uninstall removes
every effect, reinstall rebuilds from the live logs) become observable.
Owner scopes (``scope`` on ``on`` and ``enter`` steps, capability
``scopes``) make scope-filtered dispatch (STORE-16) observable.

Asynchronous steps (``flush``, ``oob``) are awaited in place unless they name
an ``async`` handle; then they run in the background until an ``await``
step. Between top-level steps the interpreter drains all runnable
asynchronous work ("quiescence"), so listener calls triggered by a started
flush appear before the next step, as they would in JavaScript.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, ClassVar, cast

__all__ = ["ScriptedFailure", "append_step", "run_script"]

_DRAIN_ROUNDS = 20


class ScriptedFailure(Exception):
    """What a scripted listener raises (or rejects with)."""

    def __init__(self, listener: str) -> None:
        super().__init__(f"scripted failure of listener {listener}")
        self.listener = listener


def append_step(session: Any, step: Mapping[str, Any]) -> Any:
    """One ``Session.append``; the intent holds only the keys the step supplies."""
    intent = {k: step[k] for k in ("surfaceOp", "sourceEventSeqs") if k in step}
    return session.append(step["type"], step["data"], intent or None)


class ScriptError(Exception):
    """The script itself is wrong (unknown handle, bad step): an adapter error."""


class _Interpreter:
    def __init__(self) -> None:
        from sessionspec.spec.errors import SessionSpecError

        self._spec_error = SessionSpecError
        self.stores: dict[str, Any] = {}
        self.sessions: dict[str, Any] = {}
        self.detaches: dict[str, Any] = {}
        self.disposals: list[Callable[[], Any]] = []  # owner disposals the running top-level step requested
        self.gates: dict[str, asyncio.Future[str]] = {}
        self.pending: dict[str, asyncio.Task[Any]] = {}
        self.calls: dict[str, int] = {}
        self.trace: list[dict[str, Any]] = []
        self.errors: list[BaseException] = []
        self.binding: str | None = None  # the `as` name of the create/fork step running now
        self.checkers: dict[str, Any] = {}  # store name -> its installed InvariantChecker
        self.scopes: dict[str, Any] = {}  # script-wide owner scopes, created on first use (STORE-16)

    # -- handles ---------------------------------------------------------------------
    def store(self, step: Mapping[str, Any]) -> Any:
        from sessionspec.reference.store import SessionStore

        from .serving import current_clock, current_revision

        name = step.get("store", "main")
        if name not in self.stores:
            self.stores[name] = SessionStore(revision=current_revision(), clock=current_clock())
        return self.stores[name]

    def session(self, handle: str) -> Any:
        try:
            return self.sessions[handle]
        except KeyError:
            raise ScriptError(f"unknown session handle {handle!r}") from None

    def handle_of(self, session: Any) -> str | None:
        if session is None:
            return None
        for name, known in self.sessions.items():
            if known is session:
                return name
        if self.binding is not None and self.binding not in self.sessions:
            # a listener sees the session a create/fork step is making before the step returns
            self.sessions[self.binding] = session
            return self.binding
        name = f"@{session.id}"
        while name in self.sessions:
            name += "'"
        self.sessions[name] = session
        return name

    def bind(self, name: str | None, session: Any) -> None:
        self.binding = None
        if name is None:
            self.handle_of(session)
        else:
            self.sessions[name] = session

    def making(self, name: str | None) -> None:
        """Announce the handle of the session the current step creates."""
        self.binding = name

    def scope(self, step: Mapping[str, Any]) -> Any:
        """The owner scope a step names (``None`` when it names none)."""
        name = step.get("scope")
        if name is None:
            return None
        if name not in self.scopes:
            from sessionspec.reference.store import Scope

            self.scopes[name] = Scope(name)
        return self.scopes[name]

    def gate(self, name: str) -> asyncio.Future[str]:
        if name not in self.gates:
            self.gates[name] = asyncio.get_running_loop().create_future()
        return self.gates[name]

    def is_live(self, session: Any) -> bool:
        return any(store.get(session.id) is session for store in self.stores.values())

    # -- listeners -------------------------------------------------------------------
    def listener(self, spec: Mapping[str, Any]) -> Any:
        name: str = spec["listener"]
        event: str = spec["event"]
        store = self.store(spec)
        outcome = spec.get("outcome", "return")
        actions: Sequence[Mapping[str, Any]] = spec.get("actions", ())
        gate = self.gate(spec["gate"]) if outcome == "wait" else None
        if outcome == "wait" and gate is None:  # pragma: no cover - schema requires gate
            raise ScriptError(f"listener {name} waits without a gate")

        def call(session: Any, *rest: Any) -> Any:
            count = self.calls[name] = self.calls.get(name, 0) + 1
            entry: dict[str, Any] = {
                "call": name, "event": event, "session": self.handle_of(session),
                "live": store.get(session.id) is session,
            }
            if event == "session/event" and rest:
                entry["eventSeq"] = rest[0]["seq"]
            self.trace.append(entry)
            if count == 1 or not spec.get("once", False):
                for i, action in enumerate(actions):
                    try:
                        self.run_sync(action, f"{name}#{count}.{i}")
                    except Exception as error:  # noqa: BLE001 - the store would contain it; the script must not
                        self.errors.append(error)
            if outcome == "raise":
                raise ScriptedFailure(name)
            if outcome == "reject":
                async def reject() -> None:
                    await asyncio.sleep(0)
                    raise ScriptedFailure(name)

                return reject()
            if outcome == "wait":
                async def wait() -> None:
                    assert gate is not None
                    if await asyncio.shield(gate) == "reject":
                        raise ScriptedFailure(name)

                return wait()
            return None

        return call

    # -- steps -----------------------------------------------------------------------
    def record(self, at: str, do: str, **outcome: Any) -> None:
        self.trace.append({"at": at, "do": do, **outcome})

    def failure(self, error: BaseException) -> dict[str, Any] | None:
        if isinstance(error, ScriptedFailure):
            return {"code": "SCRIPTED", "listener": error.listener}
        if isinstance(error, self._spec_error):
            return {"code": error.code}
        return None

    def start_async(self, step: Mapping[str, Any], at: str) -> None:
        name = step.get("async") or f"#{at}"
        self.record(at, step["do"], started=True)
        self.pending[name] = asyncio.ensure_future(self.async_call(step))

    def async_call(self, step: Mapping[str, Any]) -> Awaitable[Any]:
        store = self.store(step)
        session = self.session(step["session"])
        if step["do"] == "flush":
            return cast("Awaitable[Any]", store.flush(session))
        return cast("Awaitable[Any]", store.append_out_of_band(session, step["type"], step["data"], step["trigger"]))

    def run_sync(self, step: Mapping[str, Any], at: str) -> None:
        """Run one step from synchronous code (a listener); async steps start in the background."""
        if step["do"] in ("flush", "oob"):
            self.start_async(step, at)
            return
        if step["do"] == "await":
            raise ScriptError(f"step {at}: 'await' cannot run inside a listener")
        self.guarded(step, at, lambda: self.sync_value(step))

    def guarded(self, step: Mapping[str, Any], at: str, thunk: Any) -> None:
        try:
            value = thunk()
        except Exception as error:
            self.binding = None
            failure = self.failure(error)
            if failure is None:
                raise
            self.record(at, step["do"], rejected=failure)
            return
        self.record(at, step["do"], ok=value)

    def sync_value(self, step: Mapping[str, Any]) -> Any:
        """Run one synchronous step (``do``: one of :attr:`_SYNC_STEPS`) and return its value."""
        do = step["do"]
        run = self._SYNC_STEPS.get(do) if isinstance(do, str) else None
        if run is None:
            raise ScriptError(f"unknown step {do!r}")
        return run(self, step, self.store(step))

    def _on(self, step: Mapping[str, Any], store: Any) -> None:
        store.on(step["event"], self.listener(step), self.scope(step))

    def _create(self, step: Mapping[str, Any], store: Any) -> Any:
        """``create`` (owned by a scope named after the handle) or ``prepare``."""
        kwargs = {k: step[k] for k in ("seed", "meta") if k in step}
        self.making(step["as"])
        if step["do"] == "prepare":
            session = store.prepare(step.get("id"), **kwargs)
        else:
            from sessionspec.reference.store import Scope

            owner = Scope(step["as"])
            if "detach" in step:  # usable by listeners while create announces
                # Owner disposal may be asynchronous (STORE-11, DEC-15): it is carried out
                # once the step's operation has returned, before the step's entry (PROTOCOL.md §6).
                self.detaches[step["detach"]] = lambda owner=owner: self.disposals.append(owner.dispose)
            session = store.create(step.get("id"), scope=owner, **kwargs)
        self.bind(step["as"], session)
        return {"id": session.id}

    def _enter(self, step: Mapping[str, Any], store: Any) -> None:
        detach = store.enter(self.session(step["session"]), self.scope(step))
        if "detach" in step:
            self.detaches[step["detach"]] = detach

    def _announce(self, step: Mapping[str, Any], store: Any) -> None:
        store.announce(self.session(step["session"]))

    def _detach(self, step: Mapping[str, Any], store: Any) -> None:
        try:
            self.detaches[step["handle"]]()
        except KeyError:
            raise ScriptError(f"unknown detach handle {step['handle']!r}") from None

    def _append(self, step: Mapping[str, Any], store: Any) -> Any:
        return append_step(self.session(step["session"]), step)

    def _admit(self, step: Mapping[str, Any], store: Any) -> None:
        store.admit_out_of_band(step["type"])

    def _fork(self, step: Mapping[str, Any], store: Any) -> Any:
        source = step["source"]
        ref = source["id"] if isinstance(source, Mapping) else self.session(source)
        self.making(step.get("as"))
        child = store.fork(ref, step.get("boundary"), step.get("childId"))
        self.bind(step.get("as"), child)
        return {"id": child.id}

    def _get(self, step: Mapping[str, Any], store: Any) -> Any:
        return self.handle_of(store.get(step["id"]))

    def _list(self, step: Mapping[str, Any], store: Any) -> Any:
        return [self.handle_of(s) for s in store.list()]

    def _release(self, step: Mapping[str, Any], store: Any) -> None:
        gate = self.gate(step["gate"])
        if not gate.done():
            gate.set_result(step.get("outcome", "resolve"))

    def _events(self, step: Mapping[str, Any], store: Any) -> Any:
        return list(self.session(step["session"]).events)

    def _veto(self, step: Mapping[str, Any], store: Any) -> None:
        remove = store.add_pre_commit_validator(self.validator(step))
        if "detach" in step:
            self.detaches[step["detach"]] = remove

    _SYNC_STEPS: ClassVar[dict[str, Callable[[_Interpreter, Mapping[str, Any], Any], Any]]] = {
        "on": _on,
        "create": _create,
        "prepare": _create,
        "enter": _enter,
        "announce": _announce,
        "detach": _detach,
        "append": _append,
        "admit": _admit,
        "fork": _fork,
        "get": _get,
        "list": _list,
        "release": _release,
        "events": _events,
        "install-invariants": lambda self, step, store: self.invariants(step, store),
        "uninstall-invariants": lambda self, step, store: self.invariants(step, store),
        "veto": _veto,
    }

    def invariants(self, step: Mapping[str, Any], store: Any) -> None:
        """Install or remove the store's relational checker (at most one per store)."""
        name = step.get("store", "main")
        if step["do"] == "uninstall-invariants":
            checker = self.checkers.pop(name, None)
            if checker is None:
                raise ScriptError(f"store {name!r} has no relational checker to uninstall")
            checker.uninstall()
            return None
        if name in self.checkers:
            raise ScriptError(f"store {name!r} already has a relational checker")
        from sessionspec.reference.invariants import InvariantChecker

        # a live session that violates an INV rule makes install raise: a rejected step
        self.checkers[name] = InvariantChecker().install(store)
        return None

    @staticmethod
    def validator(step: Mapping[str, Any]) -> Any:
        """A scripted pre-commit validator: vetoes every append (of ``type``, when given)."""
        name: str = step["validator"]
        only: str | None = step.get("type")

        def validate(session: Any, candidate: Mapping[str, Any]) -> None:
            if only is None or candidate.get("type") == only:
                raise ScriptedFailure(name)

        return validate

    async def run_top(self, step: Mapping[str, Any], at: str) -> None:
        do = step["do"]
        if do in ("flush", "oob") and "async" not in step:
            await self.record_outcome(at, do, lambda: self.async_call(step))
        elif do == "await":
            task = self.pending.get(step["promise"])
            if task is None:
                raise ScriptError(f"unknown pending operation {step['promise']!r}")
            await self.record_outcome(at, do, lambda: task)
        elif do in ("flush", "oob"):
            self.run_sync(step, at)  # started in the background; its outcome is recorded at `await`
        else:
            async def run() -> Any:
                return self.sync_value(step)

            await self.record_outcome(at, do, run)

    def settle_disposals(self) -> None:
        """Carry out the owner disposals the running top-level step requested, in order."""
        while self.disposals:
            self.disposals.pop(0)()

    async def record_outcome(self, at: str, do: str, start: Callable[[], Awaitable[Any]]) -> None:
        """Await ``start()``, carry out the owner disposals it requested, then record its value,
        or its failure when the spec names one."""
        try:
            value = await start()
        except Exception as error:
            self.binding = None
            failure = self.failure(error)
            if failure is None:
                raise
            self.settle_disposals()
            self.record(at, do, rejected=failure)
        else:
            self.settle_disposals()
            self.record(at, do, ok=value)

    async def run(self, script: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        try:
            for index, step in enumerate(script):
                await self.run_top(step, str(index))
                for _ in range(_DRAIN_ROUNDS):
                    await asyncio.sleep(0)
                self.settle_disposals()  # requested by background work (a flush's listener)
        finally:
            for task in self.pending.values():
                task.cancel()
        if self.errors:
            raise self.errors[0]
        sessions = {
            name: {"id": s.id, "live": self.is_live(s), "header": s.header, "events": list(s.events)}
            for name, s in self.sessions.items()
        }
        return {"trace": self.trace, "sessions": sessions}


def run_script(script: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Run one store script in a fresh event loop; returns ``{"trace", "sessions"}``."""

    async def main() -> dict[str, Any]:
        return await _Interpreter().run(script)

    return asyncio.run(main())
