"""Files per second of `sessionspec validate -j N` over a folder of small logs (issue 13).

Writes `--files` logs (default 1,000) of the shared benchmark mix (`gen_logs`, about `--events`
events each, a different seed per file, packed) into one folder, then runs
``sessionspec validate --quiet -j N --level L FOLDER`` as a whole process, alternating the job
counts run by run so that load from other work hits each alike; reports the median wall time
and files per second for each N, and the speed-up over the first.

    python bench/bench_many.py                       # 1,000 logs, -j 1 and -j 2, level schema
    python bench/bench_many.py --jobs 1,2,4 --runs 5 --level strict
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gen_logs import generate_events, write_artifact

__all__ = ["time_jobs", "write_fleet"]


def write_fleet(folder: Path, files: int, events: int) -> int:
    """`files` packed logs of about `events` events each; returns the total event count."""
    folder.mkdir(parents=True, exist_ok=True)
    total = 0
    for i in range(files):
        total += write_artifact(folder / f"log-{i:05d}.jsonl", generate_events(events, seed=1000 + i), packed=True).events
    return total


def time_jobs(folder: Path, jobs: list[int], runs: int, level: str) -> dict[int, list[float]]:
    """Wall seconds of each whole `validate` process, per job count, runs interleaved."""
    times: dict[int, list[float]] = {j: [] for j in jobs}
    for _ in range(runs):
        for j in jobs:
            start = time.perf_counter()
            done = subprocess.run([sys.executable, "-c", "from sessionspec.cli import main; main()", "validate",
                                   "--quiet", "--level", level, "-j", str(j), str(folder)], check=False)
            times[j].append(time.perf_counter() - start)
            if done.returncode != 0:
                raise SystemExit(f"validate -j {j} exited {done.returncode}: the generated logs should be valid")
    return times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--events", type=int, default=100, help="events per log (about; whole turns)")
    parser.add_argument("--jobs", default="1,2")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--level", default="schema")
    parser.add_argument("--keep", metavar="DIR", help="write (and reuse) the logs here")
    args = parser.parse_args(argv)
    jobs = [int(j) for j in args.jobs.split(",")]
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(args.keep or scratch) / f"fleet-{args.files}x{args.events}"
        existing = len(list(folder.glob("*.jsonl"))) if folder.exists() else 0
        if existing != args.files:
            write_fleet(folder, args.files, args.events)
        size = sum(p.stat().st_size for p in folder.glob("*.jsonl"))
        print(f"{args.files:,} logs, {size / 1e6:.1f} MB, level {args.level}, {args.runs} runs (interleaved)")
        times = time_jobs(folder, jobs, args.runs, args.level)
        base = statistics.median(times[jobs[0]])
        print("| -j | median wall | min-max | files/s | speed-up |")
        print("|---:|---:|---:|---:|---:|")
        for j in jobs:
            med = statistics.median(times[j])
            print(f"| {j} | {med:.2f} s | {min(times[j]):.2f}-{max(times[j]):.2f} | {args.files / med:,.0f} "
                  f"| {base / med:.2f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
