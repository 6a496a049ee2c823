"""Expectation files: the known failures of one implementation (protobuf's failure lists).

A file names case ids with a reason each. A listed case that fails or errors
counts as ``xfail`` and does not fail the run; a listed case that *passes*
counts as ``xpass`` and does (strict), and so does an entry naming a case the
corpus no longer has: the list cannot go stale silently.

Format (``spec/protocol/expectations.json``)::

    {"implementation": "dsh-session (TypeScript)",
     "failures": [{"case": "0123456789abcdef", "reason": "no run-time OOB admission",
                   "description": "optional copy of the case description"}]}
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from . import protocol, wire

__all__ = ["Expectations", "ExpectationsError", "load_expectations"]


class ExpectationsError(ValueError):
    """The expectation file cannot be used (path and JSON pointer in the message)."""


@dataclass(frozen=True)
class Expectations:
    """Known failures by case id, with the reason given for each."""

    implementation: str
    reasons: Mapping[str, str]
    source: str = ""

    def stale(self, known_ids: set[str]) -> list[str]:
        """Listed ids that are not cases of the corpus."""
        return sorted(i for i in self.reasons if i not in known_ids)


def load_expectations(path: str | Path) -> Expectations:
    """Read and validate an expectation file."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ExpectationsError(f"{path}: cannot read: {exc.strerror or exc}") from None
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
    return Expectations(data["implementation"], reasons, str(path))
