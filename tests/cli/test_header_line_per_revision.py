"""The header line is checked by the reader of the revision a log is read at (issue 22).

The optional header-line members a revision's reader checks when present are spec data
(``jsonl.headerLineOptionalFields``, per revision). A member of the wrong form is the loader's
refusal of the whole log at that revision (``JSONL_BAD_HEADER``, a load finding at every level,
with or without ``--revision``), not a schema finding; a revision whose reader does not know the
member drops it unread. ``unpack`` rewrites the header as the reader of the log's revision reads it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import HEADER, cli, jsonl, published_events
from sessionspec.spec import load_spec
from sessionspec.spec.revisions import known_revisions

LEVELS = ("load", "schema", "strict")
KNOWN = known_revisions()


def _fields(revision: str) -> dict[str, dict[str, Any]]:
    return load_spec(revision=revision).constants["jsonl"].get("headerLineOptionalFields", {})


def _wrong(form: dict[str, Any]) -> Any:
    """A value of the wrong form for a member: another string for a constant, a number for a string."""
    return f"not-{form['const']}" if "const" in form else 7


def _right(form: dict[str, Any]) -> Any:
    return form.get("const", "reviewer")


CASES = [(rev, key, form) for rev in KNOWN for key, form in _fields(rev).items()]


def test_some_revision_checks_optional_header_members() -> None:
    assert CASES, "no revision lists headerLineOptionalFields: the tests below would prove nothing"


def _log(tmp_path: Path, header: dict[str, Any], name: str = "log.jsonl") -> Path:
    path = tmp_path / name
    path.write_bytes(jsonl(published_events(close=True), header=header))
    return path


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize(("revision", "key", "form"), CASES, ids=[f"{r}-{k}" for r, k, _ in CASES])
def test_a_member_of_the_wrong_form_is_the_loaders_refusal(tmp_path: Path, revision: str, key: str,
                                                          form: dict[str, Any], level: str) -> None:
    path = _log(tmp_path, {**HEADER, key: _wrong(form)})
    for flags in ([], ["--revision", revision]):
        [report] = cli("validate", "--format", "json", "--level", level, *flags, str(path)).json["files"]
        assert report["revision"] == revision, report["revisionReason"]
        found = [(f["code"], f.get("pointer"), f["line"]) for f in report["findings"] if f["severity"] == "error"]
        assert found == [("JSONL_BAD_HEADER", f"/{key}", 1)], (flags, report["findings"])
    for command in ("derive", "fold"):
        refused = cli(command, "--revision", revision, str(path))
        assert refused.code == 1 and "JSONL_BAD_HEADER" in refused.err and refused.out == "", refused.err


@pytest.mark.parametrize(("revision", "key", "form"), CASES, ids=[f"{r}-{k}" for r, k, _ in CASES])
def test_a_member_of_the_right_form_is_read(tmp_path: Path, revision: str, key: str, form: dict[str, Any]) -> None:
    path = _log(tmp_path, {**HEADER, key: _right(form)})
    for level in LEVELS:
        [report] = cli("validate", "--format", "json", "--level", level, "--revision", revision,
                       str(path)).json["files"]
        assert report["findings"] == [], report["findings"]
    # a revision whose reader does not check the member does not refuse the log for it
    for other in KNOWN:
        if key not in _fields(other):
            [report] = cli("validate", "--format", "json", "--level", "load", "--revision", other,
                           str(_log(tmp_path, {**HEADER, key: _wrong(form)}, "wrong.jsonl"))).json["files"]
            assert "JSONL_BAD_HEADER" not in {f["code"] for f in report["findings"]}, report["findings"]


@pytest.mark.parametrize(("revision", "key", "form"), CASES, ids=[f"{r}-{k}" for r, k, _ in CASES])
def test_unpack_and_pack_keep_the_member_its_revision_reads(tmp_path: Path, revision: str, key: str,
                                                             form: dict[str, Any]) -> None:
    path = _log(tmp_path, {**HEADER, key: _right(form)})
    for command in ("unpack", "pack"):
        out = tmp_path / f"{command}.jsonl"
        done = cli(command, str(path), "-o", str(out))
        assert done.code == 0, done.err
        assert json.loads(out.read_bytes().split(b"\n", 1)[0])[key] == _right(form), command
        bad = cli(command, str(_log(tmp_path, {**HEADER, key: _wrong(form)}, "bad.jsonl")), "-o", str(tmp_path / "b"))
        assert bad.code != 0 and not (tmp_path / "b").exists(), bad.err


STORE = Path(__file__).resolve().parents[1] / "real_logs" / "corpus" / "npm-subagent.db"


def test_a_store_sessions_header_row_is_read_at_its_layouts_revision(tmp_path: Path) -> None:
    """A SQLite session's header row (layout 14: the release's) keeps the members that revision reads, and a
    value its reader refuses is refused: the package's load refuses `origin: parent` ("session header origin
    must be \\"subagent\\""), so does validate at every level; the header shows origin and agentPreset."""
    import shutil
    import sqlite3

    good = tmp_path / "good.db"
    shutil.copyfile(STORE, good)
    shown = cli("header", str(good), "--session", "npm-subagent")
    assert shown.code == 0 and (shown.json["origin"], shown.json["agentPreset"]) == ("subagent", "reviewer"), shown.out
    bad = tmp_path / "bad.db"
    shutil.copyfile(STORE, bad)
    with sqlite3.connect(bad) as con:
        con.execute("UPDATE sessions SET origin = 'parent'")
    con.close()
    for level in LEVELS:
        [report] = cli("validate", "--format", "json", "--level", level, str(bad), "--session", "npm-subagent").json["files"]
        assert [(f["code"], f.get("pointer")) for f in report["findings"] if f["severity"] == "error"] == \
            [("JSONL_BAD_HEADER", "/origin")], report["findings"]
        assert "line" not in report["findings"][0]["message"]
