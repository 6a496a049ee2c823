"""The ``--fuzz N`` extension point: differential state machines live elsewhere.

``sessionspec conformance --fuzz N`` imports ``sessionspec.conformance.machines``
(when it exists) and calls its ``run`` function. The contract for that
module:

``run(*, connect, examples, trace_dir, out) -> Iterable[Mapping]``
    ``connect()`` returns a *started* :class:`~sessionspec.conformance.harness.Implementation`
    for the implementation under test (call it again after a crash; close what
    you open). ``examples`` is N, the Hypothesis ``max_examples`` budget per
    machine. Each failure is reported as a mapping with ``machine`` (name),
    ``message`` and ``trace`` (path of a trace written with
    :func:`sessionspec.conformance.trace.write_trace` under ``trace_dir``), so
    ``sessionspec replay`` re-runs it. Progress text goes to ``out``.

``COVERAGE: Mapping[str, Sequence[str]]`` (optional)
    property or machine name -> the requirement ids it checks; ``sessionspec
    requirements`` lists these next to the vectors.

The reference side of a differential comparison is the in-process reference
adapter: ``Implementation(InProcessConnection)`` gives the same replies the
vectors were generated from.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any, TextIO

from .harness import Connection, Implementation
from .runner import start_implementation

__all__ = ["MACHINES_MODULE", "FuzzUnavailable", "load_machines", "property_coverage", "run_fuzz"]

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


def run_fuzz(examples: int, connect: Callable[[], Connection], *, timeout: float, trace_dir: Path,
             out: TextIO) -> list[dict[str, Any]]:
    """Run every state machine with ``examples`` examples; returns the failures."""
    module = load_machines()
    if module is None or not hasattr(module, "run"):
        raise FuzzUnavailable(f"--fuzz needs {MACHINES_MODULE} with a run() function, which this installation lacks")

    def started() -> Implementation:
        return start_implementation(connect, timeout)

    return [dict(f) for f in module.run(connect=started, examples=examples, trace_dir=trace_dir, out=out)]
