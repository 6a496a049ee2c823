"""Every command on every class of hostile input (issue 25, "done when"): crafted SQLite stores, zstd bombs,
hostile registries and output targets. Each command of the CLI's own parser that takes an input of a class is
run on each input of it in a child under the hostile limits (`hostile_limits`: 20 s CPU per command, 1 GB
resident), and must end with exit 1 or 2, a finding that names the input (or target), no traceback, its
input unchanged and nothing written. The reproducers are made here; a command the parser gains is swept by
the role its arguments have (a positional FILE, `--registry DIR`, `-o OUT`, ...), or the test says it has none.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import zstandard
from hostile_limits import modes_can_bind, run_each
from sessionspec.cli import build_parser, command_parser
from sessionspec.reference.jsonl import encode_records
from sessionspec.reference.sqlite_store import SqliteStore
from sessionspec.reference.zstd_frames import VALUE_FLOOR, compress_frame
from storage_fixtures import HEADER, header_bytes, one_turn, open_turn, write_db, write_raw
from test_hostile_stores import CRAFTS

#: positional metavars that name an input file, and options that name one
INPUT_POSITIONALS = {"FILE", "TRACE", "REPORT", "RUN.jsonl"}
INPUT_OPTIONS = {"--expect"}
#: options that name a folder of untrusted JSON (a registry, vectors), and the registry command's action
REGISTRY_OPTIONS = {"--registry", "--vectors"}
#: options that name what a command writes
OUTPUT_OPTIONS = {"-o", "--output", "--html", "--junit", "--report", "--trace", "--write-expect"}
#: options that name a folder a command writes files of its own naming into (`test_output_targets.py` has catalog's)
OUTPUT_FOLDERS = {"--out", "--trace-dir"}
#: options whose value is no path (a new option must be put in a class, so a new output is swept)
NOT_PATHS = {"--impl", "--only", "-k", "--deselect", "--maxfail", "--fuzz", "--machine", "--jobs", "--timeout",
             "--format", "--revision", "--sqlite-layout", "--session", "--level", "--max-findings", "--fail-on",
             "--dask"}
#: an input the sweep does not feed: a previous run's report, read by `load_report`, which `report` (swept) shares
INPUTS_ELSEWHERE = {"--last-failed"}
#: commands without an input of these classes: an adapter (`tests/conformance/test_harness_bounds.py`), or none
NO_HOSTILE_INPUT = {"smoke", "requirements"}
#: keep the suite commands cheap: one requirement's cases
CHEAP = {"conformance": ["--only", "ZSTD-4"]}


def _commands() -> list[str]:
    sub = next(a for a in build_parser()._actions if a.__class__.__name__ == "_SubParsersAction")
    return list(sub.choices)  # type: ignore[attr-defined]


def _roles(name: str) -> dict[str, list[Any]]:
    """The command's arguments by role: input positionals/options, registry options, outputs."""
    parser, _ = command_parser(name)
    roles: dict[str, list[Any]] = {"input": [], "registry": [], "output": []}
    for action in parser._actions:
        options = set(action.option_strings)
        if not options and action.metavar in INPUT_POSITIONALS:
            roles["input"].append(action)
        elif not options and name == "registry":  # `registry check DIR...`
            roles["registry"].append(action)
        elif options & INPUT_OPTIONS:
            roles["input"].append(action)
        elif options & REGISTRY_OPTIONS:
            roles["registry"].append(action)
        elif options & OUTPUT_OPTIONS:
            roles["output"].append(action)
    return roles


def test_every_option_with_a_value_has_a_role() -> None:
    """A value-taking argument the parser gains is classed here (input, registry, output, output folder, or no
    path), so a new output is in the output sweep below without anyone remembering to add it."""
    classed = INPUT_OPTIONS | REGISTRY_OPTIONS | OUTPUT_OPTIONS | OUTPUT_FOLDERS | NOT_PATHS | INPUTS_ELSEWHERE
    for name in _commands():
        parser, _ = command_parser(name)
        for action in parser._actions:
            if action.option_strings and action.nargs != 0:
                assert set(action.option_strings) & classed, (name, action.option_strings)


def test_every_command_has_a_hostile_input_or_says_why_not() -> None:
    swept = {name for name in _commands() if any(_roles(name).values())}
    assert set(_commands()) - swept == NO_HOSTILE_INPUT


def _flag(action: Any) -> str:
    return max(action.option_strings, key=len)


def _argvs(name: str, role: str, value: str, folder: Path) -> list[list[str]]:
    """``name`` with ``value`` in each of its arguments of ``role`` (one run each), the others benign: outputs
    in ``folder`` where one is needed, a benign crashed log where a log is."""
    roles = _roles(name)
    runs = []
    for target in roles[role]:
        argv = [name, *CHEAP.get(name, [])]
        if name == "registry":
            argv.append("check")
        argv += [_flag(target), value] if target.option_strings else [value]
        if role != "output":
            for action in roles["output"]:
                if action.required or _flag(action) == "--output":  # (repair's -o is in a required group)
                    argv += [_flag(action), str(folder / f"out-{name}{'.html' if 'html' in _flag(action) else ''}")]
            if name == "catalog":
                argv += ["--out", str(folder / "out-catalog")]  # never the checkout's catalogs
        if role != "input":
            argv += [str(folder / "crashed.jsonl") for a in roles["input"] if not a.option_strings]
        runs.append(argv)
    return runs


def _sweep(role: str, value: str, folder: Path) -> list[list[str]]:
    return [argv for name in _commands() for argv in _argvs(name, role, value, folder)]


# ---------------------------------------------------------------- hostile files


def _store(folder: Path, name: str, statements: list[str], base: Path) -> Path:
    path = folder / f"{name}.db"
    shutil.copy(base, path)
    db = sqlite3.connect(path)
    for statement in statements:
        db.execute(statement)
    db.commit()
    db.close()
    return path


def _zstd(folder: Path, name: str, body: bytes, frames: int = 1) -> Path:
    """A header frame and ``body`` in ``frames`` frames (a frame per line when ``frames`` > 1)."""
    compressor = zstandard.ZstdCompressor(write_checksum=True)
    if frames == 1:
        parts = [compressor.compress(body)]
    else:
        lines = body.splitlines(keepends=True)
        parts = [compressor.compress(line) for line in lines]
    path = folder / f"{name}.jsonl.zstd"
    path.write_bytes(compress_frame(header_bytes()) + b"".join(parts))
    return path


@pytest.fixture(scope="module")
def hostile_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return make_hostile_files(tmp_path_factory.mktemp("hostile"), tmp_path_factory.mktemp("base"))


def make_hostile_files(folder: Path, scratch: Path) -> dict[str, Path]:
    """Every hostile file of the sweep, by kind, in ``folder`` (with the benign ``crashed.jsonl`` the other
    arguments take); ``scratch`` holds the store they are crafted from (also `hostile_campaign.py`'s corpus)."""
    base = write_db(scratch / "base.db", [one_turn()])
    files = {name: _store(folder, name, statements, base) for name, statements in CRAFTS.items()}
    events = one_turn()
    head, tail = encode_records(events[:5]), encode_records(events[5:])
    # zstd bombs: blank lines past the value budget; one array past it; one huge string (a seq a loader refuses);
    # many frames, each a blank line inside the committed turn
    files["zstd-blank-lines"] = _zstd(folder, "zstd-blank-lines", head + b"\n" * (2 * VALUE_FLOOR) + tail)
    files["zstd-huge-array"] = _zstd(folder, "zstd-huge-array", head + b"[" + b"0," * (3 * VALUE_FLOOR) + b"0]\n" + tail)
    files["zstd-huge-string"] = _zstd(folder, "zstd-huge-string", head + b'{"type":"step/end","seq":"' + b"a" * (
        16 << 20) + b'","time":1,"data":{}}\n' + tail)
    files["zstd-many-frames"] = _zstd(folder, "zstd-many-frames", head + b"\n" * 20_000 + tail, frames=2)
    # a layout-17 store whose rows' zstd data holds one array past the store's value budget
    rows = folder / "sqlite-huge-values.db"
    with SqliteStore.create(rows, revision="b150a551b8") as store:
        store.append(HEADER, events)
    data = b'{"content":[{"type":"text","text":"' + b"," * (2 * VALUE_FLOOR) + b'"}],"source":{"kind":"user"}}'
    db = sqlite3.connect(rows)
    db.execute("UPDATE events SET data = ? WHERE seq = 1", (zstandard.ZstdCompressor().compress(data),))
    db.commit()
    db.close()
    files["sqlite-huge-values"] = rows
    # a store whose schema text is not UTF-8 and a file that is not text at all
    files["not-text"] = folder / "not-text.jsonl"
    files["not-text"].write_bytes(b"\xff\xfe" + os.urandom(4096))
    write_raw(folder / "crashed.jsonl", [[*one_turn(), *open_turn(6)]])
    return files


def _digests(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir()) if p.is_file()}


def _check(results: list[dict[str, Any]], named: str, codes: tuple[int, ...] = (1, 2)) -> None:
    for result in results:
        text = result["out"] + result["err"]
        assert result["code"] in codes, (result["argv"], result["code"], text[-1500:])
        assert named in text, (result["argv"], named, text[-1500:])  # located: names what it refuses


#: the commands that read a log, and the code they refuse each hostile file with (a crafted store's layout: SQLITE_LAYOUT)
LOG_COMMANDS = {"validate", "header", "stats", "derive", "fold", "repair", "pack", "unpack"}
FILE_CODES = {"schema-not-utf8": "SQLITE_NOT_DATABASE", "sqlite-huge-values": "ZSTD_TOO_MANY_VALUES",
              "zstd-blank-lines": "ZSTD_TOO_MANY_VALUES", "zstd-huge-array": "ZSTD_TOO_MANY_VALUES",
              "zstd-huge-string": "JSONL_CORRUPT", "zstd-many-frames": "JSONL_CORRUPT", "not-text": "JSONL_BAD_HEADER"}


@pytest.mark.parametrize("kind", [*sorted(CRAFTS), "zstd-blank-lines", "zstd-huge-array", "zstd-huge-string",
                                  "zstd-many-frames", "sqlite-huge-values", "not-text"])
def test_every_command_on_a_hostile_file(kind: str, hostile_files: dict[str, Path], tmp_path: Path) -> None:
    source = hostile_files[kind]
    shutil.copy(source.parent / "crashed.jsonl", tmp_path / "crashed.jsonl")
    before = _digests(source.parent)
    results = run_each(_sweep("input", str(source), tmp_path))
    _check(results, source.name)
    # the commands that read it as a log refuse it for what it is, not for something on the way there
    code = FILE_CODES.get(kind, "SQLITE_LAYOUT")
    logs = [r for r in results if r["argv"][0] in LOG_COMMANDS]
    assert len(logs) == len(LOG_COMMANDS)
    for result in logs:
        assert code in result["out"] + result["err"], (result["argv"], code, (result["out"] + result["err"])[-1500:])
    assert _digests(source.parent) == before  # inputs are never modified, nothing appears beside them
    assert sorted(os.listdir(tmp_path)) == ["crashed.jsonl"]  # nothing written


# ---------------------------------------------------------------- hostile registries


_SCHEMA_HEAD = b'{"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "$ID", "type": "object", '
#: a payload schema the registry's examples agree with (the hostile part is all a refusal can be about)
_GOOD_SCHEMA = _SCHEMA_HEAD + b'"properties": {"s": {"type": "string"}}}'


def _registry(root: Path, schema_text: bytes, event_type: str = "gen/x") -> Path:
    """A registry of one event type, with a valid and an invalid example the schema (hostile part aside) tells
    apart, so the meta-schema and the example checks pass and only the hostile part can be refused."""
    (root / "events").mkdir(parents=True)
    (root / "schemas").mkdir()
    schema_id = "https://gen.example/payload/x.json"
    # an example whose value makes a backtracking pattern run for ever (the ReDoS registries match it)
    example = {"description": "A value a catastrophic pattern never finishes.",
               "event": {"type": event_type, "seq": 5, "time": 1767225600000, "data": {"s": "a" * 40 + "!", "a" * 40 + "!": "x"}}}
    bad = {"event": {**example["event"], "data": {"s": 5, "a" * 40 + "!": "x"}}, "reason": "Not a string.",
           "path": "/data/s"}
    entry = {"type": event_type, "owner": "@gen/hostile", "class": "log-only", "outOfBand": False,
             "enclosure": "turn", "description": "A hostile schema.", "payloadSchema": schema_id,
             "provenance": "Log-only.", "requirements": ["APPEND-6"], "examples": {"valid": [example], "invalid": [bad]}}
    (root / "events" / "gen.json").write_text(json.dumps({"events": [entry]}), encoding="utf-8")
    (root / "schemas" / "x.json").write_bytes(schema_text.replace(b"$ID", schema_id.encode()))
    return root


def _vectors(root: Path, fragment: bytes) -> Path:
    """A vectors folder of one case file whose one case seeds ``fragment`` (JSON text, or not), its id right where
    the fragment parses, so only the hostile part can be refused."""
    root.mkdir()
    case = {"description": "d", "requirements": ["SEED-3"], "level": "MUST", "capability": "load",
            "input": {"op": "load", "args": {"seed": ["FRAGMENT"]}},
            "expect": {"rejected": {"code": "SEED_ENVELOPE", "index": 0}}}
    case_file = {"$schema": "https://sessionspec.dev/schema/protocol/case-file.json", "area": "defects",
                 "description": "A hostile vector file.", "cases": [{"id": "0" * 16, **case}]}
    text = json.dumps(case_file).encode().replace(b'"FRAGMENT"', fragment)
    (root / "defects.json").write_bytes(text)
    return root


#: kind: (payload schema, a JSON fragment for a vector file or None, what the registry's refusal says, what the
#: vector file's refusal says). Every registry command (`registry check`, `validate --registry`, `catalog
#: --registry`) must refuse with the registry reason, `conformance --vectors` with the vector reason.
REGISTRIES: dict[str, tuple[bytes, bytes | None, tuple[str, ...], tuple[str, ...]]] = {
    "not-utf8": (_SCHEMA_HEAD + b'"title": "\xff", "properties": {"s": {"type": "string"}}}', b'"\xff"',
                 ("not UTF-8 text", "SPEC_REGISTRY_INVALID", "x.json"), ("not UTF-8 text", "defects.json")),
    "huge-integer": (_SCHEMA_HEAD + b'"properties": {"s": {"type": "string"}}, "maximum": ' + b"9" * 5000 + b"}",
                     b"9" * 5000, ("not a usable JSON number", "SPEC_REGISTRY_INVALID", "x.json"),
                     # (read as JSON, the case file is refused where the integer starts: past the 4,000 digits the
                     # exact reader holds, DEC-3; it was refused at its case id, past Python's 4,300)
                     ("digits is past the 4000 this reader holds exactly", "defects.json", "JSON_TEXT_INVALID")),
    "deep": (_SCHEMA_HEAD + b'"properties": {"s": {"type": "string"}}, "x": ' + b"[" * 200_000 + b"]" * 200_000
             + b"}", None, ("nested too deeply", "SPEC_REGISTRY_INVALID", "x.json"), ()),
    "not-json": (_SCHEMA_HEAD + b'"properties": {"s": {"type": "string"}}, ', b'{"type": ',
                 ("not JSON", "SPEC_REGISTRY_INVALID", "x.json"), ("JSON_TEXT_INVALID", "defects.json")),
    # a reference outside the registry: nothing is retrieved (no file, no network), every command refuses it
    "ref-outside": (_SCHEMA_HEAD + b'"properties": {"s": {"type": "string"}, "t": {"$ref": "file:///etc/passwd"}, '
                    b'"u": {"$ref": "http://169.254.169.254/latest/meta-data"}}}', None,
                    ("resolves to nothing loaded", "SPEC_REGISTRY_INVALID", "x.json#/properties/"), ()),
    "redos-pattern": (_SCHEMA_HEAD + b'"properties": {"s": {"type": "string", "pattern": "(a+)+$"}}}', None,
                      ("SPEC_REGISTRY_PATTERN_UNSAFE", "x.json#/properties/s/pattern"), ()),
    "redos-pattern-properties": (_SCHEMA_HEAD + b'"properties": {"s": {"type": "string"}}, '
                                 b'"patternProperties": {"^(a|aa)+$": {"type": "string"}}}', None,
                                 ("SPEC_REGISTRY_PATTERN_UNSAFE", "x.json#/patternProperties/^(a|aa)+$"), ()),
}


def test_the_registries_are_hostile_only_in_their_hostile_part(tmp_path: Path) -> None:
    """Without its hostile part each registry passes `registry check` and each vector file loads: so the
    sweep's refusals are about that part, not about a missing example or a wrong id."""
    good = _registry(tmp_path / "good", _GOOD_SCHEMA)
    from cli_helpers import cli

    result = cli("registry", "check", str(good))
    assert result.code == 0, result.out + result.err
    from sessionspec.conformance import cases

    case = json.loads((_vectors(tmp_path / "vectors", b"null") / "defects.json").read_text())["cases"][0]
    (tmp_path / "vectors" / "defects.json").write_text(json.dumps(
        {**json.loads((tmp_path / "vectors" / "defects.json").read_text()), "cases": [cases.with_id(case)]}))
    assert len(cases.load_corpus(tmp_path / "vectors")) == 1


@pytest.mark.parametrize("kind", sorted(REGISTRIES))
def test_every_command_on_a_hostile_registry(kind: str, tmp_path: Path) -> None:
    schema, fragment, registry_says, vectors_say = REGISTRIES[kind]
    root = _registry(tmp_path / "registry", schema)
    vectors = _vectors(tmp_path / "vectors", fragment) if fragment is not None else None
    write_raw(tmp_path / "crashed.jsonl", [[*one_turn(), *open_turn(6)]])
    argvs = []
    for argv in _sweep("registry", str(root), tmp_path):
        if "--vectors" in argv:  # a vectors folder of the same hostile kind, where the kind has a vector form
            if vectors is None:
                continue
            argv = [str(vectors) if a == str(root) else a for a in argv]
        argvs.append(argv)
    assert {a[0] for a in argvs} >= {"registry", "validate", "catalog"}
    results = run_each(argvs)
    for result in results:
        text = result["out"] + result["err"]
        says = vectors_say if "--vectors" in result["argv"] else registry_says
        assert result["code"] in (1, 2), (result["argv"], result["code"], text[-1500:])
        for part in says:  # the refusal is about the hostile part, and names the file holding it
            assert part in text, (result["argv"], part, text[-1500:])
        for line in text.splitlines():  # located once: FILE#POINTER, not the pointer again before it
            pointer = line.partition("x.json#")[2].partition(": ")[0]
            assert not pointer or line.count(f"{pointer}: ") == 1, (result["argv"], line[:500])
    assert sorted(os.listdir(tmp_path)) == sorted(["crashed.jsonl", "registry", *(["vectors"] if vectors else [])])


def test_a_lone_surrogate_type_loads_and_is_escaped_on_every_output(tmp_path: Path) -> None:
    """A registry whose event type holds a lone surrogate and a terminal escape is a valid registry (the type is
    only a string): `registry check` and `validate --registry` exit 0, `catalog` writes its catalogs, a log holding
    the type is checked against its payload schema (its one finding the type's lone surrogate, JSON-13), and the
    type reaches the terminal, JSON output and every catalog file escaped, never raw (UnicodeEncodeError or a
    coloured terminal before)."""
    event_type = "gen/\udfff\x1b[31m"
    root = _registry(tmp_path / "registry", _GOOD_SCHEMA, event_type)
    write_raw(tmp_path / "crashed.jsonl", [[*one_turn(), *open_turn(6)]])
    typed = tmp_path / "typed.jsonl"
    write_raw(typed, [[*one_turn(), {"type": event_type, "seq": 6, "time": 7, "data": {"s": 5}}]])
    check, validate, catalog, text, as_json = run_each([
        ["registry", "check", str(root)], ["validate", "--registry", str(root), str(tmp_path / "crashed.jsonl")],
        ["catalog", "--registry", str(root), "--out", str(tmp_path / "catalogs")],
        ["validate", "--registry", str(root), str(typed)],
        ["validate", "--registry", str(root), "--format", "json", str(typed)]])
    escaped = "gen/\\udfff\\u001b[31m"
    assert check["code"] == 0 and escaped in check["out"], check
    assert validate["code"] == 0, validate
    assert catalog["code"] == 0, catalog
    # the payload is checked against the registry's schema (s is no string): the type is registered, not unknown
    assert text["code"] == 1 and "JSON_LONE_SURROGATE" in text["out"] and "/data/s" in text["out"], text
    assert "EVENT_TYPE_UNREGISTERED" not in text["out"], text
    findings = json.loads(as_json["out"])["files"][0]["findings"]
    assert {f["code"] for f in findings} >= {"JSON_LONE_SURROGATE"} and any(f.get("pointer") == "/data/s"
                                                                           for f in findings), findings
    for result in (check, validate, catalog, text, as_json):
        assert "\x1b" not in result["out"] + result["err"] and "\udfff" not in result["out"] + result["err"], result
    written = sorted((tmp_path / "catalogs").glob("*.md"))
    assert written and any(escaped in p.read_text(encoding="utf-8") for p in written), written
    for path in written:
        raw = path.read_bytes()
        assert b"\x1b" not in raw and b"\xed\xbf\xbf" not in raw, path  # (surrogatepass would write ED BF BF)


# ---------------------------------------------------------------- output targets


def _targets(folder: Path) -> Iterator[tuple[str, str, str]]:
    """(kind, target, what the refusal names) for each target no command may write."""
    (folder / "real.out").write_bytes(b"old\n")
    (folder / "link.out").symlink_to(folder / "real.out")
    (folder / "adir").mkdir()
    os.mkfifo(folder / "fifo")
    readonly = folder / "readonly"
    readonly.mkdir()
    readonly.chmod(0o555)  # owned by whoever runs the tests, root included
    yield "existing", str(folder / "real.out"), "--force"
    yield "symlink", str(folder / "link.out"), "symbolic link"
    yield "symlink-force", str(folder / "link.out"), "symbolic link"
    yield "device", "/dev/null", "/dev/null"
    yield "fifo", str(folder / "fifo"), "fifo"
    yield "folder", str(folder / "adir"), "adir"
    yield "missing-folder", str(folder / "sub" / "missing" / "out"), "missing"
    yield "empty", "", "empty"
    yield "read-only-folder", str(readonly / "out"), "readonly"  # (mode bits bind in the child: `run_each`)


def _outputs() -> list[tuple[str, str]]:
    return [(name, _flag(action)) for name in _commands() for action in _roles(name)["output"]]


def test_the_output_sweep_covers_every_writing_command() -> None:
    assert {name for name, _ in _outputs()} == {"repair", "pack", "unpack", "conformance", "report"}


def _output_argv(command: str, flag: str, target: str, folder: Path) -> list[str]:
    """``command`` writing ``target`` through ``flag``, everything else benign (a crashed log, a good report)."""
    argv = [command, *CHEAP.get(command, []), flag, target]
    if command in ("repair", "pack", "unpack"):
        argv.append(str(folder / "crashed.jsonl"))
    if command == "report":
        argv.append(str(folder / "good.jsonl"))
    return argv


@pytest.mark.parametrize(("command", "flag"), _outputs())
def test_no_command_writes_a_hostile_target(command: str, flag: str, tmp_path: Path) -> None:
    """Every output of every writing command (from the parser) refuses every target kind the same way (exit 2,
    naming it, before any work), leaving it as it was: an existing file without --force, a symbolic link even
    with --force, a device, a FIFO, a folder, a missing folder, the empty path, a read-only folder."""
    why_not = modes_can_bind()
    if why_not:
        pytest.skip(f"a read-only folder cannot be made read-only for the child: {why_not}")
    write_raw(tmp_path / "crashed.jsonl", [[*one_turn(), *open_turn(6)]])
    (tmp_path / "good.jsonl").write_text("")  # (never read: the target is refused first)
    targets = list(_targets(tmp_path))
    before = {p.name: (p.is_symlink(), p.is_file() and p.read_bytes()) for p in tmp_path.iterdir()}
    argvs = [_output_argv(command, flag, target, tmp_path) + (["--force"] if kind == "symlink-force" else [])
             for kind, target, _ in targets]
    results = run_each(argvs, modes_bind=True)
    for (kind, _, named), result in zip(targets, results, strict=True):
        assert result["code"] == 2, (kind, result)
        assert named in result["err"], (kind, result["err"])
    assert {p.name: (p.is_symlink(), p.is_file() and p.read_bytes()) for p in tmp_path.iterdir()} == before
    assert not list((tmp_path / "readonly").iterdir())  # nothing written into the read-only folder


def test_the_trace_folder_follows_the_policy(tmp_path: Path) -> None:
    """`--trace-dir` (a folder of the suite's own file names): a real writable folder or a missing one under one;
    a symbolic link, a file, a device, a FIFO, '' or a path under a file is refused before any work, exit 2."""
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    (tmp_path / "file").write_bytes(b"old\n")
    os.mkfifo(tmp_path / "fifo")
    targets = {"symlink": str(tmp_path / "link"), "file": str(tmp_path / "file"), "device": "/dev/null",
               "fifo": str(tmp_path / "fifo"), "empty": "", "under-a-file": str(tmp_path / "file" / "traces")}
    argvs = [["conformance", "--only", "ZSTD-4", "--fuzz", "1", "--trace-dir", t] for t in targets.values()]
    for kind, result in zip(targets, run_each(argvs)):
        text = result["out"] + result["err"]
        assert result["code"] == 2 and "Traceback" not in text, (kind, text[-800:])
        assert "--trace-dir: " in text and targets[kind] in text, (kind, text[-800:])
    assert (tmp_path / "file").read_bytes() == b"old\n" and os.listdir(tmp_path / "real") == []
