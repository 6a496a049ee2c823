"""The reference's public seams for readers that fold a log without building every event
(the validator), each against the general path it shortcuts.

Where a rule has a fast form beside its diagnostic form, both live in the reference and these
tests keep them equal: SEED-3 (`is_event_envelope` / `envelope_defects` / `check_seed_entry`) and
SURF-7 for appends (`plain_append_sources` / `SurfaceState.check`).
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sessionspec.reference import (
    SurfaceState,
    check_seed_entry,
    earlier_append_sources,
    envelope_defects,
    is_event_envelope,
    plain_append_sources,
)
from sessionspec.spec import FORMAT
from sessionspec.spec.errors import SeedError, SurfaceError

MAX = FORMAT.max_safe_integer
NUMBERS = st.sampled_from([0, 1, 5, -1, 1.0, 0.5, True, False, None, "1", MAX, MAX + 1])
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-3, 9), st.text(max_size=3))
ENVELOPE_LIKE = st.dictionaries(
    st.sampled_from([*sorted(FORMAT.envelope_keys), "extra", "a/b", "~"]),
    st.one_of(NUMBERS, SCALARS, st.sampled_from(["user/message", "turn/start", "append"])),
    max_size=7,
)


@pytest.mark.req("SEED-3")
@given(ENVELOPE_LIKE)
def test_envelope_forms_agree(event: dict[str, Any]) -> None:
    valid = is_event_envelope(event)
    assert valid == (not envelope_defects(event))
    seeded = {**event, "seq": 0} if type(event.get("seq")) is int and event["seq"] >= 0 else event
    try:
        check_seed_entry(seeded, 0)
    except SeedError as error:
        assert error.code != "SEED_ENVELOPE" or not is_event_envelope(seeded)
    else:
        assert is_event_envelope(seeded)


@pytest.mark.req("SEED-3")
def test_envelope_defects_name_each_member() -> None:
    assert envelope_defects({"type": 1, "seq": -1, "time": 1.0, "x/y": 0}) == {"/type", "/seq", "/time", "/data", "/x~1y"}
    assert envelope_defects({"type": "t", "seq": 0, "time": 0, "data": None}) == set()


SOURCES = st.one_of(
    st.lists(st.one_of(st.integers(-1, 7), NUMBERS), max_size=4),
    st.lists(st.integers(0, 4), max_size=3).map(tuple),
    SCALARS,
)
ETYPES = st.sampled_from(sorted(FORMAT.surface_types) + ["turn/start"])
OPS = st.sampled_from(["append", {"op": "replace", "start": 0, "end": 0}, None, 1])


def _state_at(seq: int) -> SurfaceState:
    state = SurfaceState({})
    state.skip(seq)
    return state


@pytest.mark.req("SURF-7")
@given(ETYPES, OPS, st.one_of(st.just("<absent>"), SOURCES))
def test_try_append_equals_check_and_apply(etype: str, op: Any, sources: Any) -> None:
    event: dict[str, Any] = {"type": etype, "seq": 5, "time": 0, "data": {}}
    if op is not None:
        event["surfaceOp"] = op
    if sources != "<absent>":
        event["sourceEventSeqs"] = sources
    fast, slow = _state_at(5), _state_at(5)
    took = fast.try_append(etype, op) if sources == "<absent>" else fast.try_append(etype, op, sources)
    try:
        plan = slow.check(event)
    except SurfaceError:
        plan = None
    if took:
        assert plan is not None and plan.kind == "append"
        slow.apply(plan)
        assert (fast.length, list(fast.nodes)) == (slow.length, list(slow.nodes)) == (6, [5])
    else:
        assert (fast.length, list(fast.nodes)) == (5, [])
        if op == "append" and type(op) is str and etype in FORMAT.surface_types:
            assert plan is None  # a plain append the shortcut refuses is an error of the rule
    if op == "append" and etype in FORMAT.surface_types and sources != "<absent>":
        assert plain_append_sources(sources, 5, etype) == (plan is not None)


def test_skip_equals_check_and_apply_of_log_only_events() -> None:
    skipped, folded = SurfaceState({}), SurfaceState({})
    skipped.skip(3)
    for seq in range(3):
        folded.apply(folded.check({"type": "turn/start", "seq": seq, "time": 0, "data": {}}))
    assert (skipped.length, list(skipped.nodes), skipped.replace_generation) == (3, [], 0)
    assert (folded.length, list(folded.nodes)) == (3, [])
    skipped.skip(0)
    assert skipped.length == 3
    with pytest.raises(ValueError):
        skipped.skip(-1)


DISTINCT_SEQS = st.lists(st.integers(0, 9), max_size=5, unique=True)


@pytest.mark.req("SURF-7")
@given(ETYPES, OPS, DISTINCT_SEQS, st.integers(0, 9))
def test_try_append_of_sources_proved_distinct_equals_the_general_form(etype: str, op: Any, sources: list[int],
                                                                        seq: int) -> None:
    """For sources already known to be distinct non-negative ints (a decoder's types proved it), the specialised
    form checks only the order half of SURF-7 and commits exactly what the general form commits."""
    proved, general = _state_at(seq), _state_at(seq)
    assert proved.try_append(etype, op, sources, distinct_ints=True) == general.try_append(etype, op, sources)
    assert (proved.length, list(proved.nodes)) == (general.length, list(general.nodes))
    assert earlier_append_sources(sources, seq, etype) == plain_append_sources(sources, seq, etype)


@pytest.mark.req("SURF-7")
@given(SOURCES, st.integers(0, 9), ETYPES)
def test_plain_append_sources_is_distinct_ints_and_order(sources: Any, seq: int, etype: str) -> None:
    distinct = (type(sources) is list and all(type(s) is int and s >= 0 for s in sources)
                and len(set(sources)) == len(sources))
    assert plain_append_sources(sources, seq, etype) == (distinct and earlier_append_sources(sources, seq, etype))
