"""Every emitted format escapes what input may smuggle into it (issue 25): control characters, lone surrogates,
bidirectional embeddings/overrides/isolates and line/paragraph separators coming from a store's session id, an
event type, a file name or an adapter name reach no terminal line, JSON report, GitHub annotation, JUnit file
or HTML page raw, through one character class (`json_text.UNPRINTABLE_CLASS`)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from cli_helpers import cli
from sessionspec.conformance.html_report import esc
from sessionspec.conformance.report import _xml_safe
from sessionspec.reference.json_text import UNPRINTABLE_CLASS, display
from storage_fixtures import one_turn, write_db

HOSTILE = ["\x1b[31m", "\x07", "\r", "\u202e", "\u2066", "\u2069", "\u202a", "\u2028", "\u2029", "\udfff", "\x85"]
#: a store written through Python's sqlite3 cannot hold a lone surrogate (tests/cli/test_hostile_text.py has
#: them in JSONL text); a file name on this file system neither
STORABLE = [h for h in HOSTILE if "\udfff" not in h]
RAW = re.compile(f"[{UNPRINTABLE_CLASS}]".replace("\\x0a", ""))


def _raw(text: str) -> list[str]:
    return [c for c in RAW.findall(text) if c != "\n"]


@pytest.mark.parametrize("hostile", STORABLE, ids=[f"U+{ord(h[0]):04X}" for h in STORABLE])
@pytest.mark.parametrize("where", ["session-id", "event-type"])
def test_a_hostile_string_from_a_store_is_escaped_in_every_output(hostile: str, where: str, tmp_path: Path) -> None:
    header = {"version": 0, "id": f"s{hostile}1" if where == "session-id" else "s1", "createdAt": 1000,
              "cwd": "/work", "delegationDepth": 0}
    events = one_turn()
    if where == "event-type":
        events[1]["type"] = f"user/{hostile}message"
    store = write_db(tmp_path / f"log{hostile.encode('utf-8', 'surrogatepass').hex()}.db", [events], header=header)
    runs = [("validate", str(store)), ("validate", "--format", "json", str(store)),
            ("validate", "--format", "github", str(store)), ("stats", str(store)), ("stats", "--format", "json",
            str(store)), ("header", str(store)), ("derive", str(store)), ("fold", str(store))]
    for argv in runs:
        result = cli(*argv)
        text = result.out + result.err
        assert "Traceback" not in text and result.code in (0, 1, 2), (argv, text)
        assert not _raw(text), (argv, _raw(text))
        if "json" in argv:
            json.loads(result.out)  # escapes keep JSON valid


@pytest.mark.parametrize("hostile", STORABLE, ids=[f"U+{ord(h[0]):04X}" for h in STORABLE])
def test_a_hostile_file_name_is_escaped(hostile: str, tmp_path: Path) -> None:
    path = tmp_path / f"a{hostile}b.jsonl"
    path.write_bytes(b"{not a log\n")
    for argv in (("validate", str(path)), ("validate", "--format", "github", str(path)), ("stats", str(path))):
        result = cli(*argv)
        assert result.code in (1, 2) and not _raw(result.out + result.err), (argv, _raw(result.out + result.err))


@pytest.mark.parametrize("hostile", HOSTILE, ids=[f"U+{ord(h[0]):04X}" for h in HOSTILE])
def test_the_report_formats_use_the_same_class(hostile: str) -> None:
    """Terminal text, JUnit XML and HTML escape the same characters (an adapter's name or message); XML and HTML
    keep CR, which both carry as white space (a parser reads it as a line end), like tab and LF."""
    name = f"adapter{hostile}name"
    assert not _raw(display(name)), hostile
    for text in (_xml_safe(name), esc(name)):
        assert not [c for c in _raw(text) if c != "\r"], (hostile, text)
