"""Check an implementation of dsh-session against the conformance vectors.

Without --impl the embedded reference implementation runs in-process. With
--impl, COMMAND (split like a shell would) starts an adapter that speaks the
line protocol of conformance/PROTOCOL.md on stdin/stdout. Cases needing a
capability the adapter does not claim are skipped; an implementation that
throws an error it does not define (the adapter replies "crashed") has failed
that case; an adapter that exits, hangs or garbles a reply gets that case
marked errored, is restarted, and the run goes on. The vectors run are those
of the format revision the adapter declares in its handshake (specRevision: a
revision id or an npm release); --revision overrides it, and also picks the
revision the in-process reference serves. Of the `sqlite-read` vectors, those
of the SQLite layout the adapter declares (sqliteLayout, default: the
revision's own) run; --sqlite-layout overrides it likewise. Exit status: 0 when every attempted
case passed (or is a listed known failure), 1 otherwise (and when no case was attempted at all: every
selected case skipped), 2 when the corpus,
the expectation file or the adapter cannot be used, or the revision is unknown.

Selection as pytest users know it: --only names areas, requirements, families or case ids;
-k EXPR is a pytest-style expression (and/or/not/parentheses over names that are part of a
case's id, area, op or description, or are one of its requirement ids or families); --deselect
leaves cases out; --list prints the selection without running it. --last-failed reruns the
cases that had a problem (failed, crashed, errored, xpass) in a previous run's JSONL report: the
one named, else the --report file, which this run then replaces atomically (with --force). No other file is
read or written for it (there is no hidden cache). --maxfail N (-x: 1) stops starting cases after
N problems; the report then holds the cases run and a problem saying how many were not.

example:
  sessionspec conformance --impl "node adapter.js" --expect known.json --report run.jsonl --junit run.xml -j 4
  sessionspec conformance --impl "node adapter.js" --html run.html
  sessionspec conformance --impl "node adapter.js" --format github   # annotations in GitHub Actions
  sessionspec conformance --impl "node adapter.js" -k "SURF and not empty" --maxfail 5
  sessionspec conformance --impl "node adapter.js" --report run.jsonl --force --last-failed
"""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path
from typing import Any, TextIO

from sessionspec.conformance import cases as cases_mod
from sessionspec.conformance.expectations import ExpectationsError, load_expectations
from sessionspec.conformance.harness import StartupFailed, adapters_end_on_signals, connector_for
from sessionspec.conformance.report import (
    atomic_write_text,
    junit_xml,
    report_lines,
    write_report,
)
from sessionspec.conformance.runner import apply_stale, run_cases, start_implementation
from sessionspec.conformance.summary import render_summary
from sessionspec.progress import Progress
from sessionspec.reference.atomic import OutputError, check_new_output, output_folder
from sessionspec.reference.json_text import display


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--impl", metavar="COMMAND",
                        help="adapter command line (default: the reference implementation, in-process)")
    parser.add_argument("--only", metavar="AREA|REQ-ID", action="append", default=[],
                        help="run only an area (e.g. surf), a requirement (SURF-5), a family (SURF) or a case id; repeatable")
    parser.add_argument("-k", metavar="EXPR", dest="keywords", action="append", default=[],
                        help="run only cases a pytest-style expression selects: names (part of a case's id, area, op or "
                             "description, or a requirement id or family) with and/or/not/(); repeatable (all must hold)")
    parser.add_argument("--deselect", metavar="AREA|REQ-ID|ID", action="append", default=[],
                        help="leave out an area, requirement, family or case id (as --only names them); repeatable")
    parser.add_argument("--last-failed", metavar="REPORT.jsonl", nargs="?", const="", default=None,
                        help="run only the cases that failed, crashed, errored or passed unexpectedly in a previous "
                             "run's JSONL report (default: the --report file, before this run replaces it)")
    parser.add_argument("--maxfail", metavar="N", type=int, default=None,
                        help="stop after N failing cases (cases not yet run are left out of the report)")
    parser.add_argument("-x", "--exitfirst", action="store_true", help="stop at the first failing case (--maxfail 1)")
    parser.add_argument("--expect", metavar="FILE", help="expectation file listing known failures (strict)")
    parser.add_argument("--list", action="store_true",
                        help="list the selected cases of the adapter's revision (id, area, requirements, description) and exit")
    parser.add_argument("--report", metavar="FILE.jsonl", help="write the JSONL report here")
    parser.add_argument("--junit", metavar="FILE.xml", help="write a JUnit XML report here")
    parser.add_argument("--html", metavar="FILE.html",
                        help="write a self-contained HTML page of the run here (`sessionspec report` renders saved runs)")
    parser.add_argument("--trace", metavar="FILE.jsonl", help="write the failing cases as a replayable trace")
    parser.add_argument("--write-expect", metavar="FILE.json",
                        help="write an expectation file listing every current failure (its message as the reason, to edit)")
    parser.add_argument("--force", action="store_true",
                        help="replace a --report/--junit/--html/--trace/--write-expect file that exists (a regular file)")
    parser.add_argument("--fuzz", metavar="N|quick", type=_fuzz_budget, default=0,
                        help="also run the differential state machines with N examples each, or their CI-quick "
                             "profile (fixed seeds, the same requests every run)")
    parser.add_argument("--machine", metavar="NAME", action="append", default=[],
                        help="with --fuzz: run only this state machine (session, fork, storage, store, persistence); "
                             "repeatable")
    parser.add_argument("--trace-dir", metavar="DIR", default=".sessionspec/traces",
                        help="where --fuzz saves failure traces, each a new file of a unique name (a real folder, not a "
                             "symbolic link; a missing one is created under an existing one; default: %(default)s)")
    parser.add_argument("-j", "--jobs", metavar="N", type=int, default=1, help="parallel adapters (default: 1)")
    parser.add_argument("--timeout", metavar="SECONDS", type=float, default=30.0,
                        help="per-request timeout for --impl adapters (default: %(default)s)")
    parser.add_argument("--format", choices=("text", "github"), default="text",
                        help="github: after the summary, one GitHub Actions annotation (::error) per problem case")
    parser.add_argument("--failures-only", action="store_true", help="summarise only what failed, with every failing case")
    parser.add_argument("-v", "--verbose", action="store_true", help="list every requirement in the summary")
    parser.add_argument("--vectors", metavar="DIR", type=Path, help="read vectors from DIR instead of the packaged corpus")
    parser.add_argument("--revision", metavar="R",
                        help="format revision to check (id or npm release); default: the one the adapter declares")
    parser.add_argument("--sqlite-layout", metavar="N", type=int, default=None,
                        help="SQLite layout (user_version) whose vectors run, one of the revision's; default: the one "
                             "the adapter declares (sqliteLayout), else the revision's own")


def _revision_cases(args: argparse.Namespace, declared: Any, corpus: list[cases_mod.Case],
                    err: TextIO, declared_layout: Any = None) -> tuple[Any, list[cases_mod.Case]] | None:
    """The revision to check (--revision, else the adapter's declaration) and its selected cases, those of the
    SQLite layout (--sqlite-layout, else the declared one, else the revision's own); None after reporting an
    unknown revision or layout, or an empty selection (exit 2)."""
    from sessionspec.spec.revisions import UnknownRevision, resolve_revision

    try:
        revision = resolve_revision(args.revision if args.revision is not None else declared)
    except UnknownRevision as exc:
        err.write(f"sessionspec conformance: the adapter declares spec revision {declared!r}, which this suite "
                  f"does not describe: {exc.message}\n")
        return None
    layouts = cases_mod.sqlite_layouts([revision.id])
    layout = args.sqlite_layout if args.sqlite_layout is not None else declared_layout
    if layout is None:
        layout = layouts[0]
    elif layout not in layouts:
        err.write(f"sessionspec conformance: {'--sqlite-layout' if args.sqlite_layout is not None else 'the adapter declares'}"
                  f" SQLite layout {layout!r}, which revision {revision.id} does not have; its layouts: "
                  f"{', '.join(map(str, layouts))}\n")
        return None
    try:
        applicable = cases_mod.for_sqlite_layout(cases_mod.for_revision(corpus, revision.id), layout)
        selected = cases_mod.select(applicable, args.only)
    except ValueError as exc:
        err.write(f"sessionspec conformance: {exc}\n")
        return None
    if not selected:
        where = args.vectors or "the packaged corpus"
        err.write(f"sessionspec conformance: no case to run: {where} holds no case of revision {revision.id}\n")
        return None
    narrowed = _narrow(args, selected, err)
    if narrowed is None:
        return None
    if not narrowed:
        err.write("sessionspec conformance: no case to run: no case of the selection is left after "
                  + ", ".join(_selection_words(args)) + "\n")
        return None
    return revision, narrowed


def _selection_words(args: argparse.Namespace) -> list[str]:
    """The narrowing options as the report header records them (after the --only selectors)."""
    words = [f"-k {e}" for e in args.keywords] + [f"--deselect {d}" for d in args.deselect]
    if args.last_failed is not None:
        words.append(f"--last-failed {args.last_failed or args.report}")
    return words


def _narrow(args: argparse.Namespace, selected: list[cases_mod.Case], err: TextIO) -> list[cases_mod.Case] | None:
    """Apply -k, --deselect and --last-failed to the --only selection; None after reporting a usage error."""
    from sessionspec.conformance.selection import SelectionError, by_keywords

    try:
        selected = by_keywords(selected, args.keywords)
    except SelectionError as exc:
        err.write(f"sessionspec conformance: {exc}\n")
        return None
    for selector in args.deselect:
        try:
            dropped = {c.id for c in cases_mod.select(selected, [selector])}
        except ValueError:
            err.write(f"sessionspec conformance: --deselect {display(selector)}: no selected case matches "
                      "(an area, a requirement id, a family or a case id)\n")
            return None
        selected = [c for c in selected if c.id not in dropped]
    if args.last_failed is not None:
        failed = _last_failed(args.last_failed or args.report, err)
        if failed is None:
            return None
        if not failed:
            err.write("sessionspec conformance: --last-failed: the previous run had no failing case; running the "
                      "whole selection\n")
        else:
            selected = [c for c in selected if c.id in failed]
    return selected


def _last_failed(path: str | None, err: TextIO) -> set[str] | None:
    """The ids of the problem cases (failed, crashed, errored, xpass) of a saved report; None after an error."""
    from sessionspec.conformance.report import InvalidReport, load_report
    from sessionspec.conformance.results import PROBLEM_OUTCOMES

    if not path:
        err.write("sessionspec conformance: --last-failed needs the previous run's report: name it "
                  "(--last-failed REPORT.jsonl) or give --report\n")
        return None
    try:
        report = load_report(path)
    except InvalidReport as exc:
        err.write(f"sessionspec conformance: --last-failed: {display(str(exc)[:1000])}\n")
        return None
    return {c["id"] for c in report.cases if c["outcome"] in PROBLEM_OUTCOMES}


def _expectation_file(result: Any) -> str:
    """An expectation file (``expectations.json``) naming every case that failed, crashed, errored or is a known
    failure of this run, each with the harness's message as its reason, for a human to edit into the cause."""
    import json

    failures = [{"case": r.case.id, "reason": (r.reason if r.outcome == "xfail" and r.reason else
                                               f"{r.outcome}: {r.message}" if r.message else r.outcome)}
                for r in result.results if r.outcome in ("failed", "crashed", "errored", "xfail")]
    name = result.implementation.get("name") if isinstance(result.implementation, dict) else None
    document = {"implementation": name if isinstance(name, str) and name else "unnamed", "failures": failures}
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def _fuzz_budget(value: str) -> int | str:
    """``--fuzz``: a number of examples per machine, or ``quick``."""
    if value == "quick":
        return value
    try:
        return int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of examples or 'quick', got {value!r}") from None


def _usage_problem(args: argparse.Namespace) -> str | None:
    """Why the numeric options or ``--machine`` cannot be used as given (no ``--fuzz``, an unknown name), else None."""
    if args.jobs < 1 or (args.fuzz != "quick" and args.fuzz < 0) or args.timeout <= 0 \
            or (args.maxfail is not None and args.maxfail < 1):
        return "-j and --maxfail must be >= 1, --fuzz >= 0 and --timeout > 0"
    if not args.machine:
        return None
    if not args.fuzz:
        return "--machine selects the state machines --fuzz runs: give --fuzz N or --fuzz quick too"
    from sessionspec.conformance.fuzz import load_machines

    module = load_machines()
    known = list(getattr(module, "MACHINES", {})) if module is not None else []
    unknown = [name for name in args.machine if name not in known]
    if unknown:
        return (f"--machine {display(unknown[0])}: no such state machine; the machines are "
                f"{', '.join(known) or '(none installed)'}")
    return None


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    with adapters_end_on_signals():
        return _run(args, out, err)


def _output_problem(args: argparse.Namespace) -> str | None:
    """Every named output under the one policy, before any work (`reference.atomic.check_new_output`)."""
    try:
        for output in OUTPUTS:
            if getattr(args, output) is not None:
                check_new_output(getattr(args, output), force=args.force)
    except OutputError as exc:
        return str(exc)
    try:
        if args.fuzz:
            output_folder(args.trace_dir)
    except OutputError as exc:
        return f"--trace-dir: {exc}"
    return None


def _run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    problem = _usage_problem(args) or _output_problem(args)
    if problem:
        err.write(f"sessionspec conformance: {problem}\n")
        return 2
    if args.exitfirst:
        args.maxfail = 1
    from sessionspec.spec.revisions import UnknownRevision, resolve_revision

    expectations = None
    if args.expect:  # (before the corpus: a file that cannot be an expectation file costs nothing to refuse)
        try:
            expectations = load_expectations(args.expect)
        except ExpectationsError as exc:
            err.write(f"sessionspec conformance: {exc}\n")
            return 2
    try:
        corpus = cases_mod.load_corpus(args.vectors)
        if args.revision is not None:
            resolve_revision(args.revision)
    except (cases_mod.CaseFileError, ValueError, OSError) as exc:
        err.write(f"sessionspec conformance: {exc}\n")
        return 2
    except UnknownRevision as exc:
        err.write(f"sessionspec conformance: --revision: {exc.message}\n")
        return 2
    if not corpus:
        where = args.vectors or "the packaged corpus"
        err.write(f"sessionspec conformance: no case to run: {where} holds no case (no *.json vector file with cases)\n")
        return 2
    if args.impl is None and args.sqlite_layout is not None \
            and args.sqlite_layout not in cases_mod.sqlite_layouts([resolve_revision(args.revision).id]):
        err.write(f"sessionspec conformance: --sqlite-layout {args.sqlite_layout}: the reference has no such layout at "
                  f"revision {resolve_revision(args.revision).id} (its layouts: "
                  f"{', '.join(map(str, cases_mod.sqlite_layouts([resolve_revision(args.revision).id])))})\n")
        return 2
    try:
        connect = connector_for(args.impl, args.revision, args.sqlite_layout)
    except ValueError as exc:
        err.write(f"sessionspec conformance: {exc}\n")
        return 2
    try:
        first = start_implementation(connect, args.timeout)
    except StartupFailed as exc:
        err.write(f"sessionspec conformance: the adapter could not start: {exc}\n")
        return 2
    if expectations is not None:  # the entries of the Node the adapter runs on (an entry's `node`)
        expectations = expectations.for_runtime(first.info.get("runtime"))
    chosen = _revision_cases(args, first.info.get("specRevision"), corpus, err, first.info.get("sqliteLayout"))
    if chosen is None:
        first.close()
        return 2
    revision, selected = chosen
    if args.list:
        first.close()
        out.writelines(display(f"{c.id}  {c.area:<20} {','.join(c.requirements):<24} {c.description}") + "\n"
                       for c in selected)
        err.write(f"{len(selected)} case(s) of revision {revision.id}\n")
        return 0
    bar = Progress.for_stream(err)
    bar.start("conformance", len(selected))
    try:
        result = run_cases(selected, connect, jobs=args.jobs, timeout=args.timeout, expectations=expectations,
                           progress=lambda done, _total, _result: bar.update(done), first=first,
                           maxfail=args.maxfail)
    except StartupFailed as exc:
        bar.clear()
        err.write(f"sessionspec conformance: an extra adapter (-j) could not start: {exc}\n")
        return 2
    bar.clear()
    apply_stale(result, expectations, {c.id for c in corpus})
    if args.fuzz:
        from sessionspec.conformance.fuzz import FuzzUnavailable, run_fuzz

        try:
            fuzzed = run_fuzz(args.fuzz, connect, timeout=args.timeout, trace_dir=Path(args.trace_dir), out=err,
                              known=expectations.fuzz if expectations else (), revision=revision,
                              machines=args.machine or None)
        except (FuzzUnavailable, OutputError) as exc:  # OutputError: the trace folder changed under the run
            err.write(f"sessionspec conformance: {exc}\n")
            return 2
        result.fuzz_failures = fuzzed.failures
        result.fuzz_known = fuzzed.known
        result.fuzz_unmatched = fuzzed.unmatched
        result.fuzz_held = fuzzed.held
        result.problems.extend(fuzzed.problems)
    render_summary(result, out, failures_only=args.failures_only, verbose=args.verbose, revision=revision.id,
                   command=args.impl)
    lines = report_lines(result, command=shlex.split(args.impl) if args.impl else None,
                         selection=[*args.only, *_selection_words(args)], expectations=args.expect,
                         revision=revision.id)
    if args.format == "github":
        from sessionspec.conformance.run_summary import SavedRun, render_github

        out.write(render_github([SavedRun(args.report or "this run", lines[0], lines[1:-1], lines[-1])]))
    try:
        _write_outputs(args, result, lines)
    except OSError as exc:
        err.write(f"sessionspec conformance: cannot write a report: {exc}\n")
        return 2
    return result.exit_code


#: the files a run writes where the user names them (`_write_outputs`), each under `check_new_output`
OUTPUTS = ("report", "junit", "html", "write_expect", "trace")


def _write_outputs(args: argparse.Namespace, result: Any, lines: Any) -> None:
    """The files a run was asked for (--report, --junit, --html, --write-expect, --trace); raises OSError."""
    if args.report:
        write_report(args.report, lines, force=args.force)
    if args.junit:
        atomic_write_text(args.junit, junit_xml(lines), force=args.force)
    if args.html:
        from sessionspec.conformance.html_report import render_html, run_from_lines

        atomic_write_text(args.html, render_html([run_from_lines(lines, "this run", Path.cwd())]), force=args.force)
    if args.write_expect:
        atomic_write_text(args.write_expect, _expectation_file(result), force=args.force)
    if args.trace:
        from sessionspec.conformance.trace import TraceStep, write_trace

        steps = [TraceStep(r.case.op, r.case.args, r.case.expect, r.reply, r.case.ignore,
                           f"{r.case.id}: {r.case.description}")
                 for r in result.results if r.outcome in ("failed", "crashed", "errored", "xfail")]
        write_trace(args.trace, steps, description="failing conformance cases",
                    origin="sessionspec conformance", implementation=result.implementation, force=args.force)
