"""Format revisions: which ones exist, and how a child revision's changes resolve onto its parent.

``spec/revisions.json`` lists the revisions of the dsh-session format the spec
describes. The pinned revision (the default) is the spec as stored in
``events/``, ``schemas/``, ``constants.json`` and ``requirements.json``. A later
revision names its parent and a directory holding only what it changes
(``changes.json`` plus ``events/`` and ``schemas/`` for what it adds), so a rule
or schema equal in both revisions is written once. Like JSON Schema drafts, a
revision is chosen explicitly; the loader resolves the chain.

``changes.json`` (checked against ``schemas/meta/revision-changes.json``):

* ``constants``: an RFC 7396 merge patch on ``constants.json``;
* ``schemas``: ``{$id: merge patch}`` for schemas that change (new ``$id``\\ s are
  files under the revision's ``schemas/``);
* ``events``: ``removed`` (type -> why), ``renamed`` (old type -> ``{to, patch}``),
  ``changed`` (type -> merge patch on the registry entry); added types are
  registry files under the revision's ``events/``;
* ``requirements`` / ``decisions``: ``retired`` (id -> why), ``changed``
  (id -> merge patch), ``added`` (full entries);
* ``sqlite``: the SQLite layout's changes (`apply_sqlite_changes`): scalar keys
  and ``rowCodec`` by merge patch, table columns keyed by name; ``publishedLayouts``
  adds the layouts published releases write besides the revision's own.
"""

from __future__ import annotations

import copy
import functools
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, cast

from sessionspec.spec.error_codes import ErrorCode
from sessionspec.spec.errors import SessionSpecError
from sessionspec.spec.package_files import spec_root

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

__all__ = [
    "DEFAULT_REVISION",
    "Revision",
    "UnknownRevision",
    "apply_sqlite_changes",
    "known_revisions",
    "merge_patch",
    "resolve_revision",
    "revision_chain",
]


class UnknownRevision(SessionSpecError):
    """A revision id (or release) the spec does not describe; the message lists the known ones."""

    default_code: ClassVar[ErrorCode | None] = "SPEC_UNKNOWN_REVISION"

    def __init__(self, name: object) -> None:
        self.name = name
        known = ", ".join(known_revisions())
        releases = ", ".join(sorted(_release_index()))
        super().__init__(f"unknown spec revision {name!r}; known revisions: {known} (releases: {releases})")


@dataclass(frozen=True)
class Revision:
    """One described revision of the format (an entry of ``spec/revisions.json``)."""

    id: str
    title: str
    date: str
    parent: str | None
    source: str
    releases: tuple[str, ...] = ()
    notes: str = ""
    changes: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def is_default(self) -> bool:
        return self.id == DEFAULT_REVISION

    def root(self) -> Traversable | None:
        """The directory with this revision's added events and schemas (``None`` for the base)."""
        if self.parent is None:
            return None
        return _spec_root().joinpath("revisions", self.id)


def _spec_root() -> Traversable:
    return spec_root()


@functools.cache
def _index() -> dict[str, Any]:
    return cast("dict[str, Any]", json.loads(_spec_root().joinpath("revisions.json").read_text(encoding="utf-8")))


@functools.cache
def _revisions() -> dict[str, Revision]:
    out: dict[str, Revision] = {}
    for rid, entry in _index()["revisions"].items():
        changes: dict[str, Any] = {}
        if entry.get("parent") is not None:
            text = _spec_root().joinpath("revisions", rid, "changes.json").read_text(encoding="utf-8")
            changes = json.loads(text)
        out[rid] = Revision(
            id=rid,
            title=entry["title"],
            date=entry["date"],
            parent=entry.get("parent"),
            source=entry["source"],
            releases=tuple(entry.get("releases", ())),
            notes=entry.get("notes", ""),
            changes=changes,
        )
    return out


@functools.cache
def _release_index() -> dict[str, str]:
    return {release: rid for rid, rev in _revisions().items() for release in rev.releases}


DEFAULT_REVISION: str = _index()["default"]


def known_revisions() -> tuple[str, ...]:
    """Revision ids, the default first, then in declaration order."""
    ids = list(_revisions())
    ids.remove(DEFAULT_REVISION)
    return (DEFAULT_REVISION, *ids)


def resolve_revision(name: str | Revision | None = None) -> Revision:
    """The revision named by an id, a commit name of 7 to 40 hex digits it abbreviates or that abbreviates it
    (``b150a551`` or the full sha), or a published release.

    ``None`` is the default (pinned) revision. Raises `UnknownRevision`.
    """
    if isinstance(name, Revision):
        return name
    revisions = _revisions()
    if name is None:
        return revisions[DEFAULT_REVISION]
    if not isinstance(name, str):
        raise UnknownRevision(name)
    key = name.strip()
    if key in revisions:
        return revisions[key]
    release = _release_index().get(key.removeprefix("@deepseek-ai/dsh-session@"))
    if release is not None:
        return revisions[release]
    if _COMMIT_NAME.fullmatch(key):
        # A commit name: an abbreviation of a revision id, or a longer one (the full sha) it abbreviates.
        key = key.lower()
        matches = [r for rid, r in revisions.items() if rid.startswith(key) or key.startswith(rid)]
        if len(matches) == 1:
            return matches[0]
    raise UnknownRevision(name)


_COMMIT_NAME = re.compile(r"[0-9a-fA-F]{7,40}")


def revision_chain(name: str | Revision | None = None) -> tuple[Revision, ...]:
    """The base revision first, then each child down to ``name``."""
    chain = [resolve_revision(name)]
    while chain[-1].parent is not None:
        chain.append(resolve_revision(chain[-1].parent))
    return tuple(reversed(chain))


# ---------------------------------------------------------------- resolution helpers


#: The types `copy.deepcopy` returns as they are, of those a JSON value holds.
_ATOMIC: frozenset[type] = frozenset({str, int, float, bool, type(None)})


def _copied(value: Any, memo: dict[int, Any] | None = None) -> Any:
    """``copy.deepcopy(value)``, the same copy (a member shared within ``value`` stays shared in the copy), made
    without `copy`'s dispatch for the dicts, lists and scalars of JSON data (what the loader copies: #24); any other
    object is copied by `copy.deepcopy` itself, with the same memo."""
    cls = type(value)
    if cls in _ATOMIC:
        return value
    if memo is None:
        memo = {}
    if cls is dict:
        out: Any = memo.get(id(value))
        if out is None:
            out = memo[id(value)] = {}
            for key, member in value.items():
                out[key if type(key) is str else _copied(key, memo)] = _copied(member, memo)
        return out
    if cls is list:
        out = memo.get(id(value))
        if out is None:
            out = memo[id(value)] = []
            append = out.append
            for member in value:
                append(_copied(member, memo))
        return out
    return copy.deepcopy(value, memo)


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7396 JSON merge patch: a new value, neither argument modified (the target copied once, then patched)."""
    return merge_patch_owned(_copied(target), patch)


def merge_patch_owned(target: Any, patch: Any) -> Any:
    """`merge_patch` of a `target` that the caller owns and drops: its members are changed where they are (the
    target's members in its order, the patch's new ones after them), only what comes from `patch` is copied (#24:
    the loader's freshly read schemas)."""
    if not isinstance(patch, dict):
        return _copied(patch)
    if not isinstance(target, dict):
        target = {}
    for key, value in patch.items():
        if value is None:
            target.pop(key, None)
        else:
            target[key] = merge_patch_owned(target.get(key), value)
    return target


def apply_id_changes(
    entries: Mapping[str, dict[str, Any]],
    changes: Mapping[str, Any],
    *,
    where: str,
    error: Any,
    key: str = "id",
) -> dict[str, dict[str, Any]]:
    """Apply ``retired`` / ``changed`` / ``added`` to entries keyed by ``key`` (requirements, decisions, codes)."""
    out = dict(entries)
    for rid in changes.get("retired", {}):
        if rid not in out:
            raise error(f"{where}: retires {rid!r}, which the parent revision does not have")
        del out[rid]
    for rid, patch in changes.get("changed", {}).items():
        if rid not in out:
            raise error(f"{where}: changes {rid!r}, which the parent revision does not have")
        out[rid] = merge_patch(out[rid], patch)
    for entry in changes.get("added", ()):
        if entry[key] in out:
            raise error(f"{where}: adds {entry[key]!r}, which the parent revision already has")
        out[entry[key]] = entry
    return out


def apply_sqlite_changes(layout: Mapping[str, Any], changes: Mapping[str, Any], *, where: str, error: Any
                         ) -> dict[str, Any]:
    """The parent's SQLite layout (``constants.json`` ``sqlite``) with a revision's ``sqlite`` changes applied.

    Columns are keyed by name (``added`` entries name the column they follow,
    ``changed`` merge-patches one, ``removed`` drops one), so a column equal
    in both revisions is written once; every other key is a merge patch.
    ``publishedLayouts`` (layouts published releases write besides the
    revision's own, each with ``writtenBy``) are changes on the parent's
    layout too, resolved into whole layouts under the same key; ``base``
    states the revision's own layout on one of them instead of the parent's.
    """
    parent = {k: v for k, v in layout.items() if k != "publishedLayouts"}
    published = []
    for index, entry in enumerate(changes.get("publishedLayouts", ())):
        resolved = _apply_layout(parent, {k: v for k, v in entry.items() if k != "writtenBy"},
                                 where=f"{where}/publishedLayouts/{index}", error=error)
        published.append({**resolved, "writtenBy": entry["writtenBy"]})
    versions = [parent["userVersion"], *(p["userVersion"] for p in published)]
    base = parent
    if "base" in changes:
        found = [p for p in published if p["userVersion"] == changes["base"]]
        if not found:
            raise error(f"{where}/base: no published layout has userVersion {changes['base']}")
        base = {k: v for k, v in found[0].items() if k != "writtenBy"}
    own = _apply_layout(base, {k: v for k, v in changes.items() if k not in ("publishedLayouts", "base")},
                        where=where, error=error)
    if len(set(versions)) != len(versions) or own["userVersion"] in versions[1:]:
        raise error(f"{where}: two layouts share a userVersion ({', '.join(map(str, versions))}, "
                    f"own {own['userVersion']})")
    if published:
        own["publishedLayouts"] = published
    return own


def _apply_layout(layout: Mapping[str, Any], changes: Mapping[str, Any], *, where: str, error: Any) -> dict[str, Any]:
    out: dict[str, Any] = merge_patch(layout, {k: v for k, v in changes.items() if k != "tables"})
    tables = {t["name"]: t for t in out["tables"]}
    for name, change in changes.get("tables", {}).items():
        if name not in tables:
            raise error(f"{where}: changes SQLite table {name!r}, which the parent revision does not have")
        table = dict(tables[name], **{k: v for k, v in change.items() if k != "columns"})
        columns = [dict(c) for c in table["columns"]]
        cols = change.get("columns", {})
        for col in cols.get("removed", {}):
            if col not in {c["name"] for c in columns}:
                raise error(f"{where}: removes column {name}.{col}, which the parent revision does not have")
            columns = [c for c in columns if c["name"] != col]
        for col, patch in cols.get("changed", {}).items():
            at = [i for i, c in enumerate(columns) if c["name"] == col]
            if not at:
                raise error(f"{where}: changes column {name}.{col}, which the parent revision does not have")
            columns[at[0]] = merge_patch(columns[at[0]], patch)
        for added in cols.get("added", ()):
            names = [c["name"] for c in columns]
            if added["name"] in names or added["after"] not in names:
                raise error(f"{where}: adds column {name}.{added['name']} after {added['after']!r}, "
                            "which clashes with or is missing from the parent revision")
            columns.insert(names.index(added["after"]) + 1, {k: v for k, v in added.items() if k != "after"})
        table["columns"] = columns
        tables[name] = table
    out["tables"] = [tables[t["name"]] for t in out["tables"]]
    return out


@functools.cache
def requirement_revisions() -> dict[str, tuple[str, ...]]:
    """Requirement id -> the revisions that have it, default first (from the data alone)."""
    doc = json.loads(_spec_root().joinpath("requirements.json").read_text(encoding="utf-8"))
    base = {r["id"] for r in doc["requirements"]}
    out: dict[str, list[str]] = {}
    for rid in known_revisions():
        ids = set(base)
        for rev in revision_chain(rid)[1:]:
            changes = rev.changes.get("requirements", {})
            ids -= set(changes.get("retired", {}))
            ids |= {e["id"] for e in changes.get("added", ())}
        for req in ids:
            out.setdefault(req, []).append(rid)
    return {k: tuple(v) for k, v in out.items()}
