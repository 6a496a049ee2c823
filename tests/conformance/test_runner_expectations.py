"""Expectation files (strict xpass), capability skips, parallel workers, the broken-adapter hint."""

from __future__ import annotations

import io
import json
import re

import pytest
from conformance_fakes import broken_cmd, case, json_case
from sessionspec.conformance.authoring import format_case_file
from sessionspec.conformance.cases import load_case_file
from sessionspec.conformance.expectations import ExpectationsError, load_expectations
from sessionspec.conformance.harness import InProcessConnection, connector_for
from sessionspec.conformance.runner import apply_stale, run_cases
from sessionspec.conformance.summary import render_summary

RIGHT = json_case(1, True, "a number is a JSON value")
WRONG = json_case(2, False, "a deliberately wrong expectation")
FOLD = case("fold of nothing", "fold", {"events": []}, {"result": {"nodes": [], "replacements": []}},
            requirements=("SURF-12",))


def corpus(*cases):
    return load_case_file(format_case_file("t", "t", list(cases)), "t.json")


def expectations(tmp_path, *entries):
    path = tmp_path / "known.json"
    path.write_text(json.dumps({"implementation": "ref", "failures": [{"case": c, "reason": r} for c, r in entries]}))
    return load_expectations(path)


def outcomes(run):
    return {r.case.description: r.outcome for r in run.results}


def test_a_listed_failure_is_xfail_and_does_not_fail_the_run(tmp_path):
    known = expectations(tmp_path, (WRONG["id"], "known bug #12"))
    run = run_cases(corpus(RIGHT, WRONG), InProcessConnection, expectations=known)
    assert outcomes(run) == {"a number is a JSON value": "passed", "a deliberately wrong expectation": "xfail"}
    assert run.results[1].reason == "known bug #12"
    assert run.exit_code == 0


def test_a_listed_case_that_passes_is_xpass_and_fails_the_run(tmp_path):
    known = expectations(tmp_path, (RIGHT["id"], "was broken once"))
    run = run_cases(corpus(RIGHT), InProcessConnection, expectations=known)
    assert outcomes(run) == {"a number is a JSON value": "xpass"}
    assert run.exit_code == 1


def test_an_entry_naming_no_case_is_stale_and_fails_the_run(tmp_path):
    known = expectations(tmp_path, ("f" * 16, "removed case"))
    cases = corpus(RIGHT)
    run = run_cases(cases, InProcessConnection, expectations=known)
    apply_stale(run, known, {c.id for c in cases})
    assert run.stale_expectations == ["f" * 16]
    assert run.exit_code == 1


def _on_node(version):
    """The in-process reference, its handshake naming a Node runtime (as the Node adapter's does)."""
    from sessionspec.conformance.adapter import ReferenceAdapter

    adapter = ReferenceAdapter()

    def handle(request):
        reply = adapter.handle(request)
        if request.get("op") == "start" and version is not None:
            reply["result"]["runtime"] = {"name": "node", "version": version}
        return reply

    return lambda: InProcessConnection(handle)


def test_an_entry_with_node_applies_on_that_node_only(tmp_path):
    path = tmp_path / "known.json"
    path.write_text(json.dumps({"implementation": "ref", "failures": [
        {"case": WRONG["id"], "reason": "torn frame on Node 24", "node": [24]},
        {"case": WRONG["id"], "reason": "same, older zlib", "node": [20, 22]}]}))
    known = load_expectations(path)
    for version, reason in (("24.22.3", "torn frame on Node 24"), ("v20.20.2", "same, older zlib")):
        run = run_cases(corpus(RIGHT, WRONG), _on_node(version), expectations=known)
        assert outcomes(run)["a deliberately wrong expectation"] == "xfail" and run.results[1].reason == reason
    # on a Node no entry names, and on a runtime that is not Node, the case is judged as if unlisted
    for version in ("26.0.0", None):
        run = run_cases(corpus(RIGHT, WRONG), _on_node(version), expectations=known)
        assert outcomes(run)["a deliberately wrong expectation"] == "failed" and run.exit_code == 1
    # a passing case listed for Node 24 only is xpass on 24 and an ordinary pass elsewhere
    path.write_text(json.dumps({"implementation": "ref", "failures": [
        {"case": RIGHT["id"], "reason": "differs on 24", "node": [24]}]}))
    known = load_expectations(path)
    assert outcomes(run_cases(corpus(RIGHT), _on_node("24.0.0"), expectations=known)) == {
        "a number is a JSON value": "xpass"}
    assert outcomes(run_cases(corpus(RIGHT), _on_node("22.0.0"), expectations=known)) == {
        "a number is a JSON value": "passed"}
    # a Node-specific entry naming no case is stale on every runtime
    assert known.stale(set()) == [RIGHT["id"]] and known.for_runtime(None).stale(set()) == [RIGHT["id"]]
    fuzz = {"implementation": "ref", "failures": [], "fuzz": [{"code": "X", "reason": "on 24", "node": [24]}]}
    path.write_text(json.dumps(fuzz))
    known = load_expectations(path)
    assert [k.reason for k in known.for_runtime({"name": "node", "version": "24.1.0"}).fuzz] == ["on 24"]
    assert known.for_runtime({"name": "node", "version": "22.1.0"}).fuzz == ()
    assert known.for_runtime({"name": "node", "version": "22.1.0"}).for_runtime(
        {"name": "node", "version": "24.1.0"}).fuzz == known.for_runtime({"name": "node", "version": "24.1.0"}).fuzz


def test_entries_of_one_case_need_disjoint_node_majors(tmp_path):
    path = tmp_path / "known.json"
    for entries, says in (([{"node": [22, 24]}, {"node": [24]}], "listed twice for Node 24"),
                          ([{}, {"node": [24]}], "listed twice (also /failures/0")):
        path.write_text(json.dumps({"implementation": "ref", "failures": [
            {"case": WRONG["id"], "reason": "r", **entry} for entry in entries]}))
        with pytest.raises(ExpectationsError, match=r"/failures/1: case [0-9a-f]{16} is " + re.escape(says)):
            load_expectations(path)
    path.write_text(json.dumps({"implementation": "ref", "failures": [
        {"case": WRONG["id"], "reason": "r", "node": []}]}))
    with pytest.raises(ExpectationsError, match="node"):
        load_expectations(path)


def test_malformed_expectation_files_are_refused(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"implementation": "x", "failures": [{"case": "nothex"}]}))
    with pytest.raises(ExpectationsError, match="bad.json"):
        load_expectations(path)
    path.write_text(json.dumps({"implementation": "x", "failures": [{"case": "a" * 16, "reason": "r"}] * 2}))
    with pytest.raises(ExpectationsError, match="listed twice"):
        load_expectations(path)


def test_cases_needing_an_unclaimed_capability_are_skipped_not_failed():
    run = run_cases(corpus(RIGHT, FOLD), connector_for(broken_cmd("--no-caps")))
    assert set(outcomes(run).values()) == {"skipped"}
    assert "json-value" in run.results[0].message
    assert run.exit_code == 1  # skipped, not failed; but a run that attempts no case is not a pass (issue 28)


def test_parallel_workers_keep_corpus_order_and_outcomes():
    cases = corpus(*(json_case(i) for i in range(12)), WRONG)
    serial = run_cases(cases, InProcessConnection)
    parallel = run_cases(cases, InProcessConnection, jobs=3)
    assert [(r.case.id, r.outcome) for r in serial.results] == [(r.case.id, r.outcome) for r in parallel.results]


def test_an_adapter_that_fails_everything_gets_the_broken_adapter_hint():
    run = run_cases(corpus(*(json_case(i) for i in range(3))), connector_for(broken_cmd("--wrong")))
    assert set(outcomes(run).values()) == {"failed"}
    text = io.StringIO()
    render_summary(run, text)
    assert "almost always a broken adapter" in text.getvalue()
    assert "FAILED" in text.getvalue()


def test_a_run_of_known_failures_only_gets_no_broken_adapter_hint(tmp_path):
    """`--only` the listed defects with `--expect`: every case is xfail and the run is OK, not a broken adapter."""
    wrong_too = json_case(3, False, "another deliberately wrong expectation")
    known = expectations(tmp_path, (WRONG["id"], "known bug #12"), (wrong_too["id"], "known bug #13"))
    run = run_cases(corpus(WRONG, wrong_too), InProcessConnection, expectations=known)
    assert set(outcomes(run).values()) == {"xfail"} and run.exit_code == 0
    text = io.StringIO()
    render_summary(run, text)
    assert "broken adapter" not in text.getvalue()
    # one unexpected failure among known ones is still a broken-adapter pattern
    run = run_cases(corpus(WRONG, wrong_too), InProcessConnection, expectations=expectations(tmp_path, (WRONG["id"], "known")))
    text = io.StringIO()
    render_summary(run, text)
    assert "almost always a broken adapter" in text.getvalue()


def test_the_summary_shows_the_first_failure_with_a_readable_diff():
    run = run_cases(corpus(RIGHT, WRONG), InProcessConnection)
    text = io.StringIO()
    render_summary(run, text)
    out = text.getvalue()
    assert "FAILED: a deliberately wrong expectation" in out
    assert "/isJsonValue: expected false, got true" in out
    assert "almost always a broken adapter" not in out
    only = io.StringIO()
    render_summary(run, only, failures_only=True)
    assert "failures (1)" in only.getvalue()
