"""Benchmark the HTML page of conformance runs (`sessionspec report`) against parse-only.

The run is built from a recorded Node run with fuzz failures
(`bench/data/node-0.1.1-rc.2-at-2f74ac98ba-fuzz.jsonl`: 0.1.1-rc.2 judged by the pinned revision's
vectors, recorded before the spec described the published revision, so it fails often; 504 cases, about a quarter of them failed or errored, with request, expectation and reply kept,
and one payload nested 10,000 levels deep among them): its cases are repeated, each copy with a
fresh id, up to N cases, so N = 5,000 holds about 1,200 failing cases, every one rendered with
requirement text, elided input, full JSON and a line diff. `--all-failing` makes every case a
failing one (the worst case for the page).

Each size is timed in the same process, on the same file, interleaved:

* parse-only: read the file and ``orjson.loads`` every line: the floor any reader pays;
* load: ``load_report`` (parse plus the report schema, line by line);
* render: ``render_html`` of the loaded run (the page, as one string);
* command: ``sessionspec report FILE --html OUT`` in-process (load, render and the atomic write).

Usage::

    python bench/bench_html_report.py                      # 500, 5,000 and 20,000 cases
    python bench/bench_html_report.py --sizes 5000 --runs 7 --all-failing

Why medians: the machine is shared; the median of several runs with its min-max range is robust
to a noisy neighbour, and CPU time (process time) is printed beside wall time.
"""

from __future__ import annotations

import argparse
import io
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
from sessionspec import cli
from sessionspec.conformance import wire
from sessionspec.conformance.html_report import render_html, run_from_lines
from sessionspec.conformance.report import load_report

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "bench" / "data" / "node-0.1.1-rc.2-at-2f74ac98ba-fuzz.jsonl"


def build_report(cases: int, all_failing: bool) -> list[dict[str, Any]]:
    """A report of ``cases`` case lines repeated from the recorded run, each with its own id."""
    lines = [wire.loads(line) for line in SOURCE.read_text(encoding="utf-8").splitlines() if line.strip()]
    header, recorded, footer = lines[0], lines[1:-1], lines[-1]
    pool = [c for c in recorded if "request" in c] if all_failing else recorded
    out = []
    for i in range(cases):
        case = dict(pool[i % len(pool)])
        case["id"] = f"{case['id']}-{i // len(pool)}"
        if all_failing and case["outcome"] in ("passed", "skipped"):
            case["outcome"] = "failed"
        out.append(case)
    counts: dict[str, int] = {}
    for c in out:
        counts[c["outcome"]] = counts.get(c["outcome"], 0) + 1
    return [header, *out, {**footer, "counts": counts}]


def timed(fn: Callable[[], Any], runs: int) -> tuple[list[float], list[float]]:
    wall, cpu = [], []
    for _ in range(runs):
        w, c = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - w)
        cpu.append(time.process_time() - c)
    return wall, cpu


def show(label: str, wall: list[float], cpu: list[float], base: float) -> str:
    med = statistics.median(wall)
    return (f"  {label:<11} {med * 1000:8.1f} ms wall (min {min(wall) * 1000:.1f}, max {max(wall) * 1000:.1f})"
            f"  {statistics.median(cpu) * 1000:8.1f} ms cpu   {med / base:6.1f}x parse-only")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="500,5000,20000", help="case counts (default: %(default)s)")
    parser.add_argument("--runs", type=int, default=5, help="timed runs per measurement (default: %(default)s)")
    parser.add_argument("--all-failing", action="store_true", help="make every case a failing one")
    args = parser.parse_args()
    print(f"python {sys.version.split()[0]}; source {SOURCE.relative_to(ROOT)}; "
          f"{'every case failing' if args.all_failing else 'the recorded mix of outcomes'}")
    with tempfile.TemporaryDirectory() as tmp:
        for size in (int(s) for s in args.sizes.split(",")):
            lines = build_report(size, args.all_failing)
            path = Path(tmp) / f"run-{size}.jsonl"
            path.write_text("".join(wire.dumps(line) + "\n" for line in lines), encoding="utf-8")
            out_html = Path(tmp) / f"run-{size}.html"
            loaded = load_report(path)
            run = run_from_lines([loaded.header, *loaded.cases, loaded.footer], str(path), SOURCE.parent)  # its traces
            render_html([run])  # warm-up: schema compilation, imports, the requirements file

            def parse_only() -> None:
                for raw in path.read_bytes().split(b"\n"):
                    if raw.strip():
                        try:
                            orjson.loads(raw)
                        except orjson.JSONDecodeError:  # the 10,000-deep payload: the iterative parser
                            wire.loads(raw)

            def command() -> None:
                code = cli.run(["report", str(path), "--html", str(out_html)], io.StringIO(), io.StringIO())
                assert code == 0

            results = {name: timed(fn, args.runs) for name, fn in (
                ("parse-only", parse_only), ("load", lambda: load_report(path)),
                ("render", lambda: render_html([run])), ("command", command))}
            base = statistics.median(results["parse-only"][0])
            failing = sum(1 for c in loaded.cases if c["outcome"] not in ("passed", "skipped"))
            print(f"{size:,} cases ({failing:,} listed as failing), report {path.stat().st_size / 1e6:.1f} MB, "
                  f"page {out_html.stat().st_size / 1e6:.1f} MB")
            for name, (wall, cpu) in results.items():
                print(show(name, wall, cpu, base))


if __name__ == "__main__":
    main()
