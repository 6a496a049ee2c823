"""Content shrinking of fuzz failures (#28): each trace as small as the defect.

Hypothesis shrinks a failing run to its fewest steps; ``conformance/shrink.py`` then shrinks the failing
request's payload while the same difference (rule, op, codes, differing place) holds. Each test plants
one defect of the kind the published package has (a broken adapter or a mutant of the reference) and
holds the size of the trace the machines save for it: a null seed entry is a one-entry seed, a wrong
``find`` needs the two events of one message turn, a value ``-0.0`` is just ``-0.0``.
"""

from __future__ import annotations

import io
import math
from pathlib import Path

from conformance_fakes import broken_cmd
from sessionspec.conformance import machines, mutants
from sessionspec.conformance.harness import connector_for
from sessionspec.conformance.runner import start_implementation
from sessionspec.conformance.shrink import ShrinkBudget, shrink_args, size
from sessionspec.conformance.trace import read_trace


def _negative_zero(value: object) -> bool:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, float) and item == 0.0 and math.copysign(1.0, item) < 0:
            return True
        stack.extend(item.values() if isinstance(item, dict) else item if isinstance(item, list) else ())
    return False


def test_a_value_shrinks_to_the_member_that_shows_the_difference():
    start = {"value": [{"": -0.0}, [False, False], None, "$\r\r" * 40]}
    assert shrink_args(start, lambda a: "value" in a and _negative_zero(a["value"])) == {"value": -0.0}


def test_a_list_keeps_only_the_entries_the_difference_needs_and_kept_keys_stay():
    start = {"id": "seeded", "seed": [{"type": "a", "data": {"x": [1, 2]}}, None, {"type": "b"}] * 5}
    shrunk = shrink_args(start, lambda a: isinstance(a.get("seed"), list) and None in a["seed"],
                         keep=frozenset({"id"}))
    assert shrunk == {"id": "seeded", "seed": [None]}


def test_dropping_an_event_renumbers_the_seqs_the_log_cites():
    """A seed entry's seq and every later surfaceOp start/end and sourceEventSeqs move down with a
    dropped event; a cited event that is gone is no longer cited, a range end in the gap narrows."""
    seed = [{"type": "x", "seq": i, "time": 0, "data": {}} for i in range(3)]
    args = {"seed": seed, "appends": [{"type": "t", "data": {}, "surfaceOp": {"op": "replace", "start": 1, "end": 3},
                                       "sourceEventSeqs": [1, 3]}]}
    seen: list[dict] = []

    def holds(candidate: dict) -> bool:
        seen.append(candidate)
        return False

    shrink_args(args, holds, budget=ShrinkBudget(tries=10))
    # the first candidates drop log positions, renumbered: all four, the two runs of two, then each one
    without_first = seen[3]
    assert [e["seq"] for e in without_first["seed"]] == [0, 1]
    assert without_first["appends"] == [{"type": "t", "data": {}, "surfaceOp": {"op": "replace", "start": 0, "end": 2},
                                         "sourceEventSeqs": [0, 2]}]
    without_cited = seen[4]  # seq 1 is gone: no longer cited; the range starts at the next survivor
    assert without_cited["appends"][0]["sourceEventSeqs"] == [2]
    assert without_cited["appends"][0]["surfaceOp"] == {"op": "replace", "start": 1, "end": 2}


def test_shrinking_never_grows_and_stops_at_its_budget():
    calls = []

    def holds(args):
        calls.append(args)
        return isinstance(args.get("events"), list) and len(args["events"]) > 0

    start = {"events": list(range(64)), "text": "x" * 100}
    shrunk = shrink_args(start, holds, budget=ShrinkBudget(tries=5, seconds=10.0))
    assert len(calls) == 5 and size(shrunk) < size(start)
    assert shrink_args(start, lambda a: a == start) == start  # nothing smaller holds: unchanged


def _trace_of(command: str, plan: dict, tmp_path: Path):
    failures = machines.run(connect=lambda: start_implementation(connector_for(command), 30.0), examples=6,
                            steps=10, trace_dir=tmp_path, out=io.StringIO(), machines=plan, shrink=False,
                            derandomize=True, stop_at_first=True)
    assert len(failures) == 1, failures
    _header, steps = read_trace(Path(failures[0]["trace"]))
    assert len(steps) == 1
    return failures[0], steps[0]


def test_a_null_seed_entry_crash_shrinks_to_a_one_entry_seed(tmp_path):
    """Upstream 0.1.1-rc.2 crashes on a null seed entry (SEED-3); the fuzz trace is the seed [null]."""
    failure, step = _trace_of(broken_cmd("--crash-null-seed"), {"session": ["seed_invalid:not-object"]}, tmp_path)
    assert failure["actualCode"] == "crashed:TypeError" and failure["expectedCode"] == "SEED_ENVELOPE"
    assert step.op == "load" and step.args["seed"] == [None]
    assert step.expected == {"rejected": {"code": "SEED_ENVELOPE", "index": 0}}


def test_a_wrong_find_shrinks_to_the_two_events_of_one_message_turn(tmp_path):
    failure, step = _trace_of(broken_cmd("--wrong-find"), {"storage": ["find"]}, tmp_path)
    assert failure["pointer"] == "/index"
    assert len(step.args["events"]) <= 2
    assert step.expected == {"result": {"index": len(step.args["events"]) - 1}}


def test_a_negative_zero_defect_shrinks_to_the_value_negative_zero(tmp_path):
    failure, step = _trace_of(mutants.command("json2-accepts-negative-zero"), {"session": ["json_value"]}, tmp_path)
    value = step.args["value"]
    assert type(value) is float and value == 0.0 and math.copysign(1.0, value) < 0
    assert step.expected == {"result": {"isJsonValue": False}} and failure["pointer"] == "/isJsonValue"


def test_a_rewrite_crash_keeps_only_what_the_refusal_needs(tmp_path):
    """Upstream's tool/result rewrite check crashes on a message that is not an object (SURF-10): the
    trace keeps no event data the refusal does not read, and only the event the rewrite replaces (a
    dropped event renumbers the seqs the replace cites)."""
    failure, step = _trace_of(broken_cmd("--crash-rewrite-shape"),
                              {"session": ["append_invalid:tool-result-rewrite"]}, tmp_path)
    assert failure["expectedCode"] == "SURFACE_TOOL_RESULT_REWRITE" and failure["actualCode"] == "crashed:TypeError"
    rewrite = step.args["appends"][-1]
    data = rewrite["data"]  # shrinks to whatever is not an object holding a message object (a string, say)
    assert rewrite["type"] == "tool/result" and not (isinstance(data, dict) and isinstance(data.get("message"), dict))
    assert "header" not in step.args  # the session's header plays no part
    assert len(step.args.get("seed", [])) + len(step.args["appends"]) == 2
    assert rewrite["surfaceOp"] == {"op": "replace", "start": 0, "end": 0} and rewrite["sourceEventSeqs"] == [0]
