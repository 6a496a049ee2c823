"""Stored sessions in all three storage forms, made by independent writers.

Compressed artifacts come from the ``zstd`` command line tool (one
``--check`` frame per batch, concatenated), databases from Python's
``sqlite3`` through the reference store, so tests compare our readers
against files our writers did not make.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from sessionspec.reference.jsonl import encode_records, header_line, write_artifact
from sessionspec.reference.sqlite_store import SqliteStore

HEADER: dict[str, Any] = {"version": 0, "id": "s1", "createdAt": 1000, "cwd": "/work", "delegationDepth": 0}
USER = {"kind": "message", "source": {"kind": "user"}}


def one_turn(start: int = 0, turn: int = 1) -> list[dict[str, Any]]:
    """A closed turn with a user message, one step and an assistant reply, seqs from ``start``."""
    s = start
    return [
        {"type": "turn/start", "seq": s, "time": s + 1, "data": {"turn": turn, "trigger": USER}},
        {"type": "user/message", "seq": s + 1, "time": s + 2,
         "data": {"content": [{"type": "text", "text": "hi"}], "source": {"kind": "user"}}, "surfaceOp": "append"},
        {"type": "step/start", "seq": s + 2, "time": s + 3, "data": {"turn": turn, "step": 1}},
        {"type": "assistant/message", "seq": s + 3, "time": s + 4,
         "data": {"turn": turn, "step": 1, "content": [{"type": "text", "text": "hello"}],
                  "provenance": {"provider": "mock", "model": "mock"}}, "surfaceOp": "append"},
        {"type": "step/end", "seq": s + 4, "time": s + 5, "data": {"turn": turn, "step": 1}},
        {"type": "turn/end", "seq": s + 5, "time": s + 6, "data": {"turn": turn, "reason": {"kind": "completed"}}},
    ]


def open_turn(start: int, turn: int = 2) -> list[dict[str, Any]]:
    """A turn cut by a crash after its step started."""
    return [
        {"type": "turn/start", "seq": start, "time": start + 1, "data": {"turn": turn, "trigger": USER}},
        {"type": "step/start", "seq": start + 1, "time": start + 2, "data": {"turn": turn, "step": 1}},
    ]


def zstd_cli() -> str:
    tool = shutil.which("zstd")
    if tool is None:
        pytest.fail("the zstd command line tool is required (apt-get install zstd; .ci/run installs it)")
    return tool


def cli_frame(plaintext: bytes) -> bytes:
    """One checksummed frame written by the zstd command line tool."""
    return subprocess.run([zstd_cli(), "-q", "--check", "-c"], input=plaintext, capture_output=True, check=True).stdout


def header_bytes(header: dict[str, Any] = HEADER) -> bytes:
    return json.dumps(header_line(header), separators=(",", ":")).encode() + b"\n"


def write_cli_zstd(path: Path, batches: Sequence[Sequence[dict[str, Any]]], header: dict[str, Any] = HEADER) -> Path:
    """A multi-frame compressed artifact: a header frame, then one frame per batch, all by the zstd CLI."""
    path.write_bytes(cli_frame(header_bytes(header)) + b"".join(cli_frame(encode_records(b)) for b in batches if b))
    return path


def write_raw(path: Path, batches: Sequence[Sequence[dict[str, Any]]], header: dict[str, Any] = HEADER) -> Path:
    write_artifact(path, header, [e for b in batches for e in b])
    return path


def write_db(path: Path, batches: Sequence[Sequence[dict[str, Any]]], header: dict[str, Any] = HEADER,
             journal_mode: str = "delete") -> Path:
    """A SQLite store holding one session, one transaction per batch."""
    with SqliteStore.create(path, journal_mode=journal_mode) as store:
        for batch in batches:
            store.append(header, batch)
    return path


FORMS = ("jsonl", "zstd", "sqlite")


def crashed(form: str, folder: Path, turns: int = 1) -> Path:
    """A session of ``turns`` closed turns and one left open (a crash mid-turn) in ``form``, named ``in.*``."""
    closed = [e for n in range(turns) for e in one_turn(6 * n, n + 1)]
    events = [*closed, *open_turn(len(closed), turns + 1)]
    if form == "sqlite":
        return write_db(folder / "in.db", [events])
    if form == "zstd":
        from sessionspec.reference.jsonl_zstd import write_compressed_artifact

        path = folder / "in.jsonl.zstd"
        write_compressed_artifact(path, HEADER, events)
        return path
    return write_raw(folder / "in.jsonl", [events])
