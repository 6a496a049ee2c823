"""Failures grouped by cause: one bug is one finding, however many cases it fails.

A planted bug (a crash-repair closer stamped one millisecond late) fails a dozen cases of many
requirements and several ops; an implementer should read one finding. Two failures share a cause when
they differ from the spec in the same way: the same set of differing places (the last named member of
each JSON pointer, array indices dropped, with the kind of difference and, for numbers, the offset), or,
without differences, the same op and the same wrong answer (expected code against the reply's kind and
code), or the same crash class.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .compare import Difference
from .results import CaseResult

__all__ = ["FailureGroup", "cause_key", "failure_groups"]

_INDEX = re.compile(r"^[0-9]+$")
_DIGITS = re.compile(r"[0-9]+")


def _leaf(pointer: str) -> str:
    """The last named member of a JSON pointer (``/result/events/3/time`` -> ``time``)."""
    names = [p for p in pointer.split("/") if p and not _INDEX.match(p)]
    return names[-1] if names else "(root)"


def _difference_key(d: Difference) -> str:
    offset = ""
    if d.kind == "value" and type(d.expected) is int and type(d.actual) is int:
        offset = f" {d.actual - d.expected:+d}"
    return f"{_leaf(d.pointer)}: {d.kind}{offset}"


def _requirement_order(req: str) -> tuple[str, int, str]:
    family, _, number = req.partition("-")
    return (family, int(number) if number.isdigit() else 0, req)


def cause_key(r: CaseResult) -> str:
    """A readable key that failures of one cause share."""
    if r.crash is not None:
        return f"crash {r.crash['class'] or '?'}: {_DIGITS.sub('N', r.crash['message'])[:120]}"
    if r.differences:
        return "differs at " + ", ".join(sorted({_difference_key(d) for d in r.differences}))
    if r.outcome == "errored":
        return f"errored: {_DIGITS.sub('N', r.message.splitlines()[0] if r.message else '')[:120]}"
    reply = r.reply or {}
    wanted = (r.case.expect.get("rejected") or {}).get("code") if "rejected" in r.case.expect else "a result"
    got = reply.get("code") if reply.get("kind") == "rejected" else reply.get("kind", "no reply")
    return f"{r.case.op}: expected {wanted}, got {got}"


@dataclass(frozen=True)
class FailureGroup:
    """Failing cases that share one cause."""

    cause: str
    results: tuple[CaseResult, ...]

    @property
    def requirements(self) -> list[str]:
        """The requirements of the group's cases in reading order (REPAIR-2 before REPAIR-10)."""
        return sorted({req for r in self.results for req in r.case.requirements}, key=_requirement_order)

    @property
    def ops(self) -> list[str]:
        return sorted({r.case.op for r in self.results})

    def to_json(self) -> dict[str, object]:
        return {"cause": self.cause, "cases": [r.case.id for r in self.results], "requirements": self.requirements,
                "ops": self.ops, "outcomes": sorted({r.outcome for r in self.results})}


def failure_groups(results: Iterable[CaseResult], outcomes: Sequence[str] = ("failed", "crashed", "errored")) -> list[FailureGroup]:
    """The failing results grouped by :func:`cause_key`, largest group first (then in corpus order)."""
    groups: dict[str, list[CaseResult]] = {}
    for r in results:
        if r.outcome in outcomes:
            groups.setdefault(cause_key(r), []).append(r)
    ordered = sorted(groups.items(), key=lambda kv: -len(kv[1]))
    return [FailureGroup(cause, tuple(members)) for cause, members in ordered]
