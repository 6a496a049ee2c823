"""`--max-findings N` bounds what is kept, not only what is shown: a log with a defect on every line is
checked with at most ~2N findings held at any time (`FindingList`), on every reader path (JSONL, JSON
array, compressed artifact, SQLite store, ``-j``) and level, and the report counts the rest exactly."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import cli, jsonl, peak_run
from sessionspec import validate
from sessionspec.reference import Finding, FindingList
from storage_fixtures import HEADER as STORE_HEADER
from storage_fixtures import write_cli_zstd, write_db

T = 1767225600000
N = 300  # well over what the cap lets a list hold (2 * KEEP + 64)
KEEP = 10


def _events(n: int, marker: bool = False) -> list[dict[str, Any]]:
    """A turn of ``n`` user messages; without ``marker`` each lacks its surfaceOp (SURF-3: one finding each)."""
    events: list[dict[str, Any]] = [{"type": "turn/start", "seq": 0, "time": T,
                                     "data": {"turn": 1, "trigger": {"kind": "message", "source": {"kind": "user"}}}}]
    for k in range(n):
        event = {"type": "user/message", "seq": k + 1, "time": T,
                 "data": {"content": [{"type": "text", "text": "m"}], "source": {"kind": "user"}}}
        if marker:
            event["surfaceOp"] = "append"
        events.append(event)
    events.append({"type": "turn/end", "seq": n + 1, "time": T, "data": {"turn": 1, "reason": {"kind": "completed"}}})
    return events


def _write(form: str, tmp_path: Path) -> Path:
    if form == "jsonl":
        path = tmp_path / "log.jsonl"
        path.write_bytes(jsonl(_events(N)))
    elif form == "json":
        path = tmp_path / "log.json"
        path.write_text(json.dumps(_events(N)))
    elif form == "zstd":
        events = _events(N)
        path = write_cli_zstd(tmp_path / "log.jsonl.zstd", [events[i : i + 500] for i in range(0, len(events), 500)],
                              STORE_HEADER)
    else:
        path = write_db(tmp_path / "store.db", [_events(N, marker=True)], STORE_HEADER)
        with sqlite3.connect(path) as db:
            db.execute("UPDATE events SET surface_op = NULL WHERE type = 'user/message'")
    return path


@pytest.fixture
def held(monkeypatch) -> list[int]:
    """The largest number of findings any `FindingList` held (a spy on every append)."""
    most = [0]
    append = FindingList.append

    def spy(self: FindingList, finding: Finding) -> None:
        append(self, finding)
        most[0] = max(most[0], len(self))

    monkeypatch.setattr(FindingList, "append", spy)
    return most


@pytest.mark.parametrize("level", ["load", "schema", "strict"])
@pytest.mark.parametrize("form", ["jsonl", "json", "zstd", "sqlite"])
def test_the_cap_bounds_what_is_kept_and_counts_the_rest(tmp_path, held, form, level):
    path = _write(form, tmp_path)
    result = cli("validate", str(path), "--format", "json", "--level", level, "--max-findings", str(KEEP))
    assert result.code == 1
    (entry,) = result.json["files"]
    surf = [f for f in entry["findings"] if f["code"] == "SURFACE_MARKER_MISSING"]
    assert len(entry["findings"]) == KEEP and len(surf) >= KEEP - 2  # line-ordered: the first events' findings
    assert entry["errors"] >= N and entry["notShown"] == entry["errors"] + entry["warnings"] - KEEP
    assert entry["truncated"]
    assert held[0] <= 2 * KEEP + 64, held[0]
    everything = cli("validate", str(path), "--format", "json", "--level", level, "--max-findings", "0")
    (full,) = everything.json["files"]
    assert (full["errors"], full["warnings"]) == (entry["errors"], entry["warnings"])
    assert full["findings"][:KEEP] == entry["findings"]  # the same first findings, the same counts
    assert len(full["findings"]) == full["errors"] + full["warnings"] and not full["truncated"]


def test_check_stored_keeps_the_cap_for_workers(tmp_path, held):
    """What `-j` and `--dask` workers run returns at most `keep` findings, every one counted."""
    for form in ("jsonl", "zstd", "sqlite"):
        (report,) = validate.check_stored(str(_write(form, tmp_path)), "schema", keep=KEEP)
        assert len(report["findings"]) == KEEP and report["errors"] == N, form
    assert held[0] <= 2 * KEEP + 64


def test_parallel_files_report_the_same_counts(tmp_path):
    one, two = tmp_path / "a", tmp_path / "b"
    one.mkdir()
    two.mkdir()
    paths = [str(_write("jsonl", one)), str(_write("zstd", two))]
    serial = cli("validate", *paths, "--format", "json", "--max-findings", "5", "-j", "1").json
    parallel = cli("validate", *paths, "--format", "json", "--max-findings", "5", "-j", "2").json
    assert serial == parallel
    assert [(f["errors"], f["notShown"], len(f["findings"])) for f in parallel["files"]] == [(N, N - 5, 5)] * 2


def test_text_and_github_reports_say_how_many_are_not_shown(tmp_path):
    path = _write("jsonl", tmp_path)
    for fmt in ("text", "github"):
        result = cli("validate", str(path), "--format", fmt, "--max-findings", "3")
        assert f"… {N - 3} more finding(s) not shown (--max-findings)" in result.out, fmt


def test_stats_and_pack_count_every_finding(tmp_path, held):
    """The reader's own findings (a record without seq on every line) are counted in full by the
    commands that only read, with at most `inspect_cmds.KEEP_FINDINGS` of them kept."""
    events = _events(0, marker=True)
    lines = jsonl(events).split(b"\n")
    path = tmp_path / "log.jsonl"
    path.write_bytes(b"\n".join(lines[:2]) + b"\n" + b"{}\n" * 1000 + lines[2] + b"\n")
    stats = cli("stats", str(path), "--format", "json")
    assert json.loads(stats.out)["errors"] == 1000
    array = tmp_path / "log.json"
    array.write_text(json.dumps([events[0]] * 1001))  # 1,000 more records of seq 0
    pack = cli("pack", str(array), "-o", str(tmp_path / "out.jsonl"))
    assert pack.code == 1 and "… 995 more" in pack.err, pack.err
    assert 0 < held[0] <= 2 * 100 + 64


def test_a_million_defective_lines_validate_in_bounded_memory(tmp_path):
    """1,000,000 lines that each are a finding (a record without seq inside the committed region): the
    peak memory stays within 150 MB of a clean run's (keeping every finding took 630 MB), and the
    report counts every one."""
    lines = 1_000_000
    events = _events(0, marker=True)
    head = jsonl(events[:1]).split(b"\n")
    path = tmp_path / "million.jsonl"
    path.write_bytes(head[0] + b"\n" + head[1] + b"\n" + b"{}\n" * lines + jsonl([events[1]], header=None))
    clean = tmp_path / "clean.jsonl"
    clean.write_bytes(jsonl(_events(3, marker=True)))
    command = ["validate", "--format", "json", "--max-findings", "10"]
    code, base, _ = peak_run(*command, str(clean))
    assert code == 0
    code, peak, out = peak_run(*command, str(path))
    assert code == 1
    (entry,) = json.loads(out)["files"]
    assert (entry["errors"], entry["notShown"], len(entry["findings"])) == (lines, lines - 10, 10)
    assert peak - base < 150 * 1024, (base, peak)
