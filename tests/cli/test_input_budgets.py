"""One budget per input (issue 25): the zstd plaintext budget (ZSTD-4) holds for a whole artifact or store, not per
frame or row, and memory follows the budget, not the plaintext's shape. Every command runs in a child under the
hostile limits (20 s CPU, 1 GB resident: hostile_limits)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
import zstandard
from hostile_limits import run_limited
from sessionspec.reference.jsonl import encode_records
from sessionspec.reference.sqlite_store import SqliteStore
from sessionspec.reference.zstd_frames import BUDGET_FLOOR, VALUE_FLOOR, compress_frame
from storage_fixtures import HEADER, header_bytes, one_turn, open_turn

#: blank lines inside the committed region: within the plaintext budget, ~100 M lines (one list slot each was 800 MB)
BLANK_LINES = 100 << 20


def _commands(path: Path, out: Path) -> list[list[str]]:
    return [["validate", str(path)], ["validate", "--exact", "--format", "json", str(path)], ["header", str(path)],
            ["stats", str(path)], ["derive", str(path)], ["fold", str(path)], ["repair", str(path), "-o", str(out)]]


@pytest.fixture(scope="module", params=["zstd", "jsonl"])
def blank_bomb(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """~100 M blank lines between a turn's records: a zstd artifact of a few KB (its second frame inflates to
    them) and a raw file of 100 MB."""
    events = one_turn()
    body = encode_records(events[:5]) + b"\n" * BLANK_LINES + encode_records(events[5:])
    folder = tmp_path_factory.mktemp("blank")
    if request.param == "jsonl":
        path = folder / "blank.jsonl"
        path.write_bytes(header_bytes() + body)
        return path
    path = folder / "blank.jsonl.zstd"
    path.write_bytes(compress_frame(header_bytes()) + zstandard.ZstdCompressor(write_checksum=True).compress(body))
    assert path.stat().st_size < 64 << 10
    return path


@pytest.mark.parametrize("command", range(7), ids=["validate", "validate-exact", "header", "stats", "derive", "fold",
                                                   "repair"])
def test_a_blank_line_bomb_costs_the_budget_not_a_slot_per_line(blank_bomb: Path, tmp_path: Path, command: int) -> None:
    (result,) = run_limited([_commands(blank_bomb, tmp_path / f"out{blank_bomb.suffix}")[command]])
    text = result["out"] + result["err"]
    # every command tells the bomb as one located finding and exits 1; the inspect commands and repair refuse
    # the log as its load path does (DEC-24), without reading it again
    assert result["code"] == 1, result
    assert str(blank_bomb) in text
    if blank_bomb.suffix == ".zstd":  # a line is a value: 100 M of them are past the value budget, not parsed
        assert "ZSTD_TOO_MANY_VALUES" in text and ("frame 1" in text or '"frame": 1' in text), text[-2000:]
    else:  # a raw file is read (its bytes are its size): the run is one entry of the reader and one finding
        assert f"{BLANK_LINES} unreadable lines (lines 7-{BLANK_LINES + 6})" in text, text[-2000:]
        assert "JSONL_CORRUPT" in text
    assert not (tmp_path / f"out{blank_bomb.suffix}").exists()


def _tail_bomb(folder: Path, form: str) -> Path:
    """A crashed log whose crash tail is ~100 M blank lines: in the torn final frame (zstd), or the file's end."""
    events = one_turn()
    tail = encode_records(events) + encode_records(open_turn(6)) + b"\n" * BLANK_LINES
    if form == "jsonl":
        path = folder / "tail.jsonl"
        path.write_bytes(header_bytes() + tail)
        return path
    frame = zstandard.ZstdCompressor(write_checksum=True).compress(tail)
    path = folder / "tail.jsonl.zstd"
    path.write_bytes(compress_frame(header_bytes()) + frame[:-5])  # torn: the frame's last bytes never written
    return path


@pytest.mark.parametrize("form", ["jsonl", "zstd"])
def test_repair_of_a_blank_line_crash_tail_reads_up_to_where_a_loader_stops(form: str, tmp_path: Path) -> None:
    """A loader stops at the first unreadable line after the last turn/end; repair's reference read stops there
    too (it held a list of the 100 M lines, 6 GB resident, before). In a torn zstd frame, the lines are past
    the value budget: refused before parsing."""
    source = _tail_bomb(tmp_path, form)
    out = tmp_path / f"out.{source.name}"
    results = run_limited([["repair", str(source), "-o", str(out)], ["validate", "--level", "load", str(out)]])
    if form == "zstd":
        assert results[0]["code"] == 1 and "ZSTD_TOO_MANY_VALUES" in results[0]["err"], results[0]
        assert not out.exists()
        return
    assert [r["code"] for r in results] == [0, 0], results
    assert "8 events kept" in results[0]["out"] and "2 closer(s) appended" in results[0]["out"], results[0]
    assert out.stat().st_size < 64 << 10


@pytest.fixture(scope="module")
def row_bombs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A published-layout (17) store whose rows each hold a zstd ``data`` inflating to 1/4 of the per-store
    budget: each row is within a per-row budget, the store's rows together are far past it."""
    path = tmp_path_factory.mktemp("rows") / "rows17.db"
    with SqliteStore.create(path, revision="b150a551b8") as store:
        store.append(HEADER, one_turn())
    text = "a" * (BUDGET_FLOOR // 4)
    data = json.dumps({"content": [{"type": "text", "text": text}], "source": {"kind": "user"}}).encode()
    blob = zstandard.ZstdCompressor(write_content_size=True).compress(data)
    db = sqlite3.connect(path)
    db.execute("UPDATE events SET data = ? WHERE seq = 1", (blob,))
    for k in range(8):  # more rows of the same bomb, after the committed turn
        db.execute("INSERT INTO events SELECT session_id, 100 + ?, type, time, data, source_event_seqs, surface_op, "
                   "ignorable FROM events WHERE seq = 1", (k,))
    db.commit()
    db.close()
    assert path.stat().st_size < 256 << 10
    return path


def test_a_stores_rows_share_one_plaintext_budget(row_bombs: Path, tmp_path: Path) -> None:
    for result in run_limited(_commands(row_bombs, tmp_path / "out.db")[:1]):
        assert result["code"] == 1, result
    for result in run_limited(_commands(row_bombs, tmp_path / "out.db")[2:]):
        text = result["out"] + result["err"]
        assert result["code"] == 1, result
        assert "ZSTD_TOO_LARGE" in text and f"budget of {BUDGET_FLOOR} bytes" in text and str(row_bombs) in text, text
    assert not (tmp_path / "out.db").exists()


#: one array of this many elements: within the plaintext budget (120 MB), far past the value budget
ELEMENTS = 60_000_000


def _value_bomb_event() -> dict[str, Any]:
    return {"type": "user/message", "seq": 1, "time": 2, "surfaceOp": "append",
            "data": {"content": [{"type": "text", "text": "hi"}], "source": {"kind": "user"}, "x": [0] * 4}}


@pytest.fixture(scope="module")
def value_bombs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """12 KB that inflate to one line holding an array of 60 M zeros: a zstd artifact, and a layout-17 store whose
    committed row's zstd ``data`` holds it (the bytes are within the plaintext budget, the values 60x the value
    budget: it took more than 3 GB)."""
    folder = tmp_path_factory.mktemp("values")
    events = one_turn()
    bomb = b"[" + b"0," * (ELEMENTS - 1) + b"0]"
    record = encode_records([_value_bomb_event()]).replace(b"[0,0,0,0]", bomb)
    artifact = folder / "values.jsonl.zstd"
    artifact.write_bytes(compress_frame(header_bytes()) + zstandard.ZstdCompressor(write_checksum=True).compress(
        encode_records(events[:1]) + record + encode_records(events[2:])))
    store = folder / "values17.db"
    with SqliteStore.create(store, revision="b150a551b8") as writer:
        writer.append(HEADER, events)
    data = json.dumps(_value_bomb_event()["data"], separators=(",", ":")).encode().replace(b"[0,0,0,0]", bomb)
    db = sqlite3.connect(store)
    db.execute("UPDATE events SET data = ? WHERE seq = 1", (zstandard.ZstdCompressor().compress(data),))
    db.commit()
    db.close()
    assert artifact.stat().st_size < 64 << 10 and store.stat().st_size < 256 << 10
    return {"zstd": artifact, "sqlite": store}


@pytest.mark.parametrize("form", ["zstd", "sqlite"])
def test_the_values_a_plaintext_parses_to_are_budgeted_before_parsing(value_bombs: dict[str, Path], form: str,
                                                                       tmp_path: Path) -> None:
    from sessionspec.reference.zstd_frames import VALUE_FLOOR

    source = value_bombs[form]
    out = tmp_path / f"out{source.suffix}"
    for result in run_limited(_commands(source, out)):
        text = result["out"] + result["err"]
        assert result["code"] == 1, result
        assert "ZSTD_TOO_MANY_VALUES" in text and f"value budget of {VALUE_FLOOR}" in text, text[-2000:]
        assert str(source) in text and ("line 3" in text if form == "zstd" else "seq 1" in text), text[-2000:]
    assert not out.exists()


#: what a command may hold per value mark of the budget, above a bare run: the parsed values themselves (the
#: costliest shape found, a content part per 3 marks, is 150-210 bytes a mark), one copy at a time
BYTES_PER_MARK = 220
#: a command's own cost on a log of one turn, with room for the interpreter and the loaded schemas
BASE_KB = 100 << 10


def parts_bomb(folder: Path, scale: int = 1) -> Path:
    """A zstd artifact whose user message holds content parts ``{"type":"text","text":"a"}`` up to ``scale`` x the
    value budget's floor (3 marks each), padded with incompressible text so the file is big enough for its budget:
    within every budget, the most memory per byte of budget found."""
    from sessionspec.reference.zstd_frames import VALUE_FLOOR, value_budget, value_marks

    events = one_turn()
    parts: list[dict[str, str]] = [{"type": "text", "text": "a"}] * ((scale * VALUE_FLOOR - 2000) // 3)
    if scale > 1:
        import base64
        import random

        noise = random.Random(25).randbytes(scale * (VALUE_FLOOR // 8) + 8192)
        parts.append({"type": "text", "text": base64.b64encode(noise).decode()})
    events[1]["data"]["content"] = parts
    body = encode_records(events)
    path = folder / f"parts{scale}.jsonl.zstd"
    path.write_bytes(compress_frame(header_bytes()) + zstandard.ZstdCompressor(write_checksum=True).compress(body))
    assert value_marks(body) <= value_budget(path.stat().st_size)
    return path


@pytest.mark.parametrize("command", ["validate", "header", "stats", "derive", "fold", "repair", "pack", "unpack"])
def test_memory_follows_the_value_budget_not_the_values(command: str, tmp_path: Path) -> None:
    """At the value budget's floor (1,048,576 marks, a 1.3 KB artifact of 345,000 content parts) every command
    peaks within BASE_KB + BYTES_PER_MARK per mark of the budget (330 MB): `derive` printed them at 552 MB (the
    indented text made from the compact text parsed again), `repair`, `pack` and `unpack` at 460 MB (the checker's
    events and the reference's alive together); the budget grows with the file (8 marks a byte), and memory with
    it, by the same bound (`hostile_campaign.py` measures 4x)."""
    from hostile_limits import measure
    from sessionspec.reference.zstd_frames import value_budget

    source = parts_bomb(tmp_path)
    argv = [command, str(source)] + (["-o", str(tmp_path / "out.jsonl.zstd")] if command in ("repair", "pack",
                                                                                              "unpack") else [])
    result = measure(argv)
    assert result["code"] == 0, result
    bound = BASE_KB + BYTES_PER_MARK * value_budget(source.stat().st_size) // 1024
    assert result["rss_kb"] < bound, (result["rss_kb"], bound)
    if command == "derive":
        messages = json.loads(result["out"])
        assert len(messages[0]["content"]) == (VALUE_FLOOR - 2000) // 3


@pytest.mark.parametrize("value", [
    [{"t": "é😀" * 50, "n": [1, None, True, -(2**63)]}] * 3,  # orjson's form; pieces end on character boundaries
    [{"t": "é\udfff", "f": 1.5e16, "z": -0.0}],  # floats, a lone surrogate: the standard library's, streamed
    [2**70, {}], [[[]]], "x", 5,
    [[[]]] * 2 + [json.loads("[" * 300 + "]" * 300)],  # too deep to indent: compact
    [10**4100],  # within the int-to-text limit (4,300 digits): indented
    [10**4400],  # past it: compact
], ids=["orjson", "stream", "big-int", "empty", "str", "int", "deep", "long-int", "huge-int"])
def test_the_indented_dump_is_the_standard_librarys_in_pieces(value: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """`_dump` writes what `json.dumps(indent=2)` of the compact text parsed again wrote (surrogates escaped), in
    pieces of `_WRITE_CHUNK` characters (7 here, so multi-byte characters straddle them), or the compact text
    where that could not be written."""
    import io

    from sessionspec import inspect_cmds
    from sessionspec.reference import json_text

    monkeypatch.setattr(inspect_cmds, "_WRITE_CHUNK", 7)
    out = io.StringIO()
    inspect_cmds._dump(value, out)
    text = json_text.dumps(value)
    try:
        expected = json_text.escape_surrogates(json.dumps(json.loads(text), ensure_ascii=False, indent=2))
    except (RecursionError, ValueError):
        expected = text
    if value == [[[]]] * 2 + [json.loads("[" * 300 + "]" * 300)]:
        expected = text  # (the standard library indents 300 levels; the streamed form stops at 200: compact)
    assert out.getvalue() == expected + "\n"
