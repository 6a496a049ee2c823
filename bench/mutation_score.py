"""Mutation score of the conformance suite, measured with cosmic-ray over ``reference/``.

cosmic-ray (``cosmic-ray init``) enumerates every mutant of a copy of
``reference/``; cosmic-ray's own mutation engine applies each one to the
copy. Each mutant is served through the subprocess adapter protocol: the
adapter process loads the mutated copy as ``sessionspec.reference``, while the
harness, its in-process reference and the stored expectations stay unmutated.

Per mutant, cheapest verdict first:

1. **bytecode-equivalent**: the mutated module, with annotations erased (they
   are never evaluated: every module has ``from __future__ import
   annotations``), compiles to the same code objects as the original (e.g. a
   mutated type annotation, ``-0`` for ``0``). Equivalent by construction; not run.
2. **startup**: the adapter cannot start (the mutant breaks an import).
3. **vector**: the vectors run one by one on one adapter process and stop at
   the first that does not pass. The likeliest killers go first: vectors that
   killed earlier mutants of the same module, then the vector areas of the
   module's rule families, then the rest.
4. **machines**: only if every vector passes, the CI-quick machine profile
   (``machines.QUICK``, the project's test profile) on the same adapter.
5. otherwise **survived**.

The whole population is large (about 10,000 mutants), so ``--sample N`` runs a
seeded, stratified sample: N non-equivalent mutants split across modules in
proportion to each module's population (at least ``--min-per-module`` each),
drawn in a seeded order and interleaved across modules, so that a run cut
short is still balanced. The log (``--out``, JSONL, one line per mutant) is
appended as it goes and ``--resume`` continues it. Usage::

    pip install 'cosmic-ray>=8.3'
    nice python bench/mutation_score.py --sample 400 --seed 10 --out mutation-run.jsonl
    python bench/mutation_score.py --report mutation-run.jsonl          # tables and survivors again

Prints the score per module (with its rule families) and every survivor's diff.
"""

from __future__ import annotations

import argparse
import ast
import collections
import difflib
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
import types
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

#: The rule families each reference module implements, and the vector areas that check them (ordering
#: hint only: the first vectors tried on a mutant; every vector still runs before a mutant survives).
MODULES: dict[str, tuple[str, tuple[str, ...]]] = {
    "__init__.py": ("all", ()),
    "atomic.py": ("PERSIST", ("persistence",)),
    "chunk_rows.py": ("CHUNK", ("chunk", "jsonl")),
    "derive.py": ("DERIVE", ("derive", "surf")),
    "find.py": ("FIND", ("find",)),
    "invariants.py": ("INV, SEED", ("inv", "seed", "store")),
    "json_text.py": ("JSON, JSONL", ("json", "jsonl", "persistence")),
    "json_value.py": ("JSON, APPEND", ("json", "append", "derive", "req")),
    "jsonl.py": ("JSONL, REPAIR", ("jsonl", "repair", "persistence")),
    "jsonl_zstd.py": ("ZSTD, PERSIST", ("persistence",)),
    "persistence.py": ("PERSIST", ("persistence",)),
    "repair.py": ("REPAIR", ("repair", "jsonl")),
    "request_header.py": ("REQ", ("req", "derive", "hdr")),
    "revision.py": ("revisions (HDR, SEED, APPEND)", ("hdr", "seed", "append")),
    "session.py": ("APPEND, HDR, SEED, FORK", ("append", "hdr", "seed", "fork", "oob")),
    "sqlite_store.py": ("SQLITE, PERSIST", ("persistence",)),
    "store.py": ("STORE, OOB", ("store", "oob")),
    "surface.py": ("SURF, FORK", ("surf", "fork", "derive")),
    "zstd_frames.py": ("ZSTD", ("persistence",)),
}

SERVE = '''import importlib.util, sys
{trace}import sessionspec, sessionspec.spec  # the installed package; only its reference is swapped
spec = importlib.util.spec_from_file_location(
    "sessionspec.reference", {init!r}, submodule_search_locations=[{pkg!r}])
module = importlib.util.module_from_spec(spec)
sys.modules["sessionspec.reference"] = module
spec.loader.exec_module(module)
from sessionspec.conformance.reference_adapter import main
{hook}sys.exit(main())
'''

#: Line tracing for the reach run: every line of the copy the adapter executes, written at exit.
TRACE = '''import json, os, threading
_root, _seen = {root!r}, set()
def _local(frame, event, arg):
    if event == "line":
        _seen.add((frame.f_code.co_filename, frame.f_lineno))
    return _local
def _global(frame, event, arg):
    if frame.f_code.co_filename.startswith(_root):
        _seen.add((frame.f_code.co_filename, frame.f_lineno))
        return _local
    return None
sys.settrace(_global)
threading.settrace(_global)
'''

#: The traced adapter writes what it executed when asked to stop, before its reply (then it is killed).
DUMP = '''from sessionspec.conformance import adapter as _adapter
_handle = _adapter.ReferenceAdapter.handle
def _dumping(self, message):
    if isinstance(message, dict) and message.get("op") == "stop":
        with open(os.path.join({out!r}, str(os.getpid()) + ".json"), "w") as handle:
            handle.write(json.dumps(sorted([os.path.basename(f), n] for f, n in _seen)))
    return _handle(self, message)
_adapter.ReferenceAdapter.handle = _dumping
'''


# -- equivalence by construction ------------------------------------------------------------

class _EraseAnnotations(ast.NodeTransformer):
    """Annotations are never evaluated under ``from __future__ import annotations``; erase them
    (keeping an annotated assignment's place, which a dataclass reads, but not its text)."""

    def visit_arg(self, node: ast.arg) -> ast.arg:
        node.annotation = None
        return node

    def _function(self, node: Any) -> Any:
        node.returns = None
        self.generic_visit(node)
        return node

    visit_FunctionDef = visit_AsyncFunctionDef = _function  # noqa: N815 - the names NodeTransformer dispatches on

    def visit_AnnAssign(self, node: ast.AnnAssign) -> ast.AnnAssign:
        node.annotation = ast.copy_location(ast.Constant(""), node.annotation)
        self.generic_visit(node)
        return node


def _shape(value: Any) -> Any:
    """A code object as comparable data: bytecode, names and typed constants; no line numbers."""
    if isinstance(value, types.CodeType):
        return ("code", value.co_code, value.co_names, value.co_varnames, value.co_freevars, value.co_cellvars,
                value.co_flags, value.co_argcount, value.co_kwonlyargcount, value.co_posonlyargcount,
                tuple(_shape(c) for c in value.co_consts), value.co_exceptiontable)
    if isinstance(value, (tuple, frozenset)):
        return (type(value).__name__, tuple(_shape(v) for v in value))
    return (type(value).__name__, repr(value))  # 0 == 0.0 == False, but not as constants


def compiled_shape(source: str) -> Any:
    tree = _EraseAnnotations().visit(ast.parse(source))
    return _shape(compile(tree, "<mutant>", "exec"))


# -- the population and the sample ----------------------------------------------------------

@dataclass(frozen=True, order=True)
class Mutant:
    module: str  # file name inside reference/
    operator: str
    occurrence: int
    line: int

    @property
    def key(self) -> str:
        return f"{self.module}:{self.operator}:{self.occurrence}"


def enumerate_mutants(copy: Path, work: Path) -> list[Mutant]:
    """Every mutant cosmic-ray generates over ``copy`` (its ``init``), in a stable order."""
    config = work / "config.toml"
    config.write_text(
        "[cosmic-ray]\n"
        f"module-path = {json.dumps(str(copy))}\n"
        "timeout = 60.0\nexcluded-modules = []\ntest-command = \"false\"\n"
        "[cosmic-ray.distributor]\nname = \"local\"\n")
    session = work / "session.sqlite"
    subprocess.run(["cosmic-ray", "init", str(config), str(session)], check=True, cwd=work,
                   stdout=subprocess.DEVNULL)
    from cosmic_ray.work_db import WorkDB, use_db

    with use_db(str(session), WorkDB.Mode.open) as db:
        specs = [item.mutations[0] for item in db.work_items]
    return sorted(Mutant(Path(s.module_path).name, s.operator_name, s.occurrence, s.start_pos[0]) for s in specs)


def quotas(population: dict[str, int], sample: int, minimum: int) -> dict[str, int]:
    """Non-equivalent mutants to run per module: proportional to its population, at least ``minimum``."""
    total = sum(population.values())
    return {m: min(n, max(minimum, round(sample * n / total))) for m, n in population.items()}


def schedule(mutants: list[Mutant], sample: int, minimum: int, seed: int) -> tuple[dict[str, list[Mutant]], dict[str, int]]:
    by_module: dict[str, list[Mutant]] = collections.defaultdict(list)
    for m in mutants:
        by_module[m.module].append(m)
    rng = random.Random(seed)
    for module in sorted(by_module):
        rng.shuffle(by_module[module])
    if sample <= 0:
        return by_module, {m: len(v) for m, v in by_module.items()}
    return by_module, quotas({m: len(v) for m, v in by_module.items()}, sample, minimum)


# -- running one mutant ---------------------------------------------------------------------

class Workspace:
    """A copy of ``reference/`` that one mutant at a time is applied to, and the adapter serving it."""

    def __init__(self, work: Path) -> None:
        self.copy = work / "reference"
        shutil.copytree(ROOT / "reference", self.copy, ignore=shutil.ignore_patterns("__pycache__"))
        import compileall

        compileall.compile_dir(str(self.copy), quiet=2)
        self.serve = work / "serve.py"
        self.serve.write_text(SERVE.format(trace="", hook="", init=str(self.copy / "__init__.py"), pkg=str(self.copy)))
        self.command = f"{sys.executable} {self.serve}"
        self.work = work
        self.sources = {p.name: p.read_text(encoding="utf-8") for p in self.copy.glob("*.py")}
        lazy = [n for n, text in self.sources.items() if "from __future__ import annotations" not in text]
        if lazy:  # erasing annotations is sound only where they are never evaluated
            raise SystemExit(f"modules without postponed annotations: {', '.join(lazy)}")
        self.shapes: dict[str, Any] = {}

    def mutate(self, mutant: Mutant) -> str | None:
        """The mutated source (cosmic-ray's engine), or ``None`` when the operator does not apply."""
        import cosmic_ray.plugins
        from cosmic_ray.mutating import mutate_code

        operator = cosmic_ray.plugins.get_operator(mutant.operator)()
        return mutate_code(self.sources[mutant.module], operator, mutant.occurrence)

    def equivalent(self, mutant: Mutant, mutated: str) -> bool:
        if mutant.module not in self.shapes:
            self.shapes[mutant.module] = compiled_shape(self.sources[mutant.module])
        try:
            return compiled_shape(mutated) == self.shapes[mutant.module]
        except SyntaxError:
            return False

    def applied(self, mutant: Mutant, mutated: str) -> Iterator[None]:
        """Context: the copy holds the mutant (its cached bytecode removed), then the original again."""
        import contextlib

        @contextlib.contextmanager
        def context() -> Iterator[None]:
            path = self.copy / mutant.module
            stat = path.stat()
            cached = list((self.copy / "__pycache__").glob(path.stem + ".*.pyc"))
            saved = {p: p.read_bytes() for p in cached}
            path.write_text(mutated, encoding="utf-8")
            for p in cached:
                p.unlink()
            try:
                yield
            finally:
                path.write_text(self.sources[mutant.module], encoding="utf-8")
                os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # the cached bytecode is valid again
                for p, data in saved.items():
                    p.write_bytes(data)

        return context()

    def check_isolation(self, cases: list[Any]) -> None:
        """Every module of the copy is the one the adapter runs: with a module that raises on import
        (loaded at start-up or lazily), the adapter must fail to start or fail some vector; else the
        mutants of that module would all survive unseen."""
        from sessionspec.conformance.harness import Implementation, StartupFailed, connector_for

        for name in sorted(self.sources):
            with self.applied(Mutant(name, "probe", 0, 1), "raise ImportError('mutant probe')\n"):
                impl = Implementation(connector_for(self.command), timeout=20.0)
                try:
                    impl.start()
                except StartupFailed:
                    continue
                try:
                    killer, _ = run_vectors(impl, cases)
                finally:
                    impl.close()
                if killer is None:
                    raise SystemExit(f"isolation check failed: the adapter does not load reference/{name} "
                                     "from the mutated copy")


    def reach(self, killers: Killers, trace_dir: Path) -> dict[str, set[int]]:
        """The lines of each module the unmutated copy executes under the whole suite (every
        revision's vectors and the CI-quick machines), measured once with a line tracer. A mutant
        whose statement none of these lines touches behaves exactly like the original under the suite:
        it survives without being run (reported as such, never as equivalent)."""
        out = self.work / "reach"
        out.mkdir()
        traced = self.work / "serve_traced.py"
        traced.write_text(SERVE.format(trace=TRACE.format(root=str(self.copy)), hook=DUMP.format(out=str(out)),
                                       init=str(self.copy / "__init__.py"), pkg=str(self.copy)))
        command, self.command = self.command, f"{sys.executable} {traced}"
        try:
            row = judge_mutant(self, killers, Mutant("__init__.py", "reach", 0, 1), self.sources["__init__.py"],
                               120.0, True, trace_dir)
        finally:
            self.command = command
        if row["stage"] != "survived":
            raise SystemExit(f"the unmutated reference does not pass the suite: {row}")
        lines: dict[str, set[int]] = collections.defaultdict(set)
        for path in out.glob("*.json"):
            for name, line in json.loads(path.read_text()):
                lines[name].add(line)
        return lines

    def statement_lines(self, module: str) -> dict[int, range]:
        """Each line's smallest enclosing statement (a compound statement's header only): a mutated
        operator's own line may carry no bytecode of its own."""
        spans: dict[int, range] = {}
        for node in ast.walk(ast.parse(self.sources[module])):
            if not isinstance(node, ast.stmt):
                continue
            bodies = [getattr(node, f) for f in ("body", "orelse", "finalbody", "handlers") if getattr(node, f, None)]
            end = min((b[0].lineno for b in bodies), default=(node.end_lineno or node.lineno) + 1) - 1
            span = range(node.lineno, max(end, node.lineno) + 1)
            for line in span:
                if line not in spans or len(span) < len(spans[line]):
                    spans[line] = span
        return spans


class Killers:
    """The vectors of each revision the reference serves, and their order per module: cases that
    killed earlier mutants of the module first (most kills first), then the module's areas, then the
    rest (each group in corpus order)."""

    def __init__(self) -> None:
        from sessionspec.conformance.cases import for_revision, for_sqlite_layout, load_corpus, sqlite_layouts
        from sessionspec.spec.revisions import DEFAULT_REVISION, known_revisions

        corpus = load_corpus()
        self.pinned = DEFAULT_REVISION
        # each revision's cases at its own SQLite layout, the one the reference serves by default
        self.revisions = {r: for_sqlite_layout(for_revision(corpus, r), sqlite_layouts([r])[0]) for r in
                          [DEFAULT_REVISION, *(r for r in known_revisions() if r != DEFAULT_REVISION)]}
        self.kills: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)

    def order(self, module: str, cases: list[Any]) -> list[Any]:
        areas = MODULES.get(module, ("", ()))[1]
        kills = self.kills[module]
        rank = {area: i for i, area in enumerate(areas)}
        return sorted(cases, key=lambda c: (-kills[c.id], rank.get(c.area, len(areas))))

    def killed(self, module: str, case_id: str) -> None:
        self.kills[module][case_id] += 1


def run_vectors(impl: Any, cases: list[Any]) -> tuple[str | None, int]:
    """The id of the first case that does not pass (``None``: all pass) and how many ran."""
    from sessionspec.conformance.runner import run_case

    for count, case in enumerate(cases, 1):
        result = run_case(impl, case)
        if result.outcome not in ("passed", "skipped"):
            return f"{case.id} ({result.outcome}, {'/'.join(case.requirements)})", count
    return None, len(cases)


def run_machines(impl: Any, trace_dir: Path) -> str | None:
    """The CI-quick profile on an adapter; the first failing rule, or ``None``."""
    import io

    from sessionspec.conformance import machines

    failures = machines.run_quick(connect=lambda: impl, trace_dir=trace_dir, out=io.StringIO(), stop_at_first=True)
    return (failures[0].get("rule") or failures[0]["message"][:80]) if failures else None


def judge_mutant(ws: Workspace, killers: Killers, mutant: Mutant, mutated: str, timeout: float,
                 machines_stage: bool, trace_dir: Path) -> dict[str, Any]:
    """Vectors of each revision the reference serves (the pinned one first, each on an adapter serving
    it), then the CI-quick machines; stops at the first stage that kills the mutant."""
    from sessionspec.conformance.harness import Implementation, StartupFailed, connector_for

    started = time.perf_counter()
    row: dict[str, Any] = {"vectors_run": 0}
    adapters: list[Implementation] = []
    with ws.applied(mutant, mutated):
        try:
            for revision, cases in killers.revisions.items():
                option = "" if revision == killers.pinned else f" --revision {revision}"
                impl = Implementation(connector_for(ws.command + option), timeout=timeout)
                try:
                    impl.start()
                except StartupFailed as exc:
                    row.update(stage="startup", by=str(exc)[:200])
                    break
                adapters.append(impl)
                killer, ran = run_vectors(impl, killers.order(mutant.module, cases))
                row["vectors_run"] += ran
                if killer is not None:
                    killers.killed(mutant.module, killer.split(" ")[0])
                    row.update(stage="vector", by=f"{killer} at {revision}")
                    break
            else:
                rule = run_machines(adapters[0], trace_dir) if machines_stage else None
                stage = "machines" if rule else "survived" if machines_stage else "survived-vectors"
                row.update(stage=stage, by=rule)
        finally:
            for impl in adapters:
                impl.close()
    row["seconds"] = round(time.perf_counter() - started, 2)
    return row


def diff_of(ws: Workspace, mutant: Mutant, mutated: str) -> str:
    lines = difflib.unified_diff(ws.sources[mutant.module].splitlines(), mutated.splitlines(),
                                 f"reference/{mutant.module}", f"reference/{mutant.module}", lineterm="", n=0)
    return "\n".join(list(lines)[2:])


# -- the run --------------------------------------------------------------------------------

def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sample", type=int, default=400,
                        help="non-equivalent mutants to run, stratified by module (0 = all)")
    parser.add_argument("--min-per-module", type=int, default=6)
    parser.add_argument("--seed", type=int, default=10)
    parser.add_argument("--out", default="mutation-run.jsonl", help="JSONL log, one line per mutant")
    parser.add_argument("--resume", action="store_true", help="keep the log and skip the mutants it holds")
    parser.add_argument("--timeout", type=float, default=10.0, help="per-request timeout (s)")
    parser.add_argument("--no-machines", action="store_true", help="vectors only")
    parser.add_argument("--budget", type=float, default=0, help="stop after this many seconds (0: no limit)")
    parser.add_argument("--report", metavar="LOG", help="only print the tables of an existing log")
    parser.add_argument("--verdicts", metavar="FILE.json",
                        help="with --report: the triage of the survivors (mutant -> verdict and why), as a table "
                             "and in the score")
    parser.add_argument("--kill", nargs="+", metavar=("VECTORS.json", "MUTANT"),
                        help="check new vectors: which cases of the file fail on each mutant (module:operator:"
                             "occurrence, as in the log), and that all pass on the unmutated reference")
    parser.add_argument("--requick", metavar="LOG",
                        help="run the current CI-quick profile on the survivors of a log (executed, every vector "
                             "passed) and print which it catches")
    args = parser.parse_args()
    if args.requick:
        return requick(Path(args.requick), args.timeout)
    if args.report:
        rows = [json.loads(line) for line in Path(args.report).read_text().splitlines() if line.strip()]
        verdicts = json.loads(Path(args.verdicts).read_text()) if args.verdicts else None
        report(rows, verdicts)
        return 0
    if args.kill:
        return check_kills(Path(args.kill[0]), args.kill[1:], args.timeout)
    os.environ["PYTHONDONTWRITEBYTECODE"] = "1"  # the adapter compiles a mutated module from its source
    log = Path(args.out).resolve()
    done: dict[str, dict[str, Any]] = {}
    if args.resume and log.exists():
        done = {r["key"]: r for r in map(json.loads, log.read_text().splitlines()) if r.get("key")}
    elif log.exists():
        log.unlink()
    work = Path(tempfile.mkdtemp(prefix="sessionspec-mutation-"))
    started = time.perf_counter()
    try:
        killers = Killers()
        ws = Workspace(work)
        ws.check_isolation(killers.revisions[killers.pinned])
        executed = ws.reach(killers, work / "traces")
        print(f"reach: the suite executes {sum(map(len, executed.values()))} lines of reference/", flush=True)
        spans = {m: ws.statement_lines(m) for m in ws.sources}
        population = enumerate_mutants(ws.copy, work)
        pool, quota = schedule(population, args.sample, args.min_per_module, args.seed)
        print(f"cosmic-ray generated {len(population)} mutants over reference/; running up to "
              f"{sum(quota.values())} non-equivalent ones (seed {args.seed}, stratified by module)", flush=True)
        for row in done.values():
            if row["stage"] == "vector":
                killers.killed(row["module"], row["by"].split(" ")[0])
        ran = collections.Counter(r["module"] for r in done.values() if r["stage"] != "equivalent")
        cursor = dict.fromkeys(pool, 0)
        while True:
            open_ = [m for m in pool if ran[m] < quota[m] and cursor[m] < len(pool[m])]
            if not open_ or (args.budget and time.perf_counter() - started > args.budget):
                break
            module = min(open_, key=lambda m: (ran[m] / quota[m], m))
            mutant = pool[module][cursor[module]]
            cursor[module] += 1
            if mutant.key in done:
                continue
            mutated = ws.mutate(mutant)
            row: dict[str, Any] = {"key": mutant.key, "module": module, "operator": mutant.operator,
                                   "line": mutant.line}
            if mutated is None:
                continue
            row["diff"] = diff_of(ws, mutant, mutated)
            if ws.equivalent(mutant, mutated):
                row["stage"] = "equivalent"
            elif not any(line in executed[module] for line in spans[module].get(mutant.line, (mutant.line,))):
                ran[module] += 1
                row.update(stage="unreached", seconds=0)
            else:
                ran[module] += 1
                row.update(judge_mutant(ws, killers, mutant, mutated, args.timeout, not args.no_machines,
                                        work / "traces"))
            done[mutant.key] = row
            with log.open("a") as handle:
                handle.write(json.dumps(row) + "\n")
            if row["stage"] != "equivalent":
                print(f"[{sum(ran.values())}/{sum(quota.values())}] {mutant.key}: {row['stage']} "
                      f"{row.get('by') or ''} ({row['seconds']} s)", flush=True)
        report(list(done.values()))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


def requick(log: Path, timeout: float) -> int:
    """The CI-quick profile (as it is now) on each survivor of ``log`` that ran every vector."""
    from sessionspec.conformance.harness import Implementation, connector_for

    os.environ["PYTHONDONTWRITEBYTECODE"] = "1"
    rows = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    rows = [r for r in rows if r["stage"] == "survived"]
    work = Path(tempfile.mkdtemp(prefix="sessionspec-mutation-"))
    caught = 0
    try:
        ws = Workspace(work)
        for row in rows:
            module, operator, occurrence = row["key"].rsplit(":", 2)
            mutant = Mutant(module, operator, int(occurrence), row["line"])
            mutated = ws.mutate(mutant)
            if mutated is None or diff_of(ws, mutant, mutated) != row["diff"]:
                print(f"{row['key']}: skipped (reference/{module} changed since the run)", flush=True)
                continue
            with ws.applied(mutant, mutated):
                impl = Implementation(connector_for(ws.command), timeout=timeout)
                impl.start()
                rule = run_machines(impl, work / "traces")
            caught += rule is not None
            print(f"{row['key']}: {'caught by ' + rule if rule else 'not caught'}", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"CI-quick profile now: {caught} of {len(rows)} survivors of the vectors and the old profile caught")
    return 0


def check_kills(path: Path, keys: list[str], timeout: float) -> int:
    """Run the cases of one vector file on the unmutated copy and on each named mutant, at every
    revision each case belongs to; exit 1 unless the reference passes all and every mutant fails one."""
    from sessionspec.conformance.cases import for_revision, for_sqlite_layout, load_case_file, sqlite_layouts
    from sessionspec.conformance.harness import Implementation, connector_for
    from sessionspec.conformance.runner import run_case
    from sessionspec.spec.revisions import DEFAULT_REVISION, known_revisions

    os.environ["PYTHONDONTWRITEBYTECODE"] = "1"
    cases = load_case_file(path.read_text(encoding="utf-8"), str(path))
    work = Path(tempfile.mkdtemp(prefix="sessionspec-mutation-"))
    try:
        ws = Workspace(work)

        def failing(source: str, mutant: Mutant) -> list[str]:
            bad = []
            with ws.applied(mutant, source):
                for revision in known_revisions():
                    option = "" if revision == DEFAULT_REVISION else f" --revision {revision}"
                    impl = Implementation(connector_for(ws.command + option), timeout=timeout)
                    impl.start()
                    try:
                        own = for_sqlite_layout(for_revision(cases, revision), sqlite_layouts([revision])[0])
                        bad += [f"{c.id}@{revision}" for c in own
                                if run_case(impl, c).outcome not in ("passed", "skipped")]
                    finally:
                        impl.close()
            return bad

        status = 0
        pristine = failing(ws.sources["__init__.py"], Mutant("__init__.py", "none", 0, 1))
        print(f"unmutated reference: {'all pass' if not pristine else 'FAILS ' + ', '.join(pristine)}")
        status |= bool(pristine)
        for key in keys:
            module, operator, occurrence = key.rsplit(":", 2)
            mutant = Mutant(module, operator, int(occurrence), 0)
            mutated = ws.mutate(mutant)
            if mutated is None:
                print(f"{key}: no such mutant")
                status = 1
                continue
            killed = failing(mutated, mutant)
            print(f"{key}: {'killed by ' + ', '.join(killed) if killed else 'NOT KILLED'}")
            status |= not killed
        return status
    finally:
        shutil.rmtree(work, ignore_errors=True)


STAGES = ("startup", "vector", "machines", "unreached", "survived", "survived-vectors")
SURVIVED = ("unreached", "survived", "survived-vectors")


def report(rows: list[dict[str, Any]], verdicts: dict[str, dict[str, str]] | None = None) -> None:
    per: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for row in rows:
        per[row["module"]][row["stage"]] += 1
    print("\n| module | rule families | drawn | bytecode-equivalent | run | killed: startup | killed: vectors | "
          "killed: CI-quick machines | survived: line never executed | survived: executed |\n"
          "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    total: collections.Counter[str] = collections.Counter()
    for module in sorted(per):
        total.update(per[module])
    for module, c in [*sorted(per.items()), ("**total**", total)]:
        run = sum(c[s] for s in STAGES)
        name = f"`{module}`" if module in per else module
        print(f"| {name} | {MODULES.get(module, ('',))[0]} | {run + c['equivalent']} | {c['equivalent']} | {run} | "
              f"{c['startup']} | {c['vector']} | {c['machines']} | {c['unreached']} | "
              f"{c['survived'] + c['survived-vectors']} |")
    run = sum(total[s] for s in STAGES)
    survived = [r for r in rows if r["stage"] in SURVIVED]
    if run:
        print(f"\nkilled: {run - len(survived)} of the {run} mutants run "
              f"({100 * (run - len(survived)) / run:.1f}%); time spent judging: "
              f"{sum(r.get('seconds', 0) for r in rows):.0f} s")
    if verdicts is None:
        for row in survived:
            print(f"\n{row['stage'].upper()} {row['key']} (line {row['line']}):\n{row['diff']}")
        return
    score(rows, survived, verdicts)


EXCUSED = ("equivalent", "unreachable", "not-observable")


def wilson(part: int, whole: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of a proportion (95% by default): honest for small samples and 100%."""
    if not whole:
        return 0.0, 1.0
    p = part / whole
    centre = (p + z * z / (2 * whole)) / (1 + z * z / whole)
    half = z * ((p * (1 - p) / whole + z * z / (4 * whole * whole)) ** 0.5) / (1 + z * z / whole)
    return max(0.0, centre - half), min(1.0, centre + half)


def _share(part: int, whole: int) -> str:
    return f"{part} ({100 * part / whole:.1f}%)" if whole else "-"


def score(rows: list[dict[str, Any]], survived: list[dict[str, Any]], verdicts: dict[str, dict[str, str]]) -> None:
    """Per module: the score before and after the new vectors over the non-equivalent mutants, and
    every survivor with its verdict."""
    per: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for row in rows:
        if row["stage"] == "equivalent":
            continue
        c = per[row["module"]]
        c["run"] += 1
        verdict = verdicts.get(row["key"], {}).get("verdict", "not triaged") if row["stage"] in SURVIVED else "killed"
        c[verdict] += 1
    print("\n| module | rule families | run | equivalent / unreachable / not observable | non-equivalent | "
          "caught before | caught after new vectors | not triaged |\n|---|---|---:|---:|---:|---:|---:|---:|")
    total: collections.Counter[str] = collections.Counter()
    for module in sorted(per):
        total.update(per[module])
    for module, c in [*sorted(per.items()), ("**total**", total)]:
        excused = sum(c[v] for v in EXCUSED)
        real = c["run"] - excused
        after = c["killed"] + c["new-vector"]
        name = f"`{module}`" if module in per else module
        print(f"| {name} | {MODULES.get(module, ('',))[0]} | {c['run']} | {c['equivalent']} / {c['unreachable']} / "
              f"{c['not-observable']} | {real} | {_share(c['killed'], real)} | {_share(after, real)} | "
              f"{c['not triaged']} |")
    excused = sum(total[v] for v in EXCUSED)
    real = total["run"] - excused
    for name, part in (("before", total["killed"]), ("after the new vectors", total["killed"] + total["new-vector"])):
        low, high = wilson(part, real)
        print(f"\nscore {name}: {_share(part, real)} of the non-equivalent mutants; 95% interval "
              f"{100 * low:.1f}%-{100 * high:.1f}% (Wilson, sample of {real})")
    print("\n| mutant | line | change | verdict | why / killing vector |\n|---|---:|---|---|---|")
    for row in sorted(survived, key=lambda r: r["key"]):
        change = [ln[1:].strip() for ln in row["diff"].splitlines()[1:] if ln[:1] in "-+"]
        text = " → ".join(f"`{c[:90]}`".replace("|", "\\|") for c in change[:2])
        v = verdicts.get(row["key"], {"verdict": "not triaged", "why": ""})
        print(f"| `{row['key']}` | {row['line']} | {text} | {v['verdict']} | {v['why'].replace('|', '/')} |")


if __name__ == "__main__":
    sys.exit(main())
