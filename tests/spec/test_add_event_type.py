"""CONTRIBUTING.md, recipe "add an event type", walked on a sample type.

The recipe's claim: a new log-only type is spec data (one registry entry with examples, one
payload schema) plus regenerated outputs; nothing in the code, the tests or the prose restates
the vocabulary or its size. This test writes exactly those two files (as a registry directory,
the same layout as `spec/`) and checks that every consumer picks the type up from them alone.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from sessionspec.cli import run
from sessionspec.reference import Session
from sessionspec.spec import load_spec

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = "sample/noted"
SCHEMA_ID = "https://plugins.example/sample/payload/noted.json"  # a plugin $id: its own domain, not the core's space
VALID = {"type": SAMPLE, "seq": 3, "time": 1767225600000, "data": {"note": "kept for the log"}}
INVALID = {"type": SAMPLE, "seq": 3, "time": 1767225600000, "data": {"note": 7}}


@pytest.fixture
def registry(tmp_path: Path) -> Path:
    """Step 1 and 2 of the recipe: the registry entry and the payload schema, nothing else."""
    root = tmp_path / "spec-data"
    (root / "events").mkdir(parents=True)
    (root / "schemas/payload/sample").mkdir(parents=True)
    entry = {
        "type": SAMPLE, "owner": "@sample/notes", "class": "log-only", "outOfBand": False, "enclosure": "turn",
        "description": "A note kept in the log for operators.", "payloadSchema": SCHEMA_ID,
        "provenance": "Log-only: carries neither surfaceOp nor sourceEventSeqs (SURF-3).",
        "requirements": ["APPEND-6"],
        "examples": {"valid": [{"description": "A note.", "event": VALID}],
                     "invalid": [{"event": INVALID, "reason": "A note is text.", "path": "/data/note"}]},
    }
    (root / "events/sample.json").write_text(json.dumps({"events": [entry]}), encoding="utf-8")
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": SCHEMA_ID, "title": "sample/noted payload",
              "type": "object", "required": ["note"], "properties": {"note": {"type": "string"}}, "additionalProperties": False}
    (root / "schemas/payload/sample/noted.json").write_text(json.dumps(schema), encoding="utf-8")
    return root


def _log(tmp_path: Path, event: dict[str, Any]) -> Path:
    header = {"type": "session", "version": 0, "id": "s", "createdAt": 1767225600000, "delegationDepth": 0}
    events = [
        {"type": "turn/start", "seq": 0, "time": 1767225600000, "data": {"turn": 1, "trigger": {"kind": "message", "source": {"kind": "user"}}}},
        {"type": "user/message", "seq": 1, "time": 1767225600000, "data": {"content": [{"type": "text", "text": "hi"}], "source": {"kind": "user"}},
         "surfaceOp": "append"},
        {"type": "step/start", "seq": 2, "time": 1767225600000, "data": {"turn": 1, "step": 1}},
        event,
        {"type": "step/end", "seq": 4, "time": 1767225600000, "data": {"turn": 1, "step": 1}},
        {"type": "turn/end", "seq": 5, "time": 1767225600000, "data": {"turn": 1, "reason": {"kind": "completed"}}},
    ]
    path = tmp_path / f"log-{len(list(tmp_path.iterdir()))}.jsonl"
    path.write_text("".join(json.dumps(v) + "\n" for v in [header, *events]), encoding="utf-8")
    return path


def test_the_spec_counts_the_new_type_from_the_data_alone(registry: Path) -> None:
    core, spec = load_spec(), load_spec([registry])
    assert set(spec.events) - set(core.events) == {SAMPLE}
    assert SCHEMA_ID in spec.schemas
    assert sum(len(group) for group in spec.namespaces().values()) == len(core.events) + 1


def test_the_catalog_is_regenerated_with_it(registry: Path, tmp_path: Path) -> None:
    out, err = io.StringIO(), io.StringIO()
    assert run(["catalog", "--registry", str(registry), "--out", str(tmp_path / "cat")], out, err) == 0, err.getvalue()
    text = (tmp_path / "cat" / "persistence-catalog.md").read_text(encoding="utf-8")
    assert f"#### `{SAMPLE}` — log-only" in text
    total = len(load_spec().events)
    assert f"Registered types: {total + 1} ({total} from the core registry, 1 from plugin registries)." in text


def test_validate_checks_it_against_its_schema(registry: Path, tmp_path: Path) -> None:
    good, bad = _log(tmp_path, VALID), _log(tmp_path, INVALID)
    for level in ("load", "schema", "strict"):
        out, err = io.StringIO(), io.StringIO()
        assert run(["validate", "--registry", str(registry), "--level", level, str(good)], out, err) == 0, out.getvalue()
    out, err = io.StringIO(), io.StringIO()
    assert run(["validate", "--registry", str(registry), "--level", "schema", "--format", "json", str(bad)], out, err) == 1
    assert "/data/note" in out.getvalue() and "SCHEMA_VIOLATION" in out.getvalue()


def test_the_reference_appends_it_as_a_log_only_event(registry: Path) -> None:
    session = Session("s")
    event = session.append(SAMPLE, VALID["data"])
    assert event["type"] == SAMPLE and session.surface.nodes == []


def test_no_prose_or_data_restates_the_size_of_the_vocabulary() -> None:
    """Counts of the registry are derived (catalogs print them); hand-kept copies go stale."""
    total = len(load_spec().events)
    texts = {p: p.read_text(encoding="utf-8") for p in [ROOT / "README.md", ROOT / "spec/openness.json",
                                                        *(ROOT / "docs").glob("*.md")]}
    stale = [str(p.relative_to(ROOT)) for p, text in texts.items()
             if f"{total} event types" in text or f"of the {total} types" in text or f"all {total} " in text]
    assert stale == []
