"""catalogs/revisions.md lists every SQLite layout change a revision declares, generated from the spec data."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from sessionspec.catalog import render_persistence, render_revisions
from sessionspec.spec import load_spec
from sessionspec.spec import revisions as rv

CHECKED_IN = Path(__file__).resolve().parents[2] / "catalogs" / "revisions.md"
PUBLISHED = "b150a551b8"


def _declared(changes: Mapping[str, Any]) -> Iterator[str]:
    """What the catalog must show for one layout's declared changes: its version, codec and every column."""
    yield f"`user_version` {changes['userVersion']}" if "userVersion" in changes else ""
    if "name" in changes.get("rowCodec", {}):
        yield f"row codec `{changes['rowCodec']['name']}`"
    for table, change in changes.get("tables", {}).items():
        cols = change.get("columns", {})
        for col in cols.get("added", ()):
            yield f"`{table}`: adds `{col['name']}` {col['type']}"
            yield f" after `{col['after']}`"
        for name, patch in cols.get("changed", {}).items():
            yield f"`{table}`: `{name}` " + (f"type {patch['type']}" if "type" in patch else "")
        for name in cols.get("removed", {}):
            yield f"`{table}`: drops `{name}`"


def _section(text: str, rid: str) -> str:
    part = text.split(f"## {rid}: changes from ", 1)[1].split("\n## ", 1)[0]
    return part.split("### SQLite layout", 1)[1].split("\n### ", 1)[0]


def _expectations(rid: str) -> list[str]:
    changes = rv.resolve_revision(rid).changes.get("sqlite", {})
    layouts = [*changes.get("publishedLayouts", ()), {k: v for k, v in changes.items() if k != "publishedLayouts"}]
    out = [item for layout in layouts for item in _declared(layout) if item]
    for layout in changes.get("publishedLayouts", ()):
        out += [layout["writtenBy"]["package"], layout["writtenBy"]["commit"], *layout["writtenBy"]["versions"]]
    return out


@pytest.mark.parametrize("source", ["rendered", "checked-in"])
def test_every_declared_sqlite_change_is_in_revisions_md(source: str) -> None:
    text = render_revisions() if source == "rendered" else CHECKED_IN.read_text(encoding="utf-8")
    children = [r for r in rv.known_revisions() if rv.resolve_revision(r).parent is not None]
    assert any("sqlite" in rv.resolve_revision(r).changes for r in children)
    for rid in children:
        section = _section(text, rid)
        missing = [item for item in _expectations(rid) if item not in section]
        assert not missing, (rid, missing)


def test_the_published_layouts_are_listed_with_what_they_are_stated_on() -> None:
    section = _section(render_revisions(), PUBLISHED)
    assert "| 14 | 10 | `@deepseek-ai/dsh-session-persistence-sqlite` `0.0.1-rc.1` (upstream `ed2e24f7eb`) | `json-text` |" \
        in section
    assert "| 17 | 14 | the release commit `b150a551b8` | `physical-17` |" in section
    assert "`packedRowMaxMembers` | 1024" in section


def test_a_synthetic_childs_sqlite_changes_reach_both_catalogs(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing names a layout in code: a child declaring a new layout, a published one and a column shows them."""
    rv.requirement_revisions()
    rv._release_index()
    real = rv._revisions()
    note = {"type": "TEXT", "constraint": "", "holds": "a note", "after": "revision", "name": "note"}
    written = {"package": "@x/sqlite", "versions": ["9.9.9"], "commit": "abcdef1234", "checked": "synthetic"}
    child = rv.Revision(id="fffffff017", title="Synthetic", date="2026-12-01", parent=PUBLISHED, source="tests",
                        changes={"summary": "A test revision.", "sqlite": {
                            "publishedLayouts": [{"userVersion": 18, "writtenBy": written,
                                                  "tables": {"sessions": {"columns": {"added": [note]}}}}],
                            "userVersion": 19, "tables": {"events": {"columns": {"removed": {"ignorable": "gone"}}}}}})
    monkeypatch.setattr(rv, "_revisions", lambda: {**real, child.id: child})
    section = _section(render_revisions(), child.id)
    assert all(item in section for item in _expectations(child.id)), section
    assert "`sessions`: adds `note` TEXT after `revision`" in section and "`events`: drops `ignorable`" in section
    persistence = render_persistence(load_spec(revision=child.id))
    assert "`PRAGMA user_version` = 19" in persistence and "#### Layout 18 (published releases)" in persistence
