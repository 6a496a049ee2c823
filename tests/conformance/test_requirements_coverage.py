"""`sessionspec requirements` accounts for every MUST requirement, honestly.

A MUST requirement is accounted for by a vector, a state-machine property, or
an ``observability`` classification in spec/requirements.json (``api``: a
property of a language binding's API that JSON text cannot carry;
``unreachable``: a defensive check no public input reaches). The
classification is an escape hatch, so it is fenced in: the classified set is
pinned here, a classified requirement must not also have a vector or a
property, and each one must be checked by a test in tests/reference (named
``test_<family><n>_...`` or marked ``@pytest.mark.req("ID")``).
"""

from __future__ import annotations

import ast
import copy
import io
import json
import re
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from sessionspec import cli
from sessionspec.conformance.cases import load_corpus
from sessionspec.conformance.coverage import coverage, load_requirements
from sessionspec.conformance.fuzz import property_coverage

# Changing this set is a reviewed decision: every entry is a rule the adapter
# protocol cannot observe, so no implementation is checked on it by the suite.
PINNED: dict[str, str] = {
    "JSON-4": "api",  # non-string dict keys cannot be written in JSON text
    "JSON-5": "api",  # cycles and shared containers cannot be written in JSON text
    "JSON-7": "api",  # detachment of a snapshot from host objects
    "APPEND-8": "api",  # immutability of the returned event
    "APPEND-12": "api",  # identity and immutability of session.events
    "SEED-12": "api",  # detachment from the caller's seed objects
    "SURF-14": "api",  # identity and read-only-ness of the surface view
    "SURF-15": "api",  # a predicate no operation exposes
    "DERIVE-7": "api",  # freshness and immutability of message lists
    "FORK-7": "unreachable",  # seq == index holds for every live session
    "SQLITE-8": "api",  # read-only handles and lock timeouts: no request carries a database handle
}

REFERENCE_TESTS = Path(__file__).resolve().parents[1] / "reference"
_NAME_TOKEN = re.compile(r"^([a-z]+)([1-9][0-9]*)$")
_OWN_TESTS = "verified by the implementation's own tests (in this project: tests/reference)"


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = cli.run(["requirements", *argv], out, err)
    return code, out.getvalue(), err.getvalue()


def _classified() -> dict[str, str]:
    return {r["id"]: r["observability"]["kind"] for r in load_requirements() if "observability" in r}


def _marker_ids(decorators: list[ast.expr]) -> set[str]:
    """Ids given to ``@pytest.mark.req(...)`` / ``@req(...)`` decorators."""
    ids: set[str] = set()
    for node in decorators:
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if name == "req":
            ids |= {a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)}
    return ids


def _name_ids(name: str, families: set[str]) -> set[str]:
    """Ids spelled in a test name: ``test_json3_json4_...`` names JSON-3 and JSON-4."""
    ids = set()
    for token in name.split("_"):
        m = _NAME_TOKEN.match(token)
        if m and m.group(1).upper() in families:
            ids.add(f"{m.group(1).upper()}-{m.group(2)}")
    return ids


def reference_test_ids() -> dict[str, list[str]]:
    """Requirement id -> the tests of tests/reference that name it (by test name or marker)."""
    families = {r["family"] for r in load_requirements()}
    named: dict[str, list[str]] = {}
    for path in sorted(REFERENCE_TESTS.rglob("test_*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        module_ids: set[str] = set()
        for node in tree.body:  # pytestmark = pytest.mark.req(...) or a list of marks
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark"
                                                    for t in node.targets):
                values = node.value.elts if isinstance(node.value, ast.List | ast.Tuple) else [node.value]
                module_ids |= _marker_ids(values)
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                inherited = _marker_ids(node.decorator_list)
                functions = [n for n in node.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
            elif isinstance(node, ast.Module):
                inherited = set()
                functions = [n for n in node.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
            else:
                continue
            for fn in functions:
                if not fn.name.startswith("test"):
                    continue
                ids = module_ids | inherited | _marker_ids(fn.decorator_list) | _name_ids(fn.name, families)
                for rid in ids:
                    named.setdefault(rid, []).append(f"{path.name}::{fn.name}")
    return named


def test_requirements_check_passes_and_shows_api_level_rows() -> None:
    code, out, err = _run("--check")
    assert code == 0, err
    assert "0 MUST requirement(s) uncovered" in err
    lines = {line.split()[0]: line for line in out.splitlines() if line and not line.startswith(" ")}
    for rid, kind in PINNED.items():
        label = "api-level" if kind == "api" else "unreachable through the public API"
        assert f"[{label}: {_OWN_TESTS}]" in lines[rid], lines[rid]
    assert [rid for rid, row in lines.items() if " MUST " in row and "NOT COVERED" in row] == []


def test_uncovered_lists_no_classified_requirement_and_json_carries_the_reason() -> None:
    code, out, _ = _run("--uncovered", "--check")
    assert code == 0
    assert not {line.split()[0] for line in out.splitlines() if line.strip()} & set(PINNED)
    _, out, _ = _run("--json")
    rows = {r["id"]: r for r in json.loads(out)}
    for rid, kind in PINNED.items():
        assert rows[rid]["observability"]["kind"] == kind and len(rows[rid]["observability"]["why"]) >= 20
        assert rows[rid]["vectors"] == [] and rows[rid]["properties"] == []
    assert "observability" not in rows["INV-11"]


def test_the_classified_set_is_pinned() -> None:
    assert _classified() == PINNED


def test_no_classified_requirement_has_a_vector_or_a_property() -> None:
    """A vector means the protocol can observe the rule: the classification would only hide its loss."""
    rows = coverage(load_requirements(), load_corpus(), property_coverage())
    assert [r.id for r in rows if r.misclassified] == []
    assert all(not r.gap for r in rows)


def test_every_classified_requirement_is_checked_by_a_reference_test() -> None:
    named = reference_test_ids()
    missing = sorted(rid for rid in PINNED if not named.get(rid))
    assert missing == [], f"no test in tests/reference names {missing}"


def test_the_reference_test_scan_sees_names_and_markers() -> None:
    """The scan behind the previous test is not vacuous."""
    named = reference_test_ids()
    assert "test_json_value.py::test_json3_json4_other_types_subclasses_and_non_str_keys_rejected" in named["JSON-4"]
    assert "test_fork.py::test_fork7_boundary_seq_mismatch" in named["FORK-7"]
    assert any("test_properties_session.py::" in t for t in named["DERIVE-8"])  # a multi-id marker
    assert _name_ids("test_surf15_x_json2_and_append8", {"SURF", "JSON", "APPEND"}) == {"SURF-15", "JSON-2", "APPEND-8"}
    assert _name_ids("test_json_value_v2_roundtrip", {"JSON"}) == set()


def test_check_fails_on_a_gap_and_on_a_misclassification(monkeypatch: pytest.MonkeyPatch) -> None:
    requirements = load_requirements()

    def serve(reqs: list[dict[str, Any]]) -> None:
        monkeypatch.setattr("sessionspec.requirements_cmd.load_requirements", lambda revision=None: reqs)

    # a MUST requirement with nothing at all fails; a SHOULD one does not
    serve([*requirements, {"id": "ZZZ-1", "level": "MUST", "title": "nothing"},
           {"id": "ZZZ-2", "level": "SHOULD", "title": "optional"}])
    code, _, err = _run("--check")
    assert code == 1 and "uncovered MUST requirements: ZZZ-1\n" in err
    # the same requirement classified api-level is accounted for
    classified = {"id": "ZZZ-1", "level": "MUST", "title": "api only",
                  "observability": {"kind": "api", "why": "a host-language object identity property"}}
    serve([*requirements, classified])
    assert _run("--check")[0] == 0
    # classifying a requirement that has vectors is refused
    abused = copy.deepcopy(requirements)
    next(r for r in abused if r["id"] == "SURF-5")["observability"] = {"kind": "api", "why": "x" * 20}
    serve(abused)
    code, _, err = _run("--check")
    assert code == 1 and "SURF-5" in err and "observability" in err


@pytest.mark.parametrize("area", ["find", "inv", "repair"])
def test_deleting_a_whole_vector_file_fails_the_check(area: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Coverage means evidence: a state-machine rule that merely exercises a requirement does
    not cover it once its vectors are gone (only a rule shown to catch a mutant of it does)."""
    corpus = [c for c in load_corpus() if c.area != area]
    monkeypatch.setattr("sessionspec.requirements_cmd.load_corpus", lambda: corpus)
    code, _, err = _run("--check")
    assert code == 1 and "uncovered MUST requirements:" in err, err
    families = {r.split("-")[0] for r in err.split("uncovered MUST requirements:")[1].strip().split(", ")}
    assert families & {"FIND", "INV", "REPAIR"}, err


def test_machine_rules_count_only_with_evidence() -> None:
    from sessionspec.conformance import machines
    from sessionspec.conformance.fuzz import machine_evidence

    evidence = machine_evidence()
    counted = property_coverage()
    for label, reqs in counted.items():
        assert set(reqs) <= set(machines.COVERAGE[label])
        assert all(label in evidence[r] for r in reqs), label
    unproven = [(label, r) for label, reqs in machines.COVERAGE.items() for r in reqs if label not in evidence.get(r, ())]
    assert unproven and all(r not in counted.get(label, ()) for label, r in unproven)


def test_the_meta_schema_allows_only_the_two_kinds_with_a_reason() -> None:
    spec = resources.files("sessionspec.spec")
    schema = json.loads(spec.joinpath("schemas/meta/requirements.json").read_text(encoding="utf-8"))
    doc = json.loads(spec.joinpath("requirements.json").read_text(encoding="utf-8"))
    validator = Draft202012Validator(schema)
    assert list(validator.iter_errors(doc)) == []
    for bad in ({"kind": "manual", "why": "x" * 30}, {"kind": "api"}, {"kind": "api", "why": "short"},
                {"kind": "api", "why": "x" * 30, "extra": 1}):
        broken = copy.deepcopy(doc)
        next(r for r in broken["requirements"] if r["id"] == "JSON-4")["observability"] = bad
        assert list(validator.iter_errors(broken)), bad


def test_a_case_naming_an_unknown_requirement_is_a_usage_error(monkeypatch: pytest.MonkeyPatch) -> None:
    fewer = [r for r in load_requirements() if r["id"] != "SURF-5"]
    monkeypatch.setattr("sessionspec.requirements_cmd.load_requirements", lambda revision=None: fewer)
    code, _, err = _run("--check")
    assert code == 2 and "names unknown requirement SURF-5" in err
