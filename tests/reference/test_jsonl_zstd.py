"""ZSTD-1 … ZSTD-7: the zstd-framed artifact against files written by the zstd command line tool."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import zstandard
from sessionspec.reference.jsonl import encode_records, read_artifact
from sessionspec.reference.jsonl_zstd import (
    append_compressed_batch,
    load_compressed_artifact,
    read_compressed_artifact,
    read_compressed_header,
    write_compressed_artifact,
)
from sessionspec.reference.zstd_frames import MAGIC, compress_frame, decompress, scan_frames
from sessionspec.spec.errors import CompressedArtifactError, JsonlError
from storage_fixtures import HEADER, cli_frame, header_bytes, one_turn, open_turn, write_cli_zstd, write_raw, zstd_cli


def frames_of(path: Path) -> list[bytes]:
    data = path.read_bytes()
    return [data[s:e] for s, e in scan_frames(data).frames]


def test_zstd1_cli_artifact_reads_as_its_raw_twin(tmp_path: Path) -> None:
    batches = [one_turn(), one_turn(6, 2)]
    packed = zstd_cli()  # the fixture tool exists
    assert packed
    compressed = read_compressed_artifact(write_cli_zstd(tmp_path / "session.jsonl.zstd", batches))
    raw = read_artifact(write_raw(tmp_path / "session.jsonl", batches))
    assert compressed.header == raw.header
    assert compressed.events == raw.events
    assert len(compressed.decoded.frames) == 3 and not compressed.torn
    # the zstd CLI agrees the whole file is one valid multi-frame stream with checksums
    out = subprocess.run([zstd_cli(), "-d", "-c", "-q", tmp_path / "session.jsonl.zstd"], capture_output=True,
                         check=True).stdout
    assert out == (tmp_path / "session.jsonl").read_bytes()


def test_zstd1_writer_output_is_checked_by_the_zstd_cli(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl.zstd"
    write_compressed_artifact(path, HEADER, one_turn())
    append_compressed_batch(path, one_turn(6, 2))
    frames = frames_of(path)
    assert len(frames) == 3
    assert all(zstandard.get_frame_parameters(f).has_checksum for f in frames)
    assert zstandard.ZstdDecompressor().decompress(frames[0]) == header_bytes()
    subprocess.run([zstd_cli(), "-t", "-q", path], check=True)  # test mode verifies every checksum
    assert read_compressed_artifact(path).events == one_turn() + one_turn(6, 2)
    assert read_compressed_header(path) == read_compressed_artifact(path).header


@pytest.mark.parametrize("damage", ["magic", "reserved-bit", "reserved-block"])
def test_zstd2_invalid_framing_rejects(tmp_path: Path, damage: str) -> None:
    good = write_cli_zstd(tmp_path / "a.zstd", [one_turn()]).read_bytes()
    first_end = scan_frames(good).frames[0][1]
    data = bytearray(good)
    if damage == "magic":
        data[first_end] ^= 0xFF
        at = first_end
    elif damage == "reserved-bit":
        data[first_end + 4] |= 0x08
        at = first_end + 4
    else:
        fhd = data[first_end + 4]
        header_len = 1 + (0 if fhd & 0x20 else 1) + [0, 1, 2, 4][fhd & 3] + ([1 if fhd & 0x20 else 0, 2, 4, 8][fhd >> 6])
        at = first_end + 4 + header_len
        data[at] |= 0x06  # block type 3
    with pytest.raises(CompressedArtifactError) as info:
        read_compressed_artifact(bytes(data))
    assert info.value.code == "ZSTD_FRAME_INVALID"
    assert f"byte {at}" in info.value.message


def test_zstd3_flipped_checksum_byte_in_a_complete_frame_rejects(tmp_path: Path) -> None:
    data = bytearray(write_cli_zstd(tmp_path / "a.zstd", [one_turn(), one_turn(6, 2)]).read_bytes())
    data[scan_frames(bytes(data)).frames[1][1] - 1] ^= 0x01  # last checksum byte of frame 1
    with pytest.raises(CompressedArtifactError) as info:
        read_compressed_artifact(bytes(data))
    assert info.value.code == "ZSTD_FRAME_CORRUPT"
    assert "frame 1" in info.value.message


def test_zstd4_decompression_bomb_stops_at_the_budget(tmp_path: Path) -> None:
    # 64 MiB of zeros in a frame without a declared size: a tiny file, a huge plaintext
    compressor = zstandard.ZstdCompressor(write_checksum=True, write_content_size=False)
    chunker = compressor.chunker(chunk_size=1 << 20)
    parts = [p for _ in range(64) for p in chunker.compress(b"\0" * (1 << 20))] + list(chunker.finish())
    bomb = compress_frame(header_bytes()) + b"".join(parts)
    assert len(bomb) < 64 << 10
    with pytest.raises(CompressedArtifactError) as info:
        read_compressed_artifact(bomb, budget=8 << 20)
    assert info.value.code == "ZSTD_TOO_LARGE"
    # a frame declaring its size is refused before decoding
    declared = zstandard.ZstdCompressor(write_checksum=True).compress(b"\0" * (16 << 20))
    with pytest.raises(CompressedArtifactError, match="declares"):
        decompress(declared, 1 << 20)


def test_zstd5_first_frame_must_be_one_header_line() -> None:
    one_frame = cli_frame(header_bytes() + encode_records(one_turn()))  # `zstd file` makes one frame
    with pytest.raises(CompressedArtifactError) as info:
        read_compressed_artifact(one_frame)
    assert info.value.code == "ZSTD_HEADER_FRAME"
    with pytest.raises(JsonlError) as empty:
        read_compressed_artifact(MAGIC[:3])
    assert empty.value.code == "JSONL_NO_HEADER"


def test_zstd6_a_complete_frame_ending_inside_a_record_rejects() -> None:
    data = compress_frame(header_bytes()) + compress_frame(encode_records(one_turn())) + compress_frame(b'{"type":"turn/start"')
    with pytest.raises(CompressedArtifactError) as info:
        read_compressed_artifact(data)
    assert info.value.code == "ZSTD_TORN_RECORD"
    assert "frame 2" in info.value.message


def test_zstd7_torn_final_frame_keeps_complete_records_and_load_reencodes_them(tmp_path: Path) -> None:
    path = write_cli_zstd(tmp_path / "session.jsonl.zstd", [one_turn()])
    committed = path.read_bytes()
    noise = "".join(chr(0x41 + (i * 7919) % 26) for i in range(300_000))  # incompressible enough for many blocks
    crashed = [*open_turn(6), {"type": "assistant/chunk", "seq": 8, "time": 9,
                                "data": {"turn": 2, "step": 1, "chunk": {"type": "text-delta", "index": 0, "text": noise}}}]
    frame = compress_frame(encode_records(crashed, pack=False))
    # cut inside the last record's block: the first two records decode, the third cannot
    cut = next(n for n in range(len(frame) // 4, len(frame))
               if zstandard.ZstdDecompressor().decompressobj().decompress(frame[:n]).count(b"\n") >= 2)
    path.write_bytes(committed + frame[:cut])
    artifact = read_compressed_artifact(path)
    assert artifact.torn and [e["seq"] for e in artifact.recovered] == [6, 7]
    assert path.read_bytes() == committed + frame[:cut]  # reading never writes

    loaded = load_compressed_artifact(path, "s1")
    assert [e["type"] for e in loaded.events[6:]] == ["turn/start", "step/start", "step/end", "turn/end"]
    assert loaded.truncated_bytes == cut
    repaired = path.read_bytes()
    assert repaired.startswith(committed) and scan_frames(repaired).torn_start is None
    assert len(scan_frames(repaired).frames) == 3  # recovered records + closers: one new frame
    assert read_compressed_artifact(path).events == loaded.events


def test_zstd7_frame_torn_in_its_magic_or_checksum(tmp_path: Path) -> None:
    path = write_cli_zstd(tmp_path / "session.jsonl.zstd", [one_turn()])
    committed = path.read_bytes()
    path.write_bytes(committed + MAGIC[:2])
    assert load_compressed_artifact(path, "s1").events == one_turn()
    assert path.read_bytes() == committed

    second = one_turn(6, 2)
    path.write_bytes(committed + cli_frame(encode_records(second))[:-1])
    loaded = load_compressed_artifact(path, "s1")
    assert loaded.events == one_turn() + second and loaded.closers == []
    assert read_compressed_artifact(path).events == one_turn() + second and not read_compressed_artifact(path).torn


def test_jsonl12_load_checks_apply_to_the_compressed_form(tmp_path: Path) -> None:
    path = write_cli_zstd(tmp_path / "session.jsonl.zstd", [one_turn()])
    before = path.read_bytes()
    with pytest.raises(JsonlError) as info:
        load_compressed_artifact(path, "other")
    assert info.value.code == "JSONL_ID_MISMATCH"
    assert path.read_bytes() == before
    path.write_bytes(before + cli_frame(encode_records(open_turn(6))))
    not_durable = load_compressed_artifact(path, "s1", durable=False)
    assert [e["type"] for e in not_durable.closers] == ["step/end", "turn/end"]
    assert len(frames_of(path)) == 3


def test_frames_round_trip_from_many_threads_at_once():
    """python-zstandard contexts are not thread-safe; ``conformance -j N`` compresses and decompresses
    from several threads, so each thread needs its own (a shared decompressor mixed frames up)."""
    from concurrent.futures import ThreadPoolExecutor

    from sessionspec.reference import zstd_frames

    plaintexts = [bytes([65 + n % 26]) * (3 << 20) + str(n).encode() for n in range(8)]

    def round_trip(plaintext: bytes) -> bool:
        return all(
            zstd_frames.decompress(zstd_frames.compress_frame(plaintext), len(plaintext)) == plaintext
            for _ in range(6)
        )

    with ThreadPoolExecutor(max_workers=8) as pool:
        assert all(pool.map(round_trip, plaintexts))


@pytest.mark.parametrize("torn", [False, True])
def test_zstd4_the_values_of_an_artifact_share_one_budget(torn: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """The value budget (value marks: record and value separators, container openings) is one per artifact,
    checked before parsing: frames within it each, past it together, are refused; a torn frame counts too."""
    from sessionspec.reference import zstd_frames

    events = [*one_turn(), *open_turn(6)]
    frames = [compress_frame(encode_records(events[:6])), compress_frame(encode_records(events[6:]))]
    data = compress_frame(header_bytes()) + frames[0] + (frames[1][:-3] if torn else frames[1])
    marks = sum(zstd_frames.value_marks(encode_records(part)) for part in (events[:6], events[6:]))
    marks += zstd_frames.value_marks(header_bytes())
    monkeypatch.setattr(zstd_frames, "VALUE_RATIO", 0)
    monkeypatch.setattr(zstd_frames, "VALUE_FLOOR", marks)
    assert len(read_compressed_artifact(data).events) == 8
    monkeypatch.setattr(zstd_frames, "VALUE_FLOOR", marks - 1)
    with pytest.raises(CompressedArtifactError) as info:
        read_compressed_artifact(data)
    assert info.value.code == "ZSTD_TOO_MANY_VALUES" and ("torn" in info.value.message) == torn, info.value.message
