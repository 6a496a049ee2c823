"""Replayable traces: requests with their expected and actual replies (JSONL).

A trace is the language-neutral record of a failure: each ``step`` line holds
a request (op and args), what the spec expects, optionally the reply that
was seen, and comparison options. Because every operation is stateless, a
trace replays against any adapter (``sessionspec replay TRACE --impl CMD``)
and shows whether each step still differs. The state machines of ``--fuzz``
save their shrunk failures this way; ``sessionspec conformance --trace FILE``
saves the failing vectors of a run.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sessionspec.spec.inputs import read_text

from . import protocol, wire
from .compare import Verdict, judge, normalise_reply
from .harness import Implementation
from .report import atomic_write_text

__all__ = ["TraceError", "TraceStep", "read_trace", "replay", "step_line", "write_trace"]

FORMAT = "sessionspec-trace/1"


class TraceError(ValueError):
    """A trace file cannot be read (the message names the line)."""


@dataclass(frozen=True)
class TraceStep:
    """One request with the reply the spec expects (and the one seen, if recorded)."""

    op: str
    args: Mapping[str, Any]
    expected: Mapping[str, Any]
    actual: Mapping[str, Any] | None = None
    ignore: tuple[str, ...] = ()
    note: str | None = None


def step_line(step: TraceStep) -> dict[str, Any]:
    """The JSON line of a step."""
    line: dict[str, Any] = {"kind": "step", "request": {"op": step.op, "args": step.args}, "expected": step.expected}
    if step.ignore:
        line["compare"] = {"ignore": list(step.ignore)}
    if step.actual is not None:
        line["actual"] = normalise_reply(step.op, step.args, step.actual)
    if step.note:
        line["note"] = step.note
    return line


def write_trace(path: str | Path, steps: Iterable[TraceStep], *, description: str = "", origin: str = "",
                implementation: Mapping[str, Any] | None = None, force: bool | None = None) -> None:
    """Write a trace file atomically (``force``: as for `report.atomic_write_text`)."""
    header: dict[str, Any] = {"kind": "trace", "format": FORMAT}
    if description:
        header["description"] = description
    if origin:
        header["origin"] = origin
    if implementation:
        header["implementation"] = dict(implementation)
    lines = [header, *(step_line(s) for s in steps)]
    atomic_write_text(path, "".join(wire.dumps(line) + "\n" for line in lines), force=force)


def read_trace(path: str | Path) -> tuple[dict[str, Any], list[TraceStep]]:
    """Read and check a trace; the header line is optional."""
    text, problem = read_text(path)
    if text is None:
        raise TraceError(str(problem))
    header: dict[str, Any] = {}
    steps: list[TraceStep] = []
    for number, raw in enumerate(text.split("\n"), 1):
        if not raw.strip():
            continue
        try:
            value = wire.loads(raw)
            protocol.validate(value, "trace.json")
        except (wire.WireError, protocol.ProtocolViolation) as exc:
            raise TraceError(f"{path}:{number}: {exc}") from None
        if value["kind"] == "trace":
            if steps or header:
                raise TraceError(f"{path}:{number}: a trace header must be the first line")
            header = value
            continue
        request = value["request"]
        steps.append(TraceStep(
            request["op"], request["args"], value["expected"], value.get("actual"),
            tuple((value.get("compare") or {}).get("ignore", ())), value.get("note"),
        ))
    if not steps:
        raise TraceError(f"{path}: the trace has no steps")
    return header, steps


def replay(impl: Implementation, steps: Sequence[TraceStep]) -> list[tuple[TraceStep, dict[str, Any], Verdict]]:
    """Send every step to a started adapter; returns (step, reply, verdict) per step."""
    out = []
    for step in steps:
        reply = impl.request(step.op, step.args)
        verdict = judge(step.op, step.args, step.expected, reply, ignore=step.ignore, code_map=impl.code_map)
        out.append((step, reply, verdict))
    return out
