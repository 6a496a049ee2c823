"""A long session resumed across the upgrade (issue 22: a 122k-event session): a pinned head far longer than
any evidence window, then the short tail the published package appended, is read at the published revision
and is clean, in memory that does not grow with the log.

The head is pinned-revision turns (``cli_helpers.turn_events``); the tail is what the package itself appended
when it resumed upstream's pinned fixture (``tests/real_logs/corpus/npm-resumed-pinned.jsonl`` past its stored
prefix: the ``session/end-seed`` marker and two turns), its seqs and turn numbers moved on to follow the head.
The log is generated here (18 MB; committing it would cost more than generating it: about 1 s).
"""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import HEADER, cli, turn_events

PINNED, PUB = "2f74ac98ba", "b150a551b8"
RESUMED = Path(__file__).resolve().parents[1] / "real_logs" / "corpus" / "npm-resumed-pinned.jsonl"
EVENTS_PER_TURN = len(turn_events())
HEAD_TURNS = 10_200  # 122,400 events


def _package_tail() -> tuple[list[dict[str, Any]], int, int]:
    """The records the package appended (from its end-seed marker on), the seq and the turn they start at."""
    records = [json.loads(line) for line in RESUMED.read_bytes().splitlines()[1:]]
    start = next(i for i, r in enumerate(records) if r["type"] == "session/end-seed")
    tail = records[start:]
    first_turn = min(r["data"]["turn"] for r in tail if r["type"] == "turn/start")
    return tail, tail[0]["seq"], first_turn


def _moved(record: dict[str, Any], by: int, turns: int) -> dict[str, Any]:
    """One stored record with its seqs (and seq references) moved by ``by`` and its turn numbers by ``turns``."""
    moved = dict(record)
    for key in ("seq", "seq0"):
        if key in moved:
            moved[key] += by
    if "sourceEventSeqs" in moved:
        moved["sourceEventSeqs"] = [s + by for s in moved["sourceEventSeqs"]]
    if isinstance(moved.get("surfaceOp"), dict):
        moved["surfaceOp"] = {**moved["surfaceOp"], "start": moved["surfaceOp"]["start"] + by,
                              "end": moved["surfaceOp"]["end"] + by}
    if isinstance(moved.get("data"), dict) and "turn" in moved["data"]:
        moved["data"] = {**moved["data"], "turn": moved["data"]["turn"] + turns}
    return moved


def write_long_resumed(path: Path, head_turns: int = HEAD_TURNS) -> int:
    """Write the log; the number of events it holds."""
    tail, tail_seq, tail_turn = _package_tail()
    head_events = head_turns * EVENTS_PER_TURN
    dumps = json.JSONEncoder(separators=(",", ":")).encode
    with path.open("wb") as out:
        out.write(dumps(HEADER).encode() + b"\n")
        for turn in range(1, head_turns + 1):
            out.write(b"".join(dumps(e).encode() + b"\n" for e in turn_events(turn, (turn - 1) * EVENTS_PER_TURN)))
        moved = [_moved(r, head_events - tail_seq, head_turns + 1 - tail_turn) for r in tail]
        out.write(b"".join(dumps(r).encode() + b"\n" for r in moved))
    members = sum(len(r["data"]["texts"]) if "seq0" in r else 1 for r in tail)
    return head_events + members


@pytest.fixture(scope="module")
def long_log(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    path = tmp_path_factory.mktemp("long") / "resumed.jsonl"
    return path, write_long_resumed(path)


def test_the_tail_is_the_packages(long_log: tuple[Path, int]) -> None:
    path, events = long_log
    assert events > 122_000
    tail, _, _ = _package_tail()
    assert tail[0]["type"] == "session/end-seed" and {r["type"] for r in tail} >= {"text-chunks", "tool/result"}


def test_a_long_pinned_head_with_the_packages_tail_is_read_at_the_release_and_is_clean(long_log: tuple[Path, int]) -> None:
    """Strict (every check) without flags: the published revision, clean, the reason one short line; the
    default text line is the short `ok`."""
    path, events = long_log
    [report] = cli("validate", "--format", "json", "--level", "strict", str(path)).json["files"]
    assert (report["revision"], report["events"], report["errors"], report["warnings"]) == (PUB, events, 0, 0), \
        (report["revisionReason"], report["findings"][:3])
    assert report["revisionReason"].startswith(f"resumed: {PINNED} content up to line ")
    assert len(report["revisionReason"]) < 200, report["revisionReason"]
    assert report["upgraded"]["turn/start"] == HEAD_TURNS
    plain = cli("validate", str(path))
    assert plain.code == 0 and plain.out.splitlines()[0] == f"{path}: ok: {events} events"


def test_detection_weighs_the_whole_long_log_in_bounded_memory(tmp_path: Path, long_log: tuple[Path, int]) -> None:
    """The streaming detector over the 18 MB file, block by block: the published revision, and what it allocates
    at its peak is what it allocates on a log a tenth as long (a block and a line; nothing grows with the head
    but counts). The spec is loaded by a first run, so neither measurement holds it."""
    from sessionspec.validate import BLOCK_SIZE
    from sessionspec.validator.detect import detect_in_blocks

    path, _ = long_log
    small = tmp_path / "small.jsonl"
    write_long_resumed(small, HEAD_TURNS // 10)

    def blocks(log: Path) -> Any:
        with log.open("rb") as handle:
            while block := handle.read(BLOCK_SIZE):
                yield block

    def peak(log: Path) -> tuple[Any, int]:
        tracemalloc.start()
        try:
            detection = detect_in_blocks(blocks(log))
            return detection, tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    detect_in_blocks(blocks(small))  # warm: the spec and the schemas the detector compiles
    (_, low), (detection, high) = peak(small), peak(path)
    assert (detection.revision, detection.ambiguous) == (PUB, False), detection.reason
    assert detection.scores[PINNED] >= HEAD_TURNS and len(detection.evidence) <= 3
    assert high < low + (2 << 20) and high < 8 * BLOCK_SIZE, (low, high, BLOCK_SIZE)  # measured: 4.2 and 5.3 MB
