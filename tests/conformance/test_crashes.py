"""An implementation crash on a case is a failure of that case, never `errored`.

The adapter reports an error the implementation does not define (a
`TypeError` where the spec requires a rejection) as a `crashed` reply; the
harness counts it as a failure of the case's requirements (outcome
`crashed`, exit 1), in the summary, the JSONL report and JUnit. Only
protocol breakage (exit, hang, garbage, wrong seq) stays `errored`.
"""

from __future__ import annotations

import io
import json
import xml.etree.ElementTree as ET

from conformance_fakes import broken_cmd, case, json_case
from sessionspec.conformance import protocol
from sessionspec.conformance.adapter import ReferenceAdapter
from sessionspec.conformance.authoring import format_case_file
from sessionspec.conformance.cases import load_case_file
from sessionspec.conformance.expectations import load_expectations
from sessionspec.conformance.harness import connector_for
from sessionspec.conformance.report import junit_xml, load_report, report_lines, write_report
from sessionspec.conformance.runner import run_cases
from sessionspec.conformance.summary import render_summary

NULL_SEED = case("a null seed entry is rejected with SEED_ENVELOPE", "load", {"seed": [None]},
                 {"rejected": {"code": "SEED_ENVELOPE", "index": 0}}, requirements=("SEED-2",))
FINE = json_case(1, True, "a number is a JSON value")


def _run(**options):
    corpus = load_case_file(format_case_file("crash", "crash", [NULL_SEED, FINE]), "crash.json")
    return run_cases(corpus, connector_for(broken_cmd("--crash-null-seed")), timeout=10.0, **options)


def test_a_seeded_crash_is_a_failure_of_its_requirement_in_every_output(tmp_path):
    run = _run()
    crashed, fine = run.results
    assert (crashed.outcome, fine.outcome) == ("crashed", "passed")
    assert crashed.problem and run.exit_code == 1
    assert crashed.crash == {"class": "TypeError", "message": "Cannot read properties of null (reading 'type')"}
    assert "SEED_ENVELOPE" in crashed.message and "TypeError" in crashed.message

    out = io.StringIO()
    render_summary(run, out)
    text = out.getvalue()
    seed_row = next(line for line in text.splitlines() if line.strip().startswith("SEED-2 "))
    assert seed_row.split()[2:5] == ["0", "1", "1"]  # passed 0, failed 1, of which crashed 1
    assert "1 failed (of which 1 crashed)" in text and "CRASHED: a null seed entry" in text
    assert "broken adapter" not in text

    path = tmp_path / "run.jsonl"
    write_report(path, report_lines(run, command=None, selection=None, expectations=None))
    loaded = load_report(path)  # every line validates against report.json
    line = loaded.by_id[NULL_SEED["id"]]
    assert line["outcome"] == "crashed" and line["requirements"] == ["SEED-2"]
    assert line["crash"] == {"class": "TypeError", "message": "Cannot read properties of null (reading 'type')"}
    assert loaded.footer["counts"]["crashed"] == 1 and loaded.footer["counts"]["errored"] == 0
    for raw in path.read_text(encoding="utf-8").splitlines():
        json.loads(raw)  # readable by the standard library

    suite = ET.fromstring(junit_xml(report_lines(run, command=None, selection=None, expectations=None)))
    assert suite.get("failures") == "1" and suite.get("errors") == "0"
    failure = suite.find(".//failure")
    assert failure is not None and failure.get("type") == "crash: TypeError"


def test_a_known_crash_listed_in_the_expectations_is_xfail(tmp_path):
    path = tmp_path / "known.json"
    path.write_text(json.dumps({"implementation": "x", "failures": [
        {"case": NULL_SEED["id"], "reason": "(b) defect: TypeError on a null seed entry"}]}))
    run = _run(expectations=load_expectations(path))
    assert [r.outcome for r in run.results] == ["xfail", "passed"] and run.exit_code == 0
    assert run.results[0].crash is not None and run.results[0].to_json()["crash"]["class"] == "TypeError"


def test_the_reference_adapter_tells_an_implementation_crash_from_an_adapter_bug():
    adapter = ReferenceAdapter()
    crash = adapter.handle({"seq": 1, "op": "load", "args": {"id": 5}})  # TypeError raised by reference code
    protocol.validate_reply(crash, "load")
    assert crash["kind"] == "crashed" and crash["class"] == "TypeError" and "traceback" in crash["detail"].lower()
    bug = adapter.handle({"seq": 2, "op": "fold", "args": {}})  # KeyError in the adapter itself
    assert bug["kind"] == "errored"
