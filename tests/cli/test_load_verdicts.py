"""`validate --level load` has an error exactly where the load path refuses the log (its promise to a user).

Both take the records through the one walk of the load rules (`reference/seed_walk.py`): the validator reads every
defect (`jsonl_read.load_log`, `jsonl.StoredReader.read`) and reports every finding, the load path reads the first
defect (`jsonl.read_artifact`, then `jsonl.load_records`: the same walk with the revision's `StoredReader`) and
raises the first by the refusal order; the header line, the header rules
and the torn tail are read apart in each. The stored reader's own tests are `tests/reference/test_stored_reader.py`,
the walk's `tests/reference/test_seed_walk.py`.
"""

from __future__ import annotations

import re
from typing import Any

import orjson
import pytest
from cli_helpers import HEADER, jsonl, turn_events
from hypothesis import given
from hypothesis import strategies as st
from sessionspec.reference import load_log
from sessionspec.reference.jsonl import check_loadable, load_records, read_artifact
from sessionspec.spec.errors import JsonlError, SessionSpecError
from sessionspec.validator.lint import Checker
from test_fastlog import LOGS, READABLE, damaged, with_load_rule_records


# JSONL-2 … JSONL-12, SEED-*, SURF-*: the one reader's every-defect mode (`jsonl_read.load_log`: header line,
# holes, committed region, torn tail, numbering) and the one walk's every finding decide as the reference's own
# load path does: a log has an error finding exactly when the loader refuses it.
def _loads(data: bytes, revision: str | None = None, session_id: str = HEADER["id"]) -> bool:
    try:
        artifact = read_artifact(data, revision)
        load_records(session_id, artifact.header, artifact.events, None, revision, seed=True)  # the seeded load view
    except SessionSpecError:
        return False
    return True


@pytest.mark.parametrize("layout", ["packed", "unpacked"])
@given(data=st.data())
def test_the_load_level_verdict_is_the_loaders(layout: str, data: st.DataObject) -> None:
    log_bytes = data.draw(st.one_of(damaged(LOGS[layout]), with_unread_values(LOGS[layout])))
    log = load_log(log_bytes, "log.jsonl")
    Checker("load").check(log)
    errors = [f.code for f in log.findings if f.severity == "error"]
    # the loader is asked for the session the header names: a log has no other id to validate against, so a
    # damaged header `id` is not a JSONL_ID_MISMATCH the validator could see
    named = artifact_id(log_bytes)
    assert (not errors) == _loads(log_bytes, session_id=named if named is not None else HEADER["id"]), errors


def artifact_id(data: bytes) -> str | None:
    """The string ``id`` of a log's header line, if it has one."""
    try:
        header = read_artifact(data).header
    except SessionSpecError:
        return None
    return header.get("id") if isinstance(header, dict) and isinstance(header.get("id"), str) else None


# JSONL-13..15 at the published revision: the walk reads each record through the one reader
# (`jsonl.StoredReader`) and seeds the records as read, so the load-level verdict is the loader's on
# pinned-format logs the release reads upgraded, on malformed earlier-format records and on unknown types,
# damaged or not.
@pytest.mark.req("JSONL-13")
@pytest.mark.parametrize("layout", sorted(READABLE))
@given(data=st.data())
def test_the_load_level_verdict_is_the_published_loaders(layout: str, data: st.DataObject) -> None:
    log_bytes = data.draw(with_load_rule_records(READABLE[layout]))
    if data.draw(st.booleans()):
        log_bytes = data.draw(damaged(log_bytes))
    log = load_log(log_bytes, "log.jsonl")
    Checker("load", None, "b150a551b8").check(log)
    errors = [f.code for f in log.findings if f.severity == "error"]
    named = artifact_id(log_bytes)  # the session the (perhaps damaged) header names, as above
    assert (not errors) == _loads(log_bytes, "b150a551b8", named if named is not None else HEADER["id"]), errors


@pytest.mark.req("JSONL-7")
@pytest.mark.parametrize("damage", ["row", "header"])
def test_a_bad_line_after_the_last_turn_end_is_the_torn_tails_one_warning(damage: str) -> None:
    """A malformed packed row (CHUNK-9) or a late header line (JSONL-1) after the last turn/end is a torn tail the
    loader drops unread (Hypothesis found the row): one warning, no error, as the loader accepts the log."""
    lines = LOGS["packed"].split(b"\n")
    ends = [i for i, line in enumerate(lines) if b'"turn/end"' in line]
    row = next(i for i, line in enumerate(lines) if b'"seq0"' in line and i > ends[-2])
    lines[row] = lines[row].replace(b'"seq0":', b'"s":') if damage == "row" else lines[0]
    del lines[ends[-1]]
    data = b"\n".join(lines)
    log = load_log(data, "log.jsonl")
    Checker("load").check(log)
    assert [(f.code, f.severity) for f in log.findings if f.line == row + 1] == [("JSONL_TORN_TAIL", "warning")]
    assert not [f for f in log.findings if f.severity == "error"] and _loads(data)


@pytest.mark.req("JSONL-7")
@pytest.mark.parametrize("seq", [-1, -9007199254740991])
def test_a_negative_seq_after_the_records_is_a_finding_not_a_traceback(seq: int) -> None:
    """A record whose seq is negative is a repeated (earlier) seq: located, and the verdict is the loader's
    (Hypothesis found -9007199254740991 on the last record: an IndexError)."""
    lines = LOGS["unpacked"].split(b"\n")
    last = max(i for i, line in enumerate(lines) if line)
    lines[last] = re.sub(rb'"seq":[0-9]+', b'"seq":%d' % seq, lines[last], count=1)
    data = b"\n".join(lines)
    log = load_log(data, "log.jsonl")
    Checker("load").check(log)
    assert any(f.line == last + 1 and f.severity == "error" for f in log.findings) and not _loads(data)


# JSON-2 on values the loader never reads: a non-lossless number under a header key the format does not define
# (the loader drops it, `header_from_line`), or on a line after where the loader stops reading (a torn tail), is
# no error of the loader's; a number that overflows to infinity makes the loader's parser refuse its line.
_UNREAD_NUMBERS = ("-0.0", "1e999")


@st.composite
def with_unread_values(draw: st.DrawFn, data: bytes) -> bytes:
    """A log with a non-lossless number in the header line, or in a record after the last turn/end
    (perhaps after an unreadable or misnumbered line)."""
    lines = data.split(b"\n")
    number = draw(st.sampled_from(_UNREAD_NUMBERS)).encode()
    nest = draw(st.sampled_from([b"%s", b"[[%s]]", b'{"a":%s}']))
    value = nest.replace(b"%s", number)
    if draw(st.booleans()):
        key = draw(st.sampled_from([b"seq", b"x", b"origin", b"cwd", b"parentSession"]))
        lines[0] = lines[0][:-1] + b',"' + key + b'":' + value + b"}"
        return b"\n".join(lines)
    last = max(i for i, line in enumerate(lines) if b'"turn/end"' in line)
    seq = orjson.loads(lines[last])["seq"] + 1
    body = lines[: last + 1]
    before = draw(st.sampled_from(["", "hole", "misnumbered"]))
    if before == "hole":
        body.append(b'{"type":"turn/st')
    elif before == "misnumbered":
        body.append(orjson.dumps({"type": "turn/start", "seq": seq + 5, "time": 1, "data": {}}))
    record = orjson.dumps({"type": "turn/start", "seq": seq, "time": 1, "data": {}})
    body.append(record[:-1] + b',"x":' + value + b"}")
    return b"\n".join([*body, b""])


@pytest.mark.req("JSON-2", "JSONL-7")
def test_negative_zero_under_an_unknown_header_key_is_a_warning() -> None:
    """Hypothesis found it: the loader drops an unknown header key, so its -0.0 is no load error (a warning)."""
    lines = LOGS["unpacked"].split(b"\n")
    lines[0] = lines[0][:-1] + b',"seq":[[-0.0]]}'
    data = b"\n".join(lines)
    assert b'"delegationDepth":0,"seq":[[-0.0]]}' in data
    for level in ("load", "strict"):
        log = load_log(data, "log.jsonl")
        Checker(level).check(log)
        assert [(f.code, f.severity, f.line, f.pointer) for f in log.findings] == [
            ("JSON_NOT_LOSSLESS", "warning", 1, "/seq/0/0")]
    assert _loads(data)


@pytest.mark.req("JSON-2", "JSONL-7")
@pytest.mark.parametrize(("header", "loads"), [(b'"cwd":-0.0', False), (b'"x":1e999', False), (b'"x":-0.0', True)])
def test_a_non_lossless_header_value_is_an_error_only_where_the_loader_reads_it(header: bytes, loads: bool) -> None:
    lines = LOGS["packed"].split(b"\n")
    lines[0] = lines[0].replace(b',"cwd":"/work/bench"', b"")[:-1] + b"," + header + b"}"
    data = b"\n".join(lines)
    log = load_log(data, "log.jsonl")
    Checker("load").check(log)
    assert any(f.code == "JSON_NOT_LOSSLESS" and f.severity == ("warning" if loads else "error") for f in log.findings)
    assert (not [f for f in log.findings if f.severity == "error"]) == loads == _loads(data)


@pytest.mark.req("JSON-2", "JSONL-7")
@pytest.mark.parametrize("number", _UNREAD_NUMBERS)
@pytest.mark.parametrize("before", ["", "hole", "misnumbered"])
def test_a_non_lossless_number_the_loader_drops_unread_is_a_warning(number: str, before: str) -> None:
    """After the last turn/end: a -0.0 on a line after a torn line, or a number that overflows to infinity (the
    loader's parser refuses its line: a torn tail) is a warning; a -0.0 in a record the loader keeps is its error."""
    lines = LOGS["unpacked"].split(b"\n")
    last = max(i for i, line in enumerate(lines) if b'"turn/end"' in line)
    seq = orjson.loads(lines[last])["seq"] + 1
    body = lines[: last + 1] + {"": [], "hole": [b'{"type":"turn/st'],
                                "misnumbered": [b'{"type":"turn/start","seq":%d,"time":1,"data":{}}' % (seq + 5)]}[before]
    data = b"\n".join([*body, b'{"type":"turn/start","seq":%d,"time":1,"x":%s,"data":{}}' % (seq, number.encode()), b""])
    log = load_log(data, "log.jsonl")
    Checker("load").check(log)
    kept = number == "-0.0" and not before  # the loader reads this record and rejects it
    assert [f.severity for f in log.findings if f.code == "JSON_NOT_LOSSLESS"] == ["error" if kept else "warning"]
    assert (not [f for f in log.findings if f.severity == "error"]) == (not kept) == _loads(data)


def test_errors_cut_from_a_bounded_list_on_unread_lines_are_counted_as_warnings() -> None:
    """`FindingList(keep=...)` counts the findings it cuts: those on lines the loader drops unread count as warnings."""
    lines = LOGS["unpacked"].split(b"\n")
    last = max(i for i, line in enumerate(lines) if b'"turn/end"' in line)
    tail = [b'{"type":"turn/st'] + [b'{"x":-0.0}'] * 300
    data = b"\n".join([*lines[: last + 1], *tail, b""])
    log = load_log(data, "log.jsonl", keep=5)
    Checker("load").check(log)
    assert log.findings.errors == 0 and log.findings.warnings == 301 and _loads(data)
    committed = b"\n".join([*lines[:2], *[b'{"x":-0.0}'] * 300, *lines[2:]])
    bounded = load_log(committed, "log.jsonl", keep=5)
    assert bounded.findings.errors >= 300 and not _loads(committed)


@pytest.mark.req("JSONL-12")
@pytest.mark.parametrize("version", [0, 0.0, 1, -1, 0.5])
def test_a_header_version_is_refused_by_validate_exactly_as_by_the_load_path(version: Any) -> None:
    data = jsonl(turn_events(), {**HEADER, "version": version})
    log = load_log(data, "log.jsonl")
    Checker("load").check(log)
    codes = {f.code for f in log.findings if f.severity == "error"}
    try:
        artifact = read_artifact(data)
        check_loadable(artifact.header, artifact.events, HEADER["id"], None)
        refused = None
    except JsonlError as error:
        refused = error.code
    assert ("JSONL_VERSION" in codes) == (refused == "JSONL_VERSION"), (version, codes, refused)
    assert (version == 0 and type(version) is int) == (refused is None)
