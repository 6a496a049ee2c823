"""The packaged vector corpus itself: well-formed, honest about coverage, portable, and passed by the reference.

The corpus is reviewed data (``conformance/vectors/*.json``). These tests keep
it that way: every file fits the case-file schema, every id is the content
hash of its case, descriptions are unique and read as statements of
behaviour, every requirement a case names exists, every rejection rule has a
case that expects its code, no case leans on a value the JSON protocol cannot
carry the same way in every language (PROTOCOL.md §9), and the reference
passes every case. Requirements that no protocol operation can observe are
the ones spec/requirements.json classifies (``observability``), so
``sessionspec requirements`` stays exact.
"""

from __future__ import annotations

import io
import re
from collections import Counter
from collections.abc import Iterator
from functools import cache
from importlib import resources
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from sessionspec import cli
from sessionspec.conformance import nesting, protocol, wire
from sessionspec.conformance.cases import Case, case_id, for_revision, for_sqlite_layout, load_corpus, sqlite_layouts
from sessionspec.conformance.coverage import load_requirements
from sessionspec.conformance.fuzz import property_coverage
from sessionspec.conformance.harness import InProcessConnection
from sessionspec.conformance.runner import run_cases
from sessionspec.spec import load_spec
from sessionspec.spec.revisions import known_revisions

MAX_SAFE = 2**53 - 1

# Requirements no protocol operation can observe, with the reason: the ones
# spec/requirements.json classifies ("observability": api or unreachable).
# Each is tested against the Python API in tests/reference
# (tests/conformance/test_requirements_coverage.py pins the set and checks that).
NOT_PROTOCOL_OBSERVABLE: dict[str, str] = {
    r["id"]: r["observability"]["why"] for r in load_requirements() if "observability" in r
}

# Rejection rules with no protocol-expressible violation, with the reason.
NO_REJECTION_CASE: dict[str, str] = {
    "JSON-3": "JSON text carries only the accepted types; the rule's one observable clause (the project's read-only "
              "views are accepted) is checked by the fork cases that seed a child from its source's events",
    "JSON-13": "a request cannot carry NaN or Infinity for a writer to refuse; its round-trip clause has a positive case",
}

# (rejection rule, code) pairs no case can expect, with the reason.
UNREACHABLE_CODES: dict[tuple[str, str], str] = {
    **{(rule, "JSON_NOT_LOSSLESS"): "json-value reports a boolean; the snapshot's own error code is API-only"
       for rule in ("JSON-1", "JSON-2", "JSON-3", "JSON-4", "JSON-5", "JSON-8")},
    ("JSON-12", "JSON_TEXT_INVALID"): "strict parsing is observed through jsonl-read (bad header, holes), not the parser's code",
    ("JSON-13", "JSON_TEXT_INVALID"): "a request cannot carry NaN or Infinity for a writer to refuse",
    ("SEED-16", "INV_SEQ_NOT_INCREASING"): "seed seqs are contiguous (SEED-9), so the replayed checker never sees a decrease",
    ("FORK-7", "INVALID_BOUNDARY"): NOT_PROTOCOL_OBSERVABLE["FORK-7"],
    ("JSONL-12", "JSONL_OPEN_TURN"): "jsonl-load has no live session whose turn could be open",
    ("SQLITE-1", "SQLITE_NOT_DATABASE"): "sqlite-read builds its file with SQL, so it is always a database; "
                                         "other files are checked in tests/reference and tests/cli",
    **{("SQLITE-8", code): NOT_PROTOCOL_OBSERVABLE["SQLITE-8"] for code in ("SQLITE_READ_ONLY", "SQLITE_LOCKED")},
}

# Cases holding an integral float on purpose: the expected reply is the same
# whether a language reads the number as a float or as an integer.
INTEGRAL_FLOAT_ALLOWED = {
    "dbf5a1bee7bfae94": "JSON-2: 0.0 and 0 are both accepted, so reading 0.0 as 0 changes nothing",
}

# Pairs of cases that must expect the same result (replay equivalence).
SAME_RESULT_PAIRS = [
    ("the balanced two-turn log derives its messages and per-event projections from a seed",
     "the balanced two-turn log appended live derives the same messages as when seeded"),
]
SAME_EVENTS_PAIRS = [
    ("a packed artifact reads as the events it packs", "the same events stored unpacked read identically"),
]

_DESCRIPTION_FORBIDDEN = re.compile(r"\bshould\b|\b(tests?|checks?|verif(y|ies)) that\b", re.IGNORECASE)


@cache
def _files() -> dict[str, Any]:
    root = resources.files("sessionspec.conformance").joinpath("vectors")
    # what each file stands for: nest forms expanded, as the loader reads it
    return {f.name: nesting.expand(wire.loads(f.read_text(encoding="utf-8"))) for f in root.iterdir() if f.name.endswith(".json")}


REVISIONS = known_revisions()


@cache
def _requirements(revision: str | None = None) -> dict[str, dict[str, Any]]:
    """The requirements of one revision; without one, of every revision (a later text wins)."""
    if revision is not None:
        return {r["id"]: r for r in load_requirements(revision)}
    merged: dict[str, dict[str, Any]] = {}
    for rid in REVISIONS:
        merged.update(_requirements(rid))
    return merged


@cache
def _corpus() -> tuple[Case, ...]:
    return tuple(load_corpus(known_requirements=_requirements()))


@cache
def _revision_corpus(revision: str) -> tuple[Case, ...]:
    return tuple(for_revision(_corpus(), revision))


@cache
def _error_codes() -> frozenset[str]:
    return frozenset(code for rid in REVISIONS for code in load_spec(revision=rid).error_codes)


def _walk(value: Any) -> Iterator[Any]:
    """Every value inside ``value`` (iteratively: payloads nest 10,000 deep)."""
    stack = [value]
    while stack:
        item = stack.pop()
        yield item
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def _rejection_codes(case: Case) -> set[str]:
    """Codes a case expects: its rejection, or rejections recorded in a store trace."""
    rejected = case.expect.get("rejected")
    if rejected is not None:
        return {rejected["code"]} if "code" in rejected else set()
    if case.op in ("store", "persistence"):
        return {t["rejected"]["code"] for t in case.expect["result"]["trace"] if "rejected" in t}
    return set()


def test_every_vector_file_fits_the_case_file_schema() -> None:
    schema = protocol.schema_registry().contents(protocol.SCHEMA_BASE + "case-file.json")
    validator = Draft202012Validator(schema, registry=protocol.schema_registry())
    assert len(_files()) >= 15
    for name, data in _files().items():
        errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message[:200]}" for e in validator.iter_errors(data)]
        assert not errors, f"{name}: {errors[:3]}"
        assert data["area"] == name.removesuffix(".json")


def test_ids_are_unique_and_equal_their_content_hash() -> None:
    ids = Counter()
    for name, data in _files().items():
        for i, raw in enumerate(data["cases"]):
            assert raw["id"] == case_id(raw), f"{name}#/cases/{i}: stale id"
            ids[raw["id"]] += 1
    assert [i for i, n in ids.items() if n > 1] == []
    assert sum(ids.values()) == len(_corpus())


@pytest.mark.parametrize("revision", REVISIONS)
def test_descriptions_are_unique_statements_of_behaviour(revision: str) -> None:
    seen: dict[str, str] = {}
    for case in _revision_corpus(revision):
        d = case.description
        where = f"{case.source}: {d!r}"
        assert 0 < len(d) <= 150, where
        assert d == d.strip() and "  " not in d and not d.endswith("."), where
        assert d[0].islower() or d[0].isdigit(), f"{where}: start with a lower-case word"
        assert not _DESCRIPTION_FORBIDDEN.search(d), f"{where}: state the behaviour, not the test"
        assert d not in seen, f"{where} duplicates {seen.get(d)}"
        seen[d] = case.source


def test_requirements_exist_and_the_level_follows_them() -> None:
    reqs = _requirements()
    for case in _corpus():
        assert case.requirements and all(r in reqs for r in case.requirements), case.source
        must = any(reqs[r]["level"] == "MUST" for r in case.requirements)
        assert case.level == ("MUST" if must else "SHOULD"), f"{case.source}: level {case.level}"


def _script_steps(script: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    stack = list(script)
    while stack:
        step = stack.pop()
        yield step
        stack.extend(step.get("actions", ()))


def _needed_capability(case: Case) -> str:
    """The one capability a case must declare besides its op's (PROTOCOL.md §3)."""
    if case.op in ("load", "append") and case.args.get("invariants"):
        return "invariants"
    if case.op == "oob" and "admit" in case.args and "rejected" in case.expect:
        return "oob-admission"  # a refusal of the run-time registry; a positive case's admit is a no-op for TypeScript
    if case.op == "store":
        step_capability = {"fork": "fork", "oob": "out-of-band", "install-invariants": "invariants"}
        steps = list(_script_steps(case.args["script"]))
        extra = {step_capability[s["do"]] for s in steps if s["do"] in step_capability}
        extra |= {"scopes" for s in steps if "scope" in s}
        assert len(extra) <= 1, f"{case.source}: a case can declare one extra capability"
        if extra:
            return extra.pop()
    if case.op == "persistence":
        return f"persistence-{case.args['backend']}"
    return protocol.OPS[case.op].capability or "load"


def test_each_case_claims_the_capability_it_needs() -> None:
    for case in _corpus():
        needed = _needed_capability(case)
        assert case.capability in protocol.CAPABILITIES, case.source
        if case.capability == "oob-admission" and needed in ("out-of-band", "store-lifecycle"):
            continue  # a case about run-time admission (DEC-8); claiming it implies out-of-band appends
        assert case.capability == needed, f"{case.source}: declares {case.capability}, needs {needed}"


def test_rejections_name_a_known_code_and_results_are_not_errors() -> None:
    known = _error_codes() | {"SCRIPTED"}
    for case in _corpus():
        rejected = case.expect.get("rejected")
        if rejected is not None:
            assert "code" in rejected, f"{case.source}: a rejection case must name its code"
            assert "phase" not in rejected, f"{case.source}: cases never expect a setup rejection"
        for code in _rejection_codes(case):
            assert code in known, f"{case.source}: unknown code {code}"


@pytest.mark.parametrize("revision", REVISIONS)
def test_every_rejection_rule_has_a_case_expecting_each_of_its_codes(revision: str) -> None:
    by_req: dict[str, list[Case]] = {}
    for case in _revision_corpus(revision):
        for r in case.requirements:
            by_req.setdefault(r, []).append(case)
    missing_rules, missing_codes = [], set()
    for rid, req in _requirements(revision).items():
        if req.get("kind") != "rejection":
            continue
        cases = by_req.get(rid, [])
        targeted = [c for c in cases if _rejection_codes(c) or c.expect.get("result") == {"isJsonValue": False}]
        if not targeted and rid not in NOT_PROTOCOL_OBSERVABLE and rid not in NO_REJECTION_CASE:
            missing_rules.append(rid)
        seen = set().union(*(_rejection_codes(c) for c in cases)) if cases else set()
        missing_codes |= {(rid, code) for code in req.get("codes", ()) if code not in seen}
    assert missing_rules == []
    stale = [r for r in NO_REJECTION_CASE if any(_rejection_codes(c) for c in by_req.get(r, []))]
    assert stale == [], "these rules now have rejection cases: remove them from NO_REJECTION_CASE"
    # the documented gaps must be exactly the real ones, so the list cannot go stale
    assert missing_codes - set(UNREACHABLE_CODES) == set()
    ours = {gap for gap in UNREACHABLE_CODES if gap[0] in _requirements(revision)}
    assert ours - missing_codes == set()


@pytest.mark.parametrize("revision", REVISIONS)
def test_must_requirements_are_covered_except_the_documented_api_only_ones(revision: str) -> None:
    properties = property_coverage()
    vectored = {r for c in _revision_corpus(revision) for r in c.requirements}
    covered = vectored | {r for reqs in properties.values() for r in reqs}
    reqs = _requirements(revision)
    uncovered = {rid for rid, r in reqs.items() if r["level"] == "MUST" and rid not in covered}
    documented = set(NOT_PROTOCOL_OBSERVABLE) & set(reqs)
    assert uncovered - documented == set(), "a MUST requirement lost its vectors"
    assert documented & covered == set(), "now covered: remove its \"observability\" from spec/requirements.json"
    # the CLI agrees: --check passes exactly because every gap is a documented one
    out, err = io.StringIO(), io.StringIO()
    code = cli.run(["requirements", "--check", "--revision", revision], out, err)
    assert code == 0, err.getvalue()


def test_no_case_relies_on_a_portability_hazard() -> None:
    for case in _corpus():
        where = f"{case.source}: {case.description!r}"
        if case.op == "fork":
            assert "boundary" not in case.args or case.args["boundary"] is not None, f"{where}: null boundary"
        for value in _walk({"args": case.args, "expect": case.expect}):
            if type(value) is int:
                assert abs(value) <= 2**53, f"{where}: {value} is not exact in every language"
            elif type(value) is float and value.is_integer() and str(value) != "-0.0":
                assert case.id in INTEGRAL_FLOAT_ALLOWED, f"{where}: {value} reads as an integer in JavaScript"


@pytest.mark.parametrize(("seeded", "live"), SAME_RESULT_PAIRS)
def test_replay_pairs_expect_the_same_result(seeded: str, live: str) -> None:
    by_description = {c.description: c for c in _revision_corpus(REVISIONS[0])}
    assert by_description[seeded].expect == by_description[live].expect


@pytest.mark.parametrize(("packed", "plain"), SAME_EVENTS_PAIRS)
def test_reading_pairs_expect_the_same_events(packed: str, plain: str) -> None:
    by_description = {c.description: c for c in _revision_corpus(REVISIONS[0])}
    a, b = by_description[packed].expect["result"], by_description[plain].expect["result"]
    assert (a["header"], a["events"]) == (b["header"], b["events"])


@pytest.mark.parametrize("revision", REVISIONS)
@pytest.mark.parametrize("area", sorted(name.removesuffix(".json") for name in _files()))
def test_the_reference_passes_every_vector_in_process(area: str, revision: str) -> None:
    """Every case of every revision, the reference serving that revision; a case of one SQLite layout with the
    reference's backend at that layout (the revision's own, and each of its published layouts)."""
    cases = [c for c in _revision_corpus(revision) if c.area == area]
    own, *others = sqlite_layouts([revision])
    runs = [(own, for_sqlite_layout(cases, own))]
    runs += [(layout, [c for c in for_sqlite_layout(cases, layout) if c.sqlite_layouts]) for layout in others]
    assert {c.id for _, chosen in runs for c in chosen} == {c.id for c in cases}  # every case runs at some layout
    for layout, chosen in runs:
        run = run_cases(chosen, lambda layout=layout: InProcessConnection(revision=revision, sqlite_layout=layout))
        failing = [f"{r.case.id} {r.case.description}: {r.outcome}: {r.message}" for r in run.results
                   if r.outcome != "passed"]
        assert failing == []
        assert len(run.results) == len(chosen)
