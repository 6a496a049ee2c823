"""The suite run against the published TypeScript package through its Node adapter.

`conformance/adapters/node-dsh-session/` pins `@deepseek-ai/dsh-session@0.1.1-rc.2`.
This proves the conformance suite on an implementation nobody here wrote: the
whole corpus runs through the subprocess protocol with the adapter's
expectation file, and the run must be clean (every case passed, skipped for a
capability the adapter does not claim, or a listed known failure). The test
cannot pass vacuously: it requires a minimum number of passed cases and that
the known failures are exactly the listed ones.

Needs `node` and `npm` on PATH (skipped, with the reason, only when they are
absent). Installs the pinned packages with `npm ci` when `node_modules` is
missing.
"""

from __future__ import annotations

import io
import json
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
from sessionspec import cli
from sessionspec.conformance import protocol, wire
from sessionspec.conformance.cases import load_corpus
from sessionspec.conformance.expectations import load_expectations
from sessionspec.conformance.report import load_report

ADAPTER_DIR = Path(__file__).resolve().parents[2] / "conformance" / "adapters" / "node-dsh-session"
EXPECTATIONS = ADAPTER_DIR / "expectations.json"
PACKAGE_VERSION = "0.1.1-rc.2"

MIN_PASSED = 515
"""Cases of its own revision the published package passes today; a drop means the adapter or the harness broke."""

CLAIMED = {
    "load", "append", "derive", "fold", "fork", "store-lifecycle", "chunk-rows",
    "repair", "request-header", "json-value", "invariants", "scopes",
    "jsonl", "persistence-jsonl",
}
"""What the package really has. The JSONL form is the published backend package
@deepseek-ai/dsh-session-persistence-jsonl, plain (uncompressed) artifacts. Not claimed:
out-of-band and find-last-message-turn-end (no longer exported), oob-admission (no run-time
registry), persistence-jsonl-zstd (needs zstd in node:zlib, Node >= 22.15), persistence-sqlite
(the SQLite backend has no 0.1.x release)."""

HEADER_ONLY = "writes the header line only together with a first event"
"""The one decline inside a claimed capability: a jsonl-write case with no event at all."""

NODE = shutil.which("node")
NPM = shutil.which("npm")

pytestmark = pytest.mark.skipif(
    NODE is None or NPM is None,
    reason="node and npm are not on PATH: the published TypeScript package cannot be run here",
)


@pytest.fixture(scope="module")
def adapter_command(node_adapter_dir: Path) -> str:
    """The adapter command line (the shared fixture installs the pinned packages)."""
    return shlex.join([NODE, str(node_adapter_dir / "adapter.mjs")])


def _exchange(command: str, lines: list[str]) -> list[dict]:
    done = subprocess.run(
        shlex.split(command), input="".join(line + "\n" for line in lines),
        capture_output=True, text=True, timeout=60, check=False,
    )
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def test_handshake_reports_the_package_revision_and_its_real_capabilities(adapter_command):
    (reply,) = _exchange(adapter_command, [json.dumps({"seq": 1, "op": "start", "args": {"protocolVersion": 1}})])
    protocol.validate_reply(reply, "start")
    info = reply["result"]
    assert info["protocolVersion"] == protocol.PROTOCOL_VERSION
    assert info["implementation"]["name"] == "@deepseek-ai/dsh-session"
    assert info["implementation"]["version"] == PACKAGE_VERSION
    assert info["specRevision"] == PACKAGE_VERSION
    assert set(info["capabilities"]) == CLAIMED
    # the code map only ever names sessionspec codes of the revision the package declares
    from sessionspec.spec import load_spec

    known = set(load_spec(revision=info["specRevision"]).error_codes)
    assert set(info["codeMap"].values()) <= known


def test_protocol_faults_are_answered_in_band_and_stop_ends_the_adapter(adapter_command):
    replies = _exchange(adapter_command, [
        "this is not json",
        json.dumps({"seq": 2, "op": "find-last-message-turn-end", "args": {"events": []}}),
        json.dumps({"seq": 3, "op": "fold", "args": {"events": [{"type": "x", "seq": 1, "time": 0, "data": None}]}}),
        json.dumps({"seq": 4, "op": "stop", "args": {}}),
        json.dumps({"seq": 5, "op": "stop", "args": {}}),
    ])
    assert [r["kind"] for r in replies] == ["errored", "skipped", "rejected", "result"]
    assert replies[0]["seq"] is None
    assert "findLastMessageTurnEnd" in replies[1]["reason"]
    # the implementation's own code (its message with the variable parts templated) and the located event
    assert replies[2]["code"] == "session event seq <n> is not contiguous; expected <n>"
    assert replies[2]["index"] == 0


def test_deep_payloads_travel_both_ways(adapter_command):
    """DEC-16: the adapter reads and writes 10,000-deep JSON without recursing."""
    depth = 10_000
    request = '{"seq": 1, "op": "decode", "args": {"record": ' + "[" * depth + "]" * depth + "}}"
    done = subprocess.run(shlex.split(adapter_command), input=request + "\n", capture_output=True, text=True,
                          timeout=60, check=False)
    reply = wire.loads(done.stdout.splitlines()[0])
    assert reply["kind"] == "result"
    node, levels = reply["result"]["events"][0], 1
    while node:
        node, levels = node[0], levels + 1
    assert levels == depth


def test_the_whole_suite_runs_clean_with_the_expectation_file(adapter_command, tmp_path):
    report = tmp_path / "node.jsonl"
    out, err = io.StringIO(), io.StringIO()
    code = cli.run(
        ["conformance", "--impl", adapter_command, "--expect", str(EXPECTATIONS), "--report", str(report), "-j", "2"],
        out, err,
    )
    assert code == 0, out.getvalue() + err.getvalue()
    loaded = load_report(report)
    outcomes: dict[str, set[str]] = {}
    for case in loaded.cases:
        outcomes.setdefault(case["outcome"], set()).add(case["id"])
    assert not outcomes.get("failed") and not outcomes.get("errored") and not outcomes.get("xpass")
    assert len(outcomes.get("passed", ())) >= MIN_PASSED, out.getvalue()

    # the known failures are exactly the listed ones: none stale, none hidden
    listed = set(load_expectations(EXPECTATIONS).reasons)
    assert outcomes.get("xfail", set()) == listed
    assert not loaded.footer.get("staleExpectations")

    # every skip is a capability the adapter does not claim, or the one documented decline:
    # a jsonl-write without any event (the backend materialises a file only with a first event)
    corpus = {c.id: c for c in load_corpus()}
    messages = {case["id"]: case.get("message", "") for case in loaded.cases}
    for case_id in outcomes.get("skipped", ()):
        case = corpus[case_id]
        if case.needs - CLAIMED:
            continue
        assert HEADER_ONLY in messages[case_id], f"{case_id} was skipped although its capabilities are claimed"
        assert case.op == "jsonl-write" and not any(case.args["batches"]), case_id

    # the package runs at its own revision: the vectors of 0.1.1-rc.2's format, no pinned-only case
    assert loaded.header["revision"] == "b150a551b8"
    assert all(corpus[case_id].applies_to("b150a551b8", set(corpus[case_id].requirements))
               for ids in outcomes.values() for case_id in ids)


def test_a_short_fuzz_run_is_green_at_the_package_revision(adapter_command, tmp_path):
    """#10: the differential machines, at the revision the package declares, find nothing but the
    upstream defects the expectation file lists under `fuzz` (`--fuzz 20` and more: docs/node-results.md)."""
    from collections import Counter

    from sessionspec.conformance import machines
    from sessionspec.conformance.harness import connector_for
    from sessionspec.conformance.runner import start_implementation

    out, seen = io.StringIO(), Counter()
    failures = machines.run(
        connect=lambda: start_implementation(connector_for(adapter_command), 60.0), examples=3, steps=8,
        trace_dir=tmp_path / "traces", out=out, derandomize=True,
        known=load_expectations(EXPECTATIONS).fuzz, seen=seen,
    )
    assert failures == [], out.getvalue()
    assert out.getvalue().count("passed (") == len(machines.MACHINES), out.getvalue()


def test_no_known_failure_is_a_revision_difference():
    """Revision differences are spec data now (spec/revisions/); what is left is classified defects or assumptions."""
    data = json.loads(EXPECTATIONS.read_text(encoding="utf-8"))
    assert [e["case"] for e in data["failures"] if e["reason"].startswith("(a)")] == []


def test_every_expectation_is_classified_with_its_reason():
    data = json.loads(EXPECTATIONS.read_text(encoding="utf-8"))
    protocol.validate(data, "expectations.json")
    for entry in data["failures"]:
        reason = entry["reason"]
        assert reason.startswith(("(a) revision difference", "(b) defect", "(c) ")), entry
        if reason.startswith("(b)"):
            assert "repro:" in reason, entry
