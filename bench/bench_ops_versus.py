"""Reference operations (bench/bench_reference.py's ``PythonLog``) on the working tree and a baseline, interleaved.

The baseline's files are exported with ``git archive`` and mapped to the import name
``sessionspec`` as ``bench/bench_versus.py`` does; each side runs in fresh processes that
alternate, so machine load hits both alike. Each process opens the log once (untimed), runs
every operation once untimed, then ``--inner`` timed runs; the figure is the minimum CPU time
of an operation over all runs of a side, and the ratio is new/old.

    python bench/bench_ops_versus.py --baseline REV [--new REV] [--runs 3] [--inner 3] [--ops load,append,fold,pack]
                                     [--revision b150a551b8] FILE
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from bench_versus import _tree  # noqa: E402 - the bench folder is not a package

_CHILD = r"""
import gc, json, sys, time
sys.path.insert(0, TREE)
sys.path.insert(0, BENCH)
from bench_reference import PythonLog
log = PythonLog(__import__("pathlib").Path(FILE), revision=REVISION)
best = {}
for op in OPS:
    log.run(op)
    for _ in range(INNER):
        log.run(op)
        best[op] = min(best.get(op, 1e9), log.cpu)
print(json.dumps(best))
"""


def _run(tree: Path, path: str, ops: list[str], inner: int, revision: str | None = None) -> dict[str, float]:
    code = (_CHILD.replace("TREE", repr(str(tree))).replace("BENCH", repr(str(ROOT / "bench")))
            .replace("REVISION", repr(revision))
            .replace("FILE", repr(path)).replace("OPS", repr(ops)).replace("INNER", str(inner)))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False,
                          env={**os.environ, "PYTHONPATH": ""})
    if proc.returncode != 0:
        raise SystemExit(f"run failed in {tree}:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", required=True, help="git revision to compare with")
    parser.add_argument("--new", help="git revision to measure instead of the working tree")
    parser.add_argument("--runs", type=int, default=3, help="processes per side (alternating)")
    parser.add_argument("--inner", type=int, default=3, help="timed runs per operation and process")
    parser.add_argument("--ops", default="load,seed,append,fold,pack,unpack", help="comma-separated operations")
    parser.add_argument("--revision", help="the format revision the session operations run at (default: the pinned one)")
    parser.add_argument("file", help="a JSONL artifact (bench/gen_logs.py)")
    args = parser.parse_args(argv)
    ops = args.ops.split(",")
    with tempfile.TemporaryDirectory(prefix="sessionspec-versus-") as tmp:
        def exported(rev: str, name: str) -> Path:
            src = Path(tmp) / f"{name}-src"
            src.mkdir()
            archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev], capture_output=True, check=True)
            subprocess.run(["tar", "-x", "-C", str(src)], input=archive.stdout, check=True)
            return src

        new_src = ROOT if args.new is None else exported(args.new, "new")
        trees = {"old": _tree(exported(args.baseline, "old"), Path(tmp) / "old"), "new": _tree(new_src, Path(tmp) / "new")}
        best: dict[str, dict[str, float]] = {"old": {}, "new": {}}
        for _ in range(args.runs):
            for side in ("old", "new"):
                for op, cpu in _run(trees[side], args.file, ops, args.inner, args.revision).items():
                    best[side][op] = min(best[side].get(op, 1e9), cpu)
    print(f"file: {args.file}; baseline {args.baseline}; new {args.new or 'working tree'}; CPU min of {args.runs * args.inner} runs per side")
    for op in ops:
        old, new = best["old"][op], best["new"][op]
        print(f"{op:<8} old {old * 1000:8.1f} ms  new {new * 1000:8.1f} ms  new/old {new / old:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
