"""The exact JSON parser against a baseline revision of itself, in one run.

The reference's exact reader (``loads_with_duplicates``: the iterative parser,
every line, no orjson) and the validator's diagnostic read (the same parser
with the anomaly hook; before issue 11 a second parser, ``jsondiag.parse``) are
timed on realistic and hostile texts. The baseline's modules are read from git
(``--baseline REV``, default ``main``) and imported beside the working tree's,
and old and new run interleaved, so the ratio new / old is not skewed by the
load of a shared machine.

    python bench/bench_json_parser.py [--baseline REV] [--runs 7] [--events 2000]

Ratios below 1.00 mean the working tree is faster.
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import statistics
import subprocess
import sys
import time
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))


def _module_at(rev: str, path: str, name: str, package: str) -> types.ModuleType:
    source = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:{path}"], check=True,
                            capture_output=True, text=True).stdout
    spec = importlib.util.spec_from_loader(name, loader=None)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    module.__package__ = package
    module.__file__ = f"<{rev}:{path}>"
    sys.modules[name] = module
    exec(compile(source, module.__file__, "exec"), vars(module))  # noqa: S102 - the baseline's own source
    return module


def _has(rev: str, path: str) -> bool:
    return subprocess.run(["git", "-C", str(ROOT), "cat-file", "-e", f"{rev}:{path}"],
                          capture_output=True).returncode == 0


def readers(rev: str) -> dict[str, dict[str, Callable[[str], Any]]]:
    """``{"old"|"new": {"reference": f, "diagnostic": g}}`` (each f parses one text exactly)."""
    from sessionspec.reference import json_text

    old_text = _module_at(rev, "reference/json_text.py", "sessionspec.reference._bench_old_json_text",
                          "sessionspec.reference")
    if _has(rev, "tools/validator/jsondiag.py"):
        old_diag = _module_at(rev, "tools/validator/jsondiag.py", "sessionspec.validator._bench_old_jsondiag",
                              "sessionspec.validator")
        old_diagnostic = old_diag.parse
    else:  # the baseline already has one parser
        old_diagnostic = _diagnostic(old_text)
    return {
        "old": {"reference": old_text.loads_with_duplicates, "diagnostic": old_diagnostic},
        "new": {"reference": json_text.loads_with_duplicates, "diagnostic": _diagnostic(json_text)},
    }


def _diagnostic(module: types.ModuleType) -> Callable[[str], Any]:
    """What the validator's exact path does with a doubtful line (the exact half of `json_text.loads` with its hook)."""

    def read(text: str) -> Any:
        anomalies: list[Any] = []
        return module.parse(text, on_anomaly=anomalies.append, infinity=True), anomalies

    return read


def inputs(events: int) -> dict[str, list[str]]:
    """Named lists of texts; each list is one timed unit (its texts parsed one after another)."""
    import gen_logs

    lines = gen_logs.artifact_bytes(gen_logs.generate_events(events, seed=7), packed=False).decode().splitlines()
    packed = gen_logs.artifact_bytes(gen_logs.generate_events(events, seed=7), packed=True).decode().splitlines()
    deep = 100_000
    return {
        f"realistic: {len(lines):,} event lines, one per line": lines,
        f"realistic: {len(packed):,} packed lines (chunk rows)": packed,
        "realistic: the whole log as one JSON array": ["[" + ",".join(lines) + "]"],
        f"hostile: {deep:,} nested arrays": ["[" * deep + "]" * deep],
        f"hostile: {deep // 5:,} nested objects": ['{"a":' * (deep // 5) + "1" + "}" * (deep // 5)],
        "hostile: 50,000 duplicate keys": ["{" + ",".join(f'"k{i % 100}":{i}' for i in range(50_000)) + "}"],
        "hostile: 20,000 lone-surrogate strings": ["[" + ",".join('"a\\ud800b"' for _ in range(20_000)) + "]"],
        "hostile: 20,000 integers of 30 digits": ["[" + ",".join(str(10**29 + i) for i in range(20_000)) + "]"],
        "hostile: 100,000 small numbers and -0.0": ["[" + ",".join("-0.0" if i % 7 == 0 else f"{i}.5"
                                                                    for i in range(100_000)) + "]"],
        "hostile: one 4 MB string with escapes": ['"' + "ab\\n\\u00e9" * 400_000 + '"'],
        "hostile: an integer of 20,000 digits": ["9" * 20_000],
    }


def _time(fn: Callable[[str], Any], texts: list[str]) -> float:
    gc.collect()
    start = time.process_time()
    for text in texts:
        fn(text)
    return time.process_time() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", default="main", help="git revision to compare with (default: main)")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--events", type=int, default=2000)
    parser.add_argument("--only", default="", help="substring of the input names to run")
    args = parser.parse_args(argv)
    sys.setrecursionlimit(10_000)
    both = readers(args.baseline)
    print(f"baseline {args.baseline}; CPU time (process_time), median of {args.runs} interleaved runs; ratio new/old")
    print("| input | reader | old | new | new/old |\n|---|---|---:|---:|---:|")
    ratios: list[float] = []
    for name, texts in inputs(args.events).items():
        if args.only not in name:
            continue
        for reader in ("reference", "diagnostic"):
            old_fn, new_fn = both["old"][reader], both["new"][reader]
            old_fn(texts[0]), new_fn(texts[0])  # warm up (and fail early)
            old: list[float] = []
            new: list[float] = []
            for _ in range(args.runs):
                old.append(_time(old_fn, texts))
                new.append(_time(new_fn, texts))
            o, n = statistics.median(old), statistics.median(new)
            ratios.append(n / o)
            print(f"| {name} | {reader} | {o * 1000:.1f} ms | {n * 1000:.1f} ms | {n / o:.2f} |", flush=True)
    print(f"geometric mean new/old: {statistics.geometric_mean(ratios):.3f}; worst {max(ratios):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
