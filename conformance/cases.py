"""Conformance cases: the model, the content-hash id and the vector-file loader.

Vectors are plain JSON (``conformance/vectors/<area>.json``, validated by
``spec/protocol/case-file.json``) so any language can read them without
Python. A case is one stateless request (``input``: an op and its args) and
what the spec says must come back (``expect``). Its ``id`` is a content hash
of the normative parts (input, expect, compare), so renaming or rewording a
case keeps its id and changing what it checks gives it a new one; the loader
rejects a file whose ids do not match their content.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from sessionspec.spec.inputs import read_text

from . import nesting, protocol, wire

__all__ = [
    "Case",
    "CaseFileError",
    "case_id",
    "checked",
    "for_revision",
    "for_sqlite_layout",
    "load_case_file",
    "load_corpus",
    "select",
    "sqlite_layouts",
    "unchecked_corpus",
    "validator_only_requirements",
    "with_id",
]

_REQ_ID = re.compile(r"^[A-Z]+-[0-9]+$")
_FAMILY = re.compile(r"^[A-Z]+$")
_HEX16 = re.compile(r"^[0-9a-f]{16}$")


class CaseFileError(ValueError):
    """A vector file cannot be used; names the file and the JSON pointer."""

    def __init__(self, path: str, pointer: str, message: str) -> None:
        super().__init__(f"{path}: {pointer or '/'}: {message}")
        self.path = path
        self.pointer = pointer
        self.message = message


@dataclass(frozen=True, slots=True)
class Case:
    """One vector: a request and the reply the spec requires."""

    id: str
    area: str
    description: str
    requirements: tuple[str, ...]
    level: str
    capability: str
    op: str
    args: Mapping[str, Any]
    expect: Mapping[str, Any]
    ignore: tuple[str, ...] = ()
    comment: str | None = None
    source: str = field(default="", compare=False)
    revisions: tuple[str, ...] | None = None
    """Format revisions the case applies to; ``None``: every revision having all its requirements."""
    sqlite_layouts: tuple[int, ...] | None = None
    """SQLite layouts (``user_version``) the case applies to; ``None``: every layout."""

    def applies_to(self, revision: str, requirement_ids: frozenset[str] | set[str]) -> bool:
        """Whether the case belongs to ``revision``, whose requirement ids are ``requirement_ids``."""
        if self.revisions is not None:
            return revision in self.revisions
        return all(r in requirement_ids for r in self.requirements)

    @property
    def needs(self) -> frozenset[str]:
        """Every capability the case needs: its own plus its op's."""
        base = protocol.OPS[self.op].capability
        big = "big-integers" if protocol.needs_big_integers(self.args) else None
        policy = "validator-policy" if self.requirements and all(
            r in validator_only_requirements() for r in self.requirements) else None
        faults = "persistence-faults" if protocol.needs_persistence_faults(self.op, self.args) else None
        return frozenset(c for c in (self.capability, base, big, policy, faults) if c)

    def to_json(self) -> dict[str, Any]:
        """The case as it appears in a vector file."""
        out: dict[str, Any] = {
            "id": self.id,
            "description": self.description,
            "requirements": list(self.requirements),
            "level": self.level,
            "capability": self.capability,
            "input": {"op": self.op, "args": self.args},
            "expect": self.expect,
        }
        if self.ignore:
            out["compare"] = {"ignore": list(self.ignore)}
        if self.comment:
            out["comment"] = self.comment
        if self.revisions is not None:
            out["revisions"] = list(self.revisions)
        if self.sqlite_layouts is not None:
            out["sqliteLayouts"] = list(self.sqlite_layouts)
        return out


@functools.cache
def validator_only_requirements() -> frozenset[str]:
    """Requirements that bind only the project's validator at some described revision (spec data: ``binds``):
    a case of nothing else needs ``validator-policy``, since no store, backend or session core is bound by it."""
    from sessionspec.spec import load_spec
    from sessionspec.spec.revisions import known_revisions

    return frozenset(r["id"] for revision in known_revisions() for r in load_spec(revision=revision).requirements.values()
                     if list(r["binds"]) == ["validator"])


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False)


_CANONICAL_MAX_DEPTH = 500


nesting_depth = nesting.nesting_depth


def case_id(case: Mapping[str, Any]) -> str:
    """The stable id of a case dict: 16 hex digits of SHA-256 over input, expect and compare."""
    normative = {"input": case["input"], "expect": case["expect"]}
    if case.get("compare"):
        normative["compare"] = case["compare"]
    # Deep payloads (DEC-16) are hashed through the protocol's iterative encoder. The
    # choice depends only on the data, never on the interpreter's recursion limit.
    if nesting_depth(normative) > _CANONICAL_MAX_DEPTH:
        text = wire.dumps({k: normative[k] for k in sorted(normative)})
    else:
        text = _canonical(normative)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def with_id(case: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of a case dict with its ``id`` (re)computed; for corpus authors."""
    out = {"id": case_id(case)}
    out.update({k: v for k, v in case.items() if k != "id"})
    return out


def _from_json(data: Mapping[str, Any], area: str, source: str) -> Case:
    compare = data.get("compare") or {}
    return Case(
        id=data["id"],
        area=area,
        description=data["description"],
        requirements=tuple(data["requirements"]),
        level=data["level"],
        capability=data["capability"],
        op=data["input"]["op"],
        args=data["input"]["args"],
        expect=data["expect"],
        ignore=tuple(compare.get("ignore", ())),
        comment=data.get("comment"),
        source=source,
        revisions=tuple(data["revisions"]) if "revisions" in data else None,
        sqlite_layouts=tuple(data["sqliteLayouts"]) if "sqliteLayouts" in data else None,
    )


def load_case_file(text: str, source: str, *, known_requirements: Iterable[str] | None = None) -> list[Case]:
    """Parse and check one vector file; raises :class:`CaseFileError` with a location."""
    try:
        data = wire.loads(text)
    except wire.WireError as exc:
        raise CaseFileError(source, "", str(exc)) from None
    if nesting.expand_text_needed(text) and isinstance(data, dict) and isinstance(data.get("cases"), list):
        try:
            data = {**data, "cases": nesting.expand(data["cases"], "/cases")}
        except nesting.NestFormError as exc:
            raise CaseFileError(source, exc.pointer, exc.message) from None
    try:
        protocol.validate(data, "case-file.json")
    except protocol.ProtocolViolation as exc:
        raise CaseFileError(source, exc.pointer, exc.message) from None
    area = data["area"]
    stem = Path(source).stem
    if stem != area:
        raise CaseFileError(source, "/area", f"area {area!r} does not match the file name {stem!r}")
    known = set(known_requirements) if known_requirements is not None else None
    seen: dict[str, int] = {}
    cases = []
    for i, raw in enumerate(data["cases"]):
        pointer = f"/cases/{i}"
        _check_id(raw, source, pointer)
        if raw["id"] in seen:
            raise CaseFileError(source, pointer, f"duplicate case: same content as /cases/{seen[raw['id']]}")
        seen[raw["id"]] = i
        cases.append(_checked_case(raw, area, source, pointer, known))
    return cases


def _check_id(raw: Any, source: str, pointer: str) -> None:
    try:
        expected_id = case_id(raw)
    except ValueError:  # an integer past the interpreter's conversion limit: a located refusal (issue 25)
        raise CaseFileError(source, pointer, "the case holds an integer of more than 4,300 digits, which its id "
                                             "cannot be computed over") from None
    if raw["id"] != expected_id:
        raise CaseFileError(
            source, pointer + "/id",
            f"id {raw['id']} does not match the content hash {expected_id} (recompute with cases.with_id)",
        )


def _checked_case(raw: Any, area: str, source: str, pointer: str, known: set[str] | None) -> Case:
    """One raw case (fitting ``case-file.json#/$defs/case``, its id checked) checked: requirements, revisions, args."""
    if known is not None:
        unknown = [r for r in raw["requirements"] if r not in known]
        if unknown:
            raise CaseFileError(source, pointer + "/requirements", f"unknown requirement id(s): {', '.join(unknown)}")
    if "revisions" in raw:
        from sessionspec.spec.revisions import UnknownRevision, resolve_revision

        for index, name in enumerate(raw["revisions"]):
            try:
                resolve_revision(name)
            except UnknownRevision as exc:
                raise CaseFileError(source, f"{pointer}/revisions/{index}", str(exc)) from None
    for index, layout in enumerate(raw.get("sqliteLayouts", ())):
        layouts = sqlite_layouts(raw.get("revisions"))
        if layout not in layouts:
            raise CaseFileError(source, f"{pointer}/sqliteLayouts/{index}",
                                f"SQLite layout {layout} is not a layout of the case's revisions "
                                f"(they have {', '.join(map(str, layouts))})")
    try:
        protocol.validate(raw["input"]["args"], f"ops/{raw['input']['op']}.json#/$defs/args")
    except protocol.ProtocolViolation as exc:
        raise CaseFileError(source, pointer + "/input/args" + exc.pointer, exc.message) from None
    return _from_json(raw, area, f"{source}#{pointer}")


def _vector_files(directory: Path | None) -> list[tuple[str, str]]:
    if directory is not None:
        found = []
        for file in sorted(directory.glob("*.json")):
            text, problem = read_text(file)
            if text is None:
                raise CaseFileError(str(file), "", str(problem).removeprefix(f"{file}: "))
            found.append((str(file), text))
        return found
    root = resources.files("sessionspec.conformance").joinpath("vectors")
    if not root.is_dir():
        return []
    files = sorted((f for f in root.iterdir() if f.name.endswith(".json")), key=lambda f: f.name)
    return [(f"conformance/vectors/{f.name}", f.read_text(encoding="utf-8")) for f in files]


def load_corpus(directory: Path | None = None, *, known_requirements: Iterable[str] | None = None) -> list[Case]:
    """Every case of the packaged corpus (or of ``directory``), in file order.

    Ids are unique across the corpus; a case listed in two files is an error.
    The packaged corpus is parsed and checked once per process.
    """
    if directory is None and known_requirements is None:
        return list(_packaged_corpus())
    return _load_corpus(directory, known_requirements)


@functools.cache
def _packaged_corpus() -> tuple[Case, ...]:
    return tuple(_load_corpus(None, None))


def _load_corpus(directory: Path | None, known_requirements: Iterable[str] | None) -> list[Case]:
    known = list(known_requirements) if known_requirements is not None else None
    cases: list[Case] = []
    where: dict[str, str] = {}
    for source, text in _vector_files(directory):
        for case in load_case_file(text, source, known_requirements=known):
            if case.id in where:
                raise CaseFileError(source, "", f"case {case.id} also appears at {where[case.id]}")
            where[case.id] = case.source
            cases.append(case)
    return cases


def unchecked_corpus() -> list[Case]:
    """The packaged corpus read as plain JSON, without its schema checks (a tenth of a second, not seconds).

    For a command that uses a handful of cases (``smoke``): it picks among these, then passes each
    pick through :func:`checked`. A file that does not even read as cases is loaded the checked
    way, so its problem is reported with its location.
    """
    out: list[Case] = []
    for source, text in _vector_files(None):
        try:
            data = wire.loads(text)
            if nesting.expand_text_needed(text):
                data = {**data, "cases": nesting.expand(data["cases"], "/cases")}
            area = data["area"]
            if area != Path(source).stem:
                raise ValueError(area)
            out += [_from_json(raw, area, f"{source}#/cases/{i}") for i, raw in enumerate(data["cases"])]
        except (wire.WireError, nesting.NestFormError, KeyError, TypeError, ValueError, AttributeError):
            out += load_case_file(text, source)
    return out


def checked(case: Case) -> Case:
    """A case of :func:`unchecked_corpus` with every check :func:`load_case_file` makes of it (but
    uniqueness across the corpus, which the corpus tests keep); raises :class:`CaseFileError`."""
    source, _, pointer = case.source.partition("#")
    name = Path(source).name
    text = resources.files("sessionspec.conformance").joinpath("vectors").joinpath(name).read_text(encoding="utf-8")
    raw = wire.loads(text)["cases"][int(pointer.rpartition("/")[2])]  # as read by unchecked_corpus
    if nesting.expand_text_needed(text):
        try:
            raw = nesting.expand(raw, pointer)
        except nesting.NestFormError as exc:
            raise CaseFileError(source, exc.pointer, exc.message) from None
    try:
        protocol.validate(raw, "case-file.json#/$defs/case")
    except protocol.ProtocolViolation as exc:
        raise CaseFileError(source, pointer + exc.pointer, exc.message) from None
    _check_id(raw, source, pointer)
    return _checked_case(raw, case.area, source, pointer, None)


# A capability exists at a revision only while the rule family it implements does.
_CAPABILITY_RULES = {"out-of-band": "OOB-1", "oob-admission": "OOB-1", "find-last-message-turn-end": "FIND-1"}


def for_revision(cases: Sequence[Case], revision: str | None = None) -> list[Case]:
    """The cases of one format revision (default: the pinned one); unknown ids raise `UnknownRevision`.

    A case applies when it names the revision, or names none and the revision has all its
    requirements and every capability it needs (out-of-band appends, for one, are retired later).
    """
    from sessionspec.spec import load_spec

    spec = load_spec(revision=revision)
    ids = frozenset(spec.requirements)
    absent = {cap for cap, rule in _CAPABILITY_RULES.items() if rule not in ids}
    return [c for c in cases if c.applies_to(spec.revision.id, ids) and (c.revisions or not c.needs & absent)]


def sqlite_layouts(revisions: Iterable[str] | None = None) -> list[int]:
    """The SQLite layouts (``user_version``) of some revisions (default: every known one), each revision's own first."""
    from sessionspec.reference.sqlite_store import layouts_for
    from sessionspec.spec.revisions import known_revisions

    out: list[int] = []
    for revision in known_revisions() if revisions is None else revisions:
        out += [layout.user_version for layout in layouts_for(revision) if layout.user_version not in out]
    return out


def for_sqlite_layout(cases: Sequence[Case], layout: int) -> list[Case]:
    """The cases that apply to an implementation whose SQLite backend has ``layout`` (a case without
    ``sqliteLayouts`` applies to every layout)."""
    return [c for c in cases if c.sqlite_layouts is None or layout in c.sqlite_layouts]


def select(cases: Sequence[Case], only: Sequence[str] | None) -> list[Case]:
    """Cases matching any selector: an area, a requirement id (``SURF-5``), a
    requirement family (``SURF``) or a case id. Unknown selectors raise ``ValueError``."""
    if not only:
        return list(cases)
    chosen: list[Case] = []
    for selector in only:
        if _REQ_ID.match(selector):
            hits = [c for c in cases if selector in c.requirements]
        elif _FAMILY.match(selector):
            hits = [c for c in cases if any(r.split("-")[0] == selector for r in c.requirements)]
        elif _HEX16.match(selector):
            hits = [c for c in cases if c.id == selector]
        else:
            hits = [c for c in cases if c.area == selector]
        if not hits:
            raise ValueError(f"--only {selector}: no case matches (an area, a requirement id, a family or a case id)")
        chosen.extend(hits)
    unique = {c.id: c for c in chosen}
    return [c for c in cases if c.id in unique]
