"""Inspect and rewrite one stored session log: derive, fold, repair, pack, unpack, stats, header.

Each command is a small object (``__doc__`` = its ``--help``, ``configure``,
``run``) registered in `sessionspec.cli` as ``inspect_cmds:<Name>``. They share
one reading path (the reference's reader of stored logs, `load_log`, never a traceback on bad input) and
one writing rule: outputs are written atomically (temp file + ``os.replace``),
the input is never modified, ``-o`` naming the input or an existing target that
is not a regular file (a device, a FIFO, a directory) is refused, and ``-o -``
writes to standard output instead (the summary line then goes to stderr).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import itertools
import json
import os
import sys
from collections import Counter
from collections.abc import Mapping
from typing import Any, TextIO, cast

import orjson
from sessionspec.reference import ERROR, Finding, FindingList, LoadedLog, json_text, load_log
from sessionspec.reference.atomic import OutputError, atomic_writer, check_new_output, locked_temp, write_atomic
from sessionspec.reference.derive import derive_messages
from sessionspec.reference.jsonl import (
    encode_records,
    header_from_line,
    header_line,
    load_records,
    read_artifact,
    unpacked_chunks,
    write_unpacked,
)
from sessionspec.reference.jsonl_zstd import read_compressed_artifact
from sessionspec.reference.surface import fold_surface
from sessionspec.reference.zstd_frames import compress_frame
from sessionspec.spec.errors import SessionSpecError, SqliteStoreError
from sessionspec.spec.inputs import read_input
from sessionspec.spec.schema_types import SurfaceFold
from sessionspec.storage import (
    FORM_NAMES,
    JSONL,
    ZSTD,
    Unit,
    detect_form,
    layout_owner,
    named_form,
    no_session,
    open_database,
    open_units,
    session_id_text,
)
from sessionspec.validate import format_text
from sessionspec.validator.lint import Checker

#: Findings a command keeps of a log (the rest are counted): its messages show the first five errors.
KEEP_FINDINGS = 100


class _Failure(Exception):
    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


def _unit(path: str, session: str | None, err: TextIO | None = None, command: str = "", frames: bool = False) -> Unit:
    """The one stored session FILE holds (any storage form); a store of several needs ``--session``.
    With ``err``, the storage's notes (a SQLite layout the revision's release commit refuses, DEC-21) go there;
    ``frames``: a compressed artifact's decoded frames are kept (`Unit.frames`, for repair)."""
    units, problem = open_units(path, read_input, session=session, keep=KEEP_FINDINGS, frames=frames)
    if problem is not None:
        raise _Failure(problem, 2)
    if len(units) != 1:
        raise _Failure(_session_list(path, units), 2)
    unit = units[0]
    if err is not None:
        err.writelines(f"sessionspec {command}: note: {json_text.display(unit.name)}: {note}\n" for note in unit.notes)
    errors = _first_errors(unit.findings)
    if unit.unreadable or errors:
        raise _Failure("cannot read the stored session:\n  " + (errors or "no readable content"))
    return unit


_LISTED_SESSIONS = 50


def _session_list(path: str, units: list[Unit]) -> str:
    """A store of several sessions and no --session: its session ids (JSON-quoted, so any id reads
    unambiguously and can be pasted into --session), and how to pick one."""
    where = json_text.display(path)
    if not units:
        return f"{where}: the store holds no session"
    ids = [u.name[len(path) + 1:] if u.name.startswith(path + "#") else u.name.rpartition("#")[2] for u in units]
    shown = "\n".join(f"  {session_id_text(i)}" for i in ids[:_LISTED_SESSIONS])
    more = f"\n  ... and {len(ids) - _LISTED_SESSIONS} more" if len(ids) > _LISTED_SESSIONS else ""
    return (f"{where}: the store holds {len(ids)} sessions; pick one with --session ID "
            f"(e.g. --session {session_id_text(ids[0])}):\n{shown}{more}")


def _load(path: str, session: str | None = None, err: TextIO | None = None, command: str = ""
          ) -> tuple[Unit, LoadedLog]:
    unit = _unit(path, session, err, command)
    return unit, load_log(unit.data, unit.name, keep=KEEP_FINDINGS, locate=unit.locate)

def _load_view(log: LoadedLog, revision: str, err: TextIO, command: str) -> tuple[list[Any], list[Any]]:
    """What a load of the log at ``revision`` gives (DEC-24): the stored events as its load path reads them,
    seeded (a log it cannot seed is refused with the located findings of `validate --level load`), and for a
    stored log that ends inside a turn the crash-repair closers every load appends (REPAIR-6), with a note on
    ``err`` that they were added. A JSON array of events is a seed: checked, never closed. Returns the events
    as read and the closers."""
    from sessionspec.reference.session import NO_HEADER, Session

    _refuse_unloadable(log, revision)
    line = log.header_line
    session_id = line.get("id") if isinstance(line, dict) else None
    sid = session_id if type(session_id) is str else ""
    events = cast("list[Any]", log.events)
    closers: list[Any] = []
    try:
        if log.kind == "jsonl" and isinstance(line, dict):  # the load path's one pass (JSONL-12..15, REPAIR-*, SEED-*)
            _, events, closers = load_records(sid, header_from_line(line, revision), events, log.name, revision,
                                              seed=True, inspect=True)
        else:  # a JSON array of events: a seed, read as it is
            Session(sid, events, NO_HEADER, revision=revision)
    except (SessionSpecError, KeyError, TypeError) as error:
        raise _refusal(log, revision, error if isinstance(error, SessionSpecError) else None) from error
    if closers:
        data = closers[-1].get("data")  # (a closer's data: an object)
        turn = data.get("turn") if isinstance(data, Mapping) else None
        err.write(f"sessionspec {command}: note: the log ends inside turn {json_text.display(str(turn))} "
                  f"(a crash): shown as a load gives it, with the {len(closers)} closer(s) its crash repair adds "
                  "(REPAIR-6; `sessionspec repair` writes them)\n")
    return events, closers


def _load_errors(log: LoadedLog, revision: str) -> str:
    """The located errors `validate --level load` finds in the log ("" when a loader reads it)."""
    Checker("load", None, revision).check(log)
    if log.findings.locate is not None:
        for finding in log.findings:
            log.findings.locate(finding)
    return _first_errors(log.findings)


def _refusal(log: LoadedLog, revision: str, error: SessionSpecError | None, located: str | None = None) -> _Failure:
    """The load path's refusal of a log, with the located findings of `validate --level load` (else the error)."""
    located = (_load_errors(log, revision) if located is None else located) or (
        str(error) if error is not None else "the seed is refused")
    return _Failure(f"the load path of revision {revision} refuses the log (`validate --level load`):\n  {located}")


def _located(log: LoadedLog) -> LoadedLog:
    """The log with its findings located by its storage form (which may make an error of a reader's warning: a
    crash tail inside a complete zstd frame, ZSTD-6); locating is idempotent."""
    if log.findings.locate is not None:
        for finding in log.findings:
            log.findings.locate(finding)
    return log


def _refuse_unloadable(log: LoadedLog, revision: str) -> None:
    """Refuse a log whose reading found errors a loader refuses it for (a corrupt committed region, a header a
    loader rejects), with the located findings (DEC-24), before anything reads it again: a crash tail that every
    load repairs is a warning (DEC-25) and passes. (The reader's errors are checked at load level: some are only
    schema-level defects, which a load reads through.)"""
    if _located(log).findings.errors:
        located = _load_errors(log, revision)
        if located:
            raise _refusal(log, revision, None, located)


def _stored_size(path: str, unit: Unit) -> int | None:
    """Bytes the stored form takes on disk: the file for an artifact, ``None`` for one session of a store."""
    if unit.form == "sqlite":
        return None
    try:
        return os.stat(path).st_size if path != "-" else len(unit.data)
    except OSError:
        return None


def _json(value: Any) -> str:
    try:
        return json_text.dumps(value)
    except SessionSpecError as error:  # e.g. a number like 1e400 read as infinity: JSON cannot carry it
        raise _Failure(f"cannot print the value as JSON: {error}") from error


#: deeper than this the indented form is not attempted (the standard library's encoder recurses): compact instead
_PRETTY_DEPTH = 200
#: an integer this large or larger has more digits than the interpreter turns into text (4,300 by default)
_PRETTY_INT = 10 ** (sys.get_int_max_str_digits() or 10**6)
#: characters of indented text gathered before each write
_WRITE_CHUNK = 1 << 20


def _pretty_form(value: Any) -> str:
    """How ``value`` is written indented: ``"orjson"`` (C speed: no float, whose text orjson writes otherwise than
    the standard library's ``repr``; its indented text is the standard library's otherwise), ``"stream"`` (the
    standard library's encoder), or ``"compact"`` when that encoder cannot write it (nesting past
    ``_PRETTY_DEPTH``, an integer past the interpreter's int-to-text limit). Decided before writing, since the
    indented text is streamed and cannot fall back halfway; without recursion, in memory bounded by the depth."""
    stack = [iter((value,))]
    floats = False
    while stack:
        for item in stack[-1]:
            if isinstance(item, dict | list):
                if len(stack) > _PRETTY_DEPTH:
                    return "compact"
                stack.append(iter(item.values() if isinstance(item, dict) else item))
                break
            if type(item) is int and not -_PRETTY_INT < item < _PRETTY_INT:
                return "compact"
            if type(item) is float:
                floats = True
        else:
            stack.pop()
    return "stream" if floats else "orjson"


def _dump(value: Any, out: TextIO, pretty: bool = True) -> None:
    """``value`` as JSON on ``out``, indented unless ``pretty`` is false (or the value is too deep for it).

    The indented text is encoded from the value itself, not from the compact text parsed again, and written in
    pieces of about ``_WRITE_CHUNK`` characters: its memory is the text (orjson) or one piece (the standard
    library's encoder, streamed), not the whole text twice plus a second copy of the value and a list of every
    token and line (`derive` printing 345,000 content parts peaked at 551 MB and 2.9 s that way; issue 25)."""
    text = _json(value)  # first: a value JSON cannot carry (1e400 read as infinity) is refused before any output
    form = _pretty_form(value) if pretty else "compact"
    if form == "compact":
        out.write(text + "\n")
        return
    del text
    if form == "orjson":
        try:
            indented = orjson.dumps(value, option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE)
        except (TypeError, orjson.JSONEncodeError):
            pass  # lone surrogates, integers past 64 bits: the standard library's encoder
        else:
            start = 0
            while start < len(indented):  # decoded a piece at a time, each ending on a character boundary
                end = min(start + _WRITE_CHUNK, len(indented))
                while end < len(indented) and indented[end] & 0xC0 == 0x80:
                    end -= 1
                out.write(indented[start:end].decode("utf-8"))
                start = end
            return
    pieces: list[str] = []
    size = 0
    for piece in json.JSONEncoder(ensure_ascii=False, indent=2).iterencode(value):
        pieces.append(piece)
        size += len(piece)
        if size >= _WRITE_CHUNK:
            out.write(json_text.escape_surrogates("".join(pieces)))
            pieces, size = [], 0
    out.write(json_text.escape_surrogates("".join(pieces)) + "\n")


def _first_errors(findings: list[Finding]) -> str:
    """The first five errors, one a line, and how many more there are ("" when there is none)."""
    shown = [format_text(f) for f in findings if f.severity == ERROR][:5]
    total = findings.errors if isinstance(findings, FindingList) else sum(f.severity == ERROR for f in findings)
    return "\n  ".join(shown) + (f"\n  … {total - len(shown)} more" if total > len(shown) else "")


def _refuse_same(src: str, dst: str) -> None:
    if src == "-" or dst == "-":
        return
    try:
        same = os.path.exists(dst) and os.path.samefile(src, dst)
    except OSError:
        same = False
    if same or os.path.abspath(src) == os.path.abspath(dst):
        raise _Failure(f"refusing to write {dst}: it is the input file (inputs are never modified)", 2)


def _read_artifact(data: bytes) -> Any:
    try:
        return read_artifact(data)
    except SessionSpecError as error:
        raise _Failure(f"cannot load the log: {error}") from error


def _revision_arg(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--revision", metavar="R", default=None,
                        help="format revision of the log (id or npm release); default: detected from its content")


def _revision(args: argparse.Namespace, log: LoadedLog, err: TextIO, unit: Unit | None = None) -> str:
    """The revision named by --revision, else the one the log's content shows (the pinned one when unclear)."""
    return _events_revision(args, log.events, log.event_lines, err,
                            *((unit.layout, unit.layout_revision) if unit is not None else ()))


def _events_revision(args: argparse.Namespace, events: Any, lines: Any, err: TextIO,
                     layout: int | None = None, owner: str | None = None) -> str:
    """The revision to read ``events`` at: --revision (with a warning when the content shows another one,
    since the output would then be read wrongly), else the one the content shows, else for a session of a
    SQLite store of ``layout`` the revision ``owner`` that alone has it, else the default with a note."""
    from sessionspec.spec.revisions import UnknownRevision, resolve_revision
    from sessionspec.validator.detect import detect_revision

    given = getattr(args, "revision", None)
    if given is not None:
        try:
            given = resolve_revision(given).id
        except UnknownRevision as error:
            raise _Failure(f"--revision: {error.message}", 2) from error
    # A database has no lines: its evidence is labelled with seqs.
    detection = detect_revision(events, lines if layout is None else None).in_store(layout, owner)
    if given is not None:
        contradiction = detection.contradiction(given)
        if contradiction is not None:  # the output would be the log read wrongly
            err.write(f"sessionspec {args._name}: warning: {contradiction}; read at {given} as --revision asks\n")
        return str(given)
    if detection.ambiguous and detection.scores and any(detection.scores.values()):
        err.write(f"sessionspec {args._name}: note: {detection.describe()}\n")
    return detection.revision


def _fold(events: list[Any], revision: str | None = None) -> SurfaceFold:
    try:
        return fold_surface(events, revision)
    except (SessionSpecError, AttributeError, TypeError) as error:
        raise _Failure(f"the surface fold fails: {error}") from error


def _command(fn: Any) -> Any:
    """Wrap a command body: map `_Failure` to a message on stderr and its exit code."""

    def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
        try:
            return int(fn(args, out, err) or 0)
        except _Failure as failure:
            err.write(f"sessionspec {args._name}: error: {failure.message}\n")
            return failure.code
        except OutputError as failure:
            err.write(f"sessionspec {args._name}: error: {failure.message}\n")
            return 2
        except SessionSpecError as error:  # the reference rejects what the log holds (run `validate`)
            err.write(f"sessionspec {args._name}: error: the log cannot be processed: {error}\n")
            return 1

    return staticmethod(run)


def _file_arg(parser: argparse.ArgumentParser, name: str) -> None:
    parser.add_argument("file", metavar="FILE", help="a JSONL artifact (raw or zstd-framed), a SQLite session "
                        "store, or a JSON array of events ('-' = stdin); the form is read from the content")
    parser.add_argument("--session", metavar="ID",
                        help="the session to read from a SQLite store of several; without it such a store's session "
                             "ids are listed and the command exits 2")
    parser.set_defaults(_name=name)


def _out_arg(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-o", "--output", required=True, metavar="OUT",
                        help="where to write: a new file in an existing folder, never the input ('-' = stdout)")
    _force_arg(parser)


def _force_arg(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--force", action="store_true", help="replace OUT when it is an existing regular file")


def _check_output(args: argparse.Namespace) -> None:
    """Every writing command's one target check, before any work (`check_new_output`): '-' is stdout."""
    _refuse_same(args.file, args.output)
    if args.output != "-":
        check_new_output(args.output, force=args.force)


def _write_output(path: str, content: bytes, out: TextIO, err: TextIO, summary: str, revision: str | None = None,
                  logical: bytes | None = None) -> None:
    """Write OUT atomically, or to stdout for '-'; the one-line summary goes where the log does not.

    A rewritten log is written only if a loader accepts it (what `validate --level load` checks):
    a command that exits 0 promises a loadable log, so it refuses, saying what remains wrong.
    ``logical`` is the JSONL text a compressed ``content`` stands for.
    """
    result = load_log(content if logical is None else logical, "<stdout>" if path == "-" else path, keep=KEEP_FINDINGS)
    Checker("load", None, revision).check(result)
    errors = _first_errors(result.findings)
    if errors:
        raise _Failure(f"not written: a loader would still reject the result (`validate --level load`):\n  {errors}")
    if path == "-":
        buffer = getattr(out, "buffer", None)
        if buffer is not None:
            out.flush()
            buffer.write(content)
            buffer.flush()
        else:
            out.write(content.decode("utf-8", "surrogateescape"))
        err.write(f"wrote <stdout>: {summary}\n")
        return
    write_atomic(path, content)
    out.write(f"wrote {path}: {summary}\n")


def _require_clean(log: LoadedLog) -> None:
    errors = _first_errors(log.findings)
    if errors:
        raise _Failure(f"the log has errors (run `sessionspec validate`):\n  {errors}")


class Derive:
    """Print the messages a log derives: its model-visible history, in surface order, as JSON.

    example:
      sessionspec derive session.jsonl > messages.json
    """

    @staticmethod
    def configure(parser: argparse.ArgumentParser) -> None:
        _file_arg(parser, "derive")
        _revision_arg(parser)
        parser.add_argument("--compact", action="store_true", help="one line of compact JSON")

    @staticmethod
    def _run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
        unit, log = _load(args.file, args.session, err, args._name)
        revision = _revision(args, log, err, unit)
        events = [*itertools.chain(*_load_view(log, revision, err, args._name))]
        _fold(events, revision)
        _dump(derive_messages(events, revision), out, not args.compact)
        return 0

    run = _command(_run.__func__)  # type: ignore[attr-defined]  # a staticmethod's function


class Fold:
    """Print the surface fold of a log: the current node seqs and every replacement.

    example:
      sessionspec fold session.jsonl --format json
    """

    @staticmethod
    def configure(parser: argparse.ArgumentParser) -> None:
        _file_arg(parser, "fold")
        _revision_arg(parser)
        parser.add_argument("--format", choices=("text", "json"), default="json")

    @staticmethod
    def _run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
        unit, log = _load(args.file, args.session, err, args._name)
        revision = _revision(args, log, err, unit)
        result = _fold([*itertools.chain(*_load_view(log, revision, err, args._name))], revision)
        if args.format == "json":
            _dump(result, out)
        else:
            out.write(f"nodes ({len(result['nodes'])}): {' '.join(map(str, result['nodes']))}\n")
            out.writelines(f"replace by seq {r['seq']}: start {r['start']}, end {r['end']}, shadowed {r['shadowedSeqs']}\n" for r in result["replacements"])
        return 0

    run = _command(_run.__func__)  # type: ignore[attr-defined]  # a staticmethod's function


class Repair:
    """Write a crashed log back loadable: torn tail cut, crash-repair closers appended.

    The closers are those a loader appends (REPAIR-6): a synthetic tool/result per
    unanswered call, step/end if a step is open, turn/end {kind: interrupted}.
    Every storage form keeps its form: a raw artifact is cut and extended; a
    zstd-framed one is cut at its torn frame, and the frame's complete records
    are re-appended with the closers as one new frame (ZSTD-7); a SQLite store
    has every session (or --session) repaired in one transaction (SQLITE-7).
    At a revision whose load path reads earlier-format records upgraded
    (b150a551b8), the closers are those it appends and the stored records
    stay as stored (DEC-22); a log that load path refuses is refused.
    FILE is never touched unless --in-place is given; -o OUT is written
    atomically (for a store: a consistent copy, repaired, then renamed).

    example:
      sessionspec repair session.jsonl -o repaired.jsonl
      sessionspec repair session.jsonl.zstd --in-place
      sessionspec repair sessions.db -o repaired.db
    """

    @staticmethod
    def configure(parser: argparse.ArgumentParser) -> None:
        _file_arg(parser, "repair")
        _revision_arg(parser)
        target = parser.add_mutually_exclusive_group(required=True)
        target.add_argument("-o", "--output", metavar="OUT",
                            help="where to write: a new file in an existing folder, never the input "
                                 "('-' = stdout, not for stores)")
        target.add_argument("--in-place", action="store_true",
                            help="repair FILE itself (atomic replacement; one transaction for a store)")
        _force_arg(parser)

    @staticmethod
    def _run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
        if args.in_place and args.file == "-":
            raise _Failure("--in-place needs a file, not standard input", 2)
        if args.output is not None:
            _check_output(args)
            _same_form(args.file, args.output)
        if detect_form(args.file) == "sqlite":
            return _repair_store(args, out, err)
        unit = _unit(args.file, args.session, frames=True)
        log = load_log(unit.data, unit.name, keep=KEEP_FINDINGS, locate=unit.locate)
        revision = _revision(args, log, err, unit)
        data, problem = read_input(args.file)
        if problem is not None:
            raise _Failure(problem, 2)
        assert data is not None
        target = args.file if args.in_place else args.output
        _refuse_unloadable(log, revision)  # (the reference would read it whole again, only to refuse it)
        # a log its load path cannot seed (SEED-*) is refused with FILE's located findings (DEC-22), not with the
        # unwritten result's; the closers are the load path's one pass's (`jsonl.load_records`)
        events, closers = _load_view(log, revision, io.StringIO(), "repair")
        kept = len(events)
        del events
        # the zstd form reads the log again below: one parsed copy of it at a time, not two (issue 25)
        log.events, log.event_lines, log.event_pointers = [], [], []
        # A loader reads nothing past the line it stops at (a crash tail: it cuts there): the next write truncates
        # there (JSONL-4), else after the last complete line.
        stop = None if log.stopped_at_line is None else _line_start(unit.data, log.stopped_at_line)
        if unit.form == "jsonl-zstd":
            # (the frames: where the torn one starts and the complete records it holds, ZSTD-7; the closers are
            # the view's)
            # the input's one frame walk (the unit's), not a second one
            compressed = _guard(lambda: read_compressed_artifact(data, stop=stop, decoded=unit.frames))
            keep = compressed.decoded.torn_start if compressed.torn else len(data)
            added = [*compressed.recovered, *closers] if compressed.torn else closers
            frame = encode_records(added, pack=True)
            content = data[:keep] + (compress_frame(frame) if frame else b"")
            # the output's logical text: the kept frames' plaintext (every complete frame: a torn one is cut) and
            # the new frame's, as written (not a walk of the frames just made)
            logical: bytes | None = b"".join(compressed.decoded.plaintexts) + frame
            cut = len(data) - keep
            del compressed  # (the output's load check below parses it again: one parsed copy at a time)
        else:
            if log.kind != "jsonl":  # a JSON array of events is a seed, no artifact: refused with the reader's error
                _read_artifact(unit.data)
            keep = stop if stop is not None else len(unit.data) - len(unit.data.rpartition(b"\n")[2])
            content = data[:keep] + encode_records(closers, pack=False)
            logical = None
            cut = len(data) - keep
        _write_output(target, content, out, err, f"{kept} events kept, {cut} torn byte(s) cut, "
                      f"{len(closers)} closer(s) appended", revision, logical)
        return 0

    run = _command(_run.__func__)  # type: ignore[attr-defined]  # a staticmethod's function


def _same_form(source: str, output: str) -> None:
    """The one output-form policy, for repair: OUT holds what its name says, and repair keeps FILE's form, so an
    OUT named for another form is refused before any work (exit 2); a name that says no form takes FILE's."""
    named, form = named_form(output), detect_form(source)
    if named is not None and named != form:
        raise _Failure(f"{json_text.display(output)} is named for {FORM_NAMES[named]}, but repair keeps the storage "
                       f"form of {json_text.display(source)} ({FORM_NAMES[form]}): name OUT for that form"
                       + (" (convert with `sessionspec pack` or `unpack`, which write what OUT's name says)"
                          if form != "sqlite" and named != "sqlite" else ""), 2)


def _line_start(data: bytes, line: int) -> int:
    """The offset at which 1-based line ``line`` of ``data`` starts (a walk over the lines before it)."""
    at = 0
    for _ in range(line - 1):
        at = data.find(b"\n", at) + 1
        if not at:
            return len(data)
    return at


def _guard(read: Any) -> Any:
    try:
        return read()
    except SessionSpecError as error:
        raise _Failure(f"cannot load the log: {error}") from error


def _to_output(output: str, write: Any) -> Any:
    """Run one step that writes OUT (or its temp copy): a SQLite failure there (a full or read-only disk) is an
    output error naming OUT (exit 2), not the input's."""
    try:
        return write()
    except SqliteStoreError as error:
        if error.code in ("SQLITE_CORRUPT", "SQLITE_NO_SESSION", "SQLITE_LAYOUT"):
            raise _Failure(f"cannot load the log: {error}") from error
        raise OutputError(f"cannot write {output}: {error.message}") from error


def _repair_store(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Repair sessions of a SQLite store in one transaction: in place, or in a consistent copy renamed to OUT."""
    if args.output == "-":
        raise _Failure("a SQLite store cannot be written to standard output; name a file with -o", 2)
    source = _guard(lambda: open_database(args.file))
    with source:
        notes = filter(None, [source.layout.refusal_note(), *source.notes])
        err.writelines(f"sessionspec {args._name}: note: {json_text.display(args.file)}: {note}\n" for note in notes)
        ids = [h["id"] for h in _guard(source.list_sessions)]
        if args.session is not None:
            if args.session not in ids:
                raise _Failure(no_session(args.file, args.session, len(ids)), 2)
            ids = [args.session]
        # each session's closers take the shape of its revision (given, else detected from its rows)
        layout, owner = source.layout.user_version, layout_owner(source.layout.user_version)
        revisions: dict[str, str] = {}
        read = {}
        for sid in ids:
            try:
                read[sid] = source.read_session(sid)
            except SessionSpecError as error:  # a session the store's reader refuses: as validate locates it
                raise _store_refusal(args, sid, None, error) from error
            revisions[sid] = _events_revision(args, read[sid].events, None, err, layout, owner)
        try:  # refuse unloadable sessions, naming what validate names (the sessions as read above: not decoded again)
            source.repair(ids, durable=False, revisions=revisions, seed=True, read=read)
        except SessionSpecError as error:
            sid = str(error.path or "").rpartition("#")[2]
            if sid not in revisions:
                raise _Failure(f"cannot load the log: {error}") from error
            raise _store_refusal(args, sid, revisions[sid], error) from error
        temp = None
        lock = -1  # the temp's locked descriptor, open until the temp is renamed or removed (`locked_temp`)
        if not args.in_place:
            directory = os.path.dirname(os.path.abspath(args.output))
            try:
                lock, temp = locked_temp(directory, os.path.basename(args.output), ".db")
            except OSError as error:
                raise OutputError(f"cannot write {args.output}: {error.strerror or error}") from None
        output = args.file if temp is None else args.output
        try:
            if temp is not None:
                _to_output(output, lambda: source.backup_to(temp))
            with _to_output(output, lambda: open_database(temp or args.file, writable=True)) as store:
                loaded = _to_output(output, lambda: store.repair(ids, revisions=revisions))
            if temp is not None:
                check_new_output(args.output, force=args.force)  # still what was checked (nothing raced in)
                os.replace(temp, args.output)
                temp = None
        except OutputError:
            raise
        except OSError as error:
            raise OutputError(f"cannot write {output}: {error.strerror or error}") from None
        finally:
            leftovers: tuple[str, ...] = (temp, f"{temp}-journal", f"{temp}-wal", f"{temp}-shm") if temp else ()
            for leftover in leftovers:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(leftover)
            if lock >= 0:  # (after SQLite closed the file: closing it earlier would drop SQLite's own locks)
                os.close(lock)
    closers = sum(len(item.closers) for item in loaded)
    torn = sum(item.truncated_bytes for item in loaded)
    out.write(f"wrote {args.file if args.in_place else args.output}: {len(loaded)} session(s) repaired in one "
              f"transaction, {torn} torn row(s) deleted, {closers} closer(s) appended\n")
    return 0


def _store_refusal(args: argparse.Namespace, session: str, revision: str | None, error: SessionSpecError) -> _Failure:
    """A store's session that its load path refuses, with the located findings of `validate --level load`."""
    unit, log = _load(args.file, session)
    return _refusal(log, revision or _revision(args, log, io.StringIO(), unit), error)


def _rewrite(args: argparse.Namespace, out: TextIO, err: TextIO, pack: bool) -> int:
    _check_output(args)
    # the one output-form policy: OUT holds what its name says (`*.zstd`: the zstd-framed form, a header frame and
    # one frame of records; no form named, or `-`: raw JSONL); pack and unpack write no SQLite store
    form = named_form(args.output) or JSONL
    if form not in (JSONL, ZSTD):
        raise _Failure(f"{json_text.display(args.output)} is named for {FORM_NAMES[form]}; {args._name} writes raw "
                       "JSONL or, to a name ending in .zstd, zstd-framed JSONL", 2)
    if not pack and form == JSONL and _unpack_streamed(args, out, err):
        return 0
    unit, log = _load(args.file, args.session)
    if log.kind == "json":
        events = log.events
        _require_clean(log)
        header = None
        revision = _revision(args, log, err, unit)
    else:
        _refuse_unloadable(log, _revision(args, log, io.StringIO(), unit))  # located
        revision = _revision(args, log, err, unit)
        # the records the one reading read (up to where a loader stops: a torn tail is not rewritten), not a
        # second parse of the same text; one parsed copy of the log at a time (issue 25)
        events, header = log.events, log.header_line
        log.event_lines, log.event_pointers = [], []
    count = len(events)
    if not pack:  # the one unpack (`unpacked_chunks`, which `_unpack_streamed` writes as it comes), collected
        content = b"".join(unpacked_chunks(header or None, events, UNPACK_BATCH, revision))
        records = count
        del events
        log.events = []  # (and before the output's load check parses what is written)
    else:
        body = encode_records(events, pack=True)
        del events
        log.events = []  # (and before the output's load check parses what is written)
        # the header as the reader of the log's revision reads it (its keys: a subagent's origin, agentPreset)
        line = header_line(header_from_line(header, revision), revision) if header else None
        content = (json_text.dumps(line).encode("utf-8") + b"\n" if line else b"") + body
        records = body.count(b"\n")
        del body
    summary = f"{count} events in {records} records"
    if form == ZSTD:  # the header line in a frame of its own (ZSTD-5), then the records in one frame (ZSTD-1)
        head = content.find(b"\n") + 1 if header else 0  # (no header line: the load check below refuses it)
        framed = b"".join(compress_frame(part) for part in (content[:head], content[head:]) if part)
        _write_output(args.output, framed, out, err, summary + ", zstd-framed", revision, content)
    else:
        _write_output(args.output, content, out, err, summary, revision)
    return 0


class _NotStreamed(Exception):
    """The streamed unpack cannot vouch for this log; the general path decides (and explains)."""


#: Member events a streamed unpack holds at a time.
UNPACK_BATCH = 4096


def _unpack_streamed(args: argparse.Namespace, out: TextIO, err: TextIO) -> bool:
    """Unpack a JSONL artifact to a file without holding its events; False when it takes the general path.

    Memory is bounded by the input (its bytes, its lines, one parsed record) and ``UNPACK_BATCH`` member
    events: a packed row is expanded a batch at a time straight into the temp file, which is then proved
    loadable by the streaming check (`validate --level load`'s accept-fast pass, block by block) before it
    replaces OUT. A log that is damaged, of another revision, or not provably loadable goes to the general
    path (issue 14: a 5 MB row of a million members took 2.9 GB there).
    """
    from sessionspec.spec.revisions import DEFAULT_REVISION
    from sessionspec.validate import BLOCK_SIZE
    from sessionspec.validator.detect import detect_in_bytes
    from sessionspec.validator.fastlog import check_clean

    if args.output == "-":
        return False
    unit = _unit(args.file, args.session)
    detection = detect_in_bytes(unit.data)
    if unit.form != "jsonl" or detection.revision != DEFAULT_REVISION or detection.ambiguous:
        return False  # (an ambiguous detection has a note to print: the general path prints it)
    try:
        with atomic_writer(args.output) as handle:
            events = write_unpacked(unit.data, handle, UNPACK_BATCH, detection.revision)
            if events is None:
                raise _NotStreamed
            handle.flush()
            fd, size = handle.fileno(), handle.tell()

            def blocks() -> Any:
                for offset in range(0, size, BLOCK_SIZE):
                    yield os.pread(fd, BLOCK_SIZE, offset)

            clean = check_clean(blocks(), args.output, "load", None, size=size, revision=detection.revision)
            if clean is None or any(f.severity == ERROR for f in clean.findings):
                raise _NotStreamed
    except _NotStreamed:
        return False
    out.write(f"wrote {args.output}: {events} events in {events} records\n")
    return True


class Pack:
    """Rewrite a log with runs of 3+ delta chunks packed into storage rows (the writer's default layout).

    example:
      sessionspec pack session.jsonl -o packed.jsonl
    """

    @staticmethod
    def configure(parser: argparse.ArgumentParser) -> None:
        _file_arg(parser, "pack")
        _out_arg(parser)

    run = _command(lambda args, out, err: _rewrite(args, out, err, True))


class Unpack:
    """Rewrite a log with every event on its own line (packed rows expanded).

    example:
      sessionspec unpack session.jsonl -o plain.jsonl
    """

    @staticmethod
    def configure(parser: argparse.ArgumentParser) -> None:
        _file_arg(parser, "unpack")
        _out_arg(parser)

    run = _command(lambda args, out, err: _rewrite(args, out, err, False))


def _type_label(event: Any) -> str:
    """An event's type for counting; a type that is not a string (or no event object) is named by its kind."""
    if not isinstance(event, dict):
        return f"<{type(event).__name__}, not an event object>"
    etype = event.get("type")
    return etype if isinstance(etype, str) else f"<type is {type(etype).__name__}>" if "type" in event else "<no type>"


class Stats:
    """Count a log's events per type, turns, steps, surface size, replaces and how much is packed.

    example:
      sessionspec stats session.jsonl --format json
    """

    @staticmethod
    def configure(parser: argparse.ArgumentParser) -> None:
        _file_arg(parser, "stats")
        _revision_arg(parser)
        parser.add_argument("--format", choices=("text", "json"), default="text")

    @staticmethod
    def _run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
        unit = _unit(args.file, args.session, err, args._name)
        log = load_log(unit.data, unit.name, keep=KEEP_FINDINGS, locate=unit.locate)
        revision = _revision(args, log, err, unit)
        # The counts are the stored events as the load path reads them (an upgraded steering/message is a
        # user/message), the surface what a load gives (closers included); when the load refuses the log, the
        # stored events are counted, the surface is unknown and the refusal said, with exit status 1 (DEC-24).
        refused: _Failure | None = None
        read, closers = log.events, list[Any]()
        try:
            read, closers = _load_view(log, revision, err, args._name)
            fold: SurfaceFold | None = fold_surface([*read, *closers], revision)
        except _Failure as failure:
            fold, refused = None, failure
        except (SessionSpecError, AttributeError, TypeError) as error:
            fold, refused = None, _Failure(f"the surface fold fails: {error}")
        types = Counter(map(_type_label, read))
        records = log.lines - (1 if log.kind == "jsonl" else 0)
        stats: dict[str, Any] = {
            "file": log.name, "revision": revision, "form": unit.form, "kind": log.kind, "sqliteLayout": unit.layout,
            "storedBytes": _stored_size(args.file, unit), "bytes": log.size, "lines": log.lines,
            "events": len(log.events),
            "types": dict(sorted(types.items(), key=lambda kv: (-kv[1], kv[0]))),
            "turns": types.get("turn/start", 0), "steps": types.get("step/start", 0),
            "surfaceSize": len(fold["nodes"]) if fold else None,
            "replaces": len(fold["replacements"]) if fold else None, "repairClosers": len(closers),
            "packedRows": log.rows, "packedEvents": log.row_members,
            "packedRatio": round(log.row_members / len(log.events), 4) if log.events else 0.0,
            "recordsPerEvent": round(records / len(log.events), 4) if log.events else None,
            "errors": log.findings.errors, "warnings": log.findings.warnings,
        }
        if args.format == "json":
            _dump(stats, out)
            return _refused(refused, args, err)
        stored = ("" if unit.form == "jsonl" else f" stored as SQLite layout {unit.layout}," if unit.layout is not None
                  else f" stored as {unit.form} in {stats['storedBytes']} bytes,")
        out.write(f"{log.name}: {stats['events']} events in {stats['lines']} lines ({stats['bytes']} bytes of JSONL,{stored} "
                  f"revision {revision})\n")
        unknown = "unknown (the surface fold fails: run `sessionspec validate`)"
        surface = unknown if fold is None else f"surface size {stats['surfaceSize']}, replaces {stats['replaces']}"
        out.write(f"turns {stats['turns']}, steps {stats['steps']}, {surface}\n")
        out.write(f"packed: {stats['packedRows']} rows holding {stats['packedEvents']} events "
                  f"({100 * stats['packedRatio']:.1f}% of events)\n")
        shown = {json_text.display(t): count for t, count in stats["types"].items()}
        width = max(map(len, shown), default=0)
        out.writelines(f"  {etype:<{width}}  {count}\n" for etype, count in shown.items())
        if stats["errors"] or stats["warnings"]:
            out.write(f"{stats['errors']} error(s), {stats['warnings']} warning(s): run `sessionspec validate`\n")
        return _refused(refused, args, err)

    run = _command(_run.__func__)  # type: ignore[attr-defined]  # a staticmethod's function


def _refused(refused: _Failure | None, args: argparse.Namespace, err: TextIO) -> int:
    """Exit status 1 with the load's refusal on ``err`` when there is one, else 0."""
    if refused is None:
        return 0
    err.write(f"sessionspec {args._name}: error: {refused.message}\n")
    return 1


class Header:
    """Print a log's session header line.

    example:
      sessionspec header session.jsonl
    """

    @staticmethod
    def configure(parser: argparse.ArgumentParser) -> None:
        _file_arg(parser, "header")
        parser.add_argument("--format", choices=("text", "json"), default="json")

    @staticmethod
    def _run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
        unit, log = _load(args.file, args.session)
        if log.kind != "jsonl" or log.header_line is None:
            problems = [format_text(f) for f in log.findings if f.code.startswith("JSONL")] or ["no session header line"]
            raise _Failure("the log has no session header:\n  " + "\n  ".join(problems[:3]))
        if args.format == "json":
            _dump(log.header_line, out)
        else:
            lines = [f"{json_text.display(key)}: {_json(value)}\n" for key, value in log.header_line.items()]
            out.writelines(lines)
        try:  # the header line as stored; a log a loader refuses is said so (exit 1), as `stats` does (DEC-24)
            if _located(log).findings.errors:
                _refuse_unloadable(log, _revision(args, log, err, unit))
        except _Failure as failure:
            return _refused(failure, args, err)
        return 0 if log.header_ok else 1

    run = _command(_run.__func__)  # type: ignore[attr-defined]  # a staticmethod's function
