"""Expectation files: the known failures of one implementation (protobuf's failure lists).

A file names case ids with a reason each. A listed case that fails or errors
counts as ``xfail`` and does not fail the run; a listed case that *passes*
counts as ``xpass`` and does (strict), and so does an entry naming a case the
corpus no longer has: the list cannot go stale silently.

Format (``spec/protocol/expectations.json``)::

    {"implementation": "dsh-session (TypeScript)",
     "failures": [{"case": "0123456789abcdef", "reason": "no run-time OOB admission",
                   "description": "optional copy of the case description"}],
     "fuzz": [{"rule": "store.script", "pointer": "/trace/*/ok", "reason": "flush resolves to a boolean"}]}

``fuzz`` lists known differences for ``--fuzz``: a difference the state
machines find that matches an entry (every field the entry gives: machine,
rule, op, requirement, code, pointer) is a known one and does not fail the
run; the machines keep looking for others. Strict too: an entry that no
difference matched during a deep run (``--fuzz`` of at least
:data:`STRICT_FUZZ_EXAMPLES`) is reported and fails the run.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sessionspec.spec.inputs import read_text

from . import protocol, wire

__all__ = ["STRICT_FUZZ_EXAMPLES", "Expectations", "ExpectationsError", "FuzzExpectation", "load_expectations"]

STRICT_FUZZ_EXAMPLES = 100
"""From this many ``--fuzz`` examples per machine on, an unmatched fuzz entry fails the run."""


class ExpectationsError(ValueError):
    """The expectation file cannot be used (path and JSON pointer in the message)."""


@dataclass(frozen=True)
class FuzzExpectation:
    """A known ``--fuzz`` difference: the fields a difference must match, and why it is accepted."""

    reason: str
    machine: str | None = None
    rule: str | None = None
    op: str | None = None
    requirement: str | None = None
    code: str | None = None
    pointer: str | None = None

    def matches(self, failure: Mapping[str, Any]) -> bool:
        """Whether a fuzz difference (``machines`` failure signature) is this known one."""
        if self.machine is not None and failure.get("machine") != self.machine:
            return False
        if self.rule is not None and failure.get("rule") != self.rule:
            return False
        if self.op is not None and failure.get("op") != self.op:
            return False
        if self.requirement is not None and self.requirement not in failure.get("requirements", ()):
            return False
        if self.code is not None and self.code not in (failure.get("expectedCode"), failure.get("actualCode")):
            return False
        return self.pointer is None or fnmatch.fnmatchcase(str(failure.get("pointer")), self.pointer)

    def describe(self) -> str:
        fields = [f"{k}={v}" for k, v in (("machine", self.machine), ("rule", self.rule), ("op", self.op),
                                          ("requirement", self.requirement), ("code", self.code),
                                          ("pointer", self.pointer)) if v is not None]
        return f"{' '.join(fields)} ({self.reason})"


@dataclass(frozen=True)
class Expectations:
    """Known failures by case id, with the reason given for each; known ``--fuzz`` differences."""

    implementation: str
    reasons: Mapping[str, str]
    source: str = ""
    fuzz: tuple[FuzzExpectation, ...] = ()

    def stale(self, known_ids: set[str]) -> list[str]:
        """Listed ids that are not cases of the corpus."""
        return sorted(i for i in self.reasons if i not in known_ids)


def load_expectations(path: str | Path) -> Expectations:
    """Read and validate an expectation file."""
    text, problem = read_text(path)
    if text is None:
        raise ExpectationsError(str(problem))
    try:
        data = wire.loads(text)
        protocol.validate(data, "expectations.json")
    except wire.WireError as exc:
        raise ExpectationsError(f"{path}: {exc}") from None
    except protocol.ProtocolViolation as exc:
        raise ExpectationsError(f"{path}: {exc}") from None
    reasons: dict[str, str] = {}
    for i, entry in enumerate(data["failures"]):
        if entry["case"] in reasons:
            raise ExpectationsError(f"{path}: /failures/{i}: case {entry['case']} is listed twice")
        reasons[entry["case"]] = entry["reason"]
    fuzz = tuple(FuzzExpectation(**dict(entry)) for entry in data.get("fuzz", ()))
    return Expectations(data["implementation"], reasons, str(path), fuzz)
