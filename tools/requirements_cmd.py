"""List every requirement of the spec with the vectors and properties that cover it.

A vector covers the requirements its case names; a property is a state-machine
rule of `sessionspec conformance --fuzz` (when installed) that declares the
requirements it checks. With --check the exit status is 1 when any MUST
requirement has neither.

example:
  sessionspec requirements --check --uncovered
"""

from __future__ import annotations

import argparse
import json
from typing import TextIO

from sessionspec.conformance.cases import CaseFileError, load_corpus
from sessionspec.conformance.coverage import coverage, load_requirements
from sessionspec.conformance.fuzz import property_coverage


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--check", action="store_true", help="exit 1 when a MUST requirement has no vector and no property")
    parser.add_argument("--uncovered", action="store_true", help="list only requirements nothing covers")
    parser.add_argument("--json", action="store_true", help="print JSON (one object per requirement) instead of text")


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    try:
        requirements = load_requirements()
        known = [r["id"] for r in requirements]
        rows = coverage(requirements, load_corpus(known_requirements=known), property_coverage())
    except (CaseFileError, OSError, KeyError, ValueError) as exc:
        err.write(f"sessionspec requirements: {exc}\n")
        return 2
    shown = [r for r in rows if not (args.uncovered and r.covered)]
    if args.json:
        out.write(json.dumps([r.to_json() for r in shown], indent=1) + "\n")
    else:
        for r in shown:
            cover = []
            if r.vectors:
                cover.append(f"{len(r.vectors)} vector(s)")
            if r.properties:
                cover.append("properties: " + ", ".join(r.properties))
            out.write(f"{r.id:<10} {r.level:<6} {r.title}  [{'; '.join(cover) or 'NOT COVERED'}]\n")
            if r.vectors and not args.uncovered:
                out.write(f"{'':17}{' '.join(r.vectors[:6])}{' ...' if len(r.vectors) > 6 else ''}\n")
    missing = [r.id for r in rows if r.level == "MUST" and not r.covered]
    covered = sum(1 for r in rows if r.covered)
    err.write(f"{covered} of {len(rows)} requirements covered; {len(missing)} MUST requirement(s) uncovered\n")
    if args.check and missing:
        err.write("uncovered MUST requirements: " + ", ".join(missing) + "\n")
        return 1
    return 0
