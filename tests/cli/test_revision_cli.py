"""--revision on the log commands, and revision detection by content when it is absent."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import cli, jsonl, published_events, turn_events
from sessionspec.reference import json_text

PINNED, PUB = "2f74ac98ba", "b150a551b8"
PUBLISHED_HEADER = {"version": 0, "id": "s1", "createdAt": 1767225600000, "cwd": "/work", "delegationDepth": 0}


@pytest.fixture
def logs(tmp_path: Path) -> dict[str, Path]:
    out = {}
    for name, events in (("pinned", turn_events()), ("published", published_events())):
        path = tmp_path / f"{name}.jsonl"
        path.write_bytes(jsonl(events))
        out[name] = path
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_bytes(jsonl(turn_events()[:2] + [{**published_events()[2], "seq": 2}]))
    out["mixed"] = mixed
    plain = tmp_path / "plain.jsonl"
    plain.write_bytes(jsonl([{"type": "plugin/x", "seq": 0, "time": 1, "data": None}]))
    out["plain"] = plain
    return out


def test_validate_detects_each_revision_and_names_its_evidence(logs):
    result = cli("validate", str(logs["published"]), str(logs["pinned"]), "--format", "json", "--level", "load")
    by_name = {Path(f["file"]).stem: f for f in result.json["files"]}
    assert by_name["published"]["revision"] == PUB and "session/end-seed" in by_name["published"]["revisionReason"]
    assert by_name["pinned"]["revision"] == PINNED and "detected" in by_name["pinned"]["revisionReason"]
    # the published log is sound at its own revision ...
    assert by_name["published"]["errors"] == 0, by_name["published"]["findings"]
    # ... and a crash tail is repaired with published-shaped closers
    assert any(f["code"] == "REPAIR_NEEDED" for f in by_name["published"]["findings"])


def test_a_resumed_log_is_read_at_the_revision_that_reads_it_whole_and_a_silent_one_at_the_default(logs):
    """DEC-24: pinned records, then published ones: the published load path reads them all (the pinned ones
    upgraded), so that is the log's revision; a log without revision-specific content is read at the default."""
    result = cli("validate", str(logs["mixed"]), str(logs["plain"]), "--format", "json")
    by_name = {Path(f["file"]).stem: f for f in result.json["files"]}
    assert by_name["mixed"]["revision"] == PUB, by_name["mixed"]
    assert by_name["mixed"]["revisionReason"] == (
        f"resumed: {PINNED} content up to line 3, read upgraded by {PUB}'s load path; {PUB} content from line 4")
    assert by_name["mixed"]["errors"] == 0 and by_name["mixed"]["upgraded"]["turn/start"] == 1, by_name["mixed"]
    named = cli("validate", str(logs["mixed"]), "--revision", PUB, "--format", "json").json["files"][0]
    assert named["revisionReason"] == "given"  # its load path reads the content: nothing to warn about
    assert by_name["plain"]["revision"] == PINNED and "no revision-specific content" in by_name["plain"]["revisionReason"]


def test_a_given_revision_wins_and_judges_the_log_by_its_rules(logs):
    wrong = cli("validate", str(logs["published"]), "--revision", PINNED, "--format", "json")
    assert wrong.code == 1
    assert wrong.json["files"][0]["revisionReason"] == (
        f"given; its content shows revision {PUB}, which {PINNED}'s load path does not read")
    right = cli("validate", str(logs["published"]), "--revision", "0.1.1-rc.2", "--level", "strict", "--fail-on", "error")
    assert right.code == 0, right.out
    assert "revision b150a551b8 (given)" in cli("validate", "-v", str(logs["published"]), "--revision", PUB).out


@pytest.mark.parametrize("name", ["9.9.9", "b150a551b8-evil", "2f74ac98ba/../x", "\x1b[2Jx\ny", ""])
@pytest.mark.parametrize("command", ["validate", "derive", "fold", "stats", "repair", "conformance", "catalog",
                                     "requirements"])
def test_an_unknown_revision_is_a_usage_error_naming_the_known_ones(command, name, logs, tmp_path):
    argv = {"validate": [str(logs["pinned"])], "derive": [str(logs["pinned"])], "fold": [str(logs["pinned"])],
            "stats": [str(logs["pinned"])], "repair": [str(logs["pinned"]), "-o", str(tmp_path / "out.jsonl")],
            "conformance": [], "catalog": ["--out", str(tmp_path / "cat")], "requirements": ["--check"]}[command]
    result = cli(command, *argv, f"--revision={name}")
    assert result.code == 2
    assert PINNED in result.err and PUB in result.err and "0.1.1-rc.2" in result.err
    assert "Traceback" not in result.err and "\x1b" not in result.err + result.out  # escaped, never raw
    assert result.out == ""
    assert not (tmp_path / "out.jsonl").exists() and not (tmp_path / "cat").exists()


def test_derive_fold_stats_and_repair_follow_the_detected_revision(logs, tmp_path):
    derived = cli("derive", str(logs["published"]))  # a crashed log, as a load gives it (DEC-24)
    assert derived.code == 0 and [m["id"] for m in derived.json] == ["u1", "a1", "interrupted-tool-result-c1-5"]
    assert derived.err == ("sessionspec derive: note: the log ends inside turn 1 (a crash): shown as a load gives "
                           "it, with the 3 closer(s) its crash repair adds (REPAIR-6; `sessionspec repair` writes them)\n")
    assert cli("fold", str(logs["published"])).json["nodes"] == [2, 4, 5]
    stats = cli("stats", str(logs["published"]), "--format", "json").json
    assert stats["revision"] == PUB and stats["surfaceSize"] == 3
    out = tmp_path / "repaired.jsonl"
    assert cli("repair", str(logs["published"]), "-o", str(out)).code == 0
    closers = [json_text.loads(line) for line in out.read_bytes().splitlines()[-3:]]
    assert closers[0]["data"]["message"]["id"] == "interrupted-tool-result-c1-5"
    assert cli("validate", str(out), "--revision", PUB, "--fail-on", "error").code == 0


def test_catalog_renders_one_revision_on_request(tmp_path):
    result = cli("catalog", "--revision", "0.1.1-rc.2", "--out", str(tmp_path))
    assert result.code == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["persistence-catalog-b150a551b8.md"]
    text = (tmp_path / "persistence-catalog-b150a551b8.md").read_text()
    assert "`session/end-seed`" in text and "`steering/message`" not in text


def test_conformance_runs_the_reference_at_the_requested_revision():
    result = cli("conformance", "--revision", "0.1.1-rc.2", "--only", "seed")
    assert result.code == 0, result.out
    assert "revision b150a551b8" in result.out


def test_compressed_and_stored_logs_are_checked_and_repaired_at_their_revision(tmp_path):
    from sessionspec.reference.jsonl_zstd import read_compressed_artifact
    from storage_fixtures import write_cli_zstd, write_db

    packed = write_cli_zstd(tmp_path / "published.jsonl.zstd", [published_events()], dict(PUBLISHED_HEADER))
    db = write_db(tmp_path / "published.db", [published_events()], dict(PUBLISHED_HEADER))
    for path in (packed, db):
        detected = cli("validate", str(path), "--format", "json", "--fail-on", "error").json["files"][0]
        assert (detected["revision"], detected["valid"]) == (PUB, True), detected
        given = cli("validate", str(path), "--format", "json", "--revision", PINNED)
        assert given.code == 1  # the stored form's content is detected too, and the reason says it disagrees
        assert given.json["files"][0]["revisionReason"].startswith(f"given; its content shows revision {PUB}, which ")
    out = tmp_path / "repaired.jsonl.zstd"
    assert cli("repair", str(packed), "-o", str(out)).code == 0
    events = read_compressed_artifact(out.read_bytes()).events
    assert events[-3]["data"]["message"]["id"] == "interrupted-tool-result-c1-5"
    assert cli("repair", str(db), "--in-place").code == 0
    assert cli("validate", str(db), "--revision", PUB, "--fail-on", "error").code == 0
    derived = cli("derive", str(db)).json
    assert derived[-1]["id"] == "interrupted-tool-result-c1-5"
