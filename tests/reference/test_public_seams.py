"""`SurfaceState.skip`, SEED-10's log-only transition for readers that fold a log without building every
event (the validator, the bulk folds). `apply` of a log plan is `skip(1)`: the count is stated once, so
no test keeps a copy equal; these check the count itself.

SEED-3 and SURF-7 have no second form either: `tests/reference/test_rules_one_statement.py`.
"""

from __future__ import annotations

import pytest
from sessionspec.reference import SurfaceState


def _append(seq: int) -> dict[str, object]:
    return {"type": "user/message", "seq": seq, "time": 0, "data": {}, "surfaceOp": "append"}


@pytest.mark.req("SEED-10")
def test_skip_counts_log_only_events_and_nothing_else() -> None:
    state = SurfaceState({})
    plan = state.check(_append(0))
    state.skip(0)  # counts nothing: the plan is still current
    state.apply(plan)
    stale = state.check(_append(1))
    state.skip(3)
    assert (state.length, list(state.nodes), state.replace_generation) == (4, [0], 0)
    with pytest.raises(RuntimeError, match="stale"):
        state.apply(stale)  # the count moved the surface on
    state.advance(_append(4))  # the next expected seq is the count
    assert list(state.nodes) == [0, 4]
    with pytest.raises(ValueError):
        state.skip(-1)


@pytest.mark.req("SEED-10")
def test_a_log_plan_is_applied_as_a_skip_of_one() -> None:
    state = SurfaceState({})
    plan = state.check({"type": "turn/start", "seq": 0, "time": 0, "data": {}})
    assert plan.kind == "log"
    state.apply(plan)
    assert (state.length, list(state.nodes)) == (1, [])
    with pytest.raises(RuntimeError, match="stale"):
        state.apply(plan)  # applied once: the skip moved the version on
