"""Operators: a multi-session store lists its sessions (exit 2); a type in no registry is a warning naming it."""

from __future__ import annotations

import io
import json

from sessionspec import cli
from sessionspec.reference.sqlite_store import SqliteStore
from storage_fixtures import HEADER, one_turn


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = cli.run(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def test_stats_and_header_on_a_store_of_several_list_the_sessions_and_each_works(tmp_path):
    db = tmp_path / "many.db"
    ids = ["s1", "odd #id\x1b[31m"]
    with SqliteStore.create(db) as store:
        for sid in ids:
            store.append({**HEADER, "id": sid}, one_turn())
    for command in ("stats", "header"):
        code, out, err = run(command, str(db))
        assert code == 2 and out == "" and "holds 2 sessions; pick one with --session ID" in err
        assert '"s1"' in err and "\x1b" not in err and "Traceback" not in err
        for sid in ids:
            code, out, err = run(command, str(db), "--session", sid)
            assert code == 0, err


def test_a_type_in_no_registry_is_one_warning_naming_it(tmp_path):
    events = [{"type": "turn/start", "seq": 0, "time": 1, "data": {"turn": 1, "trigger": {"kind": "message", "source": {"kind": "user"}}}},
              {"type": "zzz/odd\u202e\x1b", "seq": 1, "time": 2, "data": {"a": 1}},
              {"type": "zzz/odd\u202e\x1b", "seq": 2, "time": 3, "data": {"a": 2}},
              {"type": "turn/end", "seq": 3, "time": 4, "data": {"turn": 1, "reason": {"kind": "completed"}}}]
    header = {"type": "session", **HEADER}
    log = tmp_path / "u.jsonl"
    log.write_text("".join(json.dumps(v) + "\n" for v in [header, *events]), encoding="utf-8")
    for level in ("schema", "strict"):
        code, out, _ = run("validate", "--level", level, "--format", "json", str(log))
        findings = json.loads(out)["files"][0]["findings"]
        assert code == 1 and [(f["code"], f["severity"], f["line"], f["pointer"]) for f in findings] == [
            ("EVENT_TYPE_UNREGISTERED", "warning", 3, "/type")]
    code, out, _ = run("validate", str(log))
    assert "EVENT_TYPE_UNREGISTERED" in out and "\x1b" not in out and "\u202e" not in out
    assert run("validate", "--fail-on", "error", str(log))[0] == 0
    assert run("validate", "--level", "load", str(log))[0] == 0  # the load level knows no registry


def test_every_single_session_command_lists_a_store_of_several_alike_and_escaped(tmp_path):
    """stats, header, derive, fold, pack, unpack: the same list and exit 2; an unknown --session one message
    for all of them and repair; the store's path and the ids escaped (a newline in the name forges no line)."""
    db = tmp_path / "many\n\x1b.db"
    ids = ["s1", "odd #id\x1b[31m\u0085"]
    with SqliteStore.create(db) as store:
        for sid in ids:
            store.append({**HEADER, "id": sid}, one_turn())
    single = ("stats", "header", "derive", "fold", "pack", "unpack")
    messages = set()
    for command in single:
        extra = ("-o", str(tmp_path / f"{command}.out")) if command in ("pack", "unpack") else ()
        code, out, err = run(command, str(db), *extra)
        assert code == 2 and out == "" and "Traceback" not in err, err
        head, *listed = err.rstrip("\n").split("\n")
        assert head.startswith(f"sessionspec {command}: error: ") and "holds 2 sessions" in head
        assert len(listed) == 2 and {json.loads(line.strip()) for line in listed} == set(ids)  # pasteable
        assert "\x1b" not in err and "\x85" not in err
        messages.add(err.partition(": error: ")[2])
    assert len(messages) == 1
    unknown = set()
    for command in (*single, "repair"):
        extra = ("-o", str(tmp_path / f"{command}.out")) if command in ("pack", "unpack", "repair") else ()
        code, out, err = run(command, str(db), "--session", "nope\x1b", *extra)
        assert code == 2 and err.count("\n") == 1 and "\x1b" not in err, err
        unknown.add(err.partition(": error: ")[2])
    where = str(db).replace("\n", "\\n").replace("\x1b", "\\u001b")
    assert unknown == {f'{where}: no session "nope\\u001b" in the database (it holds 2)\n'}
    code, out, err = run("repair", str(db), "-o", str(tmp_path / "all.db"))  # repair works on every session
    assert code == 0 and "2 session(s) repaired" in out, err
