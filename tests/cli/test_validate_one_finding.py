"""One defect, one finding: a schema error a load rule already reports (with its requirement id) is not repeated."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import HEADER, cli, findings, jsonl, turn_events

Mutation = Callable[[list[dict[str, Any]]], None]

CASES: list[tuple[str, Mutation, str, str]] = [
    ("surf3-marker-missing", lambda ev: ev[1].pop("surfaceOp"), "SURFACE_MARKER_MISSING", "/surfaceOp"),
    ("surf3-log-only-marker", lambda ev: ev[2].__setitem__("surfaceOp", "append"), "SURFACE_LOG_ONLY_MARKER", "/surfaceOp"),
    ("surf3-log-only-sources", lambda ev: ev[2].__setitem__("sourceEventSeqs", [0]), "SURFACE_LOG_ONLY_SOURCES", "/sourceEventSeqs"),
    ("surf3-marker-invalid", lambda ev: ev[1].__setitem__("surfaceOp", "bogus"), "SURFACE_MARKER_INVALID", "/surfaceOp"),
    ("surf3-replace-invalid", lambda ev: ev[1].__setitem__("surfaceOp", {"op": "replace", "start": 0}),
     "SURFACE_REPLACE_MARKER_INVALID", "/surfaceOp"),
    ("surf7-sources-not-list", lambda ev: ev[7].__setitem__("sourceEventSeqs", "x"), "SURFACE_SOURCES_INVALID", "/sourceEventSeqs"),
    ("seed3-unknown-key", lambda ev: ev[2].__setitem__("foo", 1), "SEED_ENVELOPE", "/foo"),
    ("seed3-time-type", lambda ev: ev[2].__setitem__("time", "x"), "SEED_ENVELOPE", "/time"),
    ("seed3-time-negative", lambda ev: ev[2].__setitem__("time", -1), "SEED_ENVELOPE", "/time"),
    ("seed3-no-data", lambda ev: ev[2].pop("data"), "SEED_ENVELOPE", "/data"),
    ("seed3-type-not-string", lambda ev: ev[2].__setitem__("type", 5), "SEED_ENVELOPE", "/type"),
    ("seed6-no-provenance", lambda ev: ev[7]["data"].pop("provenance"), "SEED_PROVENANCE", "/data/provenance"),
    ("seed6-no-provider", lambda ev: ev[7]["data"]["provenance"].pop("provider"), "SEED_PROVENANCE", "/data/provenance"),
]


def _validate(tmp_path: Path, events: list[dict[str, Any]], *extra: str) -> list[dict[str, Any]]:
    path = tmp_path / "log.jsonl"
    path.write_bytes(jsonl(events))
    result = cli("validate", "--format", "json", *extra, str(path))
    assert result.code == 1
    return findings(result)


@pytest.mark.parametrize("level", ["schema", "strict"])
@pytest.mark.parametrize(("name", "mutate", "code", "pointer"), CASES, ids=[c[0] for c in CASES])
def test_one_defect_one_finding(tmp_path: Path, level: str, name: str, mutate: Mutation, code: str, pointer: str) -> None:
    events = turn_events()
    mutate(events)
    found = [f for f in _validate(tmp_path, events, "--level", level) if not f["code"].startswith("INV_")]
    assert [(f["code"], f.get("pointer", "")) for f in found] == [(code, pointer)]
    assert found[0]["requirement"].split("-")[0] in {"SURF", "SEED"}


def test_unrelated_schema_error_on_the_same_event_is_kept(tmp_path: Path) -> None:
    # SEED-3 rejects the event (time), so SURF-3 never looks at its surfaceOp: the schema is the only report of it.
    events = turn_events()
    events[1]["time"] = -1
    events[1]["surfaceOp"] = "bogus"
    found = _validate(tmp_path, events)
    assert sorted((f["code"], f.get("pointer", "")) for f in found) == [
        ("SCHEMA_VIOLATION", "/surfaceOp"), ("SEED_ENVELOPE", "/time"),
    ]


def test_schema_only_defect_is_still_reported(tmp_path: Path) -> None:
    events = turn_events()
    events[3]["data"]["chunk"]["text"] = 5  # no load rule looks at a chunk's text
    found = _validate(tmp_path, events)
    assert [(f["code"], f.get("pointer")) for f in found] == [("SCHEMA_VIOLATION", "/data/chunk/text")]


def test_exact_and_fast_paths_agree_after_dedupe(tmp_path: Path) -> None:
    events = turn_events()
    events[1].pop("surfaceOp")
    path = tmp_path / "log.jsonl"
    path.write_bytes(jsonl(events))
    fast, exact = cli("validate", "--format", "json", str(path)), cli("validate", "--format", "json", "--exact", str(path))
    assert fast.code == exact.code == 1
    assert findings(fast) == findings(exact)


@pytest.mark.parametrize(("change", "pointer"), [
    ({"delegationDepth": None}, "/delegationDepth"),
    ({"delegationDepth": -1}, "/delegationDepth"),
    ({"createdAt": "soon"}, "/createdAt"),
    ({"id": 7}, "/id"),
])
def test_a_rejected_header_line_is_one_finding_at_its_member(tmp_path, change, pointer):
    """JSONL_BAD_HEADER names the member at fault, so the header schema's finding on it is not repeated."""
    header = {k: v for k, v in {**HEADER, **change}.items() if v is not None}
    path = tmp_path / "h.jsonl"
    path.write_bytes(jsonl(turn_events(), header=header))
    result = cli("validate", str(path), "--format", "json")
    found = [(f["code"], f.get("pointer")) for f in findings(result) if f.get("line") == 1]
    assert found == [("JSONL_BAD_HEADER", pointer)]
