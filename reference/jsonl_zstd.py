"""The zstd-framed JSONL artifact, upstream's default storage form (ZSTD-1 … ZSTD-7).

``session.jsonl.zstd`` holds the same logical JSONL as ``session.jsonl``
(``jsonl``), cut into independent checksummed frames: the first frame holds
only the header line, and every durable append batch adds one frame. So a
crash can only tear the *last* frame. Reading follows the upstream rules:

* every complete frame must decode and pass its checksum, the first must be
  exactly one header line, and the complete frames together must be a clean
  log (no fragment, hole or seq gap anywhere in them) — else the log is
  rejected;
* a structurally incomplete final frame is a torn tail: whatever complete
  records it still yields are kept, and the load path cuts the file at the
  frame's start and re-appends those records, together with the repair
  closers, as one new frame.

Decompression is bounded (``zstd_frames.plaintext_budget``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sessionspec.spec.errors import CompressedArtifactError, JsonlError
from sessionspec.spec.schema_types import JsonObject, JsonValue

from .atomic import write_atomic
from .jsonl import (
    Artifact,
    LoadedArtifact,
    _read_bytes,
    encode_records,
    header_bytes,
    load_records,
    parse_header_line,
    read_artifact,
)
from .rule_table import TABLE, define
from .zstd_frames import (
    compress_frame,
    decompress,
    past_value_budget,
    plaintext_budget,
    scan_frames,
    too_many_values,
    value_budget,
    value_marks,
)

if TYPE_CHECKING:
    from sessionspec.reference.revision import RevisionLike

__all__ = [
    "CompressedArtifact",
    "DecodedFrames",
    "FrameDefect",
    "append_compressed_batch",
    "decode_frames",
    "load_compressed_artifact",
    "read_compressed_artifact",
    "read_compressed_header",
    "write_compressed_artifact",
]

Source = bytes | bytearray | memoryview | str | os.PathLike[str]


@dataclass(frozen=True)
class FrameDefect:
    """What ended the frame walk, located, in its every-defect mode (``decode_frames(every_defect=True)``).

    ``kind``: ``"frame"`` (a complete frame does not decode, or passes a budget: ``span`` is its bytes),
    ``"scan"`` (structure no zstd writer produces where a frame should start) or ``"torn"`` (the torn final frame
    passes a budget). ``frame`` is the 0-based index of that frame; ``line`` the logical line where the value budget
    was passed (ZSTD-4), when it was. The error is the reader's own, unprefixed."""

    error: CompressedArtifactError
    kind: str
    frame: int
    span: tuple[int, int] | None = None
    line: int | None = None


@dataclass(frozen=True)
class DecodedFrames:
    """The plaintext of an artifact's frames, before any JSONL parsing.

    ``plaintexts`` has one entry per complete frame; ``torn_plaintext`` is
    what the torn final frame still yields (``None`` when no frame is torn).
    ``defect``: in the every-defect mode, what ended the walk (``plaintexts``
    are the frames decoded before it; ``torn_start`` is still the scan's).
    """

    frames: list[tuple[int, int]]
    plaintexts: list[bytes]
    torn_start: int | None
    torn_plaintext: bytes | None
    size: int
    defect: FrameDefect | None = None

    def line_starts(self) -> list[int]:
        """The logical file line (1-based) each frame starts at; the torn frame last, if any."""
        starts, line = [], 1
        for text in [*self.plaintexts, *([self.torn_plaintext] if self.torn_plaintext is not None else [])]:
            starts.append(line)
            line += text.count(b"\n")
        return starts

    def frame_of_line(self, line: int) -> int:
        """The 0-based index of the frame holding logical line ``line``."""
        index = 0
        for i, start in enumerate(self.line_starts()):
            if start <= line:
                index = i
        return index


def _past_values(total: int, text: bytes, left: int, before: list[bytes], located: bool,
                 what: str) -> tuple[CompressedArtifactError, int | None]:
    """``ZSTD_TOO_MANY_VALUES`` for ``text`` passing the value budget with ``left`` marks to go; ``located``: say
    the logical line the budget is passed at (the frames in ``before`` precede ``text``) instead of ``what``."""
    if not located:
        return too_many_values(total, what), None
    at = past_value_budget(text, left)
    line = 1 + sum(t.count(b"\n") for t in before) + text.count(b"\n", 0, max(at, 0))
    return too_many_values(total, f"the plaintext up to line {line}"), line


def decode_frames(data: bytes, *, budget: int | None = None, path: str | None = None,
                  every_defect: bool = False) -> DecodedFrames:
    """Scan and decode every frame (ZSTD-2 … ZSTD-4); the torn frame's decoding failures are tolerated.

    The one frame walk of every reader of the zstd form. First-defect mode (loaders) raises the first defect, with
    its frame and bytes in the message; ``every_defect`` (the validator and the inspecting commands) returns what
    was decoded before it with the defect located in ``defect`` (nothing after a defect is decoded: its frame's
    bytes say nothing about where the next frame starts, and the budgets are spent)."""
    left = plaintext_budget(len(data)) if budget is None else budget
    total = value_budget(len(data))  # what the plaintext may parse to, checked before parsing (ZSTD-4)
    values = total
    scan = scan_frames(data, strict=not every_defect)
    view = memoryview(data)
    plaintexts: list[bytes] = []
    decode_frame = TABLE.frame_decoder
    line: int | None = None
    for index, (start, end) in enumerate(scan.frames):
        try:
            text = decode_frame(view[start:end], left)
            marks = value_marks(text)
            if marks > values:
                past, line = _past_values(total, text, values, plaintexts, every_defect, "the plaintext up to this frame")
                raise past
            values -= marks
        except CompressedArtifactError as error:
            if every_defect:
                return DecodedFrames(scan.frames, plaintexts, scan.torn_start, None, len(data),
                                     FrameDefect(error, "frame", index, (start, end), line))
            error.message = f"frame {index} (bytes {start}-{end}): {error.message}"
            error.args = (error.message,)
            error.path = path
            raise
        left -= len(text)
        plaintexts.append(text)
    if scan.invalid is not None:  # (every-defect mode: a strict scan raised it)
        return DecodedFrames(scan.frames, plaintexts, None, None, len(data),
                             FrameDefect(scan.invalid, "scan", len(plaintexts)))
    torn = None
    if scan.torn_start is not None:
        try:
            torn = decompress(view[scan.torn_start :], left, tolerate_errors=True)
            if value_marks(torn) > values:
                past, line = _past_values(total, torn, values, plaintexts, every_defect,
                                          f"the torn final frame (from byte {scan.torn_start})")
                if not every_defect:
                    past.path = path
                raise past
        except CompressedArtifactError as error:  # a bomb in the torn frame is still a bomb
            if not every_defect:
                raise
            return DecodedFrames(scan.frames, plaintexts, scan.torn_start, None, len(data),
                                 FrameDefect(error, "torn", len(plaintexts), None, line))
    return DecodedFrames(scan.frames, plaintexts, scan.torn_start, torn, len(data))


@dataclass(frozen=True)
class CompressedArtifact:
    """What a reader recovers from a compressed artifact.

    ``events`` are the complete frames' events followed by the ``recovered``
    complete events of a torn final frame. ``logical`` is the parse of the
    complete frames' plaintext (the same ``Artifact`` the raw reader makes).
    """

    header: dict[str, JsonValue]
    events: list[dict[str, JsonValue]]
    recovered: list[dict[str, JsonValue]]
    decoded: DecodedFrames
    logical: Artifact

    @property
    def torn(self) -> bool:
        return self.decoded.torn_start is not None

    @property
    def size(self) -> int:
        return self.decoded.size


def _check_header_frame(first: bytes, path: str | None) -> None:
    if not first or first.find(b"\n") != len(first) - 1:
        raise CompressedArtifactError(
            "corrupt zstd session log: the first frame is not exactly one header line",
            "ZSTD_HEADER_FRAME", requirement="ZSTD-5", path=path,
        )


def read_compressed_artifact(source: Source, *, budget: int | None = None, revision: RevisionLike = None,
                             stop: int | None = None, decoded: DecodedFrames | None = None) -> CompressedArtifact:
    """Parse a compressed artifact into its header (the header keys of ``revision``) and preserved
    events, as the reader of ``revision`` reads its plaintext (ZSTD-2 … ZSTD-6).

    ``stop``: the logical offset of the line a loader stops at, when a caller has found it already (a crash
    tail in the torn frame): the torn frame's plaintext is parsed only up to there (a loader drops the rest
    unread), so a tail of millions of blank lines is not split into a list of them.

    ``decoded``: the frames of these bytes as a caller's walk already decoded them (`decode_frames`, either mode),
    so they are not walked again; one that ended at a defect (or is of other bytes) is walked here, and the first
    defect raised as the loader raises it."""
    data, path = _read_bytes(source)
    if decoded is None or decoded.defect is not None or decoded.size != len(data):
        decoded = decode_frames(data, budget=budget, path=path)
    if not decoded.plaintexts:
        raise JsonlError("empty or header-less zstd session log", "JSONL_NO_HEADER", requirement="JSONL-2", path=path)
    _check_header_frame(decoded.plaintexts[0], path)
    complete = b"".join(decoded.plaintexts)
    logical = read_artifact(complete, revision)
    if logical.truncate_offset != len(complete):
        line = logical.stopped_at_line or complete.count(b"\n") + 1
        raise CompressedArtifactError(
            f"corrupt zstd session log: complete frame {decoded.frame_of_line(line)} holds a torn or "
            f"unreadable record at logical line {line}",
            "ZSTD_TORN_RECORD", requirement="ZSTD-6", path=path,
        )
    recovered: list[dict[str, Any]] = []
    if decoded.torn_plaintext and TABLE.keep_torn_frame_records:
        torn = decoded.torn_plaintext if stop is None or stop < len(complete) else \
            decoded.torn_plaintext[: stop - len(complete)]
        recovered = read_artifact(complete + torn, revision).events[len(logical.events) :]
    return CompressedArtifact(logical.header, [*logical.events, *recovered], recovered, decoded, logical)


def read_compressed_header(source: Source, revision: RevisionLike = None) -> dict[str, JsonValue] | None:
    """The header of the first frame only, or ``None`` when it is missing or malformed (listing)."""
    data, _ = _read_bytes(source)
    try:
        scan = scan_frames(data, max_frames=1)
        if not scan.frames:
            return None
        start, end = scan.frames[0]
        first = decompress(memoryview(data)[start:end], plaintext_budget(end - start))
    except CompressedArtifactError:
        return None
    if not first or first.find(b"\n") != len(first) - 1:
        return None
    return parse_header_line(first[:-1], revision)


def _frame(events: Iterable[Mapping[str, Any]], pack: bool) -> bytes:
    payload = encode_records(events, pack)
    return compress_frame(payload) if payload else b""


def write_compressed_artifact(
    path: str | os.PathLike[str],
    header: JsonObject,
    events: Iterable[JsonObject] = (),
    pack: bool = True,
    *,
    revision: RevisionLike = None,
) -> None:
    """Write a whole artifact atomically: the header frame (the header keys of ``revision``), then one
    frame for ``events`` (ZSTD-1)."""
    head = compress_frame(header_bytes(header, revision))
    write_atomic(path, head + _frame(events, pack))


def append_compressed_batch(
    path: str | os.PathLike[str],
    events: Iterable[JsonObject],
    *,
    truncate_to: int | None = None,
    pack: bool = True,
) -> None:
    """Durably append one batch as one frame, first cutting a torn frame at ``truncate_to`` (ZSTD-1, ZSTD-7).

    A failed write or sync restores the previous length, so a retried batch
    never duplicates seqs.
    """
    frame = _frame(events, pack)
    with open(path, "r+b") as handle:
        if truncate_to is not None:
            handle.truncate(truncate_to)
            handle.flush()
            os.fsync(handle.fileno())
        if not frame:
            return
        before = handle.seek(0, os.SEEK_END)
        try:
            handle.write(frame)
            handle.flush()
            os.fsync(handle.fileno())
        except BaseException:
            handle.truncate(before)
            raise


def load_compressed_artifact(
    path: str | os.PathLike[str], session_id: str, *, durable: bool = True, budget: int | None = None,
    revision: RevisionLike = None, seed: bool | None = None,
) -> LoadedArtifact:
    """The load path for the compressed form (JSONL-12, ZSTD-7).

    The same identity, version and legacy checks as the raw form, and the same
    repair and seed at ``revision`` (the log's format revision; default: the
    pinned one); then, when ``durable`` and the seed passed, the torn frame is
    cut off and its recovered records are written back with the closers as one frame.
    """
    artifact = read_compressed_artifact(path, budget=budget, revision=revision)
    where = os.fspath(path)
    session, events, closers = load_records(session_id, artifact.header, artifact.events, where, revision, seed=seed)
    torn_start = artifact.decoded.torn_start
    if durable and (torn_start is not None or closers):
        append_compressed_batch(path, [*artifact.recovered, *closers] if torn_start is not None else closers,
                                truncate_to=torn_start)
    truncated = 0 if torn_start is None else artifact.size - torn_start
    return LoadedArtifact(session, artifact.header, [*events, *closers], closers, truncated)


define("frame_decoder", decompress)  # ZSTD-3: a complete frame decodes exactly (checksum included) or is refused
define("keep_torn_frame_records", True)  # ZSTD-7: the complete records of a torn final frame are kept
