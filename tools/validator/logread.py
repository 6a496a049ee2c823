"""Read stored session logs for the CLI, tolerating every kind of damage.

A loader (`reference.jsonl.read_artifact`) stops at the first problem; the
CLI must instead *explain* a damaged file: every bad line, located, and the
events that survive it. This module turns bytes into a `LoadedLog` (header,
events with their file lines, findings) and emulates the load path's
decisions (JSONL-2 … JSONL-7) without raising:

* a hole (unparsable line, empty line, malformed row) inside the committed
  region is corruption (error); after the last ``turn/end`` it is a torn
  tail (warning) and, like the loader, reading stops there;
* a final fragment without ``\\n`` is a crash tail (JSONL-4, warning);
* BOM, invalid UTF-8, CRLF, duplicate keys, lone surrogates, unsafe
  integers, ``-0.0``, ``NaN``, deep nesting and huge lines each get a
  finding of their own, never a traceback.

Fast path: ``orjson.loads`` per line, then ``orjson.dumps`` of the value
must give back the same bytes (then no key was duplicated and every integer
is safe: ``OPT_STRICT_INTEGER``). Anything else is re-read by
`sessionspec.validator.jsondiag`, which is exact and locates each anomaly.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, BinaryIO

import orjson
from sessionspec.reference.chunk_rows import ROW_TYPES, decode_storage_record
from sessionspec.reference.json_value import is_nonneg_safe_int as _is_safe_nonneg
from sessionspec.spec import FORMAT
from sessionspec.spec.errors import ChunkRowError
from sessionspec.validator import jsondiag

_HEADER_TYPE: str = FORMAT.jsonl_header_line_type
_ROW_TYPES = frozenset(ROW_TYPES)
_BOM = b"\xef\xbb\xbf"
_EXCERPT = 80

ERROR = "error"
WARNING = "warning"


@dataclass(slots=True)
class Finding:
    """One located problem: file, line, event seq, JSON pointer, requirement id, code, explanation."""

    code: str
    requirement: str | None
    message: str
    line: int | None = None
    seq: int | None = None
    pointer: str | None = None
    column: int | None = None
    severity: str = ERROR
    file: str = ""
    #: for a compressed artifact: the 0-based zstd frame holding ``line`` (a logical line)
    frame: int | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"file": self.file, "severity": self.severity, "code": self.code}
        for key in ("requirement", "frame", "line", "column", "seq", "pointer"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        out["message"] = self.message
        return out


@dataclass
class LoadedLog:
    """What the CLI works on: the events a loader would keep, with their file lines."""

    name: str
    kind: str  # "jsonl" | "json"
    size: int
    header_line: dict[str, Any] | None = None  # the parsed first line when it is a session header
    header_ok: bool = False  # JSONL-2 shape check passed
    events: list[Any] = field(default_factory=list)
    event_lines: list[int | None] = field(default_factory=list)
    event_pointers: list[str] = field(default_factory=list)  # "" for JSONL, "/<index>" for JSON arrays
    findings: list[Finding] = field(default_factory=list)
    lines: int = 0
    rows: int = 0  # packed chunk rows read
    row_members: int = 0  # events that came out of rows
    stopped_at_line: int | None = None  # where a torn tail made reading stop
    bad_event_lines: set[int] = field(default_factory=set)  # lines whose JSON is already reported

    def add(self, finding: Finding) -> None:
        finding.file = self.name
        self.findings.append(finding)


class _Hole:
    """An unreadable line (JSONL-5) and why."""

    __slots__ = ("column", "reason")

    def __init__(self, reason: str, column: int | None = None) -> None:
        self.reason = reason
        self.column = column


_EMPTY = _Hole("empty line")  # shared: a file of blank lines holds one object, not one per line


def _excerpt(raw: bytes) -> str:
    text = raw[:_EXCERPT].decode("utf-8", errors="replace")
    return repr(text) + ("…" if len(raw) > _EXCERPT else "")


_ANOMALY = {
    # kind -> (code, requirement, severity)
    "duplicate-key": ("JSON_DUPLICATE_KEY", "JSON-12", WARNING),
    "lone-surrogate": ("JSON_LONE_SURROGATE", "JSON-13", WARNING),
    "unsafe-integer": ("JSON_UNSAFE_INTEGER", "DEC-3", WARNING),
    "negative-zero": ("JSON_NOT_LOSSLESS", "JSON-2", ERROR),
    "infinite-number": ("JSON_NOT_LOSSLESS", "JSON-2", ERROR),
}


def _anomaly_finding(anomaly: jsondiag.Anomaly, line: int | None, base: str = "") -> Finding:
    code, req, severity = _ANOMALY[anomaly.kind]
    message = anomaly.detail
    if anomaly.kind == "unsafe-integer":
        message += "; readers that use IEEE doubles (JavaScript) silently change it"
    elif anomaly.kind in ("negative-zero", "infinite-number"):
        message += "; not a lossless JSON value, a loader rejects the event"
    elif anomaly.kind == "lone-surrogate":
        message += "; the format round-trips it, but it is not valid Unicode and many tools reject it"
    return Finding(code, req, message, line=line, pointer=base + anomaly.pointer, severity=severity)


def _parse_slow(raw: bytes, line: int | None, findings: list[Finding]) -> Any:
    """Exact parse of one JSON text with located anomalies; returns the value or a `_Hole`."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        findings.append(
            Finding(
                "JSON_TEXT_INVALID",
                "JSONL-5",
                f"invalid UTF-8 at byte {exc.start + 1} of the line; loaders replace it with U+FFFD, "
                "so the stored text is already corrupted",
                line=line,
                column=exc.start + 1,
            )
        )
        text = raw.decode("utf-8", errors="replace")
    try:
        value, anomalies, depth = jsondiag.parse(text)  # noqa: RUF059 - the unpacking names the triple's shape
    except jsondiag.JsonSyntaxError as exc:
        if exc.kind == "empty":
            return _EMPTY
        col = exc.offset + 1
        where = f"column {col}"
        if exc.kind == "syntax" and exc.offset >= len(text.rstrip()):
            return _Hole(f"truncated JSON text ({exc.message} at {where})", col)
        return _Hole(f"{exc.message} at {where}", col)
    for anomaly in anomalies:
        findings.append(_anomaly_finding(anomaly, line))
    return value


def _dup_hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        raise _Duplicate
    return result


class _Duplicate(Exception):
    pass


def parse_line(raw: bytes, line: int | None, findings: list[Finding]) -> Any:
    """One JSONL line -> value, or a `_Hole`; anomalies are appended to `findings`."""
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return _parse_slow(raw, line, findings)
    try:
        canonical = orjson.dumps(value, option=orjson.OPT_STRICT_INTEGER) == raw
    except orjson.JSONEncodeError:  # an integer beyond 53 bits (or nesting orjson cannot write)
        return _parse_slow(raw, line, findings)
    if canonical:
        if b"-0.0" in raw:
            return _parse_slow(raw, line, findings)
        return value
    # Not byte-identical (other escaping, spacing, CR, float spelling...): confirm there is no
    # duplicate key, no integer beyond 64 bits and no negative zero before trusting orjson.
    if b"-0" in raw or any(raw.count(d) for d in (b"e-3", b"E-3")) or _has_long_digit_run(raw):
        return _parse_slow(raw, line, findings)
    try:
        json.loads(raw, object_pairs_hook=_dup_hook)
    except (_Duplicate, RecursionError, ValueError):
        return _parse_slow(raw, line, findings)
    return value


_DIGITS = bytes.maketrans(b"123456789", b"000000000")


def _has_long_digit_run(raw: bytes) -> bool:
    return b"0" * 16 in raw.translate(_DIGITS)


def header_problem(value: Any) -> tuple[str, str] | None:
    """Why a parsed first line is not a JSONL header line (JSONL-2), with the JSON pointer of the member at fault, or None.

    The pointer lets the validator drop the header's schema finding about the same member (one defect, one finding).
    """
    if not isinstance(value, dict):
        return f"the first line is a JSON {type(value).__name__}, not a session header object", ""
    if value.get("type") != _HEADER_TYPE:
        kind = value.get("type")
        if isinstance(kind, str) and "seq" in value:
            return f"the first line is a {kind!r} event: the session header line is missing", ""
        return f"the first line has type {kind!r}, not {_HEADER_TYPE!r}", "/type"
    version = value.get("version")
    if type(version) not in (int, float):
        return "header line: version must be a number", "/version"
    if type(value.get("id")) is not str:
        return "header line: id must be a string", "/id"
    if not _is_safe_nonneg(value.get("createdAt")):
        return "header line: createdAt must be a non-negative safe integer", "/createdAt"
    if "delegationDepth" not in value:
        return "header line: delegationDepth is missing (always written, required on read)", "/delegationDepth"
    if not _is_safe_nonneg(value.get("delegationDepth")):
        return "header line: delegationDepth must be a non-negative safe integer", "/delegationDepth"
    return None


def _is_header_like(value: Any) -> bool:
    return isinstance(value, dict) and value.get("type") == _HEADER_TYPE and "seq" not in value


def read_source(path: str, stdin: BinaryIO | None = None) -> bytes:
    """The bytes of FILE (``-`` = stdin); raises OSError for the CLI to report."""
    if path == "-":
        stream = stdin or sys.stdin.buffer
        return stream.read()
    with open(path, "rb") as handle:
        return handle.read()


def load_log(data: bytes, name: str, *, progress: Callable[[int], None] | None = None) -> LoadedLog:
    """Bytes of a JSONL artifact or a JSON array of events -> `LoadedLog` (never raises on content)."""
    log = LoadedLog(name=name, kind="jsonl", size=len(data))
    if not data:
        log.add(Finding("JSONL_NO_HEADER", "JSONL-2", "the file is empty: an artifact starts with a session header line"))
        return log
    body = data[3:] if data.startswith(_BOM) else data
    if body.lstrip(b" \t\r\n")[:1] == b"[":
        _load_array(data, log)
    else:
        _load_jsonl(data, log, progress)
    return log


def _load_array(data: bytes, log: LoadedLog) -> None:
    log.kind = "json"
    findings: list[Finding] = []
    if data.startswith(_BOM):
        log.add(Finding("JSON_TEXT_INVALID", "JSON-12", "the file starts with a UTF-8 byte order mark; strict JSON readers reject it", line=1, column=1))
        data = data[3:]
    value = _parse_slow(data, None, findings) if _needs_slow_document(data) else orjson.loads(data)
    for finding in findings:
        if finding.line is None and finding.pointer is not None:
            finding.line = None
        log.add(finding)
    if isinstance(value, _Hole):
        line = column = None
        if value.column is not None:  # a character offset in the whole text: locate it as line and column
            text = data.decode("utf-8", errors="replace")
            offset = value.column - 1
            line = text.count("\n", 0, offset) + 1
            column = offset - (text.rfind("\n", 0, offset) + 1) + 1
        hint = ("; the file starts with '[' so it is read as one JSON array, but more follows it "
                "(a JSONL artifact starts with a session header line)" if "extra data" in value.reason else "")
        reason = value.reason.rsplit(" at column ", 1)[0]
        log.add(Finding("JSON_TEXT_INVALID", "JSON-12", f"the file is not valid JSON: {reason}{hint}",
                        line=line, column=column))
        return
    if not isinstance(value, list):
        log.add(Finding("SEED_ENVELOPE", "SEED-3", f"a JSON event file must be an array of events, not a {type(value).__name__}"))
        return
    log.events = value
    log.event_lines = [None] * len(value)
    log.event_pointers = [f"/{i}" for i in range(len(value))]
    log.lines = data.count(b"\n") + 1


def _needs_slow_document(data: bytes) -> bool:
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        return True
    if b"-0" in data or _has_long_digit_run(data):
        return True
    try:
        json.loads(data, object_pairs_hook=_dup_hook)
    except (_Duplicate, RecursionError, ValueError):
        return True
    del value
    return False


def _load_jsonl(data: bytes, log: LoadedLog, progress: Callable[[int], None] | None) -> None:
    lines = data.split(b"\n")
    fragment = lines.pop()  # b"" when the file ends with a newline
    log.lines = len(lines) + (1 if fragment else 0)
    crlf = [i + 1 for i, raw in enumerate(lines) if raw.endswith(b"\r")]
    if crlf:
        log.add(
            Finding(
                "JSONL_CRLF",
                "JSONL-3",
                f"{len(crlf)} line(s) end in CRLF (first: line {crlf[0]}); records are separated by \\n alone. "
                "Readers tolerate the \\r as whitespace, but writers never produce it",
                line=crlf[0],
                severity=WARNING,
            )
        )
    if not lines:
        log.add(
            Finding(
                "JSONL_NO_HEADER",
                "JSONL-2",
                f"no complete line: {len(fragment)} bytes without a newline (a torn header); a loader rejects the file",
                line=1,
            )
        )
        return
    first = lines[0]
    if first.startswith(_BOM):
        log.add(
            Finding(
                "JSONL_BAD_HEADER",
                "JSONL-2",
                "the file starts with a UTF-8 byte order mark: the header line is not valid JSON for a loader "
                "(remove the first 3 bytes)",
                line=1,
                column=1,
            )
        )
        first = first[3:]
    header_findings: list[Finding] = []
    header = parse_line(first, 1, header_findings)
    for finding in header_findings:
        log.add(finding)
    first_is_event = False
    if isinstance(header, _Hole):
        log.add(Finding("JSONL_BAD_HEADER", "JSONL-2", f"the header line is not valid JSON: {header.reason}", line=1, column=header.column))
    else:
        problem = header_problem(header)
        if problem is None:
            log.header_line = header
            log.header_ok = True
        else:
            log.add(Finding("JSONL_BAD_HEADER", "JSONL-2", problem[0], line=1, pointer=problem[1] or None))
            if isinstance(header, dict) and header.get("type") == _HEADER_TYPE:
                log.header_line = header
            elif isinstance(header, dict) and "seq" in header:
                first_is_event = True
    start = 0 if first_is_event else 1
    decoded: list[Any] = [None] * (len(lines) - start)
    tick = max(1, len(lines) // 200)
    findings = log.findings
    for i in range(start, len(lines)):
        raw = lines[i]
        number = i + 1
        if progress is not None and i % tick == 0:
            progress(i)
        if not raw or raw == b"\r":
            decoded[i - start] = _EMPTY
            continue
        before = len(findings)
        value = parse_line(raw, number, findings)
        for finding in findings[before:]:
            finding.file = log.name
        if isinstance(value, _Hole):
            decoded[i - start] = value
            continue
        if isinstance(value, dict):
            tag = value.get("type")
            if type(tag) is str and tag in _ROW_TYPES:
                try:
                    members = decoded[i - start] = decode_storage_record(value)
                except ChunkRowError as exc:
                    decoded[i - start] = _Hole(f"malformed {tag} row ({exc.message})")
                    log.add(Finding("CHUNK_ROW_MALFORMED", "CHUNK-9", f"{exc.message}", line=number))
                    log.bad_event_lines.add(number)
                else:
                    log.rows += 1
                    log.row_members += len(members)
                continue
            if _is_header_like(value) and number > 1:
                log.add(
                    Finding(
                        "JSONL_BAD_HEADER",
                        "JSONL-1",
                        f"a session header line at line {number}: the header must be the first line "
                        "(loaders read it as an event without seq)",
                        line=number,
                    )
                )
                log.bad_event_lines.add(number)
                decoded[i - start] = _Hole("a session header line that is not first")
                continue
        decoded[i - start] = [value]
    _emulate_loader(log, decoded, start, fragment)


def _emulate_loader(log: LoadedLog, decoded: list[Any], start: int, fragment: bytes) -> None:
    """JSONL-6/7: committed region, holes, seq contiguity; keep going where a loader would stop only for corruption."""
    last_turn_end = -1
    for i in range(len(decoded) - 1, -1, -1):
        records = decoded[i]
        if not isinstance(records, _Hole) and any(
            isinstance(e, dict) and e.get("type") == "turn/end" for e in records
        ):
            last_turn_end = i
            break
    committed_line = last_turn_end + start + 1 if last_turn_end >= 0 else None
    events, event_lines = log.events, log.event_lines
    expected = 0
    run: list[Any] = []  # [finding, first line, last line, reason] of a run of unreadable lines of one reason
    for i, records in enumerate(decoded):
        number = i + start + 1
        if isinstance(records, _Hole):
            if number in log.bad_event_lines and i <= last_turn_end:
                continue  # already reported with its own finding
            if i <= last_turn_end:
                if run and run[2] == number - 1 and run[3] == records.reason:
                    run[2] = number  # one finding per run (a megabyte of blank lines is one defect)
                    run[0].message = (f"{number - run[1] + 1} unreadable lines (lines {run[1]}-{number}) inside the "
                                      f"committed region (which ends at the turn/end on line {committed_line}): "
                                      f"{records.reason}; a loader rejects the whole file")
                    continue
                finding = Finding(
                    "JSONL_CORRUPT",
                    "JSONL-7",
                    f"unreadable line inside the committed region (which ends at the turn/end on line "
                    f"{committed_line}): {records.reason}; a loader rejects the whole file",
                    line=number,
                    column=records.column,
                )
                log.add(finding)
                run = [finding, number, number, records.reason]
                continue
            dropped = len(decoded) - i - 1
            log.add(
                Finding(
                    "JSONL_TORN_TAIL",
                    "JSONL-7",
                    f"unreadable line after the last turn/end ({records.reason}): a crash tail; a loader stops "
                    f"here and drops it" + (f" and the {dropped} line(s) after it" if dropped else ""),
                    line=number,
                    column=records.column,
                    severity=WARNING,
                )
            )
            log.stopped_at_line = number
            break
        stop = False
        for k, event in enumerate(records):
            seq = event.get("seq") if isinstance(event, dict) else None
            if type(seq) is not int or seq != expected:
                shown = "no seq" if seq is None else f"seq {seq!r}"
                committed = i <= last_turn_end
                log.add(
                    Finding(
                        "JSONL_CORRUPT" if committed else "JSONL_TORN_TAIL",
                        "JSONL-7",
                        f"{shown} where seq {expected} was expected, "
                        + (
                            "inside the committed region: a loader rejects the whole file"
                            if committed
                            else "after the last turn/end: a loader stops here and drops the rest of the file"
                        ),
                        line=number,
                        seq=seq if type(seq) is int else None,
                        pointer="/seq",
                        severity=ERROR if committed else WARNING,
                    )
                )
                if committed:
                    # Resynchronise as a compiler does: report the defect once, then check every later
                    # record against what it would have been. The record after this one tells which:
                    following = _following_seq(decoded, i, k)
                    if following == expected + 1:  # this one record is misnumbered: it holds its place
                        if isinstance(event, dict):
                            event = {**event, "seq": expected}
                    elif following == expected:  # an extra record (a duplicate, an insertion)
                        continue
                    elif type(seq) is int and (following == seq + 1 or seq > expected):
                        expected = seq  # the numbering jumps (a gap, a renumbering): reported once
                    else:
                        continue  # an unnumbered or duplicate record cannot take a place in the log
                else:
                    log.stopped_at_line = number
                    stop = True
                    break
            events.append(event)
            event_lines.append(number)
            expected += 1
        if stop:
            break
    log.event_pointers = [""] * len(events)
    if fragment:
        log.add(fragment_finding(fragment, log.lines))


_LOOKAHEAD = 16  # lines searched for the record after a misnumbered one (bounded: linear in the log)


def _following_seq(decoded: list[Any], i: int, k: int) -> Any:
    """The seq of the record after member ``k`` of line ``i`` (holes skipped), or None."""
    records = decoded[i]
    if k + 1 < len(records):
        nxt = records[k + 1]
        return nxt.get("seq") if isinstance(nxt, dict) else None
    for records in decoded[i + 1 : i + 1 + _LOOKAHEAD]:
        if not isinstance(records, _Hole) and records:
            nxt = records[0]
            return nxt.get("seq") if isinstance(nxt, dict) else None
    return None


def fragment_finding(fragment: bytes, line: int) -> Finding:
    """JSONL-4: the warning for a final fragment without newline (shared with `sessionspec.validator.fastlog`)."""
    parsed = True
    try:
        orjson.loads(fragment)
    except orjson.JSONDecodeError:
        parsed = False
    detail = "it parses as JSON, but a record is complete only with its newline" if parsed else "it is a truncated record"
    return Finding(
        "JSONL_TORN_TAIL",
        "JSONL-4",
        f"the last line has no final newline ({len(fragment)} bytes, {_excerpt(fragment)}): a crash tail; "
        f"{detail}, and loaders ignore it",
        line=line,
        severity=WARNING,
    )
