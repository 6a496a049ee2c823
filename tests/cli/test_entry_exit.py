"""The `sessionspec` entry point's exit (#24): after a validate run it freezes what the run made, so the
interpreter's exit does not collect it; the report, the exit status and every file's verdict stay those of the
in-process run, whatever the format and however many files."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import cli, jsonl, turn_events

_ENTRY = "from sessionspec.cli import main; main()"
_PROBE = """
import gc, sys
import atexit
atexit.register(lambda: sys.__stderr__.write(f"frozen:{gc.get_freeze_count() > 0}\\n"))
from sessionspec import cli
cli.main()
"""


def _logs(tmp_path: Path) -> list[str]:
    good = tmp_path / "good.jsonl"
    good.write_bytes(jsonl(turn_events()))
    bad_events = turn_events()
    bad_events[3]["data"]["step"] = "one"  # a schema finding
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(jsonl(bad_events))
    torn = tmp_path / "torn.jsonl"
    torn.write_bytes(jsonl(turn_events())[:-9])
    return [str(good), str(bad), str(torn)]


@pytest.mark.parametrize("form", [["--format", "json"], ["--format", "github"], ["-v"], ["--quiet"]])
def test_the_process_reports_what_the_in_process_run_reports(tmp_path: Path, form: list[str]) -> None:
    logs = _logs(tmp_path)
    for files in (logs, logs[:1], logs[1:2]):
        argv = ["validate", *form, "-j", "1", *files]
        inside = cli(*argv)
        done = subprocess.run([sys.executable, "-c", _ENTRY, *argv], capture_output=True, text=True, check=False)
        assert (done.returncode, done.stdout, done.stderr) == (inside.code, inside.out, inside.err)
    assert inside.code == 1


_START = """
import gc, sys
import sessionspec.validate as validate
seen = []
real = validate.run
def run(*args, **kwargs):
    seen.append((gc.isenabled(), gc.get_freeze_count()))
    return real(*args, **kwargs)
validate.run = run
import atexit
atexit.register(lambda: print(seen))
from sessionspec import cli
cli.main()
"""


def test_validate_runs_with_the_collector_on_and_nothing_frozen(tmp_path: Path) -> None:
    """The start-up imports untraversed, but the run finds the collector as it was and no frozen object (so the
    loaders' `gc_paused(long_lived=True)` still moves what they build to the oldest generation)."""
    log = _logs(tmp_path)[1]
    done = subprocess.run([sys.executable, "-c", _START, "validate", "--quiet", log], capture_output=True, text=True,
                          check=False)
    assert done.returncode == 1 and done.stdout.strip() == "[(True, 0)]", (done.stdout, done.stderr)
    off = subprocess.run([sys.executable, "-c", "import gc; gc.disable()\n" + _START, "validate", "--quiet", log],
                         capture_output=True, text=True, check=False)
    assert off.stdout.strip() == "[(False, 0)]", off.stderr


def test_only_validate_freezes(tmp_path: Path) -> None:
    log = _logs(tmp_path)[0]
    for argv, frozen in ((["validate", "--quiet", log], True), (["repair", "--help"], False), (["--version"], False)):
        done = subprocess.run([sys.executable, "-c", _PROBE, *argv], capture_output=True, text=True, check=False)
        assert f"frozen:{frozen}" in done.stderr.splitlines(), (argv, done.stderr)
