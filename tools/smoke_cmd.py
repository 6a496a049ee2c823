"""A ten-second check that an adapter is wired right, before running the whole suite.

Starts the adapter (COMMAND, split like a shell would), checks its `start` handshake, then sends one
case per operation it claims (the op's capability is among its `capabilities`): the smallest vector
of that op for the revision it declares. For each op it prints ok, or what went wrong and what is
likely miswired (the adapter exits, prints non-JSON on stdout, answers the wrong seq, does not
flush, claims an op it does not serve, decodes arguments wrongly). It stops trying further ops
after ten seconds of the adapter's time. Exit status: 0 every claimed op answered as the spec requires, 1 some op did not
(or the budget ran out), 2 the adapter cannot start or its handshake is wrong, or a usage error.

example:
  sessionspec smoke --impl "node adapter.js"
"""

from __future__ import annotations

import argparse
import time
from typing import TextIO

from sessionspec.conformance import cases as cases_mod
from sessionspec.conformance.harness import StartupFailed, adapters_end_on_signals, connector_for
from sessionspec.conformance.runner import start_implementation
from sessionspec.conformance.smoke import BUDGET_SECONDS, check_ops, pick_cases, startup_advice
from sessionspec.reference.json_text import display


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--impl", metavar="COMMAND", required=True, help="adapter command line")
    parser.add_argument("--timeout", metavar="SECONDS", type=float, default=5.0,
                        help="per-request timeout (default: %(default)s)")
    parser.add_argument("--revision", metavar="R", help="format revision whose vectors to use (default: the declared one)")


def _lines(text: str, indent: str) -> str:
    """Multi-line text (an adapter's stderr tail) as indented, escaped lines: none can pass for output of ours."""
    return "".join(f"{indent}{display(part)}\n" for part in text.split("\n")[:12])


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if args.timeout <= 0:
        err.write("sessionspec smoke: --timeout must be > 0\n")
        return 2
    with adapters_end_on_signals():
        return _run(args, out, err)


def _run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from sessionspec.spec.revisions import UnknownRevision, resolve_revision

    try:
        # Before the adapter starts (the budget is the adapter's time), and unchecked: only the cases
        # picked are schema-checked (a few dozen, not the corpus's thousand; seconds on a loaded machine).
        unchecked = cases_mod.unchecked_corpus()
        connect = connector_for(args.impl)
    except (cases_mod.CaseFileError, ValueError, OSError) as exc:
        err.write(f"sessionspec smoke: {exc}\n")
        return 2
    began = time.monotonic()
    out.write(f"sessionspec smoke: {display(args.impl)}\n")
    try:
        impl = start_implementation(connect, args.timeout)
    except StartupFailed as exc:
        out.write("  handshake: FAILED\n" + _lines(str(exc), "    "))
        out.write(f"  advice: {startup_advice(str(exc))}\n")
        out.write("FAILED: the adapter cannot start; see conformance/WRITING_AN_ADAPTER.md\n")
        return 2
    try:
        info = impl.info
        declared = info.get("specRevision")
        try:
            revision = resolve_revision(args.revision if args.revision is not None else declared)
        except UnknownRevision as exc:
            out.write(f"  handshake: FAILED: spec revision {display(repr(declared))}: {display(exc.message)}\n")
            out.write("  advice: declare specRevision as a revision id or npm release of spec/revisions.json\n")
            return 2
        corpus = cases_mod.for_revision(unchecked, revision.id)
        layouts = cases_mod.sqlite_layouts([revision.id])
        declared_layout = info.get("sqliteLayout")
        layout: int = declared_layout if isinstance(declared_layout, int) and declared_layout in layouts else layouts[0]
        corpus = cases_mod.for_sqlite_layout(corpus, layout)
        who = info.get("implementation") or {}
        out.write(display(f"  handshake: ok: {who.get('name', '?')} {who.get('version', '')} "
                          f"({who.get('language', '?')}), spec revision {revision.id}, "
                          f"{len(impl.capabilities)} capabilities") + "\n")
        picking = time.monotonic()
        try:
            chosen = {op: cases_mod.checked(case) if case is not None else None
                      for op, case in pick_cases(corpus, impl.capabilities, impl.limits).items()}
        except cases_mod.CaseFileError as exc:
            err.write(display(f"sessionspec smoke: {exc}") + "\n")
            return 2
        if not chosen:
            out.write("  advice: the adapter claims no capability: list the ops it serves in `capabilities`\n")
            out.write("FAILED: nothing to check\n")
            return 1
        # The picks' checks are our time, not the adapter's: the budget starts again after them.
        checks = check_ops(impl, chosen, budget=BUDGET_SECONDS, started=began + time.monotonic() - picking)
    finally:
        impl.close()
    width = max(len(c.op) for c in checks)
    for c in checks:
        label = "ok" if c.outcome == "passed" else c.outcome.upper() if c.outcome != "no-case" else "no case"
        about = f"[{c.case.id}] {c.case.description}" if c.case is not None else c.message
        out.write(display(f"  {c.op:<{width}}  {label:<8} {about}") + (f" ({c.seconds:.2f} s)" if c.case else "") + "\n")
        if not c.wired:
            out.write(_lines(c.message, " " * (width + 14)))
            if c.advice:
                out.write(f"{' ' * (width + 14)}advice: {display(c.advice)}\n")
    bad = [c for c in checks if not c.wired]
    seconds = time.monotonic() - began
    if bad:
        out.write(f"FAILED: {len(bad)} of {len(checks)} claimed op(s) miswired or wrong in {seconds:.1f} s: "
                  f"{', '.join(c.op for c in bad)}\n")
        return 1
    out.write(f"OK: the adapter is wired right: {len(checks)} claimed op(s) answered as the spec requires in "
              f"{seconds:.1f} s; now run `sessionspec conformance --impl ...`\n")
    return 0
