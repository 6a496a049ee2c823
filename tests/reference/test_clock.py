"""An injected clock stamps every event and synthesised header time (DEC-6), so runs repeat."""

from __future__ import annotations

import pytest
from sessionspec.reference import Session, SessionStore, SteppingClock


@pytest.mark.req("DEC-6")
def test_a_session_stamps_its_events_and_header_with_its_clock():
    session = Session("s", clock=SteppingClock(1000, 5))
    assert session.header["createdAt"] == 1000
    first = session.append("turn/start", {"turn": 1, "trigger": {"kind": "message"}})
    second = session.append("step/start", {"turn": 1, "step": 1})
    assert (first["time"], second["time"]) == (1005, 1010)


@pytest.mark.req("DEC-6")
def test_a_store_gives_its_clock_to_every_session_it_builds():
    def build():
        store = SessionStore(clock=SteppingClock(7))
        session = store.create("a")
        session.append("turn/start", {"turn": 1, "trigger": {"kind": "message"}})
        return session.header, session.events

    assert build() == build()
    header, events = build()
    assert header["createdAt"] == 7 and events[0]["time"] == 8


def test_without_a_clock_events_carry_the_wall_clock():
    import time

    before = time.time_ns() // 1_000_000
    event = Session("s").append("turn/start", {"turn": 1, "trigger": {"kind": "message"}})
    assert before <= event["time"] <= time.time_ns() // 1_000_000
