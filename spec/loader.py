"""Load the event registry and JSON Schemas into one `Spec`, core plus plugin registries.

A *registry source* is a directory with ``events/*.json`` (files in the format
of ``schemas/meta/event-registry.json``) and ``schemas/**/*.json`` (JSON Schemas,
each with a ``$id``). The core source is this package's own data; plugin
sources come from ``extra_dirs`` or the ``sessionspec.registries`` entry-point
group. Everything resolves through one offline ``referencing.Registry``: no
``$ref`` can reach the network.

Why plugin data is checked harder than core data: the core files are checked
by the test suite (tests/spec), so loading them stays cheap for every CLI call;
a plugin author gets a located error at load time instead.
"""

from __future__ import annotations

import functools
import json
import os
import urllib.parse
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final, cast

import orjson
from sessionspec.spec import revisions as _revisions
from sessionspec.spec.error_codes import ErrorCode
from sessionspec.spec.errors import SessionSpecError
from sessionspec.spec.inputs import read_text
from sessionspec.spec.package_files import spec_root

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

SCHEMA_BASE = "https://sessionspec.dev/schema/"
ENVELOPE_ID = SCHEMA_BASE + "envelope/session-event.json"
REGISTRY_META_ID = SCHEMA_BASE + "meta/event-registry.json"
REVISION_CHANGES_META_ID = SCHEMA_BASE + "meta/revision-changes.json"
OPENNESS_META_ID = SCHEMA_BASE + "meta/openness.json"
SERVICE_EVENTS_META_ID = SCHEMA_BASE + "meta/service-events.json"
ENTRY_POINT_GROUP = "sessionspec.registries"
CORE = "core"
REGISTRY_ERROR_CODE: Final[ErrorCode] = "SPEC_REGISTRY_INVALID"
PATTERN_ERROR_CODE: Final[ErrorCode] = "SPEC_REGISTRY_PATTERN_UNSAFE"

# Types whose owner may never admit them to appendOutOfBand (DEC-8, OOB-1).
_NEVER_OUT_OF_BAND_NAMESPACES = ("turn/", "step/")


def registry_error(message: str, *, path: str | None = None) -> Exception:
    """The error for a broken registry source: a `SessionSpecError` with a stable code."""
    return SessionSpecError(message, REGISTRY_ERROR_CODE, path=path)


def json_pointer(parts: Iterable[object]) -> str:
    """RFC 6901 pointer for keys and indexes ('' is the whole value).

    The one pointer builder of the project: schema error paths, reference
    rejections, conformance diffs and lint anomalies all locate values with it.
    """
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def schema_refs(schema: Any, base: str) -> Iterator[tuple[str, str, str]]:
    """``(pointer, $ref, absolute target)`` of every ``$ref`` in ``schema`` (iterative; ``$id`` changes the base)."""
    stack: list[tuple[Any, tuple[Any, ...], str]] = [(schema, (), base)]
    while stack:
        node, path, here = stack.pop()
        if isinstance(node, dict):
            if isinstance(node.get("$id"), str):
                here = urllib.parse.urljoin(here, node["$id"])
            ref = node.get("$ref")
            if isinstance(ref, str):
                yield json_pointer((*path, "$ref")), ref, urllib.parse.urljoin(here, ref)
            stack.extend((v, (*path, k), here) for k, v in node.items() if k not in ("const", "enum", "examples", "default"))
        elif isinstance(node, list):
            stack.extend((v, (*path, i), here) for i, v in enumerate(node))


#: `bytes.translate` table: a digit stays a digit ("0"), any other byte becomes a space; a run of 19 digits or more
#: (where orjson reads an integer out of the 64-bit range as a float, and json gives the integer) is then a run of 19
#: "0"s, which `in` finds ten times faster than a regex search for it
_DIGITS = bytes(0x30 if 0x30 <= byte <= 0x39 else 0x20 for byte in range(256))
_LONG_DIGITS = b"0" * 19


def _loads_package_file(data: bytes) -> Any:
    """`json.loads` of a package file's UTF-8 bytes: orjson's reading (half the time of json's, for the two
    revisions' ~180 files each validate process reads, #24) where it gives the same value, else json's, which raises
    what it raises. orjson refuses what it reads otherwise (a byte order mark, NaN, a lone surrogate, a float out of
    range, nesting past 1024) and reads every text it accepts as json does, except an integer of 19 digits or more
    out of the 64-bit range, which it reads as a float: a file holding such a run of digits is read by json."""
    if _LONG_DIGITS not in data.translate(_DIGITS):
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError:
            pass
    return json.loads(data.decode("utf-8"))


class Source:
    """One registry directory: a label for messages plus its root."""

    def __init__(self, label: str, root: Traversable, *, trusted: bool) -> None:
        self.label = label
        self.root = root
        self.trusted = trusted

    def json_files(self, sub: str) -> Iterator[tuple[str, Any]]:
        """``(relative path, parsed JSON)`` for every ``*.json`` under ``sub``, sorted by path."""
        base = self.root.joinpath(sub)
        if self.trusted and isinstance(base, Path):  # the package's own files, on disk: read as plain files (#24)
            yield from self._package_files(sub, base)
            return
        if not base.is_dir():
            return
        found: list[tuple[str, Traversable]] = []
        pending: list[tuple[str, Traversable]] = [(sub, base)]
        while pending:
            rel, node = pending.pop()
            for child in node.iterdir():
                child_rel = f"{rel}/{child.name}"
                if child.is_dir():
                    if isinstance(child, os.PathLike) and os.path.islink(child):
                        continue  # a symlinked folder is not entered: no loops, no file read twice
                    pending.append((child_rel, child))
                elif child.name.endswith(".json"):
                    found.append((child_rel, child))
        for rel, file in sorted(found, key=lambda item: item[0]):
            yield rel, self._parse(rel, file)

    def _package_files(self, sub: str, base: Path) -> Iterator[tuple[str, Any]]:
        """`json_files` of a trusted folder on disk: the same files in the same order (a symlinked folder not
        entered) and the same values, walked with `os.scandir` and read as plain files (no `pathlib` object per
        file); a file that does not read or parse goes the general way, which raises its error."""
        if not base.is_dir():
            return
        found: list[tuple[str, str]] = []
        pending: list[tuple[str, str]] = [(sub, os.fspath(base))]
        while pending:
            rel, folder = pending.pop()
            with os.scandir(folder) as entries:
                for entry in entries:
                    child_rel = f"{rel}/{entry.name}"
                    if entry.is_dir():
                        if not entry.is_symlink():  # a symlinked folder is not entered: no loops, no file read twice
                            pending.append((child_rel, entry.path))
                    elif entry.name.endswith(".json"):
                        found.append((child_rel, entry.path))
        for rel, path in sorted(found, key=lambda item: item[0]):
            try:
                with open(path, "rb") as handle:
                    value = _loads_package_file(handle.read())
            except (OSError, ValueError, RecursionError):  # the general way says what is wrong, in its words
                value = self._parse(rel, Path(path))
            yield rel, value

    def _parse(self, rel: str, file: Traversable) -> Any:
        where = f"{self.label}/{rel}"
        if not self.trusted and isinstance(file, os.PathLike):  # a folder on disk: bounded, like any input
            text, problem = read_text(file)
            if text is None:
                raise registry_error(f"{where}: cannot read: {str(problem).removeprefix(os.fspath(file) + ': ')}")
        else:
            try:
                text = file.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise registry_error(f"{where}: cannot read: {exc}") from exc
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise registry_error(f"{where}: not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from exc
        except RecursionError:  # no registry file nests deeper than a few dozen levels
            raise registry_error(f"{where}: nested too deeply to be a registry file") from None
        except ValueError as exc:  # an integer of more digits than Python converts (sys.get_int_max_str_digits)
            raise registry_error(f"{where}: not a usable JSON number: {str(exc).split(';')[0]}") from None


class Spec:
    """The loaded specification: registry entries, schemas and the data files around them.

    ``revision`` is the format revision described (`spec/revisions.json`); its
    chain's changes are applied on top of the core data, before any plugin
    source. Treat everything it returns as read-only; default instances are shared.
    """

    def __init__(self, sources: list[Source], revision: str | _revisions.Revision | None = None) -> None:
        self.revision: _revisions.Revision = _revisions.resolve_revision(revision)
        chain = _revisions.revision_chain(self.revision)[1:]
        self._chain = chain
        core, plugins = sources[:1], sources[1:]
        overlays = [Source(f"revision {r.id}", r.root(), trusted=True) for r in chain]  # type: ignore[arg-type]
        sources = [*core, *overlays, *plugins]
        self._sources = sources
        self._validators: dict[str, Any] = {}
        schemas: dict[str, dict[str, Any]] = {}
        schema_files: dict[str, str] = {}
        schema_sources: dict[str, str] = {}
        for source in sources:
            for rel, doc in source.json_files("schemas"):
                where = f"{source.label}/{rel}"
                if not isinstance(doc, dict) or not isinstance(doc.get("$id"), str):
                    raise registry_error(f"{where}: a schema file must be an object with a string $id")
                schema_id = doc["$id"]
                if schema_id in schemas:
                    raise registry_error(
                        f"{where}: duplicate schema $id {schema_id!r} (already defined in {schema_files[schema_id]})"
                    )
                if not source.trusted:
                    _check_schema(doc, where)
                schemas[schema_id] = doc
                schema_files[schema_id] = where
                schema_sources[schema_id] = source.label
        for rev in chain:
            for schema_id, patch in rev.changes.get("schemas", {}).items():
                if schema_id not in schemas:
                    raise registry_error(f"revision {rev.id}: patches schema {schema_id!r}, which is not loaded")
                # (each schema document was read for this spec alone: patched where it is)
                schemas[schema_id] = _revisions.merge_patch_owned(schemas[schema_id], patch)
                schema_files[schema_id] += f" (patched by revision {rev.id})"
        self.schemas: Mapping[str, dict[str, Any]] = MappingProxyType(schemas)
        self.schema_files: Mapping[str, str] = MappingProxyType(schema_files)
        self.schema_sources: Mapping[str, str] = MappingProxyType(schema_sources)

        events: dict[str, dict[str, Any]] = {}
        event_sources: dict[str, str] = {}
        event_places: dict[str, str] = {}
        overlay_of = dict(zip((s.label for s in overlays), chain))
        for source in sources:
            rev = overlay_of.get(source.label)  # type: ignore[assignment]
            if rev is not None:
                self._apply_event_changes(rev, events, event_sources)
            for rel, doc in source.json_files("events"):
                where = f"{source.label}/{rel}"
                if not source.trusted:
                    self._check_against(REGISTRY_META_ID, doc, where)
                for index, entry in enumerate(doc["events"]):
                    self._admit_entry(entry, source, rel, f"{where}#/events/{index}", events, event_sources)
                    event_places[entry["type"]] = f"{where}#/events/{index}"
        retired = self._retired_requirements
        if retired:
            for event_type, entry in list(events.items()):
                if any(r in retired for r in entry.get("requirements", ())):
                    events[event_type] = {**entry, "requirements": [r for r in entry["requirements"] if r not in retired]}
        self.events: Mapping[str, dict[str, Any]] = MappingProxyType(dict(sorted(events.items())))
        self.event_sources: Mapping[str, str] = MappingProxyType(dict(sorted(event_sources.items())))
        #: where a registry file defines each type: ``label/events/NS.json#/events/INDEX`` (a revision's change or
        #: rename of an entry leaves its place)
        self.event_places: Mapping[str, str] = MappingProxyType({t: event_places[t] for t in events if t in event_places})
        self.surface_types: frozenset[str] = frozenset(t for t, e in events.items() if e["class"] == "surface")
        self.out_of_band_types: frozenset[str] = frozenset(t for t, e in events.items() if e["outOfBand"])
        if plugins:
            self._check_plugin_refs({source.label for source in plugins})

    # -- loading helpers ---------------------------------------------------------------

    def _check_plugin_refs(self, plugin: set[str]) -> None:
        """A plugin schema's ``$id`` is absolute and outside the core's space, and each of its ``$ref``s resolves
        offline to a loaded schema: else a located refusal for every command that loads the registry (nothing is
        ever retrieved: no file, no network)."""
        ours = {schema_id: doc for schema_id, doc in self.schemas.items() if self.schema_sources.get(schema_id) in plugin}
        for schema_id in ours:
            parsed = urllib.parse.urlsplit(schema_id)
            if not parsed.scheme or not parsed.netloc:
                raise registry_error(f"{self.schema_files[schema_id]}#/$id: $id {schema_id!r} is not an absolute URI",
                                     path="/$id")
            if schema_id.startswith(SCHEMA_BASE):
                raise registry_error(f"{self.schema_files[schema_id]}#/$id: $id {schema_id!r} is in the core's space "
                                     f"({SCHEMA_BASE}); a plugin's schemas need an $id of its own domain", path="/$id")
        resolver = self.registry.resolver()
        for schema_id, doc in ours.items():
            for pointer, ref, target in schema_refs(doc, schema_id):
                try:
                    resolver.lookup(target)
                except Exception as exc:  # noqa: BLE001 - referencing raises several unresolvable kinds
                    raise registry_error(f"{self.schema_files[schema_id]}#{pointer}: $ref {ref!r} resolves to "
                                         f"nothing loaded ({type(exc).__name__})", path=pointer) from None

    def _apply_event_changes(
        self, rev: _revisions.Revision, events: dict[str, dict[str, Any]], event_sources: dict[str, str]
    ) -> None:
        """A revision's removed, renamed and changed registry entries (added ones are its events/ files). Each entry
        was read for this spec alone (its source's file, or an earlier revision's change of one): patched where it is."""
        changes = rev.changes.get("events", {})
        where = f"revision {rev.id}/changes.json#/events"
        for event_type in changes.get("removed", {}):
            if event_type not in events:
                raise registry_error(f"{where}/removed: {event_type!r} is not registered in the parent revision")
            del events[event_type]
            del event_sources[event_type]
        for event_type, rename in changes.get("renamed", {}).items():
            if event_type not in events:
                raise registry_error(f"{where}/renamed: {event_type!r} is not registered in the parent revision")
            entry = _revisions.merge_patch_owned(events.pop(event_type), rename.get("patch", {}))
            entry["type"] = rename["to"]
            entry["renamedFrom"] = event_type
            del event_sources[event_type]
            events[rename["to"]] = entry
            event_sources[rename["to"]] = f"revision {rev.id}"
        for event_type, patch in changes.get("changed", {}).items():
            if event_type not in events:
                raise registry_error(f"{where}/changed: {event_type!r} is not registered in the parent revision")
            events[event_type] = _revisions.merge_patch_owned(events[event_type], patch)
        for event_type, entry in events.items():
            if entry["payloadSchema"] not in self.schemas:
                raise registry_error(f"{where}: {event_type!r} names payloadSchema {entry['payloadSchema']!r}, not loaded")

    @functools.cached_property
    def _retired_requirements(self) -> frozenset[str]:
        return frozenset(r for rev in self._chain for r in rev.changes.get("requirements", {}).get("retired", {}))

    def _resolved(self, base: Mapping[str, dict[str, Any]], section: str, key: str = "id") -> dict[str, dict[str, Any]]:
        out = dict(base)
        for rev in self._chain:
            out = _revisions.apply_id_changes(
                out, rev.changes.get(section, {}), where=f"revision {rev.id}/changes.json#/{section}",
                error=registry_error, key=key,
            )
        return out

    def _admit_entry(
        self,
        entry: dict[str, Any],
        source: Source,
        rel: str,
        where: str,
        events: dict[str, dict[str, Any]],
        event_sources: dict[str, str],
    ) -> None:
        event_type = entry["type"]
        namespace = event_type.split("/", 1)[0]
        stem = rel.rsplit("/", 1)[-1].removesuffix(".json")
        if stem != namespace:
            raise registry_error(f"{where}: {event_type!r} belongs in events/{namespace}.json, not events/{stem}.json")
        if event_type in events:
            raise registry_error(
                f"{where}: duplicate event type {event_type!r} (already registered by {event_sources[event_type]})"
            )
        if entry["payloadSchema"] not in self.schemas:
            raise registry_error(f"{where}: payloadSchema {entry['payloadSchema']!r} is not the $id of any loaded schema")
        if not source.trusted and entry["class"] == "surface":
            raise registry_error(
                f"{where}: {event_type!r} cannot be a surface type: the surface set is closed to exactly four core types (SURF-1)"
            )
        if entry["outOfBand"] and (entry["class"] == "surface" or event_type.startswith(_NEVER_OUT_OF_BAND_NAMESPACES)):
            raise registry_error(f"{where}: {event_type!r} can never be admitted out of band (OOB-1, DEC-8)")
        events[event_type] = entry
        event_sources[event_type] = source.label

    def _check_against(self, schema_id: str, doc: Any, where: str) -> None:
        errors = sorted(self.validator(schema_id).iter_errors(doc), key=lambda e: list(map(str, e.absolute_path)))
        if errors:
            first = errors[0]
            pointer = json_pointer(first.absolute_path)
            raise registry_error(f"{where}#{pointer}: {first.message}", path=pointer or "/")

    # -- schemas and validation ------------------------------------------------------------

    @functools.cached_property
    def registry(self) -> Any:
        """An offline `referencing.Registry` holding every loaded schema by `$id` (no retrieval)."""
        from referencing import Registry
        from referencing.jsonschema import DRAFT202012

        registry: Any = Registry().with_resources(
            (schema_id, DRAFT202012.create_resource(doc)) for schema_id, doc in self.schemas.items()
        )
        return registry.crawl()

    def validator(self, schema_id: str) -> Any:
        """A `Draft202012Validator` for the schema with this `$id` (a ``#`` fragment is allowed)."""
        cached = self._validators.get(schema_id)
        if cached is None:
            from jsonschema import Draft202012Validator

            base = schema_id.split("#", 1)[0]
            if base not in self.schemas:
                raise KeyError(f"no loaded schema has $id {base!r}")
            schema = self.schemas[base] if base == schema_id else {"$ref": schema_id}
            cached = self._validators[schema_id] = Draft202012Validator(schema, registry=self.registry)
        return cached

    @functools.cached_property
    def event_schema(self) -> dict[str, Any]:
        """The envelope plus, per registered type, its payload schema under ``data``."""
        branches: list[dict[str, Any]] = [{"$ref": ENVELOPE_ID}]
        for event_type, entry in self.events.items():
            branches.append(
                {
                    "if": {"type": "object", "properties": {"type": {"const": event_type}}, "required": ["type"]},
                    "then": {"properties": {"data": {"$ref": entry["payloadSchema"]}}},
                }
            )
        return {"$schema": "https://json-schema.org/draft/2020-12/schema", "allOf": branches}

    def event_validator(self) -> Any:
        """A validator for whole events: envelope, then the payload of a registered type (unknown types: envelope only)."""
        return self._event_validator

    @functools.cached_property
    def _event_validator(self) -> Any:
        from jsonschema import Draft202012Validator

        return Draft202012Validator(self.event_schema, registry=self.registry)

    # -- other data files --------------------------------------------------------------------

    @functools.cached_property
    def openness(self) -> tuple[dict[str, Any], ...]:
        """Which parts of the format are open or closed, and why (``spec/openness.json``); a subject's
        ``schemasOf: registeredPayloads`` is completed here with this spec's payload schemas (facts once)."""
        subjects = []
        for subject in _core_json("openness.json")["subjects"]:
            if subject.get("schemasOf") == "registeredPayloads":
                payloads = [entry["payloadSchema"] for entry in self.events.values()]
                subject = {**subject, "schemas": list(dict.fromkeys([*subject["schemas"], *payloads]))}
            subjects.append(subject)
        return tuple(subjects)

    @functools.cached_property
    def service_events(self) -> dict[str, Any]:
        """The four live service events with their guarantees (``spec/service-events.json``)."""
        return cast("dict[str, Any]", _core_json("service-events.json"))

    @functools.cached_property
    def requirements(self) -> Mapping[str, dict[str, Any]]:
        """Requirement id -> entry of this revision, in family order then number.

        Each entry carries ``revisions``: the described revisions it binds (computed,
        not stored: a requirement binds every revision that neither retires it nor
        descends from one that does).
        """
        doc = _optional_core_json("requirements.json") or {}
        resolved = self._resolved({r["id"]: r for r in doc.get("requirements", ())}, "requirements")
        order = {f["id"]: i for i, f in enumerate(doc.get("families", ()))}
        binds = _revisions.requirement_revisions()
        entries = sorted(resolved.values(), key=lambda r: (order.get(r["family"], len(order)), int(r["id"].rsplit("-", 1)[1])))
        return MappingProxyType({r["id"]: {**r, "revisions": list(binds.get(r["id"], ()))} for r in entries})

    @functools.cached_property
    def decisions(self) -> Mapping[str, dict[str, Any]]:
        """Project decision id (DEC-n) -> entry of this revision."""
        doc = _optional_core_json("requirements.json") or {}
        return MappingProxyType(self._resolved({d["id"]: d for d in doc.get("decisions", ())}, "decisions"))

    @functools.cached_property
    def error_codes(self) -> Mapping[str, dict[str, Any]]:
        """Error code -> entry of this revision (``spec/errors.json`` plus the revision's changes)."""
        doc = _optional_core_json("errors.json") or {}
        entries = doc.get("errors", doc.get("codes", ()))
        resolved = self._resolved({e["code"]: e for e in entries}, "errors", key="code")
        retired = self._retired_requirements
        if retired:
            resolved = {c: {**e, "requirements": [r for r in e["requirements"] if r not in retired]}
                        for c, e in resolved.items()}
        return MappingProxyType(resolved)

    @functools.cached_property
    def constants(self) -> Mapping[str, Any]:
        """Format constants of this revision (``constants.json`` plus the revision's merge patches)."""
        value: Any = _core_json("constants.json")  # (read for this spec alone: patched where it is)
        for rev in self._chain:
            value = _revisions.merge_patch_owned(value, rev.changes.get("constants", {}))
            if "sqlite" in rev.changes:
                value["sqlite"] = _revisions.apply_sqlite_changes(
                    value["sqlite"], rev.changes["sqlite"], where=f"revision {rev.id}/changes.json#/sqlite",
                    error=registry_error)
        return MappingProxyType(value)

    # -- conveniences ----------------------------------------------------------------------------

    @property
    def plugin_labels(self) -> tuple[str, ...]:
        """Labels of the plugin sources, in load order."""
        return tuple(s.label for s in self._sources if s.label != CORE)

    def namespaces(self) -> dict[str, list[dict[str, Any]]]:
        """Registry entries grouped by namespace (the part before ``/``), both sorted."""
        grouped: dict[str, list[dict[str, Any]]] = {}
        for event_type, entry in self.events.items():
            grouped.setdefault(event_type.split("/", 1)[0], []).append(entry)
        return dict(sorted(grouped.items()))


def _check_schema(doc: dict[str, Any], where: str) -> None:
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError
    from sessionspec.spec.regex_safety import pattern_hazard  # (an untrusted registry's schemas only)

    try:
        Draft202012Validator.check_schema(doc)
    except SchemaError as exc:
        pointer = json_pointer(exc.absolute_path)
        raise registry_error(f"{where}#{pointer}: not a valid Draft 2020-12 schema: {exc.message}", path=pointer or "/") from exc
    for parts, pattern in _patterns(doc, ()):
        hazard = pattern_hazard(pattern)
        if hazard is not None:
            pointer = json_pointer(parts)
            raise SessionSpecError(
                f"{where}#{pointer}: pattern {pattern[:200]!r}{'…' if len(pattern) > 200 else ''} is refused: {hazard}; "
                "an untrusted registry's patterns must match in linear time",
                PATTERN_ERROR_CODE, path=pointer,
            )


# Keywords whose values are data, never schemas: a "pattern" inside them is not a regular expression.
_DATA_KEYWORDS = frozenset({"const", "enum", "examples", "default"})


def _patterns(node: Any, parts: tuple[Any, ...]) -> Iterator[tuple[tuple[Any, ...], str]]:
    """Every regular expression of a schema document (`pattern` values, `patternProperties` keys) with its
    pointer. Iterative: a deep document cannot exhaust the stack."""
    stack: list[tuple[Any, tuple[Any, ...]]] = [(node, parts)]
    while stack:
        node, parts = stack.pop()
        if isinstance(node, list):
            stack.extend((v, (*parts, i)) for i, v in enumerate(node))
        elif isinstance(node, dict):
            for key, value in node.items():
                if key in _DATA_KEYWORDS:
                    continue
                if key == "pattern" and isinstance(value, str):
                    yield (*parts, key), value
                elif key == "patternProperties" and isinstance(value, dict):
                    yield from (((*parts, key, name), name) for name in value)
                stack.append((value, (*parts, key)))


def _core_root() -> Traversable:
    return spec_root()


def _core_json(name: str) -> Any:
    return json.loads(_core_root().joinpath(name).read_text(encoding="utf-8"))


def _optional_core_json(name: str) -> Any:
    file = _core_root().joinpath(name)
    return json.loads(file.read_text(encoding="utf-8")) if file.is_file() else None


def _entry_point_roots() -> list[tuple[str, Traversable]]:
    """Registry directories advertised by installed packages under ``sessionspec.registries``.

    An entry point loads to a path (``str``/``PathLike``/`Traversable`), or to a
    callable returning one or a list of them.
    """
    from importlib.metadata import entry_points

    roots: list[tuple[str, Traversable]] = []
    for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        target = ep.load()
        if callable(target) and not isinstance(target, (str, os.PathLike)):
            target = target()
        targets = target if isinstance(target, (list, tuple)) else [target]
        for index, item in enumerate(targets):
            root = Path(item) if isinstance(item, (str, os.PathLike)) else item
            label = f"entry point {ep.name}" + (f"[{index}]" if len(targets) > 1 else "")
            roots.append((label, root))
    return roots


def _plugin_source(label: str, root: Traversable) -> Source:
    if not root.is_dir():
        raise registry_error(f"{label}: registry directory does not exist")
    if not root.joinpath("events").is_dir():
        raise registry_error(f"{label}: a registry directory needs an events/ folder")
    return Source(label, root, trusted=False)


@functools.cache
def _core_spec(revision: str) -> Spec:
    return Spec([Source(CORE, _core_root(), trusted=True)], revision)


def load_spec(
    extra_dirs: Iterable[str | os.PathLike[str]] = (),
    *,
    entry_points: bool = False,
    revision: str | _revisions.Revision | None = None,
) -> Spec:
    """The specification of one format revision: core registry plus plugin registries.

    ``revision`` is a revision id, a published release (``0.1.1-rc.2``) or
    ``None`` for the default (pinned) revision; an unknown one raises
    `UnknownRevision`, whose message lists the known ones. ``extra_dirs`` are
    registry directories (``events/``, ``schemas/``) merged after the core;
    ``entry_points=True`` also merges those advertised under the
    ``sessionspec.registries`` entry-point group. A type or schema ``$id``
    defined twice is an error. Only core-only specs are cached.
    """
    rev = _revisions.resolve_revision(revision)
    dirs = [extra_dirs] if isinstance(extra_dirs, (str, os.PathLike)) else list(extra_dirs)
    if not dirs and not entry_points:
        return _core_spec(rev.id)
    sources = [Source(CORE, _core_root(), trusted=True)]
    for directory in dirs:
        sources.append(_plugin_source(os.fspath(directory), Path(directory)))
    if entry_points:
        for label, root in _entry_point_roots():
            sources.append(_plugin_source(label, root))
    return Spec(sources, rev)
