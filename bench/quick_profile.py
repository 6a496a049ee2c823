"""Choose the CI-quick machine profile (``machines.QUICK``): fixed seeds and focused rules for breadth.

Breadth is measured, not guessed: a run's breadth is the set of behaviours it
makes the reference show, one per (rule label, the reference's reply: a result
or the rejection code). Candidates are broad runs of each machine under
seeds 0..``--seeds``-1 and runs focused on one rule each; every candidate runs
in-process against the reference (both sides), timed. The old profile's runs
(``BASELINE``) stay, so whatever they caught is still caught; a greedy
budgeted cover then adds, again and again, the candidate adding the most new behaviours per
second, until the chosen runs cost ``--budget`` times the old profile (the
``--baseline`` runs, measured in the same process). Prints the chosen runs as a
``QUICK`` tuple to paste into ``conformance/machines.py``, with the breadth of
the old and the new profile.

``--catches`` measures instead: each hand-written mutant
(``conformance/mutants.py``) is served as its own adapter process and the
CI-quick runs (unfocused, as a CI job runs them) are tried on it, the old
profile's runs first; prints which mutants the old and the new profile catch.
Usage::

    nice python bench/quick_profile.py --seeds 8 --budget 3
    nice python bench/quick_profile.py --catches
"""

from __future__ import annotations

import argparse
import io
import sys
import tempfile
import time
from pathlib import Path

from sessionspec.conformance import machines
from sessionspec.conformance.harness import Implementation, InProcessConnection
from sessionspec.conformance.machines import QuickRun

BASELINE = tuple(QuickRun(m, None, 6, 10) for m in machines.MACHINES)  # the profile before this tool

REQUIRED = frozenset({
    # PERSIST-5's non-JSON batch through either writer: the case a known upstream defect lives in (#27), which
    # no broad run showed within the budget; the cheapest run showing each is chosen before the greedy cover
    ("persistence", "persistence.script", "append:PERSIST_DATA_NOT_JSON"),
    ("persistence", "persistence.script", "append/second:PERSIST_DATA_NOT_JSON"),
})
"""Behaviours the profile must show whatever they cost."""


def measure(run: QuickRun, trace_dir: Path) -> tuple[set[tuple[str, str]], float]:
    """The behaviours one run shows and its time (in-process, reference on both sides)."""
    found: set[tuple[str, str]] = set()
    impl = Implementation(InProcessConnection)
    impl.start()
    started = time.perf_counter()
    failures = machines.run_quick(connect=lambda: impl, trace_dir=trace_dir, out=io.StringIO(), runs=[run],
                                  behaviours=found)
    if failures:
        raise SystemExit(f"the reference disagrees with itself on {run}: {failures[0]['message']}")
    return {(run.machine, *b) for b in found}, time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=8, help="seeds tried per broad machine run")
    parser.add_argument("--focused-seeds", type=int, default=2, help="seeds tried per focused rule run")
    parser.add_argument("--budget", type=float, default=3.0, help="time of the chosen runs / time of the baseline")
    parser.add_argument("--catches", action="store_true", help="measure old and new profile on the hand-written mutants")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="sessionspec-quick-") as traces:
        trace_dir = Path(traces)
        return catches(trace_dir) if args.catches else choose(args, trace_dir)


def choose(args: argparse.Namespace, trace_dir: Path) -> int:
    """Pick the runs of the CI-quick profile: greedy on new behaviours per second, within the budget."""
    base: set[tuple[str, str, str]] = set()
    base_time = 0.0
    for run in BASELINE:
        found, seconds = measure(run, trace_dir)
        base |= found
        base_time += seconds
    candidates: list[QuickRun] = []
    for name, machine in machines.MACHINES.items():
        candidates += [QuickRun(name, s, 6, 10) for s in range(args.seeds)]
        candidates += [QuickRun(name, s, 3, 8, (rule,)) for rule in machines.rule_names(machine)
                       for s in range(args.focused_seeds)]
        candidates += [QuickRun(name, s, 2, 6, (f"{rule}:{kind}",)) for rule, kinds in machine.kinds.items()
                       for kind in kinds for s in range(args.focused_seeds)]
    measured = []
    for run in candidates:
        found, seconds = measure(run, trace_dir)
        measured.append((run, found, seconds))
    universe = set().union(*(m[1] for m in measured)) | base
    chosen: list[QuickRun] = list(BASELINE)  # the old runs stay: nothing the old profile caught is lost
    covered = set(base)
    spent = base_time
    pool = list(measured)
    for wanted in sorted(REQUIRED):
        if wanted in covered:
            continue
        showing = [m for m in pool if wanted in m[1]]
        if not showing:
            raise SystemExit(f"no candidate run shows the required behaviour {wanted}")
        run, found, seconds = min(showing, key=lambda m: m[2])
        chosen.append(run)
        covered |= found
        spent += seconds
        pool.remove((run, found, seconds))
    while pool:
        run, found, seconds = max(pool, key=lambda m: len(m[1] - covered) / max(m[2], 1e-3))
        if not found - covered or spent + seconds > args.budget * base_time:
            pool.remove((run, found, seconds))
            continue
        chosen.append(run)
        covered |= found
        spent += seconds
        pool.remove((run, found, seconds))
    chosen.sort(key=lambda r: (list(machines.MACHINES).index(r.machine), r.focus is not None, r.focus or (), r.seed or -1))
    print(f"behaviours seen by any candidate: {len(universe)}")
    print(f"old profile (4 derandomised runs): {len(base)} behaviours, {base_time:.1f} s")
    print(f"new profile ({len(chosen)} runs): {len(covered)} behaviours, {spent:.1f} s "
          f"({spent / base_time:.2f}x the old profile's time, measured in this run)")
    print("QUICK: tuple[QuickRun, ...] = (")
    for run in chosen:
        focus = f", {run.focus!r}" if run.focus else ""
        print(f"    QuickRun({run.machine!r}, {run.seed}, {run.examples}, {run.steps}{focus}),")
    print(")")
    missed = sorted(universe - covered)
    print(f"\nbehaviours no chosen run shows ({len(missed)}):")
    for item in missed:
        print("  ", *item)
    return 0


def first_catch(command: str, trace_dir: Path) -> QuickRun | None:
    """The first CI-quick run (the old profile's first, then the new profile's other runs) that catches
    the adapter ``command``; ``None`` when none does."""
    from sessionspec.conformance.harness import connector_for
    from sessionspec.conformance.runner import start_implementation

    order = [*BASELINE, *(r for r in machines.QUICK if r not in BASELINE)]
    for run in order:
        failures = machines.run_quick(connect=lambda: start_implementation(connector_for(command), 30.0),
                                      trace_dir=trace_dir, out=io.StringIO(), runs=[run], stop_at_first=True)
        if failures:
            return run
    return None


def catches(trace_dir: Path) -> int:
    from sessionspec.conformance import mutants

    old = new = 0
    for name in mutants.MUTANTS:
        run = first_catch(mutants.command(name), trace_dir)
        old += run in BASELINE
        new += run is not None
        print(f"{name:<44} {'old+new' if run in BASELINE else 'new only' if run else 'neither'} {run or ''}",
              flush=True)
    print(f"hand-written mutants caught by the CI-quick machines alone: old profile {old}, new profile {new}, "
          f"of {len(mutants.MUTANTS)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
