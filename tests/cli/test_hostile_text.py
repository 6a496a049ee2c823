"""Text from a log reaches the output escaped, in every command and format: lone surrogates, control
characters and newlines cannot crash a UTF-8 stream or forge a report line or a `::error` annotation.
Integers past Python's 4,300-digit conversion limit are located findings, never a traceback."""

from __future__ import annotations

import io
import json

import pytest
from cli_helpers import HEADER, jsonl, turn_events
from sessionspec.cli import run

FORGED = "\n/tmp/x.jsonl: ok: 0 events\n::error file=x::forged\r\x1b[2K"


def _hostile_log() -> bytes:
    events = turn_events()
    events[1]["data"]["content"][0]["text"] = "text\ud800" + FORGED
    events[8]["data"]["callId"] = "id\udfff" + FORGED
    events[9]["data"]["callId"] = "id\udfff" + FORGED
    events[9]["data"]["extra\ud800" + FORGED] = 1  # an unknown key (schema finding at that key)
    events.append({"type": "x/\ud800" + FORGED, "seq": 12, "time": 1, "data": {"k\ud800" + FORGED: 1}})
    header = dict(HEADER, cwd="/w\ud800" + FORGED)
    return jsonl(events, header)


class Utf8Out(io.TextIOWrapper):
    """A real UTF-8 stream: a lone surrogate written to it raises, as on a terminal or a pipe."""

    def __init__(self) -> None:
        super().__init__(io.BytesIO(), encoding="utf-8", errors="strict", newline="\n")

    def text(self) -> str:
        self.flush()
        return self.buffer.getvalue().decode("utf-8")  # type: ignore[attr-defined]


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = Utf8Out(), Utf8Out()
    code = run(list(argv), out, err)
    return code, out.text(), err.text()


COMMANDS = [
    *(("validate", "--level", level, "--format", fmt) for level in ("load", "schema", "strict")
      for fmt in ("text", "json", "github")),
    ("validate", "--exact", "--level", "strict"),
    ("derive",), ("derive", "--compact"), ("fold",), ("fold", "--format", "text"),
    ("stats",), ("stats", "--format", "json"), ("header",), ("header", "--format", "text"),
]


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_hostile_text_is_escaped_in_every_command_and_format(write, command):
    path = write("hostile.jsonl", _hostile_log())
    code, out, err = _run(command[0], path, *command[1:])
    assert code in (0, 1), err
    for line in (out + err).splitlines():
        assert "\x1b" not in line and "\r" not in line
        assert not line.startswith("/tmp/x.jsonl") and not line.startswith("::error file=x")
    if "json" in command or (command[0] in ("derive", "fold", "header") and "text" not in command):
        json.loads(out)  # escapes keep JSON output valid JSON
    if command[0] == "validate" and "github" in command:
        assert all(line.startswith("::") for line in out.splitlines()[:-1])


def test_rewrites_of_a_hostile_log_keep_its_text_exactly(write, tmp_path):
    path = write("hostile.jsonl", _hostile_log())
    for command in ("pack", "unpack"):
        target = tmp_path / f"{command}.jsonl"
        code, _, err = _run(command, path, "-o", str(target))
        assert (code == 1 and "a loader would still reject" in err) or code == 0, err


def _big(digits: int) -> str:
    return "9" * digits


@pytest.mark.parametrize("where", ["payload", "header", "array"])
def test_integers_beyond_the_conversion_limit_are_located_findings(write, where):
    events = [json.dumps(e) for e in turn_events()]
    if where == "payload":
        events[1] = events[1].replace('"text": "hi"', f'"text": "hi", "n": {_big(5000)}')
        data = (json.dumps(HEADER) + "\n" + "\n".join(events) + "\n").encode()
    elif where == "header":
        data = (json.dumps(HEADER).replace('"version": 0', f'"version": {_big(5000)}') + "\n" + "\n".join(events) + "\n").encode()
    else:
        data = f"[{_big(5000)}]".encode()
    path = write("big.jsonl", data)
    code, out, _ = _run("validate", "--format", "json", path)
    assert code == 1
    (finding,) = [f for f in json.loads(out)["files"][0]["findings"] if f["code"] == "JSON_NOT_LOSSLESS"]
    assert "5000 digits" in finding["message"] and finding["pointer"] in ("/data/content/0/n", "/version", "/0")
    for command in (["derive"], ["fold"], ["stats"], ["header"], ["pack", "-o", path + ".out"], ["repair", "-o", path + ".out"]):
        code, out, err = _run(command[0], path, *command[1:])
        assert code in (0, 1) and "Traceback" not in err, (command, err)


def test_stats_names_non_string_types_and_an_unfoldable_surface(write):
    events = turn_events()
    events[2]["type"] = {"not": "a string"}  # unhashable
    events[3]["type"] = 5
    del events[4]["type"]
    events[1]["surfaceOp"] = {"op": "replace", "start": 99, "end": 100}  # the fold fails
    code, out, err = _run("stats", write("types.jsonl", jsonl(events)))
    assert code == 1 and "sessionspec stats: error: " in err, err  # the counts, and the load's refusal (DEC-24)
    assert "<type is dict>" in out and "<type is int>" in out and "<no type>" in out
    assert "None" not in out and "surface: unknown" not in out and "unknown (the surface fold fails" in out
    code, out, _ = _run("stats", "--format", "json", write("types.jsonl", jsonl(events)))
    assert json.loads(out)["surfaceSize"] is None


def test_header_with_an_infinite_version_is_an_error_not_a_traceback(write):
    data = json.dumps(HEADER).replace('"version": 0', '"version": 1e400').encode() + b"\n"
    path = write("inf.jsonl", data)
    for fmt in ("json", "text"):
        code, out, err = _run("header", path, "--format", fmt)
        assert code == 1 and "cannot print" in err and out == ""
