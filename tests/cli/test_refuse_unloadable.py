"""A log whose committed region a loader refuses is never shown as if it loaded (DEC-24, issue 25): `header`,
`stats`, `derive`, `fold` and `repair` exit 1 with the located finding `validate --level load` gives, in every
storage form; a crash tail every load repairs stays "ok, needs repair" (DEC-25): those commands exit 0."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
import zstandard
from cli_helpers import cli
from sessionspec.reference.jsonl import encode_records
from sessionspec.reference.zstd_frames import compress_frame
from storage_fixtures import header_bytes, one_turn, open_turn, write_db

COMMANDS = ("header", "stats", "derive", "fold", "repair")


def _log(form: str, folder: Path, damaged: bool) -> Path:
    """A closed turn then a crashed one; ``damaged``: an unreadable line inside the closed turn."""
    events = [*one_turn(), *open_turn(6)]
    if form == "sqlite":
        path = write_db(folder / "log.db", [events])
        if damaged:
            db = sqlite3.connect(path)
            db.execute("UPDATE events SET data = '{not json' WHERE seq = 2")
            db.commit()
            db.close()
        return path
    body = encode_records(events[:3]) + (b"{not json\n" if damaged else b"") + encode_records(events[3:])
    if form == "zstd":
        path = folder / "log.jsonl.zstd"
        path.write_bytes(compress_frame(header_bytes()) + zstandard.ZstdCompressor(write_checksum=True).compress(body))
        return path
    path = folder / "log.jsonl"
    path.write_bytes(header_bytes() + body)
    return path


def _argv(command: str, path: Path, folder: Path) -> list[str]:
    return [command, str(path), *(["-o", str(folder / f"out{path.suffix}")] if command == "repair" else [])]


@pytest.mark.parametrize("form", ["jsonl", "zstd", "sqlite"])
@pytest.mark.parametrize("command", COMMANDS)
def test_a_corrupt_committed_region_is_refused_with_the_located_finding(command: str, form: str,
                                                                        tmp_path: Path) -> None:
    path = _log(form, tmp_path, damaged=True)
    load = cli("validate", "--level", "load", str(path))
    assert load.code == 1, load.out
    located = next(line for line in load.out.splitlines() if ": error [" in line)
    result = cli(*_argv(command, path, tmp_path))
    assert result.code == 1, (result.out, result.err)
    assert located.strip() in result.err and "Traceback" not in result.err, (located, result.err)
    assert "refuses the log" in result.err
    if command in ("derive", "fold", "repair"):  # nothing printed as if it loaded, nothing written
        assert result.out == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]


@pytest.mark.parametrize("form", ["jsonl", "zstd", "sqlite"])
@pytest.mark.parametrize("command", COMMANDS)
def test_a_crash_tail_that_a_load_repairs_is_not_refused(command: str, form: str, tmp_path: Path) -> None:
    path = _log(form, tmp_path, damaged=False)
    assert "ok, needs repair" in cli("validate", str(path)).out
    result = cli(*_argv(command, path, tmp_path))
    assert result.code == 0, (result.out, result.err)
    assert "error" not in result.err
