"""One frame walk of a zstd artifact per reading (issue #26): the CLI reads a zstd artifact's frames with the
reference's own walk, `jsonl_zstd.decode_frames` in its every-defect mode (`tools/storage._zstd_unit`), not with a
scan and decompression of its own. Every frame scan and every frame decompression a command makes is counted with
the function it was made from: a second statement of the framing walk creeping back (a `scan_frames` or a
`decompress` called from anywhere but `decode_frames`) fails here, and so does a second walk of the same bytes.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import HEADER, cli, turn_events
from sessionspec.reference import jsonl_zstd, zstd_frames
from sessionspec.reference.jsonl import encode_records, header_bytes
from sessionspec.reference.zstd_frames import compress_frame


class _Walks(Counter[str]):
    def wrap(self, monkeypatch: pytest.MonkeyPatch, owner: Any, name: str, key: str) -> None:
        original = getattr(owner, name)

        def counted(*args: Any, **kwargs: Any) -> Any:
            caller = sys._getframe(1).f_code.co_name
            self[key if caller == "decode_frames" or key == "walks" else f"{key} outside the walk ({caller})"] += 1
            return original(*args, **kwargs)

        monkeypatch.setattr(owner, name, counted)

    def outside(self) -> dict[str, int]:
        return {key: count for key, count in self.items() if "outside" in key}


@pytest.fixture
def walks(monkeypatch: pytest.MonkeyPatch) -> _Walks:
    found = _Walks()
    found.wrap(monkeypatch, jsonl_zstd, "decode_frames", "walks")
    for owner in (jsonl_zstd, zstd_frames):  # (the module's own name too: a function-local import finds it there)
        found.wrap(monkeypatch, owner, "scan_frames", "scans")
        found.wrap(monkeypatch, owner, "decompress", "frame decodings")  # (the walk's own: the rule table's decoder)
    return found


#: a header frame, a frame per closed turn, and a torn final frame inside the third turn (a crash: ZSTD-7)
def _crashed() -> bytes:
    frames = [compress_frame(header_bytes(dict(HEADER)))]
    seq = 0
    for turn in (1, 2):
        events = turn_events(turn, start_seq=seq)
        seq += len(events)
        frames.append(compress_frame(encode_records(events, pack=True)))
    torn = compress_frame(encode_records(turn_events(3, start_seq=seq, close=False), pack=True))
    return b"".join(frames) + torn[: len(torn) - 6]


@pytest.mark.parametrize("revision", ["2f74ac98ba", "b150a551b8"])
@pytest.mark.parametrize(("command", "expected"), [
    (["validate", "--format", "json"], 1), (["validate", "--level", "strict"], 1),
    (["derive"], 1), (["fold"], 1), (["stats"], 1),
    # the input's unit only: the torn frame's start and records (ZSTD-7) and the output's logical text are read from
    # its frames (read_compressed_artifact(decoded=...)), the frames repair writes are not walked again
    (["repair"], 1),
])
def test_each_command_walks_the_frames_with_the_reference_walk(tmp_path: Path, walks: _Walks, revision: str,
                                                                command: list[str], expected: int) -> None:
    path = tmp_path / "in.jsonl.zstd"
    path.write_bytes(_crashed())
    out = ["-o", str(tmp_path / "out.jsonl.zstd")] if command == ["repair"] else []
    result = cli(*command, str(path), "--revision", revision, *out)
    assert result.code in (0, 1), result.err
    if command[0] == "validate":
        assert "from byte" in result.out  # the torn frame was read (ZSTD-7's warning)
    assert walks.outside() == {}  # no scan or decompression of frames but the walk's
    assert walks["walks"] == expected
    assert walks["scans"] == expected  # one scan per walk: the walk does not scan twice


def test_a_damaged_artifact_is_walked_once_and_its_defect_located(tmp_path: Path, walks: _Walks) -> None:
    data = bytearray(_crashed())
    second = zstd_frames.scan_frames(bytes(data)).frames[1]
    data[second[1] - 1] ^= 0x01  # the checksum of frame 1: the walk stops there (ZSTD-3)
    walks.clear()
    path = tmp_path / "in.jsonl.zstd"
    path.write_bytes(bytes(data))
    result = cli("validate", "--format", "json", str(path))
    assert result.code == 1
    assert "ZSTD_FRAME_CORRUPT" in result.out and f"(bytes {second[0]}-{second[1]})" in result.out
    assert walks.outside() == {}
    assert walks["walks"] == 1 and walks["scans"] == 1
