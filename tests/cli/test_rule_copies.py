"""The validator's deliberate copies of reference rules agree with the reference (CONTRIBUTING.md lists them).

* JSONL-12: `validate`'s exact path names a legacy record per event (`sessionspec.validator.lint`), where
  the reference's load path (`jsonl.check_loadable`) refuses the log that holds it; both judge every
  event alike.
* JSON-12/13, DEC-3, JSON-2: the reader's per-line fast parse (`logread.parse_line`: orjson, trusted only
  when it writes the same bytes back) gives the value and the located anomalies of the one exact parser
  (`json_text.parse` with its anomaly hook), whatever the spelling of the line.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from cli_helpers import HEADER, jsonl, turn_events
from cli_strategies import JSON
from hypothesis import given
from hypothesis import strategies as st
from sessionspec.reference.json_text import dumps
from sessionspec.reference.jsonl import check_loadable, read_artifact, seed_repaired
from sessionspec.spec import FORMAT
from sessionspec.spec.errors import JsonlError, SessionSpecError
from sessionspec.validator.lint import Checker
from sessionspec.validator.logread import _Hole, _parse_slow, load_log, parse_line
from test_fastlog import LOGS, READABLE, damaged, with_load_rule_records

_TYPES = st.one_of(st.sampled_from([*FORMAT.legacy_rejected_types, "request/header", "turn/start", "x/legacy",
                                     "request/header-deltas"]), st.just(["request/header"]), st.none())
_REASONS = st.one_of(st.sampled_from([*sorted(FORMAT.rejected_request_header_reasons), "initial", "compaction", ""]),
                     st.integers(), st.none(), st.lists(st.text(max_size=3), max_size=2))
_DATA = st.one_of(st.fixed_dictionaries({}, optional={"reason": _REASONS, "config": st.just({})}), st.text(max_size=3), st.none())


def _reference_refuses(event: dict[str, Any]) -> bool:
    try:
        check_loadable({"id": HEADER["id"], "version": HEADER["version"]}, [event], HEADER["id"], None)
    except JsonlError as error:
        return error.code == "JSONL_LEGACY_EVENT"
    return False


@pytest.mark.req("JSONL-12")
@given(_TYPES, _DATA)
def test_the_validators_legacy_record_test_is_the_load_paths(etype: Any, data: Any) -> None:
    events = turn_events()[:1]
    event = {"type": etype, "seq": 1, "time": 1, "data": data}
    log = load_log(jsonl([*events, event]), "log.jsonl")
    Checker("load").check(log)
    named = any(f.code == "JSONL_LEGACY_EVENT" for f in log.findings)
    assert named == _reference_refuses(event), (event, [f.code for f in log.findings])


# Spellings that orjson reads but does not write back byte for byte, and anomalies only the exact parser locates.
_SPELLINGS = st.sampled_from(["", " ", "\r", "\t"])
_PIECES = st.sampled_from(['{"a":1,"a":2}', "-0.0", "-0", "0.0", "1E-3", "1e-300", "9007199254740993", "-9007199254740993",
                           "123456789012345678901", '"\\ud800"', '"\\u00e9"', '"\\/"', "1.0", "1e2", '{"b":[1,{"b":2,"b":3}]}'])


@given(st.one_of(JSON.map(dumps), st.lists(_PIECES, min_size=1, max_size=4).map(lambda p: "[" + ",".join(p) + "]")),
       _SPELLINGS)
def test_the_readers_fast_parse_is_the_exact_parser(text: str, space: str) -> None:
    raw = (space + text.replace(",", "," + space) + space).encode()
    fast: list[Any] = []
    exact: list[Any] = []
    value, expected = parse_line(raw, 2, fast), _parse_slow(raw, 2, exact)
    assert isinstance(value, _Hole) == isinstance(expected, _Hole)
    if not isinstance(value, _Hole):
        assert dumps(value) == dumps(expected)
    assert [(f.code, f.pointer) for f in fast] == [(f.code, f.pointer) for f in exact]


# JSONL-2 … JSONL-12, SEED-*, SURF-*: the reader's emulation of the load path (`logread`: header line,
# holes, committed region, torn tail, numbering) with the checker's calls of the reference decides as
# the reference's own load path does: a log has an error finding exactly when the loader refuses it.
def _loads(data: bytes, revision: str | None = None, session_id: str = HEADER["id"]) -> bool:
    try:
        artifact = read_artifact(data, revision)
        events = check_loadable(artifact.header, artifact.events, session_id, None, revision)
        seed_repaired(session_id, artifact.header, events, revision)
    except SessionSpecError:
        return False
    return True


@pytest.mark.parametrize("layout", ["packed", "unpacked"])
@given(data=st.data())
def test_the_load_level_verdict_is_the_loaders(layout: str, data: st.DataObject) -> None:
    log_bytes = data.draw(damaged(LOGS[layout]))
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


# JSONL-13..15 at the published revision: the checker reads each record through the reference's own
# per-record seam (`jsonl.StoredReader`, the one `read_stored` is made of), so its load-level verdict is the
# loader's on pinned-format logs the release reads upgraded, on malformed earlier-format records and on
# unknown types, damaged or not.
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
