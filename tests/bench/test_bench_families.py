"""Smoke test of bench/bench_families.py (issue 24's family matrix): the pieces fit, the counts are real.

Speed is measured by hand (`python bench/bench_families.py --write-doc`); this checks on small logs that
every family is written in both revisions, that the package writes a log the reference reads back with
the same events, that the cliff counter finds fastlog's batch groups (a rename there would silently
count zero), and that the report names the worst family of each target.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"


@pytest.fixture(scope="module")
def families() -> Any:
    """bench/bench_families.py under a unique module name (bench/ is a folder of scripts, not a package)."""
    sys.path.insert(0, str(BENCH))
    spec = importlib.util.spec_from_file_location("sessionspec_bench_families", BENCH / "bench_families.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_family_in_both_revisions_and_the_cliff_counter(families: Any, tmp_path: Path) -> None:
    files = families.prepare(["mix", "chat"], 400, tmp_path, package_written=False)
    assert {(r["family"], r["revision"], r["form"]) for r in files} == {
        (family, revision, form) for family in ("mix", "chat") for revision in ("pinned", "published")
        for form in ("lines", "packed")}
    lines = next(r for r in files if (r["family"], r["revision"], r["form"]) == ("mix", "pinned", "lines"))
    assert lines["lines"] == lines["events"] + 1  # the header line, then one event a line
    counts = families.fallback_counts(lines["path"])
    assert counts["group"] > 0  # the fast pass proves the pinned revision: it read batch groups
    assert 0 <= counts["line"] <= lines["lines"]


def test_other_writers_write_the_same_events_in_their_layouts(families: Any, tmp_path: Path) -> None:
    from sessionspec.reference.jsonl import read_artifact

    files = families.add_writer_forms(families.prepare(["chat"], 300, tmp_path, package_written=False), tmp_path)
    assert families.add_writer_forms(list(files), tmp_path) == files  # (added once)
    by = {(r["revision"], r["form"]): r for r in files}
    for revision in ("pinned", "published"):
        lines = Path(by[(revision, "lines")]["path"]).read_bytes()
        for writer in families.WRITERS:
            text = Path(by[(revision, writer)]["path"]).read_bytes()
            assert text != lines and text.count(b"\n") == lines.count(b"\n")
            assert read_artifact(by[(revision, writer)]["path"]).events == read_artifact(by[(revision, "lines")]["path"]).events
    assert b'": "' in Path(by[("pinned", "python")]["path"]).read_bytes()


def test_report_names_the_worst_family(families: Any) -> None:
    files = [{"family": f, "revision": "pinned", "form": "lines", "events": 10, "bytes": 1000, "lines": 11,
              "validate_cpu": v, "parse_cpu": 0.1, "validate_ratio": v / 0.1, "validate_rss": 3e7,
              "groups": 1, "line_fallbacks": 0} for f, v in (("mix", 0.15), ("chat", 0.3))]
    ops = [{"family": f, "op": "fold", "py-pinned_cpu": p, "node_cpu": 1.0, "py-pinned_ratio": p}
           for f, p in (("mix", 0.5), ("tools", 1.5))]
    args = argparse.Namespace(events=10, runs=1, ops="fold")
    text = families.render(files, ops, args, (1.0, 1.0, 1.0), 0.1)
    assert "| validate, whole process / parse-only, <= 2.0 (moonshot 1.5) | chat pinned lines | 3.00x | **not met** |" in text
    assert "| fold, reference / package, <= 1.0 | tools (py-pinned) | 1.50x | **not met** |" in text


def test_the_package_writes_a_log_the_reference_reads(families: Any, tmp_path: Path, node_adapter_dir: Path) -> None:
    from sessionspec.reference.jsonl import read_artifact

    assert node_adapter_dir == families.ADAPTER_DIR
    files = families.prepare(["tools"], 300, tmp_path, package_written=True)
    written = next(r for r in files if r["form"] == "pkgw")
    generated = next(r for r in files if (r["revision"], r["form"]) == ("published", "packed"))
    assert written["events"] == generated["events"]
    events = read_artifact(written["path"]).events
    ours = read_artifact(generated["path"]).events
    assert [(e["type"], e["seq"]) for e in events] == [(e["type"], e["seq"]) for e in ours]
    assert [e["data"] for e in events] == [e["data"] for e in ours]  # the same payloads; times are the package's
