"""The backend contract's storage rules on every form, at both revisions (PERSIST-9 … PERSIST-11, ZSTD-7).

Each rule here is the upstream coordinator's or zstd scanner's, the same at 2f74ac98ba and b150a551b8
(the sources are in spec/requirements.json); the tests fail on the reference before the fixes that
made the storage path take the revision and refuse, create and tear as upstream does.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from sessionspec.reference.jsonl import encode_records
from sessionspec.reference.jsonl_zstd import read_compressed_artifact, write_compressed_artifact
from sessionspec.reference.persistence import Backend, open_backend
from sessionspec.reference.zstd_frames import compress_frame, scan_frames
from sessionspec.spec.errors import SessionSpecError

REVISIONS = ["2f74ac98ba", "b150a551b8"]
KINDS = ["jsonl", "jsonl-zstd", "sqlite"]
PUB = "b150a551b8"


def _turn(first_seq: int, turn: int) -> list[dict[str, Any]]:
    return [
        {"type": "turn/start", "seq": first_seq, "time": 1, "data": {"turn": turn}},
        {"type": "turn/end", "seq": first_seq + 1, "time": 2, "data": {"turn": turn, "reason": {"kind": "completed"}}},
    ]


def _code(call: Any, *args: Any) -> str | None:
    try:
        call(*args)
    except SessionSpecError as error:
        return error.code
    return None


@pytest.fixture(params=[(kind, rev) for kind in KINDS for rev in REVISIONS], ids=lambda p: f"{p[0]}@{p[1]}")
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    kind, revision = request.param
    opened = open_backend(kind, tmp_path, revision)
    yield opened
    opened.close()


def test_published_header_keys_survive_every_form(tmp_path: Path) -> None:
    """origin and agentPreset are header keys at b150a551b8: written, listed and read back by every form."""
    header = {"version": 0, "id": "s1", "createdAt": 5, "cwd": "/w", "origin": "subagent", "agentPreset": "coder"}
    for kind in KINDS:
        b = open_backend(kind, tmp_path / kind, PUB)
        try:
            b.create(header)
            b.append("s1", _turn(0, 1))
            assert {k: b.inspect("s1")[0].get(k) for k in ("origin", "agentPreset")} == {
                "origin": "subagent", "agentPreset": "coder"}, kind
            assert b.load("s1").header["agentPreset"] == "coder", kind
        finally:
            b.close()


def test_zstd_reader_reads_the_revisions_header(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl.zstd"
    header = {"version": 0, "id": "s1", "createdAt": 5, "origin": "subagent", "agentPreset": "coder"}
    write_compressed_artifact(path, header, _turn(0, 1), revision=PUB)
    assert read_compressed_artifact(path, revision=PUB).header["origin"] == "subagent"
    assert "origin" not in read_compressed_artifact(path).header  # the pinned format has no such key


@pytest.mark.parametrize("retired", [
    {"type": "mode/set", "seq": 2, "time": 3, "data": {"mode": "plan"}},
    {"type": "request/header-delta", "seq": 2, "time": 3, "data": {}},
    {"type": "request/header", "seq": 2, "time": 3, "data": {"reason": "fallback"}},
])
def test_retired_shape_refused_at_append_and_nothing_stored(backend: Backend, retired: dict[str, Any]) -> None:
    """PERSIST-9: the whole batch is refused before anything is stored, before the seq checks."""
    backend.create({"version": 0, "id": "s1", "createdAt": 5, "cwd": "/w"})
    assert _code(backend.append, "s1", [*_turn(0, 1), retired]) == "JSONL_LEGACY_EVENT"
    assert backend.list() == []
    backend.append("s1", _turn(0, 1))
    assert _code(backend.append, "s1", [{**retired, "seq": 99}]) == "JSONL_LEGACY_EVENT"  # before PERSIST-3
    assert len(backend.inspect("s1")[1]) == 2


def test_json_check_of_the_whole_batch_comes_first(backend: Backend) -> None:
    backend.create({"version": 0, "id": "s1", "createdAt": 5, "cwd": "/w"})
    bad = {"type": "mode/set", "seq": 7, "time": 3, "data": {"x": float("nan")}}
    assert _code(backend.append, "s1", [{"type": "turn/start", "seq": 5, "time": 1, "data": {}}, bad]) == \
        "PERSIST_DATA_NOT_JSON"


def test_create_checks_only_json_and_created_at(backend: Backend) -> None:
    """PERSIST-10: header rules are the seed's, so a relative cwd is stored; it is refused at load where the
    load path seeds (b150a551b8), returned as stored at 2f74ac98ba (JSONL-12, ``loadSeeds``)."""
    assert _code(backend.create, {"version": 0, "id": "s0", "createdAt": -1}) == "HEADER_CREATED_AT"
    assert _code(backend.create, {"version": 0, "id": "s0", "createdAt": 1, "x": float("inf")}) == "HEADER_NOT_JSON"
    assert _code(backend.create, {"version": 0, "id": "s1", "createdAt": 5, "cwd": "relative/dir"}) is None
    assert _code(backend.create, {"version": 0, "id": "s1", "createdAt": 5}) == "SESSION_ALREADY_EXISTS"
    backend.append("s1", _turn(0, 1))
    if backend.format_revision == PUB:
        assert _code(backend.load, "s1") == "HEADER_CWD"
    else:
        loaded = backend.load("s1")
        assert loaded.session is None and loaded.header["cwd"] == "relative/dir" and len(loaded.events) == 2
    assert _code(backend.create, {"version": 0, "id": "s1", "createdAt": 5}) == "SESSION_ALREADY_EXISTS"


def test_a_session_with_nothing_stored_is_a_located_rejection(backend: Backend) -> None:
    """PERSIST-11: never a KeyError, whatever the step; the revision of nothing stored is absent (the
    published backends resolve undefined), not an error."""
    for step in (backend.load, backend.inspect):
        assert _code(step, "ghost") == "PERSIST_NO_SESSION"
    assert backend.revision("ghost") is None
    assert _code(backend.append, "ghost", _turn(0, 1)) == "PERSIST_NO_SESSION"
    backend.create({"version": 0, "id": "s1", "createdAt": 5, "cwd": "/w"})
    for step in (backend.load, backend.inspect):
        assert _code(step, "s1") == "PERSIST_NO_SESSION"
    assert backend.revision("s1") is None
    backend.append("s1", _turn(0, 1))
    assert isinstance(backend.revision("s1"), str)
    assert _code(backend.create, {"version": 0, "id": "s2", "createdAt": -5}) == "HEADER_CREATED_AT"
    assert _code(backend.append, "s2", _turn(0, 1)) == "PERSIST_NO_SESSION"


def test_an_id_no_path_can_hold_has_nothing_stored_until_a_project_folder_exists(tmp_path: Path) -> None:
    """PERSIST-11 for the JSONL forms: upstream's lookup encodes the id once per project folder, so with
    none (nothing stored yet) the empty id is simply not found; the fault steps find no artifact either."""
    for kind in ("jsonl", "jsonl-zstd"):
        backend = open_backend(kind, tmp_path / kind, PUB)
        (tmp_path / kind).mkdir()
        for step in (backend.load, backend.inspect, backend.artifact_bytes):
            assert _code(step, "") == "PERSIST_NO_SESSION"
        backend.create({"version": 0, "id": "s1", "createdAt": 5, "cwd": "/w"})
        backend.append("s1", _turn(0, 1))
        assert _code(backend.inspect, "") == "JSONL_PATH_INVALID"  # now the id is encoded, and refused
        assert _code(backend.tear, "", b"x", []) == "PERSIST_NO_SESSION"


_DAMAGE = {"jsonl": ("truncate", 150, "JSONL_NO_HEADER"), "jsonl-zstd": ("tear", b"\0" * 8, "ZSTD_FRAME_INVALID"),
           "sqlite": ("tear", [{"type": "turn/start", "data": '{"tu'},
                               {"type": "turn/end", "data": '{"turn":2,"reason":{"kind":"completed"}}'}], "SQLITE_CORRUPT")}


@pytest.mark.req("PERSIST-10")
@pytest.mark.parametrize("revision", REVISIONS)
@pytest.mark.parametrize("kind", KINDS)
def test_create_of_an_untracked_stored_id_reads_the_stored_log(tmp_path: Path, kind: str, revision: str) -> None:
    """PERSIST-10: the collision probe of a backend that does not track the id reads the stored prefix, so a
    log its reader refuses refuses the create with the reader's code; the backend tracking it does not read."""
    header = {"version": 0, "id": "s1", "createdAt": 5, "cwd": "/w"}
    first, second = open_backend(kind, tmp_path, revision), open_backend(kind, tmp_path, revision)
    try:
        first.create(header)
        first.append("s1", _turn(0, 1))
        assert _code(second.create, header) == "SESSION_ALREADY_EXISTS"
        how, damage, code = _DAMAGE[kind]
        if how == "truncate":
            first.truncate("s1", damage)
        else:
            first.tear("s1", damage if isinstance(damage, bytes) else b"", damage if isinstance(damage, list) else [])
        assert _code(first.create, header) == "SESSION_ALREADY_EXISTS"
        assert _code(second.create, header) == code
    finally:
        first.close()
        second.close()


@pytest.mark.parametrize("revision", REVISIONS)
@pytest.mark.parametrize("kind", KINDS)
def test_a_second_backend_adopts_and_every_backend_continues_the_stored_log(tmp_path: Path, kind: str,
                                                                            revision: str) -> None:
    """PERSIST-12: a backend appending to a session it does not track loads it first (the open turn is
    closed and written), and an append continues the log as stored, whichever backend wrote last."""
    first, second = open_backend(kind, tmp_path, revision), open_backend(kind, tmp_path, revision)
    try:
        first.create({"version": 0, "id": "s1", "createdAt": 5, "cwd": "/w"})
        first.append("s1", _turn(0, 1)[:1])  # turn 1 left open
        assert _code(second.append, "s1", _turn(0, 1)[1:]) == "PERSIST_SEQ_CONTINUE"  # the closer took seq 1
        _, stored = first.inspect("s1")
        assert [e["type"] for e in stored] == ["turn/start", "turn/end"]
        assert stored[1]["data"]["reason"]["kind"] == "interrupted"
        second.append("s1", _turn(2, 2))
        assert _code(first.append, "s1", _turn(2, 2)) == "PERSIST_SEQ_CONTINUE"  # a repeated seq is refused
        first.append("s1", _turn(4, 3))
        assert [e["seq"] for e in second.load("s1").events] == list(range(6))
    finally:
        first.close()
        second.close()


def _artifact(root: Path) -> Path:
    [path] = root.glob("*/*/session.jsonl.zstd")
    return path


@pytest.mark.parametrize("revision", REVISIONS)
def test_append_after_a_multi_block_torn_frame_keeps_its_records(tmp_path: Path, revision: str) -> None:
    """ZSTD-7: the complete records of a torn frame spanning several blocks are written back, not lost."""
    b = open_backend("jsonl-zstd", tmp_path, revision)
    b.create({"version": 0, "id": "s1", "createdAt": 5, "cwd": "/w"})
    b.append("s1", _turn(0, 1))
    path = _artifact(tmp_path)
    # a batch of ~300 KB of distinct records: more than two 128 KiB blocks, torn inside the last one
    batch = [{"type": "todo/write", "seq": 2 + i, "time": 1, "data": {"i": i, "pad": f"{i:06d}" * 40}} for i in range(1200)]
    frame = compress_frame(encode_records(batch))
    with open(path, "ab") as handle:
        handle.write(frame[: len(frame) - 40])
    recovered = read_compressed_artifact(path, revision=revision).recovered
    assert recovered and recovered[0]["seq"] == 2
    next_seq = 2 + len(recovered)
    b.append("s1", [{"type": "todo/write", "seq": next_seq, "time": 1, "data": {}}])
    events = b.inspect("s1")[1]
    assert [e["seq"] for e in events] == list(range(next_seq + 1))
    assert scan_frames(path.read_bytes()).torn_start is None
    b.close()


@pytest.mark.parametrize("stray", [b"\x00", b"ab", b"\xff\xfe\xfd", b"\x28\xb5\x2f"])
def test_one_to_three_stray_bytes_are_a_torn_frame(tmp_path: Path, stray: bytes) -> None:
    path = tmp_path / "a.jsonl.zstd"
    write_compressed_artifact(path, {"version": 0, "id": "s1", "createdAt": 5}, _turn(0, 1))
    data = path.read_bytes()
    read = read_compressed_artifact(data + stray)
    assert read.torn and read.decoded.torn_start == len(data) and len(read.events) == 2
