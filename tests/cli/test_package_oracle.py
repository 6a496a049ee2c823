"""The npm package as the oracle for the published revision, on logs the package wrote.

``tests/real_logs/corpus`` holds logs written by ``@deepseek-ai/dsh-session`` 0.1.1-rc.2 and its
persistence packages through their own API (raw JSONL, the zstd default, SQLite; crashes, copies taken
mid-write, two writers, a pinned log resumed), and beside each one ``<log>.expect.json``: what the
package makes of it (its durable load's verdict, the invariant companion's, ``deriveMessages()``,
``foldSurface()``, the closers and bytes its load writes). Both are written by one command,
``python tests/real_logs/regenerate.py`` (``writer/corpus.mjs``); these tests need no Node.

For every log and session: ``validate`` at every level, without flags, reports an error exactly when
the package refuses the log; ``derive`` and ``fold`` print what the package derives and folds after its
load; ``repair`` writes what the package's load writes; ``stats`` counts the stored events.
"""

from __future__ import annotations

import io
import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest
import zstandard
from cli_helpers import cli
from sessionspec.spec.loader import load_spec

REAL = Path(__file__).resolve().parents[1] / "real_logs"
CORPUS, LOGS = REAL / "corpus", REAL / "logs"
PUB = "b150a551b8"
LEVELS = ("load", "schema", "strict")
# Warnings a log the package loads may carry: the crash tails its load repairs.
REPAIR_WARNINGS = {"REPAIR_NEEDED", "JSONL_TORN_TAIL"}

# Logs kept out of an assertion until the disagreement is fixed (each class is in
# /work/brief/notes/verdicts22.md with its reproducer): (log, check) -> why.
RESUMED_WITH_HOOKS = ["npm-resumed-steering.jsonl", "npm-resumed-steering.jsonl.zstd", "npm-resumed-steering.db"]
KNOWN_OUT: dict[tuple[str, str], str] = {}


def _expectations() -> list[tuple[str, str, dict[str, Any]]]:
    cases = []
    for path in sorted(CORPUS.glob("*.expect.json")):
        log = path.name.removesuffix(".expect.json")
        for session_id, result in json.loads(path.read_text(encoding="utf-8"))["sessions"].items():
            cases.append((log, session_id, result))
    return cases


CASES = _expectations()


def _path(log: str) -> Path:
    return CORPUS / log if (CORPUS / log).exists() else LOGS / log


@pytest.fixture
def args(tmp_path: Path) -> Any:
    """The CLI arguments naming one session of a log; a store is read from a copy (SQLite writes
    side files beside a WAL database it opens, and the fixture folder must stay as committed)."""
    def make(log: str, session_id: str) -> list[str]:
        if not log.endswith(".db"):
            return [str(_path(log))]
        copy = tmp_path / "stores" / log
        copy.parent.mkdir(exist_ok=True)
        shutil.copyfile(_path(log), copy)
        return [str(copy), "--session", session_id]
    return make


def _accepted(result: dict[str, Any]) -> bool:
    return result.get("load") == "ok" and result.get("invariants") == "ok"


def _cases(check: str, where: Any = None) -> list[Any]:
    return [pytest.param(log, sid, result, id=f"{log}#{sid}") for log, sid, result in CASES
            if (log, check) not in KNOWN_OUT and (where is None or where(result))]


def _validate_cases() -> list[Any]:
    return [pytest.param(log, sid, result, level, id=f"{log}#{sid}-{level}") for level in LEVELS
            for log, sid, result in CASES if (log, f"validate-{level}") not in KNOWN_OUT]


def test_the_corpus_has_an_expectation_for_every_log_it_holds() -> None:
    logs = {p.name for p in CORPUS.iterdir() if not p.name.endswith((".expect.json", ".repaired"))}
    assert logs and logs <= {log for log, _, _ in CASES}
    assert all(log in logs or (LOGS / log).exists() for log, _, _ in CASES)
    assert {log for log, _ in KNOWN_OUT} <= {log for log, _, _ in CASES}


def test_every_type_of_the_published_registry_occurs_in_a_log_the_package_wrote_and_loads() -> None:
    registry = set(load_spec(revision=PUB).events)
    seen = {t for _, _, result in CASES if _accepted(result) for t in result["types"]}
    assert registry - seen == set()


def test_the_corpus_covers_every_storage_form_crashes_and_refusals() -> None:
    forms = {json.loads(p.read_text())["form"] for p in CORPUS.glob("*.expect.json")}
    assert forms == {"jsonl", "zstd", "sqlite"}
    assert any(result["closers"] for _, _, result in CASES if _accepted(result))
    assert any(not _accepted(result) for _, _, result in CASES)


@pytest.mark.parametrize(("log", "session_id", "result", "level"), _validate_cases())
def test_validate_refuses_exactly_what_the_package_refuses(log: str, session_id: str, result: dict[str, Any],
                                                           level: str, args: Any) -> None:
    report = cli("validate", "--level", level, "--format", "json", *args(log, session_id))
    findings = [f for entry in report.json["files"] for f in entry["findings"]]
    errors = [f for f in findings if f["severity"] == "error"]
    if _accepted(result):
        assert errors == [], f"the package loads {log} and its invariants pass"
        # what the package writes, its schemas describe: no deviation either (DEC-27), so a member the spec's
        # schemas miss is a finding here, not a note
        assert [f for f in findings if f["severity"] == "deviation"] == [], findings
        repaired = bool(result["closers"]) or bool((result.get("stored") or {}).get("torn"))
        warned = {f["code"] for f in findings if f["severity"] == "warning"}
        assert warned <= (REPAIR_WARNINGS if repaired else set())
        # a log the package loads is never INVALID by default: a crash tail its load repairs is `ok, needs repair`
        assert report.code == 0 and all(entry["valid"] for entry in report.json["files"])  # DEC-25
        assert [entry["needsRepair"] for entry in report.json["files"]] == [bool(warned)]
    elif result.get("load") != "ok" or level == "strict":
        assert errors, f"the package refuses {log}: {result.get('load') if result.get('load') != 'ok' else result['invariants']}"


CRASHES = [(log, sid) for log, sid, result in CASES if _accepted(result) and result["closers"]]


@pytest.mark.parametrize(("log", "session_id"), CRASHES)
def test_a_crashed_log_the_package_loads_is_ok_and_needs_repair(log: str, session_id: str, args: Any) -> None:
    """DEC-25: the default verdict on a crash the load repairs is `ok, needs repair` (exit 0), the warning says
    what loading writes; `--fail-on repair` fails it. Every crash scenario, in every storage form."""
    text = cli("validate", *args(log, session_id))
    assert text.code == 0, text.out
    assert "REPAIR_NEEDED" in text.out and ": ok, needs repair: " in text.out and "INVALID" not in text.out
    assert "0 invalid, 1 need repair" in text.out
    assert cli("validate", "--fail-on", "repair", *args(log, session_id)).code == 1


def test_the_crash_scenarios_are_there_in_every_form() -> None:
    assert {log.rsplit(".", 1)[0].removesuffix(".jsonl") for log, _ in CRASHES} >= {"npm-crashed-turn", "npm-exit-mid-turn"}
    assert {json.loads((CORPUS / f"{log}.expect.json").read_text())["form"] for log, _ in CRASHES
            if (CORPUS / log).exists()} == {"jsonl", "zstd", "sqlite"}


@pytest.mark.parametrize(("log", "session_id", "result"), _cases("derive", _accepted))
def test_derive_prints_what_the_package_derives_after_its_load(log: str, session_id: str, result: dict[str, Any],
                                                              args: Any) -> None:
    derived = cli("derive", "--compact", *args(log, session_id))
    assert derived.code == 0, derived.err
    assert derived.json == result["messages"]


@pytest.mark.parametrize(("log", "session_id", "result"), _cases("fold", _accepted))
def test_fold_prints_what_the_package_folds_after_its_load(log: str, session_id: str, result: dict[str, Any], args: Any) -> None:
    folded = cli("fold", "--format", "json", *args(log, session_id))
    assert folded.code == 0, folded.err
    assert folded.json == result["fold"]


def _plain(data: bytes) -> bytes:
    if data[:4] == b"\x28\xb5\x2f\xfd":
        return zstandard.ZstdDecompressor().stream_reader(io.BytesIO(data), read_across_frames=True).read()
    return data


def _rows(db: Path, session_id: str) -> list[tuple[Any, ...]]:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return con.execute("SELECT seq, type, data FROM events WHERE session_id = ? ORDER BY seq", (session_id,)).fetchall()
    finally:
        con.close()


@pytest.mark.parametrize(("log", "session_id", "result"), _cases("repair", lambda r: r.get("load") == "ok"))
def test_repair_writes_what_the_package_load_writes(log: str, session_id: str, result: dict[str, Any], tmp_path: Path,
                                                    args: Any) -> None:
    out = tmp_path / log
    repaired = cli("repair", *args(log, session_id), "-o", str(out))
    assert repaired.code == 0, repaired.err
    if result["repaired"] == "closers":  # SQLite: the rows its load appended
        rows = _rows(out, session_id)
        assert len(rows) == result["events"]
        tail = rows[len(rows) - len(result["closers"]):] if result["closers"] else []
        assert [(seq, kind, json.loads(data)) for seq, kind, data in tail] == \
            [(e["seq"], e["type"], e["data"]) for e in result["closers"]]
    elif result["repaired"] == "unchanged":
        assert out.read_bytes() == _path(log).read_bytes()
    else:
        assert _plain(out.read_bytes()) == _plain((CORPUS / f"{log}.repaired").read_bytes())


@pytest.mark.parametrize(("log", "session_id", "result"), _cases("stats", lambda r: r.get("load") == "ok"))
def test_stats_counts_the_stored_events(log: str, session_id: str, result: dict[str, Any], args: Any) -> None:
    stats = cli("stats", "--format", "json", *args(log, session_id))
    assert stats.code == 0, stats.err
    stored = dict(result["types"])
    for closer in result["closers"] or []:
        stored[closer["type"]] -= 1
    assert stats.json["events"] == result["stored"]["events"]
    assert stats.json["types"] == {t: n for t, n in stored.items() if n}


SCENARIOS_IN_EVERY_FORM = ["npm-all-types", "npm-variants", "npm-settings-first", "npm-subagent", "npm-crashed-turn",
                           "npm-exit-mid-turn", "npm-exit-mid-flush", "npm-resumed-pinned", "npm-resumed-steering"]
FORM_SUFFIX = {"jsonl": ".jsonl", "zstd": ".jsonl.zstd", "sqlite": ".db"}


def test_every_scenario_issue_22_names_is_there_in_every_storage_form() -> None:
    """Crashes mid-turn and mid-flush, pinned logs resumed by the package, subagents and every type: in raw
    JSONL, the zstd default and SQLite; copies taken mid-write in both JSONL forms; two writers (refused)."""
    logs = {log for log, _, _ in CASES}
    for scenario in SCENARIOS_IN_EVERY_FORM:
        for form, suffix in FORM_SUFFIX.items():
            assert f"{scenario}{suffix}" in logs, (scenario, form)
            assert json.loads((CORPUS / f"{scenario}{suffix}.expect.json").read_text())["form"] == form
    assert {"npm-copied-mid-write.jsonl", "npm-copied-mid-write.jsonl.zstd"} <= logs
    [(_, _, two)] = [c for c in CASES if c[0] == "npm-two-writers.jsonl"]
    assert not _accepted(two)
    # a subagent's header as the package writes it, and resumed logs that carry the package's seed marker
    header = json.loads((CORPUS / "npm-subagent.jsonl").read_bytes().split(b"\n", 1)[0])
    assert header["origin"] == "subagent" and header["agentPreset"] == "reviewer" and header["delegationDepth"] == 1
    for log, _, result in CASES:
        if log.startswith("npm-resumed-"):
            assert _accepted(result) and result["types"].get("session/end-seed") == 1, log
