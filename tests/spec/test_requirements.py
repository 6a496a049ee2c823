"""Self-checks of `spec/requirements.json`, the machine-readable rule catalogue.

The expected counts below are copied from the behaviour notes (behaviours.md at
revision 2f74ac98ba) so that a dropped or duplicated rule fails here rather
than silently shrinking every report that links to the requirement ids.
"""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from spec_data import load_spec_json as _load

# Rules per family in specification order (221 in total): behaviours.md, then the storage backends (storage.md), then live persistence.
EXPECTED_COUNTS: dict[str, int] = {
    "JSON": 14,
    "APPEND": 15,
    "SEED": 16,
    "HDR": 12,
    "SURF": 16,
    "DERIVE": 12,
    "REQ": 8,
    "STORE": 16,
    "OOB": 11,
    "FORK": 12,
    "FIND": 4,
    "CHUNK": 16,
    "REPAIR": 12,
    "JSONL": 12,
    "INV": 13,
    "ZSTD": 7,
    "SQLITE": 9,
    "PERSIST": 12,
    "LIVE": 5,
}
ID_RE = re.compile(r"^([A-Z]+)-([1-9][0-9]*)$")
# A rule id mentioned in prose, e.g. "SURF-5" or the ends of "SEED-5…SEED-7".
MENTION_RE = re.compile(r"\b(" + "|".join(EXPECTED_COUNTS) + r"|DEC)-([0-9]+)\b")


@pytest.fixture(scope="module")
def doc() -> dict[str, Any]:
    return _load("requirements.json")


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    return _load("schemas", "meta", "requirements.json")


@pytest.fixture(scope="module")
def reqs(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return doc["requirements"]


@pytest.fixture(scope="module")
def error_codes() -> set[str]:
    return {e["code"] for e in _load("errors.json")["errors"]}


def _errors(schema: dict[str, Any], instance: Any) -> list[str]:
    return [e.message for e in Draft202012Validator(schema).iter_errors(instance)]


def test_schema_is_valid_draft_2020_12(schema: dict[str, Any]) -> None:
    Draft202012Validator.check_schema(schema)
    assert schema["$id"] == "https://sessionspec.dev/schema/meta/requirements.json"
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"


def test_requirements_file_validates_against_schema(doc: dict[str, Any], schema: dict[str, Any]) -> None:
    assert _errors(schema, doc) == []
    assert doc["$schema"] == schema["$id"]
    assert doc["revision"] == "2f74ac98ba"


@pytest.mark.parametrize(
    ("mutate", "why"),
    [
        (lambda r: r.pop("codes"), "rejection without codes"),
        (lambda r: r.update(kind="behaviour"), "behaviour with codes"),
        (lambda r: r.update(binds=["writer", "parser"]), "unknown bind"),
        (lambda r: r.update(level="MAY"), "unknown level"),
        (lambda r: r.update(id="SURF-05"), "zero-padded id"),
        (lambda r: r.update(source=["S003 section 7"]), "malformed source"),
        (lambda r: r.update(decisions=[]), "empty decisions list"),
        (lambda r: r.update(extra=True), "unknown key"),
    ],
)
def test_schema_rejects_malformed_requirement(
    doc: dict[str, Any], schema: dict[str, Any], mutate: Any, why: str
) -> None:
    """The schema is not vacuous: each mutation of a valid rejection rule (SURF-5) fails."""
    bad = copy.deepcopy(doc)
    target = next(r for r in bad["requirements"] if r["id"] == "SURF-5")
    mutate(target)
    assert _errors(schema, bad), why


def test_ids_unique_and_well_formed(reqs: list[dict[str, Any]]) -> None:
    ids = [r["id"] for r in reqs]
    assert len(ids) == len(set(ids)), sorted({i for i in ids if ids.count(i) > 1})
    for r in reqs:
        m = ID_RE.match(r["id"])
        assert m, r["id"]
        assert m.group(1) == r["family"], r["id"]


def test_exact_count_per_family(reqs: list[dict[str, Any]]) -> None:
    counts: dict[str, int] = {}
    for r in reqs:
        counts[r["family"]] = counts.get(r["family"], 0) + 1
    assert counts == EXPECTED_COUNTS
    assert len(reqs) == sum(EXPECTED_COUNTS.values()) == 222


def test_ids_contiguous_and_in_spec_order(doc: dict[str, Any], reqs: list[dict[str, Any]]) -> None:
    """Families appear in specification order and each runs 1..N without gaps."""
    assert [f["id"] for f in doc["families"]] == list(EXPECTED_COUNTS)
    expected = [f"{fam}-{n}" for fam, count in EXPECTED_COUNTS.items() for n in range(1, count + 1)]
    assert [r["id"] for r in reqs] == expected


def test_decisions_are_numbered_from_dec_1(doc: dict[str, Any]) -> None:
    """DEC-1 … DEC-n in order, none skipped or repeated (n is the list's own length: a new decision needs no count
    restated here)."""
    ids = [d["id"] for d in doc["decisions"]]
    assert ids and ids == [f"DEC-{n}" for n in range(1, len(ids) + 1)]


def test_every_rejection_rule_has_a_code(reqs: list[dict[str, Any]]) -> None:
    for r in reqs:
        if r["kind"] == "rejection":
            assert r.get("codes"), r["id"]
        else:
            assert "codes" not in r, r["id"]


def test_codes_exist_in_errors_json(reqs: list[dict[str, Any]], error_codes: set[str]) -> None:
    unknown = {(r["id"], c) for r in reqs for c in r.get("codes", []) if c not in error_codes}
    assert unknown == set()


def test_codes_named_in_text_are_listed(reqs: list[dict[str, Any]], error_codes: set[str]) -> None:
    """A code the text attributes to a rule must be among the rule's `codes`."""
    for r in reqs:
        named = set(re.findall(r"`([A-Z][A-Z0-9_]+)`", r["text"])) & error_codes
        assert named <= set(r.get("codes", [])), (r["id"], named - set(r.get("codes", [])))


def test_cross_references_resolve(doc: dict[str, Any], reqs: list[dict[str, Any]]) -> None:
    """Rule and decision ids cited in texts (and DEC lists) point at existing entries."""
    known = {r["id"] for r in reqs} | {d["id"] for d in doc["decisions"]}
    texts = [(r["id"], r["text"]) for r in reqs] + [(d["id"], d["text"]) for d in doc["decisions"]]
    for owner, text in texts:
        for fam, num in MENTION_RE.findall(text):
            assert f"{fam}-{num}" in known, (owner, f"{fam}-{num}")
    for r in reqs:
        assert set(r.get("decisions", [])) <= known, r["id"]


def test_decisions_cited_in_text_are_listed(reqs: list[dict[str, Any]]) -> None:
    for r in reqs:
        cited = set(re.findall(r"\bDEC-[0-9]+\b", r["text"]))
        assert cited <= set(r.get("decisions", [])), (r["id"], cited)


def test_project_only_rules_cite_a_decision(reqs: list[dict[str, Any]]) -> None:
    """A rule with no seed or reference source must rest on a DEC."""
    for r in reqs:
        if r["source"] == ["project"]:
            assert r.get("decisions"), r["id"]
        else:
            assert "project" not in r["source"], r["id"]


def test_levels_and_conditions() -> None:
    """Only the optional scope model is SHOULD; the relational checker rules are conditional MUSTs."""
    doc = _load("requirements.json")
    by_id = {r["id"]: r for r in doc["requirements"]}
    assert {i for i, r in by_id.items() if r["level"] == "SHOULD"} == {"STORE-16"}
    checker = {f"INV-{n}" for n in range(1, 13)} | {"SEED-16"}
    for rid in checker:
        assert by_id[rid]["level"] == "MUST", rid
        assert by_id[rid].get("conditional") == "when the relational checker is installed", rid
    # INV-13 is about the checker's absence and so always applies.
    assert "conditional" not in by_id["INV-13"]
    assert {i for i, r in by_id.items() if "conditional" in r} == checker | {"STORE-16"}


def test_titles_unique(reqs: list[dict[str, Any]]) -> None:
    titles = [r["title"] for r in reqs]
    assert len(titles) == len(set(titles)), sorted({t for t in titles if titles.count(t) > 1})
