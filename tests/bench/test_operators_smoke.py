"""Smoke test of bench/operators.py and its helpers (bench_memory, bench_many): correctness, not speed.

The measurements themselves run by hand (`python bench/operators.py`, or as part of
`python bench/run.py`); this checks that the logs they write are valid, that a child's CPU time
and peak memory are read, and that the report names every target of issue 13.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest
from sessionspec.validate import check_file

BENCH = Path(__file__).resolve().parents[2] / "bench"


@pytest.fixture(scope="module")
def operators() -> Any:
    spec = importlib.util.spec_from_file_location("sessionspec_bench_operators", BENCH / "operators.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # puts bench/ on sys.path for its sibling modules
    return module


def test_logs_written_turn_by_turn_are_valid(operators: Any, tmp_path: Path) -> None:
    from bench_many import write_fleet
    from bench_memory import write_log

    events, size = write_log(tmp_path / "p.jsonl", 300, packed=True)
    assert events >= 300 and size == (tmp_path / "p.jsonl").stat().st_size
    report = check_file(str(tmp_path / "p.jsonl"), "strict")
    assert report["findings"] == [] and report["events"] == events
    events, size = write_log(tmp_path / "u.jsonl", 0, packed=False, min_bytes=40_000)
    assert size >= 40_000 and check_file(str(tmp_path / "u.jsonl"), "strict")["findings"] == []
    assert write_fleet(tmp_path / "fleet", 3, 50) > 150
    assert [check_file(str(p))["findings"] for p in sorted((tmp_path / "fleet").glob("*.jsonl"))] == [[], [], []]


def test_children_are_measured_and_every_target_is_reported(operators: Any) -> None:
    quick = operators.alternate({"a": [sys.executable, "-c", "pass"], "b": [sys.executable, "-c", "x = [0] * 10**7"]},
                                runs=1, warmup=0)
    assert quick["b"]["rss"][0] > 80e6  # a list of 10^7 references
    assert quick["b"]["cpu"][0] > 0 and all(t["wall"][0] > 0 for t in quick.values())
    times = {"wall": [0.5], "cpu": [0.05], "rss": [30e6]}
    results = {
        "startup": {"validate": times, "python": {"wall": [0.1], "cpu": [0.02], "rss": [10e6]}},
        "whole": {"events": 10, "bytes": 1000, "times": {"validate": times, "parse": times}},
        "memory": [{"log": "x", "events": 10, "bytes": 1000, "level": "schema", "wall": 1.0, "cpu": 1.0, "rss": 400e6}],
        "floor_rss": 30e6,
        "fleet": {"files": 10, "bytes": 1000, "times": {"-j 1": times, "-j 2": times}},
    }
    block = operators.render(results, [(100, 2.5)])
    assert block.startswith(operators.BEGIN) and block.endswith(operators.END)
    assert "one-event log" in block and "one per line" in block and "packed `mix` logs" in block
    assert "1 GB in < 300 MB RSS" in block and "files per second" in block
    assert block.count("**not met**") == 2  # the in-process ratio (2.5) and the memory (400 MB); start-up is met


def test_an_installed_copy_of_a_tree_is_what_its_processes_import(operators: Any, tmp_path: Path) -> None:
    """`--against`: each revision runs from its own copy, laid out as installed, not through the editable finder."""
    import os
    import subprocess

    site = operators.installed_copy(operators.ROOT, tmp_path / "site")
    probe = "import sessionspec.cli, sessionspec.reference.session as s; print(sessionspec.cli.__file__, s.__file__)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True,
                          env={**os.environ, "PYTHONPATH": str(site)})
    assert all(path.startswith(str(site)) for path in done.stdout.split())
    assert not list(site.rglob("node_modules"))
