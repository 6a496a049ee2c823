"""Deviations (DEC-27): a member an event's schema does not define, where no reader of the revision reads it,
is a located note (FORMAT_DEVIATION), not an error: shown with -v and in --format json, never in the default
output, and failing only with `--fail-on deviation`. A member inside a place a reader reads whole stays an error.
Which places those are is the revision's spec data (`readers.wholeReads`, `readers.byName`), judged here on every
registry example."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import HEADER, cli, jsonl, turn_events
from sessionspec.spec import load_spec
from sessionspec.spec.revisions import known_revisions

PINNED, PUB = "2f74ac98ba", "b150a551b8"
UNDEFINED = "zzNotInAnySchema"


def _header_event(seq: int, **extra: Any) -> dict[str, Any]:
    header = {"config": {"provider": "p", "model": "m"}, "system": "s", **extra}
    return {"type": "request/header", "seq": seq, "time": 1767225600000, "data": {"header": header, "reason": "initial"}}


def _stale_prefix_log(tmp_path: Path) -> Path:
    """A pinned turn whose request header carries a stale `messagePrefix` (the canonical header drops it, REQ-1)."""
    events = turn_events(1, 0)
    events.insert(3, _header_event(3, messagePrefix=[{"role": "user", "content": "x"}]))
    for seq, event in enumerate(events):
        event["seq"] = seq
    for event in events:  # the sources named by seq follow the renumbering
        if "sourceEventSeqs" in event:
            event["sourceEventSeqs"] = [s + 1 if s >= 3 else s for s in event["sourceEventSeqs"]]
    path = tmp_path / "prefix.jsonl"
    path.write_bytes(jsonl(events))
    return path


def test_an_unread_undefined_member_is_a_deviation_not_an_error(tmp_path: Path) -> None:
    """It was `SCHEMA_VIOLATION ... 'messagePrefix' was unexpected` and exit 1; now a located deviation, exit 0."""
    path = _stale_prefix_log(tmp_path)
    result = cli("validate", "--format", "json", str(path))
    assert result.code == 0, result.out
    [entry] = result.json["files"]
    assert (entry["valid"], entry["errors"], entry["warnings"], entry["deviations"]) == (True, 0, 0, 1)
    [finding] = entry["findings"]
    assert finding == {
        "file": str(path), "severity": "deviation", "code": "FORMAT_DEVIATION", "requirement": "DEC-27",
        "line": 5, "seq": 3, "pointer": "/data/header/messagePrefix",
        "message": f"member 'messagePrefix' is not defined by schema:payload/request/header.json; no reader of "
                   f"revision {PINNED} reads it: kept as stored",
    }
    assert result.json["summary"]["deviations"] == 1 and result.json["summary"]["invalid"] == 0
    # the same member at the release, read at its revision
    assert cli("validate", "--format", "json", "--revision", PUB, str(path)).json["summary"]["deviations"] >= 1


def test_the_default_output_is_one_short_line_and_verbose_shows_the_deviation(tmp_path: Path) -> None:
    path = _stale_prefix_log(tmp_path)
    plain = cli("validate", str(path))
    assert plain.code == 0 and plain.out.splitlines()[0] == f"{path}: ok: 13 events", plain.out
    assert "deviation" not in plain.out and "FORMAT_DEVIATION" not in plain.out
    verbose = cli("validate", "-v", str(path))
    lines = verbose.out.splitlines()
    assert verbose.code == 0
    assert lines[0].startswith(f"{path}:5: deviation [FORMAT_DEVIATION DEC-27] seq 3 at /data/header/messagePrefix: ")
    assert lines[1].startswith(f"{path}: ok: 13 events, 0 error(s), 0 warning(s), 1 deviation(s) (DEC-27), ")
    assert lines[2].endswith("0 error(s), 0 warning(s), 1 deviation(s)")
    github = cli("validate", "--format", "github", str(path))
    assert "::" not in github.out.splitlines()[0]  # no annotation without -v
    noticed = cli("validate", "--format", "github", "-v", str(path)).out.splitlines()
    assert noticed[0].startswith(f"::notice file={path},line=5,title=FORMAT_DEVIATION DEC-27::seq 3 ")


@pytest.mark.parametrize(("fail_on", "code"), [("error", 0), ("warning", 0), ("repair", 0), ("deviation", 1)])
def test_only_fail_on_deviation_fails_a_deviation(tmp_path: Path, fail_on: str, code: int) -> None:
    path = _stale_prefix_log(tmp_path)
    result = cli("validate", "--fail-on", fail_on, "--format", "json", str(path))
    assert result.code == code and result.json["files"][0]["valid"] == (code == 0)
    if fail_on == "deviation":  # a failing deviation is shown, in the text output too
        text = cli("validate", "--fail-on", "deviation", str(path)).out
        assert "FORMAT_DEVIATION" in text and "INVALID: 13 events, 0 error(s), 0 warning(s), 1 deviation(s)" in text


def test_fail_on_deviation_also_fails_what_the_higher_thresholds_fail(tmp_path: Path) -> None:
    """The lowest threshold: a crash tail every load repairs (DEC-25) fails too; a clean log does not."""
    crashed = tmp_path / "crashed.jsonl"
    crashed.write_bytes(jsonl(turn_events(1, 0, close=False)))
    assert cli("validate", str(crashed)).code == 0
    assert cli("validate", "--fail-on", "deviation", str(crashed)).code == 1
    clean = tmp_path / "clean.jsonl"
    clean.write_bytes(jsonl(turn_events(1, 0)))
    assert cli("validate", "--fail-on", "deviation", str(clean)).code == 0


def test_a_member_a_reader_reads_stays_an_error(tmp_path: Path) -> None:
    """An undefined member of a tool/result (a replacement must keep every member but the content: SURF-10) and
    one under a message's content (derive copies it) are read: errors. One beside a pinned message's content
    (derive copies only the content) is not."""
    cases = {"tool-result": (9, "/data", "/data"), "block": (1, "/data/content/0", None), "beside": (1, "/data", "/data")}
    codes = {}
    for name, (index, where, _) in cases.items():
        events = turn_events(1, 0)
        target = events[index]
        for key in where.split("/")[1:]:
            target = target[int(key)] if isinstance(target, list) else target[key]
        target[UNDEFINED] = 1
        path = tmp_path / f"{name}.jsonl"
        path.write_bytes(jsonl(events))
        [entry] = cli("validate", "--format", "json", str(path)).json["files"]
        codes[name] = {(f["code"], f["severity"]) for f in entry["findings"]}
    assert codes["tool-result"] == {("SCHEMA_VIOLATION", "error")}
    assert codes["block"] == {("SCHEMA_VIOLATION", "error")}
    assert codes["beside"] == {("FORMAT_DEVIATION", "deviation")}


def _examples(revision: str) -> list[tuple[str, dict[str, Any]]]:
    """Each registry type's valid examples whose data is an object, at ``revision``."""
    spec = load_spec(revision=revision)
    return [(etype, example["event"]) for etype, entry in sorted(spec.events.items())
            for example in entry.get("examples", {}).get("valid", []) if isinstance(example["event"].get("data"), dict)]


def _places(value: Any, pointer: str = "") -> list[str]:
    """The pointers of every object in ``value``."""
    if isinstance(value, dict):
        return [pointer, *(p for k, v in value.items() for p in _places(v, f"{pointer}/{k}"))]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _places(v, f"{pointer}/{i}")]
    return []


def _members(value: Any, pointer: str) -> list[str]:
    """The pointers of every member of every object in ``value`` (an array's first item stands for the rest)."""
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in (f"{pointer}/{k}", *_members(v, f"{pointer}/{k}"))]
    if isinstance(value, list) and value:
        return _members(value[0], f"{pointer}/0")
    return []


def _read(readers: dict[str, Any], etype: str, pointer: str) -> bool:
    """Whether a reader reads what is at ``pointer``, by the spec data alone: inside, holding or equal to a place
    read whole, or a member read by name or holding one (DEC-27)."""
    whole = readers["wholeReads"].get(etype) or ()
    named = readers["byName"].get(etype) or ()
    if pointer == "/data":  # the payload as a whole: read when any of it is
        return bool(whole or named)
    return (not pointer.startswith("/data/")
            or any(pointer == p or pointer.startswith(p + "/") or p.startswith(pointer + "/") for p in whole)
            or any(pointer == p or p.startswith(pointer + "/") for p in named))


def _at(event: dict[str, Any], pointer: str) -> tuple[Any, str | int]:
    """The container of ``pointer`` in ``event`` and the key there."""
    *parents, last = pointer.split("/")[1:]
    target: Any = event
    for key in parents:
        target = target[int(key)] if isinstance(target, list) else target[key]
    return target, (int(last) if isinstance(target, list) else last)


def _other_type(value: Any) -> Any:
    """A value of another JSON type than ``value``."""
    return 7 if isinstance(value, str) else "x"


@pytest.mark.parametrize("revision", known_revisions())
def test_the_spec_data_decides_every_registry_example(revision: str, tmp_path: Path) -> None:
    """For every valid registry example, an undefined member put in every object of its payload, every member
    removed and every member given a value of another type: a finding about it is a deviation only where no
    reader reads it by the spec data (`readers.wholeReads`, `readers.byName`), an error where a reader does; an
    unread member the schema reports directly (its own location, not among alternatives) is a deviation and
    nothing else. The expectation is computed from the spec data and the schema, never listed by type."""
    spec = load_spec(revision=revision)
    readers = spec.constants["readers"]
    assert set(readers["wholeReads"]) | set(readers["byName"]) <= set(spec.events), "a type the revision lacks"
    assert all(p.startswith("/data") for kind in readers.values() for places in kind.values() for p in places or ())
    paths: dict[Path, tuple[str, str, bool]] = {}
    for n, (etype, event) in enumerate(_examples(revision)):
        oracle = spec.validator(spec.events[etype]["payloadSchema"])
        changes = [("undefined", f"{place}/{UNDEFINED}") for place in _places(event["data"], "/data")]
        changes += [(kind, member) for member in _members(event["data"], "/data") for kind in ("removed", "retyped")
                    if kind == "retyped" or not member.rsplit("/", 1)[-1].isdigit()]
        for kind, member in changes:
            changed = copy.deepcopy(event)
            changed["seq"] = 0
            target, key = _at(changed, member)
            if kind == "undefined":
                target[key] = 1
            elif kind == "removed":
                del target[key]
            else:
                target[key] = _other_type(target[key])
            # the oracle's own word: the payload schema reports the member itself, at its place, not among
            # alternatives (a jsonschema error with no context is not the best match of a oneOf/anyOf)
            direct = any(not e.context and "/data" + "".join(f"/{p}" for p in e.absolute_path)
                         in (member, member.rsplit("/", 1)[0]) for e in oracle.iter_errors(changed["data"]))
            path = tmp_path / f"{n}-{len(paths)}.jsonl"
            path.write_text(json.dumps(HEADER) + "\n" + json.dumps(changed) + "\n", encoding="utf-8")
            paths[path] = (etype, member, direct)
    assert len({etype for etype, _, _ in paths.values()}) > 20
    result = cli("validate", "--format", "json", "--revision", revision, "-j", "1", *map(str, paths))
    verdicts = {"deviation": 0, "error": 0, "none": 0}
    for entry in result.json["files"]:
        etype, member, direct = paths[Path(entry["file"])]
        about = [f for f in entry["findings"] if f.get("pointer")
                 and (member.startswith(f["pointer"] + "/") or f["pointer"] == member)]
        kinds = {f["severity"] for f in about}
        refused = [f for f in about if f["code"] not in ("SCHEMA_VIOLATION", "FORMAT_DEVIATION")]
        if refused:  # the load path refuses the record (an earlier-format one it cannot upgrade): an error
            assert {f["severity"] for f in refused} == {"error"}, (etype, member, about)
        for finding in about:  # a deviation only where no reader reads, by the spec data
            assert finding["severity"] != "deviation" or not _read(readers, etype, finding["pointer"]), finding
        if _read(readers, etype, member):
            assert kinds <= {"error"}, (etype, member, about)
        elif direct and not refused and not entry.get("keptAsStored"):  # (an earlier-format record is no finding)
            assert kinds == {"deviation"}, (etype, member, about)
            assert {member, member.rsplit("/", 1)[0]} & {f["pointer"] for f in about}, (etype, member, about)
        verdicts["error" if "error" in kinds else next(iter(kinds)) if kinds else "none"] += 1
    assert verdicts["deviation"] > 50 and verdicts["error"] > 50, verdicts


def test_deviations_never_crowd_out_an_error_that_max_findings_keeps(tmp_path: Path) -> None:
    """`--max-findings 1` on a log with a deviation (line 5) before an error (a bad chunk type further down): the
    error is the finding kept; the deviation is counted, and shown in line order when there is room."""
    path = _stale_prefix_log(tmp_path)
    events = [json.loads(line) for line in path.read_bytes().splitlines()[1:]]
    events[6]["data"]["chunk"]["type"] = "bogus"
    path.write_bytes(jsonl(events))
    [entry] = cli("validate", "--format", "json", "--max-findings", "1", str(path)).json["files"]
    assert [f["code"] for f in entry["findings"]] == ["SCHEMA_VIOLATION"] and entry["notShown"] == 1, entry
    assert (entry["errors"], entry["deviations"]) == (1, 1)
    [whole] = cli("validate", "--format", "json", str(path)).json["files"]
    assert [(f["code"], f["line"]) for f in whole["findings"]] == [("FORMAT_DEVIATION", 5), ("SCHEMA_VIOLATION", 8)]
    text = cli("validate", "--max-findings", "1", str(path)).out
    assert "SCHEMA_VIOLATION" in text and "FORMAT_DEVIATION" not in text and "INVALID" in text
