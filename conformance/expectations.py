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

An entry with ``node`` (a list of Node majors) is a verdict that depends on
the Node version: it applies only when the handshake's ``runtime`` is ``node``
of one of those majors (:meth:`Expectations.for_runtime`); elsewhere the case
is judged as if unlisted. A case is listed once without ``node`` or in entries
whose ``node`` majors do not overlap. Fuzz entries take ``node`` likewise.

``fuzz`` lists known differences for ``--fuzz``: a difference the state
machines find that matches an entry (every field the entry gives: machine,
rule, op, requirement, code (either side), expectedCode and actualCode (exact),
pointer, context tags) is a known one and does not fail the
run; the machines keep looking for others. Strict too: an entry that no
difference matched during a deep run (``--fuzz`` of at least
:data:`STRICT_FUZZ_EXAMPLES`) is reported and fails the run.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from sessionspec.spec.inputs import read_text

from . import protocol, wire

__all__ = ["STRICT_FUZZ_EXAMPLES", "Expectations", "ExpectationsError", "FuzzExpectation", "load_expectations",
           "node_major"]

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
    expectedCode: str | None = None  # noqa: N815 - the expectation file's field name
    actualCode: str | None = None  # noqa: N815 - the expectation file's field name
    context: tuple[str, ...] | None = None
    """Tags the difference must all carry (``stale-view``: PERSIST-12's stale writer; ``unreadable-log``: an
    append to a log whose header line reading refuses; :mod:`.persistence_script`)."""
    node: tuple[int, ...] | None = None
    """The Node majors the difference is known on (None: every runtime)."""
    heldBy: str | None = None  # noqa: N815 - the expectation file's field name
    """The test (``path::name``) that reproduces the difference on the implementation itself: a difference the
    machines reach only rarely is held there, so a deep run that does not reach it reports it and does not fail."""

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
        if self.expectedCode is not None and failure.get("expectedCode") != self.expectedCode:
            return False
        if self.actualCode is not None and failure.get("actualCode") != self.actualCode:
            return False
        if self.context is not None and not set(self.context) <= set(failure.get("context") or ()):
            return False
        return self.pointer is None or fnmatch.fnmatchcase(str(failure.get("pointer")), self.pointer)

    def describe(self) -> str:
        fields = [f"{k}={v}" for k, v in (("machine", self.machine), ("rule", self.rule), ("op", self.op),
                                          ("requirement", self.requirement), ("code", self.code),
                                          ("expectedCode", self.expectedCode), ("actualCode", self.actualCode),
                                          ("pointer", self.pointer),
                                          ("context", ",".join(self.context) if self.context else None),
                                          ("node", ",".join(map(str, self.node)) if self.node else None),
                                          ("heldBy", self.heldBy))
                  if v is not None]
        return f"{' '.join(fields)} ({self.reason})"


def node_major(runtime: Any) -> int | None:
    """The Node major of a handshake's ``runtime`` (``{"name": "node", "version": "24.22.3"}``), else None."""
    if not isinstance(runtime, Mapping) or runtime.get("name") != "node" or not isinstance(runtime.get("version"), str):
        return None
    head = runtime["version"].removeprefix("v").split(".", 1)[0]
    return int(head) if head.isdigit() else None


@dataclass(frozen=True)
class Expectations:
    """Known failures by case id, with the reason given for each; known ``--fuzz`` differences.

    ``reasons`` are the entries that apply to the runtime the expectations were resolved for
    (:meth:`for_runtime`; before that, the entries without ``node``); ``per_node`` keeps the
    Node-specific ones by major, ``fuzz`` every fuzz entry until resolved."""

    implementation: str
    reasons: Mapping[str, str]
    source: str = ""
    fuzz: tuple[FuzzExpectation, ...] = ()
    per_node: Mapping[int, Mapping[str, str]] = field(default_factory=dict)
    common: Mapping[str, str] | None = None
    """The entries without ``node`` (None: ``reasons`` is that, nothing resolved yet)."""
    all_fuzz: tuple[FuzzExpectation, ...] | None = None

    def stale(self, known_ids: set[str]) -> list[str]:
        """Listed ids (for any Node) that are not cases of the corpus."""
        listed = set(self.reasons).union(*(set(r) for r in self.per_node.values()))
        return sorted(i for i in listed if i not in known_ids)

    def for_runtime(self, runtime: Any) -> Expectations:
        """The expectations that apply on ``runtime`` (a handshake's ``runtime``): the entries without
        ``node`` and those naming its Node major. Idempotent: resolving again starts from the file."""
        major = node_major(runtime)
        common = self.reasons if self.common is None else self.common
        every = self.fuzz if self.all_fuzz is None else self.all_fuzz
        reasons = {**common, **(self.per_node.get(major, {}) if major is not None else {})}
        fuzz = tuple(k for k in every if k.node is None or major in k.node)
        return replace(self, reasons=reasons, fuzz=fuzz, common=common, all_fuzz=every)


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
    per_node: dict[int, dict[str, str]] = {}
    where: dict[str, list[tuple[int, set[int] | None]]] = {}
    for i, entry in enumerate(data["failures"]):
        case, majors = entry["case"], set(entry["node"]) if "node" in entry else None
        for j, other in where.get(case, ()):
            if majors is None or other is None or majors & other:
                overlap = "" if majors is None or other is None else \
                    f" for Node {', '.join(map(str, sorted(majors & other)))}"
                raise ExpectationsError(f"{path}: /failures/{i}: case {case} is listed twice{overlap} "
                                        f"(also /failures/{j}; entries of one case need disjoint `node` majors)")
        where.setdefault(case, []).append((i, majors))
        if majors is None:
            reasons[case] = entry["reason"]
        for major in majors or ():
            per_node.setdefault(major, {})[case] = entry["reason"]
    fuzz = tuple(FuzzExpectation(**{**dict(entry), **{k: tuple(entry[k]) for k in ("node", "context") if k in entry}})
                 for entry in data.get("fuzz", ()))
    return Expectations(data["implementation"], reasons, str(path), fuzz, per_node)
