"""Stored sessions in any of the three forms, as logical JSONL for the validator and the inspect commands.

The form is decided by content, never by name: the zstd magic starts a
compressed artifact, the SQLite header a session database, anything else is
JSONL text (or a JSON array). Each stored session becomes one :class:`Unit`:
its logical JSONL bytes (the text the raw form would hold), the findings the
storage layer itself makes (framing, checksums, database identity), and a
way to locate the validator's findings in the storage (a frame and logical
line for compressed artifacts, ``db#session-id`` and the row's seq for
databases). Nothing here writes: databases are opened read-only.
"""

from __future__ import annotations

import bisect
import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from sessionspec.reference import ERROR, WARNING, Finding, FindingList
from sessionspec.spec.error_codes import ErrorCode
from sessionspec.spec.errors import SessionSpecError, SqliteStoreError

if TYPE_CHECKING:
    from sessionspec.reference.jsonl_zstd import DecodedFrames
    from sessionspec.reference.sqlite_store import DecodedRow, SqliteStore

__all__ = ["FORM_NAMES", "Unit", "detect_form", "layout_owner", "named_form", "no_session", "open_database", "open_units",
           "session_id_text"]

JSONL, ZSTD, SQLITE = "jsonl", "jsonl-zstd", "sqlite"
#: First bytes of JSONL text (a JSON object or array, or white space before one). Neither binary form starts
#: with one of them (`tests/cli/test_storage_forms.py` checks the reference's magics), so a JSONL log is
#: recognised without loading the zstd and SQLite modules and their codecs (`sessionspec validate` start-up).
_TEXT_STARTS = frozenset(b"{[ \t\r\n")


def _binary_form(prefix: bytes) -> str | None:
    """ZSTD or SQLITE when `prefix` (a file's first 16 bytes, or fewer) starts like one, by the reference's own sniffing."""
    if not prefix or prefix[0] in _TEXT_STARTS:
        return None
    from sessionspec.reference.sqlite_store import is_sqlite
    from sessionspec.reference.zstd_frames import is_zstd

    if is_zstd(prefix):
        return ZSTD
    if is_sqlite(prefix):
        return SQLITE
    return None


@dataclass
class Unit:
    """One stored session, ready for the JSONL validator."""

    name: str
    form: str
    data: bytes
    findings: FindingList = field(default_factory=FindingList)
    #: sets ``frame`` / ``seq`` of a validator finding from its logical line (and clears synthetic lines)
    locate: Callable[[Finding], None] = lambda finding: None
    #: no logical content could be recovered: only ``findings`` are reported
    unreadable: bool = False
    #: the SQLite layout (``user_version``) a database was read at
    layout: int | None = None
    #: the one format revision that has that layout (None: no layout, or several revisions have it)
    layout_revision: str | None = None
    #: what the reader should know that is not a finding (a layout its revision's release commit refuses: DEC-21)
    notes: tuple[str, ...] = ()
    #: a compressed artifact's frames as its one frame walk decoded them (`jsonl_zstd.decode_frames`), when asked
    #: for (``open_units(frames=True)``: repair cuts and re-appends from them, not from a second walk of the same
    #: bytes; other readers do not keep a second copy of the plaintext)
    frames: DecodedFrames | None = None


#: what each storage form is called in messages
FORM_NAMES = {JSONL: "raw JSONL", ZSTD: "zstd-framed JSONL", SQLITE: "a SQLite store"}
#: file name endings that name a storage form (an output's name says what the user expects to find in it)
_NAMED_FORMS = ((".zstd", ZSTD), (".zst", ZSTD), (".jsonl", JSONL), (".db", SQLITE),
                (".sqlite", SQLITE), (".sqlite3", SQLITE))


def named_form(path: str) -> str | None:
    """The storage form a file name says (``*.jsonl.zstd`` / ``*.zst``, ``*.jsonl``, ``*.db`` /
    ``*.sqlite`` / ``*.sqlite3``), or None when it names none (``-``, ``out``, ``/dev/stdout``)."""
    if path == "-":
        return None
    lowered = path.lower()
    return next((form for suffix, form in _NAMED_FORMS if lowered.endswith(suffix)), None)


def detect_form(path: str) -> str:
    """``jsonl-zstd``, ``sqlite`` or ``jsonl`` from the first bytes of a regular file (``jsonl`` otherwise)."""
    if path == "-":
        return JSONL
    try:  # stat first: opening a FIFO here would take its writer's data from the real read
        if not stat.S_ISREG(os.stat(path).st_mode):
            return JSONL
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return JSONL
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return JSONL
        prefix = os.read(fd, 16)
    except OSError:
        return JSONL
    finally:
        os.close(fd)
    return _binary_form(prefix) or JSONL


def _finding(code: ErrorCode, requirement: str | None, message: str, *, severity: str = ERROR, frame: int | None = None,
             line: int | None = None, seq: int | None = None, file: str = "") -> Finding:
    return Finding(code, requirement, message, line=line, seq=seq, severity=severity, file=file, frame=frame)


# ---------------------------------------------------------------- compressed artifacts


def _zstd_unit(name: str, data: bytes, budget: int | None, keep: int = 0, frames: bool = False) -> Unit:
    """Decode every frame it can, by the reference's one frame walk in its every-defect mode
    (`jsonl_zstd.decode_frames`); the framing or decoding failure that ends the walk is a finding.

    ``keep`` > 0 bounds the findings kept (one a torn frame could be many; the rest are counted)."""
    from sessionspec.reference.jsonl_zstd import decode_frames

    unit = Unit(name, ZSTD, b"", findings=FindingList(keep=keep))
    decoded = decode_frames(data, budget=budget, every_defect=True)
    if frames:
        unit.frames = decoded
    texts, defect, torn_start = decoded.plaintexts, decoded.defect, decoded.torn_start
    if defect is not None:
        error = defect.error
        if defect.kind == "frame":
            start, end = defect.span or (0, 0)
            unit.findings.append(Finding.from_error(error, f"{error.message} (bytes {start}-{end}); "
                                                    "the frames after it are not read", frame=defect.frame,
                                                    line=defect.line, file=name))
        elif defect.kind == "scan":
            unit.findings.append(Finding.from_error(error, f"{error.message}, where a frame should start; "
                                                    "nothing after it is read", frame=defect.frame, file=name))
        else:  # a bomb in the torn frame is still a bomb
            unit.findings.append(Finding.from_error(error, frame=defect.frame, line=defect.line, file=name))
    torn = decoded.torn_plaintext or b""
    if defect is None and torn_start is not None:
        kept = torn.count(b"\n")
        unit.findings.append(_finding(
            "JSONL_TORN_TAIL", "ZSTD-7",
            f"the final zstd frame, from byte {torn_start}, is incomplete: a crash "
            f"tail; it still holds {kept} complete line(s), which loaders keep and re-append "
            "before cutting the frame", severity=WARNING, frame=len(texts), file=name))
    if texts and (not texts[0] or texts[0].find(b"\n") != len(texts[0]) - 1):
        unit.findings.append(_finding("ZSTD_HEADER_FRAME", "ZSTD-5",
                                      "the first frame is not exactly one header line (a file compressed in one "
                                      "piece is not a session artifact: the header needs its own frame)",
                                      frame=0, file=name))
    last = len(texts) - 1 if torn_start is None else len(texts)  # its fragment is the validator's finding
    for index, text in enumerate(texts):
        if index != last and text and not text.endswith(b"\n"):
            unit.findings.append(_finding("ZSTD_TORN_RECORD", "ZSTD-6",
                                          "this complete frame ends inside a record: only the final, incomplete "
                                          "frame may be torn", frame=index, file=name))
    complete = b"".join(texts)
    if not texts:
        unit.unreadable = True
        if not unit.findings:
            unit.findings.append(_finding("JSONL_NO_HEADER", "ZSTD-5", "no complete zstd frame: no header",
                                          frame=0, file=name))
    unit.data = complete + torn[: torn.rfind(b"\n") + 1]
    starts: list[int] = []
    line = 1
    for text in texts:
        starts.append(line)
        line += text.count(b"\n")
    torn_line = line if torn_start is not None else float("inf")  # first logical line of the torn frame
    if torn_start is not None:
        starts.append(line)

    def locate(finding: Finding) -> None:
        if finding.frame is None and finding.line is not None:
            finding.frame = max(bisect.bisect_right(starts, finding.line) - 1, 0)
        if finding.code == "JSONL_TORN_TAIL" and finding.line is not None and finding.line < torn_line:
            # a crash tail inside a complete frame is damage, not a crash: only the last frame can tear
            finding.code, finding.requirement, finding.severity = "ZSTD_TORN_RECORD", "ZSTD-6", ERROR
            finding.message = f"inside a complete frame: {finding.message.split(': a crash tail')[0]}"

    unit.locate = locate
    for finding in unit.findings:
        locate(finding)
    return unit


# ---------------------------------------------------------------- databases


def _row_lines(decoded: DecodedRow) -> list[tuple[Any, bytes, str | None]]:
    """One decoded row (`SqliteStore.decode_rows`, every-defect mode) as logical JSONL lines with their seqs (a packed
    row of the published layout is several events); a hole becomes one unparsable line, with why the codec refused
    it (the JSON reader's reason would be about that stand-in line)."""
    from sessionspec.reference import json_text

    row, events, defect = decoded.row, decoded.events, decoded.defect
    if events is not None:
        try:
            return [(e["seq"], json_text.dumps_bytes(e), None) for e in events]
        except SessionSpecError as error:
            why = f"its data does not decode: {_reason(error)}"
    elif defect is not None and defect.data_not_json is not None:
        why = f"its data is not JSON: {_reason(defect.data_not_json).replace('at line 1 column', 'at column')}"
    else:
        why = "its data is not an event of this layout's row codec"
    text = row[3] if isinstance(row[3], str) else repr(row[3])
    return [(row[0], ("<row " + repr(row[0]) + ": " + text.replace("\n", " ").replace("\r", " ")[:200] + ">").encode(
        "utf-8", "replace"), why)]


def _reason(error: Exception | str) -> str:
    from sessionspec.reference.json_text import display

    return display(error if isinstance(error, str) else str(getattr(error, "message", None) or error))[:200]


_LINE_WORD = re.compile(r"\bline(?:s\b|\(s\)|\b)")
_LINE_REF = re.compile(r"\b(?:(on|at) )?(lines?) (\d+)(?:-(\d+))?")


def _in_rows(message: str, seqs: list[Any]) -> str:
    """A message of the JSONL reader said of a session in a database: a logical line number becomes the seq
    of its row (line 1 is the sessions row), lines become rows: a database has no lines (#22)."""
    def seq(number: int) -> str:
        if number == 1:
            return "the session's header row"
        if 2 <= number < len(seqs) + 2 and type(seqs[number - 2]) is int:
            return f"seq {seqs[number - 2]}"
        return f"row {number - 1}"

    def swap(m: re.Match[str]) -> str:
        first, last = int(m.group(3)), m.group(4)
        prefix = "at " if m.group(1) else ""
        if last is None:
            return prefix + seq(first)
        a, b = seq(first), seq(int(last))
        return prefix + (f"seqs {a[4:]}-{b[4:]}" if a.startswith("seq ") and b.startswith("seq ") else f"{a} to {b}")

    message = _LINE_REF.sub(swap, message)
    return _LINE_WORD.sub(lambda m: "row" + m.group(0)[4:], message)


def open_database(path: str, *, writable: bool = False) -> SqliteStore:
    """Open a SQLite store at the layout its ``user_version`` names: each format revision has its own
    layout (SQLITE-1), and the layout is what tells a stored database's revision; a revision's layouts
    include those published releases write besides its own (``store.layout.refusal_note()`` says so,
    DEC-21). The default revision's layouts are tried first; a database no known layout accepts
    raises the default's error."""
    from sessionspec.reference.sqlite_store import SqliteStore, layouts_for
    from sessionspec.spec.revisions import known_revisions

    refused: SqliteStoreError | None = None
    for revision in known_revisions():  # the default first
        try:
            return SqliteStore.open(path, writable=writable, revision=revision)
        except SqliteStoreError as error:
            if error.code != "SQLITE_VERSION":
                raise
            refused = refused or error
    assert refused is not None  # known_revisions() is never empty
    known = "; ".join(f"{', '.join(str(layout.user_version) for layout in layouts_for(r))} at {r}"
                      for r in known_revisions())
    raise SqliteStoreError(f"{refused.message.split(', only')[0]}, which no known format revision has "
                           f"(layouts: {known})", refused.code,  # the refusal's own code
                           requirement=refused.requirement, path=refused.path)


def layout_owner(user_version: int) -> str | None:
    """The one format revision whose SQLite layouts include ``user_version`` (None: several or none):
    the revision a stored session without revision-specific content is read at."""
    from sessionspec.reference.sqlite_store import layouts_for
    from sessionspec.spec.revisions import known_revisions

    owners = [r for r in known_revisions() if any(layout.user_version == user_version for layout in layouts_for(r))]
    return owners[0] if len(owners) == 1 else None


def _database_units(path: str, session: str | None) -> tuple[list[Unit], str | None]:
    try:
        store = open_database(path)
    except SqliteStoreError as error:
        if error.code == "SQLITE_LOCKED":
            return [], f"{path}: {error.message} [{error.code}]"
        unit = Unit(path, SQLITE, b"", unreadable=True)
        unit.findings.append(Finding.from_error(error, file=path))
        return [unit], None
    units = []
    with store:
        try:
            ids = [cast(str, h["id"]) for h in store.list_sessions()]  # (the sessions table's TEXT key)
            if session is not None:
                if session not in ids:
                    return [], no_session(path, session, len(ids))
                ids = [session]
            notes = tuple(filter(None, [store.layout.refusal_note(), *store.notes]))
            owner = layout_owner(store.layout.user_version)
            for session_id in ids:
                unit = _session_unit(store, path, session_id)
                unit.layout, unit.notes = store.layout.user_version, notes
                unit.layout_revision = owner
                units.append(unit)
        except SqliteStoreError as error:
            if error.code == "SQLITE_LOCKED":
                return [], f"{path}: {error.message} [{error.code}]"
            unit = Unit(path, SQLITE, b"", unreadable=True)
            unit.findings.append(Finding.from_error(error, file=path))
            units.append(unit)
    return units, None


def _session_unit(store: SqliteStore, path: str, session_id: str) -> Unit:
    from sessionspec.reference.jsonl import header_bytes

    name = f"{path}#{session_id}"
    header = store.header(session_id)
    lines = [line for row in store.decode_rows(session_id, every_defect=True) for line in _row_lines(row)]
    # the row's header as the revision of the store's layout writes it (a published subagent's origin and
    # agentPreset kept, so the checks of that revision's reader see them)
    data = header_bytes(header, layout_owner(store.layout.user_version)) + b"".join(text + b"\n" for _, text, _ in lines)
    seqs = [seq for seq, _, _ in lines]
    undecoded = {number: why for number, (_, _, why) in enumerate(lines, 2) if why is not None}

    def locate(finding: Finding) -> None:
        if (finding.line is not None and 2 <= finding.line < len(seqs) + 2 and finding.seq is None
                and type(seqs[finding.line - 2]) is int):
            finding.seq = seqs[finding.line - 2]
        finding.message = _in_rows(finding.message, seqs)  # database rows have no lines: a place is a seq
        why = undecoded.get(finding.line) if finding.line is not None else None
        if why is not None and finding.column is not None:  # the reason is the row codec's, not JSON's
            finding.message = re.sub(r"\([^()]*at column \d+\)|: [^:;()]*at column \d+", lambda m: (
                f"({why})" if m.group(0).startswith("(") else f": {why}"), finding.message, count=1)
        finding.line = None
        finding.column = None

    return Unit(name, SQLITE, data, locate=locate)


# ---------------------------------------------------------------- entry point


def session_id_text(session: str) -> str:
    """A session id as messages print it: JSON-quoted (pasteable into --session, any id unambiguous), escaped."""
    import json

    from sessionspec.reference.json_text import display

    return display(json.dumps(session, ensure_ascii=False))


def no_session(path: str, session: str, count: int) -> str:
    """Every command's message for a --session the SQLite store at ``path`` does not hold."""
    from sessionspec.reference.json_text import display

    return f"{display(path)}: no session {session_id_text(session)} in the database (it holds {count})"


def open_units(path: str, read: Callable[[str], tuple[bytes | None, str | None]], *, session: str | None = None,
               budget: int | None = None, keep: int = 0, frames: bool = False) -> tuple[list[Unit], str | None]:
    """The stored sessions of one input, or why it cannot be read (an input error); ``keep`` > 0
    bounds the storage findings kept per session (`FindingList`); ``frames``: a compressed artifact's unit keeps
    its decoded frames (`Unit.frames`)."""
    form = detect_form(path)
    if form == SQLITE:
        return _database_units(path, session)
    if session is not None:
        return [], (f"{path}: --session picks a session of a SQLite store; this input holds one session "
                    "(a JSONL artifact or a JSON array), so drop --session")
    data, problem = read(path)
    if problem is not None:
        return [], problem
    assert data is not None
    name = "<stdin>" if path == "-" else path
    binary = _binary_form(data[:16])
    if binary == ZSTD:
        return [_zstd_unit(name, data, budget, keep, frames)], None
    if binary == SQLITE:
        return [], f"{name}: a SQLite database cannot be read from standard input; name the file"
    unit = Unit(name, JSONL, data)
    if path.endswith(".zstd"):
        unit.findings.append(_finding("ZSTD_FRAME_INVALID", "ZSTD-2",
                                      "named *.zstd but does not start with the zstd magic 28 B5 2F FD; "
                                      "read as JSONL text", severity=WARNING, file=name))
    return [unit], None
