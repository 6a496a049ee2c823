"""`validate` over many files: `-j N` processes and a Dask cluster give the one-process report, in FILE order."""

from __future__ import annotations

import json
import pickle

import pytest
from cli_helpers import cli, jsonl, turn_events
from sessionspec.validate import check_file


@pytest.fixture
def fleet(write) -> list[str]:
    """Valid logs, invalid ones, a crash tail and a torn line, with names out of sorted order."""
    paths = []
    for i in range(9):
        events = turn_events()
        if i % 3 == 1:
            events[3]["seq"] = 99  # JSONL-7
        if i % 3 == 2:
            events = events[:-1]  # open final turn: a repair warning
        data = jsonl(events) + (b'{"type":"tu' if i == 5 else b"")
        paths.append(write(f"log-{(7 * i) % 9}.jsonl", data))
    return paths


def test_jobs_give_the_one_process_report_in_file_order(fleet, tmp_path):
    missing = str(tmp_path / "missing.jsonl")
    args = [*fleet[:4], missing, *fleet[4:]]
    for fmt in ("text", "json", "github"):
        one = cli("validate", "--format", fmt, "--level", "strict", "-j", "1", *args)
        assert one.code == 2  # the missing file
        for jobs in ("2", "3", "0"):
            many = cli("validate", "--format", fmt, "--level", "strict", "-j", jobs, *args)
            assert (many.code, many.out) == (one.code, one.out), (fmt, jobs)
    files = cli("validate", "--format", "json", "-j", "2", *args).json["files"]
    assert [f["file"] for f in files] == fleet  # the order of FILE, not of finishing
    assert [f["valid"] for f in files] == [i % 3 == 0 for i in range(9)]


def test_check_file_is_a_picklable_function_returning_plain_json(fleet, tmp_path):
    assert pickle.loads(pickle.dumps(check_file)) is check_file
    report = check_file(fleet[1], "strict")
    assert json.loads(json.dumps(report)) == report
    assert report["errors"] >= 1 and report["findings"][0]["code"]
    assert {"file", "kind", "events", "lines", "errors", "warnings", "knockOnSuppressed", "findings"} <= report.keys()
    assert check_file(fleet[0], "schema")["findings"] == []
    gone = check_file(str(tmp_path / "missing.jsonl"))
    assert set(gone) == {"file", "inputError"} and "no such file" in gone["inputError"].lower()


def test_bad_job_counts_and_dask_with_stdin_are_usage_errors(fleet):
    assert cli("validate", "-j", "-1", fleet[0]).code == 2
    result = cli("validate", "--dask", "tcp://127.0.0.1:1", "-")
    assert result.code == 2 and "standard input" in result.err


def test_a_dask_cluster_gives_the_same_report(fleet):
    distributed = pytest.importorskip("distributed", reason="the optional extra sessionspec[dask] is not installed")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=True, dashboard_address=None,
                                  silence_logs=50) as cluster:
        for fmt in ("json", "text"):
            local = cli("validate", "--format", fmt, "--level", "strict", *fleet)
            remote = cli("validate", "--format", fmt, "--level", "strict", "--dask", cluster.scheduler_address, *fleet)
            assert (remote.code, remote.out) == (local.code, local.out), fmt
