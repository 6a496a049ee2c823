"""Which vectors and properties cover which requirement (``sessionspec requirements``).

A requirement may instead carry an ``observability`` classification in
``spec/requirements.json`` (``api``: a property of a language binding's API
that JSON text cannot carry; ``unreachable``: a defensive check no public
input reaches). Such a requirement is *accounted for* without a vector: each
implementation verifies it with its own tests (in this project,
``tests/reference``). A classified requirement that nevertheless has a vector
or a property is *misclassified*: the classification would hide a real gap
the day the vector goes, so ``--check`` refuses it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .cases import Case

__all__ = ["RequirementCoverage", "coverage", "load_requirements"]


def load_requirements(revision: str | None = None) -> list[dict[str, Any]]:
    """Every requirement of one format revision (default: the pinned one), in spec order."""
    from sessionspec.spec import load_spec

    return [dict(r) for r in load_spec(revision=revision).requirements.values()]


@dataclass(frozen=True)
class RequirementCoverage:
    """One requirement and what checks it."""

    id: str
    level: str
    title: str
    vectors: tuple[str, ...]
    properties: tuple[str, ...]
    observability: str | None = None
    """``"api"`` or ``"unreachable"`` when the protocol cannot observe the rule."""
    why: str = ""
    revisions: tuple[str, ...] = ()
    """The format revisions the requirement binds (spec data: `revisions` of its entry)."""

    @property
    def covered(self) -> bool:
        """A vector or a property checks it through the protocol."""
        return bool(self.vectors or self.properties)

    @property
    def accounted(self) -> bool:
        """Covered, or classified as not observable through the protocol."""
        return self.covered or self.observability is not None

    @property
    def misclassified(self) -> bool:
        """Classified as not protocol-observable although a vector or property covers it."""
        return self.covered and self.observability is not None

    @property
    def gap(self) -> bool:
        """A MUST requirement nothing accounts for (what ``--check`` fails on)."""
        return self.level == "MUST" and not self.accounted

    def to_json(self) -> dict[str, Any]:
        row: dict[str, Any] = {"id": self.id, "level": self.level, "title": self.title,
                               "revisions": list(self.revisions), "vectors": list(self.vectors),
                               "properties": list(self.properties)}
        if self.observability is not None:
            row["observability"] = {"kind": self.observability, "why": self.why}
        return row


def coverage(requirements: Sequence[Mapping[str, Any]], cases: Sequence[Case],
             properties: Mapping[str, Sequence[str]]) -> list[RequirementCoverage]:
    """Coverage of each requirement, in the order given."""
    vectors: dict[str, list[str]] = {}
    for case in cases:
        for req in case.requirements:
            vectors.setdefault(req, []).append(case.id)
    props: dict[str, list[str]] = {}
    for name, reqs in properties.items():
        for req in reqs:
            props.setdefault(req, []).append(name)
    rows = []
    for r in requirements:
        observability = r.get("observability")
        kind = observability.get("kind") if isinstance(observability, Mapping) else None
        why = observability.get("why", "") if isinstance(observability, Mapping) else ""
        rows.append(RequirementCoverage(r["id"], r.get("level", "MUST"), r.get("title", ""),
                                        tuple(vectors.get(r["id"], ())), tuple(props.get(r["id"], ())),
                                        kind, why, tuple(r.get("revisions", ()))))
    return rows
