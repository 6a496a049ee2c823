"""Summarise saved conformance runs (JSONL reports of `sessionspec conformance --report`).

--format text (default) prints per run its verdict, counts per area and the problem cases with what
went wrong; markdown prints a GitHub-flavoured page for a job summary (append it to
$GITHUB_STEP_SUMMARY); github prints one workflow command (`::error` / `::warning`) per problem case,
which GitHub Actions shows as an annotation. Text from the reports is escaped for each form.
Exit status: 0 when every run passed, 1 when some run failed (its footer's exit code), 2 when a
report cannot be read or does not follow spec/protocol/report.json (the message names the file and line).

example:
  sessionspec summary run.jsonl
  sessionspec summary run.jsonl --format markdown >> "$GITHUB_STEP_SUMMARY"
  sessionspec summary run.jsonl --format github
"""

from __future__ import annotations

import argparse
from typing import TextIO

from sessionspec.conformance.report import InvalidReport, load_report
from sessionspec.conformance.run_summary import SavedRun, render_github, render_markdown, render_text, run_failed
from sessionspec.reference.json_text import display

_MAX_ERROR = 1_000
_RENDER = {"text": render_text, "markdown": render_markdown, "github": render_github}


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("reports", metavar="RUN.jsonl", nargs="+", help="JSONL report of a run (in the order shown)")
    parser.add_argument("--format", choices=tuple(_RENDER), default="text", help="output form (default: %(default)s)")


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    runs = []
    for path in args.reports:
        try:
            report = load_report(path)
        except InvalidReport as exc:
            text = str(exc)
            err.write(f"sessionspec summary: {display(text[:_MAX_ERROR] + ('…' if len(text) > _MAX_ERROR else ''))}\n")
            return 2
        runs.append(SavedRun(path, report.header, report.cases, report.footer))
    out.write(_RENDER[args.format](runs))
    return 1 if any(run_failed(r) for r in runs) else 0
