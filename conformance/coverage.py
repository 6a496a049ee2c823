"""Which vectors and properties cover which requirement (``sessionspec requirements``)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any

from .cases import Case

__all__ = ["RequirementCoverage", "coverage", "load_requirements"]


def load_requirements() -> list[dict[str, Any]]:
    """Every requirement of the spec (``spec/requirements.json``), in spec order."""
    import sessionspec.spec as spec

    loader = getattr(spec, "requirements", None)
    if callable(loader):
        found = loader()
        return [dict(r) for r in (found.values() if isinstance(found, Mapping) else found)]
    text = resources.files("sessionspec.spec").joinpath("requirements.json").read_text(encoding="utf-8")
    return list(json.loads(text)["requirements"])


@dataclass(frozen=True)
class RequirementCoverage:
    """One requirement and what checks it."""

    id: str
    level: str
    title: str
    vectors: tuple[str, ...]
    properties: tuple[str, ...]

    @property
    def covered(self) -> bool:
        return bool(self.vectors or self.properties)

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "level": self.level, "title": self.title,
                "vectors": list(self.vectors), "properties": list(self.properties)}


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
    return [
        RequirementCoverage(r["id"], r.get("level", "MUST"), r.get("title", ""),
                            tuple(vectors.get(r["id"], ())), tuple(props.get(r["id"], ())))
        for r in requirements
    ]
