"""Vector files: content-hash ids, schema checks with locations, selection."""

from __future__ import annotations

import json
from typing import Any

import pytest
from conformance_fakes import case, json_case
from sessionspec.conformance import nesting, wire
from sessionspec.conformance.authoring import format_case_file
from sessionspec.conformance.cases import (
    CaseFileError,
    case_id,
    load_case_file,
    load_corpus,
    select,
    with_id,
)
from sessionspec.conformance.coverage import load_requirements


def _file(cases, area="x"):
    return json.dumps({"area": area, "description": "d", "cases": cases})


def test_the_id_hashes_only_the_normative_parts():
    a = json_case(1)
    reworded = {**a, "description": "other words", "comment": "c", "requirements": ["JSON-2"]}
    assert case_id(reworded) == a["id"]
    changed = {**a, "expect": {"result": {"isJsonValue": False}}}
    assert case_id(changed) != a["id"]
    assert with_id({**changed, "id": "0" * 16})["id"] == case_id(changed)


def test_a_stale_id_is_refused_with_its_location():
    bad = {**json_case(1), "id": "0123456789abcdef"}
    with pytest.raises(CaseFileError, match="content hash") as info:
        load_case_file(_file([json_case(2), bad]), "x.json")
    assert info.value.pointer == "/cases/1/id"


def test_schema_violations_name_the_pointer():
    broken = json_case(1)
    del broken["level"]
    with pytest.raises(CaseFileError) as info:
        load_case_file(_file([broken]), "x.json")
    assert info.value.pointer.startswith("/cases/0")
    args_broken = case("fold without events", "fold", {}, {"result": {}})
    with pytest.raises(CaseFileError) as info:
        load_case_file(_file([args_broken]), "x.json")
    assert info.value.pointer.startswith("/cases/0/input/args")


def test_area_must_match_the_file_name_and_duplicates_are_refused():
    with pytest.raises(CaseFileError, match="does not match the file name"):
        load_case_file(_file([json_case(1)], area="y"), "x.json")
    with pytest.raises(CaseFileError, match="duplicate"):
        load_case_file(_file([json_case(1), json_case(1)]), "x.json")


def test_unknown_requirement_ids_are_refused_when_known_ids_are_given():
    with pytest.raises(CaseFileError, match="NOPE-1"):
        load_case_file(_file([{**json_case(1), "requirements": ["NOPE-1"]}]), "x.json", known_requirements=["JSON-1"])


def test_the_packaged_corpus_loads_and_names_only_real_requirements():
    from sessionspec.spec.revisions import known_revisions

    known = {r["id"] for rid in known_revisions() for r in load_requirements(rid)}
    corpus = load_corpus(known_requirements=known)
    assert len({c.area for c in corpus}) >= 15
    assert all(c.source.startswith("conformance/vectors/") for c in corpus)


def test_each_packaged_file_is_in_the_canonical_layout():
    from importlib import resources

    root = resources.files("sessionspec.conformance").joinpath("vectors")
    for file in root.iterdir():
        if file.name.endswith(".json"):
            data = wire.loads(file.read_text(encoding="utf-8"))
            assert format_case_file(data["area"], data["description"], data["cases"]) == file.read_text(encoding="utf-8")


def test_selection_by_area_requirement_family_and_case_id():
    corpus = load_corpus()
    surf = select(corpus, ["surf"])
    assert surf and {c.area for c in surf} == {"surf"}
    assert all("SURF-5" in c.requirements for c in select(corpus, ["SURF-5"]))
    family = select(corpus, ["FORK"])
    assert family and all(any(r.startswith("FORK-") for r in c.requirements) for c in family)
    assert [c.id for c in select(corpus, [corpus[3].id])] == [corpus[3].id]
    with pytest.raises(ValueError, match="no case matches"):
        select(corpus, ["nowhere"])


def test_every_packaged_file_loads_with_the_stdlib_parser_and_nests_at_most_100_levels():
    from importlib import resources

    root = resources.files("sessionspec.conformance").joinpath("vectors")
    files = [f for f in root.iterdir() if f.name.endswith(".json")]
    assert len(files) >= 15
    for file in files:
        data = json.loads(file.read_text(encoding="utf-8"))  # RecursionError here before nest forms
        assert nesting.nesting_depth(data) <= nesting.MAX_FILE_DEPTH, file.name


DEEP_VALUES = [
    "[" * 10_000 + "0" + "]" * 10_000,
    '{"a":' * 5000 + "-0.0" + "}" * 5000,
    '{"a": [' * 200 + "1" + ', -1.5], "f": 0.25}' * 200,  # a shape of two levels (survivors.json)
    '{"$nest":' * 40 + "1" + "}" * 40,  # data that looks like forms is escaped
    '[{"$hole": true}, {"$literal": {"$nest": 1}}, {"x": [[1.0]]}]',
    "[" * 31 + "2" + "]" * 31,
]


@pytest.mark.parametrize("text", DEEP_VALUES, ids=range(len(DEEP_VALUES)))
def test_nest_forms_round_trip_and_stay_shallow(text: str) -> None:
    value = wire.loads(text)
    described = nesting.describe(value)
    assert nesting.nesting_depth(described) <= nesting.MAX_FILE_DEPTH
    assert wire.dumps(nesting.expand(described)) == wire.dumps(value)


@pytest.mark.parametrize(("form", "message"), [
    ({"$nest": {"depth": 3, "leaf": 1}}, "a $nest form is"),
    ({"$nest": {"depth": 0, "wrap": [{"$hole": True}], "leaf": 1}}, "depth is an integer"),
    ({"$nest": {"depth": 2, "wrap": [1], "leaf": 1}}, "exactly one"),
    ({"$nest": {"depth": 2, "wrap": [{"$hole": True}, {"$hole": True}], "leaf": 1}}, "exactly one"),
    ({"$literal": [1]}, "holds an object"),
])
def test_a_malformed_nest_form_is_a_located_case_file_error(form: dict[str, Any], message: str) -> None:
    case = {"id": "0" * 16, "description": "d", "requirements": ["JSON-2"], "level": "MUST", "capability": "json-value",
            "input": {"op": "json-value", "args": {"value": form}}, "expect": {"result": {"isJsonValue": True}}}
    text = wire.dumps({"area": "json", "description": "d", "cases": [case]})
    with pytest.raises(CaseFileError) as caught:
        load_case_file(text, "json.json")
    assert caught.value.pointer.startswith("/cases/0/input/args/value/$")
    assert message in caught.value.message
