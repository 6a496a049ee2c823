"""Re-run a saved trace (requests with expected replies) against an implementation.

TRACE is a JSONL file written by a failing state machine (--fuzz) or by
`sessionspec conformance --trace`. Every step is sent to the adapter (the
in-process reference without --impl) and its reply compared with the
expected one. Exit status: 0 when every step now matches, 1 when some step
still differs or errors, 2 when the trace or the adapter cannot be used.

example:
  sessionspec replay .sessionspec/traces/surface-1.jsonl --impl "node adapter.js"
"""

from __future__ import annotations

import argparse
from typing import TextIO

from sessionspec.conformance.harness import StartupFailed, adapters_end_on_signals, connector_for
from sessionspec.conformance.runner import start_implementation
from sessionspec.conformance.trace import TraceError, read_trace, replay


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("trace", metavar="TRACE", help="trace file (JSONL)")
    parser.add_argument("--impl", metavar="COMMAND", help="adapter command line (default: the reference, in-process)")
    parser.add_argument("--timeout", metavar="SECONDS", type=float, default=30.0, help="per-request timeout")


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    with adapters_end_on_signals():
        return _run(args, out, err)


def _run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    try:
        header, steps = read_trace(args.trace)
    except TraceError as exc:
        err.write(f"sessionspec replay: {exc}\n")
        return 2
    try:
        impl = start_implementation(connector_for(args.impl), args.timeout)
    except (StartupFailed, ValueError) as exc:
        err.write(f"sessionspec replay: the adapter could not start: {exc}\n")
        return 2
    with impl:
        outcomes = replay(impl, steps)
    bad = 0
    if header.get("description"):
        out.write(f"trace: {header['description']}\n")
    for number, (step, _reply, verdict) in enumerate(outcomes, 1):
        note = f"  ({step.note})" if step.note else ""
        out.write(f"step {number} {step.op}: {verdict.outcome}{note}\n")
        if verdict.outcome != "passed":
            bad += verdict.outcome in ("failed", "crashed", "errored")
            if verdict.message:
                out.write(f"  {verdict.message}\n")
            out.writelines(f"    {d.render()}\n" for d in verdict.differences)
    out.write(f"{len(outcomes) - bad} of {len(outcomes)} steps match the expected replies ({impl.name})\n")
    return 1 if bad else 0
