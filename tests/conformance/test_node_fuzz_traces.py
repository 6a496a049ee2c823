"""The fuzz traces of the known upstream defects are as small as each defect (#28).

Each test runs one state machine against the real package through the Node adapter, focused on the rule
that reaches one defect listed under `fuzz` in an expectation file, with a fixed seed (derandomised) and
nothing set aside, and holds the size of the trace it saves: what Hypothesis' shrinking and the content
pass (`conformance/shrink.py`) leave must be the defect and nothing else. The npm package
(`@deepseek-ai/dsh-session@0.1.1-rc.2`) has the SEED-3 null seed crash, the CHUNK-9 near-miss row and the
SURF-10 rewrite crash; the source at 2f74ac98ba (`--target upstream-2f74ac98ba`, needs its build) has the
same SEED-3 and CHUNK-9 defects; both have the PERSIST-5 non-JSON refusal that names no event type.

Needs `node` and `npm` (the shared fixture installs the adapter's lockfile, its pinned Node included).
Measured: the seven tests take 32 s with `-n 2` on 2 cores shared with other jobs (load average 13); the
slowest single test 7 s. Hypothesis' own shrinking is off (its search for a smaller run took 30 s for SURF-10).
"""

from __future__ import annotations

import io
import shlex
from pathlib import Path
from typing import Any

import pytest
from sessionspec.conformance import machines
from sessionspec.conformance.harness import connector_for
from sessionspec.conformance.runner import start_implementation
from sessionspec.conformance.trace import TraceStep, read_trace

MAX_SAFE = 2**53 - 1


def _trace(command: str, machine: str, focus: list[str], tmp: Path, examples: int = 6, steps: int = 10
           ) -> tuple[dict[str, Any], TraceStep]:
    """The one failure a focused, derandomised run finds (no known difference set aside) and its trace step."""
    out = io.StringIO()
    # Hypothesis' own shrinking off: the trace is one request, and the content pass alone makes it minimal
    # (the tests hold that), in a fraction of the time (SURF-10: 32 s with it on 2 shared cores)
    failures = machines.run(connect=lambda: start_implementation(connector_for(command), 60.0), examples=examples,
                            steps=steps, trace_dir=tmp, out=out, machines={machine: focus}, derandomize=True,
                            stop_at_first=True, shrink=False)
    assert len(failures) == 1, out.getvalue()
    _header, trace = read_trace(Path(failures[0]["trace"]))
    assert len(trace) == 1  # every request is self-contained: the trace is the failing one
    return failures[0], trace[0]


@pytest.fixture(scope="module")
def npm_command(node_adapter_dir: Path) -> str:
    return shlex.join(["node", str(node_adapter_dir / "adapter.mjs")])


def _assert_null_seed(failure: dict[str, Any], step: TraceStep) -> None:
    """SEED-3: the seed is the one null entry."""
    assert failure["rule"] == "session.seed_invalid" and failure["actualCode"] == "crashed:TypeError"
    assert step.op == "load" and step.args == {"seed": [None]}
    assert step.expected == {"rejected": {"code": "SEED_ENVELOPE", "index": 0}}


def _assert_near_miss_row(failure: dict[str, Any], step: TraceStep) -> None:
    """CHUNK-9: one row of the fewest members a decoded row can have (two: its first seq is safe, its last is
    not; minRun binds packing, not decoding), empty texts, its last seq just past 2^53 - 1."""
    assert failure["rule"] == "storage.decode_invalid" and failure["expectedCode"] == "CHUNK_ROW_MALFORMED"
    record = step.args["record"]
    assert step.op == "decode" and list(step.args) == ["record"]
    members = record["data"]["texts"] if "texts" in record["data"] else record["data"]["args"]
    assert len(members) == 2 and all(m == "" for m in members)
    assert record["seq0"] + len(members) - 1 == MAX_SAFE + 1


def _assert_unnamed_non_json(failure: dict[str, Any], step: TraceStep) -> None:
    """PERSIST-5: one append of one event whose data is the non-JSON value; its refusal names no type."""
    assert failure["rule"] == "persistence.script" and failure["pointer"].endswith("/rejected/namesType")
    (append,) = step.args["steps"]
    assert append["do"] == "append" and len(append["events"]) == 1
    assert set(append["events"][0]["data"]) == {"$nonJson"}


def test_npm_unnamed_non_json_refusal_trace_is_one_append_of_one_event(npm_command, tmp_path):
    _assert_unnamed_non_json(*_trace(npm_command, "persistence", ["append:non-json"], tmp_path, 4, 6))


def test_source_unnamed_non_json_refusal_trace_is_one_append_of_one_event(source_command, tmp_path):
    _assert_unnamed_non_json(*_trace(source_command, "persistence", ["append:non-json"], tmp_path, 4, 6))


def test_npm_null_seed_entry_trace_is_the_seed_null(npm_command, tmp_path):
    _assert_null_seed(*_trace(npm_command, "session", ["seed_invalid:not-object"], tmp_path))


def test_npm_near_miss_row_trace_is_one_minimal_row(npm_command, tmp_path):
    _assert_near_miss_row(*_trace(npm_command, "storage", ["pack"], tmp_path))


def test_npm_rewrite_crash_trace_is_the_replaced_event_and_the_rewrite(npm_command, tmp_path):
    """SURF-10: two appends, the tool/result and its rewrite (not an object message) citing it, nothing seeded
    (an empty seed may stay: at the published revision it adds the seed-end marker the seqs count)."""
    failure, step = _trace(npm_command, "session", ["append_invalid:tool-result-rewrite"], tmp_path)
    assert failure["expectedCode"] == "SURFACE_TOOL_RESULT_REWRITE" and failure["actualCode"] == "crashed:TypeError"
    assert step.op == "append" and set(step.args) <= {"seed", "appends"} and step.args.get("seed", []) == []
    first, rewrite = step.args["appends"]
    seq = 1 if "seed" in step.args else 0  # the seq of the first append, after the marker of a seeded session
    assert first["type"] == rewrite["type"] == "tool/result" and first["surfaceOp"] == "append"
    assert rewrite["surfaceOp"] == {"op": "replace", "start": seq, "end": seq} and rewrite["sourceEventSeqs"] == [seq]
    assert not isinstance(rewrite["data"].get("message"), dict)


def test_source_null_seed_entry_trace_is_the_seed_null(source_command, tmp_path):
    _assert_null_seed(*_trace(source_command, "session", ["seed_invalid:not-object"], tmp_path))


def test_source_near_miss_row_trace_is_one_minimal_row(source_command, tmp_path):
    _assert_near_miss_row(*_trace(source_command, "storage", ["pack"], tmp_path))
