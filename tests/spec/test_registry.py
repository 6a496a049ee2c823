"""The event registry: coverage of the vocabulary, entry facts, and every example checked at its path."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

import pytest
from sessionspec.spec import SCHEMA_BASE, SURFACE_TYPES, load_spec
from sessionspec.spec.loader import REGISTRY_META_ID, json_pointer

SPEC = load_spec()

# vocabulary.md §2, held here on purpose: type -> (owner, class, out-of-band, enclosure).
CORE = "@deepseek-ai/dsh-session"
VOCABULARY = {
    "turn/start": (CORE, "log-only", False, "boundary"),
    "turn/end": (CORE, "log-only", False, "boundary"),
    "step/start": (CORE, "log-only", False, "boundary"),
    "step/end": (CORE, "log-only", False, "boundary"),
    "user/message": (CORE, "surface", False, "any"),
    "assistant/chunk": (CORE, "log-only", False, "step"),
    "assistant/message": (CORE, "surface", False, "step"),
    "tool/call": (CORE, "log-only", False, "step"),
    "tool/result": (CORE, "surface", False, "step"),
    "steering/message": (CORE, "surface", False, "turn"),
    "todo/write": (CORE, "log-only", False, "turn"),
    "request/header": (CORE, "log-only", False, "turn"),
    "approval/asked": ("@deepseek-ai/dsh-user-approval", "log-only", False, "turn"),
    "approval/decided": ("@deepseek-ai/dsh-user-approval", "log-only", False, "turn"),
    "approval/policy": ("@deepseek-ai/dsh-user-approval", "log-only", False, "turn"),
    "compact/start": ("@deepseek-ai/dsh-compact", "log-only", False, "turn"),
    "compact/summary": ("@deepseek-ai/dsh-compact", "log-only", False, "turn"),
    "compact/end": ("@deepseek-ai/dsh-compact", "log-only", False, "turn"),
    "hook/invoked": ("@deepseek-ai/dsh-hook-protocol", "log-only", False, "turn"),
    "hook/result": ("@deepseek-ai/dsh-hook-protocol", "log-only", False, "turn"),
    "llm/retry": ("@deepseek-ai/dsh-llm-retry", "log-only", False, "turn"),
    "permission/preset": ("@deepseek-ai/dsh-permission", "log-only", False, "turn"),
    "plan/mode": ("@deepseek-ai/dsh-plan-mode", "log-only", False, "turn"),
    "sandbox/mode": ("@deepseek-ai/dsh-sandbox-policy", "log-only", False, "turn"),
    "session/title": ("@deepseek-ai/dsh-session-title", "log-only", True, "turn"),
    "session/title-llm-request": ("@deepseek-ai/dsh-session-title-llm", "log-only", True, "turn"),
    "tool/code-dispatch-start": ("@deepseek-ai/dsh-tools", "log-only", False, "turn"),
    "tool/code-dispatch": ("@deepseek-ai/dsh-tools", "log-only", False, "turn"),
}

# Every `#### `type` — badge` heading of upstream's generated docs/persistence-catalog.md at 2f74ac98ba,
# extracted with: git show 2f74ac98ba:docs/persistence-catalog.md | grep '^#### '
UPSTREAM_CATALOG_TYPES = [
    "approval/asked", "approval/decided", "approval/policy",
    "assistant/chunk", "assistant/message",
    "compact/end", "compact/start", "compact/summary",
    "hook/invoked", "hook/result",
    "llm/retry",
    "permission/preset",
    "plan/mode",
    "request/header",
    "sandbox/mode",
    "session/title", "session/title-llm-request",
    "steering/message",
    "step/end", "step/start",
    "todo/write",
    "tool/call", "tool/code-dispatch", "tool/code-dispatch-start", "tool/result",
    "turn/end", "turn/start",
    "user/message",
]  # fmt: skip
# Upstream's surface badges, from the same headings.
UPSTREAM_SURFACE = {"assistant/message", "steering/message", "tool/result", "user/message"}

ENTRIES = list(SPEC.events.values())
VALID = [(e["type"], i, ex) for e in ENTRIES for i, ex in enumerate(e["examples"]["valid"])]
INVALID = [(e["type"], i, ex) for e in ENTRIES for i, ex in enumerate(e["examples"]["invalid"])]


def error_paths(event: Any) -> list[str]:
    return [json_pointer(error.absolute_path) for error in SPEC.event_validator().iter_errors(event)]


def test_registry_covers_the_vocabulary_types() -> None:
    # The seeds' vocabulary must all be there; a type added since (CONTRIBUTING.md) needs no edit here.
    assert set(VOCABULARY) <= set(SPEC.events)


def test_every_upstream_catalog_type_appears_in_ours() -> None:
    missing = [t for t in UPSTREAM_CATALOG_TYPES if t not in SPEC.events]
    assert missing == []
    assert {t for t in UPSTREAM_CATALOG_TYPES if SPEC.events[t]["class"] == "surface"} == UPSTREAM_SURFACE


@pytest.mark.parametrize("event_type", sorted(VOCABULARY))
def test_entry_facts_match_the_vocabulary_table(event_type: str) -> None:
    entry = SPEC.events[event_type]
    assert (entry["owner"], entry["class"], entry["outOfBand"], entry["enclosure"]) == VOCABULARY[event_type]


def test_tool_result_enclosure_differs_for_replacements() -> None:
    assert SPEC.events["tool/result"]["enclosureOnReplace"] == "turn"
    assert [t for t, e in SPEC.events.items() if "enclosureOnReplace" in e] == ["tool/result"]


@pytest.mark.req("SURF-1")
def test_surf1_surface_types_are_the_four_of_the_constants() -> None:
    assert SPEC.surface_types == SURFACE_TYPES
    assert len(SPEC.surface_types) == 4


@pytest.mark.req("OOB-1")
def test_oob1_out_of_band_types_are_the_two_title_types() -> None:
    assert SPEC.out_of_band_types == {"session/title", "session/title-llm-request"}


def test_registry_files_match_their_meta_schema_and_namespace() -> None:
    root = resources.files("sessionspec.spec").joinpath("events")
    validator = SPEC.validator(REGISTRY_META_ID)
    files = sorted(f.name for f in root.iterdir() if f.name.endswith(".json"))
    assert files, "no registry files"
    for name in files:
        doc = json.loads(root.joinpath(name).read_text(encoding="utf-8"))
        assert list(validator.iter_errors(doc)) == [], name
        assert {e["type"].split("/")[0] for e in doc["events"]} == {name.removesuffix(".json")}


def test_every_entry_has_valid_and_invalid_examples_of_its_own_type() -> None:
    for entry in ENTRIES:
        assert entry["examples"]["valid"] and entry["examples"]["invalid"], entry["type"]
        for example in entry["examples"]["valid"] + entry["examples"]["invalid"]:
            assert example["event"]["type"] == entry["type"]


@pytest.mark.parametrize(("event_type", "index", "example"), VALID, ids=[f"{t}-{i}" for t, i, _ in VALID])
def test_valid_example_validates(event_type: str, index: int, example: dict[str, Any]) -> None:
    assert error_paths(example["event"]) == []


@pytest.mark.parametrize(("event_type", "index", "example"), INVALID, ids=[f"{t}-{i}" for t, i, _ in INVALID])
def test_invalid_example_fails_at_its_stated_path(event_type: str, index: int, example: dict[str, Any]) -> None:
    paths = error_paths(example["event"])
    stated = example["path"]
    assert stated in paths, f"expected an error at {stated!r}, got {paths}"
    # Nothing else is wrong with the example: every error is at or below the stated path.
    assert all(p == stated or p.startswith(stated + "/") for p in paths), paths


def test_payload_schemas_are_registered_under_payload() -> None:
    for event_type, entry in SPEC.events.items():
        assert entry["payloadSchema"] == f"{SCHEMA_BASE}payload/{event_type}.json"
        assert entry["payloadSchema"] in SPEC.schemas


def test_log_only_entries_state_the_log_only_provenance_rule() -> None:
    for entry in ENTRIES:
        if entry["class"] == "log-only":
            assert "SURF-3" in entry["provenance"], entry["type"]
        else:
            assert "surfaceOp is mandatory" in entry["provenance"], entry["type"]


def test_requirement_ids_exist_in_requirements_json() -> None:
    known = set(SPEC.requirements)
    cited = {r for e in ENTRIES for r in e["requirements"]}
    cited |= {r for s in SPEC.openness for r in s["requirements"]}
    cited |= {r for e in SPEC.service_events["events"] for r in e["requirements"]}
    assert cited - known == set()


def test_requirements_and_error_code_accessors() -> None:
    assert SPEC.requirements["SURF-5"]["family"] == "SURF"
    assert "CHUNK_ROW_MALFORMED" in SPEC.error_codes
    assert SPEC.decisions == {} or "DEC-8" in SPEC.decisions


@pytest.mark.req("SEED-13")
def test_seed13_unknown_type_is_checked_against_the_envelope_only() -> None:
    assert error_paths({"type": "plugin/event", "seq": 0, "time": 1, "data": None}) == []
    assert error_paths({"type": "plugin/event", "seq": 0, "time": 1, "data": None, "surfaceOp": "append"}) == ["/surfaceOp"]


def test_known_type_payload_is_checked_by_the_event_validator() -> None:
    assert error_paths({"type": "plan/mode", "seq": 0, "time": 1, "data": None}) == ["/data"]


def test_default_spec_is_cached_and_validator_lookup_fails_clearly() -> None:
    assert load_spec() is SPEC
    assert SPEC.validator(REGISTRY_META_ID) is SPEC.validator(REGISTRY_META_ID)
    with pytest.raises(KeyError, match="no loaded schema"):
        SPEC.validator(SCHEMA_BASE + "nope.json")


def test_validator_accepts_a_fragment() -> None:
    validator = SPEC.validator(REGISTRY_META_ID + "#/$defs/entry")
    assert validator.is_valid(ENTRIES[0])
    assert not validator.is_valid({"type": "x/y"})


def test_namespaces_group_sorted_entries() -> None:
    grouped = SPEC.namespaces()
    assert list(grouped) == sorted(grouped)
    assert [e["type"] for e in grouped["turn"]] == ["turn/end", "turn/start"]
    assert sum(len(v) for v in grouped.values()) == len(SPEC.events)
