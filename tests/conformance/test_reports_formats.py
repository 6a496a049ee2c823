"""JSONL reports reload and validate; JUnit output is valid XML with matching counts."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest
from conformance_fakes import broken_cmd, json_case, misbehave
from sessionspec.conformance.authoring import format_case_file
from sessionspec.conformance.cases import load_case_file
from sessionspec.conformance.harness import connector_for
from sessionspec.conformance.report import (
    DuplicateCase,
    EmptyReport,
    InvalidReport,
    MissingFooter,
    MissingHeader,
    junit_xml,
    load_report,
    report_lines,
    write_report,
)
from sessionspec.conformance.runner import run_cases


@pytest.fixture(scope="module")
def mixed_run():
    cases = [json_case(1), json_case(2, False, "wrong on purpose \x01"), misbehave("crash")]
    corpus = load_case_file(format_case_file("mix", "mix", cases), "mix.json")
    return run_cases(corpus, connector_for(broken_cmd()), timeout=5.0)


def test_a_report_is_header_cases_footer_and_reloads_equal(tmp_path, mixed_run):
    lines = report_lines(mixed_run, command=["adapter"], selection=None, expectations=None)
    path = tmp_path / "run.jsonl"
    write_report(path, lines)
    loaded = load_report(path)
    assert loaded.header["implementation"]["implementation"]["name"] == "sessionspec-reference"
    assert [c["outcome"] for c in loaded.cases] == ["passed", "failed", "errored"]
    assert loaded.counts == loaded.footer["counts"]
    assert loaded.footer["exitCode"] == 1
    failed = loaded.cases[1]
    assert failed["request"]["op"] == "json-value" and failed["reply"]["kind"] == "result"
    assert failed["diff"] == [{"pointer": "/isJsonValue", "kind": "value", "expected": False, "actual": True}]
    assert "request" not in loaded.cases[0]  # passing cases stay small
    assert not list(tmp_path.glob(".*.tmp"))


def test_truncated_duplicated_or_empty_reports_are_refused(tmp_path, mixed_run):
    lines = [json.dumps(line) for line in report_lines(mixed_run, command=None, selection=None, expectations=None)]
    cases = [
        ("", EmptyReport),
        ("\n".join(lines[:-1]), MissingFooter),
        ("\n".join(lines[1:]), MissingHeader),
        ("\n".join([lines[0], lines[1], lines[1], lines[-1]]), DuplicateCase),
        ("\n".join([lines[0], '{"kind":"case"}', lines[-1]]), InvalidReport),
    ]
    for text, error in cases:
        path = tmp_path / "r.jsonl"
        path.write_text(text)
        with pytest.raises(error):
            load_report(path)


def test_junit_is_valid_xml_with_matching_counts(mixed_run):
    text = junit_xml(report_lines(mixed_run, command=None, selection=None, expectations=None))
    root = ET.fromstring(text.encode("utf-8"))
    assert root.tag == "testsuites"
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("3", "1", "1")
    (suite,) = root.findall("testsuite")
    cases = suite.findall("testcase")
    assert len(cases) == 3
    assert cases[1].find("failure") is not None and "\\u0001" in cases[1].get("name")
    assert cases[2].find("error") is not None
    assert [p.get("value") for p in cases[0].iter("property")] == ["JSON-1"]


def test_report_lines_of_deep_cases_read_with_the_standard_library():
    """DEC-16 payloads are 10,000 deep; a report line caps them (elided, with the case's source)."""
    from sessionspec.conformance import wire
    from sessionspec.conformance.results import REPORT_MAX_DEPTH, CaseResult

    deep: list = []
    node = deep
    for _ in range(10_000):
        node.append([])
        node = node[0]
    (case,) = load_case_file(format_case_file("deep", "deep", [json_case(deep, False, "deep on purpose")]), "deep.json")
    line = CaseResult(case, "failed", "wrong", reply={"seq": 1, "kind": "result", "result": {"isJsonValue": True}}).to_json()
    loaded = json.loads(wire.dumps(line))  # the standard library: no RecursionError
    assert loaded["source"] == "deep.json#/cases/0"
    level, node = 0, loaded["request"]["args"]["value"]
    while isinstance(node, list):
        node, level = node[0], level + 1
    assert "elided" in node and level == REPORT_MAX_DEPTH - 2  # the request object and args are two levels


@pytest.mark.parametrize("name", ["acme\ud800impl", "acme\x1b[31m\x07impl"])
def test_junit_escapes_what_xml_cannot_carry_in_the_adapter_name(mixed_run, name):
    """issue 25: a lone surrogate (UnicodeEncodeError, no file) or ESC/BEL (unparseable XML) in the adapter's
    name: the JUnit file is written, parses, and shows the characters escaped."""
    lines = report_lines(mixed_run, command=None, selection=None, expectations=None)
    lines[0] = {**lines[0], "implementation": {**(lines[0].get("implementation") or {}),
                                               "implementation": {"name": name}}}
    text = junit_xml(lines)
    root = ET.fromstring(text.encode("utf-8"))
    assert root.get("name").startswith("sessionspec conformance: acme\\u")
