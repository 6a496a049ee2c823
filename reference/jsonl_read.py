"""The one reader of stored JSONL text (JSONL-2 … JSONL-9; SEED-9 for a JSON array of events).

One pass over a log's lines decides what a loader decides: the header line (JSONL-2), holes
(JSONL-5: unparsable, empty or malformed-row lines, a header line that is not first), the
committed region up to the last ``turn/end`` (JSONL-6), corruption inside it and the torn tail
after it where reading stops (JSONL-7), a final fragment without ``\\n`` (JSONL-4), and the seq
numbering. It has two modes over the same decisions (the first line's in one function of both,
`read_header_line`):

* **first defect** (`read_damaged`, behind `jsonl.read_artifact` and so every load path): each
  line is decoded by the load path's line rule (``TABLE.decode_line``), and the first defect in
  the committed region raises the loader's located `JsonlError`;
* **every defect** (`load_log`, behind `sessionspec validate` and the inspect commands): each
  line is parsed with its anomalies located (BOM, invalid UTF-8, CRLF, duplicate keys, lone
  surrogates, unsafe integers, ``-0.0``, ``NaN``, deep nesting, huge lines: a finding each, never a
  traceback), every defect is a located `Finding`, and reading goes on past a defect in the
  committed region (`_Numbering` resynchronises after a misnumbered record) up to the torn tail.

Every line is parsed by the one parsing path of log text, `json_text.loads` (with its anomaly
hook in the every-defect mode).
"""

from __future__ import annotations

import bisect
import re
from array import array
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple, TypeGuard

from sessionspec.spec import FORMAT
from sessionspec.spec.error_codes import ErrorCode
from sessionspec.spec.errors import ChunkRowError, JsonlError, JsonTextError, SessionSpecError
from sessionspec.spec.schema_types import JsonObject, JsonValue

from . import json_text
from .chunk_rows import ROW_SPECS, ROW_TYPES, decode_storage_record, expand_row, expand_row_frozen, validate_row
from .finding import ERROR, WARNING, Finding, bounded
from .json_value import NotLossless, freeze_parsed, gc_paused
from .json_value import is_nonneg_safe_int as _is_nonneg_safe_int
from .revision import revision_of
from .rule_table import TABLE

if TYPE_CHECKING:
    from sessionspec.reference.revision import RevisionLike

__all__ = [
    "ANOMALY_FINDINGS",
    "ERROR",
    "UNREADABLE_LINE",
    "WARNING",
    "Explainer",
    "Finding",
    "FindingList",
    "HeaderReading",
    "LoadedLog",
    "bounded",
    "crlf_finding",
    "fragment_finding",
    "header_line_problem",
    "holds_event_array",
    "in_place",
    "is_negative_zero",
    "load_log",
    "may_hold_crlf",
    "parse_line",
    "read_damaged",
    "read_entries",
    "read_header_line",
    "row_in_place",
    "whole_lines",
]

_HEADER_TYPE: str = FORMAT.jsonl_header_line_type
_FORMAT_VERSION: int = FORMAT.session_format_version
_ROW_TYPES = frozenset(ROW_TYPES)
_BOM = b"\xef\xbb\xbf"
_EXCERPT = 80

UNREADABLE_LINE: Any = object()
"""What the line decoder gives for a line that holds no readable record (JSONL-5)."""


def header_line_problem(value: JsonValue, revision: RevisionLike = None) -> Finding | None:
    """The reader's shape check of line 0 (JSONL-2) at ``revision``: the finding (``JSONL_BAD_HEADER`` on line 1)
    saying why the parsed first line is not a header line, pointing at the member at fault (no pointer for the
    whole line), or None when it is one.

    Validators report the reason and drop a schema finding about the same member (one defect, one finding).
    """
    if not isinstance(value, dict):
        return _bad_header(f"the first line is a JSON {type(value).__name__}, not a session header object", "")
    kind = value.get("type")
    if kind != _HEADER_TYPE:
        if isinstance(kind, str) and "seq" in value:
            return _bad_header(f"the first line is a {kind!r} event: the session header line is missing", "")
        return _bad_header(f"the first line has type {kind!r}, not {_HEADER_TYPE!r}", "/type")
    if type(value.get("version")) not in (int, float):
        return _bad_header("header line: version must be a number", "/version")
    if type(value.get("id")) is not str:
        return _bad_header("header line: id must be a string", "/id")
    if not _is_nonneg_safe_int(value.get("createdAt")):
        return _bad_header("header line: createdAt must be a non-negative safe integer", "/createdAt")
    if "delegationDepth" not in value:
        return _bad_header("header line: delegationDepth is missing (always written, required on read)", "/delegationDepth")
    if not _is_nonneg_safe_int(value.get("delegationDepth")):
        return _bad_header("header line: delegationDepth must be a non-negative safe integer", "/delegationDepth")
    for key, form in _optional_line_fields(revision).items():
        if key in value and not _line_field_fits(value[key], form):
            return _bad_header(f"header line: {key} must be {_line_field_words(form)} when present", f"/{key}")
    return None


def _bad_header(message: str, pointer: str) -> Finding:
    return Finding("JSONL_BAD_HEADER", "JSONL-2", message, line=1, pointer=pointer or None)


def _optional_line_fields(revision: RevisionLike) -> Mapping[str, Mapping[str, Any]]:
    """The optional header-line members the reader of ``revision`` checks when present
    (``jsonl.headerLineOptionalFields``: a ``const`` or a JSON ``type`` per member)."""
    if revision is None:
        return {}
    from sessionspec.spec import load_spec

    return load_spec(revision=revision_of(revision)).constants["jsonl"].get("headerLineOptionalFields", {})  # type: ignore[no-any-return]


def _line_field_fits(value: Any, form: Mapping[str, Any]) -> bool:
    if "const" in form:
        return type(value) is type(form["const"]) and value == form["const"]
    return form.get("type") != "string" or type(value) is str


def _line_field_words(form: Mapping[str, Any]) -> str:
    return json_text.dumps(form["const"]) if "const" in form else f"a {form.get('type')}"


_UNLINED = 1 << 62


def _line_order(finding: Finding) -> int:
    return finding.line if finding.line is not None else _UNLINED


def is_negative_zero(finding: Finding) -> bool:
    """A JSON-2 finding about ``-0.0`` (the loader's parser reads it; only a check of the value rejects it),
    not about an infinite number (which the loader's parser refuses: the line is unreadable)."""
    return finding.code == "JSON_NOT_LOSSLESS" and " is negative zero" in finding.message


class FindingList(list[Finding]):
    """A log's findings, keeping at most ``keep`` of them (0 = all) and counting every one.

    What is kept is what a report shows first: the first ``keep`` in line order (ties in the
    order found). Once twice that many are held, the list is sorted and cut back, so memory does
    not grow with the number of defects; the cut findings are counted by severity (after
    ``locate``, which may change a severity, as `sessionspec.storage` does for a torn frame).
    """

    def __init__(self, items: Iterable[Finding] = (), keep: int = 0,
                 locate: Callable[[Finding], None] | None = None) -> None:
        super().__init__(items)
        self.keep = keep
        self.locate = locate
        self.cut_errors = 0
        self.cut_warnings = 0
        #: the line of each cut error (`_UNLINED` when it has none): what `demote_from` needs of it
        self.cut_error_lines: array[int] = array("q")

    def append(self, finding: Finding) -> None:
        super().append(finding)
        if self.keep and len(self) >= 2 * self.keep + 64:
            self.cut()

    def cut(self) -> None:
        """Keep the first ``keep`` findings in line order; count the rest."""
        if not self.keep or len(self) <= self.keep:
            return
        self.sort(key=_line_order)
        for finding in self[self.keep :]:
            if self.locate is not None:
                self.locate(finding)
            if finding.severity == ERROR:
                self.cut_errors += 1
                self.cut_error_lines.append(_line_order(finding))
            else:
                self.cut_warnings += 1
        del self[self.keep :]

    def demote_from(self, line: int, note: str) -> None:
        """Errors on ``line`` and after become warnings (``note`` added to each kept one's message): a
        loader stops reading before ``line`` (a torn tail), so nothing there is one of its errors."""
        for finding in self:
            if finding.severity == ERROR and finding.line is not None and finding.line >= line:
                finding.severity = WARNING
                finding.message += note
        if self.cut_errors:
            kept = array("q", (n for n in self.cut_error_lines if n < line or n == _UNLINED))
            moved = len(self.cut_error_lines) - len(kept)
            self.cut_error_lines = kept
            self.cut_errors -= moved
            self.cut_warnings += moved

    @property
    def errors(self) -> int:
        """Errors found, kept or not."""
        return self.cut_errors + sum(1 for f in self if f.severity == ERROR)

    @property
    def warnings(self) -> int:
        """Warnings (any other severity) found, kept or not."""
        return self.cut_warnings + sum(1 for f in self if f.severity != ERROR)

    @property
    def total(self) -> int:
        return len(self) + self.cut_errors + self.cut_warnings


#: (code, seq, JSON pointer) of a reader finding that may explain a schema finding on the same line
Explainer = tuple[ErrorCode, int | None, str]


@dataclass
class LoadedLog:
    """What the CLI works on: the events a loader would keep, with their file lines."""

    name: str
    kind: str  # "jsonl" | "json"
    size: int
    header_line: JsonObject | None = None  # the parsed first line when it is a session header
    header_ok: bool = False  # JSONL-2 shape check passed
    events: list[JsonObject] = field(default_factory=list)
    event_lines: list[int | None] = field(default_factory=list)
    event_pointers: list[str] = field(default_factory=list)  # "" for JSONL, "/<index>" for JSON arrays
    findings: FindingList = field(default_factory=FindingList)
    lines: int = 0
    rows: int = 0  # packed chunk rows read
    row_members: int = 0  # events that came out of rows
    stopped_at_line: int | None = None  # where a torn tail made reading stop
    bad_event_lines: set[int] = field(default_factory=set)  # lines whose JSON is already reported
    #: reader findings with a pointer that cannot be found again from a line (header line, JSON arrays)
    explainers: dict[int | None, list[Explainer]] = field(default_factory=dict)
    #: lines whose JSON text has anomalies and where they start in ``data``: what `line_explainers`
    #: parses again (16 bytes a line, so the anomalies need not be kept beyond ``findings``)
    anomaly_lines: array[int] = field(default_factory=lambda: array("q"))
    anomaly_offsets: array[int] = field(default_factory=lambda: array("q"))
    data: bytes = b""
    #: records the revision's load path read upgraded (JSONL-13), by stored type (set by the checker)
    upgraded: dict[str, int] = field(default_factory=dict)
    #: earlier-format records no upgrade rewrites, read as stored and valid at the earlier revision, by type
    kept_as_stored: dict[str, int] = field(default_factory=dict)
    #: the first-defect mode (the load path): the first defect raises the loader's `JsonlError` (for ``where``)
    first_defect: bool = False
    where: str | None = None
    #: first-defect mode: the file lines of the holes
    hole_lines: list[int] = field(default_factory=list)
    #: the file line of the last line holding a turn/end (the end of the committed region), if any
    committed_line: int | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.findings, FindingList):
            self.findings = FindingList(self.findings)

    def add(self, finding: Finding) -> None:
        finding.file = self.name
        self.findings.append(finding)

    def line_explainers(self, line: int | None) -> list[Explainer]:
        """The reader's located findings on ``line`` (JSON anomalies, a rejected header member)."""
        found = list(self.explainers.get(line, ()))
        if line is not None and self.anomaly_lines:
            at = bisect.bisect_left(self.anomaly_lines, line)
            if at < len(self.anomaly_lines) and self.anomaly_lines[at] == line:
                start = self.anomaly_offsets[at]
                end = self.data.find(b"\n", start)
                again: list[Finding] = []
                parse_line(self.data[start : end if end >= 0 else len(self.data)], line, again)
                found += [(f.code, f.seq, f.pointer) for f in again if f.pointer is not None]
        return found


class _Hole:
    """An unreadable line (JSONL-5) and why."""

    __slots__ = ("column", "reason")

    def __init__(self, reason: str, column: int | None = None) -> None:
        self.reason = reason
        self.column = column


_EMPTY = _Hole("empty line")  # shared: a file of blank lines holds one object, not one per line
_UNREADABLE = _Hole("unreadable line")  # first-defect mode: a line the line rule cannot read


class _Blanks(_Hole):
    """A run of ``count`` (> 1) blank lines, held as one entry: an artifact that inflates to millions of
    blank lines costs one entry and one C-speed scan, not a list slot and a Python step per line."""

    __slots__ = ("count",)

    def __init__(self, count: int) -> None:
        super().__init__(_EMPTY.reason)
        self.count = count


#: whole lines of white space from a blank line on (one character class: matched at C speed, no stack per line)
_BLANK_RUN = re.compile(rb"[ \t\r\n]*\n")
_SPACE = frozenset(b" \t\r")


class _LineMap:
    """Entry index -> file line, where a `_Blanks` entry stands for several lines (none: line = i + start + 1)."""

    __slots__ = ("at", "extra", "start")

    def __init__(self, start: int) -> None:
        self.start = start
        self.at: array[int] = array("q")  # entry indices of the runs, ascending
        self.extra: array[int] = array("q")  # lines the runs up to and including this one add

    def add_run(self, index: int, count: int) -> None:
        self.at.append(index)
        self.extra.append((self.extra[-1] if self.extra else 0) + count - 1)

    def line(self, i: int) -> int:
        if not self.at:
            return i + self.start + 1
        k = bisect.bisect_left(self.at, i)
        return i + self.start + 1 + (self.extra[k - 1] if k else 0)


def _excerpt(raw: bytes) -> str:
    text = raw[:_EXCERPT].decode("utf-8", errors="replace")
    return repr(text) + ("…" if len(raw) > _EXCERPT else "")


#: the validators' finding of each anomaly kind of `json_text.loads`: kind -> (code, requirement, severity)
ANOMALY_FINDINGS: dict[str, tuple[ErrorCode, str, str]] = {
    "duplicate-key": ("JSON_DUPLICATE_KEY", "JSON-12", WARNING),
    "lone-surrogate": ("JSON_LONE_SURROGATE", "JSON-13", WARNING),
    "unsafe-integer": ("JSON_UNSAFE_INTEGER", "DEC-3", WARNING),
    "negative-zero": ("JSON_NOT_LOSSLESS", "JSON-2", ERROR),
    "infinite-number": ("JSON_NOT_LOSSLESS", "JSON-2", ERROR),
}


def _anomaly_finding(anomaly: json_text.Anomaly, line: int | None, base: str = "") -> Finding:
    code, req, severity = ANOMALY_FINDINGS[anomaly.kind]
    message = anomaly.detail
    if anomaly.kind == "unsafe-integer":
        message += "; readers that use IEEE doubles (JavaScript) silently change it"
    elif anomaly.kind in ("negative-zero", "infinite-number"):
        message += "; not a lossless JSON value, a loader rejects the event"
    elif anomaly.kind == "lone-surrogate":
        message += "; the format round-trips it, but it is not valid Unicode and many tools reject it"
    return Finding(code, req, message, line=line, pointer=base + anomaly.pointer, severity=severity)


def parse_line(raw: bytes, line: int | None, findings: list[Finding]) -> JsonValue | _Hole:
    """One JSON text (a JSONL line, or a whole JSON document) -> value, or a `_Hole`; its anomalies (each
    located) are appended to `findings`. The one parsing path, `json_text.loads`, with its anomaly hook."""
    anomalies: list[json_text.Anomaly] = []
    try:
        value = json_text.loads(raw, on_anomaly=anomalies.append, infinity=True, invalid_utf8="replace")
    except json_text.JsonSyntaxError as exc:
        _report(anomalies, line, findings)
        if exc.kind == "empty":
            return _EMPTY
        col = exc.offset + 1
        where = f"column {col}"
        if exc.kind == "syntax" and exc.offset >= len(raw.decode("utf-8", errors="replace").rstrip()):
            return _Hole(f"truncated JSON text ({exc.reason} at {where})", col)
        return _Hole(f"{exc.reason} at {where}", col)
    if anomalies:
        _report(anomalies, line, findings)
    return value


def _report(anomalies: list[json_text.Anomaly], line: int | None, findings: list[Finding]) -> None:
    for anomaly in anomalies:
        if anomaly.kind == "invalid-utf8":
            at = (anomaly.offset or 0) + 1
            findings.append(Finding("JSON_TEXT_INVALID", "JSONL-5", f"invalid UTF-8 at byte {at} of the line; loaders "
                                    "replace it with U+FFFD, so the stored text is already corrupted",
                                    line=line, column=at))
        else:
            findings.append(_anomaly_finding(anomaly, line))


def _is_header_like(value: Any) -> bool:
    return isinstance(value, dict) and value.get("type") == _HEADER_TYPE and "seq" not in value


def load_log(data: bytes, name: str, *, progress: Callable[[int], None] | None = None, keep: int = 0,
             locate: Callable[[Finding], None] | None = None) -> LoadedLog:
    """Bytes of a JSONL artifact or a JSON array of events -> `LoadedLog` (never raises on content).

    ``keep`` > 0 bounds the findings kept (`FindingList`; the rest are counted); ``locate`` is the
    storage form's locating step, applied to a finding before it is counted and not kept.
    """
    log = LoadedLog(name=name, kind="jsonl", size=len(data), findings=FindingList(keep=keep, locate=locate), data=data)
    if holds_event_array(data):
        _load_array(data, log)
    else:
        _load_jsonl(data, log, progress)
    return log


def holds_event_array(data: bytes) -> bool:
    """Whether ``data`` is read as a JSON array of events (SEED-9) rather than a JSONL artifact: its first byte after a
    UTF-8 byte order mark and JSON whitespace is ``[``. The one statement of the form: the load path (`load_log`),
    revision detection and the validator's accept-fast pass (which leaves such a file to the exact path) ask it."""
    body = data[3:] if data.startswith(_BOM) else data
    return body.lstrip(b" \t\r\n")[:1] == b"["


def _load_array(data: bytes, log: LoadedLog) -> None:
    log.kind = "json"
    findings: list[Finding] = []
    if data.startswith(_BOM):
        log.add(Finding("JSON_TEXT_INVALID", "JSON-12", "the file starts with a UTF-8 byte order mark; strict JSON readers reject it", line=1, column=1))
        data = data[3:]
    value = parse_line(data, None, findings)
    for finding in findings:
        log.add(finding)
        if finding.pointer is not None:
            log.explainers.setdefault(None, []).append((finding.code, finding.seq, finding.pointer))
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
    log.lines = data.count(b"\n") + 1
    _place_lines(log, value, 0, b"", array=True)


class HeaderReading(NamedTuple):
    """What `read_header_line` read of an artifact's first line (JSONL-2)."""

    #: the first line's parse (None when the line was not read: no complete line, or not JSON)
    value: Any
    #: the shape check passed (`header_line_problem` found nothing): the first line is a session header line
    ok: bool
    #: where the first line ends (the offset of its ``\\n``; -1: the artifact has no complete line)
    end: int
    #: every-defect mode: every located finding on the first line, in order (first-defect mode: none, it raises)
    findings: list[Finding]

    @property
    def header_line(self) -> JsonObject | None:
        """The first line when it is a header line, or one of type ``session`` whose shape is wrong (what a schema
        checks), else None."""
        value = self.value
        return value if self.ok or (isinstance(value, dict) and value.get("type") == _HEADER_TYPE) else None

    @property
    def first_is_event(self) -> bool:
        """The first line is an event, not a header line (the header line is missing: reading goes on from line 1)."""
        value = self.value
        return not self.ok and isinstance(value, dict) and value.get("type") != _HEADER_TYPE and "seq" in value


def _refuses_version_on_read(parsed: object, revision: RevisionLike) -> TypeGuard[JsonObject]:
    """Whether the reader of ``revision`` refuses this first line for its format version before any
    shape check (the published reader does, so a newer log says "upgrade", not "corrupt")."""
    from sessionspec.spec import load_spec

    if not load_spec(revision=revision_of(revision)).constants["jsonl"].get("versionRefusedOnRead"):
        return False
    version = parsed.get("version") if isinstance(parsed, dict) else None
    return type(version) in (int, float) and version != _FORMAT_VERSION


def read_header_line(data: bytes, revision: RevisionLike = None, *, every_defect: bool = False,
                     where: str | None = None) -> HeaderReading:
    """The one reading of an artifact's first line (JSONL-2; JSONL-12 where ``revision``'s reader refuses a
    format version on read), in two modes over the same decisions: is there a complete line, is it JSON, is its
    version refused on read, is it a session header line (`header_line_problem`), and is it an event instead.

    * **first defect** (the load path, `jsonl.read_artifact`): the line is parsed by the loader's parser
      (`json_text.loads`) and the first defect raises the loader's `JsonlError` (``where``: its path):
      ``JSONL_NO_HEADER``, ``JSONL_BAD_HEADER`` (not valid JSON, with the parse error as cause), ``JSONL_VERSION``,
      ``JSONL_BAD_HEADER`` (not a session header);
    * **every defect** (the validator, `load_log`): the line is parsed with its anomalies located (`parse_line`), a
      UTF-8 byte order mark is a finding and is skipped, and each defect is a located `Finding` (line 1).

    The line is parsed once, in either mode."""
    end = data.find(b"\n")
    if end < 0:
        if not every_defect:
            raise JsonlError("empty or header-less session log", "JSONL_NO_HEADER", requirement="JSONL-2", path=where)
        missing = (Finding("JSONL_NO_HEADER", "JSONL-2", "the file is empty: an artifact starts with a session header line")
                   if not data else
                   Finding("JSONL_NO_HEADER", "JSONL-2", f"no complete line: {len(data)} bytes without a newline (a torn "
                           "header); a loader rejects the file", line=1))
        return HeaderReading(None, False, end, [missing])
    first = data[:end]
    findings: list[Finding] = []
    if not every_defect:
        try:
            value: Any = json_text.loads(first)
        except (SessionSpecError, ValueError) as error:
            raise JsonlError("corrupt session log: header line is not valid JSON", "JSONL_BAD_HEADER",
                             requirement="JSONL-2", path=where, cause=error) from error
    else:
        if first.startswith(_BOM):
            findings.append(Finding("JSONL_BAD_HEADER", "JSONL-2", "the file starts with a UTF-8 byte order mark: the "
                                    "header line is not valid JSON for a loader (remove the first 3 bytes)",
                                    line=1, column=1))
            first = first[3:]
        value = parse_line(first, 1, findings)
        if isinstance(value, _Hole):
            findings.append(Finding("JSONL_BAD_HEADER", "JSONL-2", f"the header line is not valid JSON: {value.reason}",
                                    line=1, column=value.column))
            return HeaderReading(None, False, end, findings)
    if revision is not None and _refuses_version_on_read(value, revision):
        refusal = JsonlError(f"unsupported session format version {value['version']!r} (only {_FORMAT_VERSION} is "
                             "read)", "JSONL_VERSION", requirement="JSONL-12", path=where)
        if not every_defect:
            raise refusal
        findings.append(Finding.from_error(refusal, line=1, pointer="/version"))
    problem = header_line_problem(value, revision)
    if problem is not None:
        if not every_defect:
            raise JsonlError("corrupt session log: first line is not a session header", "JSONL_BAD_HEADER",
                             requirement="JSONL-2", path=where)
        findings.append(problem)
    return HeaderReading(value, problem is None, end, findings)


def _read_header(data: bytes, log: LoadedLog) -> HeaderReading:
    """The every-defect reading of the first line (`read_header_line`) into ``log``: its findings (those with a
    pointer explain a schema finding on line 1), the header line and whether it passed the shape check."""
    reading = read_header_line(data, every_defect=True)
    for finding in reading.findings:
        log.add(finding)
        if finding.pointer is not None:
            log.explainers.setdefault(1, []).append((finding.code, finding.seq, finding.pointer))
    log.header_line = reading.header_line
    log.header_ok = reading.ok
    return reading


@dataclass(frozen=True)
class Damaged:
    """What the first-defect mode keeps of an artifact whose header line the caller checked."""

    events: list[Any]
    truncate_offset: int
    committed_through_line: int | None
    holes: list[int]
    stopped_at_line: int | None
    #: the events are frozen by ``freeze_parsed`` (every line was whole and in place, read with ``freeze``)
    frozen: bool = False


def _discard(value: Any) -> None:
    """``list.append`` for a pass that keeps nothing."""


def whole_lines(lines: list[bytes], keep: bool = True, freeze: bool = False,
                take: Callable[[JsonObject], object] | None = None) -> tuple[list[JsonObject], int, int]:
    """The first-defect mode's step over whole records in place, from line 2 on (one pass, the common case):
    their events, the index of the last line among them holding a ``turn/end`` (0: none) and the index of
    the first line that is not a whole record with the next seq (``len(lines)``: none).

    Such a line is what `_place_lines` places in one step (`_Numbering.in_order`); from the first other
    line on (a hole, a seq gap, a malformed row, text only the exact parser reads as something else),
    `read_damaged` decides each line with the line rule (``TABLE.decode_line``). Text `json_text.fast_loads`
    declines costs that line the exact half of `json_text.loads`, the one parsing path.
    ``keep=False`` only decides: rows are validated, not expanded, and no event is kept; ``take`` is then called
    with each whole record as stored (a row validated, not expanded) as it is decided, so a caller that streams
    what it makes of them (`jsonl.write_unpacked`) parses each line once; it has taken the records of the lines
    before the index returned, and no other.
    ``freeze``: the events frozen by ``freeze_parsed`` (the load path); a value that is not lossless
    (``-0.0``) ends the step there too.
    """
    decode = json_text.fast_loads
    declined = json_text.FAST_DECLINED
    rows = ROW_SPECS
    events: list[Any] = []
    append = events.append if keep else _discard if take is None else take
    extend = events.extend
    expected = 0
    last_turn_end = 0
    for index in range(1, len(lines)):
        try:
            value = decode(lines[index])
        except declined:  # `json_text.loads`'s fast half declines: its exact half reads this line alone
            try:
                value = json_text.loads(lines[index])
            except JsonTextError:
                return events, last_turn_end, index
        if value.__class__ is not dict:
            return events, last_turn_end, index
        tag = value.get("type")
        row = rows.get(tag) if tag.__class__ is str else None
        if row is None:
            if not in_place(value.get("seq"), expected):
                return events, last_turn_end, index
            if freeze:
                try:
                    value = freeze_parsed(value)
                except NotLossless:
                    return events, last_turn_end, index
            append(value)
            expected += 1
            if tag == "turn/end":
                last_turn_end = index
        else:
            try:
                if keep:
                    members = expand_row_frozen(value, row) if freeze else expand_row(value, row)
                    count = len(members)
                else:
                    count = len(validate_row(value, row)[1])
            except (ChunkRowError, NotLossless):
                return events, last_turn_end, index
            if not row_in_place(TABLE.member_seqs(value["seq0"], count), expected):
                return events, last_turn_end, index
            if keep:
                extend(members)
            expected += count
            if take is not None:
                take(value)
    return events, last_turn_end, len(lines)


def read_damaged(lines: list[bytes], where: str | None = None, *, freeze: bool = False,
                 complete: int | None = None) -> Damaged:
    """The load path's reading of an artifact's complete lines (``lines[0]``, the header line, checked by the
    caller; a final fragment left out) (JSONL-4 … JSONL-8), first defect: whole records in place in one step
    (`whole_lines`; ``freeze``: frozen), then each line from the first other one decoded by the line rule
    (``TABLE.decode_line``); a hole or a seq gap inside the committed region raises ``JSONL_CORRUPT``; reading
    stops at the first one after it (a torn tail), whose line start is where the next write truncates.
    ``complete``: the bytes of the complete lines, when the caller knows them."""
    events, last_whole_end, stop = whole_lines(lines, freeze=freeze)
    if stop == len(lines):  # every line whole and in place: nothing to truncate, no holes
        return Damaged(events, sum(map(len, lines)) + len(lines) if complete is None else complete,
                       last_whole_end + 1 if last_whole_end > 0 else None, [], None, freeze)
    log = LoadedLog(name=where or "", kind="jsonl", size=0, first_defect=True, where=where)
    log.events = events
    decode_line = TABLE.decode_line
    decoded: list[Any] = []
    append = decoded.append
    holes = log.hole_lines
    for number in range(stop + 1, len(lines) + 1):
        records = decode_line(lines[number - 1])
        if records is UNREADABLE_LINE:
            holes.append(number)
            append(_UNREADABLE)
        else:
            append(records)
    _place_lines(log, decoded, stop, b"", expected=len(events))  # entry i is line stop + i + 1
    stopped = log.stopped_at_line
    kept = lines if stopped is None else lines[: stopped - 1]
    committed = log.committed_line
    if committed is None and last_whole_end > 0:  # no turn/end after the whole lines: the last one among them
        committed = last_whole_end + 1
    return Damaged(log.events, sum(map(len, kept)) + len(kept), committed,
                   [n for n in holes if committed is None or n > committed], stopped, False)


#: A storage form's refusal of a defect in the committed region, entry ``i``: a hole (``expected`` None) or a
#: record whose seq is not the ``expected`` one.
Refusal = Callable[[int, int | None, object], SessionSpecError]


def _at_or_before(i: int, last_turn_end: int) -> bool:
    return i <= last_turn_end


def read_entries(entries: Sequence[Sequence[JsonObject] | None], refuse: Refusal,
                 committed: Callable[[int, int], bool] | None = None) -> tuple[list[JsonObject], int | None]:
    """The load path's reading of a stored log held as entries other than lines (a SQLite session's rows: the
    records of each, or None where it cannot be read), first defect, with `read_damaged`'s decisions: a
    defect in the committed region raises ``refuse(i, expected, seq)``; reading stops at the first one after
    it (a torn tail). The records kept, and the index of the entry reading stopped at (None: every one)."""
    log = LoadedLog(name="", kind="jsonl", size=0, first_defect=True)
    decoded: list[Any] = [_UNREADABLE if entry is None else entry for entry in entries]
    with gc_paused():
        _place_lines(log, decoded, 1, b"", refuse=refuse, committed=committed)
    stopped = log.stopped_at_line
    return log.events, None if stopped is None else stopped - 2  # (entry i is line i + 2)


def may_hold_crlf(data: bytes) -> bool:
    """JSONL-3: whether ``data`` may hold a line that ends in CRLF: a CR anywhere (a CRLF that two pieces of a file
    split leaves its CR in the first). The load path counts CRLF line ends only in text where this holds (one byte is
    found at memchr speed, two are counted slowly); the validator's accept-fast pass gives up on such text."""
    return b"\r" in data


def crlf_finding(count: int, first_line: int) -> Finding:
    """JSONL-3's warning of a JSONL artifact with ``count`` lines ending in CRLF, the first at line ``first_line``."""
    return Finding("JSONL_CRLF", "JSONL-3",
                   f"{count} line(s) end in CRLF (first: line {first_line}); records are separated by \\n alone. "
                   "Readers tolerate the \\r as whitespace, but writers never produce it",
                   line=first_line, severity=WARNING)


def _load_jsonl(data: bytes, log: LoadedLog, progress: Callable[[int], None] | None) -> None:
    end = data.rfind(b"\n")
    fragment = data[end + 1 :]  # b"" when the file ends with a newline
    count = data.count(b"\n")  # complete lines (walked with find: no list of every line is held)
    log.lines = count + (1 if fragment else 0)
    crlf = data.count(b"\r\n") if may_hold_crlf(data) else 0
    if crlf:
        log.add(crlf_finding(crlf, data.count(b"\n", 0, data.find(b"\r\n")) + 1))
    header = _read_header(data, log)  # (an empty file, or no complete line: its JSONL_NO_HEADER)
    if header.end >= 0:
        _load_lines(data, log, 0 if header.first_is_event else 1, progress)


def _load_lines(data: bytes, log: LoadedLog, start: int, progress: Callable[[int], None] | None) -> bytes:
    """Decode the lines from line index ``start`` on (0: the first line is an event) and place their records;
    the final fragment (b"" when the data ends with a newline)."""
    count = data.count(b"\n")
    fragment = data[data.rfind(b"\n") + 1 :]
    first_end = data.find(b"\n")
    decoded: list[Any] = []  # one entry a line, a run of blank lines one (not preallocated per line)
    append = decoded.append
    lines = _LineMap(start)
    tick = max(1, count // 200)
    found: list[Finding] = []
    pos = 0 if start == 0 else first_end + 1
    i = start  # the line index; entry i - start - (lines the runs before it add)
    entry = 0
    next_tick = 0
    while i < count:
        at = pos
        pos = data.find(b"\n", at) + 1
        raw = data[at : pos - 1]
        number = i + 1
        if progress is not None and i >= next_tick:
            progress(i)
            next_tick = i + tick
        if not raw or raw[0] in _SPACE:
            run = _BLANK_RUN.match(data, at)  # None when the line holds more than white space
            if run is not None:  # lines of white space only (a loader's empty line): one entry for the run
                blank = data.count(b"\n", at, run.end())
                if blank > 1:
                    lines.add_run(entry, blank)
                    append(_Blanks(blank))
                    pos = run.end()
                else:
                    append(_EMPTY)
                i += blank
                entry += 1
                continue
        value = parse_line(raw, number, found)
        if found:
            if any(f.code == "JSON_NOT_LOSSLESS" and not is_negative_zero(f) for f in found):
                # the loader's parser refuses a number that overflows to infinity: for it the line is
                # unreadable (JSONL-5), a hole, told by its JSON-2 finding (a torn tail's after the last turn/end)
                value = _Hole("a number that overflows to infinity")
                log.bad_event_lines.add(number)
            for finding in found:
                log.add(finding)
            if number > 1 and any(f.pointer is not None for f in found):  # (line 1's are in explainers)
                log.anomaly_lines.append(number)
                log.anomaly_offsets.append(at)
            found.clear()
        if type(value) is dict:  # the common record: kept as it is unless it is a row or a header
            tag = value.get("type")
            append(value if type(tag) is not str or (tag not in _ROW_TYPES and tag != _HEADER_TYPE)
                   else _decoded(value, number, log))
        else:
            append(_decoded(value, number, log))
        i += 1
        entry += 1
    _place_lines(log, decoded, start, fragment, lines=lines)
    return fragment


def _decoded(value: Any, number: int, log: LoadedLog) -> Any:
    """What a parsed line holds for the loader: a `_Hole`, a list of records (a packed row's members, or
    a line that is a JSON array), or the one record (not wrapped: a list per line would double the memory)."""
    if isinstance(value, _Hole):
        return value
    if isinstance(value, dict):
        tag = value.get("type")
        if type(tag) is str and tag in _ROW_TYPES:
            try:
                members = decode_storage_record(value)
            except ChunkRowError as exc:
                log.add(Finding("CHUNK_ROW_MALFORMED", "CHUNK-9", f"{exc.message}", line=number))
                log.bad_event_lines.add(number)
                return _Hole(f"malformed {tag} row ({exc.message})")
            log.rows += 1
            log.row_members += len(members)
            return members
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
            return _Hole("a session header line that is not first")
    return [value] if type(value) is list else value


#: The findings of a line `_decoded` makes a hole of (a malformed row, a late header line).
_HOLE_CODES = frozenset({"CHUNK_ROW_MALFORMED", "JSONL_BAD_HEADER"})


def _records(entry: Any) -> Any:
    return entry if type(entry) is list else (entry,)


def _seq(event: Any) -> Any:
    return event.get("seq") if isinstance(event, dict) else None


def in_place(seq: object, expected: int) -> TypeGuard[int]:
    """JSONL-7 (SEED-9 in a JSON array): whether a record of seq ``seq`` is in place where seq ``expected`` is due
    (the count of records placed before it: seqs are contiguous from 0).

    The one statement of the numbering: the load path's reading (`whole_lines`, `_Numbering`) decides by it, and
    so does the validator's accept-fast pass (`sessionspec.validator.fastlog`), which gives up where it is false."""
    return seq.__class__ is int and seq == expected


def row_in_place(seqs: Sequence[int], expected: int) -> bool:
    """JSONL-7 of a packed row whose members have the seqs ``seqs`` (the rule table's `member_seqs`): whether each
    member is in place, the first where seq ``expected`` is due (:func:`in_place` of each). Of a ``range`` its first
    member and its step decide: the seqs of a range of step 1 are ``expected``, ``expected + 1`` … exactly when its
    first is ``expected``.

    The load path's reading (`whole_lines`) and the validator's accept-fast pass place a row by it."""
    if seqs.__class__ is range:
        return seqs.step == 1 and bool(seqs) and in_place(seqs.start, expected)
    return bool(seqs) and all(in_place(seq, expected + i) for i, seq in enumerate(seqs))


def _past_commit(committed_line: int | None) -> str:
    """Where a torn tail is, said as it is: after the turn/end ending the committed region, or anywhere in a
    log that has no turn/end (nothing is committed)."""
    if committed_line is None:
        return "in a log with no turn/end, where nothing is committed"
    return f"after the last turn/end at line {committed_line}"


def _place_lines(log: LoadedLog, decoded: list[Any], start: int, fragment: bytes, *, array: bool = False,
                    lines: _LineMap | None = None, refuse: Refusal | None = None,
                    committed: Callable[[int, int], bool] | None = None, expected: int = 0) -> None:
    """JSONL-6/7 (SEED-9 for a JSON array): committed region, holes, seq numbering. First defect: raise at
    the first defect inside the committed region, stop at the torn tail. Every defect: each is a finding and
    reading goes on where a loader would stop, except at a torn tail (`_Numbering` resynchronises after a
    misnumbered record). ``refuse`` (first defect): the error a defect in the committed region raises, for a
    storage form other than JSONL text; ``committed``: whether entry i lies in the committed region ending at
    entry j (default: i <= j), a storage form's own statement of it."""
    last_turn_end = len(decoded) - 1 if array else -1  # a JSON array has no torn tail
    for i in range(len(decoded) - 1, -1, -1) if not array else ():
        entry = decoded[i]
        if not isinstance(entry, _Hole) and any(
            isinstance(e, dict) and e.get("type") == "turn/end" for e in _records(entry)
        ):
            last_turn_end = i
            break
    lines = lines or _LineMap(start)
    line_of = lines.line
    committed_line = line_of(last_turn_end) if last_turn_end >= 0 else None
    log.committed_line = committed_line
    first_defect = log.first_defect
    last_line = line_of(len(decoded)) - 1  # the last complete line
    numbering = _Numbering(log, decoded, lines, array, refuse)
    numbering.expected = expected  # (first defect: the seq after the records placed before ``decoded``)
    inside = committed if committed is not None else _at_or_before
    numbering.past_commit = _past_commit(committed_line)
    run: list[Any] = []  # [finding, first line, last line, reason] of a run of unreadable lines of one reason
    in_order = numbering.in_order
    for i, entry in enumerate(decoded):
        if entry.__class__ is list and not array and not numbering.placed and in_order(i, entry):
            continue  # (the common entry, placed in one step)
        number = line_of(i)
        if isinstance(entry, _Hole):
            if first_defect:
                if inside(i, last_turn_end):
                    if refuse is not None:
                        raise refuse(i, None, None)
                    raise JsonlError(f"corrupt session log: unparsable committed event at line {number}",
                                     "JSONL_CORRUPT", requirement="JSONL-7", path=log.where)
                log.stopped_at_line = number
                break
            if number in log.bad_event_lines and i <= last_turn_end:
                continue  # already reported with its own finding
            if i <= last_turn_end:
                last = number + entry.count - 1 if type(entry) is _Blanks else number
                if run and run[2] == number - 1 and run[3] == entry.reason:
                    run[2] = last  # one finding per run (a megabyte of blank lines is one defect)
                    run[0].message = (f"{last - run[1] + 1} unreadable lines (lines {run[1]}-{last}) inside the "
                                      f"committed region (which ends at the turn/end on line {committed_line}): "
                                      f"{entry.reason}; a loader rejects the whole file")
                    continue
                finding = Finding(
                    "JSONL_CORRUPT",
                    "JSONL-7",
                    f"unreadable line inside the committed region (which ends at the turn/end on line "
                    f"{committed_line}): {entry.reason}; a loader rejects the whole file",
                    line=number,
                    column=entry.column,
                )
                if last > number:
                    finding.message = (f"{last - number + 1} unreadable lines (lines {number}-{last}) inside the "
                                       f"committed region (which ends at the turn/end on line {committed_line}): "
                                       f"{entry.reason}; a loader rejects the whole file")
                log.add(finding)
                run = [finding, number, last, entry.reason]
                continue
            dropped = last_line - number
            if number in log.bad_event_lines:  # a loader drops the line unread: the torn tail is the one finding
                log.findings[:] = [f for f in log.findings if f.line != number or f.code not in _HOLE_CODES]
            log.add(
                Finding(
                    "JSONL_TORN_TAIL",
                    "JSONL-7",
                    f"unreadable line {numbering.past_commit} ({entry.reason}): a crash tail; a loader stops "
                    f"here and drops it" + (f" and the {dropped} line(s) after it" if dropped else ""),
                    line=number,
                    column=entry.column,
                    severity=WARNING,
                )
            )
            log.stopped_at_line = number
            break
        records = entry if type(entry) is list and not array else (entry,)
        if not numbering.placed and numbering.in_order(i, records):
            continue
        if not numbering.line(i, records, inside(i, last_turn_end)):
            log.stopped_at_line = number
            break
    if first_defect:
        return
    if log.stopped_at_line is not None:  # the reader's errors on lines the loader drops unread are not its errors
        log.findings.demote_from(log.stopped_at_line, "; on a line a loader drops unread (a torn tail)")
    if fragment:
        log.add(fragment_finding(fragment, log.lines))


_LOOKAHEAD = 16  # records searched after a misnumbered one (bounded: linear in the log)
_GAPS = 16  # recent runs of missing seqs remembered, so that a record moved further is still one finding
_MOVED = 1024  # how far back such a record is put in its place (a bounded list insert: linear in the log)


class _Numbering:
    """Places each record of a log by its seq, as a loader would, and resynchronises after a defect.

    A compiler reports a syntax error once and goes on checking what follows as it would have been;
    here the records after a misnumbered one decide what it was, and the defect is one finding:

    * a block of up to `_LOOKAHEAD` records holding exactly the next seqs, out of order (two records
      swapped, one moved by k places): checked in seq order;
    * the record after it has the next seq: this one is misnumbered and keeps its place, unless its
      own seq turns up later where the one taken for it belongs: the two were swapped, and each is
      put in its place;
    * a seq already placed: a repeated record, skipped with the run of repeated records after it;
    * the record after it has the expected seq: an extra record (an insertion), skipped, or one moved
      early: placed when its seq is due;
    * a higher seq that the next records follow: records are missing (dropped, or the numbering
      jumps); numbering goes on from there. A missing seq found later (a record moved further than
      the look-ahead) is told in that same finding and put in its place (at most `_MOVED` back).

    Each placed record is appended to the log's events with its line and pointer, so the fold and
    the invariants see the log in seq order. The state kept is bounded (`_GAPS` entries each).
    """

    def __init__(self, log: LoadedLog, decoded: list[Any], lines: _LineMap, array: bool,
                 refuse: Refusal | None = None) -> None:
        self.log, self.decoded, self.array, self.refuse = log, decoded, array, refuse
        self.first_defect = log.first_defect
        self.line_of = lines.line
        self.past_commit = _past_commit(None)  # where the uncommitted tail is, for its findings
        self.expected = 0
        self.placed: set[tuple[int, int]] = set()  # records of a reordered block placed ahead of their turn
        # [first missing, last missing, finding, how many found later, event index, seqs put in place]
        self.gaps: list[list[Any]] = []
        self.early: dict[int, tuple[Any, int, Finding]] = {}  # records skipped for a seq still ahead
        self.renumbered: dict[int, tuple[int, Any, int, Finding]] = {}  # seq -> (event index, record, entry, finding)
        self.repeated: list[Any] | None = None  # [next seq of a repeated run, its length, finding, message]

    def _where(self, i: int) -> str:
        return f"index {i}" if self.array else f"line {self.line_of(i)}"

    def _place(self, event: Any, i: int) -> None:
        log = self.log
        log.events.append(event)
        if self.first_defect:
            return
        log.event_lines.append(None if self.array else self.line_of(i))
        log.event_pointers.append(f"/{i}" if self.array else "")

    def _finding(self, i: int, seq: Any, message: str, severity: str = ERROR) -> Finding:
        shown = "no seq" if seq is None else f"seq {seq!r}"
        if self.array:
            finding = Finding("SEED_NOT_CONTIGUOUS", "SEED-9", f"{shown} where {self.expected} was expected: a seed "
                              f"is contiguous from 0{message}", seq=seq if type(seq) is int else None,
                              pointer=f"/{i}/seq")
        else:
            finding = Finding("JSONL_CORRUPT" if severity == ERROR else "JSONL_TORN_TAIL", "JSONL-7",
                              f"{shown} where seq {self.expected} was expected, " + (
                                  "inside the committed region: a loader rejects the whole file"
                                  if severity == ERROR else
                                  f"{self.past_commit}: a loader stops here and drops the rest of the file"
                              ) + message, line=self.line_of(i), seq=seq if type(seq) is int else None,
                              pointer="/seq", severity=severity)
        self.log.add(finding)
        return finding

    def line(self, i: int, records: Any, committed: bool) -> bool:
        """Place the records of entry ``i``; False when reading stops there (a torn tail)."""
        for k, event in enumerate(records):
            if self.placed and (i, k) in self.placed:
                self.placed.discard((i, k))
                continue
            seq = _seq(event)
            if in_place(seq, self.expected):
                self._place(event, i)
                self.expected += 1
                self.repeated = None  # a run of repeated seqs is in a row: a record in place ends it
                continue
            if self.repeated is not None:
                if seq == self.repeated[0] and seq < self.expected:  # the repeated run goes on: same defect
                    self._repeat(seq, event)
                    continue
                self.repeated = None
            if not committed:
                if not self.first_defect:
                    self._finding(i, seq, "", WARNING)
                return False
            if self.first_defect:
                if self.refuse is not None:
                    raise self.refuse(i, self.expected, seq)
                raise JsonlError(
                    f"corrupt session log: seq gap in committed region at line {self.line_of(i)} "
                    f"(expected {self.expected}, got {seq!r})",
                    "JSONL_CORRUPT", requirement="JSONL-7", path=self.log.where,
                )
            self._resync(i, k, event, seq)
        return True

    def in_order(self, i: int, records: Any) -> bool:
        """Place the records of entry ``i`` when each has the next seq (the common case, in one step)
        and return True; else place nothing and return False (then `line` goes record by record)."""
        expected = first = self.expected
        for event in records:
            if not in_place(event.get("seq") if type(event) is dict else None, expected):
                return False
            expected += 1
        count = expected - first
        self.expected = expected
        self.repeated = None  # records in place end a run of repeated seqs
        log = self.log
        if self.first_defect:  # the load path keeps the records only
            log.events.extend(records)
            return True
        where = None if self.array else self.line_of(i)
        pointer = f"/{i}" if self.array else ""
        if count == 1:
            log.events.append(records[0])
            log.event_lines.append(where)
            log.event_pointers.append(pointer)
        elif count:
            log.events.extend(records)
            log.event_lines.extend([where] * count)
            log.event_pointers.extend([pointer] * count)
        return True

    def _ahead(self, i: int, k: int) -> Any:
        """(entry, member, record) of the records from member ``k`` of entry ``i`` on, holes skipped."""
        decoded = self.decoded
        for j in range(i, min(len(decoded), i + _LOOKAHEAD)):
            entry = decoded[j]
            if isinstance(entry, _Hole):
                continue
            records = self._records(entry)
            for m in range(k if j == i else 0, len(records)):
                yield j, m, records[m]

    def _records(self, entry: Any) -> Any:
        return (entry,) if self.array else _records(entry)

    def _following(self, i: int, k: int) -> Any:
        """The seq of the record after member ``k`` of entry ``i`` (holes skipped), or None."""
        records = self._records(self.decoded[i])
        if k + 1 < len(records):
            return _seq(records[k + 1])
        decoded = self.decoded
        for j in range(i + 1, min(len(decoded), i + _LOOKAHEAD)):
            entry = decoded[j]
            if not isinstance(entry, _Hole):
                records = self._records(entry)
                if records:
                    return _seq(records[0])
        return None

    def _block(self, i: int, k: int) -> list[tuple[int, int, int, Any]] | None:
        """The records from (i, k) on that hold exactly the next seqs, out of order, or None."""
        expected = self.expected
        seq = _seq(self._records(self.decoded[i])[k])
        if type(seq) is not int or not expected < seq < expected + _LOOKAHEAD:
            return None  # (the common case, decided without looking ahead)
        block: list[tuple[int, int, int, Any]] = []
        seen: set[int] = set()
        for count, (j, m, event) in enumerate(self._ahead(i, k)):
            seq = _seq(event)
            if count >= _LOOKAHEAD or type(seq) is not int or not expected <= seq < expected + _LOOKAHEAD or seq in seen:
                return None
            seen.add(seq)
            block.append((seq, j, m, event))
            if len(block) > 1 and max(seen) - expected + 1 == len(block):
                return block
        return None

    def _resync(self, i: int, k: int, event: Any, seq: Any) -> None:
        expected = self.expected
        block = self._block(i, k)
        if block is not None:
            self._reordered(block)
            return
        if type(seq) is int and seq < expected and (self._found_later(i, event, seq) or self._swapped(i, event, seq)):
            return
        if type(seq) is int and seq > expected and expected in self.early:
            self._place_early(i)
            if seq == self.expected:
                self._place(event, i)
                self.expected += 1
                return
            expected = self.expected
        following = self._following(i, k)
        if following == expected + 1:  # this one record is misnumbered: it holds its place
            finding = self._finding(i, seq, f"; the records around it are in order, so it is checked as seq {expected}")
            if type(seq) is int and seq > expected:  # unless its seq turns up later: a swap (`_swapped`)
                if len(self.renumbered) >= _GAPS:
                    del self.renumbered[next(iter(self.renumbered))]
                self.renumbered[expected] = (len(self.log.events), event, i, finding)
            self._place({**event, "seq": expected} if isinstance(event, dict) else event, i)
            self.expected += 1
        elif type(seq) is int and seq < expected:  # a record (or a run of them) repeated
            log = self.log
            first = (f" (the first is at {'index ' + log.event_pointers[seq][1:] if self.array else 'line ' + str(log.event_lines[seq])})"
                     if 0 <= seq < len(log.events) and _seq(log.events[seq]) == seq else "")
            same = self._same_as_placed(seq, event)
            finding = self._finding(i, seq, f"; a second record of seq {seq}{first}"
                                    f"{'' if same else ' with other content'}, skipped")
            self.repeated = [seq + 1, 1, finding, finding.message, same]
        elif following == expected:  # an extra record (an insertion, a record moved early)
            finding = self._finding(i, seq, "; an extra record (or one moved early), skipped (the next record "
                                    "continues the numbering)")
            if type(seq) is int and seq > expected:
                if len(self.early) >= _GAPS:
                    del self.early[next(iter(self.early))]
                self.early[seq] = (event, i, finding)
        elif type(seq) is int and (following == seq + 1 or seq > expected):
            missing = f"seq {expected}" if seq == expected + 1 else f"seqs {expected}-{seq - 1}"
            finding = self._finding(i, seq, f"; {missing} missing (a dropped record, or a jump in the numbering); "
                                    f"checking goes on from seq {seq}")
            self.gaps = [*self.gaps[-(_GAPS - 1):], [expected, seq - 1, finding, 0, len(self.log.events), []]]
            self.expected = seq
            self._place(event, i)
            self.expected += 1
        else:
            self._finding(i, seq, "; it cannot take a place in the log (skipped)")

    def _reordered(self, block: list[tuple[int, int, int, Any]]) -> None:
        """One finding for records holding the next seqs out of order; they are checked in seq order."""
        first = self.expected
        seqs = [b[0] for b in block]
        last = first + len(block) - 1
        where = {b[0]: self._where(b[1]) for b in block}
        swap = "; two records swapped" if len(block) == 2 else ""
        if seqs[1:] == list(range(first, last)):  # the first one came early
            message = (f"; seq {last} comes {len(block) - 1} record(s) early: it belongs after seq {last - 1} "
                       f"({where[last - 1]}){swap}")
        elif seqs[:-1] == list(range(first + 1, last + 1)):  # the last one came late
            message = (f"; seq {first} ({where[first]}) comes {len(block) - 1} record(s) late: it belongs "
                       f"before seq {first + 1}")
        else:
            message = f"; the records of seqs {first}-{last} are out of order"
        self._finding(block[0][1], block[0][0], message + "; they are checked in seq order")
        head = block[0][1:3]
        for _, j, m, event in sorted(block, key=lambda b: b[0]):
            self._place(event, j)
            if (j, m) != head:
                self.placed.add((j, m))
        self.expected = last + 1

    def _swapped(self, i: int, event: Any, seq: int) -> bool:
        """Seq ``seq`` turns up where the record taken for it (as misnumbered) belongs: the two were
        swapped. Each goes to its place, told in the first one's finding."""
        taken = self.renumbered.pop(seq, None)
        if taken is None or _seq(taken[1]) != self.expected:
            return False
        index, other, j, finding = taken
        log = self.log
        log.events[index] = event
        log.event_lines[index] = None if self.array else self.line_of(i)
        log.event_pointers[index] = f"/{i}" if self.array else ""
        self._place(other, j)
        self.expected += 1
        finding.message = (finding.message.split("; the records around it")[0]
                           + f"; it is swapped with seq {seq} ({self._where(i)}); they are checked in seq order")
        return True

    def _same_as_placed(self, seq: int, event: Any) -> bool:
        """Whether ``event`` equals the record already placed for ``seq`` (a repeat, not another record)."""
        events = self.log.events
        return 0 <= seq < len(events) and _seq(events[seq]) == seq and events[seq] == event

    def _repeat(self, seq: int, event: Any) -> None:
        """One more record of a run of seqs already placed, in order: told in the run's finding, as what it is:
        the same records again, or other records reusing those seqs (two writers appending to one file)."""
        run = self.repeated
        assert run is not None
        run[0], run[1], run[4] = seq + 1, run[1] + 1, run[4] and self._same_as_placed(seq, event)
        seqs = f"seqs {seq - run[1] + 1}-{seq}"
        run[2].message = (f"{run[3]}; {run[1]} records repeated in a row ({seqs}), all skipped" if run[4] else
                          f"{run[3]}; {run[1]} records in a row reuse {seqs} with other content (two writers "
                          "appending to one file?), all skipped")

    def _place_early(self, i: int) -> None:
        """Place the records skipped earlier for the seqs due now (each moved early): no new finding."""
        while self.expected in self.early:
            event, j, finding = self.early.pop(self.expected)
            finding.message = finding.message.split("; an extra record")[0] + (
                f"; it comes early: its place is before seq {self.expected + 1} ({self._where(i)}), where it is checked")
            self._place(event, j)
            self.expected += 1

    def _found_later(self, i: int, event: Any, seq: int) -> bool:
        """A record of a seq reported missing, found further on: told in the finding of the gap, and
        checked in its place (in seq order among the others found) when at most `_MOVED` records back."""
        log = self.log
        for n, gap in enumerate(self.gaps):
            if not gap[0] <= seq <= gap[1]:
                continue
            placed = bisect.bisect_left(gap[5], seq)
            if placed < len(gap[5]) and gap[5][placed] == seq:
                continue  # put in place already: this one is a repeat
            gap[3] += 1
            if gap[3] == 1:
                gap[2].message += f"; seq {seq} is found later, out of place ({self._where(i)})"
            elif gap[3] == 2:
                gap[2].message += "; and more of them"
            at = gap[4] + placed
            if len(log.events) - at <= _MOVED:
                log.events.insert(at, event)
                log.event_lines.insert(at, None if self.array else self.line_of(i))
                log.event_pointers.insert(at, f"/{i}" if self.array else "")
                gap[5].insert(placed, seq)
                for later in self.gaps[n + 1 :]:
                    later[4] += 1
            return True
        return False


def fragment_finding(fragment: bytes, line: int) -> Finding:
    """JSONL-4: the warning for a final fragment without newline (shared with `sessionspec.validator.fastlog`)."""
    parsed = True
    try:
        json_text.loads(fragment)
    except JsonTextError:
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
