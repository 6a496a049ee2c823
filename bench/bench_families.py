"""The family matrix of issue 24: validate and the reference operations on several log families.

The benchmark's own generator is one shape; logs that exist have others. This script measures
every target of issue 24 on each family and reports the WORST family per target:

* families: the three mixes of ``bench/gen_logs.py`` (``mix`` chunk-heavy, ``tools`` tool-heavy,
  ``chat`` message-heavy), each written one event a line (``lines``) and packed into chunk rows
  (``packed``), in both format revisions (``pinned`` 2f74ac98ba: the spec's shapes; ``published``
  b150a551b8: translated by ``bench/run.py``'s ``to_package_revision``), and ``pkgw``: the
  published events of each mix appended through the npm package's own ``SessionStore`` and
  written by its JSONL backend (``conformance/adapters/node-dsh-session/bench-write.mjs``);
* other writers: each one-a-line file rewritten by Python's ``json.dumps`` (``python``: spaces, ASCII
  escapes) and by a compact writer with sorted keys (``sorted``), the same events (`WRITERS`);
* validate: whole processes of ``sessionspec validate --level schema --quiet FILE`` against a
  process that only ``orjson.loads`` every line of the same file, alternating run by run; CPU
  time (user + system of the child), minimum of ``--runs``;
* the batch path's cliff: one in-process cProfile of the same validate per file, counting the
  calls of ``tools/validator/fastlog.py``'s per-line fallback (``line``) and batch groups
  (``group``); ``exact`` where the fast pass declined the file (no group at all);
* reference operations (load, seed + derive, append, fold, pack, unpack) on the packed files:
  the Python reference on the pinned file (default revision) and on the published file (at
  ``--revision b150a551b8``), against the package (``bench.mjs``) on the published file, single
  runs alternating among the three; CPU time, minimum of ``--runs``; ratio = Python / package.

Usage::

    python bench/bench_families.py [--events 100000] [--runs 5] [--only validate|ops] [--no-node]
                                   [--families mix,tools,chat] [--write-doc] [--json PATH]

``--write-doc`` rewrites the generated block of ``docs/benchmarks.md`` ("Log families").
"""

from __future__ import annotations

import argparse
import cProfile
import datetime as _dt
import gc
import io
import json
import os
import pstats
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
if str(BENCH_DIR) not in sys.path:
    sys.path.insert(0, str(BENCH_DIR))

import bench_reference  # noqa: E402  (bench/ is a folder of scripts, not a package)
import gen_logs  # noqa: E402
from operators import CLI, PARSE_ONLY, alternate, compile_package  # noqa: E402
from run import ADAPTER_DIR, NodeSide, node_available, node_binary, to_package_revision  # noqa: E402

PUBLISHED = "b150a551b8"
PINNED = "2f74ac98ba"
DOC = ROOT / "docs" / "benchmarks.md"
BEGIN = "<!-- bench/bench_families.py: generated, begin -->"
END = "<!-- bench/bench_families.py: generated, end -->"
WRITER = ADAPTER_DIR / "bench-write.mjs"
#: Reference operations and the package's (``seed`` is the seed-load, the first and 20 repeated derives).
OPS = ("load", "seed", "append", "fold", "pack", "unpack")


def _events_file(path: Path, events: list[dict[str, Any]]) -> None:
    import orjson

    with open(path, "wb") as handle:
        handle.writelines(orjson.dumps(event) + b"\n" for event in events)


def prepare(families: list[str], size: int, workdir: Path, package_written: bool) -> list[dict[str, Any]]:
    """Write every file of the matrix; returns one row per file (family, revision, form, path)."""
    files: list[dict[str, Any]] = []
    for family in families:
        events = gen_logs.generate_events(size, seed=7, mix=gen_logs.MIXES[family])
        published = to_package_revision(events)
        for revision, evs in (("pinned", events), ("published", published)):
            for form, packed in (("lines", False), ("packed", True)):
                path = workdir / f"{family}.{revision}.{form}.jsonl"
                info = gen_logs.write_artifact(path, evs, packed=packed, session_id=f"bench-{family}")
                files.append({"family": family, "revision": revision, "form": form, "path": str(path),
                              "events": len(evs), "bytes": info.bytes, "lines": info.lines})
        if package_written:
            source = workdir / f"{family}.published.events.jsonl"
            _events_file(source, published)
            path = workdir / f"{family}.pkgw.jsonl"
            done = subprocess.run([node_binary() or "node", "--disable-warning=ExperimentalWarning", str(WRITER), str(source), str(path)],
                                  cwd=ADAPTER_DIR, capture_output=True, text=True, check=False)
            if done.returncode != 0:
                raise SystemExit(f"the package could not write {path.name}:\n{done.stderr[-2000:]}")
            source.unlink()
            lines = path.read_bytes().count(b"\n")
            files.append({"family": family, "revision": "published", "form": "pkgw", "path": str(path),
                          "events": json.loads(done.stdout)["events"], "bytes": path.stat().st_size, "lines": lines})
        print(f"  wrote {family}: {len(events):,} events", flush=True)
    return files


#: Other writers' layouts of the same events, one a line (issue 24: logs the benchmark did not write): Python's
#: ``json.dumps`` (spaces after separators, non-ASCII escaped) and a compact writer with sorted keys (serde_json's
#: ``Value``, Go's maps).
WRITERS: dict[str, Any] = {
    "python": lambda value: json.dumps(value).encode(),
    "sorted": lambda value: json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False).encode(),
}


def add_writer_forms(files: list[dict[str, Any]], workdir: Path) -> list[dict[str, Any]]:
    """Each ``lines`` file rewritten line by line by each of `WRITERS` (form: the writer's name), for the rows
    `files` lacks (a manifest of an earlier run gains them)."""
    have = {(r["family"], r["revision"], r["form"]) for r in files}
    for row in [r for r in files if r["form"] == "lines"]:
        for writer, write in WRITERS.items():
            if (row["family"], row["revision"], writer) in have:
                continue
            path = workdir / f"{row['family']}.{row['revision']}.{writer}.jsonl"
            with open(row["path"], "rb") as source, open(path, "wb") as out:
                out.writelines(write(json.loads(line)) + b"\n" for line in source)
            files.append({**row, "form": writer, "path": str(path), "bytes": path.stat().st_size})
    return files


def measure_validate(files: list[dict[str, Any]], runs: int) -> None:
    """Whole-process validate / parse-only, CPU min of `runs` alternating runs, into each row."""
    for row in files:
        times = alternate({
            "validate": [*CLI, "validate", "--level", "schema", "--quiet", row["path"]],
            "parse": [*PARSE_ONLY, row["path"]],
        }, runs)
        row["validate_cpu"] = min(times["validate"]["cpu"])
        row["parse_cpu"] = min(times["parse"]["cpu"])
        row["validate_ratio"] = row["validate_cpu"] / row["parse_cpu"]
        row["validate_rss"] = max(times["validate"]["rss"])
        print(f"  validate {_label(row)}: {row['validate_cpu']:.3f} s / parse {row['parse_cpu']:.3f} s = "
              f"{row['validate_ratio']:.2f}x", flush=True)


def fallback_counts(path: str) -> dict[str, int]:
    """Calls of fastlog's batch groups and per-line fallbacks in one in-process validate (cProfile)."""
    from sessionspec.cli import run as cli_run

    argv = ["validate", "--level", "schema", "--quiet", path]
    cli_run(argv, io.StringIO(), io.StringIO())  # warm-up: compiled schemas and generated types
    profile = cProfile.Profile()
    profile.enable()
    cli_run(argv, io.StringIO(), io.StringIO())
    profile.disable()
    counts = {"group": 0, "line": 0}
    for (filename, _, name), stat in pstats.Stats(profile).stats.items():  # type: ignore[attr-defined]
        if filename.endswith("fastlog.py") and name in counts:
            counts[name] += stat[1]
    return counts


def measure_cliff(files: list[dict[str, Any]]) -> None:
    for row in files:
        counts = fallback_counts(row["path"])
        row["groups"], row["line_fallbacks"] = counts["group"], counts["line"]
        where = "exact path (fast pass declined)" if counts["group"] == 0 else f"{counts['line']:,} lines per-line"
        print(f"  cliff {_label(row)}: {counts['group']:,} groups, {where} of {row['lines']:,}", flush=True)


def measure_ops(files: list[dict[str, Any]], runs: int, node: NodeSide | None,
                ops: tuple[str, ...] = OPS) -> list[dict[str, Any]]:
    """Reference operations against the package on each family's packed files (and package-written ones)."""
    results: list[dict[str, Any]] = []
    by = {(r["family"], r["revision"], r["form"]): r for r in files}
    families = list(dict.fromkeys(r["family"] for r in files))
    groups = []
    for family in families:
        groups.append((family, by.get((family, "pinned", "packed")), by[(family, "published", "packed")]))
        if (family, "published", "pkgw") in by:
            groups.append((f"{family}/pkgw", None, by[(family, "published", "pkgw")]))
    for name, pinned, published in groups:
        sides: dict[str, Any] = {}
        if pinned is not None:
            sides["py-pinned"] = bench_reference.PythonLog(Path(pinned["path"]))
        sides["py-published"] = bench_reference.PythonLog(Path(published["path"]), revision=PUBLISHED)
        if node is not None:
            node.request({"cmd": "open", "name": name, "kind": "mix", "path": published["path"]})
            sides["node"] = None
        gc.collect()
        gc.freeze()
        try:
            for op in ops:
                best: dict[str, float] = {}
                order = list(sides)
                if op in bench_reference.OWN_GC_OPS:
                    gc.unfreeze()
                for index in range(runs + 1):  # the first round is an untimed warm-up
                    for side in (order if index % 2 == 0 else order[::-1]):
                        if side == "node":
                            assert node is not None
                            cpu = node.request({"cmd": "run", "name": name, "op": op})["cpu"]
                        else:
                            sides[side].run(op)
                            cpu = sides[side].cpu
                        if index:
                            best[side] = min(best.get(side, 1e9), cpu)
                if op in bench_reference.OWN_GC_OPS:
                    gc.collect()
                    gc.freeze()
                row = {"family": name, "op": op, **{f"{side}_cpu": cpu for side, cpu in best.items()}}
                if "node" in best:
                    for side in ("py-pinned", "py-published"):
                        if side in best:
                            row[f"{side}_ratio"] = best[side] / best["node"]
                results.append(row)
                print("  ops " + f"{name} {op}: " + ", ".join(f"{side} {cpu * 1000:.0f} ms" for side, cpu in best.items())
                      + "".join(f", {side} / package {row[f'{side}_ratio']:.2f}" for side in ("py-pinned", "py-published")
                                if f"{side}_ratio" in row), flush=True)
        finally:
            gc.unfreeze()
            sides.clear()
            gc.collect()
            if node is not None:
                node.request({"cmd": "close", "name": name})
    return results


def _label(row: dict[str, Any]) -> str:
    return f"{row['family']} {row['revision']} {row['form']}"


def render(files: list[dict[str, Any]], ops: list[dict[str, Any]], args: argparse.Namespace, load: tuple[float, ...],
           minutes: float, package: dict[str, Any] | None = None) -> str:
    when = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    chosen = "" if args.ops == ",".join(OPS) else f" --ops {args.ops}"
    command = f"python bench/bench_families.py --events {args.events} --runs {args.runs}{chosen} --write-doc"
    out = [f"Generated by `{command}` on {when} ({minutes:.1f} min); load average at the end "
           f"{load[0]:.1f}, {load[1]:.1f}, {load[2]:.1f} on {os.cpu_count()} CPUs. CPU time (user + system), "
           f"minimum of {args.runs} runs alternating with the baseline in the same run."
           + (f" The package: `{package['package']}` on Node {package['node']}." if package else ""), ""]
    timed = [r for r in files if "validate_ratio" in r]
    if timed:
        worst = max(timed, key=lambda r: r["validate_ratio"])
        out += ["| target (issue 24) | worst family | ratio | result |", "|---|---|---:|---|",
                f"| validate, whole process / parse-only, <= 2.0 (moonshot 1.5) | {_label(worst)} | "
                f"{worst['validate_ratio']:.2f}x | {'met' if worst['validate_ratio'] <= 2.0 else '**not met**'} |"]
    for op in OPS:
        rows = [(r, side) for r in ops if r["op"] == op for side in ("py-pinned", "py-published") if f"{side}_ratio" in r]
        if rows:
            r, side = max(rows, key=lambda pair: pair[0][f"{pair[1]}_ratio"])
            ratio = r[f"{side}_ratio"]
            name = "seed-load + first and 20 repeated derives" if op == "seed" else op
            out.append(f"| {name}, reference / package, <= 1.0 | {r['family']} ({side}) | {ratio:.2f}x | "
                       f"{'met' if ratio <= 1.0 else '**not met**'} |")
    if timed:
        out += ["", "validate per file (`validate --level schema --quiet FILE`, the revision detected, / parse-only; batch "
                "groups and per-line fallbacks of `fastlog` from one cProfile of the same validate in process):", "",
                "| family | revision | form | events | MB | validate CPU | parse CPU | ratio | groups | lines per-line | peak RSS |",
                "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for r in timed:
            fall = "exact path" if r.get("groups") == 0 else (f"{r['line_fallbacks']:,} of {r['lines']:,}"
                                                               if "groups" in r else "-")
            out.append(f"| {r['family']} | {r['revision']} | {r['form']} | {r['events']:,} | {r['bytes'] / 1e6:.1f} | "
                       f"{r['validate_cpu']:.3f} s | {r['parse_cpu']:.3f} s | {r['validate_ratio']:.2f}x | "
                       f"{r.get('groups', '-')} | {fall} | {r['validate_rss'] / 1e6:.0f} MB |")
    if ops:
        out += ["", "Reference operations on the packed files (Python at the pinned revision on the pinned file and at "
                f"`{PUBLISHED}` on the published one; the package on the published one; `pkgw`: the log the package "
                "wrote), CPU ms and Python / package:", "",
                "| family | op | py pinned | py published | package | pinned / package | published / package |",
                "|---|---|---:|---:|---:|---:|---:|"]
        for r in ops:
            def ms(key: str) -> str:
                return f"{r[key] * 1000:.0f}" if key in r else "-"

            def ratio(key: str) -> str:
                return f"{r[key]:.2f}" if key in r else "-"
            out.append(f"| {r['family']} | {r['op']} | {ms('py-pinned_cpu')} | {ms('py-published_cpu')} | {ms('node_cpu')} | "
                       f"{ratio('py-pinned_ratio')} | {ratio('py-published_ratio')} |")
    return "\n".join(out)


def write_doc(block: str, doc: Path = DOC) -> None:
    from sessionspec.reference.atomic import write_atomic

    text = doc.read_text(encoding="utf-8")
    body = f"{BEGIN}\n\n{block}\n\n{END}"
    if BEGIN in text and END in text:
        head, rest = text.split(BEGIN, 1)
        text = head + body + rest.split(END, 1)[1]
    else:
        text = text.rstrip("\n") + "\n\n## Log families (issue 24)\n\n" + body + "\n"
    write_atomic(doc, text.encode("utf-8"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=100_000, help="events per generated log")
    parser.add_argument("--runs", type=int, default=5, help="timed runs per measurement (min taken)")
    parser.add_argument("--families", default=",".join(gen_logs.MIXES), help="comma-separated gen_logs mixes")
    parser.add_argument("--only", choices=("validate", "ops"), help="measure one half only")
    parser.add_argument("--no-node", action="store_true", help="no package: no package-written logs, no package ops")
    parser.add_argument("--ops", default=",".join(OPS), help="comma-separated reference operations")
    parser.add_argument("--no-cliff", action="store_true", help="skip the cProfile fallback counts")
    parser.add_argument("--keep", type=Path, help="write the logs here and keep them (default: a temporary folder)")
    parser.add_argument("--reuse", action="store_true", help="with --keep: read the logs written there by an earlier run")
    parser.add_argument("--write-doc", action="store_true", help="rewrite the generated block of docs/benchmarks.md")
    parser.add_argument("--json", type=Path, help="write the raw results here")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    why = None if args.no_node else node_available()
    if why is not None:
        print(f"no package side: {why}", flush=True)
    use_node = not args.no_node and why is None
    workdir = args.keep or Path(tempfile.mkdtemp(prefix="sessionspec-families-"))
    workdir.mkdir(parents=True, exist_ok=True)
    try:
        compile_package()  # with PYTHONDONTWRITEBYTECODE set, every measured process would compile its sources
        manifest = workdir / "files.json"
        if args.reuse and manifest.exists():
            files = json.loads(manifest.read_text())
        else:
            files = prepare(args.families.split(","), args.events, workdir, package_written=use_node)
        files = add_writer_forms(files, workdir)
        manifest.write_text(json.dumps(files))
        ops: list[dict[str, Any]] = []
        package: dict[str, Any] | None = None
        if args.only in (None, "validate"):
            measure_validate(files, args.runs)
            if not args.no_cliff:
                measure_cliff(files)
        if args.only in (None, "ops"):
            node = NodeSide() if use_node else None
            package = node.info if node is not None else None
            try:
                ops = measure_ops(files, args.runs, node, tuple(args.ops.split(",")))
            finally:
                if node is not None:
                    node.close()
    finally:
        if args.keep is None:
            shutil.rmtree(workdir, ignore_errors=True)
    block = render(files, ops, args, os.getloadavg(), (time.perf_counter() - started) / 60, package)
    print("\n" + block)
    if args.json:
        args.json.write_text(json.dumps({"files": files, "ops": ops}, indent=1))
    if args.write_doc:
        write_doc(block)
    return 0


if __name__ == "__main__":
    sys.exit(main())
