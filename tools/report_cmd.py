"""Render one or more JSONL conformance reports as one self-contained HTML page.

Each REPORT is a file written by `sessionspec conformance --report`. The page
(no network, no external assets) shows a header per run, a matrix of runs x
rule families (expandable to requirements), the failing cases with their
requirement text, input, expected vs actual and a replay command, and the
fuzz failures with their shrunk traces (read from the trace files the report
names, when they are at hand). The file is written atomically. --check
writes nothing and exits 1 when the page on disk differs from the one the
reports give (for committed example pages). Exit status: 0 done (or fresh),
1 stale (--check), 2 a report cannot be read or does not follow
spec/protocol/report.json (the message names the file and line).

example:
  sessionspec report reference.jsonl node.jsonl --html results.html
"""

from __future__ import annotations

import argparse
import difflib
from pathlib import Path
from typing import TextIO

from sessionspec.conformance.html_report import PROBLEM_VIEW, RunView, render_html
from sessionspec.conformance.report import InvalidReport, atomic_write_text, load_report
from sessionspec.reference.atomic import OutputError, check_new_output
from sessionspec.spec.inputs import read_text

_MAX_ERROR = 1_000


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("reports", metavar="REPORT", nargs="+", help="JSONL report of a run (in page order)")
    parser.add_argument("--html", metavar="FILE.html", required=True,
                        help="write the page here: a new file in an existing folder, or with --force a regular file")
    parser.add_argument("--force", action="store_true", help="replace FILE.html when it is an existing regular file")
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 with a diff when FILE.html is not what the reports give")


def load_runs(paths: list[str]) -> list[RunView]:
    """Reload every report (each checked line by line against report.json)."""
    runs = []
    for path in paths:
        report = load_report(path)
        runs.append(RunView(path, report.header, report.cases, report.footer, Path(path).resolve().parent))
    return runs


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if not args.check:  # the one output policy, before any work (`reference.atomic.check_new_output`)
        try:
            check_new_output(args.html, force=args.force)
        except OutputError as exc:
            err.write(f"sessionspec report: {exc}\n")
            return 2
    try:
        runs = load_runs(args.reports)
    except InvalidReport as exc:
        text = str(exc)
        if len(text) > _MAX_ERROR:
            text = text[:_MAX_ERROR] + "…"
        err.write(f"sessionspec report: {text}\n")
        return 2
    page = render_html(runs)
    target = Path(args.html)
    if args.check:
        current = read_text(target)[0] or ""
        if current == page:
            out.write(f"{target} is up to date\n")
            return 0
        out.writelines(difflib.unified_diff(current.splitlines(keepends=True)[:5_000],
                                            page.splitlines(keepends=True)[:5_000],
                                            f"{target} (on disk)", f"{target} (generated)", n=1))
        err.write(f"sessionspec report: {target} is stale; regenerate it with "
                  f"`sessionspec report {' '.join(args.reports)} --html {target} --force`\n")
        return 1
    try:
        atomic_write_text(target, page, force=args.force)
    except OSError as exc:
        err.write(f"sessionspec report: {exc}\n")
        return 2
    full, listed = page.count('<li class="case"'), page.count('<li class="case listed"')
    failing = sum(1 for run in runs for case in run.cases if case.get("outcome") in PROBLEM_VIEW)
    more = f", {listed:,} by one line, {failing - full - listed:,} left to the JSONL report" if full < failing else ""
    out.write(f"wrote {target}: {len(runs)} run(s), {failing:,} failing case(s), {full:,} shown in full{more}\n")
    return 0
