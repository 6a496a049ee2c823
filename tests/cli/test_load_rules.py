"""The published load path's reading of stored records (JSONL-13..15) in the CLI, on real logs.

At ``b150a551b8`` the load path upgrades records of the earlier format (JSONL-13), refuses a malformed
one (JSONL-14) and refuses a type it does not know unless the event is marked ``ignorable`` (JSONL-15).
`validate` reports each refusal as a located load finding and says what it upgraded; `derive`, `fold`,
`stats` and `repair` read through the same reference seam (`jsonl.read_stored`). The logs: real
npm-written ones (``tests/real_logs``), published ones written by the reference at ``b150a551b8``, and
pinned ones written by the benchmark generator at the default revision. The oracle is the reference's
own load path (`jsonl.load_artifact` at the revision).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import cli, jsonl, published_events, turn_events
from sessionspec.reference.derive import derive_messages
from sessionspec.reference.jsonl import encode_records, header_line, load_artifact, read_artifact
from sessionspec.reference.surface import fold_surface
from sessionspec.spec.errors import SessionSpecError
from test_fastlog import READABLE, SMALL

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from gen_logs import artifact_bytes, generate_events

PINNED, PUB = "2f74ac98ba", "b150a551b8"
REAL = Path(__file__).resolve().parents[1] / "real_logs" / "logs"
REGISTRY = str(Path(__file__).resolve().parents[1] / "spec" / "plugin_registry")
PING = {"target": {"host": "build.acme.example", "port": 443}, "ok": True, "latencyMs": 12.5}


def _records(path: Path) -> tuple[list[bytes], dict[str, Any]]:
    lines = path.read_bytes().splitlines()
    last = json.loads(lines[-1])
    return lines, last


def _with_turn(path: Path, out: Path, *middle: dict[str, Any]) -> tuple[Path, int]:
    """The real log at ``path`` with one more closed turn holding ``middle`` (seqs and times filled in);
    returns the new file and the file line of the first of ``middle``."""
    lines, last = _records(path)
    seq, time, turn = last["seq"] + 1, last["time"], last["data"]["turn"] + 1
    added = [{"type": "turn/start", "seq": seq, "time": time, "data": {"turn": turn}}]
    added += [{**event, "seq": seq + 1 + i, "time": time} for i, event in enumerate(middle)]
    added.append({"type": "turn/end", "seq": seq + 1 + len(middle), "time": time,
                  "data": {"turn": turn, "reason": {"kind": "completed"}}})
    out.write_bytes(b"\n".join([*lines, *(json.dumps(e, separators=(",", ":")).encode() for e in added)]) + b"\n")
    return out, len(lines) + 2


def _reference_published(path: Path) -> Path:
    """A closed published-revision log written by the reference at ``b150a551b8``."""
    events = published_events("ref", [{"type": "text", "text": "hello"}], close=True)
    header = header_line({"version": 0, "id": "ref", "createdAt": 1, "cwd": "/w", "delegationDepth": 0}, PUB)
    path.write_bytes(json.dumps(header).encode() + b"\n" + encode_records(events))
    return path


def _report(*argv: str) -> dict[str, Any]:
    result = cli("validate", "--format", "json", *argv)
    assert result.code in (0, 1), result.err
    return result.json["files"][0]


def _errors(report: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [(f["code"], f.get("requirement"), f.get("line"), f.get("seq"), f.get("pointer"))
            for f in report["findings"] if f["severity"] == "error"]


def _reference_loads(path: Path, revision: str) -> str | None:
    """None when the reference's load path at ``revision`` accepts the stored log, else its error code."""
    try:
        load_artifact(path, read_artifact(path).header["id"], durable=False, revision=revision)
    except SessionSpecError as error:
        return error.code
    return None


# -- JSONL-15 ------------------------------------------------------------------------------------------

@pytest.mark.req("JSONL-15")
@pytest.mark.parametrize("level", ["load", "schema", "strict"])
@pytest.mark.parametrize("exact", [False, True])
@pytest.mark.parametrize("writer", ["npm", "reference"])
def test_an_unknown_type_in_a_published_log_is_a_located_load_finding(tmp_path: Path, level: str, exact: bool,
                                                                      writer: str):
    base = REAL / "published-chat.jsonl" if writer == "npm" else _reference_published(tmp_path / "ref.jsonl")
    path, line = _with_turn(base, tmp_path / "chat.jsonl", {"type": "acme/ping", "data": PING})
    seq = json.loads(path.read_bytes().splitlines()[line - 1])["seq"]
    flags = ["--level", level, *(["--exact"] if exact else [])]
    for given in ([], ["--revision", PUB]):  # detected from the content, and named
        report = _report(str(path), *flags, *given)
        assert report["revision"] == PUB
        assert _errors(report) == [("JSONL_UNKNOWN_TYPE", "JSONL-15", line, seq, "/type")], report["findings"]
        assert report["findings"][0]["file"] == str(path) and "acme/ping" in report["findings"][0]["message"]
    assert _reference_loads(path, PUB) == "JSONL_UNKNOWN_TYPE"
    pinned = _report(str(path), *flags, "--revision", PINNED)  # the pinned load path has no such rule
    assert "JSONL_UNKNOWN_TYPE" not in {f["code"] for f in pinned["findings"]}


@pytest.mark.req("JSONL-15")
def test_an_unknown_type_marked_ignorable_loads_and_a_registry_makes_a_type_known(tmp_path: Path):
    ignorable, _ = _with_turn(REAL / "published-chat.jsonl", tmp_path / "ignorable.jsonl",
                              {"type": "acme/ping", "data": PING, "ignorable": True})
    assert _reference_loads(ignorable, PUB) is None
    assert _report(str(ignorable), "--level", "strict")["errors"] == 0
    plain, line = _with_turn(REAL / "published-chat.jsonl", tmp_path / "plain.jsonl",
                             {"type": "acme/ping", "data": PING})
    # A plugin's own registry declares the type: known for that run at every level, its payload checked
    # against the plugin's schema (the release's vocabulary is every type its build declares).
    for level in ("load", "schema", "strict"):
        assert _report(str(plain), "--level", level, "--registry", REGISTRY)["errors"] == 0, level
    bad, _ = _with_turn(REAL / "published-chat.jsonl", tmp_path / "bad.jsonl",
                        {"type": "acme/ping", "data": {**PING, "target": {"host": "h", "port": 70000}}})
    assert [(f["code"], f["pointer"]) for f in _report(str(bad), "--registry", REGISTRY)["findings"]] == [
        ("SCHEMA_VIOLATION", "/data/target/port")]
    # ... and without it the published load path refuses the log, as the release would
    assert _errors(_report(str(plain), "--level", "load"))[0][:3] == ("JSONL_UNKNOWN_TYPE", "JSONL-15", line)


@pytest.mark.req("JSONL-15")
def test_the_renamed_compaction_events_of_a_pinned_log_are_unknown_at_the_published_revision(tmp_path: Path):
    """The upgrade does not rename `compact/*` (renamed `compaction/*`): the release refuses such a log."""
    path = tmp_path / "pinned.jsonl"
    path.write_bytes(artifact_bytes(generate_events(150, seed=3, mix=SMALL), packed=True, session_id="gen"))
    report = _report(str(path), "--revision", PUB, "--level", "load")
    refused = [f for f in report["findings"] if f["code"] == "JSONL_UNKNOWN_TYPE"]
    assert refused and all(f["pointer"] == "/type" and f["line"] and f["seq"] is not None for f in refused)
    assert {json.loads(path.read_bytes().splitlines()[f["line"] - 1])["type"] for f in refused} <= {
        "compact/start", "compact/summary", "compact/end"}
    assert report["errors"] == len(refused) and _reference_loads(path, PUB) == "JSONL_UNKNOWN_TYPE"


# -- JSONL-14 ------------------------------------------------------------------------------------------

MALFORMED = [
    ("turn/start", 0, {"turn": 1, "trigger": {"kind": ""}}),
    ("turn/start", 0, {"turn": 1, "trigger": {"kind": "message"}, "extra": 1}),
    ("turn/end", 11, {"turn": 1, "reason": {"kind": "completed", "detail": "x"}}),
    ("turn/end", 11, {"turn": 1, "reason": {"kind": "error", "step": 1, "message": 5}}),
    ("steering/message", 1, {"turn": 1, "content": [{"type": "text", "text": "hi"}]}),
]


@pytest.mark.req("JSONL-14")
@pytest.mark.parametrize(("etype", "seq", "data"), MALFORMED)
def test_a_malformed_earlier_format_record_is_a_located_load_finding(tmp_path: Path, etype: str, seq: int, data: Any):
    events = turn_events()
    events[seq] = {**events[seq], "type": etype, "data": data}
    if etype == "steering/message":
        events[seq].pop("surfaceOp")
    path = tmp_path / "pinned.jsonl"
    path.write_bytes(jsonl(events))
    assert _reference_loads(path, PUB) == "JSONL_LEGACY_MALFORMED"
    for level in ("load", "schema", "strict"):
        report = _report(str(path), "--revision", PUB, "--level", level)
        # one defect, one finding: the schema errors of the payload the load path cannot read are not repeated
        assert _errors(report) == [("JSONL_LEGACY_MALFORMED", "JSONL-14", seq + 2, seq, "/data")], (level, report["findings"])


# -- JSONL-13 ------------------------------------------------------------------------------------------

def _pinned_logs(tmp_path: Path) -> list[Path]:
    """Pinned-format logs the published load path reads: real upstream fixtures and reference-written ones."""
    made = tmp_path / "turns.jsonl"
    made.write_bytes(jsonl(turn_events() + turn_events(2, 12)))
    return [made, REAL / "pinned-toolchain.jsonl", REAL / "pinned-toolchain-child.jsonl", REAL / "pinned-steering.jsonl"]


@pytest.mark.req("JSONL-13")
def test_a_pinned_log_at_the_published_revision_is_read_upgraded_as_the_release_reads_it(tmp_path: Path):
    for path in _pinned_logs(tmp_path):
        stored = read_artifact(path).events
        assert _reference_loads(path, PUB) is None
        for exact in ([], ["--exact"]):
            report = _report(str(path), "--revision", PUB, "--level", "load", *exact)
            assert report["errors"] == 0, (path.name, report["findings"])
            kinds = {e["type"] for e in stored if e["type"] in ("turn/start", "user/message", "assistant/message",
                                                                "tool/result", "steering/message")}
            assert set(report["upgraded"]) == kinds and sum(report["upgraded"].values()) >= len(kinds), path.name
        text = cli("validate", str(path), "--revision", PUB, "--level", "load").out
        assert "earlier-format record(s) read upgraded (JSONL-13: " in text
        # detection still reads the pinned log at the pinned revision: nothing upgraded, nothing new to say
        detected = _report(str(path), "--level", "load")
        assert detected["revision"] == PINNED and "upgraded" not in detected and detected["errors"] == 0


@pytest.mark.req("JSONL-13")
def test_the_upgrade_runs_before_the_later_checks(tmp_path: Path):
    """A record checked after its upgrade: a tool/result replacement inherits the id it replaces (SEED-18 would
    refuse a replacement without one), and a surface error is still reported on the upgraded record."""
    events = turn_events()
    path = tmp_path / "pinned.jsonl"
    broken = [*events[:11], {**events[9], "seq": 11, "surfaceOp": {"op": "replace", "start": 9, "end": 9},
                             "sourceEventSeqs": [9]}, {**events[11], "seq": 12}]
    path.write_bytes(jsonl(broken))
    assert _reference_loads(path, PUB) is None
    assert _report(str(path), "--revision", PUB, "--level", "strict")["errors"] == 0
    derived = json.loads(cli("derive", str(path), "--revision", PUB).out)
    assert [m["id"] for m in derived] == ["legacy-message:s1:1", "legacy-message:s1:7", "legacy-message:s1:9"]
    bad = [*broken[:11], {**broken[11], "surfaceOp": {"op": "replace", "start": 9, "end": 30}}, broken[12]]
    path.write_bytes(jsonl(bad))
    code = _reference_loads(path, PUB)
    assert code is not None and [f[0] for f in _errors(_report(str(path), "--revision", PUB))] == [code]


# -- derive, fold, stats, repair -----------------------------------------------------------------------

@pytest.mark.req("JSONL-13")
def test_derive_fold_and_stats_read_a_pinned_log_as_the_published_load_path_does(tmp_path: Path):
    for path in _pinned_logs(tmp_path)[:2]:
        loaded = load_artifact(path, read_artifact(path).header["id"], durable=False, revision=PUB)
        expected = derive_messages(list(loaded.session.events), PUB)
        assert json.loads(cli("derive", str(path), "--revision", PUB).out) == json.loads(json.dumps(expected))
        assert all(m["id"].startswith("legacy-message:") for m in expected if "tool-result" not in str(m["content"]))
        folded = cli("fold", str(path), "--revision", PUB).json
        assert folded == json.loads(json.dumps(fold_surface(list(loaded.session.events), PUB)))
        stats = cli("stats", str(path), "--revision", PUB, "--format", "json").json
        assert stats["surfaceSize"] == len(folded["nodes"])


def _stored(form: str, path: Path, events: list[dict[str, Any]], header: dict[str, Any]) -> tuple[Path, str]:
    """``events`` stored in ``form`` (two batches), and where `validate` locates the event of seq 5 in it."""
    from storage_fixtures import write_cli_zstd, write_db

    if form == "jsonl":
        path.write_bytes(jsonl(events, header_line(header, PUB)))
        return path, f"{path}:7:"
    if form == "jsonl-zstd":
        return write_cli_zstd(path.with_suffix(".jsonl.zstd"), [events[:3], events[3:]], header), \
            f"{path.with_suffix('.jsonl.zstd')}:7:"
    db = write_db(path.with_suffix(".db"), [events[:3], events[3:]], header)
    return db, f"{db}#{header['id']}:"


@pytest.mark.req("JSONL-15")
@pytest.mark.parametrize("form", ["jsonl", "jsonl-zstd", "sqlite"])
@pytest.mark.parametrize("command", ["derive", "fold", "repair"])
def test_commands_refuse_what_the_published_load_path_refuses_with_located_findings(tmp_path: Path, command: str,
                                                                                    form: str):
    from test_revision_cli import PUBLISHED_HEADER

    events = published_events()  # written by the reference at b150a551b8: seqs 0-4
    events.append({"type": "acme/ping", "seq": 5, "time": events[-1]["time"], "data": PING})
    path, where = _stored(form, tmp_path / "log.jsonl", events, dict(PUBLISHED_HEADER))
    before = path.read_bytes()
    out = tmp_path / ("out" + "".join(path.suffixes))
    result = cli(command, str(path), *(["-o", str(out)] if command == "repair" else []))
    assert result.code == 1 and not out.exists() and path.read_bytes() == before
    assert f"{where} error [JSONL_UNKNOWN_TYPE JSONL-15] " in result.err and "seq 5 at /type" in result.err, result.err
    stats = cli("stats", str(path), "--format", "json")
    # stats still counts what is stored; the surface is unknown, and the refusal said (DEC-24)
    assert stats.code == 1 and stats.json["surfaceSize"] is None and stats.json["events"] == 6
    assert "JSONL_UNKNOWN_TYPE JSONL-15" in stats.err


@pytest.mark.req("JSONL-13")
@pytest.mark.parametrize("form", ["jsonl", "jsonl-zstd"])
def test_repair_at_the_published_revision_writes_what_the_release_writes_on_load(tmp_path: Path, form: str):
    """DEC-22: the torn tail cut and the closers the published load path appends, the earlier-format records
    left as stored: byte for byte the file the reference's durable load at the revision leaves."""
    from sessionspec.reference.jsonl_zstd import load_compressed_artifact
    from storage_fixtures import write_cli_zstd

    events = turn_events(close=False)[:9]  # a crash after the tool call
    header = {"version": 0, "id": "s1", "createdAt": 1767225600000, "cwd": "/work", "delegationDepth": 0}
    if form == "jsonl":
        path = tmp_path / "crashed.jsonl"
        path.write_bytes(jsonl(events) + b'{"type":"step/en')
        load = load_artifact
    else:
        path = write_cli_zstd(tmp_path / "crashed.jsonl.zstd", [events[:5], events[5:]], header)
        load = load_compressed_artifact
    before = path.read_bytes()
    out = tmp_path / ("out" + "".join(path.suffixes))
    result = cli("repair", str(path), "--revision", PUB, "-o", str(out))
    assert result.code == 0, result.err
    assert path.read_bytes() == before  # the input is never touched
    twin = tmp_path / ("twin" + "".join(path.suffixes))
    shutil.copyfile(path, twin)
    loaded = load(twin, "s1", revision=PUB)  # the release's own repair: durable
    assert [c["type"] for c in loaded.closers] == ["tool/result", "step/end", "turn/end"]
    assert out.read_bytes() == twin.read_bytes()
    report = _report(str(out), "--revision", PUB, "--level", "strict")
    assert report["errors"] == 0 and report["upgraded"]
    pinned = tmp_path / ("pinned-out" + "".join(path.suffixes))  # OUT named for FILE's form (one output policy)
    assert cli("repair", str(path), "-o", str(pinned)).code == 0  # detected: pinned, as before


# -- the published npm package as the oracle -----------------------------------------------------------

def _npm_load(adapter: Path, logs: dict[str, bytes]) -> dict[str, dict[str, Any]]:
    """Each log loaded by `@deepseek-ai/dsh-session-persistence-jsonl` through the Node adapter (`jsonl-load`:
    the package's load path with its durable crash repair): ``{"result": ...}`` or ``{"code": ...}``."""
    names = sorted(logs)
    lines = [json.dumps({"seq": 1, "op": "start", "args": {"protocolVersion": 1}})]
    for seq, name in enumerate(names, 2):
        text = logs[name].decode()
        lines.append(json.dumps({"seq": seq, "op": "jsonl-load",
                                 "args": {"id": json.loads(text.splitlines()[0])["id"], "data": {"text": text}}}))
    done = subprocess.run(["node", str(adapter / "adapter.mjs")], input="\n".join(lines) + "\n",
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    start, *replies = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r["seq"] for r in replies] == list(range(2, len(names) + 2)), done.stderr
    code_map = start["result"].get("codeMap", {})  # the package's message templates -> sessionspec codes
    for reply in replies:
        if "code" in reply:
            reply["code"] = code_map.get(reply["code"], reply["code"])
    return dict(zip(names, replies, strict=True))


@pytest.mark.req("JSONL-13")
@pytest.mark.req("JSONL-14")
@pytest.mark.req("JSONL-15")
def test_the_cli_gives_the_published_packages_verdict_and_writes_its_repair(tmp_path: Path, node_adapter_dir: Path):
    """The npm package loads the same files: the CLI's load-level verdict at b150a551b8 is the package's
    (refused with the package's code, or accepted), `repair` writes the file the package's own load leaves
    (DEC-22) and `derive` gives the messages of the events the package loaded."""
    events = turn_events(close=False)[:9]
    logs = {
        "crashed-pinned": jsonl(events) + b'{"type":"step/en',
        "ignorable": _with_turn(REAL / "published-chat.jsonl", tmp_path / "i.jsonl",
                                {"type": "acme/ping", "data": PING, "ignorable": True})[0].read_bytes(),
        "unknown": _with_turn(REAL / "published-chat.jsonl", tmp_path / "u.jsonl",
                              {"type": "acme/ping", "data": PING})[0].read_bytes(),
        "compaction": artifact_bytes(generate_events(150, seed=3, mix=SMALL), packed=True, session_id="gen"),
        "generated": READABLE["packed"], "generated-unpacked": READABLE["unpacked"],
        **{path.stem: path.read_bytes() for path in _pinned_logs(tmp_path)},
    }
    for i, (etype, seq, data) in enumerate(MALFORMED):
        broken = turn_events()
        broken[seq] = {**broken[seq], "type": etype, "data": data}
        logs[f"malformed-{i}"] = jsonl(broken)
    npm = _npm_load(node_adapter_dir, logs)
    refused = 0
    for name, data in logs.items():
        path = tmp_path / f"{name}.jsonl"
        path.write_bytes(data)
        report = _report(str(path), "--revision", PUB, "--level", "load", "--exact")
        codes = {f["code"] for f in report["findings"] if f["severity"] == "error"}
        reply = npm[name]
        if reply["kind"] != "result":
            refused += 1
            assert reply["code"] in codes, (name, reply, codes)
            continue
        assert not codes, (name, report["findings"])
        out = tmp_path / f"{name}.repaired.jsonl"
        assert cli("repair", str(path), "--revision", PUB, "-o", str(out)).code == 0, name
        assert out.read_text() == reply["result"]["data"]["text"], name
        derived = json.loads(cli("derive", str(out), "--revision", PUB).out)
        assert derived == json.loads(json.dumps(derive_messages(reply["result"]["events"], PUB))), name
    assert refused == 2 + len(MALFORMED)  # unknown, compaction and the malformed records


@pytest.mark.req("JSONL-13")
def test_repair_of_a_stored_earlier_format_session_keeps_its_rows(tmp_path: Path):
    """DEC-22 in a SQLite store: the closers the published load path appends, the earlier-format rows as stored."""
    from sessionspec.reference.sqlite_store import SqliteStore
    from storage_fixtures import write_db

    events = turn_events(close=False)[:9]
    db = write_db(tmp_path / "s.db", [events[:5], events[5:]])
    out = tmp_path / "out.db"
    assert cli("repair", str(db), "--revision", PUB, "-o", str(out)).code == 0
    twin = tmp_path / "twin.db"
    shutil.copyfile(db, twin)
    with SqliteStore.open(twin, writable=True) as store:
        closers = store.repair(["s1"], revisions={"s1": PUB})[0].closers
    with SqliteStore.open(out) as repaired, SqliteStore.open(twin) as released:
        stored = list(repaired.read_session("s1").events)
        assert stored == list(released.read_session("s1").events)
    assert stored[:9] == events and stored[9:] == closers and closers[0]["data"]["message"]["id"].startswith("interrupted")
    assert _report(str(out), "--revision", PUB, "--level", "strict")["errors"] == 0


LOGS = Path(__file__).resolve().parents[1] / "real_logs" / "logs"


@pytest.mark.parametrize("command", ["derive", "fold", "stats"])
def test_a_given_revision_the_content_contradicts_is_said(command: str) -> None:
    """--revision naming an older revision than the content shows: a warning, and the log refused with the
    located findings of that revision's load (the output would be the log read wrongly); naming a newer one
    whose load path reads the content upgraded, or the content's own: silence (DEC-24)."""
    published, pinned = str(LOGS / "published-chat.jsonl"), str(LOGS / "pinned-toolchain.jsonl")
    wrong = cli(command, published, "--revision", "2f74ac98ba")
    assert wrong.code == 1
    assert (f"sessionspec {command}: warning: its content shows revision b150a551b8, which 2f74ac98ba's load path "
            "does not read; read at 2f74ac98ba as --revision asks") in wrong.err
    assert "published-chat.jsonl:6: error [SEED_PROVENANCE SEED-6] seq 7" in wrong.err, wrong.err
    assert command == "stats" or wrong.out == ""  # never malformed output
    upgraded = cli(command, pinned, "--revision", "b150a551b8")
    assert upgraded.code == 0 and upgraded.err == ""
    assert cli(command, published, "--revision", "b150a551b8").err == ""


def test_validate_says_when_the_given_revision_is_not_the_contents() -> None:
    [entry] = cli("validate", str(LOGS / "published-chat.jsonl"), "--revision", "2f74ac98ba",
                  "--format", "json").json["files"]
    assert entry["revision"] == "2f74ac98ba"
    assert entry["revisionReason"] == "given; its content shows revision b150a551b8, which 2f74ac98ba's load path does not read"
    [entry] = cli("validate", str(LOGS / "published-chat.jsonl"), "--revision", "b150a551b8",
                  "--format", "json").json["files"]
    assert entry["revisionReason"] == "given"
