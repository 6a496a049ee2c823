"""The promise of docs/security.md as a property: seeded mutations of real logs (byte flips,
structural edits, packed-row edits) fed to every command never raise, exit with a documented code,
leave the input byte-identical, and stay within the stated time and memory per MB of input.
Hostile paths (devices, a FIFO without writer, loops, folders, /proc) get the same promise."""

from __future__ import annotations

import io
import os
import sys
import time
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sessionspec.cli import run
from sessionspec.spec import inputs

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from gen_logs import artifact_bytes, generate_events
from test_fastlog import SMALL

EVENTS = generate_events(120, seed=11, mix=SMALL)
LOGS = {"packed": artifact_bytes(EVENTS, packed=True), "plain": artifact_bytes(EVENTS, packed=False)}

# The bounds docs/security.md states, per MB of input on top of a fixed allowance (the checker's
# tables and schemas are built before measuring). Generous: the point is "never the square". Time is
# this process's CPU time, so a loaded machine (parallel test workers) does not count against the command.
SECONDS_FIXED, SECONDS_PER_MB = 5.0, 20.0
BYTES_FIXED, BYTES_PER_INPUT_BYTE = 32 << 20, 200

COMMANDS = [
    ["validate", "--level", "load"], ["validate", "--level", "strict", "--format", "json"],
    ["validate", "--format", "github", "--exact"], ["derive"], ["fold", "--format", "text"],
    ["stats"], ["header", "--format", "text"], ["repair", "-o", "{out}"], ["pack", "-o", "{out}"],
    ["unpack", "-o", "{out}"],
]
EXIT_CODES = {0, 1, 2}


def _lines(data: bytes) -> list[bytes]:
    return data.split(b"\n")


@st.composite
def mutated_log(draw):
    data = bytearray(LOGS[draw(st.sampled_from(sorted(LOGS)))])
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["flip", "insert", "delete-line", "duplicate-line", "swap-lines", "move-line",
                                     "truncate", "row-edit", "splice-text"]))
        lines = _lines(bytes(data))
        if kind == "flip" and data:
            i = draw(st.integers(0, len(data) - 1))
            data[i] ^= 1 << draw(st.integers(0, 7))
            continue
        if kind == "insert":
            i = draw(st.integers(0, len(data)))
            data[i:i] = draw(st.sampled_from([b"\n", b"\x00", b"\xff", b"\xed\xa0\x80", b'"\\ud800"', b"9" * 5000,
                                              b"[" * 2000, b"1e400", b"\r\n", b",", b"{}", b"\n\n\n"]))
            continue
        i, j = (draw(st.integers(0, max(0, len(lines) - 1))) for _ in range(2))
        if kind == "delete-line":
            del lines[i]
        elif kind == "duplicate-line":
            lines.insert(j, lines[i])
        elif kind == "swap-lines":
            lines[i], lines[j] = lines[j], lines[i]
        elif kind == "move-line":
            lines.insert(j, lines.pop(i))
        elif kind == "truncate":
            data = data[: draw(st.integers(0, len(data)))]
            continue
        elif kind == "row-edit":  # change a number or a string inside a packed chunk row
            rows = [k for k, line in enumerate(lines) if line.startswith(b'{"type":"assistant/chunk-')]
            if rows:
                k = draw(st.sampled_from(rows))
                line = lines[k]
                at = draw(st.integers(0, max(0, len(line) - 1)))
                lines[k] = line[:at] + draw(st.sampled_from([b"7", b'"', b"]", b"-1", b"null", b",0"])) + line[at + 1:]
        elif kind == "splice-text":
            lines[i] = lines[i].replace(b'"type":"', b'"type":"\\n::error::', 1)
        data = bytearray(b"\n".join(lines))
    return bytes(data)


def _run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8"), io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    code = run(argv, out, err)  # a raise here is the traceback the promise rules out
    out.flush(), err.flush()
    return code, out.buffer.getvalue().decode(), err.buffer.getvalue().decode()  # type: ignore[attr-defined]


@pytest.fixture(scope="module")
def warm(tmp_path_factory):
    path = tmp_path_factory.mktemp("warm") / "log.jsonl"
    path.write_bytes(LOGS["packed"])
    for command in COMMANDS:
        _run([command[0], str(path), *(a.format(out=str(path) + ".out") for a in command[1:])])


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
          deadline=None)
@given(data=mutated_log(), command=st.sampled_from(COMMANDS))
def test_mutated_logs_keep_the_promise(warm, tmp_path, data, command):
    path = tmp_path / "log.jsonl"
    path.write_bytes(data)
    out_path = tmp_path / "out.jsonl"
    argv = [command[0], str(path), *(a.format(out=str(out_path)) for a in command[1:])]
    tracemalloc.start()
    started = time.process_time()
    try:
        code, out, err = _run(argv)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    elapsed = time.process_time() - started
    megabytes = len(data) / 1e6
    assert code in EXIT_CODES, (code, err)
    assert path.read_bytes() == data  # the input is never touched
    assert elapsed < SECONDS_FIXED + SECONDS_PER_MB * megabytes
    assert peak < BYTES_FIXED + BYTES_PER_INPUT_BYTE * len(data)
    if code == 0 and command[0] in ("repair", "pack", "unpack"):
        assert _run(["validate", "--level", "load", "--fail-on", "error", str(out_path)])[0] == 0  # it loads


def _hostile_paths(tmp: Path) -> dict[str, str]:
    (tmp / "dir").mkdir()
    os.mkfifo(tmp / "fifo")
    (tmp / "loop").symlink_to(tmp / "loop")
    (tmp / "file").write_bytes(LOGS["plain"])
    return {"devnull": "/dev/null", "zero": "/dev/zero", "urandom": "/dev/urandom", "dir": str(tmp / "dir"),
            "fifo": str(tmp / "fifo"), "loop": str(tmp / "loop"), "missing": str(tmp / "missing"), "empty": "",
            "proc": "/proc/self/status", "below-a-file": str(tmp / "file" / "x.jsonl")}


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c[:2]))
def test_hostile_paths_keep_the_promise(tmp_path, monkeypatch, command):
    monkeypatch.setattr(inputs, "FIFO_WAIT", 0.05)
    paths = _hostile_paths(tmp_path)
    good = str(tmp_path / "file")
    for name, hostile in paths.items():
        argv = [command[0], hostile, *(a.format(out=str(tmp_path / "o.jsonl")) for a in command[1:])]
        code, _, _ = _run(argv)
        assert code in EXIT_CODES, name
        if "{out}" in command:  # the same hostile names as the output: refused, except a new file
            devnull = os.stat("/dev/null")
            code, _, err = _run([command[0], good, "-o", hostile])
            assert code == (0 if name == "missing" else 2), (name, err)
            assert os.stat("/dev/null").st_ino == devnull.st_ino and Path(tmp_path / "fifo").is_fifo()
    assert (tmp_path / "file").read_bytes() == LOGS["plain"]
