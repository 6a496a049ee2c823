"""The ``--fuzz N`` extension point: differential state machines live elsewhere.

``sessionspec conformance --fuzz N`` imports ``sessionspec.conformance.machines``
(when it exists) and calls its ``run`` function. The contract for that
module:

``run(*, connect, examples, trace_dir, out[, known, seen, revision]) -> Iterable[Mapping]``
    ``connect()`` returns a *started* :class:`~sessionspec.conformance.harness.Implementation`
    for the implementation under test (call it again after a crash; close what
    you open). ``examples`` is N, the Hypothesis ``max_examples`` budget per
    machine. Each distinct failure is reported as a mapping with ``machine``
    (name), ``rule``, ``op``, ``requirements``, ``expectedCode``,
    ``actualCode``, ``pointer``, ``context`` (tags such as ``stale-view``), ``message`` and ``trace`` (path of a trace
    written with :func:`sessionspec.conformance.trace.write_trace` under
    ``trace_dir``), so ``sessionspec replay`` re-runs it. ``known`` are the
    expectation file's fuzz entries (differences to set aside); ``seen``, a
    ``Counter``, receives how often each matched (both are passed only when the
    expectation file lists fuzz entries). ``revision`` is the format revision the run checks (the
    vectors' one: the adapter's declared revision or ``--revision``); the machines generate inputs of
    that revision and compare with the reference serving it. Progress text goes to ``out``.

``run_quick(*, connect, trace_dir, out[, known, seen]) -> Iterable[Mapping]`` (optional)
    The CI-quick profile (``--fuzz quick``): fixed seeds, the same requests
    on every run; otherwise as ``run``.

``COVERAGE: Mapping[str, Sequence[str]]`` (optional)
    property or machine name -> the requirement ids it checks. Coverage means
    evidence: ``sessionspec requirements`` counts a rule for a requirement
    only where ``evidence.json`` records a mutant of that requirement caught
    by that rule (:func:`property_coverage`).

The reference side of a differential comparison is the in-process reference
adapter: ``Implementation(InProcessConnection)`` gives the same replies the
vectors were generated from.
"""

from __future__ import annotations

import importlib
import inspect
import json
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from types import ModuleType
from typing import Any, TextIO

from .expectations import STRICT_FUZZ_EXAMPLES, FuzzExpectation
from .harness import Connection, Implementation
from .runner import start_implementation

__all__ = ["MACHINES_MODULE", "FuzzResult", "FuzzUnavailable", "load_machines", "machine_evidence",
           "property_coverage", "run_fuzz"]

MACHINES_MODULE = "sessionspec.conformance.machines"


class FuzzUnavailable(RuntimeError):
    """``--fuzz`` was asked for but no state machines are installed."""


def load_machines() -> ModuleType | None:
    """The machines module, or ``None`` when it is not part of this installation."""
    try:
        return importlib.import_module(MACHINES_MODULE)
    except ModuleNotFoundError as exc:
        if exc.name in (MACHINES_MODULE, MACHINES_MODULE.rsplit(".", 1)[0]):
            return None
        raise


EVIDENCE_FILE = "evidence.json"


def machine_evidence() -> dict[str, frozenset[str]]:
    """Requirement id -> the rule labels shown to catch a mutant of it (``conformance/evidence.json``,
    written by ``python -m sessionspec.conformance.mutants --check --evidence``; a test re-proves
    every entry)."""
    text = resources.files("sessionspec.conformance").joinpath(EVIDENCE_FILE).read_text(encoding="utf-8")
    return {req: frozenset(labels) for req, labels in json.loads(text)["machineCatches"].items()}


def property_coverage() -> Mapping[str, Sequence[str]]:
    """Rule label -> the requirement ids it counts as covering: those it checks (``COVERAGE``) for
    which a mutant of the requirement is shown caught by that rule. A rule that merely exercises
    a requirement is not evidence (empty without the machines module)."""
    module = load_machines()
    if module is None:
        return {}
    evidence = machine_evidence()
    out: dict[str, list[str]] = {}
    for label, reqs in getattr(module, "COVERAGE", {}).items():
        kept = [r for r in reqs if label in evidence.get(r, ())]
        if kept:
            out[label] = kept
    return out


@dataclass
class FuzzResult:
    """Distinct unexpected failures, and what became of each known difference."""

    failures: list[dict[str, Any]]
    known: list[dict[str, Any]] = field(default_factory=list)  # {"entry", "reason", "matches"}
    unmatched: list[str] = field(default_factory=list)  # known differences never seen
    strict: bool = False  # the run was deep enough for an unmatched entry to fail it
    held: list[str] = field(default_factory=list)  # of the unmatched, those a named test holds (``heldBy``)

    @property
    def problems(self) -> list[str]:
        """What fails the run besides the failures: unmatched entries of a deep run that no test holds."""
        if not self.strict:
            return []
        return [f"fuzz expectation never matched in a deep run (remove it or fix its fields): {u}"
                for u in self.unmatched if u not in self.held]


def run_fuzz(examples: int | str, connect: Callable[[], Connection], *, timeout: float, trace_dir: Path,
             out: TextIO, known: Sequence[FuzzExpectation] = (), revision: str | None = None,
             machines: Sequence[str] | None = None) -> FuzzResult:
    """Run every state machine (or only the ``machines`` named) with ``examples`` examples, or the CI-quick
    profile for ``"quick"`` (the module's ``run_quick``); returns the failures and known differences.

    With ``machines``, only the known differences that can come from those machines (no ``machine`` field,
    or one of them) take part: an entry of another machine is neither matched nor reported unmatched."""
    module = load_machines()
    entry = "run_quick" if examples == "quick" else "run"
    if module is None or not hasattr(module, entry):
        raise FuzzUnavailable(f"--fuzz needs {MACHINES_MODULE} with a {entry}() function, which this installation lacks")

    def started() -> Implementation:
        return start_implementation(connect, timeout)

    function = getattr(module, entry)
    if machines:
        if "machines" not in inspect.signature(function).parameters:
            raise FuzzUnavailable(f"{MACHINES_MODULE}.{entry}() cannot run one machine (no `machines` parameter)")
        known = [k for k in known if k.machine is None or k.machine in machines]
    seen: Counter[int] = Counter()
    extra: dict[str, Any] = {"known": tuple(known), "seen": seen} if known else {}  # older modules take neither
    if revision is not None and "revision" in inspect.signature(function).parameters:  # newer modules only
        extra["revision"] = revision
    if machines:
        extra["machines"] = list(machines)
    if examples == "quick":
        found = function(connect=started, trace_dir=trace_dir, out=out, **extra)
    else:
        found = function(connect=started, examples=examples, trace_dir=trace_dir, out=out, **extra)
    failures = [dict(f) for f in found]
    return FuzzResult(
        failures,
        [{"entry": k.describe(), "reason": k.reason, "matches": seen[i]} for i, k in enumerate(known)],
        [k.describe() for i, k in enumerate(known) if not seen[i]],
        strict=isinstance(examples, int) and examples >= STRICT_FUZZ_EXAMPLES,
        held=[k.describe() for i, k in enumerate(known) if not seen[i] and k.heldBy],
    )
