"""A rule that binds both format revisions is checked at both.

A case tagged for one revision says nothing about an implementation of the
other: when every case of a rule is tagged for 2f74ac98ba, an implementation
of the published revision can break the rule and pass (issue #28: APPEND-4,
REQ-3 and INV-7). Spec data (the requirements each revision has, whom they
bind) and the packaged vectors decide; nothing here lists rules by hand
except the reviewed exceptions below.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pytest
from sessionspec.conformance.cases import Case, load_corpus
from sessionspec.conformance.coverage import load_requirements
from sessionspec.spec.revisions import known_revisions

# Changing this dict is a reviewed decision: requirement id -> why it may go
# without a case at one of the revisions it binds. Empty: every binding rule
# has a case at every revision.
EXCEPTIONS: dict[str, str] = {}

# Case id -> why a single-revision case of the rules below has no counterpart.
CASE_EXCEPTIONS: dict[str, str] = {
    "dcabb0a72d4f6ead": "the first tool-result block of a message exists only in the published message shape",
}


def _requirements() -> dict[str, dict[str, dict[str, Any]]]:
    return {rev: {r["id"]: r for r in load_requirements(rev)} for rev in known_revisions()}


def _binds_implementations(entries: Iterable[dict[str, Any]]) -> bool:
    """Binds something besides the project's read-only validator, and the protocol can observe it."""
    entries = list(entries)
    binds = {b for r in entries for b in r.get("binds", ())}
    return bool(binds - {"validator"}) and not any("observability" in r for r in entries)


def _at(cases: list[Case], revision: str, ids: frozenset[str], requirement: str) -> list[Case]:
    return [c for c in cases if requirement in c.requirements and c.applies_to(revision, ids)]


def test_every_binding_requirement_of_several_revisions_has_a_case_at_each():
    reqs = _requirements()
    cases = load_corpus()
    revisions = list(reqs)
    assert len(revisions) >= 2
    shared = set.intersection(*(set(reqs[rev]) for rev in revisions))
    missing = []
    for rid in sorted(shared):
        if not _binds_implementations(reqs[rev][rid] for rev in revisions) or rid in EXCEPTIONS:
            continue
        for rev in revisions:
            if not _at(cases, rev, frozenset(reqs[rev]), rid):
                missing.append(f"{rid} has no case applying at {rev}")
    assert missing == [], "\n".join(missing)


def test_exceptions_name_shared_binding_requirements_and_say_why():
    reqs = _requirements()
    shared = set.intersection(*(set(r) for r in reqs.values()))
    for rid, why in EXCEPTIONS.items():
        assert rid in shared and why.strip(), rid
    ids = {c.id for c in load_corpus()}
    for cid, why in CASE_EXCEPTIONS.items():
        assert cid in ids and why.strip(), cid


@pytest.mark.parametrize("rid", ["APPEND-4", "REQ-3", "INV-7"])
def test_a_violation_case_of_one_revision_has_its_counterpart_at_the_other(rid):
    """The clauses #28 found checked at 2f74ac98ba only: each single-revision case of
    these rules has a case of the same description at every other revision."""
    reqs = _requirements()
    cases = load_corpus()
    lonely = []
    for case in cases:
        if rid not in case.requirements or case.revisions is None or case.id in CASE_EXCEPTIONS:
            continue
        for rev in reqs:
            if rev in case.revisions:
                continue
            ids = frozenset(reqs[rev])
            if not any(c.description == case.description for c in _at(cases, rev, ids, rid)):
                lonely.append(f"{case.id} ({case.description}) has no counterpart at {rev}")
    assert lonely == [], "\n".join(lonely)
