"""STORE-1 … STORE-16: the session store lifecycle and live notifications."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
from sessionlog_builders import APPEND, USER_SOURCE, text
from sessionspec.reference.session import Session
from sessionspec.reference.store import Scope, SessionStore
from sessionspec.spec.errors import AppendError, HeaderError, SeedError, StoreError

req = pytest.mark.req
STORE_LOGGER = "sessionspec.reference.store"


def run(coro: Any) -> Any:
    return asyncio.run(coro)


# ---------------------------------------------------------------- STORE-1 / STORE-2


@req("STORE-1")
def test_store1_minted_ids_skip_live_ids() -> None:
    store = SessionStore()
    assert store.create().id == "session-1"
    store.create("session-3")
    assert store.create().id == "session-2"
    assert store.create().id == "session-4"  # session-3 is live, skipped
    assert store.prepare().id == "session-5"  # prepare mints too (counter always advances)


@req("STORE-1")
def test_store1_explicit_id_verbatim_and_collision_checked_before_validation() -> None:
    store = SessionStore()
    odd = store.create("../weird id ✓")
    assert odd.id == "../weird id ✓"
    with pytest.raises(StoreError) as info:
        store.prepare("../weird id ✓", seed=[{"bad": True}], meta={"cwd": "relative"})
    assert info.value.code == "SESSION_ALREADY_EXISTS"
    assert "already exists" in str(info.value)


@req("STORE-2")
def test_store2_prepare_validates_and_does_not_publish() -> None:
    store = SessionStore()
    with pytest.raises(SeedError):
        store.prepare("x", seed=[{"type": "a"}])
    with pytest.raises(HeaderError):
        store.prepare("x", meta={"cwd": "rel"})
    prepared = store.prepare("x")
    assert store.get("x") is None and store.list() == []
    with pytest.raises(StoreError) as info:
        store.announce(prepared)
    assert info.value.code == "SESSION_NOT_LIVE"
    with pytest.raises(StoreError) as info:
        run(store.flush(prepared))
    assert info.value.code == "SESSION_NOT_LIVE"
    store.admit_out_of_band("plugin/x")
    with pytest.raises(Exception) as oob:
        run(store.append_out_of_band(prepared, "plugin/x", {}, {"kind": "injection"}))
    assert getattr(oob.value, "code", None) == "SESSION_NOT_LIVE"
    assert prepared.seq == 0


# ---------------------------------------------------------------- STORE-3 / STORE-4 / STORE-5


@req("STORE-3")
def test_store3_enter_publishes_without_created_and_checks_collisions() -> None:
    store = SessionStore()
    created: list[str] = []
    store.on("session/created", lambda s: created.append(s.id))
    session = store.prepare("a")
    detach = store.enter(session)
    assert store.get("a") is session and store.list() == [session] and created == []
    other = SessionStore()
    with pytest.raises(StoreError) as info:
        other.enter(session)
    assert info.value.code == "SESSION_ALREADY_ATTACHED"
    with pytest.raises(StoreError) as info:
        store.enter(Session("a"))
    assert info.value.code == "SESSION_ALREADY_EXISTS"
    detach()
    other.enter(session)
    assert other.get("a") is session and store.get("a") is None


@req("STORE-4")
def test_store4_detach_is_idempotent_and_stale_detach_is_harmless() -> None:
    store = SessionStore()
    disposed: list[str] = []
    store.on("session/disposed", lambda s: disposed.append(s.id))
    first = store.prepare("a")
    detach_first = store.enter(first)
    store.announce(first)
    detach_first()
    detach_first()
    assert disposed == ["a"]
    replacement = store.create("a")
    detach_first()  # stale: must not remove the replacement
    assert store.get("a") is replacement and disposed == ["a"]
    store.detach(replacement)
    detach_reentry = store.enter(first)  # the same object forms a new entry
    store.announce(first)
    assert store.get("a") is first
    detach_reentry()
    assert disposed == ["a", "a", "a"]


@req("STORE-5")
def test_store5_first_enter_of_same_id_wins() -> None:
    store = SessionStore()
    one, two = store.prepare("same"), store.prepare("same")
    store.enter(one)
    with pytest.raises(StoreError):
        store.enter(two)
    assert store.get("same") is one and one._entry is not None and two._entry is None


# ---------------------------------------------------------------- STORE-6 … STORE-10


@req("STORE-6")
def test_store6_announce_once_including_reentrant_calls() -> None:
    store = SessionStore()
    errors: list[str] = []
    counts = {"created": 0, "disposed": 0}

    def created(session: Session) -> None:
        counts["created"] += 1
        try:
            store.announce(session)
        except StoreError as error:
            errors.append(error.code)

    store.on("session/created", created)
    store.on("session/disposed", lambda s: counts.__setitem__("disposed", counts["disposed"] + 1))
    session = store.prepare("once")
    detach = store.enter(session)
    store.announce(session)
    with pytest.raises(StoreError) as info:
        store.announce(session)
    assert info.value.code == "SESSION_ALREADY_ANNOUNCED"
    assert errors == ["SESSION_ALREADY_ANNOUNCED"]
    detach()
    assert counts == {"created": 1, "disposed": 1}
    with pytest.raises(StoreError) as info:
        store.announce(session)
    assert info.value.code == "SESSION_NOT_LIVE"


@req("STORE-6")
def test_store6_listeners_run_in_registration_order() -> None:
    store = SessionStore()
    order: list[int] = []
    for i in range(3):
        store.on("session/created", lambda s, i=i: order.append(i))
    store.create("a")
    assert order == [0, 1, 2]


@req("STORE-7")
def test_store7_throwing_created_listener_rolls_back_create() -> None:
    store = SessionStore()
    disposed: list[str] = []
    later: list[str] = []
    store.on("session/disposed", lambda s: disposed.append(s.id))
    state = {"threw": False}

    def veto(session: Session) -> None:
        if not state["threw"]:
            state["threw"] = True
            raise RuntimeError("boom created listener")

    store.on("session/created", veto)
    store.on("session/created", lambda s: later.append(s.id))
    with pytest.raises(RuntimeError, match="boom created listener"):
        store.create("fixed")
    assert store.get("fixed") is None and disposed == ["fixed"] and later == []
    events: list[str] = []
    store.on("session/event", lambda s, e: events.append(e["type"]))
    session = store.create("fixed")
    session.append("turn/start", {"turn": 1})
    assert store.get("fixed") is session and events == ["turn/start"] and later == ["fixed"]


@req("STORE-7")
def test_store7_throwing_listener_makes_plain_announce_raise() -> None:
    store = SessionStore()
    store.on("session/created", lambda s: 1 / 0)
    session = store.prepare("p")
    store.enter(session)
    with pytest.raises(ZeroDivisionError):
        store.announce(session)
    assert store.get("p") is session  # announce alone does not roll back; the caller owns detach


@req("STORE-8")
def test_store8_async_created_failure_only_logged(caplog: pytest.LogCaptureFixture) -> None:
    async def scenario() -> tuple[Session, SessionStore, list[str]]:
        store = SessionStore()
        heard: list[str] = []

        async def late(session: Session) -> None:
            raise RuntimeError("late creation failure")

        store.on("session/created", late)
        store.on("session/created", lambda s: heard.append(s.id))
        session = store.create("async-created")
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        return session, store, heard

    with caplog.at_level(logging.WARNING, logger=STORE_LOGGER):
        session, store, heard = run(scenario())
    assert store.get("async-created") is session and heard == ["async-created"]
    assert any("late creation failure" in r.getMessage() for r in caplog.records)


@req("STORE-9")
def test_store9_disposed_once_only_for_announced_and_contained(caplog: pytest.LogCaptureFixture) -> None:
    store = SessionStore()
    heard: list[tuple[str, bool]] = []
    store.on("session/disposed", lambda s: 1 / 0)
    store.on("session/disposed", lambda s: heard.append((s.id, store.get(s.id) is None)))
    unannounced = store.prepare("never-announced")
    store.enter(unannounced)()
    assert heard == []
    announced = store.prepare("announced")
    detach = store.enter(announced)
    store.announce(announced)
    with caplog.at_level(logging.WARNING, logger=STORE_LOGGER):
        detach()
        detach()
    assert heard == [("announced", True)]
    assert any("ZeroDivisionError" in r.getMessage() for r in caplog.records)


@req("STORE-10")
def test_store10_detach_from_created_listener_is_deferred() -> None:
    store = SessionStore()
    order: list[str] = []
    session = store.prepare("reentrant-detach")
    detach = store.enter(session)

    def first(created: Session) -> None:
        order.append("created-1")
        detach()
        assert store.get(created.id) is created

    store.on("session/created", first)
    store.on("session/created", lambda s: order.append("created-2" if store.get(s.id) is s else "gone"))
    store.on("session/disposed", lambda s: order.append("disposed" if store.get(s.id) is None else "live"))
    store.announce(session)
    assert order == ["created-1", "created-2", "disposed"]
    assert store.get(session.id) is None
    detach()
    assert order == ["created-1", "created-2", "disposed"]


@req("STORE-10")
def test_store10_detach_during_append_publication_is_deferred() -> None:
    store = SessionStore()
    order: list[str] = []
    session = store.prepare("detach-during-append")
    detach = store.enter(session)

    def validator(s: Session, candidate: Any) -> None:
        order.append("validate:" + ("live" if store.get(s.id) is s else "detached"))
        detach()

    store.add_pre_commit_validator(validator)
    store.on("session/event", lambda s, e: order.append("observe:" + ("live" if store.get(s.id) is s else "detached")))
    store.on("session/event", lambda s, e: order.append("observe2:" + ("live" if store.get(s.id) is s else "detached")))
    store.on("session/disposed", lambda s: order.append("dispose:" + ("live" if store.get(s.id) is s else "detached")))
    store.announce(session)
    event = session.append("turn/start", {"turn": 1})
    assert session.events == [event]
    assert order == ["validate:live", "observe:live", "observe2:live", "dispose:detached"]
    assert store.get(session.id) is None


@req("STORE-10")
def test_store10_detach_during_vetoed_append_still_happens() -> None:
    store = SessionStore()
    session = store.create("v")

    def validator(s: Session, candidate: Any) -> None:
        store.detach(s)
        raise ValueError("veto")

    store.add_pre_commit_validator(validator)
    with pytest.raises(ValueError):
        session.append("plugin/x", {})
    assert store.get("v") is None and session.seq == 0


# ---------------------------------------------------------------- STORE-11 / STORE-12


@req("STORE-11")
def test_store11_owner_disposal_detaches_and_silences() -> None:
    store = SessionStore()
    owner = Scope("owner")
    disposed: list[str] = []
    observed: list[int] = []
    store.on("session/disposed", lambda s: disposed.append(s.id))
    store.on("session/event", lambda s, e: observed.append(e["seq"]))
    session = store.create("scoped", scope=owner)
    sibling = store.create("root-owned")
    assert store.get("scoped") is session
    owner.dispose()
    owner.dispose()
    assert store.get("scoped") is None and disposed == ["scoped"]
    session.append("user/message", {"content": text("late"), "source": USER_SOURCE}, APPEND)
    assert observed == []
    with pytest.raises(RuntimeError, match="disposed"):
        store.create("again", scope=owner)
    store.dispose()
    assert store.get(sibling.id) is None and disposed == ["scoped", "root-owned"]


@req("STORE-11")
def test_store11_owner_disposal_during_created_dispatch_rolls_back() -> None:
    store = SessionStore()
    owner = Scope("owner")
    store.on("session/created", lambda s: owner.dispose())
    store.create("race", scope=owner)
    assert store.get("race") is None


@req("STORE-12")
def test_store12_get_and_list() -> None:
    store = SessionStore()
    assert store.get("nope") is None and store.list() == []
    a, b, c = store.create("a"), store.create("b"), store.create("c")
    listed = store.list()
    assert listed == [a, b, c]
    listed.clear()
    assert store.list() == [a, b, c]
    store.detach(b)
    assert store.list() == [a, c] and store.get("b") is None
    detach = store.enter(b)
    assert store.list() == [a, c, b]
    detach()


# ---------------------------------------------------------------- STORE-13 / STORE-14


@req("STORE-13")
def test_store13_flush_rejects_non_live_sessions_without_calling_listeners() -> None:
    store = SessionStore()
    calls: list[str] = []
    store.on("session/flush", lambda s: calls.append(s.id))
    live = store.create("live")
    for target in (store.prepare("never"), Session("live")):
        with pytest.raises(StoreError) as info:
            run(store.flush(target))
        assert info.value.code == "SESSION_NOT_LIVE"
    store.detach(live)
    with pytest.raises(StoreError):
        run(store.flush(live))
    assert calls == []


@req("STORE-13")
def test_store13_flush_starts_all_then_raises_earliest_failure() -> None:
    async def scenario() -> list[str]:
        store = SessionStore()
        session = store.create("f")
        log: list[str] = []
        gate = asyncio.Event()

        async def slow_fail(s: Session) -> None:
            log.append("slow-start")
            await gate.wait()
            log.append("slow-end")
            raise RuntimeError("first registered")

        def sync_fail(s: Session) -> None:
            log.append("sync")
            raise RuntimeError("second registered")

        async def releaser(s: Session) -> None:
            log.append("releaser")
            gate.set()

        store.on("session/flush", slow_fail)
        store.on("session/flush", sync_fail)
        store.on("session/flush", releaser)
        store.on("session/flush", lambda s: log.append("plain"))
        with pytest.raises(RuntimeError, match="first registered"):
            await store.flush(session)
        return log

    log = run(scenario())
    assert log[:2] == ["sync", "plain"]  # synchronous parts ran before any await
    assert set(log[2:]) == {"slow-start", "releaser", "slow-end"}
    assert log[-1] == "slow-end"


@req("STORE-13")
def test_store13_flush_waits_for_all_before_reporting() -> None:
    async def scenario() -> None:
        store = SessionStore()
        session = store.create("w")
        gate = asyncio.Event()
        finished: list[str] = []

        def fail(s: Session) -> None:
            raise RuntimeError("disk full")

        async def slow(s: Session) -> None:
            await gate.wait()
            finished.append("slow")

        store.on("session/flush", fail)
        store.on("session/flush", slow)
        task = asyncio.ensure_future(store.flush(session))
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        assert not task.done()
        gate.set()
        with pytest.raises(RuntimeError, match="disk full"):
            await task
        assert finished == ["slow"]
        store.on("session/flush", lambda s: None)

    run(scenario())


@req("STORE-13")
def test_store13_flush_succeeds_when_no_listener_fails() -> None:
    async def scenario() -> list[str]:
        store = SessionStore()
        session = store.create("ok")
        seen: list[str] = []

        async def a(s: Session) -> None:
            seen.append("a")

        store.on("session/flush", a)
        store.on("session/flush", lambda s: seen.append("b"))
        await store.flush(session)
        await store.flush(session)
        return seen

    assert sorted(run(scenario())) == ["a", "a", "b", "b"]


@req("STORE-14")
def test_store14_concurrent_flushes_and_no_detach_deferral() -> None:
    async def scenario() -> None:
        store = SessionStore()
        session = store.create("c")
        gate = asyncio.Event()
        running: list[int] = []

        async def listener(s: Session) -> None:
            running.append(1)
            await gate.wait()

        store.on("session/flush", listener)
        first = asyncio.ensure_future(store.flush(session))
        second = asyncio.ensure_future(store.flush(session))
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        assert len(running) == 2  # both flushes are inside the listener at once
        store.detach(session)  # not deferred by an in-flight flush
        assert store.get("c") is None
        gate.set()
        await asyncio.gather(first, second)

    run(scenario())


# ---------------------------------------------------------------- STORE-15 / STORE-16


@req("STORE-15")
def test_store15_observer_list_is_fixed_before_commit() -> None:
    store = SessionStore()
    session = store.create("s")
    late: list[int] = []

    def registrar(s: Session, e: Any) -> None:
        if e["seq"] == 0:
            store.on("session/event", lambda s2, e2: late.append(e2["seq"]))

    store.on("session/event", registrar)
    session.append("plugin/a", {})
    assert late == []
    session.append("plugin/b", {})
    assert late == [1]


@req("STORE-15")
def test_store15_validator_registering_observer_does_not_see_current_event() -> None:
    store = SessionStore()
    session = store.create("s")
    late: list[int] = []
    removed: list[bool] = []

    def validator(s: Session, e: Any) -> None:
        if not removed:
            removed.append(True)
            store.on("session/event", lambda s2, e2: late.append(e2["seq"]))

    store.add_pre_commit_validator(validator)
    session.append("plugin/a", {})
    assert late == []  # the observer list was fixed before validation
    session.append("plugin/b", {})
    assert late == [1]


@req("STORE-16")
def test_store16_scoped_dispatch() -> None:
    store = SessionStore()
    owner, other = Scope("owner"), Scope("other")
    heard: list[str] = []
    store.on("session/event", lambda s, e: heard.append(f"global:{e['type']}"))
    store.on("session/event", lambda s, e: heard.append(f"owner:{e['type']}"), scope=owner)
    store.on("session/event", lambda s, e: heard.append(f"other:{e['type']}"), scope=other)
    store.on("session/created", lambda s: heard.append(f"owner-created:{s.id}"), scope=owner)
    store.on("session/created", lambda s: heard.append(f"other-created:{s.id}"), scope=other)
    session = store.create(scope=owner)
    session.append("turn/start", {"turn": 1})
    assert heard == [f"owner-created:{session.id}", "global:turn/start", "owner:turn/start"]
    heard.clear()
    bare = store.create()
    bare.append("turn/start", {"turn": 1})
    assert heard == ["global:turn/start"]


@req("STORE-16")
def test_store16_disposed_and_flush_reuse_the_entry_scope() -> None:
    async def scenario() -> list[str]:
        store = SessionStore()
        owner, other = Scope("owner"), Scope("other")
        heard: list[str] = []
        for name in ("session/disposed", "session/flush"):
            store.on(name, lambda s, n=name: heard.append(f"global-{n}:{s.id}"))
            store.on(name, lambda s, n=name: heard.append(f"owner-{n}:{s.id}"), scope=owner)
            store.on(name, lambda s, n=name: heard.append(f"other-{n}:{s.id}"), scope=other)
        session = store.prepare("p")
        detach = store.enter(session, scope=owner)
        store.announce(session)
        await store.flush(session)
        detach()
        return heard

    assert run(scenario()) == [
        "global-session/flush:p", "owner-session/flush:p", "global-session/disposed:p", "owner-session/disposed:p",
    ]


@req("STORE-16")
def test_store16_scoped_listeners_are_removed_with_their_scope() -> None:
    store = SessionStore()
    scope = Scope("s")
    heard: list[int] = []
    store.on("session/event", lambda s, e: heard.append(e["seq"]), scope=scope)
    session = store.create(scope=Scope("elsewhere"))
    detach_session = store.prepare("x")
    store.enter(detach_session, scope=scope)
    detach_session.append("plugin/a", {})
    scope.dispose()
    detach_session.append("plugin/b", {})
    session.append("plugin/c", {})
    assert heard == [0]


def test_unknown_listener_name_rejected() -> None:
    with pytest.raises(ValueError):
        SessionStore().on("session/unknown", lambda s: None)


def test_listener_removal() -> None:
    store = SessionStore()
    heard: list[int] = []
    off = store.on("session/event", lambda s, e: heard.append(e["seq"]))
    session = store.create()
    session.append("plugin/a", {})
    off()
    off()
    session.append("plugin/b", {})
    assert heard == [0]


def test_reentrancy_error_is_an_append_error() -> None:
    store = SessionStore()
    session = store.create()
    errors: list[BaseException] = []

    def observer(s: Session, e: Any) -> None:
        try:
            s.append("plugin/y", {})
        except AppendError as error:
            errors.append(error)

    store.on("session/event", observer)
    session.append("plugin/x", {})
    assert errors and errors[0].code == "APPEND_REENTRANT"  # type: ignore[attr-defined]


def test_disposed_scope_refuses_new_listeners_and_sessions() -> None:
    store = SessionStore()
    scope = Scope("gone")
    scope.dispose()
    with pytest.raises(RuntimeError):
        store.on("session/event", lambda s, e: None, scope=scope)
    with pytest.raises(RuntimeError):
        store.create("x", scope=scope)
    assert store.get("x") is None and store._listeners["session/event"] == ()


def test_store13_every_async_failure_is_retrieved_not_only_the_first() -> None:
    """STORE-13: all listeners settle; later failures must not leak as 'never retrieved'."""
    import gc

    unretrieved: list[dict] = []

    async def main() -> None:
        asyncio.get_running_loop().set_exception_handler(lambda _loop, ctx: unretrieved.append(ctx))
        store = SessionStore()
        session = store.create("s")

        async def fail(_session: object) -> None:
            raise RuntimeError("flush failed")

        store.on("session/flush", fail)
        store.on("session/flush", fail)
        with pytest.raises(RuntimeError):
            await store.flush(session)
        gc.collect()

    asyncio.run(main())
    assert unretrieved == []
