"""Self-checks of `spec/errors.json`: codes, exception classes and requirement links.

The link between a requirement's `codes` and a code's `requirements` must hold
in both directions, so that a conformance report can go from a failing code to
its rules and from a rule to the codes an implementation must raise.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from sessionspec.spec import errors as reference_errors
from spec_data import load_spec_json as _load

ARCHITECTURE = Path(__file__).resolve().parents[2] / "docs" / "architecture.md"
CODE_RE = re.compile(r"^[A-Z][A-Z0-9]*(_[A-Z0-9]+)+$")


@pytest.fixture(scope="module")
def doc() -> dict[str, Any]:
    return _load("errors.json")


@pytest.fixture(scope="module")
def errors(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return doc["errors"]


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    return _load("schemas", "meta", "errors.json")


@pytest.fixture(scope="module")
def reqs() -> dict[str, dict[str, Any]]:
    return {r["id"]: r for r in _load("requirements.json")["requirements"]}


def _architecture_table() -> dict[str, set[str]]:
    """Family -> codes listed in the 'Error codes' table of docs/architecture.md."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    section = text.split("## Error codes", 1)[1].split("\n## ", 1)[0]
    rows: dict[str, set[str]] = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 2 or not re.fullmatch(r"[A-Z]+", cells[0]):
            continue
        rows[cells[0]] = {c for c in re.findall(r"`([^`]+)`", cells[1]) if CODE_RE.match(c)}
    return rows


def test_schema_is_valid_draft_2020_12(schema: dict[str, Any]) -> None:
    Draft202012Validator.check_schema(schema)
    assert schema["$id"] == "https://sessionspec.dev/schema/meta/errors.json"


def test_errors_file_validates_against_schema(doc: dict[str, Any], schema: dict[str, Any]) -> None:
    assert list(Draft202012Validator(schema).iter_errors(doc)) == []
    assert doc["$schema"] == schema["$id"]


@pytest.mark.parametrize(
    "mutate",
    [
        lambda e: e.update(requirements=[]),
        lambda e: e.update(code="lowercase_code"),
        lambda e: e.update(exception="not a class"),
        lambda e: e.pop("description"),
        lambda e: e.update(alsoRaisedAs=[{"exception": "SeedError"}]),
    ],
)
def test_schema_rejects_malformed_entry(doc: dict[str, Any], schema: dict[str, Any], mutate: Any) -> None:
    bad = copy.deepcopy(doc)
    mutate(bad["errors"][0])
    assert list(Draft202012Validator(schema).iter_errors(bad))


def test_codes_unique(errors: list[dict[str, Any]]) -> None:
    codes = [e["code"] for e in errors]
    assert len(codes) == len(set(codes)), sorted({c for c in codes if codes.count(c) > 1})


def test_requirement_ids_exist_and_are_rejections(
    errors: list[dict[str, Any]], reqs: dict[str, dict[str, Any]]
) -> None:
    for e in errors:
        for rid in e["requirements"]:
            assert rid in reqs, (e["code"], rid)
            assert reqs[rid]["kind"] == "rejection", (e["code"], rid)


def test_codes_and_requirements_agree_both_ways(
    errors: list[dict[str, Any]], reqs: dict[str, dict[str, Any]]
) -> None:
    """A code lists exactly the rules whose `codes` name it, and every rule code is listed."""
    listed = {e["code"]: set(e["requirements"]) for e in errors}
    derived: dict[str, set[str]] = {}
    for rid, r in reqs.items():
        for code in r.get("codes", []):
            derived.setdefault(code, set()).add(rid)
    assert set(derived) <= set(listed), set(derived) - set(listed)
    for code, rids in listed.items():
        assert rids == derived.get(code, set()), code


def test_every_rejection_rule_has_a_listed_code(
    errors: list[dict[str, Any]], reqs: dict[str, dict[str, Any]]
) -> None:
    covered = {rid for e in errors for rid in e["requirements"]}
    rejections = {rid for rid, r in reqs.items() if r["kind"] == "rejection"}
    assert rejections == covered


def test_exception_classes_exist_in_reference(errors: list[dict[str, Any]]) -> None:
    for e in errors:
        if "exception" not in e:  # a validator finding or a spec-loader error: no format rejection
            assert (e["emitter"], e["family"]) in {("validator", "LOG"), ("spec-loader", "SPEC"),
                                                   ("registry-check", "REGISTRY")}, e["code"]
            continue
        names = [e["exception"]] + [a["exception"] for a in e.get("alsoRaisedAs", [])]
        for name in names:
            cls = getattr(reference_errors, name, None)
            assert isinstance(cls, type), (e["code"], name)
            assert issubclass(cls, reference_errors.SessionSpecError), (e["code"], name)


def test_codes_match_architecture_table(errors: list[dict[str, Any]]) -> None:
    """docs/architecture.md lists every code of every revision (the core's of errors.json and those a revision
    adds), each in its family's row."""
    from sessionspec.spec.error_codes import ERROR_CODES

    table = _architecture_table()
    in_table = set().union(*table.values())
    assert in_table == set(ERROR_CODES)
    assert {e["code"] for e in errors} <= in_table
    for e in errors:
        assert e["family"] in table, e["code"]
        assert e["code"] in table[e["family"]], (e["code"], e["family"])


def test_inv_codes_cover_each_rejection_condition(
    errors: list[dict[str, Any]], reqs: dict[str, dict[str, Any]]
) -> None:
    """Each INV rejection rule maps onto INV_* codes raised as InvariantError."""
    inv = [e for e in errors if e["family"] == "INV"]
    assert len(inv) >= 10
    for e in inv:
        assert e["code"].startswith("INV_"), e["code"]
        assert e["exception"] == "InvariantError", e["code"]
        assert any(r.startswith("INV-") for r in e["requirements"]), e["code"]
    for rid, r in reqs.items():
        if rid.startswith("INV-") and r["kind"] == "rejection":
            assert all(c.startswith("INV_") for c in r["codes"]), rid


def test_spec_loader_raises_its_listed_code(tmp_path) -> None:
    """A broken plugin registry is reported with the code errors.json lists for the spec loader."""
    from sessionspec.spec import load_spec

    (tmp_path / "events").mkdir()
    (tmp_path / "events" / "broken.json").write_text("{not json", encoding="utf-8")
    try:
        load_spec(extra_dirs=[tmp_path])
    except reference_errors.SessionSpecError as error:
        assert error.code == "SPEC_REGISTRY_INVALID"
        assert "broken.json" in str(error)
    else:  # pragma: no cover - the assertion below reports it
        raise AssertionError("a broken registry file was accepted")


def test_the_error_code_type_is_every_listed_code_of_every_revision() -> None:
    """`spec/error_codes.py` (generated; `ErrorCode` types the reference's codes for mypy) states the data once."""
    from sessionspec.spec import load_spec
    from sessionspec.spec.error_codes import ERROR_CODES
    from sessionspec.spec.revisions import known_revisions

    assert {code for rid in known_revisions() for code in load_spec(revision=rid).error_codes} == ERROR_CODES
