"""`pytest --sessionspec-fuzz`: one item per state machine; a broken adapter's difference fails its item with a trace."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conformance_fakes import broken_cmd


def _pytest(tmp: Path, impl: str, *extra: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rA", "--sessionspec-impl", impl,
            "--rootdir", str(tmp), "--sessionspec-trace-dir", str(tmp / "traces"), *extra]
    return subprocess.run(argv, cwd=tmp, capture_output=True, text=True, timeout=600, check=False)


def test_fuzz_machines_are_items_that_pass_on_the_reference_and_fail_on_a_broken_adapter(tmp_path: Path) -> None:
    listed = _pytest(tmp_path, "reference", "--sessionspec-fuzz", "quick", "-m", "fuzz", "--collect-only")
    names = {line.strip() for line in listed.stdout.splitlines() if line.strip().startswith("fuzz/")}
    assert {"fuzz/session", "fuzz/fork", "fuzz/storage", "fuzz/store", "fuzz/persistence"} <= names, listed.stdout
    good = _pytest(tmp_path, "reference", "--sessionspec-fuzz", "quick", "-m", "fuzz", "-k", "fork")
    assert good.returncode == 0 and "PASSED fuzz/fork" in good.stdout, good.stdout + good.stderr
    bad = _pytest(tmp_path, broken_cmd("--wrong-find"), "--sessionspec-fuzz", "quick", "-m", "fuzz", "-k", "storage")
    assert bad.returncode == 1 and "FAILED fuzz/storage" in bad.stdout and "find-last-message-turn-end" in bad.stdout
    assert list((tmp_path / "traces").glob("storage-*.jsonl"))
    # The replay hint names the adapter this run started, not a placeholder.
    assert "--impl CMD" not in bad.stdout and "sessionspec replay" in bad.stdout and "--wrong-find" in bad.stdout


def test_a_bad_fuzz_budget_is_a_usage_error(tmp_path: Path) -> None:
    done = _pytest(tmp_path, "reference", "--sessionspec-fuzz", "lots", "--collect-only")
    assert done.returncode == 4 and "--sessionspec-fuzz: expected a number" in done.stderr and "Traceback" not in done.stderr


def test_a_deep_run_fails_the_item_whose_expectation_entry_nothing_matched(tmp_path: Path) -> None:
    """The CLI's strict rule (``STRICT_FUZZ_EXAMPLES``, same message): an entry naming a machine fails
    that machine's item in a deep run, and only there; a shallower run leaves it be."""
    import json

    from sessionspec.conformance.expectations import STRICT_FUZZ_EXAMPLES, FuzzExpectation
    from sessionspec.conformance.fuzz import FuzzResult

    entry = {"machine": "fork", "rule": "no.such.rule", "reason": "a stale entry"}
    (tmp_path / "expect.json").write_text(json.dumps({"implementation": "reference", "failures": [], "fuzz": [entry]}))
    common = ("--sessionspec-expect", str(tmp_path / "expect.json"), "-m", "fuzz", "-k", "fork")
    message = FuzzResult([], unmatched=[FuzzExpectation(**entry).describe()], strict=True).problems[0]
    deep = _pytest(tmp_path, "reference", "--sessionspec-fuzz", str(STRICT_FUZZ_EXAMPLES), *common)
    assert deep.returncode == 1 and "FAILED fuzz/fork" in deep.stdout, deep.stdout + deep.stderr
    assert message in deep.stdout
    shallow = _pytest(tmp_path, "reference", "--sessionspec-fuzz", str(STRICT_FUZZ_EXAMPLES - 1), *common)
    assert shallow.returncode == 0 and "PASSED fuzz/fork" in shallow.stdout, shallow.stdout + shallow.stderr


def test_an_entry_naming_no_machine_is_answered_by_fuzz_expectations_in_a_deep_run_only(tmp_path: Path) -> None:
    import json

    from sessionspec.conformance.expectations import STRICT_FUZZ_EXAMPLES

    entry = {"rule": "no.such.rule", "reason": "a stale entry"}
    (tmp_path / "expect.json").write_text(json.dumps({"implementation": "reference", "failures": [], "fuzz": [entry]}))
    for budget, listed in ((STRICT_FUZZ_EXAMPLES, True), (STRICT_FUZZ_EXAMPLES - 1, False), ("quick", False)):
        done = _pytest(tmp_path, "reference", "--sessionspec-expect", str(tmp_path / "expect.json"),
                       "--sessionspec-fuzz", str(budget), "-m", "fuzz", "--collect-only")
        assert done.returncode == 0, done.stdout + done.stderr
        assert ("fuzz/expectations" in done.stdout) is listed, done.stdout
        assert done.stdout.index("fuzz/expectations") > done.stdout.index("fuzz/fork") if listed else True
