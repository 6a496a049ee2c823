"""Peak memory of `sessionspec validate` against the size of the log (issue 13: bounded, not growing with it).

Writes logs of the shared benchmark mix (`gen_logs.iter_events`, seed 7) turn by turn, so the
generator never holds the log either, then runs ``sessionspec validate --level L --quiet FILE``
in a fresh process per log and level and reads the child's peak resident set size
(``ru_maxrss`` from ``os.wait4``). The floor is the same interpreter importing the same modules
and validating a one-event log.

    python bench/bench_memory.py                          # 100k, 400k, 1.6M events, packed
    python bench/bench_memory.py --gigabyte               # also a log of at least 1 GB (unpacked)
    python bench/bench_memory.py --sizes 100000 --levels schema --keep /tmp/logs

Peak RSS is in MB (10^6 bytes).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gen_logs import iter_events
from sessionspec.reference import json_text, jsonl

__all__ = ["peak_rss", "write_log"]


def write_log(path: Path, n_events: int, *, packed: bool, min_bytes: int = 0) -> tuple[int, int]:
    """Write `n_events` (or, with `min_bytes`, at least that many bytes) turn by turn; (events, bytes)."""
    header = {"version": 0, "id": f"mem-{n_events}", "createdAt": 1_780_000_000_000, "cwd": "/work/bench",
              "delegationDepth": 0}
    limit = n_events if not min_bytes else 1 << 62
    written = events = 0
    with open(path, "wb") as out:
        written += out.write(json_text.dumps_bytes(jsonl.header_line(header)) + b"\n")
        turn: list[dict] = []
        for event in iter_events(limit, seed=7):
            turn.append(event)
            if event["type"] == "turn/end":
                written += out.write(jsonl.encode_records(turn, pack=packed))
                events += len(turn)
                turn = []
                if (min_bytes and written >= min_bytes) or (not min_bytes and events >= n_events):
                    break
        if turn:
            written += out.write(jsonl.encode_records(turn, pack=packed))
            events += len(turn)
    return events, written


#: The small process each measured command is forked from: Linux carries the peak resident set of the image exec
#: replaced into the new program's ``ru_maxrss``, so a command exec'd straight from this driver (about 90 MB after a
#: few matrix rows) measured at least the driver's peak. Forked from this fresh interpreter, the command's ``wait4``
#: figures (CPU and peak RSS) are its own.
_FORK_DRIVER = r"""
import json, os, sys, time
argv = json.loads(sys.argv[1])
start = time.perf_counter()
pid = os.fork()
if pid == 0:
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0); os.dup2(null, 1); os.dup2(null, 2)
    try:
        os.execv(argv[0], argv)
    finally:
        os._exit(127)
_, status, usage = os.wait4(pid, 0)
print(json.dumps({"wall": time.perf_counter() - start, "cpu": usage.ru_utime + usage.ru_stime,
                  "rss": usage.ru_maxrss * 1024, "code": os.waitstatus_to_exitcode(status)}))
"""


def own_usage(argv: list[str], env: dict[str, str] | None = None) -> dict[str, float]:
    """Exit status (``code``), wall and CPU seconds and peak RSS (bytes) of one run of ``argv``, its own."""
    done = subprocess.run([sys.executable, "-c", _FORK_DRIVER, json.dumps(argv)], capture_output=True, text=True,
                          env=env, check=False)
    if done.returncode != 0:
        raise SystemExit(f"the measuring driver failed: {done.stderr[-2000:]}")
    result: dict[str, float] = json.loads(done.stdout)
    return result


def peak_rss(argv: list[str]) -> tuple[int, float, int]:
    """(exit status, wall seconds, peak RSS in bytes) of one child process, its own (`own_usage`)."""
    result = own_usage(argv)
    return int(result["code"]), result["wall"], int(result["rss"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="100000,400000,1600000", help="event counts (comma-separated)")
    parser.add_argument("--levels", default="schema,strict", help="validate levels (comma-separated)")
    parser.add_argument("--layout", choices=("packed", "unpacked"), default="packed")
    parser.add_argument("--gigabyte", action="store_true", help="also a log of at least 1 GB (unpacked)")
    parser.add_argument("--keep", metavar="DIR", help="write (and reuse) the logs here instead of a temporary folder")
    args = parser.parse_args(argv)
    cli = [sys.executable, "-c", "from sessionspec.cli import main; main()", "validate", "--quiet"]
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(args.keep or scratch)
        folder.mkdir(parents=True, exist_ok=True)
        logs: list[tuple[str, Path, int, int]] = []
        one = folder / "one.jsonl"
        write_log(one, 1, packed=False)
        for n in [int(s) for s in args.sizes.split(",") if s]:
            path = folder / f"mem-{n}-{args.layout}.jsonl"
            events, size = write_log(path, n, packed=args.layout == "packed")
            logs.append((f"{events:,} events, {args.layout}", path, events, size))
        if args.gigabyte:
            path = folder / "mem-1gb-unpacked.jsonl"
            events, size = write_log(path, 0, packed=False, min_bytes=10**9)
            logs.append((f"{events:,} events, unpacked", path, events, size))
        print("| log | file | level | exit | wall | peak RSS | above the floor |")
        print("|---|---:|---|---:|---:|---:|---:|")
        for level in args.levels.split(","):
            _, _, floor = peak_rss([*cli, "--level", level, str(one)])
            print(f"| one event (the floor) | - | {level} | 0 | - | {floor / 1e6:.0f} MB | - |")
            for label, path, _events, size in logs:
                code, wall, rss = peak_rss([*cli, "--level", level, str(path)])
                print(f"| {label} | {size / 1e6:.0f} MB | {level} | {code} | {wall:.1f} s | {rss / 1e6:.0f} MB "
                      f"| {(rss - floor) / 1e6:.0f} MB |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
