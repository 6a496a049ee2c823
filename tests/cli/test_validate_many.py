"""`validate` over many files: `-j N` processes and a Dask cluster give the one-process report, in FILE order."""

from __future__ import annotations

import json
import multiprocessing
import os
import pickle
import signal

import pytest
from cli_helpers import cli, jsonl, turn_events
from sessionspec.validate import check_file, check_stored


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
    assert [f["valid"] for f in files] == [i % 3 != 1 for i in range(9)]  # crash tails: ok, needs repair (DEC-25)
    assert [f["needsRepair"] for f in files] == [i % 3 == 2 for i in range(9)]


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


def test_a_worker_death_in_jobs_is_one_files_error_and_keeps_the_others(tmp_path, monkeypatch):
    """A worker killed while checking one file (the OOM killer, a signal) used to lose every result
    (BrokenProcessPool, empty stdout): that file is an input error and every other file keeps its verdict."""
    import sessionspec.validate as validate_module

    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("the patched check reaches the workers only through fork")
    for name in ("a", "b", "kill", "c", "d"):
        (tmp_path / f"{name}.jsonl").write_bytes(jsonl(turn_events()))

    monkeypatch.setattr(validate_module, "check_stored", _dies_on_kill)
    result = cli("validate", "-j", "2", "--format", "json", str(tmp_path))
    assert result.code == 2, result.err
    report = result.json
    assert sorted(os.path.basename(f["file"]) for f in report["files"]) == [f"{n}.jsonl" for n in "abcd"]
    assert any("kill.jsonl" in problem and "worker process" in problem for problem in report["inputErrors"]), report


def _dies_on_kill(path, *args, **kwargs):
    """check_stored, except that the worker checking kill.jsonl is killed (a module function: it is pickled)."""
    if path.endswith("kill.jsonl"):
        os.kill(os.getpid(), signal.SIGKILL)
    return check_stored(path, *args, **kwargs)
