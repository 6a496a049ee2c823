"""Zstandard frames as a container: structural scan, checksummed encode, bounded decode (ZSTD-*).

The compressed artifact is a plain concatenation of independent zstd frames
(RFC 8878). Finding where each frame ends needs no decompression: the frame
header says how many header bytes follow, every block header says how many
payload bytes follow and whether it is the last block, and a checksum flag
adds four trailing bytes. :func:`scan_frames` walks that structure; running
out of bytes inside the final frame is a *torn* frame (a crash mid-append),
while a wrong magic number or a reserved bit or block type is invalid
structure. The codec itself is the maintained ``zstandard`` binding.

Decoding is bounded: :func:`decompress` stops with ``ZSTD_TOO_LARGE`` as soon
as the plaintext would pass the caller's budget, so a frame that expands to
gigabytes costs at most the budget in memory, never more.
"""

from __future__ import annotations

import io
import threading
from dataclasses import dataclass

import zstandard
from sessionspec.spec import constants
from sessionspec.spec.errors import CompressedArtifactError

__all__ = [
    "MAGIC",
    "FrameScan",
    "compress_frame",
    "decompress",
    "is_zstd",
    "past_value_budget",
    "plaintext_budget",
    "scan_frames",
    "too_many_values",
    "value_budget",
    "value_marks",
]

_ZSTD = constants()["zstd"]
MAGIC = bytes.fromhex(_ZSTD["magic"])  # 0xFD2FB528, little-endian
_CHUNK = 1 << 20
#: the plaintext budget is at least this many bytes, or ratio x the compressed size
BUDGET_FLOOR: int = _ZSTD["plaintextBudget"]["floorBytes"]
BUDGET_RATIO: int = _ZSTD["plaintextBudget"]["ratio"]
#: the value budget: at least this many value marks (bytes that start or separate a value or a record), or ratio
#: x the compressed size, per artifact or store: what the plaintext may parse to, checked before it is parsed
VALUE_FLOOR: int = _ZSTD["valueBudget"]["floorValues"]
VALUE_RATIO: int = _ZSTD["valueBudget"]["ratio"]
VALUE_MARKS: bytes = _ZSTD["valueBudget"]["marks"].encode("ascii")

class _Contexts(threading.local):
    """One compression and one decompression context per thread: python-zstandard's contexts are not
    safe for concurrent use, and ``conformance -j N`` reads and writes artifacts from several threads."""

    def __init__(self) -> None:
        self.compressor = zstandard.ZstdCompressor(write_checksum=True, write_content_size=True)
        self.decompressor = zstandard.ZstdDecompressor()


_CONTEXTS = _Contexts()


def is_zstd(prefix: bytes) -> bool:
    """Whether bytes start like a zstd frame (content sniffing, not validation)."""
    return prefix[:4] == MAGIC


def plaintext_budget(compressed_size: int) -> int:
    """The default bound on an artifact's total plaintext: memory linear in input size."""
    return max(BUDGET_FLOOR, BUDGET_RATIO * compressed_size)


def value_budget(compressed_size: int) -> int:
    """The default bound on the value marks of an artifact's (or a store's) plaintext, checked before parsing:
    bytes bound memory only as text; a run of ``0,`` parses to a list slot per two bytes, ``[],`` to a list object
    per three, so 12 KB of zstd inflating to one array of 60 M elements took more than 3 GB (ZSTD-4)."""
    return max(VALUE_FLOOR, VALUE_RATIO * compressed_size)


def value_marks(text: bytes | memoryview) -> int:
    """How many bytes of ``text`` start or separate a value or a record (``\\n , [ {``), counted at C speed:
    every value but a container's first, and every container, follows one (strings' bytes count too: a bound)."""
    data = text if isinstance(text, bytes) else bytes(text)
    return sum(data.count(mark) for mark in (VALUE_MARKS[i : i + 1] for i in range(len(VALUE_MARKS))))


def past_value_budget(text: bytes, left: int) -> int:
    """The offset in ``text`` of the value mark that passes a budget with ``left`` marks to go (-1: none does)."""
    chunk = 1 << 20
    for start in range(0, len(text), chunk):
        piece = text[start : start + chunk]
        marks = value_marks(piece)
        if marks > left:
            wanted = set(VALUE_MARKS)
            for offset, byte in enumerate(piece):
                if byte in wanted:
                    if left == 0:
                        return start + offset
                    left -= 1
        left -= marks
    return -1


def too_many_values(budget: int, what: str) -> CompressedArtifactError:
    """``ZSTD_TOO_MANY_VALUES`` for plaintext past a value budget of ``budget`` marks (ZSTD-4)."""
    return CompressedArtifactError(
        f"{what} holds more than the value budget of {budget} value marks (bytes that start or separate a JSON "
        f"value or a record; the larger of {VALUE_FLOOR} and {VALUE_RATIO} x the compressed size): a decompression "
        "bomb of values? It is not parsed", "ZSTD_TOO_MANY_VALUES", requirement="ZSTD-4")


def compress_frame(plaintext: bytes) -> bytes:
    """One independent frame with a content checksum, at the library's default level (ZSTD-1)."""
    return _CONTEXTS.compressor.compress(plaintext)


@dataclass(frozen=True)
class FrameScan:
    """Byte ranges ``(start, end)`` of the complete frames, and where a torn final frame starts."""

    frames: list[tuple[int, int]]
    torn_start: int | None = None
    #: with ``strict=False``: the error that stopped the scan (its offset is ``invalid_at``)
    invalid: CompressedArtifactError | None = None
    invalid_at: int | None = None


def _invalid(message: str, offset: int, frames: list[tuple[int, int]]) -> _Invalid:
    error = CompressedArtifactError(
        f"corrupt zstd session log: {message} at byte {offset}", "ZSTD_FRAME_INVALID", requirement="ZSTD-2"
    )
    return _Invalid(error, offset, frames)


def scan_frames(data: bytes | memoryview, max_frames: int | None = None, *, strict: bool = True) -> FrameScan:
    """Locate complete frames without decoding them (ZSTD-2).

    Raises ``ZSTD_FRAME_INVALID`` for structure no zstd writer produces (wrong
    magic, reserved header bit, reserved block type); returns the start of
    the final frame in ``torn_start`` when the data ends inside it. Stops
    after ``max_frames`` complete frames when given (header-only readers).
    With ``strict=False`` invalid structure ends the scan instead: the frames
    before it are returned with the error in ``invalid`` (validators).
    """
    try:
        return _scan(data, max_frames)
    except _Invalid as stop:
        if strict:
            raise stop.error from None
        return FrameScan(stop.frames, None, stop.error, stop.offset)


class _Invalid(Exception):
    def __init__(self, error: CompressedArtifactError, offset: int, frames: list[tuple[int, int]]) -> None:
        self.error, self.offset, self.frames = error, offset, frames


def _scan(data: bytes | memoryview, max_frames: int | None) -> FrameScan:
    view = memoryview(data)
    size = len(view)
    frames: list[tuple[int, int]] = []
    offset = 0
    while offset < size:
        start = offset
        if size - offset < 4:  # ZSTD-7: fewer bytes than a magic number are a torn final frame, whatever they are
            return FrameScan(frames, start)
        if bytes(view[offset : offset + 4]) != MAGIC:
            raise _invalid("invalid frame magic", offset, frames)
        offset += 4
        if offset == size:
            return FrameScan(frames, start)
        descriptor = view[offset]
        if descriptor & 0x18:
            raise _invalid("reserved frame-header bit", offset, frames)
        offset += 1
        single_segment = bool(descriptor & 0x20)
        fcs_flag = descriptor >> 6
        dict_flag = descriptor & 0x03
        header_rest = (
            (0 if single_segment else 1)
            + (4 if dict_flag == 3 else dict_flag)
            + ((1 if single_segment else 0) if fcs_flag == 0 else 1 << fcs_flag)
        )
        if size - offset < header_rest:
            return FrameScan(frames, start)
        offset += header_rest
        while True:
            if size - offset < 3:
                return FrameScan(frames, start)
            block = view[offset] | (view[offset + 1] << 8) | (view[offset + 2] << 16)
            block_type = (block >> 1) & 0x03
            if block_type == 3:
                raise _invalid("reserved block type", offset, frames)
            offset += 3
            payload = 1 if block_type == 1 else block >> 3
            if size - offset < payload:
                return FrameScan(frames, start)
            offset += payload
            if block & 1:
                break
        if descriptor & 0x04:
            if size - offset < 4:
                return FrameScan(frames, start)
            offset += 4
        frames.append((start, offset))
        if max_frames is not None and len(frames) >= max_frames:
            break
    return FrameScan(frames)


def decompress(frame: bytes | memoryview, budget: int, *, tolerate_errors: bool = False) -> bytes:
    """Decode one frame, checking its content checksum, within ``budget`` plaintext bytes (ZSTD-3, ZSTD-4).

    A decoding or checksum failure raises ``ZSTD_FRAME_CORRUPT``; exceeding the
    budget raises ``ZSTD_TOO_LARGE`` without holding more than the budget.
    With ``tolerate_errors`` (a torn final frame) decoding failures return the
    plaintext produced so far instead.
    """
    try:
        declared = zstandard.frame_content_size(bytes(frame[:18]))
    except zstandard.ZstdError:
        declared = -1
    if declared > budget:
        raise CompressedArtifactError(
            f"zstd frame declares {declared} plaintext bytes, more than the {budget}-byte budget",
            "ZSTD_TOO_LARGE", requirement="ZSTD-4",
        )
    out = bytearray()
    reader = _CONTEXTS.decompressor.stream_reader(io.BytesIO(frame), read_across_frames=False)
    try:
        while True:
            chunk = reader.read(min(_CHUNK, budget - len(out) + 1))
            if not chunk:
                break
            out += chunk
            if len(out) > budget:
                raise CompressedArtifactError(
                    f"zstd frame decompresses past the {budget}-byte budget (a decompression bomb?)",
                    "ZSTD_TOO_LARGE", requirement="ZSTD-4",
                )
    except zstandard.ZstdError as error:
        if tolerate_errors:
            return bytes(out)
        raise CompressedArtifactError(
            f"zstd frame failed validation: {error}", "ZSTD_FRAME_CORRUPT", requirement="ZSTD-3", cause=error
        ) from error
    return bytes(out)
