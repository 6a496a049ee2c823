"""The conformance, replay and requirements commands, driven in-process."""

from __future__ import annotations

import io
import json
import sys
import types
import xml.etree.ElementTree as ET

from conformance_fakes import REFERENCE_CMD, broken_cmd, json_case, write_corpus
from sessionspec import cli
from sessionspec.conformance import fuzz
from sessionspec.conformance.report import load_report
from sessionspec.conformance.trace import read_trace


def run(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = cli.run(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def test_the_default_run_is_the_embedded_reference_and_passes():
    code, out, err = run("conformance")
    assert code == 0, out + err
    assert "sessionspec-reference" in out and "OK:" in out
    assert "\r[" not in err  # no progress bar when not on a terminal


def test_a_subprocess_run_writes_reports_and_junit(tmp_path):
    report, junit = tmp_path / "r.jsonl", tmp_path / "r.xml"
    code, out, _ = run("conformance", "--impl", REFERENCE_CMD, "--only", "surf", "--only", "STORE-7",
                       "--report", str(report), "--junit", str(junit))
    assert code == 0, out
    loaded = load_report(report)
    assert loaded.footer["exitCode"] == 0 and loaded.header["selection"] == ["surf", "STORE-7"]
    assert {c["area"] for c in loaded.cases} == {"surf", "store"}
    assert ET.parse(junit).getroot().get("failures") == "0"


def test_failures_are_saved_as_a_trace_that_replays(tmp_path):
    vectors = write_corpus(tmp_path / "v", "t", [json_case(1), json_case(2, False, "wrong on purpose")])
    trace = tmp_path / "fail.jsonl"
    code, out, _ = run("conformance", "--vectors", str(vectors), "--trace", str(trace), "--failures-only")
    assert code == 1 and "failures (1)" in out
    header, steps = read_trace(trace)
    assert header["origin"] == "sessionspec conformance" and len(steps) == 1
    assert steps[0].actual["result"] == {"isJsonValue": True}
    code, out, _ = run("replay", str(trace))
    assert code == 1 and "step 1 json-value: failed" in out
    code, out, _ = run("replay", str(trace), "--impl", broken_cmd("--wrong"))
    assert code == 0, out  # the wrong adapter reproduces the "expected" reply


def test_replay_refuses_an_unreadable_trace(tmp_path):
    bad = tmp_path / "t.jsonl"
    bad.write_text('{"kind": "step"}\n')
    code, _, err = run("replay", str(bad))
    assert code == 2 and "t.jsonl:1" in err


def test_usage_errors_exit_2_with_a_message(tmp_path):
    assert run("conformance", "--only", "nowhere")[0] == 2
    code, _, err = run("conformance", "--impl", broken_cmd("--no-start"))
    assert code == 2 and "could not start" in err and "missing library" in err
    missing = tmp_path / "none.json"
    code, _, err = run("conformance", "--expect", str(missing))
    assert code == 2 and "none.json" in err
    bad_vectors = tmp_path / "v"
    bad_vectors.mkdir()
    (bad_vectors / "x.json").write_text("{not json")
    code, _, err = run("conformance", "--vectors", str(bad_vectors))
    assert code == 2 and "x.json" in err


def test_an_expectation_file_turns_known_failures_into_xfail(tmp_path):
    wrong = json_case(2, False, "wrong on purpose")
    vectors = write_corpus(tmp_path / "v", "t", [json_case(1), wrong])
    known = tmp_path / "known.json"
    known.write_text(json.dumps({"implementation": "ref", "failures": [{"case": wrong["id"], "reason": "demo"}]}))
    code, out, _ = run("conformance", "--vectors", str(vectors), "--expect", str(known))
    assert code == 0 and "1 xfail" in out


def test_fuzz_without_state_machines_is_a_clear_usage_error(monkeypatch):
    monkeypatch.setattr(fuzz, "load_machines", lambda: None)
    code, _, err = run("conformance", "--only", "find", "--fuzz", "5")
    assert code == 2 and "sessionspec.conformance.machines" in err


def test_fuzz_calls_the_machines_hook_and_counts_its_failures(monkeypatch, tmp_path):
    calls = {}

    def fake_run(*, connect, examples, trace_dir, out):
        impl = connect()
        calls.update(examples=examples, name=impl.name, trace_dir=trace_dir)
        impl.close()
        return [{"machine": "Surface", "message": "differs at step 3", "trace": str(tmp_path / "s.jsonl")}]

    module = types.ModuleType("sessionspec.conformance.machines")
    module.run = fake_run
    module.COVERAGE = {"surface-append-replace": ["SURF-5", "SURF-9"]}
    monkeypatch.setitem(sys.modules, "sessionspec.conformance.machines", module)
    report = tmp_path / "r.jsonl"
    code, out, _ = run("conformance", "--only", "find", "--fuzz", "7", "--trace-dir", str(tmp_path),
                       "--report", str(report))
    assert code == 1
    assert calls["examples"] == 7 and calls["name"].startswith("sessionspec-reference")
    assert "fuzz: 1 distinct failure(s)" in out and "  Surface " in out and "sessionspec replay" in out
    assert load_report(report).footer["fuzz"][0]["machine"] == "Surface"
    monkeypatch.setattr("sessionspec.conformance.fuzz.machine_evidence",
                        lambda: {"SURF-5": frozenset({"surface-append-replace"})})
    code, out, _ = run("requirements")
    assert "properties: surface-append-replace" in out


def test_fuzz_machine_runs_only_the_named_machine(tmp_path):
    """--machine narrows --fuzz to one machine: the real machines module, the CI-quick profile of the
    persistence machine only (its progress lines name no other machine)."""
    code, out, err = run("conformance", "--only", "find", "--fuzz", "quick", "--machine", "persistence",
                         "--trace-dir", str(tmp_path))
    assert code == 0, out + err
    from sessionspec.conformance.machines import MACHINES, QUICK

    others = [m for m in MACHINES if m != "persistence"]
    ran = [line.split(":")[1].strip() for line in err.splitlines() if line.startswith("fuzz: ")]
    assert ran and set(ran) == {"persistence"} and not any(f"fuzz: {m}:" in err for m in others), err
    assert len(ran) == sum(1 for q in QUICK if q.machine == "persistence")


def test_fuzz_machine_hands_the_selection_to_run_and_filters_known_entries(monkeypatch, tmp_path):
    calls = {}

    def fake_run(*, connect, examples, trace_dir, out, machines, known=(), seen=None):
        calls.update(machines=machines, known=[k.machine for k in known])
        return []

    module = types.ModuleType("sessionspec.conformance.machines")
    module.run, module.MACHINES = fake_run, {"session": object, "persistence": object}
    monkeypatch.setitem(sys.modules, "sessionspec.conformance.machines", module)
    known = tmp_path / "known.json"
    known.write_text(json.dumps({"implementation": "ref", "failures": [],
                                 "fuzz": [{"machine": "session", "reason": "a session difference"},
                                          {"machine": "persistence", "reason": "a storage difference"},
                                          {"code": "X", "reason": "any machine"}]}))
    code, out, err = run("conformance", "--only", "find", "--fuzz", "100", "--machine", "persistence",
                         "--expect", str(known), "--trace-dir", str(tmp_path))
    # the session entry is not strict in a run without the session machine; the other two are unmatched
    assert calls == {"machines": ["persistence"], "known": ["persistence", None]}
    assert code == 1 and "a session difference" not in out + err and "a storage difference" in out + err


def test_fuzz_machine_usage_errors(tmp_path):
    code, _, err = run("conformance", "--only", "find", "--machine", "persistence")
    assert code == 2 and "--machine selects the state machines --fuzz runs" in err
    code, _, err = run("conformance", "--only", "find", "--fuzz", "1", "--machine", "storag\x1b[2J")
    assert code == 2 and "no such state machine" in err and "persistence" in err and "\x1b" not in err


def test_requirements_say_which_revisions_they_bind():
    code, out, _ = run("requirements", "--json", "--revision", "0.1.1-rc.2")
    rows = {r["id"]: r for r in json.loads(out)}
    assert code == 0 and rows["SEED-17"]["revisions"] == ["b150a551b8"]
    assert rows["SEED-3"]["revisions"] == ["2f74ac98ba", "b150a551b8"] and "OOB-1" not in rows
    code, out, _ = run("requirements", "--revision", "b150a551b8")
    lines = {line.split()[0]: line for line in out.splitlines() if line[:1].isalpha()}
    assert lines["SEED-17"].endswith("(revisions: b150a551b8)") and "revisions:" not in lines["SEED-3"]
    code, out, _ = run("requirements")
    assert [line.split()[0] for line in out.splitlines() if line.endswith("(revisions: 2f74ac98ba)")][:1] == ["OOB-1"]


def test_requirements_lists_coverage_and_check_fails_on_uncovered_must(monkeypatch):
    from sessionspec.conformance.coverage import load_requirements

    code, out, err = run("requirements", "--json")
    rows = {r["id"]: r for r in json.loads(out)}
    assert code == 0 and rows["SURF-5"]["vectors"] and "requirements covered" in err
    covered = [r for r in load_requirements() if rows[r["id"]]["vectors"]]
    monkeypatch.setattr("sessionspec.requirements_cmd.load_requirements", lambda revision=None: covered)
    code, _, err = run("requirements", "--check")
    assert code == 0, err
    extra = [*covered, {"id": "ZZZ-1", "level": "MUST", "title": "nothing checks this"},
             {"id": "ZZZ-2", "level": "SHOULD", "title": "optional"}]
    monkeypatch.setattr("sessionspec.requirements_cmd.load_requirements", lambda revision=None: extra)
    code, out, err = run("requirements", "--check", "--uncovered")
    assert code == 1 and "uncovered MUST requirements: ZZZ-1\n" in err
    assert out.splitlines()[0].startswith("ZZZ-1") and "NOT COVERED" in out


def test_a_run_that_attempts_no_case_fails_with_the_skip_reasons(tmp_path):
    vectors = write_corpus(tmp_path / "v", "json", [json_case(i) for i in range(3)])
    code, out, _ = run("conformance", "--impl", broken_cmd("--no-caps"), "--vectors", str(vectors))
    assert code == 1
    assert "no case was attempted: all 3 selected cases were skipped (the adapter claims none of the capabilities" in out
    assert "3 x implementation does not claim capability json-value" in out
    assert "FAILED: 3 cases" in out


def test_a_selection_whose_cases_are_all_skipped_fails(tmp_path):
    cases = [json_case(1), json_case(2, description="another")]
    vectors = write_corpus(tmp_path / "v", "json", cases)
    code, out, _ = run("conformance", "--impl", broken_cmd("--no-caps"), "--vectors", str(vectors),
                       "--only", cases[0]["id"])
    assert code == 1 and "no case was attempted: all 1 selected cases were skipped" in out


def test_the_summary_splits_requirements_by_passed_failed_known_and_skipped(tmp_path):
    wrong = json_case(2, valid=False, description="the reference says true: a failure")
    vectors = write_corpus(tmp_path / "v", "json", [json_case(1), {**wrong, "requirements": ["JSON-2"]}])
    code, out, _ = run("conformance", "--impl", REFERENCE_CMD, "--vectors", str(vectors))
    assert code == 1
    assert "requirements: 1 passed, 1 failed, 0 known failures only, 0 skipped (never tried: every case skipped)" in out


def test_the_summary_counts_requirements_whose_cases_were_all_skipped_as_never_tried(tmp_path):
    vectors = write_corpus(tmp_path / "v", "json", [json_case(1)])
    _, out, _ = run("conformance", "--impl", broken_cmd("--no-caps"), "--vectors", str(vectors))
    assert "requirements: 0 passed, 0 failed, 0 known failures only, 1 skipped (never tried" in out
    assert "top skip reasons (1 skipped)\n      1  implementation does not claim capability json-value" in out


def test_write_expect_lists_every_current_failure_and_the_rerun_with_it_passes(tmp_path):
    from sessionspec.conformance import mutants

    known = tmp_path / "known.json"
    impl = mutants.command("surf5-compares-seq-values")
    code, out, err = run("conformance", "--impl", impl, "--only", "surf", "--write-expect", str(known))
    assert code == 1, out + err
    written = json.loads(known.read_text())
    assert written["failures"] and all(f["reason"].startswith(("failed: ", "crashed: ", "errored: ")) for f in written["failures"])
    code, out, err = run("conformance", "--impl", impl, "--only", "surf", "--expect", str(known), "--write-expect", str(known),
                         "--force")
    assert code == 0, out + err  # every failure is now a known failure (xfail)
    assert [f["case"] for f in json.loads(known.read_text())["failures"]] == [f["case"] for f in written["failures"]]
    assert json.loads(known.read_text())["failures"][0]["reason"] == written["failures"][0]["reason"]  # reasons are kept


def test_list_prints_the_selected_cases_without_running_them(tmp_path):
    report = tmp_path / "r.jsonl"
    code, out, err = run("conformance", "--only", "SURF-5", "--list", "--report", str(report))
    assert code == 0, err
    rows = out.splitlines()
    assert rows and all("SURF-5" in row.split()[2] for row in rows)
    assert f"{len(rows)} case(s) of revision" in err
    assert not report.exists()  # nothing ran
