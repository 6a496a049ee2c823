"""The pytest plugin (``pytest --sessionspec-impl CMD``) gives `sessionspec conformance`'s verdicts, case by case.

Both run as subprocesses in an empty folder, on the reference and on a mutant (a deliberately
broken adapter), with an expectation file holding one case that fails and one that passes; the
JUnit XML of pytest is mapped back to the harness's outcomes and compared with the JSONL report.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from conformance_fakes import broken_cmd
from sessionspec.conformance import mutants

AREA = "surf"
MUTANT = "surf5-compares-seq-values"


def _conformance(tmp: Path, impl: str | None, expect: Path | None) -> dict[str, str]:
    report = tmp / "run.jsonl"
    argv = [sys.executable, "-c", "from sessionspec.cli import main; main()", "conformance", "--only", AREA, "--report", str(report),
            "--force"]
    argv += ["--impl", impl] if impl else []
    argv += ["--expect", str(expect)] if expect else []
    subprocess.run(argv, cwd=tmp, capture_output=True, timeout=600)
    lines = [json.loads(line) for line in report.read_text().splitlines()]
    return {line["id"]: line["outcome"] for line in lines if line.get("kind") == "case"}


def _pytest(tmp: Path, impl: str | None, expect: Path | None) -> tuple[dict[str, str], list[str]]:
    junit = tmp / "junit.xml"
    argv = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-m", AREA, "--junitxml", str(junit),
            "--sessionspec-impl", impl or "reference", "--rootdir", str(tmp)]
    argv += ["--sessionspec-expect", str(expect)] if expect else []
    done = subprocess.run(argv, cwd=tmp, capture_output=True, text=True, timeout=600)
    outcomes: dict[str, str] = {}
    names = []
    for test in ET.parse(junit).getroot().iter("testcase"):
        name = test.get("name", "")
        names.append(f"{test.get('classname')}::{name}")
        case_id = name[-16:]  # JUnit spells the node id surf/<id> as surf.<id>
        failure, skipped = test.find("failure"), test.find("skipped")
        if failure is not None:
            outcomes[case_id] = "xpass" if "XPASS" in (failure.get("message") or "") else "failed"
        elif skipped is not None:
            outcomes[case_id] = "xfail" if skipped.get("type") == "pytest.xfail" else "skipped"
        else:
            outcomes[case_id] = "passed"
    assert done.returncode in (0, 1), done.stdout + done.stderr
    return outcomes, names


def _normalise(outcomes: dict[str, str]) -> dict[str, str]:
    """pytest knows pass/fail/skip/xfail/xpass; the harness also splits a failure into failed/crashed/errored."""
    return {k: "failed" if v in ("failed", "crashed", "errored") else v for k, v in outcomes.items()}


@pytest.mark.parametrize("impl", [None, mutants.command(MUTANT)], ids=["reference", "mutant"])
def test_the_plugin_gives_the_verdicts_of_sessionspec_conformance(tmp_path: Path, impl: str | None) -> None:
    plain = _conformance(tmp_path, impl, None)
    failing = sorted(k for k, v in plain.items() if v != "passed")
    passing = sorted(k for k, v in plain.items() if v == "passed")
    assert (failing != []) == (impl is not None), "the mutant must fail some case of its area, the reference none"
    listed = [*failing[:1], passing[0]]
    expect = tmp_path / "known.json"
    expect.write_text(json.dumps({"implementation": "t", "failures": [{"case": c, "reason": "known"} for c in listed]}))
    for expectations in (None, expect):
        harness = _conformance(tmp_path, impl, expectations)
        plugin, names = _pytest(tmp_path, impl, expectations)
        assert _normalise(plugin) == _normalise(harness)
        assert len(harness) > 20
    assert harness[passing[0]] == "xpass"
    if failing:
        assert harness[failing[0]] == "xfail"
    assert all(f"{AREA}." in name for name in names)


def test_without_its_option_the_plugin_adds_nothing(tmp_path: Path) -> None:
    (tmp_path / "test_one.py").write_text("def test_one():\n    pass\n")
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--co", "-q", "--rootdir", str(tmp_path)],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert [line for line in done.stdout.splitlines() if "::" in line] == ["test_one.py::test_one"]
    # the plugin is installed (entry point pytest11) and offers its option
    helped = subprocess.run([sys.executable, "-m", "pytest", "--help"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert "--sessionspec-impl" in helped.stdout


def test_known_failures_xfail_strictly_and_x_stops_at_the_first_failure(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rf", "-x", "-m", AREA,
                           "--sessionspec-impl", mutants.command(MUTANT), "--rootdir", str(tmp_path)],
                          cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 1
    assert "1 failed" in done.stdout and "stopping after 1 failures" in done.stdout
    assert "SURF-5" in done.stdout  # the failure names the case's requirement
    assert f"FAILED {AREA}/" in done.stdout  # node id: area/case id


@pytest.mark.parametrize(("impl", "code"), [(broken_cmd("--no-caps"), 1), ("reference", 0)], ids=["no-op", "reference"])
def test_a_plugin_run_that_attempts_no_vector_fails_with_the_skip_reasons(tmp_path: Path, impl: str, code: int) -> None:
    """#28: an adapter claiming no capability the selected vectors need is a zero-coverage run, not a green one
    (the CLI's "no case was attempted"); a run that attempted its vectors keeps pytest's own status."""
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-m", "json",
                           "--sessionspec-impl", impl, "--rootdir", str(tmp_path)],
                          cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == code, done.stdout + done.stderr
    line = re.search(r"sessionspec: no case was attempted: all (\d+) selected cases were skipped .*", done.stdout)
    assert (line is not None) == (code == 1), done.stdout
    if line:
        skipped = re.search(r"(\d+) skipped", done.stdout.splitlines()[-1])
        assert skipped and skipped.group(1) == line.group(1), done.stdout  # every selected vector, counted once
        assert re.search(r"top skip reasons: \d+ x implementation does not claim capability json-value", line.group(0))
