"""What operators feel (issue 13): start-up, whole-process validate, peak memory, many files.

Each measurement runs whole processes, alternating the measured command with its baseline run
by run, so load from other work hits both alike; times are medians with the min-max range.
CPU time (user + system of the child, from ``os.wait4``) is reported beside wall time: on a
shared machine the wall time of a short process is mostly waiting for a core.

* start-up: ``sessionspec validate --level schema --quiet`` on a one-event log against
  ``python -c "import orjson"``;
* whole-process validate: ``validate --level schema --quiet`` on a log written one event per
  line against a process that only ``orjson.loads`` every line of it;
* peak memory: ``validate --level schema`` and ``strict`` on packed logs of 100k, 400k, 1.6M
  events (``--gigabyte``: also an unpacked log of at least 1 GB), peak RSS of the child;
* many files: ``validate -j 1`` and ``-j 2`` over 1,000 small logs, files per second.

    python bench/operators.py                 # all of it; rewrites its block of docs/benchmarks.md
    python bench/operators.py --quick         # small sizes, nothing written (a smoke run)
    python bench/operators.py --gigabyte      # also the 1 GB log (a few minutes more)
    python bench/operators.py --whole         # only whole-process validate against parse-only, printed
    python bench/operators.py --whole --against OLD   # ... and the code of the source tree OLD (a git worktree of
                                                      # another revision) in the same alternation
"""

from __future__ import annotations

import argparse
import compileall
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_many import write_fleet
from bench_memory import own_usage, write_log

__all__ = ["measure", "render", "write_block"]

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "benchmarks.md"
BEGIN = "<!-- bench/operators.py: generated, begin -->"
END = "<!-- bench/operators.py: generated, end -->"
#: `python -c "import orjson"` on this machine when idle (issue 13's calibration): the start-up target is
#: judged by the ratio to it when load inflates even CPU times.
IDLE_PYTHON = 0.02
CLI = [sys.executable, "-c", "from sessionspec.cli import main; main()"]
PARSE_ONLY = [sys.executable, "-c", "import sys, orjson\nloads = orjson.loads\n"
              "with open(sys.argv[1], 'rb') as f:\n    for line in f:\n        loads(line)"]


def child(argv: list[str], env: dict[str, str] | None = None) -> dict[str, float]:
    """Wall seconds, CPU seconds and peak RSS (bytes) of one child process, its own (`bench_memory.own_usage`); it
    must exit 0."""
    result = own_usage(argv, env)
    if result["code"] != 0:
        raise SystemExit(f"{' '.join(argv[-3:])}: exit status {result['code']}")
    return {"wall": result["wall"], "cpu": result["cpu"], "rss": result["rss"]}


def alternate(commands: dict[str, list[str]], runs: int, warmup: int = 1,
              envs: dict[str, dict[str, str]] | None = None) -> dict[str, dict[str, list[float]]]:
    """Run each command `runs` times (after `warmup` untimed rounds), one of each in turn (`envs`: a command's
    environment, when it is not this process's)."""
    out: dict[str, dict[str, list[float]]] = {name: {"wall": [], "cpu": [], "rss": []} for name in commands}
    for round_ in range(warmup + runs):
        for name, argv in commands.items():
            result = child(argv, (envs or {}).get(name))
            if round_ >= warmup:
                for key, value in result.items():
                    out[name][key].append(value)
    return out


def _med(values: list[float]) -> float:
    return statistics.median(values)


def measure_whole(folder: Path, events: int, runs: int) -> dict[str, Any]:
    """Whole-process ``validate --level schema`` against a process that only ``orjson.loads`` every line,
    on a log of `events` written one event per line, alternating run by run."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = folder / f"lines-{events}.jsonl"
    count, size = write_log(lines, events, packed=False)
    return {"events": count, "bytes": size, "times": alternate({
        "validate": [*CLI, "validate", "--level", "schema", "--quiet", str(lines)],
        "parse": [*PARSE_ONLY, str(lines)],
    }, runs)}


def installed_copy(tree: Path, target: Path) -> Path:
    """The package of source tree `tree` laid out as installed (``pyproject.toml`` package-dir) under `target`,
    its bytecode compiled: a revision to compare, imported through ``PYTHONPATH`` like no editable finder."""
    package = target / "sessionspec"
    shutil.copytree(tree / "tools", package, ignore=shutil.ignore_patterns("__pycache__"))
    for folder in ("spec", "reference", "conformance"):
        shutil.copytree(tree / folder, package / folder, ignore=shutil.ignore_patterns("__pycache__", "node_modules"))
    compileall.compile_dir(str(target), quiet=2)
    return target


def measure_against(folder: Path, events: int, runs: int, old_tree: Path) -> dict[str, Any]:
    """Whole-process validate of this tree and of `old_tree`, both as installed copies, and parse-only, alternating."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = folder / f"lines-{events}.jsonl"
    count, size = write_log(lines, events, packed=False)
    argv = [*CLI, "validate", "--level", "schema", "--quiet", str(lines)]
    sites = {name: str(installed_copy(tree, folder / f"site-{name}")) for name, tree in (("new", ROOT), ("old", old_tree))}
    envs = {f"validate ({name})": {**os.environ, "PYTHONPATH": site} for name, site in sites.items()}
    return {"events": count, "bytes": size, "times": alternate(
        {"validate (old)": argv, "validate (new)": argv, "parse": [*PARSE_ONLY, str(lines)]}, runs, envs=envs)}


def whole_row(whole: dict[str, Any]) -> str:
    """The issue-13 row of the whole-process comparison (CPU ratio, wall ratio, pass or fail)."""
    times = whole["times"]
    cpu = _med(times["validate"]["cpu"]) / _med(times["parse"]["cpu"])
    wall = _med(times["validate"]["wall"]) / _med(times["parse"]["wall"])
    return (f"| validate, whole process, {whole['events']:,} events one per line "
            f"({whole['bytes'] / 1e6:.0f} MB) / a process that only `orjson.loads` every line, <= 2.0 | "
            f"CPU {cpu:.2f}x ({_med(times['validate']['cpu']):.2f} s / {_med(times['parse']['cpu']):.2f} s), "
            f"wall {wall:.2f}x | {_mark(cpu <= 2.0)} |")


def compile_package() -> None:
    """Write the package's bytecode, as an installed package has it: with ``PYTHONDONTWRITEBYTECODE`` set, stale
    ``.pyc`` files would make every measured process compile its sources again."""
    for folder in ("tools", "spec", "reference", "conformance"):
        compileall.compile_dir(str(ROOT / folder), quiet=2, rx=re.compile(r"node_modules"))


def measure(quick: bool = False, gigabyte: bool = False, workdir: Path | None = None) -> dict[str, Any]:
    """All operator measurements (see the module docstring) as plain data."""
    compile_package()
    runs = 5 if quick else 11
    sizes = [3000, 12000] if quick else [100_000, 400_000, 1_600_000]
    line_log = 20_000 if quick else 200_000
    fleet_files, fleet_runs = (50, 2) if quick else (1000, 3)
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="sessionspec-operators-") as scratch:
        folder = workdir or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        one = folder / "one.jsonl"
        write_log(one, 1, packed=False)
        print("start-up ...", flush=True)
        results["startup"] = alternate({
            "validate": [*CLI, "validate", "--level", "schema", "--quiet", str(one)],
            "python": [sys.executable, "-c", "import orjson"],
        }, runs)
        print("whole-process validate ...", flush=True)
        results["whole"] = measure_whole(folder, line_log, runs)
        print("peak memory ...", flush=True)
        memory = []
        logs = [("packed", write_log(folder / f"mem-{n}.jsonl", n, packed=True), folder / f"mem-{n}.jsonl")
                for n in sizes]
        if gigabyte:
            path = folder / "mem-1gb.jsonl"
            logs.append(("unpacked", write_log(path, 0, packed=False, min_bytes=10**9), path))
        for layout, (events, size), path in logs:
            label = f"{events:,} events, {layout}"
            for level in ("schema", "strict"):
                result = child([*CLI, "validate", "--level", level, "--quiet", str(path)])
                memory.append({"log": label, "events": events, "bytes": size, "level": level, **result})
                print(f"  {label} {level}: {result['rss'] / 1e6:.0f} MB", flush=True)
            path.unlink()
        results["floor_rss"] = _med(results["startup"]["validate"]["rss"])
        results["memory"] = memory
        print("many files ...", flush=True)
        fleet = folder / "fleet"
        write_fleet(fleet, fleet_files, 100)
        results["fleet"] = {"files": fleet_files, "bytes": sum(p.stat().st_size for p in fleet.glob("*.jsonl")),
                            "times": alternate({f"-j {j}": [*CLI, "validate", "--quiet", "-j", str(j), str(fleet)]
                                                for j in (1, 2)}, fleet_runs, warmup=0)}
    return results


def _range(values: list[float], scale: float = 1.0, unit: str = "s", digits: int = 3) -> str:
    return (f"{_med(values) * scale:.{digits}f} {unit} ({min(values) * scale:.{digits}f}-"
            f"{max(values) * scale:.{digits}f})")


def _mark(ok: bool) -> str:
    return "met ✓" if ok else "**not met** ✗"


def render(results: dict[str, Any], in_process: list[tuple[int, float]] | None = None) -> str:
    """The Markdown block for docs/benchmarks.md."""
    su = results["startup"]
    v_cpu, p_cpu = _med(su["validate"]["cpu"]), _med(su["python"]["cpu"])
    memory = results["memory"]
    worst = max(m["rss"] for m in memory)
    fleet = results["fleet"]
    rates = {name: fleet["files"] / _med(t["wall"]) for name, t in fleet["times"].items()}
    cpu_per_file = {name: _med(t["cpu"]) / fleet["files"] * 1e3 for name, t in fleet["times"].items()}
    load = os.getloadavg()
    ratio = v_cpu / p_cpu
    out = [BEGIN, "",
           f"Generated by `python bench/operators.py` on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; "
           f"load average at the end {load[0]:.1f}, {load[1]:.1f}, {load[2]:.1f} on {os.cpu_count()} CPUs. "
           "Whole processes, measured and baseline commands alternating run by run; medians (min-max). "
           "CPU = user + system time of the child.", "",
           "| target (issue 13) | measured | result |", "|---|---|---|",
           f"| `validate --level schema` on a one-event log, whole process, <= 0.10 s | CPU {v_cpu:.3f} s = "
           f"{ratio:.1f}x `python -c 'import orjson'` (CPU {p_cpu:.3f} s); wall {_range(su['validate']['wall'])} "
           f"against {_range(su['python']['wall'])} | {_mark(v_cpu <= 0.10 or ratio * IDLE_PYTHON <= 0.10)}"
           f"{'' if v_cpu <= 0.10 else f' by ratio: {ratio:.1f}x the {IDLE_PYTHON:.2f} s of python + orjson on an idle machine (issue 13) = {ratio * IDLE_PYTHON:.3f} s; the CPU time itself is inflated by the load'} |",
           whole_row(results["whole"])]
    if in_process:
        cells = ", ".join(f"{ratio:.2f}x at {events:,} events" for events, ratio in in_process)
        out.append(f"| validate, in process, packed `mix` logs / parse-only, <= 2.0 | {cells} "
                   f"| {_mark(all(r <= 2.0 for _, r in in_process))} |")
    out.append(f"| validate peak memory bounded, not growing with the log (1 GB in < 300 MB RSS) | "
               f"largest peak {worst / 1e6:.0f} MB (table below) | {_mark(worst < 300e6)} |")
    out.append(f"| files per second, {fleet['files']:,} small logs, `-j 1` / `-j 2` (no target) | "
               f"{rates['-j 1']:,.0f} / {rates['-j 2']:,.0f} files/s; CPU per file {cpu_per_file['-j 1']:.2f} / "
               f"{cpu_per_file['-j 2']:.2f} ms | measured |")
    out += ["", "Peak resident set size of `sessionspec validate --quiet` (one process per row; the floor is "
            f"the one-event log: {results['floor_rss'] / 1e6:.0f} MB):", "",
            "| log | file | level | wall | CPU | peak RSS | above the floor |", "|---|---:|---|---:|---:|---:|---:|"]
    for m in memory:
        out.append(f"| {m['log']} | {m['bytes'] / 1e6:.0f} MB | {m['level']} | {m['wall']:.1f} s | {m['cpu']:.1f} s | "
                   f"{m['rss'] / 1e6:.0f} MB | {(m['rss'] - results['floor_rss']) / 1e6:.0f} MB |")
    out += ["", f"Many files: {fleet['files']:,} packed logs of about 100 events ({fleet['bytes'] / 1e6:.0f} MB), "
            "`sessionspec validate --quiet -j N FOLDER`:", "",
            "| -j | wall | CPU | files/s |", "|---:|---:|---:|---:|"]
    for name, t in fleet["times"].items():
        out.append(f"| {name[3:]} | {_range(t['wall'], digits=2)} | {_med(t['cpu']):.2f} s | {rates[name]:,.0f} |")
    out += ["", END]
    return "\n".join(out)


def write_block(block: str, doc: Path = DOC) -> None:
    """Replace this module's block in docs/benchmarks.md (or put it after the title)."""
    from sessionspec.reference.atomic import write_atomic

    text = doc.read_text(encoding="utf-8")
    if BEGIN in text and END in text:
        head, rest = text.split(BEGIN, 1)
        text = head + block + rest.split(END, 1)[1]
    else:
        title, _, rest = text.partition("\n")
        text = f"{title}\n\n## What operators feel\n\n{block}\n{rest}"
    write_atomic(doc, text.encode("utf-8"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, few runs, nothing written")
    parser.add_argument("--gigabyte", action="store_true", help="also validate an unpacked log of at least 1 GB")
    parser.add_argument("--workdir", metavar="DIR", help="write the logs here (default: a temporary folder)")
    parser.add_argument("--whole", action="store_true", help="only the whole-process validate row (printed, nothing written)")
    parser.add_argument("--runs", type=int, default=7, help="with --whole: runs of each command")
    parser.add_argument("--against", metavar="TREE", help="with --whole: also the code of this source tree "
                        "(a checkout of another revision); both then run as installed copies")
    args = parser.parse_args(argv)
    if args.whole:
        with tempfile.TemporaryDirectory(prefix="sessionspec-operators-") as scratch:
            folder = Path(args.workdir or scratch)
            compile_package()
            if args.against:
                whole = measure_against(folder, 200_000, args.runs, Path(args.against).resolve())
            else:
                whole = measure_whole(folder, 200_000, args.runs)
        times = whole["times"]
        for name, t in times.items():
            print(f"{name}: CPU {_range(t['cpu'])}, wall {_range(t['wall'])}")
        if args.against:
            cpu = {name: _med(t["cpu"]) for name, t in times.items()}
            print(f"CPU / parse-only: old {cpu['validate (old)'] / cpu['parse']:.2f}x, new {cpu['validate (new)'] / cpu['parse']:.2f}x;"
                  f" new / old {cpu['validate (new)'] / cpu['validate (old)']:.3f}; load average {os.getloadavg()[0]:.1f}")
        else:
            print(whole_row(whole))
        return 0
    results = measure(args.quick, args.gigabyte, Path(args.workdir) if args.workdir else None)
    block = render(results)
    print(block)
    if not args.quick:
        write_block(block)
    return 0


if __name__ == "__main__":
    sys.exit(main())
