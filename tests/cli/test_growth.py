"""Validation stays linear on crafted logs: the cost of a 4x log is at most ~4x (with slack for noise),
never the square. Measured as interpreter work (tracemalloc peak, and time with a generous bound),
at every level, on the shapes that used to blow up: rejected replaces that shadow the whole surface,
long sourceEventSeqs, a schema-invalid event on every line, and runs of blank lines."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import time
import tracemalloc

import pytest
from cli_helpers import HEADER, peak_run
from sessionspec.cli import run

T = 1767225600000


def _line(event: dict) -> str:
    return json.dumps(event, separators=(",", ":"))


def _user(seq: int, **extra) -> dict:
    return {"type": "user/message", "seq": seq, "time": T,
            "data": {"content": [{"type": "text", "text": "m"}], "source": {"kind": "user"}}, **extra}


def _log(body: list[dict], blank: int = 0) -> bytes:
    seq = len(body) + 1
    lines = [_line(HEADER), _line({"type": "turn/start", "seq": 0, "time": T,
                                   "data": {"turn": 1, "trigger": {"kind": "message", "source": {"kind": "user"}}}})]
    lines += [_line(e) for e in body]
    lines += [""] * blank
    lines.append(_line({"type": "turn/end", "seq": seq, "time": T, "data": {"turn": 1, "reason": {"kind": "completed"}}}))
    return ("\n".join(lines) + "\n").encode()


def rejected_replaces(n: int) -> bytes:
    """Appends, each followed by a replace of the whole surface without sourceEventSeqs (SURF-9)."""
    body, first = [], 1
    for k in range(n):
        body.append(_user(2 * k + 1, surfaceOp="append"))
        body.append(_user(2 * k + 2, surfaceOp={"op": "replace", "start": first, "end": 2 * k + 1}))
    return _log(body)


def long_sources(n: int) -> bytes:
    """Appends, then one message whose sourceEventSeqs names every one of them, twice over (SURF-7)."""
    body = [_user(k + 1, surfaceOp="append") for k in range(n)]
    body.append(_user(n + 1, surfaceOp="append", sourceEventSeqs=list(range(1, n + 1)) * 2))
    return _log(body)


def schema_invalid(n: int) -> bytes:
    """Every event carries an unknown payload key and a wrong-typed field."""
    body = []
    for k in range(n):
        event = _user(k + 1, surfaceOp="append")
        event["data"]["unknown"] = k
        event["data"]["content"][0]["text"] = k
        body.append(event)
    return _log(body)


def blank_lines(n: int) -> bytes:
    return _log([_user(1, surfaceOp="append")], blank=50 * n)


def _cost(data: bytes, level: str, tmp_path) -> tuple[float, int]:
    path = tmp_path / "log.jsonl"
    path.write_bytes(data)
    tracemalloc.start()
    started = time.process_time()
    code = run(["validate", "--level", level, "--quiet", str(path)], io.StringIO(), io.StringIO())
    elapsed = time.process_time() - started
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert code in (0, 1)  # schema-invalid events are fine at level load
    return elapsed, peak


def scrambled_numbering(n: int) -> bytes:
    """Records out of order every way the reader resynchronises on: pairs swapped, runs reversed,
    records moved far, repeated and dropped (each a finding)."""
    body = [_user(k + 1, surfaceOp="append") for k in range(8 * n)]
    for k in range(0, len(body) - 40, 40):
        body[k], body[k + 1] = body[k + 1], body[k]  # a swap
        body[k + 5 : k + 9] = body[k + 5 : k + 9][::-1]  # a reversed run
        body.insert(k + 30, body.pop(k + 12))  # moved 18 later
        body.insert(k + 35, dict(body[k + 34]))  # repeated
        del body[k + 38]  # dropped
    return _log(body)


def reversed_numbering(n: int) -> bytes:
    """Every record in reverse order: one gap, then each seq found later (put back up to a bound)."""
    return _log([_user(k + 1, surfaceOp="append") for k in reversed(range(8 * n))])


# events per shape at 1x: small enough for the CI profile (tracemalloc slows the checker ~10x)
SIZES = {rejected_replaces: 150, long_sources: 150, schema_invalid: 50, blank_lines: 60, scrambled_numbering: 150,
         reversed_numbering: 150}


@pytest.mark.parametrize("shape", list(SIZES), ids=lambda f: f.__name__)
@pytest.mark.parametrize("level", ["load", "strict"])
def test_cost_grows_linearly(shape, level, tmp_path):
    n = SIZES[shape]
    small, large = shape(n), shape(4 * n)
    assert 3 < len(large) / len(small) < 5.5
    _cost(small, level, tmp_path)  # warm caches (schemas, generated types)
    t1, m1 = _cost(small, level, tmp_path)
    t4, m4 = _cost(large, level, tmp_path)
    size_ratio = len(large) / len(small)
    assert m4 / m1 < 1.6 * size_ratio, (m1, m4)  # quadratic would be ~16x
    assert t4 < 2.5 * size_ratio * t1 + 0.5, (t1, t4)


def one_big_row(n: int) -> bytes:
    """One packed text-chunks row of ``n`` members (a few bytes each) between block-start and block-end."""
    start = {"type": "assistant/chunk", "seq": 2, "time": T,
             "data": {"turn": 1, "step": 1, "chunk": {"type": "block-start", "index": 0, "blockType": "text"}}}
    row = {"type": "text-chunks", "seq0": 3, "time0": T,
           "data": {"turn": 1, "step": 1, "index": 0, "dt": [0] * (n - 1), "texts": ["a"] * n}}
    end = {"type": "assistant/chunk", "seq": 3 + n, "time": T, "data": {"turn": 1, "step": 1, "chunk": {
        "type": "block-end", "index": 0, "block": {"type": "text", "text": "a" * n}}}}
    lines = [_line(HEADER),
             _line({"type": "turn/start", "seq": 0, "time": T,
                    "data": {"turn": 1, "trigger": {"kind": "message", "source": {"kind": "user"}}}}),
             _line({"type": "step/start", "seq": 1, "time": T, "data": {"turn": 1, "step": 1}}),
             _line(start), _line(row), _line(end),
             _line({"type": "step/end", "seq": 4 + n, "time": T, "data": {"turn": 1, "step": 1}}),
             _line({"type": "turn/end", "seq": 5 + n, "time": T, "data": {"turn": 1, "reason": {"kind": "completed"}}})]
    return ("\n".join(lines) + "\n").encode()


def test_unpacking_a_huge_row_costs_memory_in_proportion_to_its_output(tmp_path):
    path, target = tmp_path / "row.jsonl", tmp_path / "out.jsonl"
    path.write_bytes(one_big_row(10))
    run(["unpack", str(path), "-o", str(target)], io.StringIO(), io.StringIO())  # warm: imports, tables
    path.write_bytes(one_big_row(5_000))
    tracemalloc.start()
    code = run(["unpack", str(path), "-o", str(target), "--force"], io.StringIO(), io.StringIO())
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert code == 0
    output = target.stat().st_size
    # the events themselves (~1 KB each as Python objects) plus a few copies of the output; a list of
    # a million orjson results once kept ~4 KB of spare capacity per event (5.7 GB for 7 MB of input)
    assert peak < 5_000 * 2_000 + 6 * output, (peak, output)


#: Peak resident memory of `unpack` above a bare run: a fixed part (the streaming check's 8 MiB blocks and
#: their lines, one batch of member events) plus a part per MB of input (its bytes, lines and parsed
#: records). Issue 14: a 6 MB row of a million members peaks at 204 MB (140 MB above the floor), against
#: 2.9 GB when every member event was held; 1.4 MB (200,000 members): 60 MB above the floor.
UNPACK_FIXED_MB = 48
UNPACK_MB_PER_INPUT_MB = 30


def _peak_rss_kb(args: list[str]) -> int:
    """Peak RSS of a fresh process running the CLI with ``args`` (its own, in KiB: `cli_helpers.peak_run`)."""
    code, peak, out = peak_run(*args)
    assert code == 0, out
    return peak


def test_unpacking_a_huge_row_is_bounded_by_its_input_not_by_its_events(tmp_path):
    """A packed row is expanded a batch of members at a time straight into the output file, which the
    streaming check then proves loadable: peak memory follows the input, never the events it holds."""
    small, big, target = tmp_path / "small.jsonl", tmp_path / "big.jsonl", tmp_path / "out.jsonl"
    small.write_bytes(one_big_row(10))
    big.write_bytes(one_big_row(200_000))
    floor = _peak_rss_kb(["unpack", str(small), "-o", str(target)])
    started = time.perf_counter()
    peak = _peak_rss_kb(["unpack", str(big), "-o", str(target), "--force"])
    elapsed = time.perf_counter() - started
    input_mb = big.stat().st_size / 1e6
    assert target.stat().st_size > 15 * big.stat().st_size  # 200,000 events, one per line
    assert (peak - floor) / 1e3 < UNPACK_FIXED_MB + UNPACK_MB_PER_INPUT_MB * input_mb, (peak, floor, input_mb)
    assert elapsed < 120, elapsed  # a generous bound for a shared machine (about 2 s when idle)


def _store(path, sessions: int):
    """A SQLite store of ``sessions`` copies of one closed turn (ids s1, c1, c2, ...), written with SQL."""
    import sqlite3
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent.parent))
    from storage_fixtures import one_turn, write_db

    write_db(path, [one_turn()])
    db = sqlite3.connect(path)
    db.execute("CREATE TEMP TABLE n(k INTEGER PRIMARY KEY)")
    db.executemany("INSERT INTO n VALUES (?)", [(k,) for k in range(1, sessions)])
    columns = [row[1] for row in db.execute("PRAGMA table_info(sessions)")]
    rest = ", ".join(columns[1:])
    db.execute(f"INSERT INTO sessions SELECT 'c' || n.k, {rest} FROM sessions, n WHERE sessions.id = 's1'")  # noqa: S608  # (columns from the layout)
    events = ", ".join(row[1] for row in db.execute("PRAGMA table_info(events)") if row[1] != "session_id")
    db.execute(f"INSERT INTO events SELECT 'c' || n.k, {events} FROM events, n WHERE events.session_id = 's1'")  # noqa: S608
    db.commit()
    db.close()
    return path


def _cpu(argv: list[str], sessions: int) -> float:
    """The CPU seconds of ``sessionspec ARGV`` in a child, which must find the store's sessions all valid."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run([sys.executable, "-c", "from sessionspec.cli import main; main()", *argv],
                          capture_output=True, text=True, check=False, timeout=300)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert done.returncode == 0 and f"{sessions} file(s) checked at level schema: 0 invalid" in done.stdout, done
    return (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def test_a_store_of_many_sessions_is_read_in_linear_time(tmp_path) -> None:
    """Issue 25: reads per session go through the layout's primary-key index (a store without it is refused by
    the layout check), so 4x the sessions cost about 4x, not 16x (138 s for 16k sessions without the keys)."""
    base = _cpu(["validate", str(_store(tmp_path / "one.db", 1))], 1)
    small = _cpu(["validate", str(_store(tmp_path / "small.db", 1000))], 1000) - base
    large = _cpu(["validate", str(_store(tmp_path / "large.db", 4000))], 4000) - base
    assert large <= 2.5 * 4 * max(small, 0.2), (base, small, large)
