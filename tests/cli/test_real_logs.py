"""Revision detection, and validation at the detected revision, on real logs of both revisions.

The logs in ``tests/real_logs/logs`` were not written by this project: the pinned ones
are upstream's own fixture logs at 2f74ac98ba, the published ones were written by the
npm packages (`tests/real_logs/README.md` says how; `tests/real_logs/regenerate.py`
rewrites them).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from cli_helpers import cli, findings
from sessionspec.reference.jsonl import load_artifact, read_artifact
from sessionspec.reference.jsonl_zstd import load_compressed_artifact, read_compressed_artifact
from sessionspec.spec.errors import SeedError
from sessionspec.spec.revisions import DEFAULT_REVISION
from sessionspec.validator.detect import detect_revision

LOGS = Path(__file__).resolve().parents[1] / "real_logs" / "logs"
PINNED, PUB = "2f74ac98ba", "b150a551b8"

# file -> (revision detection must find, an event type of the log that alone is evidence for it)
DETECTED = {
    "pinned-toolchain.jsonl": (PINNED, "assistant/message"),
    "pinned-toolchain-child.jsonl": (PINNED, "user/message"),
    "pinned-steering.jsonl": (PINNED, "steering/message"),
    "published-chat.jsonl": (PUB, "tool/result"),
    "published-resumed.jsonl": (PUB, "session/end-seed"),
    "published-crashed.jsonl.zstd": (PUB, "turn/start"),
    # settings written outside any turn: allowed at the published revision only (INV-10)
    "published-settings.jsonl": (PUB, "approval/policy"),
}
# Logs without revision-specific content: read at the default revision, with a note.
AMBIGUOUS = ["pinned-handshake.jsonl"]
# What validation at the detected revision may still report: upstream's snapshot tool replaced
# the tool list of the request header with a placeholder string.
PLACEHOLDER_FINDINGS = {"pinned-steering.jsonl": [("SCHEMA_VIOLATION", "/data/header/tools")]}


def _events(path: Path) -> list[dict]:
    read = read_compressed_artifact if path.name.endswith(".zstd") else read_artifact
    return list(read(path).events)


# Session stores, each judged by its own tests (tests/cli/test_published_sqlite.py).
STORES = ["published-sqlite14.db"]


def test_the_fixture_set_is_what_the_readme_lists() -> None:
    assert sorted(p.name for p in LOGS.iterdir()) == sorted([*DETECTED, *AMBIGUOUS, *STORES])
    readme = (LOGS.parent / "README.md").read_text()
    assert all(f"`logs/{name}`" in readme for name in [*DETECTED, *AMBIGUOUS, *STORES])


@pytest.mark.parametrize("name", sorted(DETECTED))
def test_detection_names_the_revision_that_wrote_a_real_log(name: str) -> None:
    revision, evidence_type = DETECTED[name]
    events = _events(LOGS / name)
    detection = detect_revision(events)
    assert (detection.revision, detection.ambiguous) == (revision, False), detection.describe()
    assert all(score == 0 for rid, score in detection.scores.items() if rid != revision), detection.scores
    alone = detect_revision([e for e in events if e["type"] == evidence_type])
    assert (alone.revision, alone.ambiguous) == (revision, False) and alone.evidence[0].startswith(evidence_type)
    result = cli("validate", "--format", "json", "--level", "strict", str(LOGS / name))
    report = result.json["files"][0]
    assert report["revision"] == revision and report["revisionReason"].startswith("detected: ")
    found = [(f["code"], f.get("pointer")) for f in findings(result) if f["severity"] == "error"]
    assert found == PLACEHOLDER_FINDINGS.get(name, [])
    named = cli("validate", "--format", "json", "--level", "strict", "--revision", revision, str(LOGS / name))
    assert named.json["files"][0]["errors"] == report["errors"]  # the same verdict as naming the revision


def test_published_logs_are_wrong_at_the_pinned_revision() -> None:
    """Detection matters: the pinned revision rejects each published real log."""
    for name, (revision, _) in DETECTED.items():
        if revision == PUB:
            result = cli("validate", "--format", "json", "--level", "strict", "--revision", PINNED, str(LOGS / name))
            assert result.json["files"][0]["errors"] > 0, name


@pytest.mark.req("JSONL-13")
def test_the_published_load_path_reads_the_pinned_real_logs_upgraded() -> None:
    """The release reads an earlier-format log (JSONL-13): at --level load the published revision accepts each
    pinned real log, as the reference's load path at that revision does, and says what it upgraded."""
    for name, (revision, _) in DETECTED.items():
        if revision == PINNED:
            path = LOGS / name
            load_artifact(path, read_artifact(path).header["id"], durable=False, revision=PUB)  # accepted
            report = cli("validate", "--format", "json", "--level", "load", "--revision", PUB, str(path)).json["files"][0]
            assert report["errors"] == 0 and report["upgraded"].get("turn/start") == 1, (name, report)


@pytest.mark.parametrize("name", AMBIGUOUS)
def test_a_log_without_revision_specific_content_is_read_at_the_default_with_a_note(name: str) -> None:
    detection = detect_revision(_events(LOGS / name))
    assert detection.revision == DEFAULT_REVISION and detection.ambiguous
    assert "no revision-specific content" in detection.note
    report = cli("validate", "--format", "json", str(LOGS / name)).json["files"][0]
    assert report["revision"] == DEFAULT_REVISION and "no revision-specific content" in report["revisionReason"]
    assert report["errors"] == 0  # schema level: the payloads are the same in both revisions


def test_settings_outside_a_turn_read_the_settings_log_at_the_published_revision() -> None:
    """Its log-only settings events sit outside a turn: INV-10 at the pinned revision, allowed at the published
    one, so that is evidence, and the log is clean at every level without flags (DEC-24)."""
    path = str(LOGS / "published-settings.jsonl")
    [report] = cli("validate", "--format", "json", "--level", "strict", path).json["files"]
    assert (report["revision"], report["errors"]) == (PUB, 0), report
    assert report["revisionReason"] == "detected: approval/policy outside a turn at line 2 and 1 more"
    named = cli("validate", "--format", "json", "--level", "strict", "--revision", PINNED, path)
    assert {f["code"] for f in findings(named)} == {"INV_NO_OPEN_TURN"}
    # the pinned load path reads those records (where they are is a strict-level rule): naming it warns of nothing
    assert named.json["files"][0]["revisionReason"] == "given"
    derived = cli("derive", "--revision", PINNED, path)
    assert (derived.code, derived.err) == (0, "")


def test_loading_a_crashed_published_zstd_artifact_closes_it_in_the_published_shape(tmp_path: Path) -> None:
    """REPAIR-8 at the log's revision: the closers are identified tool results, written once, and reload cleanly."""
    path = tmp_path / "session.jsonl.zstd"
    shutil.copyfile(LOGS / "published-crashed.jsonl.zstd", path)
    before = path.read_bytes()
    with pytest.raises(SeedError, match="SEED-6"):  # the pinned revision cannot seed a published log
        load_compressed_artifact(path, "npm-crashed", seed=True)
    assert path.read_bytes() == before  # a failed load writes nothing
    loaded = load_compressed_artifact(path, "npm-crashed", revision=PUB)
    assert [c["type"] for c in loaded.closers] == ["tool/result", "step/end", "turn/end"]
    result = loaded.closers[0]["data"]
    assert result["message"]["id"] == f"interrupted-tool-result-call_run-{loaded.closers[0]['seq']}"
    assert result["message"]["source"] == {"kind": "tool", "callId": "call_run"}
    assert loaded.session.revision == PUB
    assert path.read_bytes() != before
    again = load_compressed_artifact(path, "npm-crashed", revision=PUB)
    assert again.closers == [] and list(again.events) == list(loaded.events)
    assert cli("validate", "--format", "json", "--level", "strict", str(path)).json["files"][0]["errors"] == 0
