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


def test_a_bad_fuzz_budget_is_a_usage_error(tmp_path: Path) -> None:
    done = _pytest(tmp_path, "reference", "--sessionspec-fuzz", "lots", "--collect-only")
    assert done.returncode == 4 and "--sessionspec-fuzz: expected a number" in done.stderr and "Traceback" not in done.stderr
