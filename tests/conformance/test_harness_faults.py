"""A broken adapter is recorded as errored against the case in flight, restarted,
and the run goes on (crash, hang, garbage, wrong seq, schema violations)."""

from __future__ import annotations

import pytest
from conformance_fakes import broken_cmd, json_case, misbehave
from sessionspec.conformance.authoring import format_case_file
from sessionspec.conformance.cases import load_case_file
from sessionspec.conformance.harness import Implementation, StartupFailed, connector_for
from sessionspec.conformance.runner import run_cases, start_implementation


def corpus(cases):
    return load_case_file(format_case_file("faults", "faults", cases), "faults.json")


def test_each_breakage_is_errored_against_its_case_and_the_run_goes_on():
    modes = ["crash", "garbage", "not-object", "wrong-seq", "bad-schema", "errored", "hang"]
    cases = []
    for i, mode in enumerate(modes):
        cases.append(misbehave(mode))
        cases.append(json_case({"after": i}))  # served by a restarted adapter
    run = run_cases(corpus(cases), connector_for(broken_cmd()), timeout=3.0)  # room for adapter start-up on a loaded machine
    outcomes = {r.case.description: r for r in run.results}
    for mode in modes:
        assert outcomes[f"adapter misbehaves: {mode}"].outcome == "errored", mode
    for i in range(len(modes)):
        assert outcomes[f"json-value of {{'after': {i}}}"].outcome == "passed"
    messages = {mode: outcomes[f"adapter misbehaves: {mode}"].message for mode in modes}
    assert "crash" in messages["crash"] and "simulated crash" in messages["crash"]  # stderr tail is kept
    assert "not JSON" in messages["garbage"]
    assert "not a JSON object" in messages["not-object"]
    assert "does not match request seq" in messages["wrong-seq"]
    assert "protocol schema" in messages["bad-schema"]
    assert messages["errored"] == "adapter bug"
    assert "hang" in messages["hang"]
    assert run.exit_code == 1


def test_an_adapter_that_cannot_start_is_reported_with_its_stderr():
    with pytest.raises(StartupFailed, match="missing library"):
        start_implementation(connector_for(broken_cmd("--no-start")), 5.0)


def test_a_missing_program_is_a_startup_failure():
    with pytest.raises(StartupFailed, match="cannot run"):
        start_implementation(connector_for("/nonexistent/adapter --flag"), 5.0)


def test_a_protocol_version_mismatch_stops_the_handshake():
    with pytest.raises(StartupFailed, match="protocol version 99"):
        start_implementation(connector_for(broken_cmd("--bad-version")), 5.0)


def test_restarts_stop_after_repeated_failures():
    attempts = []

    def connect():
        attempts.append(1)
        if len(attempts) == 1:
            return connector_for(broken_cmd())()
        return connector_for(broken_cmd("--no-start"))()

    impl = Implementation(connect, timeout=5.0)
    impl.start()
    first = impl.request("json-value", {"value": {"misbehave": "crash"}})
    assert first["kind"] == "errored"
    replies = [impl.request("json-value", {"value": 1}) for _ in range(5)]
    assert all(r["kind"] == "errored" for r in replies)
    assert "not trying again" in replies[-1]["message"]
    assert len(attempts) == 1 + impl.max_failed_restarts
    impl.close()
