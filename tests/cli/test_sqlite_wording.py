"""A database has no lines: every finding, note and refusal said of a session in a SQLite store names the
session and seqs (#22), on package-written stores with the damage a store can hold."""

from __future__ import annotations

import re
import shutil
import sqlite3
from pathlib import Path

import pytest
from cli_helpers import cli

CORPUS = Path(__file__).resolve().parents[1] / "real_logs" / "corpus"
LINE = re.compile(r"\blines?\b|\bline\(s\)")
DAMAGE = {
    "unreadable-row": "UPDATE events SET data = '{\"turn\":' WHERE seq = 10",
    "unreadable-rows": "UPDATE events SET data = '{\"turn\":' WHERE seq IN (10, 11, 12)",
    "unreadable-last-row": "UPDATE events SET data = '{\"turn\":' WHERE seq = (SELECT max(seq) FROM events)",
    "gap": "DELETE FROM events WHERE seq = 10",
    "not-an-object": "UPDATE events SET data = '[1]' WHERE seq = 3",
    "open-turn": "DELETE FROM events WHERE seq = (SELECT max(seq) FROM events)",
}


@pytest.mark.parametrize("damage", sorted(DAMAGE))
@pytest.mark.parametrize("store", ["npm-all-types.db", "npm-resumed-pinned.db", "npm-crashed-turn.db"])
def test_findings_on_a_store_name_seqs_not_lines(tmp_path: Path, store: str, damage: str) -> None:
    db = tmp_path / store
    shutil.copyfile(CORPUS / store, db)
    con = sqlite3.connect(db)
    con.execute(DAMAGE[damage])
    con.commit()
    con.close()
    said = []
    for level in ("load", "schema", "strict"):
        for revision in ((), ("--revision", "2f74ac98ba"), ("--revision", "b150a551b8")):
            text = cli("validate", "-v", "--max-findings", "0", "--level", level, *revision, str(db))
            said.append(text.out + text.err)
            report = cli("validate", "--format", "json", "--max-findings", "0", "--level", level, *revision, str(db))
            for entry in report.json["files"]:
                said += [f["message"] for f in entry["findings"]] + [entry.get("revisionReason", ""), *entry["notes"]]
                assert all("line" not in f and "column" not in f for f in entry["findings"])
    for command in ("derive", "fold", "stats"):
        said.append(cli(command, str(db)).err)
    assert [s for s in said if LINE.search(s)] == []
    if damage.startswith("unreadable"):
        assert any("its data is not JSON" in s and "seq " in s for s in said)
