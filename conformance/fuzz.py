"""The ``--fuzz N`` extension point: differential state machines live elsewhere.

``sessionspec conformance --fuzz N`` imports ``sessionspec.conformance.machines``
(when it exists) and calls its ``run`` function. The contract for that
module:

``run(*, connect, examples, trace_dir, out[, known, seen]) -> Iterable[Mapping]``
    ``connect()`` returns a *started* :class:`~sessionspec.conformance.harness.Implementation`
    for the implementation under test (call it again after a crash; close what
    you open). ``examples`` is N, the Hypothesis ``max_examples`` budget per
    machine. Each distinct failure is reported as a mapping with ``machine``
    (name), ``rule``, ``op``, ``requirements``, ``expectedCode``,
    ``actualCode``, ``pointer``, ``message`` and ``trace`` (path of a trace
    written with :func:`sessionspec.conformance.trace.write_trace` under
    ``trace_dir``), so ``sessionspec replay`` re-runs it. ``known`` are the
    expectation file's fuzz entries (differences to set aside); ``seen``, a
    ``Counter``, receives how often each matched (both are passed only when the
    expectation file lists fuzz entries). Progress text goes to ``out``.

``COVERAGE: Mapping[str, Sequence[str]]`` (optional)
    property or machine name -> the requirement ids it checks; ``sessionspec
    requirements`` lists these next to the vectors.

The reference side of a differential comparison is the in-process reference
adapter: ``Implementation(InProcessConnection)`` gives the same replies the
vectors were generated from.
"""

from __future__ import annotations

import importlib
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, TextIO

from .expectations import STRICT_FUZZ_EXAMPLES, FuzzExpectation
from .harness import Connection, Implementation
from .runner import start_implementation

__all__ = ["MACHINES_MODULE", "FuzzResult", "FuzzUnavailable", "load_machines", "property_coverage", "run_fuzz"]

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


def property_coverage() -> Mapping[str, Sequence[str]]:
    """Property name -> requirement ids, from the machines module (empty without it)."""
    module = load_machines()
    return dict(getattr(module, "COVERAGE", {})) if module is not None else {}


@dataclass
class FuzzResult:
    """Distinct unexpected failures, and what became of each known difference."""

    failures: list[dict[str, Any]]
    known: list[dict[str, Any]] = field(default_factory=list)  # {"entry", "reason", "matches"}
    unmatched: list[str] = field(default_factory=list)  # known differences never seen
    strict: bool = False  # the run was deep enough for an unmatched entry to fail it

    @property
    def problems(self) -> list[str]:
        """What fails the run besides the failures: unmatched entries of a deep run."""
        if not self.strict:
            return []
        return [f"fuzz expectation never matched in a deep run (remove it or fix its fields): {u}"
                for u in self.unmatched]


def run_fuzz(examples: int, connect: Callable[[], Connection], *, timeout: float, trace_dir: Path,
             out: TextIO, known: Sequence[FuzzExpectation] = ()) -> FuzzResult:
    """Run every state machine with ``examples`` examples; returns the failures and known differences."""
    module = load_machines()
    if module is None or not hasattr(module, "run"):
        raise FuzzUnavailable(f"--fuzz needs {MACHINES_MODULE} with a run() function, which this installation lacks")

    def started() -> Implementation:
        return start_implementation(connect, timeout)

    seen: Counter[int] = Counter()
    extra: dict[str, Any] = {"known": tuple(known), "seen": seen} if known else {}  # older modules take neither
    failures = [dict(f) for f in module.run(connect=started, examples=examples, trace_dir=trace_dir, out=out, **extra)]
    return FuzzResult(
        failures,
        [{"entry": k.describe(), "reason": k.reason, "matches": seen[i]} for i, k in enumerate(known)],
        [k.describe() for i, k in enumerate(known) if not seen[i]],
        strict=examples >= STRICT_FUZZ_EXAMPLES,
    )
