"""Per-case outcomes and their tallies.

Outcomes keep "wrong answer", "crashed", "broke" and "declined" apart, at
every level: ``passed``; ``failed`` (a reply that contradicts the spec);
``crashed`` (the implementation threw an error it does not define, reported
by the adapter as a ``crashed`` reply: a failure of the case, counted
against its requirements like ``failed``, as protobuf's conformance runner
and Bowtie count a crash); ``errored`` (protocol breakage only: the adapter
exited, hung, garbled its output, answered another ``seq`` or reported that
it could not run the request: a broken adapter, not a verdict);
``skipped`` (a capability the implementation does not claim, or the adapter
declined); ``xfail`` (failed, crashed or errored, but listed as a known
failure) and ``xpass`` (listed as a known failure, yet passed: the list is
stale, which fails the run).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .cases import Case
from .compare import Difference

__all__ = ["FAILING_OUTCOMES", "KNOWN_FAILURE_OUTCOMES", "OUTCOMES", "PROBLEM_OUTCOMES", "CaseResult", "skip_reasons", "tally"]

OUTCOMES: tuple[str, ...] = ("passed", "failed", "crashed", "errored", "skipped", "xfail", "xpass")
PROBLEM_OUTCOMES = frozenset({"failed", "crashed", "errored", "xpass"})
"""Outcomes that make ``sessionspec conformance`` exit 1."""
FAILING_OUTCOMES = frozenset({"failed", "crashed"})
"""Verdicts against the implementation: a ``crashed`` case has failed its requirements."""
KNOWN_FAILURE_OUTCOMES = frozenset({"failed", "crashed", "errored"})
"""Outcomes an expectation file entry turns into ``xfail``."""


REPORT_MAX_DEPTH = 64
"""Containers nested deeper than this are elided in report lines, so that every line reads
with a plain ``json.loads`` (whose recursion limit a 10,000-deep payload, DEC-16, exceeds)."""


def capped(value: Any, max_depth: int = REPORT_MAX_DEPTH) -> Any:
    """``value`` with every container deeper than ``max_depth`` replaced by ``{"elided": ...}`` (iterative)."""
    root: list[Any] = [None]
    stack: list[tuple[Any, Any, Any, int]] = [(value, root, 0, 0)]
    while stack:
        node, parent, key, depth = stack.pop()
        if isinstance(node, (dict, list)) and depth >= max_depth:
            parent[key] = {"elided": f"a {type(node).__name__} nested more than {max_depth} levels deep; "
                                     "the full input is in the case's vector file (source)"}
        elif isinstance(node, dict):
            parent[key] = copy_map = dict.fromkeys(node)  # keys in order; values filled as popped
            for k, v in node.items():
                stack.append((v, copy_map, k, depth + 1))
        elif isinstance(node, list):
            parent[key] = copy_list = [None] * len(node)
            for i, v in enumerate(node):
                stack.append((v, copy_list, i, depth + 1))
        else:
            parent[key] = node
    return root[0]


@dataclass(frozen=True)
class CaseResult:
    """What happened to one case."""

    case: Case
    outcome: str
    message: str = ""
    differences: tuple[Difference, ...] = ()
    reply: Mapping[str, Any] | None = None
    reason: str | None = None  # the expectation file's reason, for xfail/xpass
    duration: float = 0.0
    crash: Mapping[str, str] | None = None  # {"class", "message"} when the implementation crashed

    @property
    def problem(self) -> bool:
        return self.outcome in PROBLEM_OUTCOMES

    def to_json(self, *, full: bool | None = None) -> dict[str, Any]:
        """A report line; request, expectation and reply are kept for non-passing cases."""
        c = self.case
        line: dict[str, Any] = {
            "kind": "case",
            "id": c.id,
            "area": c.area,
            "description": c.description,
            "requirements": list(c.requirements),
            "level": c.level,
            "outcome": self.outcome,
        }
        if self.message:
            line["message"] = self.message
        if self.differences:
            line["diff"] = capped([d.to_json() for d in self.differences])
        if self.crash is not None:
            line["crash"] = {"class": self.crash["class"], "message": self.crash["message"]}
        if full if full is not None else self.outcome not in ("passed", "skipped"):
            line["source"] = c.source
            line["request"] = capped({"op": c.op, "args": c.args})
            line["expected"] = capped(dict(c.expect))
            if self.reply is not None:
                line["reply"] = capped(dict(self.reply))
        if self.reason:
            line["reason"] = self.reason
        line["durationMs"] = round(self.duration * 1000, 3)
        return line


@dataclass
class Tally:
    """Counts per outcome."""

    counts: Counter[str] = field(default_factory=Counter)

    def add(self, outcome: str) -> None:
        self.counts[outcome] += 1

    @property
    def total(self) -> int:
        return sum(self.counts.values())


def tally(results: Iterable[CaseResult]) -> Tally:
    """Counts per outcome over ``results``."""
    t = Tally()
    for r in results:
        t.add(r.outcome)
    return t


def skip_reasons(results: Sequence[CaseResult]) -> list[tuple[str, int]]:
    """The reasons of the skipped cases of ``results`` with their counts, most frequent first."""
    counts = Counter(r.message or "(no reason given)" for r in results if r.outcome == "skipped")
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
