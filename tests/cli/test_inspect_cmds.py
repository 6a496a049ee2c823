"""derive, fold, repair, pack, unpack, stats, header; report formats; --help examples; a real subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import cli, jsonl, turn_events
from sessionspec.cli import COMMANDS

MINE = ["validate", "derive", "fold", "repair", "pack", "unpack", "stats", "header"]


@pytest.mark.parametrize("name", MINE)
def test_help_shows_an_example(name, capsys):
    assert name in COMMANDS
    assert cli(name, "--help").code == 0
    assert "example:" in capsys.readouterr().out


def test_derive_and_fold(write):
    path = write("a.jsonl", jsonl(turn_events()))
    messages = cli("derive", path).json
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert messages[1]["provenance"] == {"provider": "p", "model": "m"}
    fold = cli("fold", path).json
    assert fold == {"nodes": [1, 7, 9], "replacements": []}


@pytest.mark.req("REPAIR-6", "REPAIR-12")
def test_repair_writes_a_loadable_copy_and_never_the_input(write, tmp_path):
    data = jsonl(turn_events(close=False)) + b'{"type":"x'
    src = write("crashed.jsonl", data)
    out = str(tmp_path / "fixed.jsonl")
    result = cli("repair", src, "-o", out)
    assert result.code == 0 and "1 closer(s)" in result.out
    assert Path(src).read_bytes() == data
    fixed = Path(out).read_bytes()
    assert fixed.startswith(data[: data.rindex(b"\n") + 1])
    assert json.loads(fixed.splitlines()[-1])["data"]["reason"] == {"kind": "interrupted"}
    assert cli("validate", "--level", "strict", out).code == 0
    refused = cli("repair", src, "-o", src)
    assert refused.code == 2 and "input file" in refused.err and Path(src).read_bytes() == data


def test_pack_unpack_round_trip(write, tmp_path):
    src = write("u.jsonl", jsonl(turn_events()))
    packed, plain = str(tmp_path / "p.jsonl"), str(tmp_path / "back.jsonl")
    assert cli("pack", src, "-o", packed).code == 0
    assert b"text-chunks" in Path(packed).read_bytes()
    assert cli("unpack", packed, "-o", plain).code == 0
    assert Path(plain).read_bytes() == Path(src).read_bytes()
    stats = cli("stats", packed, "--format", "json").json
    assert stats["packedRows"] == 1 and stats["packedEvents"] == 4 and stats["events"] == 12
    assert stats["turns"] == 1 and stats["steps"] == 1 and stats["surfaceSize"] == 3 and stats["replaces"] == 0
    assert cli("stats", packed).code == 0


def test_header(write):
    path = write("h.jsonl", jsonl(turn_events()))
    assert cli("header", path).json["id"] == "s1"
    bad = cli("header", write("n.jsonl", jsonl(turn_events(), header=None)))
    assert bad.code == 1 and "no session header" in bad.err


def test_formats_and_limits(write):
    events = turn_events()
    for e in events:
        e["time"] = -1
    path = write("bad.jsonl", jsonl(events))
    text = cli("validate", path)
    assert text.code == 1 and f"{path}:2: error [SEED_ENVELOPE SEED-3] seq 0" in text.out
    gh = cli("validate", "--format", "github", "--level", "load", path)
    assert gh.out.startswith(f"::error file={path},line=2,title=SEED_ENVELOPE SEED-3::seq 0 at /time: ")  # located at the member at fault
    limited = cli("validate", "--format", "json", "--max-findings", "2", path).json["files"][0]
    assert len(limited["findings"]) == 2 and limited["truncated"] and limited["errors"] > 2
    assert cli("validate", "--quiet", path).out == ""


def test_many_files_globs_directories_and_stdin(tmp_path, monkeypatch):
    (tmp_path / "d" / "e").mkdir(parents=True)
    (tmp_path / "d" / "e" / "one.jsonl").write_bytes(jsonl(turn_events()))
    (tmp_path / "d" / "two.jsonl").write_bytes(jsonl(turn_events()))
    (tmp_path / "d" / "skip.txt").write_text("not a log")
    result = cli("validate", "--format", "json", str(tmp_path / "d"), str(tmp_path / "d" / "*.jsonl"))
    assert result.code == 0 and len(result.json["files"]) == 3
    import io

    monkeypatch.setattr(sys, "stdin", type("S", (), {"buffer": io.BytesIO(jsonl(turn_events()))})())
    stdin = cli("validate", "-")
    assert stdin.code == 0 and "<stdin>: ok" in stdin.out


def test_through_a_subprocess(write):
    path = write("p.jsonl", jsonl(turn_events()) + b"{")
    proc = subprocess.run([sys.executable, "-m", "sessionspec.validate", "--format", "json", path],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr  # a torn tail: ok, needs repair (DEC-25)
    assert json.loads(proc.stdout)["files"][0]["findings"][0]["code"] == "JSONL_TORN_TAIL"
    assert "\r" not in proc.stderr  # no progress bar in a pipe
