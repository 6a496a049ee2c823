"""The reference's public seam for readers that fold a log without building every event (the
validator): `SurfaceState.skip` past log-only events, against the general path it shortcuts (SEED-10).

SEED-3 and SURF-7 have no second form any more: `tests/reference/test_rules_one_statement.py`.
"""

from __future__ import annotations

import pytest
from sessionspec.reference import SurfaceState


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
