"""`sessionspec validate`, the inspect commands and `repair` on every storage form, hostile ones included.

Compressed fixtures are written by the zstd command line tool, databases by
Python's sqlite3: each must validate as the same logical log as its raw JSONL
twin. Hostile files get a located finding and an exit code, never a
traceback, and are never modified.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import subprocess
from pathlib import Path

import pytest
import zstandard
from cli_helpers import HEADER, cli, peak_run, turn_events
from sessionspec.reference.jsonl import encode_records
from sessionspec.reference.zstd_frames import compress_frame, scan_frames
from storage_fixtures import cli_frame, open_turn, write_cli_zstd, write_db, write_raw

BATCHES = [turn_events(), turn_events(2, 12)]


def digest(*paths: Path) -> list[str]:
    return [hashlib.sha256(p.read_bytes()).hexdigest() for p in paths if p.is_file()]


def check(path: Path, *extra: str, expect: int):
    """Run validate --format json; assert the exit code, no traceback and an unchanged input."""
    siblings = [path, Path(f"{path}-wal")]
    before = digest(*siblings)
    result = cli("validate", "--format", "json", *extra, str(path))
    assert "Traceback" not in result.out + result.err
    assert result.code == expect, result.out + result.err
    assert digest(*siblings) == before
    return result


def found(result) -> list[dict]:
    return [f for entry in result.json["files"] for f in entry["findings"]]


def twins(tmp_path: Path, batches=BATCHES) -> tuple[Path, Path, Path]:
    header = {k: v for k, v in HEADER.items() if k != "type"}
    return (write_raw(tmp_path / "session.jsonl", batches, header),
            write_cli_zstd(tmp_path / "session.jsonl.zstd", batches, header),
            write_db(tmp_path / "sessions.db", batches, header))


def test_the_three_forms_validate_as_the_same_logical_log(tmp_path: Path) -> None:
    raw, packed, db = twins(tmp_path)
    reports = [check(p, "--level", "strict", expect=0).json["files"] for p in (raw, packed, db)]
    assert [[(f["events"], f["valid"]) for f in r] for r in reports] == [[(24, True)]] * 3
    assert [r[0]["kind"] for r in reports] == ["jsonl", "jsonl-zstd", "sqlite"]
    assert reports[2][0]["file"] == f"{db}#s1"
    derived = [cli("derive", "--compact", str(p)).out for p in (raw, packed, db)]
    assert derived[0] == derived[1] == derived[2] and derived[0].startswith("[")


def test_stats_names_the_stored_form_and_its_size(tmp_path: Path) -> None:
    raw, packed, db = twins(tmp_path)
    stats = [json.loads(cli("stats", "--format", "json", str(p)).out) for p in (raw, packed, db)]
    assert [(s["form"], s["events"]) for s in stats] == [(f, 24) for f in ("jsonl", "jsonl-zstd", "sqlite")]
    assert stats[0]["bytes"] == stats[1]["bytes"]  # the artifact's logical JSONL, not its compressed size
    assert [s["storedBytes"] for s in stats] == [raw.stat().st_size, packed.stat().st_size, None]
    text = cli("stats", str(packed)).out
    assert f"stored as jsonl-zstd in {packed.stat().st_size} bytes" in text


def test_the_same_defect_is_found_in_every_form_and_located_in_its_terms(tmp_path: Path) -> None:
    bad = [turn_events(), turn_events(2, 12)]
    bad[1][1]["data"]["content"] = "not a list"  # schema violation at seq 13
    raw, packed, db = twins(tmp_path, bad)
    results = [found(check(p, expect=1)) for p in (raw, packed, db)]
    assert {(f["code"], f["seq"]) for f in results[0]} == {(f["code"], f["seq"]) for f in results[1]} \
        == {(f["code"], f["seq"]) for f in results[2]}
    assert all(f["frame"] == 2 and f["line"] == 12 for f in results[1])  # packed chunks: logical line 12, frame 2
    assert all("line" not in f and f["file"] == f"{db}#s1" for f in results[2])


def test_directories_are_searched_for_compressed_artifacts_and_stores_too(tmp_path: Path) -> None:
    twins(tmp_path)
    files = check(tmp_path, expect=0).json["files"]
    assert sorted(Path(f["file"]).name for f in files) == ["session.jsonl", "session.jsonl.zstd", "sessions.db#s1"]


@pytest.mark.req("ZSTD-7")
def test_truncated_final_frame_is_a_located_crash_tail(tmp_path: Path) -> None:
    path = write_cli_zstd(tmp_path / "t.jsonl.zstd", [turn_events()])
    path.write_bytes(path.read_bytes() + cli_frame(encode_records(open_turn(12)))[:-6])
    report = check(path, expect=0)  # a crash tail every load cuts: ok, needs repair (DEC-25)
    (tail,) = found(report)
    assert tail["code"] == "JSONL_TORN_TAIL" and tail["severity"] == "warning" and tail["frame"] == 2
    assert report.json["files"][0]["needsRepair"] and report.json["summary"]["needsRepair"] == 1
    assert check(path, "--fail-on", "repair", expect=1).json["summary"]["invalid"] == 1


@pytest.mark.req("ZSTD-3")
def test_flipped_checksum_byte_names_the_frame(tmp_path: Path) -> None:
    path = write_cli_zstd(tmp_path / "f.jsonl.zstd", BATCHES)
    data = bytearray(path.read_bytes())
    data[scan_frames(bytes(data)).frames[1][1] - 2] ^= 0x10
    path.write_bytes(bytes(data))
    (corrupt,) = found(check(path, expect=1))
    assert corrupt["code"] == "ZSTD_FRAME_CORRUPT" and corrupt["frame"] == 1 and corrupt["requirement"] == "ZSTD-3"


@pytest.mark.req("ZSTD-2")
def test_frame_truncated_in_the_middle_of_the_file_is_invalid_framing(tmp_path: Path) -> None:
    frames = [cli_frame(encode_records(b)) for b in BATCHES]
    path = write_cli_zstd(tmp_path / "m.jsonl.zstd", [])
    path.write_bytes(path.read_bytes() + frames[0][:-20] + frames[1])
    codes = {f["code"] for f in found(check(path, expect=1))}
    assert codes & {"ZSTD_FRAME_INVALID", "ZSTD_FRAME_CORRUPT"}


@pytest.mark.req("ZSTD-4")
def test_decompression_bomb_is_refused_with_bounded_memory(tmp_path: Path) -> None:
    chunker = zstandard.ZstdCompressor(write_checksum=True, write_content_size=False).chunker(chunk_size=1 << 20)
    zeros = b"\0" * (64 << 20)
    parts = [p for _ in range(32) for p in chunker.compress(zeros)] + list(chunker.finish())  # 2 GiB of plaintext
    path = tmp_path / "bomb.jsonl.zstd"
    path.write_bytes(compress_frame(json.dumps(HEADER).encode() + b"\n") + b"".join(parts))
    assert path.stat().st_size < 200_000
    before = digest(path)
    code, peak_kib, out = peak_run("validate", "--format", "json", str(path), timeout=120)
    assert code == 1 and out.count("ZSTD_TOO_LARGE") == 1
    assert peak_kib < 700 * 1024  # the plaintext budget plus the interpreter, never the 2 GiB plaintext
    assert digest(path) == before


@pytest.mark.req("ZSTD-2")
def test_non_zstd_file_named_zstd_is_read_as_text_with_a_warning(tmp_path: Path) -> None:
    raw = write_raw(tmp_path / "x.jsonl", BATCHES, {k: v for k, v in HEADER.items() if k != "type"})
    fake = tmp_path / "session.jsonl.zstd"
    fake.write_bytes(raw.read_bytes())
    (warning,) = found(check(fake, expect=1))
    assert warning["code"] == "ZSTD_FRAME_INVALID" and warning["severity"] == "warning"
    garbage = tmp_path / "garbage.zstd"
    # not a JSON text either: random bytes opening with `[` (1 run in 256) would be read as a torn JSON array
    garbage.write_bytes(b"\x80" + os.urandom(4095).replace(b"\n", b" "))
    assert {"ZSTD_FRAME_INVALID", "JSONL_NO_HEADER"} <= {f["code"] for f in found(check(garbage, expect=1))}


@pytest.mark.req("SQLITE-1")
def test_database_of_another_application(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    db = sqlite3.connect(path)
    db.executescript("CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('hello');")
    db.close()
    (foreign,) = found(check(path, expect=1))
    assert foreign["code"] == "SQLITE_FOREIGN" and foreign["file"] == str(path)


@pytest.mark.req("SQLITE-8")
def test_locked_database_is_unreadable_input_not_a_hang(tmp_path: Path) -> None:
    _, _, path = twins(tmp_path)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        result = check(path, expect=2)
        assert "SQLITE_LOCKED" in result.json["inputErrors"][0]
    finally:
        holder.execute("ROLLBACK")
        holder.close()


@pytest.mark.req("SQLITE-8")
def test_wal_database_with_uncheckpointed_commits_is_read_and_left_alone(tmp_path: Path) -> None:
    header = {k: v for k, v in HEADER.items() if k != "type"}
    path = write_db(tmp_path / "wal.db", [turn_events()], header, journal_mode="wal")
    writer = sqlite3.connect(path)
    writer.execute("PRAGMA wal_autocheckpoint = 0")
    rows = encode_records(turn_events(2, 12), pack=False).splitlines()
    for line in rows:
        event = json.loads(line)
        writer.execute("INSERT INTO events VALUES ('s1', ?, ?, ?, ?, ?, ?)", (
            event["seq"], event["type"], event["time"], json.dumps(event["data"]),
            json.dumps(event["sourceEventSeqs"]) if "sourceEventSeqs" in event else None,
            json.dumps(event["surfaceOp"]) if "surfaceOp" in event else None))
    writer.commit()
    assert Path(f"{path}-wal").stat().st_size > 0
    try:
        (entry,) = check(path, expect=0).json["files"]
        assert entry["events"] == 24
    finally:
        writer.close()


@pytest.mark.req("SQLITE-5")
def test_row_gap_is_located_by_session_and_seq(tmp_path: Path) -> None:
    _, _, path = twins(tmp_path)
    db = sqlite3.connect(path)
    db.execute("DELETE FROM events WHERE seq = 5")
    db.commit()
    db.close()
    gap = [f for f in found(check(path, expect=1)) if f["severity"] == "error"]
    assert gap[0]["file"] == f"{path}#s1" and gap[0]["seq"] == 6 and gap[0]["code"] == "JSONL_CORRUPT"


def test_every_session_is_checked_and_session_selects_one(tmp_path: Path) -> None:
    _, _, path = twins(tmp_path)
    with_second = {k: v for k, v in HEADER.items() if k != "type"} | {"id": "s2"}
    write_db(path, [turn_events(1, 0, close=False)], with_second)
    files = check(path, "--fail-on", "repair", expect=1).json["files"]
    assert [(f["file"].rpartition("#")[2], f["valid"]) for f in files] == [("s1", True), ("s2", False)]
    assert [f["needsRepair"] for f in check(path, expect=0).json["files"]] == [False, True]
    assert [f["file"] for f in check(path, "--session", "s1", expect=0).json["files"]] == [f"{path}#s1"]
    assert check(path, "--session", "nope", expect=2).json["inputErrors"]
    assert cli("stats", str(path)).code == 2  # two sessions: the inspect commands need --session
    assert cli("stats", str(path), "--session", "s2").code == 0


def test_repair_keeps_each_form_and_touches_the_input_only_in_place(tmp_path: Path) -> None:
    crashed = [turn_events(), open_turn(12)]
    raw, packed, db = twins(tmp_path, crashed)
    packed.write_bytes(packed.read_bytes() + cli_frame(encode_records(open_turn(14, 3)))[:-5])
    for path in (raw, packed, db):
        before = digest(path)
        target = tmp_path / f"fixed-{path.name}"
        result = cli("repair", str(path), "-o", str(target))
        assert result.code == 0, result.err
        assert digest(path) == before
        assert check(target, expect=0).json["files"][0]["events"] == 16
    subprocess.run(["zstd", "-t", "-q", str(tmp_path / "fixed-session.jsonl.zstd")], check=True)
    assert cli("repair", str(db), "--in-place").code == 0
    assert check(db, expect=0).json["files"][0]["events"] == 16
    assert cli("repair", str(db), "-o", str(db)).code == 2  # never the input through -o


def test_hostile_session_ids_in_a_store_are_escaped_on_output(tmp_path: Path) -> None:
    header = {k: v for k, v in HEADER.items() if k != "type"} | {"id": "evil\n\x1b[31mid"}
    path = write_db(tmp_path / "evil.db", [turn_events(1, 0, close=False)], header)
    result = cli("validate", str(path))
    assert result.code == 0 and "Traceback" not in result.out + result.err  # ok, needs repair (DEC-25)
    assert "ok, needs repair" in result.out
    assert "\x1b" not in result.out and all(line.startswith(str(path)) or line[0].isdigit()
                                            for line in result.out.splitlines())


@pytest.mark.parametrize("command", ["validate", "repair"])
def test_a_database_of_the_published_layout_is_read_at_its_layout(tmp_path: Path, command: str) -> None:
    """A layout-17 store (the published revision's SQLite layout) is opened at the layout its
    user_version names, not refused as another version of the default revision's layout (SQLITE-1)."""
    from sessionspec.reference.jsonl import read_artifact
    from sessionspec.reference.sqlite_store import SqliteStore

    artifact = read_artifact(Path(__file__).parents[1] / "real_logs" / "logs" / "published-chat.jsonl")
    db = tmp_path / "published.db"
    with SqliteStore.create(db, revision="b150a551b8", journal_mode="delete") as store:
        store.append(dict(artifact.header), [dict(e) for e in artifact.events])
    if command == "validate":
        result = check(db, "--level", "strict", expect=0)
        assert [(f["events"], f["valid"], f["revision"]) for f in result.json["files"]] == [
            (len(artifact.events), True, "b150a551b8")]
    else:
        out = tmp_path / "repaired.db"
        result = cli("repair", str(db), "-o", str(out))
        assert result.code == 0 and "Traceback" not in result.out + result.err, result.out + result.err
        with SqliteStore.open(out, revision="b150a551b8") as store:
            assert list(store.read_session(artifact.header["id"]).events) == list(artifact.events)
