"""List every requirement of the spec with the vectors and properties that cover it.

A vector covers the requirements its case names; a property is a state-machine
rule of `sessionspec conformance --fuzz` (when installed) that declares the
requirements it checks. A requirement the adapter protocol cannot observe is
classified in spec/requirements.json ("observability": api or unreachable)
and shown as api-level: each implementation verifies it with its own tests
(in this project: tests/reference). With --check the exit status is 1 when a
MUST requirement has no vector, no property and no such classification, or
when a classified requirement also has a vector or property (the
classification would then hide a gap).

With --revision, the requirements of that format revision (an id such as
b150a551b8, or a release such as 0.1.1-rc.2) are listed and checked, against
the vectors that apply to it.

example:
  sessionspec requirements --check --uncovered
  sessionspec requirements --revision 0.1.1-rc.2 --check
"""

from __future__ import annotations

import argparse
import json
from typing import TextIO

from sessionspec.conformance.cases import CaseFileError, for_revision, load_corpus
from sessionspec.conformance.coverage import RequirementCoverage, coverage, load_requirements
from sessionspec.conformance.fuzz import property_coverage

_OWN_TESTS = "verified by the implementation's own tests (in this project: tests/reference)"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--check", action="store_true",
                        help="exit 1 when a MUST requirement has no vector, no property and no api-level classification")
    parser.add_argument("--uncovered", action="store_true", help="list only requirements nothing accounts for")
    parser.add_argument("--json", action="store_true", help="print JSON (one object per requirement) instead of text")
    parser.add_argument("--revision", metavar="R", default=None,
                        help="format revision (id or npm release); default: the pinned revision")


def _cover_text(r: RequirementCoverage) -> str:
    cover = []
    if r.vectors:
        cover.append(f"{len(r.vectors)} vector(s)")
    if r.properties:
        cover.append("properties: " + ", ".join(r.properties))
    if r.observability == "api":
        cover.append(f"api-level: {_OWN_TESTS}")
    elif r.observability is not None:
        cover.append(f"{r.observability} through the public API: {_OWN_TESTS}")
    return "; ".join(cover) or "NOT COVERED"


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from sessionspec.spec.revisions import UnknownRevision, known_revisions

    try:
        requirements = load_requirements(args.revision)
    except UnknownRevision as exc:
        err.write(f"sessionspec requirements: {exc}\n")
        return 2
    try:
        known = {r["id"] for r in requirements}
        cases = for_revision(load_corpus(), args.revision)  # the corpus is parsed once per process
        unknown = next(((c, r) for c in cases for r in c.requirements if r not in known), None)
        if unknown is not None:
            raise ValueError(f"{unknown[0].source}: case {unknown[0].id} names unknown requirement {unknown[1]}")
        rows = coverage(requirements, cases, property_coverage())
    except (CaseFileError, OSError, KeyError, ValueError) as exc:
        err.write(f"sessionspec requirements: {exc}\n")
        return 2
    shown = [r for r in rows if not (args.uncovered and r.accounted)]
    every = set(known_revisions())  # a requirement binding a subset of them says which
    if args.json:
        out.write(json.dumps([r.to_json() for r in shown], indent=1) + "\n")
    else:
        for r in shown:
            binds = f"  (revisions: {', '.join(r.revisions)})" if set(r.revisions) != every else ""
            out.write(f"{r.id:<10} {r.level:<6} {r.title}  [{_cover_text(r)}]{binds}\n")
            if r.vectors and not args.uncovered:
                out.write(f"{'':17}{' '.join(r.vectors[:6])}{' ...' if len(r.vectors) > 6 else ''}\n")
            elif r.observability is not None and not r.covered and not args.uncovered:
                out.write(f"{'':17}{r.why}\n")
    missing = [r.id for r in rows if r.gap]
    wrong = [r.id for r in rows if r.misclassified]
    covered = sum(1 for r in rows if r.covered)
    api = sum(1 for r in rows if r.observability is not None and not r.covered)
    err.write(f"{covered} of {len(rows)} requirements covered by vectors or properties, {api} api-level; "
              f"{len(missing)} MUST requirement(s) uncovered\n")
    status = 0
    if args.check and missing:
        err.write("uncovered MUST requirements: " + ", ".join(missing) + "\n")
        status = 1
    if args.check and wrong:
        err.write("classified as not protocol-observable but covered (remove their \"observability\"): "
                  + ", ".join(wrong) + "\n")
        status = 1
    return status
