"""JSONL-2 (JSONL-12 where a revision's reader refuses a version on read): the header line of a JSONL artifact is read
by one function, `jsonl_read.read_header_line`, in two modes over the same decisions: first defect (the load path,
`jsonl.read_artifact`, and `jsonl.write_unpacked`'s check) and every defect (the validator's `load_log`). A path that
reads the first line on its own again changes the counts below; the modes agree on every input.

And `jsonl.write_unpacked` parses each line once: the whole-lines step (`whole_lines`) hands it the records it
decided, and a log that is not whole leaves nothing written.
"""

from __future__ import annotations

import io
import json
from collections import Counter
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sessionlog_builders import balanced_session, plain
from sessionspec.reference import json_text, jsonl, jsonl_read
from sessionspec.spec.errors import JsonlError

PUB = "b150a551b8"
HEADER: dict[str, Any] = {"type": "session", "version": 0, "id": "h", "createdAt": 1767225600000, "cwd": "/w",
                          "delegationDepth": 0}
_LINE = json.dumps(HEADER, separators=(",", ":")).encode()
_START = {"type": "turn/start", "seq": 0, "time": 1, "data": {"turn": 1, "trigger": {"kind": "message",
                                                                                     "source": {"kind": "user"}}}}
_BODY = json.dumps(_START, separators=(",", ":")).encode() + b"\n"

#: The load path's codes of the header line (the every-defect reading reports the same defects under them).
_HEADER_CODES = frozenset({"JSONL_NO_HEADER", "JSONL_BAD_HEADER", "JSONL_VERSION"})


def _with(**members: Any) -> bytes:
    return json.dumps({**HEADER, **members}, separators=(",", ":")).encode()


def _without(key: str) -> bytes:
    return json.dumps({k: v for k, v in HEADER.items() if k != key}, separators=(",", ":")).encode()


#: first line -> the load path's refusal (code, message) at the pinned revision and at b150a551b8 (None: read)
_NOT_JSON = ("JSONL_BAD_HEADER", "corrupt session log: header line is not valid JSON")
_NOT_HEADER = ("JSONL_BAD_HEADER", "corrupt session log: first line is not a session header")
_NO_HEADER = ("JSONL_NO_HEADER", "empty or header-less session log")
_TABLE: list[tuple[str, bytes, Any, Any]] = [
    ("header", _LINE + b"\n" + _BODY, None, None),
    ("bom", b"\xef\xbb\xbf" + _LINE + b"\n", _NOT_JSON, _NOT_JSON),
    ("invalid JSON", _LINE[:-1] + b"\n", _NOT_JSON, _NOT_JSON),
    ("trailing text", _LINE + b"x\n", _NOT_JSON, _NOT_JSON),
    ("a number", b"42\n", _NOT_HEADER, _NOT_HEADER),
    ("null", b"null\n", _NOT_HEADER, _NOT_HEADER),
    ("an array", b"[" + _LINE + b"]\n", _NOT_HEADER, _NOT_HEADER),
    ("no delegationDepth", _without("delegationDepth") + b"\n", _NOT_HEADER, _NOT_HEADER),
    ("id a number", _with(id=5) + b"\n", _NOT_HEADER, _NOT_HEADER),
    ("createdAt negative", _with(createdAt=-1) + b"\n", _NOT_HEADER, _NOT_HEADER),
    ("type", _with(type="sessio") + b"\n", _NOT_HEADER, _NOT_HEADER),
    ("version a string", _with(version="0") + b"\n", _NOT_HEADER, _NOT_HEADER),
    ("version 3", _with(version=3) + b"\n", None,
     ("JSONL_VERSION", "unsupported session format version 3 (only 0 is read)")),
    ("version 3, id a number", _with(version=3, id=7) + b"\n", _NOT_HEADER,
     ("JSONL_VERSION", "unsupported session format version 3 (only 0 is read)")),
    ("version 1.5", _with(version=1.5) + b"\n", None,
     ("JSONL_VERSION", "unsupported session format version 1.5 (only 0 is read)")),
    ("origin not subagent", _with(origin="user") + b"\n", None, _NOT_HEADER),
    ("agentPreset a number", _with(agentPreset=3) + b"\n", None, _NOT_HEADER),
    ("an event first", _BODY + _BODY, _NOT_HEADER, _NOT_HEADER),
    ("duplicate key", _LINE[:-1] + b',"id":"other"}\n', None, None),
    ("-0.0 depth", _LINE.replace(b'"delegationDepth":0', b'"delegationDepth":-0.0') + b"\n", _NOT_HEADER, _NOT_HEADER),
    ("-0.0 elsewhere", _LINE[:-1] + b',"x":-0.0}\n', None, None),
    ("infinity", _LINE[:-1] + b',"x":1e999}\n', _NOT_JSON, _NOT_JSON),
    ("lone surrogate", _LINE[:-1] + b',"x":"\\ud800"}\n', None, None),
    ("invalid UTF-8", _LINE[:-1] + b',"x":"\xff"}\n', _NOT_JSON, _NOT_JSON),
    ("CR", _LINE + b"\r\n", None, None),
    ("empty line", b"\n" + _BODY, _NOT_JSON, _NOT_JSON),
    ("empty file", b"", _NO_HEADER, _NO_HEADER),
    ("no newline", _LINE, _NO_HEADER, _NO_HEADER),
]


def _first_defect(data: bytes, revision: str | None) -> tuple[str, str] | None:
    try:
        jsonl_read.read_header_line(data, revision, where="here")
    except JsonlError as error:
        assert (error.requirement, error.path) == ("JSONL-12" if error.code == "JSONL_VERSION" else "JSONL-2", "here")
        return error.code, error.message
    return None


def _agree(data: bytes, revision: str | None) -> None:
    """The two modes' verdicts on one first line: the first defect's code is the every-defect reading's first
    finding of the header line, except where the loader's parser refuses text the located parser reads on (invalid
    UTF-8, a number that overflows to infinity: a JSON-12 / JSON-2 finding), which the loader refuses first, as
    not valid JSON."""
    first = _first_defect(data, revision)
    every = jsonl_read.read_header_line(data, revision, every_defect=True)
    codes = [f.code for f in every.findings if f.code in _HEADER_CODES]
    unparsed = any(f.code == "JSON_TEXT_INVALID" or (f.code == "JSON_NOT_LOSSLESS" and not jsonl_read.is_negative_zero(f))
                   for f in every.findings)
    if first is None:
        assert every.ok and not codes and not unparsed, every.findings
    elif unparsed:
        assert first == _NOT_JSON, (first, every.findings)
    else:
        assert codes and first[0] == codes[0], (first, every.findings)


@pytest.mark.req("JSONL-2", "JSONL-12")
@pytest.mark.parametrize(("name", "data", "pinned", "published"), _TABLE, ids=[row[0] for row in _TABLE])
def test_the_load_path_refuses_each_first_line_as_it_did_and_the_modes_agree(name: str, data: bytes, pinned: Any,
                                                                            published: Any) -> None:
    for revision, expected in ((None, pinned), (PUB, published)):
        assert _first_defect(data, revision) == expected
        try:
            artifact = jsonl.read_artifact(data, revision)
        except JsonlError as error:
            assert (error.code, error.message) == expected
        else:
            assert expected is None
            assert artifact.header_line == jsonl_read.read_header_line(data, revision).value
        _agree(data, revision)


_JSON = st.recursive(st.none() | st.booleans() | st.integers(-3, 2**60) | st.floats(allow_nan=False) | st.text(max_size=3),
                     lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=3), inner, max_size=2),
                     max_leaves=4)
_KEYS = st.sampled_from(["type", "version", "id", "createdAt", "cwd", "delegationDepth", "origin", "agentPreset", "seq",
                         "parentSession", "seedLength"])


@st.composite
def _first_lines(draw: st.DrawFn) -> bytes:
    header: dict[str, Any] = dict(HEADER)
    for key in draw(st.lists(_KEYS, max_size=2)):
        action = draw(st.sampled_from(["drop", "set", "set"]))
        if action == "drop":
            header.pop(key, None)
        else:
            header[key] = draw(st.sampled_from([0, 1, 3, 1.5, -0.0, 0.0, "session", "subagent", "x", 2**53]) | _JSON)
    whole = draw(st.integers(0, 3))  # (mostly a header, changed)
    line = json.dumps(header if whole else draw(_JSON), separators=(",", ":")).encode()
    spoil = draw(st.sampled_from(["", "", "", "", "bom", "cut", "tail", "dup", "raw", "cr", "utf8", "inf", "surrogate"]))
    if spoil == "bom":
        line = b"\xef\xbb\xbf" + line
    elif spoil == "cut":
        line = line[: draw(st.integers(0, len(line)))]
    elif spoil == "tail":
        line += draw(st.sampled_from([b"x", b" ", b"}", b",1"]))
    elif spoil == "dup" and line.endswith(b"}") and len(line) > 2:
        line = line[:-1] + b',"id":"d"}'
    elif spoil == "raw":
        line = draw(st.binary(max_size=12)).replace(b"\n", b"")
    elif spoil == "cr":
        line += b"\r"
    elif spoil in ("utf8", "inf", "surrogate") and line.endswith(b"}") and len(line) > 2:
        line = line[:-1] + {"utf8": b',"z":"\xfe"}', "inf": b',"z":-1e400}', "surrogate": b',"z":"\\udfff"}'}[spoil]
    return line + draw(st.sampled_from([b"\n", b"\n" + _BODY, b"\n" + _BODY, b""]))


@pytest.mark.req("JSONL-2", "JSONL-12")
@pytest.mark.parametrize("revision", [None, PUB])
@given(data=_first_lines())
def test_first_defect_and_every_defect_agree_on_any_first_line(revision: str | None, data: bytes) -> None:
    _agree(data, revision)
    try:  # the load path raises what the first-defect reading raises (the header line is all it has read then)
        jsonl.read_artifact(data, revision)
    except JsonlError as error:
        if error.code in _HEADER_CODES:
            assert _first_defect(data, revision) == (error.code, error.message)
    else:
        assert _first_defect(data, revision) is None


class _Calls(list[tuple[bool, bytes]]):
    def spy(self, monkeypatch: pytest.MonkeyPatch) -> None:
        original = jsonl_read.read_header_line

        def counted(data: bytes, *args: Any, **kwargs: Any) -> Any:
            self.append((kwargs.get("every_defect", False), data))
            return original(data, *args, **kwargs)

        for module in (jsonl, jsonl_read):  # (the name jsonl imported, and the one load_log calls)
            monkeypatch.setattr(module, "read_header_line", counted)


@pytest.mark.req("JSONL-2")
@pytest.mark.parametrize("data", [_LINE + b"\n" + _BODY, b"\xef\xbb\xbf" + _LINE + b"\n", b"42\n", _BODY, b"", _LINE],
                         ids=["header", "bom", "number", "event first", "empty", "no newline"])
def test_every_reader_of_the_first_line_reads_it_with_the_one_function(monkeypatch: pytest.MonkeyPatch,
                                                                       data: bytes) -> None:
    calls = _Calls()
    calls.spy(monkeypatch)
    for revision in (None, PUB):
        try:
            jsonl.read_artifact(data, revision)
        except JsonlError:
            pass
        assert calls == [(False, data)]  # the load path: first defect, once
        calls.clear()
        jsonl.write_unpacked(data, io.BytesIO(), revision=revision)
        assert calls == [(False, data)]
        calls.clear()
    jsonl_read.load_log(data, "x")
    assert calls == [(True, data)]  # the validator's reading: every defect, once


def test_the_first_line_is_parsed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    parses: list[bytes] = []
    original = json_text.loads

    def counted(text: Any, *args: Any, **kwargs: Any) -> Any:
        parses.append(bytes(text))
        return original(text, *args, **kwargs)

    monkeypatch.setattr(json_text, "loads", counted)
    header_only = _LINE + b"\n"
    jsonl.read_artifact(header_only)
    assert parses == [_LINE]
    parses.clear()
    jsonl_read.load_log(header_only, "x")
    assert parses == [_LINE]


# ---------------------------------------------------------------- write_unpacked


def _log() -> bytes:
    """A balanced log of two turns, its delta chunk runs packed into rows (every line distinct)."""
    session = balanced_session(2, "h", chunks=5)
    return jsonl.header_bytes(session.header) + jsonl.encode_records(plain(session.events))


@pytest.mark.req("CHUNK-8", "JSONL-3")
def test_write_unpacked_parses_each_line_once(monkeypatch: pytest.MonkeyPatch) -> None:
    data = _log()
    assert b'"seq0"' in data  # (a packed row among the records)
    parsed: Counter[bytes] = Counter()
    original = json_text.fast_loads  # where every parse of a line without the anomaly hook starts

    def counted(text: Any) -> Any:
        parsed[bytes(text)] += 1
        return original(text)

    monkeypatch.setattr(json_text, "fast_loads", counted)
    buffer = io.BytesIO()
    written = jsonl.write_unpacked(data, buffer, 2)
    monkeypatch.undo()
    assert written == len(jsonl.read_artifact(data).events)
    assert parsed == Counter(data.split(b"\n")[:-1])  # each line once, the header line too
    assert jsonl.read_artifact(buffer.getvalue()).events == jsonl.read_artifact(data).events


@pytest.mark.req("JSONL-5", "JSONL-7")
@pytest.mark.parametrize("spoil", [b"{not json\n", b"\n", b'{"type":"turn/start","seq":77,"time":1,"data":{}}\n'])
def test_write_unpacked_of_a_log_that_is_not_whole_leaves_the_handle_as_it_was(spoil: bytes) -> None:
    data = _log() + spoil + _BODY
    buffer = io.BytesIO(b"before")
    buffer.seek(6)
    assert jsonl.write_unpacked(data, buffer, 1) is None
    assert buffer.getvalue() == b"before"
    assert buffer.tell() == 6
