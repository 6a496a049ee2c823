"""Check stored session logs (JSONL artifacts or JSON arrays of events) and report every finding.

Levels: `load` = what a loader must reject (header, seed rules, surface fold,
JSONL committed region); `schema` (default) = plus every event and the header
line against the spec's JSON Schemas; `strict` = plus the relational
invariants (INV-*). Each finding names the file, line, event seq, JSON
pointer, requirement id and code. FILE may be `-` (stdin), a glob, or a
directory (searched recursively for *.jsonl and *.jsonl.zstd).

Storage forms are told apart by content, not by name: a file starting with
the zstd magic is a compressed artifact (findings name the frame and the
logical line), one starting with the SQLite header is a session store (every
session is checked, located as `store.db#session-id` with the row's seq;
`--session ID` picks one), anything else is JSONL text or a JSON array.
Databases are opened read-only.

Speed: a clean log is proved clean in one pass (types generated from the
schemas, packed chunk rows checked as rows) that reads a file in blocks, so its
memory does not grow with the log; a log with any finding is re-read whole by
the exact checker, which locates and explains every finding (`--exact` always
uses it; the verdicts are the same). Files are checked in `-j` processes (one
per CPU by default) or on a Dask cluster (`--dask`), reported in FILE order.

One defect, one finding: a schema finding is dropped when a load-level
finding of the same event (same line and seq) already reports it, with its
requirement id. "Reports it" means, for each thing the schema error is about
(the member itself, or the missing or unexpected property for `required` and
`additionalProperties`): the load finding has the same JSON pointer; or it is
SEED_ENVELOPE (SEED-3) and that member is one SEED-3 rejects in the event
(type, seq, time, data, an unknown key); or it is a SURF-3/SURF-7 finding
on surfaceOp or sourceEventSeqs and the error lies in or under that member
(whose schema is exactly that rule); or it is SEED-5/SEED-6 and the error is
the provider or model of the object it names. Every other schema finding is
kept, so a verdict never changes: only the repetition goes.

Revisions: a log is checked at the format revision given with --revision (an
id such as b150a551b8 or an npm release such as 0.1.1-rc.2). Without it, the
revision is detected from the log's content (event types and payload shapes
that exist in one revision only; the report names the evidence); a log with
no such content, or with content of several revisions, is checked at the
default (pinned) revision, with a note when the content was mixed; a session
of a SQLite store without such content is checked at the revision whose
layout the store has (when only one revision has it). At a
revision whose load path upgrades records of the earlier format and refuses
types it does not know (b150a551b8: JSONL-13..15), each record is read as that
load path reads it: upgraded before every later check (a note says how many,
of which kinds), or refused with a located load finding; the types of a
--registry are known for the run.

Exit status: 0 valid, 1 findings, 2 usage error or unreadable input.
Warnings (duplicate keys, CRLF, ...) count as findings unless `--fail-on
error`. A crash tail that every load repairs (a torn last record, a turn
left open: the loader cuts the one and closes the other) is a warning that
does not fail: such a log is `ok, needs repair` (exit 0) and `sessionspec
repair` writes what a load makes of it; `--fail-on repair` fails it too
(DEC-25). A member an event's schema does not define, where no reader of the
revision reads it (a stale `messagePrefix` in a request header), is a
deviation (FORMAT_DEVIATION, DEC-27): shown with -v and in --format json,
never failing unless `--fail-on deviation`.

example:
  sessionspec validate ~/.dsh/sessions --level strict -j 4
  sessionspec validate session.jsonl --format json | jq '.files[].findings'
  cat session.jsonl | sessionspec validate - --format github
  sessionspec validate session.jsonl.zstd
  sessionspec validate sessions.db --session s1
"""

from __future__ import annotations

import argparse
import functools
import glob
import itertools
import json
import os
import stat
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TextIO

from sessionspec.progress import Progress
from sessionspec.reference import ERROR, WARNING, Finding, FindingList, LoadedLog, load_log
from sessionspec.reference.json_text import display, escape_surrogates, workflow_value
from sessionspec.reference.json_value import gc_paused
from sessionspec.reference.jsonl_read import bounded
from sessionspec.spec.inputs import read_input
from sessionspec.spec.loader import load_spec
from sessionspec.storage import Unit, detect_form, open_units
from sessionspec.validator.detect import Detection, InlineDetection
from sessionspec.validator.fastlog import CleanLog, check_clean, proves
from sessionspec.validator.lint import DEVIATION, LEVELS, Checker, SchemaSet, registry_types, schema_set

# `--fail-on repair`: also fail on the crash tails every load repairs (DEC-25), which the default lets pass;
# `--fail-on deviation`: on content no reader reads as well (DEC-27), the lowest threshold.
REPAIR = "repair"
#: `--fail-on` thresholds, highest first: each fails what the ones before it fail, and more.
THRESHOLDS = (ERROR, WARNING, REPAIR, DEVIATION)


@functools.cache
def load_repairs() -> frozenset[str]:
    """The warnings that report such a tail (`loadRepairs` in spec/errors.json): the log is read, not refused."""
    return frozenset(code for code, entry in load_spec().error_codes.items() if entry.get("loadRepairs"))


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", nargs="+", metavar="FILE", help="log file, '-' for stdin, a glob, or a directory")
    parser.add_argument("--level", choices=LEVELS, default="schema", help="how much to check (default: schema)")
    parser.add_argument("--format", choices=("text", "json", "github"), default="text", help="report format")
    parser.add_argument("--registry", action="append", default=[], metavar="DIR",
                        help="plugin registry directory (events/, schemas/); repeatable")
    parser.add_argument("--quiet", "-q", action="store_true", help="print nothing; only the exit status tells")
    parser.add_argument("--verbose", "-v", action="store_true",
                        help="say on each file's line how many errors and warnings, its revision and why (detection's "
                             "evidence), and its SQLite layout (--format json always has them)")
    parser.add_argument("--max-findings", type=int, default=100, metavar="N",
                        help="findings kept and shown per file (default 100; 0 = all); the rest are counted")
    parser.add_argument("--fail-on", choices=THRESHOLDS, default=WARNING,
                        help="lowest severity that makes the exit status 1 (default: warning; a crash tail every "
                             "load repairs needs `repair`, DEC-25; content no reader reads needs `deviation`, "
                             "DEC-27)")
    parser.add_argument("--revision", metavar="R", default=None,
                        help="format revision to check against (id or npm release); default: detected per file")
    parser.add_argument("--session", metavar="ID",
                        help="in a SQLite store, check only this session (default: every session)")
    parser.add_argument("--exact", action="store_true",
                        help="skip the accept-fast path and run the exact checker on every file (slower; same verdicts)")
    parser.add_argument("-j", "--jobs", type=int, default=0, metavar="N",
                        help="check files in N processes (default 0: one per CPU); output order stays the order of FILE")
    parser.add_argument("--dask", metavar="ADDRESS",
                        help="check files on a Dask cluster (scheduler address; needs `sessionspec[dask]`; "
                             "the workers must see the same paths)")


#: the names a folder scan reads: session logs, and SQLite stores (those holding the SQLite magic)
_LOG_SUFFIXES = (".jsonl", ".jsonl.zstd")
_STORE_SUFFIXES = (".db", ".sqlite", ".sqlite3")


def _scan(directory: str, problems: list[str], skipped: list[str] | None = None) -> list[str]:
    """Session logs and SQLite stores under ``directory``, sorted; symlinked folders are not entered (no loops,
    no repeats) and a symlinked file that leads out of the folder is not read. What is passed over is said in
    ``skipped`` (one line per reason)."""
    found: list[Any] = []
    outside: list[str] = []
    other = 0
    top = os.path.realpath(directory)
    for root, dirs, files in os.walk(directory, onerror=lambda exc: problems.append(
            f"{exc.filename}: cannot read the directory: {exc.strerror or exc}")):
        dirs.sort()
        for name in files:
            path = os.path.join(root, name)
            if not name.endswith(_LOG_SUFFIXES + _STORE_SUFFIXES):
                other += 1
            elif os.path.islink(path) and os.path.commonpath([top, os.path.realpath(path)]) != top:
                outside.append(path)
            elif name.endswith(_LOG_SUFFIXES) or _is_store(path):
                found.append(path)
            else:
                other += 1
    if skipped is not None:
        if outside:
            skipped.append(f"{directory}: skipped {len(outside)} symlink(s) leading out of the folder: "
                           + ", ".join(sorted(outside)[:5]) + (" …" if len(outside) > 5 else ""))
        if other:
            skipped.append(f"{directory}: skipped {other} file(s) that are neither *.jsonl, *.jsonl.zstd nor a "
                           "SQLite store (*.db, *.sqlite, *.sqlite3 holding the SQLite magic)")
    return _unique(sorted(p for p in found if os.path.isfile(p)))


def _is_store(path: str) -> bool:
    try:
        with open(path, "rb") as handle:
            return handle.read(16) == b"SQLite format 3\x00"
    except OSError:
        return False


def expand_inputs(patterns: list[str], skipped: list[str] | None = None) -> tuple[list[str], list[str]]:
    """FILE arguments -> (paths, problems): '-' kept, globs expanded, directories searched for *.jsonl.

    A directory search does not enter symlinked folders and lists a file reached twice (a
    symlink beside its target) once.
    """
    paths: list[str] = []
    problems: list[str] = []
    for pattern in patterns:
        if pattern == "-":
            paths.append("-")
            continue
        try:
            is_dir = stat.S_ISDIR(os.stat(pattern).st_mode)
        except FileNotFoundError:
            is_dir = None
        except OSError as exc:  # no permission to look, a symlink loop, a file used as a folder
            if not glob.has_magic(pattern):
                problems.append(f"{pattern}: cannot read: {exc.strerror or exc}")
                continue
            is_dir = None
        if is_dir:
            found = _scan(pattern, problems, skipped)
            if not found:
                problems.append(f"{pattern}: a directory with no *.jsonl, *.jsonl.zstd or SQLite store "
                                "(searched recursively)")
            paths.extend(found)
            continue
        if is_dir is not None or os.path.lexists(pattern):
            paths.append(pattern)
            continue
        if glob.has_magic(pattern):
            matches = sorted(glob.glob(pattern))
            if not matches:
                problems.append(f"{pattern}: no file matches")
            for match in matches:
                paths.extend(_scan(match, problems, skipped) if os.path.isdir(match) else [match])
            continue
        problems.append(f"{pattern}: no such file or directory")
    return paths, problems


def _unique(paths: list[str]) -> list[str]:
    seen: set[tuple[int, int]] = set()
    kept = []
    for path in paths:
        try:
            info = os.stat(path)
        except OSError:  # gone since the scan: `read_input` reports it
            kept.append(path)
            continue
        if (info.st_dev, info.st_ino) not in seen:
            seen.add((info.st_dev, info.st_ino))
            kept.append(path)
    return kept


class Report:
    """Collects per-file results and renders them in one of the three formats."""

    def __init__(self, fmt: str, max_findings: int, fail_on: str, level: str, verbose: bool = False) -> None:
        self.fmt = fmt
        self.verbose = verbose
        self.max_findings = max_findings
        self.fail_on = fail_on
        self.level = level
        self.files: list[dict[str, Any]] = []
        self.input_errors: list[str] = []
        # deviations (DEC-27) are shown with -v, or when they fail (`--fail-on deviation`)
        self.deviations = verbose or fail_on == DEVIATION

    def add(self, report: dict[str, Any]) -> None:
        """Add one `check_file` report (an unreadable file becomes an input error)."""
        if "inputError" in report:
            self.input_errors.append(report["inputError"])
            return
        findings = [_finding(f) for f in report["findings"]]
        repairs = sum(f.severity == WARNING and f.code in load_repairs() for f in findings)
        needs_repair = report["errors"] == 0 and repairs > 0 and repairs == report["warnings"]
        threshold = THRESHOLDS.index(self.fail_on)
        failing = (report["errors"] > 0
                   or (report["warnings"] > 0 and threshold > 0 and (threshold > 1 or not needs_repair))
                   or (report.get("deviations", 0) > 0 and self.fail_on == DEVIATION))
        self.files.append({**report, "valid": not failing, "needsRepair": needs_repair, "findings": findings})

    def shown(self, findings: list[Finding], deviations: bool = True) -> list[Finding]:
        """The findings a report shows (``deviations`` False: without the deviations, DEC-27)."""
        if not deviations:
            findings = [f for f in findings if f.severity != DEVIATION]
        return findings if self.max_findings <= 0 else findings[: self.max_findings]

    @staticmethod
    def hidden(entry: dict[str, Any], shown: list[Finding], deviations: bool = True) -> int:
        """Findings of a file that are counted but not shown (nor kept: `--max-findings`); deviations only when
        they are shown at all."""
        counted = int(entry["errors"]) + int(entry["warnings"])
        return counted + (int(entry.get("deviations", 0)) if deviations else 0) - len(shown)

    def exit_code(self) -> int:
        if self.input_errors:
            return 2
        return 0 if all(f["valid"] for f in self.files) else 1

    def render(self, out: TextIO) -> None:
        getattr(self, f"_render_{self.fmt}")(out)

    def _summary(self) -> dict[str, Any]:
        return {
            "files": len(self.files), "invalid": sum(not f["valid"] for f in self.files),
            "needsRepair": sum(f["valid"] and f["needsRepair"] for f in self.files),
            "errors": sum(f["errors"] for f in self.files), "warnings": sum(f["warnings"] for f in self.files),
            "deviations": sum(f.get("deviations", 0) for f in self.files),
            "events": sum(f["events"] for f in self.files), "unreadable": len(self.input_errors), "level": self.level,
        }

    def _render_text(self, out: TextIO) -> None:
        for entry in self.files:
            findings = entry["findings"]
            name = display(entry["file"])
            shown = self.shown(findings, self.deviations)  # deviations only with -v (DEC-27)
            out.writelines(format_text(f) + "\n" for f in shown)
            hidden = self.hidden(entry, shown, self.deviations)
            if hidden:
                out.write(f"{name}: … {hidden} more finding(s) not shown (--max-findings)\n")
            out.write(f"{name}: {self._status(entry)}\n")
            out.writelines(f"{name}: note: {display(note)}\n" for note in entry.get("notes", ()))
        out.writelines(f"error: {display(problem)}\n" for problem in self.input_errors)
        s = self._summary()
        out.write(f"{s['files']} file(s) checked at level {s['level']}: {s['invalid']} invalid, "
                  + (f"{s['needsRepair']} need repair, " if s["needsRepair"] else "")
                  + f"{s['errors']} error(s), {s['warnings']} warning(s)"
                  + (f", {s['deviations']} deviation(s)" if self.deviations and s["deviations"] else "")
                  + (f", {s['unreadable']} unreadable" if s["unreadable"] else "") + "\n")

    def _status(self, entry: dict[str, Any]) -> str:
        """A file's verdict in one line: short when it is ok (`ok: N events`); the counts and the revision read
        at when it is not; with ``verbose``, also why that revision and the SQLite layout."""
        valid, verbose = entry["valid"], self.verbose
        state = ("ok, needs repair" if entry["needsRepair"] else "ok") if valid else "INVALID"
        line = f"{state}: {entry['events']} events"
        if verbose or not valid:
            line += f", {entry['errors']} error(s), {entry['warnings']} warning(s)"
        elif entry["warnings"]:
            line += f", {entry['warnings']} warning(s)"
        if self.deviations and entry.get("deviations"):
            line += f", {entry['deviations']} deviation(s) (DEC-27)"
        if entry["knockOnSuppressed"]:
            line += f", {entry['knockOnSuppressed']} knock-on finding(s) not repeated"
        if "revision" in entry and (verbose or not valid):
            line += f", revision {entry['revision']}"
            if verbose:
                line += f" ({display(entry['revisionReason'])})"
        if entry.get("sqliteLayout") is not None and verbose:
            line += f", SQLite layout {entry['sqliteLayout']}"
        return line

    def _render_json(self, out: TextIO) -> None:
        files = []
        for entry in self.files:
            item = {k: v for k, v in entry.items() if k != "findings"}
            shown = self.shown(entry["findings"])
            item["findings"] = [f.to_json() for f in shown]
            item["notShown"] = self.hidden(entry, shown)
            item["truncated"] = item["notShown"] > 0
            files.append(item)
        doc = {"files": files, "inputErrors": self.input_errors, "summary": self._summary()}
        out.write(escape_surrogates(json.dumps(doc, ensure_ascii=False, indent=2)) + "\n")

    def _render_github(self, out: TextIO) -> None:
        for entry in self.files:
            shown = self.shown(entry["findings"], self.deviations)  # deviations as notices, with -v (DEC-27)
            hidden = self.hidden(entry, shown, self.deviations)
            if hidden:
                out.write(f"{display(entry['file'])}: … {hidden} more finding(s) not shown (--max-findings)\n")
            for f in shown:
                props = [f"file={_gh_escape(f.file, True)}"]
                if f.line is not None:
                    props.append(f"line={f.line}")
                if f.column is not None:
                    props.append(f"col={f.column}")
                title = f.code + (f" {f.requirement}" if f.requirement else "")
                props.append(f"title={_gh_escape(title, True)}")
                command = "notice" if f.severity == DEVIATION else f.severity
                out.write(f"::{command} {','.join(props)}::{_gh_escape(bounded(describe(f)), False)}\n")
            out.writelines(f"::notice file={_gh_escape(entry['file'], True)}::{_gh_escape(note, False)}\n"
                           for note in entry.get("notes", ()))
        out.writelines(f"::error::{_gh_escape(problem, False)}\n" for problem in self.input_errors)
        s = self._summary()
        out.write(f"{s['files']} file(s) checked: {s['invalid']} invalid, {s['errors']} error(s), {s['warnings']} warning(s)\n")


def upgrade_note(upgraded: dict[str, int]) -> str:
    """What the revision's load path upgraded as it read the log (JSONL-13): the file is in the earlier format."""
    kinds = ", ".join(f"{count} {display(kind)}" for kind, count in upgraded.items())
    return f"{sum(upgraded.values())} earlier-format record(s) read upgraded (JSONL-13: {kinds})"


def describe(f: Finding) -> str:
    where = [] if f.frame is None else [f"frame {f.frame}"]
    if f.seq is not None:
        where.append(f"seq {f.seq}")
    if f.pointer:
        where.append(f"at {f.pointer}")
    return (" ".join(where) + ": " if where else "") + f.message


def format_text(f: Finding) -> str:
    """One finding as one line; text from the log is escaped (no newline or control character survives)."""
    loc = f.file
    if f.line is not None:
        loc += f":{f.line}"
        if f.column is not None:
            loc += f":{f.column}"
    tag = f"[{f.code}" + (f" {f.requirement}" if f.requirement else "") + "]"
    return display(f"{loc}: {f.severity} {tag} {bounded(describe(f))}")


def _gh_escape(text: str, prop: bool) -> str:
    """A workflow-command value (:func:`~sessionspec.reference.json_text.workflow_value`)."""
    return workflow_value(text, prop=prop)


def _fraction(progress: Progress) -> Callable[[int, int], None]:
    def update(done: int, total: int) -> None:
        progress.total = max(total, 1)
        progress.update(done)

    return update


#: Bytes read at a time by the streaming pass. 1 MiB: larger reads get fresh pages from the kernel every
#: time (glibc maps them), about 10,000 more page faults for a 69 MB log; smaller ones cost more calls.
BLOCK_SIZE = 1 << 20


def _check_file_streaming(path: str, level: str, schemas: SchemaSet | None, progress: Progress, revision: str,
                          detection: InlineDetection | None = None) -> tuple[bool, CleanLog | None]:
    """(ran, result) of the accept-fast pass over a regular file read in blocks.

    ``ran`` is False when `path` is not a regular file that could be opened; ``result`` is None when
    the file is not provably clean. Either way the caller reads it whole and reports why.
    """
    try:
        # Look before opening: opening a FIFO would take its writer's data from the whole read below.
        if not stat.S_ISREG(os.stat(path).st_mode):
            return False, None
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return False, None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return False, None
        os.set_blocking(fd, True)

        def blocks() -> Iterator[bytes]:
            while block := os.read(fd, BLOCK_SIZE):
                yield block

        progress.start(f"checking {path}", 1)
        clean = check_clean(blocks(), path, level, schemas, size=info.st_size,
                            progress=_fraction(progress) if progress.enabled else None, revision=revision,
                            detection=detection)
        progress.clear()
        return True, clean
    except OSError:
        progress.clear()
        return True, None
    finally:
        os.close(fd)


def _detect_file(path: str, given: str | None) -> tuple[str, str] | None:
    """`_detect` on a regular file read block by block (detection weighs the whole log in O(1) memory); None
    for anything else (FIFOs, devices and unreadable paths are detected after `read_input`, which reads them
    safely or reports them)."""
    from sessionspec.validator.detect import detect_in_blocks, detect_in_bytes

    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None
        with open(path, "rb") as handle:
            head = handle.read(BLOCK_SIZE)
            if head.lstrip().startswith(b"["):
                return _decide(detect_in_bytes(head + handle.read()), None, given)
            return _decide(detect_in_blocks(itertools.chain((head,), iter(lambda: handle.read(BLOCK_SIZE), b""))),
                           None, given)
    except OSError:
        return None


#: Bytes at each end of a file whose lines pick the revision the pass detecting as it goes checks it at.
GUESS_BYTES = 1 << 16


def _guess_revision(path: str) -> str | None:
    """The revision detection finds in the first and last `GUESS_BYTES` of a regular JSONL file (whole lines), a
    guess only (the pass that takes it detects on the whole file); None for anything else."""
    from sessionspec.validator.detect import detect_in_bytes

    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None
        with open(path, "rb") as handle:
            head = handle.read(GUESS_BYTES)
            if not head or head.lstrip().startswith(b"["):
                return None
            size = os.fstat(handle.fileno()).st_size
            tail = b""
            if size > len(head):
                handle.seek(max(len(head), size - GUESS_BYTES))
                tail = handle.read(GUESS_BYTES)
                tail = tail[tail.find(b"\n") + 1:] if b"\n" in tail else b""
    except OSError:
        return None
    head = head[:head.rfind(b"\n") + 1]
    return detect_in_bytes(head + tail).revision


def _detect(data: bytes, unit: Unit | None = None, given: str | None = None) -> tuple[str, str]:
    """The revision to read a log at and why: ``given`` (saying so when its load path does not read the
    content), else the one whose load path reads the content (`sessionspec.validator.detect`), or, for a
    session of a SQLite store without such content, the one revision whose layout the store has; else the
    default. A database's evidence is labelled with seqs (it has no lines)."""
    from sessionspec.validator.detect import detect_in_bytes

    return _decide(detect_in_bytes(data, by_seq=unit is not None and unit.layout is not None), unit, given)


def _decide(detection: Detection, unit: Unit | None, given: str | None) -> tuple[str, str]:
    if given is not None:
        contradiction = detection.contradiction(given)
        return given, "given" if contradiction is None else f"given; {contradiction}"
    if unit is not None:
        detection = detection.in_store(unit.layout, unit.layout_revision)
    return detection.revision, detection.reason


def _plain(log: LoadedLog | CleanLog, suppressed: int, revision: str, how: str, keep: int = 0,
           deviations: Deviations = ((), 0)) -> dict[str, Any]:
    """A plain report of a checked log: its first ``keep`` findings (0 = all) in report order, every one counted;
    the ``deviations`` (DEC-27: kept, counted) among them in log order, counted apart (``deviations``)."""
    findings = log.findings
    errors = sum(1 for f in findings if f.severity == ERROR)
    warnings = len(findings) - errors
    if isinstance(findings, FindingList):
        errors, warnings = errors + findings.cut_errors, warnings + findings.cut_warnings
    noted, deviation_count = list(deviations[0]), deviations[1]
    listed = list(findings[:keep] if keep else findings)
    if noted:  # the errors and warnings first in what is kept; the deviations in the room left, by line
        listed = _merged(listed, noted[: keep - len(listed)] if keep else noted)
    report: dict[str, Any] = {
        "file": log.name, "kind": log.kind, "events": len(log.events) if isinstance(log, LoadedLog) else log.events,
        "lines": log.lines, "errors": errors, "warnings": warnings, "deviations": deviation_count,
        "knockOnSuppressed": suppressed,
        "findings": [f.to_json() for f in listed], "revision": revision,
        "revisionReason": how,
    }
    if log.upgraded:  # (the fast pass proves them too: `CleanLog` counts them as the exact path does)
        upgraded = dict(sorted(log.upgraded.items()))
        report["upgraded"], report["notes"] = upgraded, [upgrade_note(upgraded)]
    if log.kept_as_stored:
        kept = dict(sorted(log.kept_as_stored.items()))
        kinds = ", ".join(f"{count} {display(kind)}" for kind, count in kept.items())
        report["keptAsStored"] = kept
        notes: list[str] = report.get("notes", [])
        report["notes"] = [*notes, f"{sum(kept.values())} earlier-format record(s) kept as stored, "
                           f"valid at the earlier revision (DEC-24: {kinds})"]
    return report


def _merged(findings: list[Finding], deviations: list[Finding]) -> list[Finding]:
    """``findings`` in their order (storage findings, which have no line, first), each deviation (in line order)
    put before the first finding on a later line."""
    out: list[Finding] = []
    pending = sorted(deviations, key=lambda f: f.line if f.line is not None else 1 << 62)
    at = 0
    for finding in findings:
        line = finding.line
        while at < len(pending) and line is not None and (pending[at].line or line) < line:
            out.append(pending[at])
            at += 1
        out.append(finding)
    return out + pending[at:]


#: The deviations of a checked log (DEC-27): those kept, and how many there are.
Deviations = tuple[Iterable[Finding], int]


def _finding(plain: dict[str, Any]) -> Finding:
    return Finding(**{"requirement": None, **plain})


def check_file(path: str, level: str = "schema", registry: tuple[str, ...] = (), exact: bool = False,
               progress: Progress | None = None, revision: str | None = None, keep: int = 0) -> dict[str, Any]:
    """Check one log file (``-`` is stdin) and return a plain report: JSON values only, so it pickles.

    The report has ``file``, ``kind``, ``events``, ``lines``, ``errors``, ``warnings``,
    ``knockOnSuppressed``, ``findings`` (each as in ``--format json``), ``revision`` and
    ``revisionReason`` (``revision`` given, else detected from the content); or only ``file`` and
    ``inputError`` when the file cannot be read. This is what every ``-j`` worker and a Dask
    cluster (``--dask``) run; the compiled schemas are built once per process. ``keep`` > 0
    (``--max-findings``) bounds the findings kept, while checking too: the rest are only counted.
    """
    progress = progress or Progress.for_stream(sys.stderr, True)
    how = "given"
    streamed = False
    if not exact and path != "-" and revision is not None and _needs_no_detection(revision, level) and proves(revision):
        # The report of a log the pass proves at a given revision says "given" whatever detection would find
        # (`_needs_no_detection`): the whole detection pass is skipped.
        schemas = schema_set(tuple(registry), revision) if level != "load" else None
        streamed, clean = _check_file_streaming(path, level, schemas, progress, revision)
        if clean is not None:
            return _plain(clean, 0, revision, how, keep)
    decided = None
    tried = None  # the revision a pass that detected as it went gave up at
    if not exact and path != "-" and revision is None:
        # One read for both: the pass at the revision the file's first and last lines show, detecting as it goes
        # (`InlineDetection`: the whole file's detection); a log of another revision is checked again at that one.
        guess = _guess_revision(path)
        if guess is not None and proves(guess):
            detection = InlineDetection()
            schemas = schema_set(tuple(registry), guess) if level != "load" else None
            ran, clean = _check_file_streaming(path, level, schemas, progress, guess, detection)
            if clean is not None:
                decided = _decide(detection.result(), None, None)
                if decided[0] == guess:
                    return _plain(clean, 0, guess, decided[1], keep)
            elif ran:
                tried = guess
    if decided is None:
        decided = _detect_file(path, revision) if path != "-" else None
    if decided is not None:
        revision, how = decided
    streamed = streamed or (tried is not None and revision == tried)
    if not exact and not streamed and path != "-" and revision is not None and proves(revision):
        # A regular file is proved clean block by block (memory: one block, the surface and the open
        # turn); anything else, and a file with findings, is read whole below.
        schemas = schema_set(tuple(registry), revision) if level != "load" else None
        streamed, clean = _check_file_streaming(path, level, schemas, progress, revision)
        if clean is not None:
            return _plain(clean, 0, revision, how, keep)
    data, problem = read_input(path)
    if problem is not None:
        return {"file": path, "inputError": problem}
    assert data is not None
    name = "<stdin>" if path == "-" else path
    if revision is None:
        revision, how = _detect(data)
    log, suppressed, deviations = _check_bytes(data, name, level, registry, revision, progress,
                                               fast=not exact and not streamed, keep=keep)
    return _plain(log, suppressed, revision, how, keep, deviations)


def _needs_no_detection(given: str, level: str) -> bool:
    """Whether a log the fast pass proves clean at revision ``given`` has, for certain, no content that ``given``'s
    load path does not read (`Detection.contradiction` would find none, so the report's reason is "given"): every
    other revision's records are read upgraded by ``given`` (JSONL-13), or the level checks the schemas, which
    refuse the types and payload shapes another revision alone has (detection's content evidence; where settings
    are placed is not content)."""
    from sessionspec.spec.revisions import known_revisions
    from sessionspec.validator.detect import reads_upgraded

    return level != "load" or all(reads_upgraded(given, other) for other in known_revisions() if other != given)


def _check_bytes(data: bytes, name: str, level: str, registry: tuple[str, ...], revision: str,
                 progress: Progress, *, fast: bool, keep: int = 0,
                 locate: Callable[[Finding], None] | None = None) -> tuple[LoadedLog | CleanLog, int, Deviations]:
    """The checked log, its knock-on count and its deviations (DEC-27): the accept-fast pass when allowed, else
    the exact path."""
    schemas = schema_set(tuple(registry), revision) if level != "load" else None
    if fast and proves(revision):
        # Most logs are clean: prove it in one tight pass, or fall through to the exact path,
        # which locates and explains every finding (`sessionspec.validator.fastlog`).
        progress.start(f"checking {name}", 1)
        clean = check_clean(data, name, level, schemas, progress=_fraction(progress) if progress.enabled else None,
                            revision=revision)
        progress.clear()
        if clean is not None:
            return clean, 0, ((), 0)
    checker = Checker(level, schemas, revision, registry_types(registry, revision, schemas))
    with gc_paused():  # parsed JSON is acyclic: the cyclic GC would only rescan the growing heap
        progress.start(f"reading {name}", data.count(b"\n") + 1)
        log = load_log(data, name, progress=progress.update if progress.enabled else None, keep=keep, locate=locate)
        progress.start(f"checking {name}", len(log.events))
        checker.check(log, progress.update if progress.enabled else None)
        progress.clear()
    for finding in [*log.findings, *checker.deviations]:
        finding.file = name
    return log, checker.suppressed, (checker.deviations, checker.deviation_count)


def _jobs(requested: int, files: int) -> int:
    if requested <= 0:
        try:
            requested = len(os.sched_getaffinity(0))
        except (AttributeError, OSError):  # pragma: no cover - not Linux
            requested = os.cpu_count() or 1
    return max(1, min(requested, files))


def _in_processes(paths: list[str], args: argparse.Namespace, jobs: int,
                  progress: Progress) -> Iterator[dict[str, Any]]:
    """`check_file` over `paths` in `jobs` processes, in the order of `paths` (whatever finishes first)."""
    import concurrent.futures
    import functools
    import multiprocessing

    task = functools.partial(check_stored, level=args.level, registry=tuple(args.registry), exact=args.exact,
                             session=args.session, revision=args.given_revision, keep=args.max_findings)
    # fork (where there is one) shares the compiled schemas the parent already built
    context = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else None)
    size = max(1, min(64, len(paths) // (jobs * 8)))
    chunks = [paths[i:i + size] for i in range(0, len(paths), size)]
    done = 0
    progress.start(f"checking {len(paths)} files in {jobs} processes", len(paths))
    with concurrent.futures.ProcessPoolExecutor(jobs, mp_context=context) as pool:
        futures = [pool.submit(_check_chunk, task, chunk) for chunk in chunks]
        for chunk, future in zip(chunks, futures):
            try:
                reports = future.result()
            except concurrent.futures.process.BrokenProcessPool:
                break
            done += len(chunk)
            progress.update(done)
            yield from reports
    # a worker died (the out-of-memory killer, a signal): each file not yet reported runs alone, so only the
    # file that kills its worker loses its result, as a per-file error
    for path in paths[done:]:
        with concurrent.futures.ProcessPoolExecutor(1, mp_context=context) as alone:
            try:
                yield from alone.submit(task, path).result()
            except concurrent.futures.process.BrokenProcessPool:
                yield {"file": path, "inputError": f"{path}: the worker process checking it died (killed by a "
                                                   "signal or the out-of-memory killer); no verdict for this file"}
        done += 1
        progress.update(done)
    progress.clear()


def _check_chunk(task: Callable[[str], list[dict[str, Any]]], chunk: list[str]) -> list[dict[str, Any]]:
    return [report for path in chunk for report in task(path)]


def _on_dask(paths: list[str], args: argparse.Namespace) -> Iterator[dict[str, Any]]:
    """`check_file` over `paths` on the Dask cluster at ``--dask`` (results in the order of `paths`)."""
    from distributed import Client

    with Client(args.dask) as client:  # type: ignore[no-untyped-call]  # distributed ships no annotations
        futures = client.map(check_stored, paths, level=args.level, registry=tuple(args.registry), exact=args.exact,
                             session=args.session, revision=args.given_revision, keep=args.max_findings, pure=False)
        for reports in client.gather(futures):
            yield from reports


def _registry_problem(exc: Exception) -> str:
    """A registry refusal located once: the loader's message already starts with FILE#POINTER, so the error's
    own pointer (which `str()` puts first) is left out when the message holds it."""
    from sessionspec.spec.errors import SessionSpecError

    if isinstance(exc, SessionSpecError) and exc.path and exc.path in exc.message.partition(": ")[0]:
        return f"{exc.message} [{exc.code}]"
    return str(exc)


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if args.max_findings < 0:
        err.write("sessionspec validate: error: --max-findings must be >= 0\n")
        return 2
    if args.jobs < 0:
        err.write("sessionspec validate: error: --jobs must be >= 0\n")
        return 2
    if args.dask and "-" in args.files:
        err.write("sessionspec validate: error: --dask cannot read standard input ('-')\n")
        return 2
    skipped: list[str] = []
    paths, problems = expand_inputs(args.files, skipped)
    err.writelines(f"sessionspec validate: note: {display(note)}\n" for note in skipped)
    report = Report(args.format, args.max_findings, args.fail_on, args.level, args.verbose)
    report.input_errors.extend(problems)
    from sessionspec.spec.revisions import DEFAULT_REVISION, UnknownRevision, resolve_revision

    args.given_revision = None
    if args.revision is not None:
        try:
            args.given_revision = resolve_revision(args.revision).id
        except UnknownRevision as exc:
            err.write(f"sessionspec validate: error: --revision: {exc.message}\n")
            return 2
    if args.level != "load":
        try:
            schema_set(tuple(args.registry), args.given_revision or DEFAULT_REVISION)
        except Exception as exc:  # noqa: BLE001 - a broken plugin registry is a usage error, reported plainly
            err.write(f"sessionspec validate: error: cannot load the registry: {_registry_problem(exc)}\n")
            return 2
    progress = Progress.for_stream(err, args.quiet)
    jobs = _jobs(args.jobs, len(paths))
    if args.dask:
        try:
            reports: Iterable[dict[str, Any]] = list(_on_dask(paths, args))
        except ImportError:
            err.write("sessionspec validate: error: --dask needs the optional extra: pip install 'sessionspec[dask]'\n")
            return 2
    elif jobs > 1 and "-" not in paths:
        reports = _in_processes(paths, args, jobs, progress)
    else:
        reports = (one for path in paths
                   for one in check_stored(path, args.level, tuple(args.registry), args.exact, args.session, progress,
                                           args.given_revision, args.max_findings))
    for one in reports:
        report.add(one)
    if not args.quiet:
        report.render(out)
    elif report.input_errors:
        err.writelines(f"sessionspec validate: error: {problem}\n" for problem in report.input_errors)
    return report.exit_code()


def check_stored(path: str, level: str = "schema", registry: tuple[str, ...] = (), exact: bool = False,
                 session: str | None = None, progress: Progress | None = None,
                 revision: str | None = None, keep: int = 0) -> list[dict[str, Any]]:
    """`check_file` for any storage form: one plain report per stored session (picklable, like `check_file`).

    A JSONL file goes to `check_file` (streamed); a compressed artifact, a SQLite store (every
    session, or ``session``) and standard input are opened by content through `sessionspec.storage`.
    Each session is checked at ``revision`` when given, else at the revision its own content shows.
    """
    if session is None and path != "-" and detect_form(path) == "jsonl" and not path.endswith(".zstd"):
        return [check_file(path, level, registry, exact, progress, revision, keep)]
    progress = progress or Progress.for_stream(sys.stderr, True)
    units, problem = open_units(path, read_input, session=session, keep=keep)
    reports = [] if problem is None else [{"file": path, "inputError": problem}]
    return reports + [_unit_report(unit, level, registry, exact, progress, revision, keep) for unit in units]


def _unit_report(unit: Unit, level: str, registry: tuple[str, ...], exact: bool, progress: Progress,
                 revision: str | None, keep: int = 0) -> dict[str, Any]:
    """Validate one stored session's logical JSONL; storage findings come first, every finding is located.
    A database's session also reports the SQLite layout it was read at and the storage notes (DEC-21)."""
    data, name = unit.data, unit.name
    revision, how = _detect(data, unit, revision)
    if unit.unreadable:
        return _plain(LoadedLog(name, unit.form, 0, findings=unit.findings), 0, revision, how, keep)
    storage: dict[str, Any] = {} if unit.layout is None else {"sqliteLayout": unit.layout}
    log, suppressed, deviations = _check_bytes(data, name, level, registry, revision, progress,
                                               fast=not exact and not unit.findings, keep=keep, locate=unit.locate)
    if not isinstance(log, LoadedLog):  # proved clean by the accept-fast pass: its crash-tail warnings located too
        for finding in log.findings:
            unit.locate(finding)
        return _with_notes({**_plain(log, 0, revision, how, keep), "kind": unit.form, **storage}, unit)
    for finding in [*log.findings, *deviations[0]]:
        unit.locate(finding)
    log.findings[:0] = unit.findings
    if isinstance(unit.findings, FindingList):
        log.findings.cut_errors += unit.findings.cut_errors
        log.findings.cut_warnings += unit.findings.cut_warnings
    return _with_notes({**_plain(log, suppressed, revision, how, keep, deviations),
                        "kind": unit.form if unit.form != "jsonl" else log.kind, **storage}, unit)


def _with_notes(report: dict[str, Any], unit: Unit) -> dict[str, Any]:
    """A stored session's report with the storage's notes (DEC-21) before the reading's own."""
    if unit.layout is not None:
        report["notes"] = [*unit.notes, *report.get("notes", ())]
    return report


if __name__ == "__main__":  # pragma: no cover
    from sessionspec.cli import main

    sys.argv.insert(1, "validate")
    main()
