"""Hostile adapters cannot take the harness's memory, time or process table: replies and stderr are
bounded, adapter process groups are ended, hangs trip a circuit breaker, and a run that attempted
nothing is not a pass (Bowtie-style fakes that misbehave on command, see broken_adapter.py)."""

from __future__ import annotations

import os
import resource
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conformance_fakes import broken_cmd, json_case, misbehave, write_corpus
from sessionspec.cli import run as cli_run
from sessionspec.conformance import harness
from sessionspec.conformance.authoring import format_case_file
from sessionspec.conformance.cases import load_case_file
from sessionspec.conformance.harness import Implementation, SubprocessConnection, connector_for
from sessionspec.conformance.runner import KEEP_REPLY_CHARS, run_cases


def corpus(cases):
    return load_case_file(format_case_file("bounds", "bounds", cases), "bounds.json")


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


def _wait_dead(pid: int, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.05)
    return False


def _impl(*flags: str, timeout: float = 5.0, max_reply: int | None = None) -> Implementation:
    argv = shlex.split(broken_cmd(*flags))
    impl = Implementation(lambda: SubprocessConnection(argv, max_reply=max_reply), timeout=timeout)
    impl.start()
    return impl


def test_stdout_without_a_line_end_is_cut_at_the_limit_and_errored():
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with _impl(max_reply=1 << 20, timeout=30.0) as impl:
        started = time.monotonic()
        reply = impl.request("json-value", {"value": {"misbehave": "no-newline"}})
        assert reply["kind"] == "errored" and "longer than 1048576 bytes" in reply["message"]
        assert time.monotonic() - started < 10  # the limit ends it, not the timeout
        assert impl.request("json-value", {"value": 1})["kind"] == "result"  # restarted
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown_kib < 64 << 10


def test_stderr_floods_keep_only_a_bounded_tail():
    with _impl(timeout=30.0) as impl:
        reply = impl.request("json-value", {"value": {"misbehave": "stderr-flood"}})
        assert reply["kind"] == "result"  # 50 MB of stderr is drained, the reply still arrives
        conn = impl._conn
        assert isinstance(conn, SubprocessConnection)
        tail = conn.stderr_tail()
        assert len(tail) <= harness.STDERR_TAIL_BYTES and tail.endswith("last words")


def test_large_replies_are_judged_but_not_kept():
    run = run_cases(corpus([misbehave("huge-reply"), json_case(1)]), connector_for(broken_cmd()), timeout=30.0)
    huge, after = run.results
    assert huge.outcome == "errored" and after.outcome == "passed"
    assert "notKept" in huge.reply and len(str(huge.reply)) < 1000
    assert len(huge.message) < 2 * KEEP_REPLY_CHARS


def test_a_grandchild_holding_stdout_does_not_hang_the_harness_and_is_ended():
    with _impl(timeout=30.0) as impl:
        started = time.monotonic()
        reply = impl.request("json-value", {"value": {"misbehave": "grandchild"}})
        assert reply["kind"] == "errored" and "exit code 9" in reply["message"]
        assert time.monotonic() - started < 10
        assert impl.request("json-value", {"value": 2})["kind"] == "result"


def test_closing_ends_the_whole_process_group(tmp_path):
    pids = tmp_path / "pids"
    impl = _impl("--pids", str(pids))
    adapter, grandchild = map(int, pids.read_text().split())
    assert _alive(grandchild)
    started = time.monotonic()
    impl.close()
    assert time.monotonic() - started < 10
    assert _wait_dead(adapter) and _wait_dead(grandchild)


def test_an_adapter_that_hangs_on_everything_trips_the_circuit_breaker():
    run = run_cases(corpus([json_case(i) for i in range(8)]), connector_for(broken_cmd("--hang-all")), timeout=2.0)
    assert [r.outcome for r in run.results] == ["errored"] * 8
    assert [r.message.startswith("no reply within 2 s") for r in run.results] == [True] * 3 + [False] * 5
    assert all("circuit breaker open" in r.message for r in run.results[3:])
    assert run.duration < 30  # 3 timeouts and restarts, not 8 timeouts


def test_claiming_everything_and_skipping_everything_is_not_ok():
    run = run_cases(corpus([json_case(i) for i in range(3)]), connector_for(broken_cmd("--skip-all")))
    assert {r.outcome for r in run.results} == {"skipped"}
    assert run.exit_code == 1 and "no case was attempted" in run.problems[0]


def test_an_empty_vectors_directory_is_a_usage_error(tmp_path, capsys):
    empty = tmp_path / "vectors"
    empty.mkdir()
    import io

    out, err = io.StringIO(), io.StringIO()
    assert cli_run(["conformance", "--vectors", str(empty)], out, err) == 2
    assert "no case to run" in err.getvalue()
    write_corpus(tmp_path / "one", "json", [json_case(1)])
    assert cli_run(["conformance", "--vectors", str(tmp_path / "one")], io.StringIO(), io.StringIO()) == 0


def test_sigterm_to_the_harness_ends_its_adapters(tmp_path):
    pids = tmp_path / "pids"
    write_corpus(tmp_path / "v", "json", [json_case(i) for i in range(3)])
    proc = subprocess.Popen(
        [sys.executable, "-c", "from sessionspec.cli import main; main()", "conformance", "--vectors",
         str(tmp_path / "v"), "--timeout", "600", "--impl", broken_cmd("--hang-all", "--pids", str(pids))],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while not pids.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        adapter, grandchild = map(int, pids.read_text().split())
        time.sleep(0.3)  # the harness is now waiting on a hanging request
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == 128 + signal.SIGTERM
    finally:
        if proc.poll() is None:
            proc.kill()
    assert _wait_dead(adapter) and _wait_dead(grandchild)


@pytest.mark.parametrize("mode", ["big-int"])
def test_integers_beyond_the_conversion_limit_are_an_errored_case(mode):
    run = run_cases(corpus([misbehave(mode), json_case(3)]), connector_for(broken_cmd()), timeout=10.0)
    bad, after = run.results
    # the protocol line's reader refuses an integer past the 4,000 digits it holds exactly (DEC-3, issue 25)
    assert bad.outcome == "errored" and "digits is past the 4000" in bad.message and after.outcome == "passed"


def test_no_adapter_outlives_the_tests_module():
    assert not [c for c in harness._LIVE if c._proc.poll() is None]
    assert os.getpgrp()  # the harness itself stays in its own group
