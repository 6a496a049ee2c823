"""Mutation score of the conformance suite, measured with cosmic-ray over ``reference/``.

Each mutant of a copy of ``reference/`` is served through the subprocess
adapter protocol (``serve.py`` below loads the mutated copy as
``sessionspec.reference`` in the adapter process only); the harness, its
in-process reference and the stored expectations stay unmutated. For each
mutant the test command runs the vectors (``sessionspec conformance``), and
only if they pass, the CI-quick state machines (6 fixed-seed examples of 10
steps per machine, as in ``tests/conformance/test_machines.py``). It logs
which stage killed the mutant, keyed by the mutant's diff.

cosmic-ray generates thousands of mutants over ``reference/``; ``--sample N``
(seeded) keeps N of them (the rest are marked skipped), because one mutant
costs a full vector run. Usage::

    pip install 'cosmic-ray>=8.3'
    nice python bench/mutation_score.py --sample 120 --seed 10 --out docs/suite-strength-run.jsonl

Prints the score per module (rule family) and every survivor's diff.
"""

from __future__ import annotations

import argparse
import collections
import json
import random
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

SERVE = '''import importlib.util, sys
import sessionspec, sessionspec.spec  # the installed package; only its reference is swapped
spec = importlib.util.spec_from_file_location(
    "sessionspec.reference", {init!r}, submodule_search_locations=[{pkg!r}])
module = importlib.util.module_from_spec(spec)
sys.modules["sessionspec.reference"] = module
spec.loader.exec_module(module)
from sessionspec.conformance.reference_adapter import main
sys.exit(main())
'''

TEST = '''import difflib, json, subprocess, sys
from pathlib import Path
pristine, mutated, log, python, serve = {pristine!r}, {mutated!r}, {log!r}, {python!r}, {serve!r}
diff = []
for path in sorted(Path(mutated).rglob("*.py")):
    rel = path.relative_to(mutated)
    a = (Path(pristine) / rel).read_text().splitlines()
    b = path.read_text().splitlines()
    if a != b:
        diff += list(difflib.unified_diff(a, b, f"reference/{{rel}}", f"reference/{{rel}}", lineterm="", n=0))
impl = f"{{python}} {{serve}}"
cli = str(Path(python).with_name("sessionspec"))
vectors = subprocess.run([cli, "conformance", "--impl", impl, "--timeout", "20"],
                         capture_output=True, text=True, timeout=600)
stage = "vectors" if vectors.returncode != 0 else None
if stage is None:
    code = (
        "import io, sys\\n"
        "from sessionspec.conformance import machines\\n"
        "from sessionspec.conformance.harness import connector_for\\n"
        "from sessionspec.conformance.runner import start_implementation\\n"
        f"f = machines.run(connect=lambda: start_implementation(connector_for({{impl!r}}), 20.0), examples=6, steps=10,\\n"
        "    trace_dir='/tmp/sessionspec-mutation-traces', out=io.StringIO(), derandomize=True, shrink=False,\\n"
        "    stop_at_first=True)\\n"
        "print(f[0]['rule'] if f else '')\\n"
        "sys.exit(1 if f else 0)\\n")
    quick = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=900)
    stage = ("machines:" + quick.stdout.strip()) if quick.returncode != 0 else "survived"
with open(log, "a") as handle:
    handle.write(json.dumps({{"stage": stage, "diff": "\\n".join(diff)}}) + "\\n")
sys.exit(0 if stage == "survived" else 1)
'''


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sample", type=int, default=120, help="mutants to run (seeded sample); 0 = all")
    parser.add_argument("--seed", type=int, default=10)
    parser.add_argument("--out", default="mutation-run.jsonl", help="JSONL log: one line per mutant run")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="sessionspec-mutation-"))
    try:
        pristine, mutated = work / "pristine", work / "reference"
        shutil.copytree(ROOT / "reference", pristine, ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copytree(ROOT / "reference", mutated, ignore=shutil.ignore_patterns("__pycache__"))
        serve = work / "serve.py"
        serve.write_text(SERVE.format(init=str(mutated / "__init__.py"), pkg=str(mutated)))
        log = Path(args.out).resolve()
        log.unlink(missing_ok=True)
        test = work / "test.py"
        test.write_text(TEST.format(pristine=str(pristine), mutated=str(mutated), log=str(log),
                                    python=sys.executable, serve=str(serve)))
        config = work / "config.toml"
        config.write_text(
            "[cosmic-ray]\n"
            f"module-path = {json.dumps(str(mutated))}\n"
            "timeout = 1800.0\n"
            "excluded-modules = []\n"
            f"test-command = {json.dumps(shlex.join([sys.executable, str(test)]))}\n"
            "[cosmic-ray.distributor]\nname = \"local\"\n"
        )
        session = work / "session.sqlite"
        subprocess.run(["cosmic-ray", "init", str(config), str(session)], check=True, cwd=work)
        from cosmic_ray.work_db import WorkDB, use_db
        from cosmic_ray.work_item import WorkerOutcome, WorkResult

        with use_db(str(session), WorkDB.Mode.open) as db:
            items = list(db.work_items)
            total = len(items)
            keep = set(range(total)) if args.sample <= 0 else set(
                random.Random(args.seed).sample(range(total), min(args.sample, total)))
            skipped = [item.job_id for i, item in enumerate(items) if i not in keep]
            db.set_multiple_results(skipped, WorkResult(worker_outcome=WorkerOutcome.SKIPPED))
        print(f"cosmic-ray generated {total} mutants over reference/; running {len(keep)} (seed {args.seed})",
              flush=True)
        subprocess.run(["cosmic-ray", "exec", str(config), str(session)], check=True, cwd=work)
        report(log, total, len(keep))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


def report(log: Path, total: int, ran: int) -> None:
    rows = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    per_module: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for row in rows:
        module = row["diff"].split("\n", 1)[0].removeprefix("--- ").strip() or "(no diff)"
        stage = row["stage"].split(":")[0]
        per_module[module][stage] += 1
    print(f"\n{ran} of {total} mutants run; per module: vectors / CI-quick machines / survived")
    for module, c in sorted(per_module.items()):
        n = sum(c.values())
        print(f"  {module:<32} {n:>4}  {c['vectors']:>4} {c['machines']:>4} {c['survived']:>4}  "
              f"{100 * (n - c['survived']) / n:5.1f}%")
    all_ = collections.Counter(r["stage"].split(":")[0] for r in rows)
    n = sum(all_.values())
    if n:
        print(f"  {'total':<32} {n:>4}  {all_['vectors']:>4} {all_['machines']:>4} {all_['survived']:>4}  "
              f"{100 * (n - all_['survived']) / n:5.1f}%")
    for row in rows:
        if row["stage"] == "survived":
            print("\nSURVIVED:\n" + row["diff"])


if __name__ == "__main__":
    sys.exit(main())
