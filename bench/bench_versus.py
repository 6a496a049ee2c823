"""One CLI command, in process, on the working tree and on a baseline revision, interleaved.

``git worktree``-free: the baseline's files are exported with ``git archive``
into a temporary folder and mapped to the import name ``sessionspec`` the way
``pyproject.toml`` maps the working tree (``tools/`` is the package, ``spec``,
``reference`` and ``conformance`` its subpackages). Each run is a fresh
``python`` process that imports the package, runs the command once untimed
(compiling schemas, generated types), then times it ``--inner`` times;
CPU time (``process_time``) of the timed runs only. Old and new alternate
run by run, so machine load hits both alike; the ratio is median(new) /
median(old).

    python bench/bench_versus.py --baseline REV [--runs 5] [--profile] -- validate --exact --quiet FILE

``--startup`` times whole processes instead (interpreter, imports, loading the spec and the
generated module, one run): the CPU time a user waits for on a small log.

    python bench/bench_versus.py --baseline REV --startup --runs 15 -- validate --quiet SMALL_FILE
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

_CHILD = r"""
import cProfile, io, json, pstats, sys, time
sys.path.insert(0, TREE)
sys.setrecursionlimit(10000)
from sessionspec import cli
argv = ARGV
out, err = io.StringIO(), io.StringIO()
cli.run(argv, out, err)  # warm-up: compiled schemas and types
times = []
profile = cProfile.Profile() if PROFILE else None
for _ in range(INNER):
    start = time.process_time()
    if profile: profile.enable()
    code = cli.run(argv, io.StringIO(), io.StringIO())
    if profile: profile.disable()
    times.append(time.process_time() - start)
if profile:
    stream = io.StringIO()
    pstats.Stats(profile, stream=stream).sort_stats("tottime").print_stats(18)
    sys.stderr.write(stream.getvalue())
print(json.dumps({"times": times, "code": code, "file": cli.__file__}))
"""


def _tree(source: Path, into: Path) -> Path:
    """An import tree where ``sessionspec`` is ``source/tools`` with spec/reference/conformance inside."""
    package = into / "sessionspec"
    package.mkdir(parents=True)
    for entry in (source / "tools").iterdir():
        if entry.name != "__pycache__":
            (package / entry.name).symlink_to(entry)
    for sub in ("spec", "reference", "conformance"):
        (package / sub).symlink_to(source / sub)
    return into


_STARTUP = r"""
import sys
sys.path.insert(0, TREE)
from sessionspec import cli
import io
sys.exit(cli.run(ARGV, io.StringIO(), io.StringIO()))
"""


def _run_startup(tree: Path, argv: list[str]) -> tuple[list[float], int]:
    """The CPU time of one whole process running the command once."""
    import resource

    code = _STARTUP.replace("TREE", repr(str(tree))).replace("ARGV", repr(argv))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False,
                          env={**os.environ, "PYTHONPATH": ""})
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"run failed in {tree}:\n{proc.stderr[-3000:]}")
    return [after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime], proc.returncode


def _run(tree: Path, argv: list[str], inner: int, profile: bool) -> tuple[list[float], int]:
    code = (_CHILD.replace("TREE", repr(str(tree))).replace("ARGV", repr(argv))
            .replace("INNER", str(inner)).replace("PROFILE", str(profile)))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False,
                          env={**os.environ, "PYTHONPATH": ""})
    if proc.returncode != 0 or not proc.stdout.strip():
        raise SystemExit(f"run failed in {tree}:\n{proc.stderr[-3000:]}")
    if profile:
        sys.stderr.write(f"--- profile of {tree}\n{proc.stderr}\n")
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    return result["times"], result["code"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", required=True, help="git revision to compare with")
    parser.add_argument("--runs", type=int, default=5, help="processes per side (alternating)")
    parser.add_argument("--inner", type=int, default=2, help="timed runs per process")
    parser.add_argument("--profile", action="store_true", help="print a cProfile of one process per side")
    parser.add_argument("--startup", action="store_true", help="time whole processes (start-up included), one run each")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- then the sessionspec command line")
    args = parser.parse_args(argv)
    command = [a for a in args.command if a != "--"] if args.command[:1] == ["--"] else args.command
    with tempfile.TemporaryDirectory(prefix="sessionspec-versus-") as tmp:
        old_src = Path(tmp) / "old-src"
        old_src.mkdir()
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", args.baseline], capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", str(old_src)], input=archive.stdout, check=True)
        trees = {"old": _tree(old_src, Path(tmp) / "old"), "new": _tree(ROOT, Path(tmp) / "new")}
        times: dict[str, list[float]] = {"old": [], "new": []}
        codes: dict[str, int] = {}
        for i in range(args.runs):
            for side in ("old", "new"):
                t, codes[side] = (_run_startup(trees[side], command) if args.startup else
                                  _run(trees[side], command, args.inner, args.profile and i == 0))
                times[side].extend(t)
        old, new = statistics.median(times["old"]), statistics.median(times["new"])
        print(f"command: sessionspec {' '.join(command)}")
        print(f"baseline {args.baseline}: CPU {old:.3f} s (min {min(times['old']):.3f}, exit {codes['old']}); "
              f"working tree: CPU {new:.3f} s (min {min(times['new']):.3f}, exit {codes['new']}); "
              f"new/old {new / old:.3f} (medians of {len(times['new'])} timed runs each)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
