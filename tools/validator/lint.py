"""The checks behind `sessionspec validate`, by level, reporting every finding of a log.

* ``load``: what a loader must reject: the header (JSONL-2, JSONL-12, HDR-*),
  the legacy vocabulary (JSONL-12), each event's seed rules (SEED-2 … SEED-9)
  and the surface fold (SEED-10, SURF-*). Unlike a loader, which stops at the
  first bad event, the fold goes on with the bad event *skipped* (it keeps its
  seq, but changes nothing on the surface); a later replace that only fails
  because it names a skipped event is a knock-on effect and is not reported
  again. A crash tail that a loader would repair is reported as a warning.
* ``schema``: plus the header line and every event against the spec's JSON
  Schemas, through the compiled fast path (`sessionspec.validator.fastschema`); only
  invalid events pay for the oracle, which locates the errors.
* ``strict``: plus the relational invariants (INV-*), all of them.

The load rules of the records are the reference's one walk (`sessionspec.reference.seed_walk.LoadWalk`, which
the seed and load paths use too, raising its first finding): the stored reader's every-defect reading, the
numbering, SEED-2 on a line the reader found not lossless JSON, the rule table's ``check_seed_entry`` (SEED-3 …
SEED-9) and the surface fold; this module reports every finding it yields and hangs the schema checks on its
per-record observer.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, cast

from sessionspec.reference import ERROR, WARNING, Explainer, Finding, LoadedLog, is_negative_zero
from sessionspec.reference.invariants import check_invariants
from sessionspec.reference.jsonl import (
    StoredReader,
    header_from_line,
    header_line_problem,
    version_refusal,
)
from sessionspec.reference.repair import interrupted_turn_closers
from sessionspec.reference.revision import rules_for
from sessionspec.reference.seed_walk import LoadWalk
from sessionspec.reference.session import (
    envelope_defects,
    validate_header,
)
from sessionspec.reference.surface import SurfaceState
from sessionspec.spec import FORMAT
from sessionspec.spec.errors import HeaderError, JsonlError, SeedError
from sessionspec.spec.schema_types import JsonObject, JsonValue
from sessionspec.validator.fastschema import CompiledSchema, Oracle
from sessionspec.validator.generated import (
    HEADER_SCHEMA_ID,
    ROW_SCHEMA_ID,
    Parts,
    Pregenerated,
    content_digest,
    generated_parts,
)

if TYPE_CHECKING:
    from referencing import Registry
    from sessionspec.reference import RevisionLike
    from sessionspec.reference.json_value import FrozenDict
    from sessionspec.spec.error_codes import ErrorCode
    from sessionspec.spec.loader import Spec
    from sessionspec.validator.mstypes import FastTypes

LEVELS = ("load", "schema", "strict")
#: The severity of content no reader of the revision reads (DEC-27): a note, not a failure by default.
DEVIATION = "deviation"
_LEGACY_TYPES = FORMAT.legacy_rejected_types
_SCHEMA_BASE = "https://sessionspec.dev/schema/"


class SchemaSet:
    """The one interface to the fast evaluations of one spec's schemas (built once per process, revision and registry).

    `event`, `header`, `row`: predicates compiled from the schemas (`fastschema`; for the core spec, the
    generated `core_fast.py`), errors from the oracle; `payload(schema_id)`: one payload schema the same way
    (revision detection's, generated for the installed revisions); `fast_types`: the msgspec types translated
    from the same schemas (`mstypes`). Each is built on first use, so a caller pays only for what it asks.
    Nothing outside `sessionspec.validator`'s schema modules compiles a schema (`compiled_schema` serves the
    schemas of no spec, the protocol's); each evaluation is held to python-jsonschema by
    `tests/cli/test_schema_evaluations.py`."""

    def __init__(self, spec: Spec, parts: Parts | Callable[[], Parts | None] | None = None, *,
                 payloads: Mapping[str, Callable[[JsonValue], bool]] | None = None) -> None:
        """Compile `spec`'s schemas when asked, or take `parts` already built for it (or a function building
        them, None when it cannot: `sessionspec.validator.pregen`); `payloads`: generated payload predicates by
        schema id."""
        self.spec = spec
        self._given = parts
        self._generated = dict(payloads or {})
        self._payloads: dict[str, CompiledSchema] = {}

    @functools.cached_property
    def _parts(self) -> Parts | None:
        given = self._given
        return given() if callable(given) else given

    @functools.cached_property
    def event(self) -> CompiledSchema:
        """Every event (a dispatch over the registered types, `by_tag` one predicate per type)."""
        parts, spec = self._parts, self.spec
        if parts is not None:
            return parts.event
        return compiled_schema(spec.event_schema, spec.event_validator(), spec.registry)

    def _document(self, schema_id: str, built: Callable[[Parts], CompiledSchema]) -> CompiledSchema:
        """The spec's schema ``schema_id``: its part of the built parts (``built`` picks it), else compiled now."""
        parts, spec = self._parts, self.spec
        if parts is not None:
            return built(parts)
        return compiled_schema(spec.schemas[schema_id], spec.validator(schema_id), spec.registry)

    @functools.cached_property
    def header(self) -> CompiledSchema:
        """The JSONL header line."""
        return self._document(HEADER_SCHEMA_ID, lambda parts: parts.header)

    @functools.cached_property
    def row(self) -> CompiledSchema:
        """A stored chunk row (a dispatch over the row tags): the source of the msgspec row types."""
        return self._document(ROW_SCHEMA_ID, lambda parts: parts.row)

    @functools.cached_property
    def fast_types(self) -> FastTypes:
        """The msgspec decoder generated from these schemas (`sessionspec.validator.mstypes`). msgspec is a
        dependency; a caller that runs without it (`fastlog`'s Python path) does not ask."""
        if self._parts is not None:
            return self._parts.fast_types
        from sessionspec.validator.generated import struct_prefix
        from sessionspec.validator.mstypes import build_fast_types

        return build_fast_types(self.event, self.row, struct_prefix(self.spec))

    def payload(self, schema_id: str) -> CompiledSchema:
        """The payload schema `schema_id` (a registry entry's `payloadSchema`), compiled once: the generated
        predicate where `core_fast.py` holds one for this spec (revision detection's), else compiled now."""
        compiled = self._payloads.get(schema_id)
        if compiled is None:
            spec = self.spec
            generated = self._generated.get(schema_id)
            if generated is not None:
                compiled = Pregenerated(spec.schemas[schema_id], lambda: spec.validator(schema_id),
                                        (generated, {}, None), spec)
            else:
                compiled = compiled_schema(spec.schemas[schema_id], spec.validator(schema_id), spec.registry)
            self._payloads[schema_id] = compiled
        return compiled

    def payload_ref(self, event_type: object) -> str | None:
        entry = self.spec.events.get(event_type) if isinstance(event_type, str) else None
        return entry["payloadSchema"] if entry else None


def compiled_schema(schema: JsonObject, oracle: Oracle, registry: Registry | None = None) -> CompiledSchema:
    """A schema of no spec (the protocol's messages) compiled to a predicate, `oracle` kept for its errors: the
    one compiler, for callers outside this package (a spec's schemas come from its `SchemaSet`)."""
    return CompiledSchema(schema, oracle, registry=registry)


@functools.cache
def _generated_payloads() -> dict[str, dict[str, Callable[[JsonValue], bool]]]:
    """Revision -> the payload predicates `core_fast.py` holds for it (none when generated from other revisions)."""
    from sessionspec.spec.loader import load_spec
    from sessionspec.spec.revisions import known_revisions
    from sessionspec.validator.generated import generated_payloads

    return generated_payloads({rid: load_spec(revision=rid) for rid in known_revisions()})


@functools.cache
def _core_schemas() -> SchemaSet:
    from sessionspec.spec.loader import load_spec

    spec = load_spec()
    # Built ahead of time when the generated module matches this spec (no compiling at start-up).
    return SchemaSet(spec, functools.partial(generated_parts, spec),
                     payloads=_generated_payloads().get(spec.revision.id))


def schema_set(registry_dirs: tuple[str, ...] = (), revision: str | None = None) -> SchemaSet:
    """The compiled schemas of a revision (default: the pinned one) plus plugin registries."""
    from sessionspec.spec.loader import load_spec

    if not registry_dirs and (revision is None or load_spec(revision=revision) is load_spec()):
        return _core_schemas()
    if not registry_dirs:
        return _revision_schemas(load_spec(revision=revision).revision.id)
    spec = load_spec(list(registry_dirs), revision=revision)
    # Compiled once per process and registry content (validate asks once per file): a registry edited
    # between two calls has another digest and is compiled again.
    key = content_digest([spec.revision.id, dict(spec.events), spec.event_schema, dict(spec.schemas)])
    if key not in _REGISTRY_SCHEMAS:
        if len(_REGISTRY_SCHEMAS) >= 8:  # a bound on what a long-lived process keeps
            del _REGISTRY_SCHEMAS[next(iter(_REGISTRY_SCHEMAS))]
        _REGISTRY_SCHEMAS[key] = SchemaSet(spec)
    return _REGISTRY_SCHEMAS[key]


_REGISTRY_SCHEMAS: dict[str, SchemaSet] = {}


def registry_types(registry_dirs: tuple[str, ...] = (), revision: str | None = None,
                   schemas: SchemaSet | None = None) -> frozenset[str]:
    """The event types plugin registries add at a revision: known to its load path for a check (JSONL-15), as
    they are to a harness build that declares them (the release's vocabulary is every type its build declares)."""
    if not registry_dirs:
        return frozenset()
    if schemas is not None:
        return frozenset(schemas.spec.events)
    return _registry_types(registry_dirs, revision)


@functools.cache
def _registry_types(registry_dirs: tuple[str, ...], revision: str | None) -> frozenset[str]:
    from sessionspec.spec.loader import load_spec

    return frozenset(load_spec(list(registry_dirs), revision=revision).events)


@functools.cache
def _revision_schemas(revision: str) -> SchemaSet:
    from sessionspec.spec.loader import load_spec

    spec = load_spec(revision=revision)
    # every installed revision is generated ahead of time (`pregen`: keyed by each one's fingerprint)
    return SchemaSet(spec, functools.partial(generated_parts, spec), payloads=_generated_payloads().get(revision))


class Checker:
    """Runs the checks of one level over a `LoadedLog`, appending findings to it."""

    def __init__(self, level: str, schemas: SchemaSet | None = None, revision: RevisionLike = None,
                 extra_types: Iterable[str] = ()) -> None:
        """``extra_types``: event types a plugin registry adds, known to the load path for this check (JSONL-15)."""
        if level not in LEVELS:
            raise ValueError(f"unknown level {level!r}")
        self.rules = rules_for(revision)
        self.extra_types = frozenset(extra_types)
        self.level = level
        self.schemas = schemas if level != "load" else None
        self.suppressed = 0
        # DEC-27: what no reader of the revision reads, apart from the log's findings (they never count as
        # its errors or warnings); the first `deviations_kept` in log order kept (0 = all), every one counted
        self.deviations: list[Finding] = []
        self.deviation_count = 0
        self.deviations_kept = 0
        self._reader_places = reader_places(self.rules.revision.id)
        self._own_types = own_types(self.rules.revision.id)
        # The findings of the line being checked, in the order found, each with its schema targets
        # (None: a load finding); settled into the log when the line is done (`_settle`).
        self._line: list[tuple[Finding, dict[str, Any] | None, str, tuple[str, ...]]] = []
        self._line_loads: list[Explainer] = []

    def check(self, log: LoadedLog, progress: Callable[[int], None] | None = None) -> None:
        self.suppressed = 0
        self.deviations, self.deviation_count, self.deviations_kept = [], 0, log.findings.keep
        if log.kind == "jsonl":
            self.check_header(log)
        self._check_events(log, progress)
        if self.level == "strict":
            self._check_invariants(log)
        log.findings.sort(key=lambda f: (f.line if f.line is not None else 1 << 62))

    def _load(self, finding: Finding) -> None:
        """A load finding of the line being checked."""
        self._line.append((finding, None, "", ()))
        self._line_loads.append((finding.code, finding.seq, finding.pointer or ""))

    def _settle(self, log: LoadedLog, reader: list[Explainer]) -> None:
        """One defect, one finding: add the line's findings to the log, less each schema finding a
        load finding of the same event (same line and seq; ``reader``: the reader's of the line)
        already reports (see `_explains`)."""
        found, self._line = self._line, []
        loads, self._line_loads = self._line_loads, []
        loads += reader
        for finding, event, base, targets in found:
            if event is not None and targets and all(
                any(seq == finding.seq and _explains(code, (pointer or "")[len(base):], target, event)
                    for code, seq, pointer in loads)
                for target in targets
            ):
                continue
            if finding.severity == DEVIATION:
                self._deviation(log, finding)
            else:
                log.add(finding)

    def _deviation(self, log: LoadedLog, finding: Finding) -> None:
        """Keep a deviation (DEC-27) beside the log's findings: counted always, kept up to ``deviations_kept``."""
        finding.file = log.name
        self.deviation_count += 1
        if not self.deviations_kept or len(self.deviations) < self.deviations_kept:
            self.deviations.append(finding)

    # -- header ---------------------------------------------------------------------------
    def check_header(self, log: LoadedLog) -> None:
        line = log.header_line
        if line is None:
            return
        if self.schemas is not None and not self.schemas.header.is_valid(line):
            # like an event's, so a JSONL_BAD_HEADER about the same member explains it (dropped)
            self._schema_findings(self.schemas.header, line, 1, None, "", "storage/jsonl-header.json", line)
        # the reader's shape check is the revision-free one; the optional members a revision's reader also
        # checks (`jsonl.headerLineOptionalFields`) are checked here, where the revision is known
        problem = header_line_problem(line, self.rules.revision) if log.header_ok else None
        if problem is not None:
            self._load(problem)
        elif log.header_ok:
            self._unread_header_keys(log, line)
            refusal = version_refusal(line)  # JSONL-12: the load path's own refusal
            if refusal is not None:
                self._load(Finding.from_error(refusal, line=1, pointer="/version"))
            else:
                try:
                    validate_header(cast(str, line["id"]), header_from_line(line), self.rules)  # (shape-checked)
                except HeaderError as error:
                    self._load(Finding.from_error(error, line=1))
        self._settle(log, log.line_explainers(1))

    def _unread_header_keys(self, log: LoadedLog, line: JsonObject) -> None:
        """A ``-0.0`` under a header key the revision does not define is a warning, not JSON-2's error: the
        loader drops the key unread (`header_from_line`), as the schema level's unknown-key finding says. (An
        infinite number stays an error: the loader's parser refuses the whole header line.)"""
        read = {"type", *header_from_line(line, self.rules.revision)}
        for finding in log.findings:
            if finding.line == 1 and finding.severity == ERROR and is_negative_zero(finding) and finding.pointer:
                key = finding.pointer.split("/", 2)[1].replace("~1", "/").replace("~0", "~")
                if key not in read:
                    finding.severity = WARNING
                    finding.message += (f"; under the header key {key!r}, which the format does not define: a "
                                        "loader drops it unread")

    # -- events -----------------------------------------------------------------------------
    def _check_events(self, log: LoadedLog, progress: Callable[[int], None] | None) -> None:
        """The load rules (the reference's one walk, `seed_walk.LoadWalk`: reading, numbering, seed rules, surface
        fold; every finding) and, per record before them, the schema checks of this level."""
        events, lines, pointers = log.events, log.event_lines, log.event_pointers
        jsonl = log.kind == "jsonl"
        rules = self.rules
        compiled = self.schemas.event if self.schemas is not None else None
        # JSONL-13..15: a stored log is read as the revision's load path reads it (`jsonl.StoredReader`): each
        # record upgraded before every later check, a refused one reported and skipped like a rejected event.
        reading = self._stored_reader(log) if jsonl else None
        stored = reading if reading is not None and reading.active else None
        # An earlier-format record no upgrade rewrites is kept as stored where the revision says so: checked
        # against the earlier revision's schemas, not flagged for the current ones (DEC-24).
        earlier = self.earlier_schemas() if stored is not None and compiled is not None else None
        kept: dict[str, int] = {}
        # A type in no registry passes the schema with its envelope only: said once per type (a warning).
        registered = self.registered_types()
        unregistered: set[str] = set()
        # Only a log whose reader found something located has explainers to look up per line.
        explained = bool(log.explainers) or len(log.anomaly_lines) > 0
        tick = max(1, len(events) // 200)
        numbering: ErrorCode = "JSONL_CORRUPT" if jsonl else "SEED_NOT_CONTIGUOUS"
        current: object = object()  # the line being checked
        reader: list[Explainer] = []  # its reader's explainers
        lossless = False  # the reader reported a number that is not lossless JSON on this line

        def observe(i: int, event: Any, as_stored: Any, refusal: JsonlError | SeedError | None, seq: int | None,
                    renumbered: bool, placed: bool) -> bool:
            """Per record, once read and numbered: this level's schema checks (settling the previous line); whether
            the record needs SEED-2 (`seed_walk.Observer`)."""
            nonlocal current, reader, lossless
            if progress is not None and i % tick == 0:
                progress(i)
            line = lines[i]
            if line != current:
                if self._line:
                    self._settle(log, reader)
                elif self._line_loads:
                    self._line_loads = []
                current = line
                if explained:
                    reader = log.line_explainers(line)
                    # SEED-2 can fail only on a line the reader found not lossless JSON (a parsed line holds JSON
                    # types, string keys and no cycles): such a line's records get SEED-2 before SEED-3 … SEED-9
                    lossless = any(code == "JSON_NOT_LOSSLESS" for code, _, _ in reader)
            base = pointers[i]
            if compiled is not None and not compiled.is_valid(event):
                # an upgraded record keeps the rest of its stored content as stored (the release rewrites only
                # the fields its upgrade names): its stored form is what the earlier schemas judge
                self._invalid_event(compiled, earlier if refusal is None else None, kept, event, line, seq, base,
                                    as_stored)
            # Numbering: the reader reported it (JSONL-7, or SEED-9 in a JSON array), one finding per defect; its
            # finding explains a schema finding on this seq. The walk follows the numbering.
            if renumbered:
                self._line_loads.append((numbering, seq, base + "/seq"))
            if placed:
                etype = event.get("type") if type(event) is dict else None
                self._unregistered(log, registered if refusal is None else None, unregistered, etype, line, seq, base)
            return lossless

        by_seq: dict[int, Any] = {}

        def keep(event: FrozenDict) -> None:  # (a parsed dict here: the lookup of the fold's surface nodes, by seq)
            by_seq[event["seq"]] = event

        walk = LoadWalk(rules, SurfaceState(by_seq.__getitem__, rules), keep, frozen=True, reader=reading,
                        follow_numbering=True, observe=observe, locate=lambda i: (lines[i], pointers[i]))
        for finding in walk.run(events, replace=events):
            if finding.code == "SEED_NOT_JSON" and lossless:
                continue  # SEED-2 on the number the reader located already (JSON-2): rejected, not reported again
            finding.error = None  # (the exception the load path would raise: not kept for every finding)
            self._load(finding)
        self.suppressed = walk.suppressed
        self._settle(log, reader)
        if stored is not None:
            log.upgraded = dict(stored.upgraded)
            log.kept_as_stored = kept
        if jsonl and events:
            self.check_crash_tail(log)

    @staticmethod
    def _unregistered(log: LoadedLog, registered: frozenset[str] | None, warned: set[str], etype: Any,
                      line: int | None, seq: int | None, base: str) -> None:
        """EVENT_TYPE_UNREGISTERED, once per type: a type no loaded registry declares passes with its envelope only
        (``registered`` None: no registry at this level, or the load path refused the record already)."""
        if registered is None or type(etype) is not str or etype in registered or etype in _LEGACY_TYPES or etype in warned:
            return
        warned.add(etype)
        log.add(Finding("EVENT_TYPE_UNREGISTERED", None, f"event type {etype!r} is in no registry loaded (the core's "
                        "or a --registry folder): only its envelope is checked, its payload is not; give the plugin's "
                        "registry with --registry DIR", line=line, seq=seq, pointer=base + "/type", severity=WARNING))

    def _invalid_event(self, compiled: Any, earlier: Any, kept: dict[str, int], event: Any, line: int | None,
                       seq: int | None, base: str, stored: Any = None) -> None:
        """An event the revision's schemas reject: its findings, unless ``earlier`` (the parent revision's
        schema) accepts its stored form (``stored``, default the event) as an earlier-format record kept as
        stored."""
        stored = event if stored is None else stored
        if (earlier is not None and type(stored) is dict and stored.get("type") in earlier[1]
                and earlier[0].is_valid(stored)):
            kept[event["type"]] = kept.get(event["type"], 0) + 1
        else:
            self._event_schema_findings(compiled, event, line, seq, base)

    def registered_types(self) -> frozenset[str] | None:
        """The event types the loaded registries declare (None: no schema level, so no type is unregistered): a type
        outside them passes with its envelope only, warned once per type (EVENT_TYPE_UNREGISTERED). The one statement
        of that set: the fast pass takes it from here too."""
        return (frozenset(self.schemas.spec.events) | self.extra_types) if self.schemas is not None else None

    def earlier_schemas(self) -> tuple[CompiledSchema, frozenset[str]] | None:
        """The event schema of the parent revision and the types it registers, when this revision's load path
        keeps the earlier-format records it does not upgrade as stored (``jsonl.loadUpgrade.otherEarlierRecords``);
        else None. A type the parent does not register (a plugin's) is never an earlier-format record."""
        upgrade, parent = self.rules.load_upgrade, self.rules.revision.parent
        if upgrade is None or not upgrade.keeps_other_records or parent is None:
            return None
        from sessionspec.spec.loader import load_spec

        return schema_set((), parent).event, frozenset(load_spec(revision=parent).events)

    def _stored_reader(self, log: LoadedLog) -> StoredReader:
        """The revision's reading of stored records (JSONL-12..15), one at a time."""
        header = log.header_line
        session_id = header.get("id") if header is not None else None
        return StoredReader(session_id if type(session_id) is str else "", None, self.rules, self.extra_types)

    def _event_schema_findings(self, compiled: CompiledSchema, event: Any, line: int | None, seq: int | None,
                               base: str) -> None:
        """The schema findings of an event the compiled schema rejected, labelled with its payload schema."""
        is_dict = type(event) is dict
        ref = self.schemas.payload_ref(event.get("type") if is_dict else None) if self.schemas else None
        # the suite's own schemas by their path under the base; a plugin's by its own full $id
        label = (ref.removeprefix(_SCHEMA_BASE) if ref else None) or "envelope/session-event.json"
        self._schema_findings(compiled, event, line, seq, base, label, event if is_dict else None, payload=True)

    def check_crash_tail(self, log: LoadedLog) -> None:
        try:
            closers = interrupted_turn_closers([e for e in log.events if type(e) is dict], self.rules)
        except Exception:  # noqa: BLE001 - a log too broken to repair is reported by the other checks
            return
        if closers:
            data = closers[-1].get("data")  # (a closer's data: an object)
            turn = data.get("turn") if isinstance(data, Mapping) else None
            log.add(Finding("REPAIR_NEEDED", "REPAIR-6", f"the log ends inside turn {turn!r} (a crash): loading appends "
                            f"{len(closers)} repair closer(s); `sessionspec repair` writes them to a copy",
                            line=log.event_lines[-1], seq=log.events[-1].get("seq") if type(log.events[-1]) is dict else None,
                            severity=WARNING))

    # -- schema -----------------------------------------------------------------------------
    def _schema_findings(self, compiled: CompiledSchema, value: Any, line: int | None,
                         seq: int | None, base: str, label: str, event: Any = None, *, payload: bool = False) -> None:
        """The schema findings of a value of the line being checked (with what each is about, for `_settle`);
        ``payload``: the value is an event, whose schema errors about what no reader reads are deviations (DEC-27).
        The oracle is asked for more errors than are kept, so deviations never hide an error it would report."""
        errors = compiled.errors(value, limit=_ERRORS_ASKED if payload else _ERRORS_KEPT)
        if not errors:
            self._line.append((Finding("SCHEMA_VIOLATION", f"schema:{label}", "does not match its JSON Schema (too "
                                       "deeply nested for the oracle to locate the error)", line=line, seq=seq,
                                       pointer=base or None), None, "", ()))
            return
        kept = 0
        for error in errors:
            rel = "".join("/" + _escape(p) for p in error.absolute_path)
            pointer = base + rel
            message = error.message
            if len(message) > 300:
                message = message[:300] + "…"
            targets = _targets(error, rel) if event is not None else ()
            if payload and targets and self._unread(error, event, targets):
                for target in targets:  # one located note per member, at the member
                    self._line.append((Finding(
                        "FORMAT_DEVIATION", "DEC-27", self._deviation_text(error, message, target, label),
                        line=line, seq=seq, pointer=base + target, severity=DEVIATION), event, base, (target,)))
                continue
            if kept < _ERRORS_KEPT:
                kept += 1
                finding = Finding("SCHEMA_VIOLATION", f"schema:{label}", message, line=line, seq=seq,
                                  pointer=pointer or None)
                self._line.append((finding, event, base, targets))

    def _deviation_text(self, error: Any, message: str, target: str, label: str) -> str:
        """A deviation's message: what the schema says of the member, and that no reader of the revision reads it."""
        rev = self.rules.revision.id
        if error.validator in _UNDEFINED_MEMBER:
            return (f"member {_member_name(target)} is not defined by schema:{label}; no reader of revision {rev} "
                    f"reads it: kept as stored")
        if error.validator == "required":
            return (f"member {_member_name(target)} required by schema:{label} is missing; no reader of revision "
                    f"{rev} reads it: kept as stored")
        return f"schema:{label}: {message}; no reader of revision {rev} reads it: kept as stored"

    def _unread(self, error: Any, event: Any, targets: tuple[str, ...]) -> bool:
        """Whether a schema error is a deviation (DEC-27). It must be reported directly, not within the
        alternatives of a oneOf/anyOf (whose best match may be a branch that does not apply), unless no reader
        reads any of the payload. It must be about the event's payload: the envelope's key set is read whole by
        SEED-3, and the payload as a whole only counts where no reader reads any of it. Each target must lie
        outside every place a reader of the revision reads whole (`reader_places`: inside, holding or equal to one
        is read), and be neither a member a reader reads by name nor hold one (a reader reads the member's own
        value, not what lies inside it). Only for a type of the revision's own registry: a type a plugin registry
        adds is read by its plugin, which may read any member."""
        if type(event) is not dict:
            return False
        etype = event.get("type")
        if type(etype) is not str or etype not in self._own_types:
            return False  # a plugin's type (--registry): the spec does not know what its readers read
        whole, named = self._reader_places.get(etype, ((), ()))
        if error.parent is not None and (whole or named):  # among alternatives of a payload a reader reads
            return False
        if targets == ("/data",):  # the payload as a whole (a `not` over its members): unread when nothing of it is
            return not whole and not named and error.validator != "type"  # an object payload is what SEED-3 reads
        return all(target.startswith("/data/") and not any(_same_branch(target, read) for read in whole)
                   and not any(read == target or read.startswith(target + "/") for read in named)
                   for target in targets)

    # -- invariants -----------------------------------------------------------------------------
    def _check_invariants(self, log: LoadedLog) -> None:
        positions = [i for i, e in enumerate(log.events) if type(e) is dict]
        for error in check_invariants([log.events[i] for i in positions], self.rules):
            i = positions[error.index] if error.index is not None and error.index < len(positions) else None
            line = log.event_lines[i] if i is not None else None
            base = log.event_pointers[i] if i is not None else ""
            log.add(Finding.from_error(error, line=line, seq=error.seq,
                            pointer=(base + (error.path or "")) or None))


#: The schema keywords whose errors name members the schema does not define.
_UNDEFINED_MEMBER = frozenset({"additionalProperties", "unevaluatedProperties"})
#: The schema errors kept per event, and how many the oracle is asked for (the rest may be deviations).
_ERRORS_KEPT, _ERRORS_ASKED = 5, 64


@functools.cache
def reader_places(revision: str) -> dict[str, tuple[tuple[str, ...], tuple[str, ...]]]:
    """Event type -> (the places a reader of ``revision`` reads whole, every member of them; the members it reads
    by name): pointers into the event, ``readers.wholeReads`` and ``readers.byName`` in the revision's constants
    (DEC-27)."""
    from sessionspec.spec.loader import load_spec

    readers = load_spec(revision=revision).constants["readers"]
    whole, named = readers["wholeReads"], readers["byName"]
    return {etype: (tuple(whole.get(etype) or ()), tuple(named.get(etype) or ()))
            for etype in set(whole) | set(named)}


@functools.cache
def own_types(revision: str) -> frozenset[str]:
    """The event types of ``revision``'s own registry, whose readers the spec states (DEC-27)."""
    from sessionspec.spec.loader import load_spec

    return frozenset(load_spec(revision=revision).events)


def _member_name(pointer: str) -> str:
    """The last member of a JSON pointer, quoted as the schema validator quotes a property."""
    return repr(pointer.rsplit("/", 1)[-1].replace("~1", "/").replace("~0", "~"))


def _same_branch(target: str, place: str) -> bool:
    """Whether pointer ``target`` is ``place``, inside it, or holds it."""
    return target == place or target.startswith(place + "/") or place.startswith(target + "/")


def _escape(segment: Any) -> str:
    return str(segment).replace("~", "~0").replace("/", "~1")


def _targets(error: Any, rel: str) -> tuple[str, ...]:
    """The pointers (relative to the event) of what a schema error is about.

    A missing required property or an unexpected property is about that
    property (the oracle places the error on the parent object).
    """
    instance = error.instance
    if error.validator == "required" and isinstance(instance, dict) and isinstance(error.validator_value, list):
        missing = [k for k in error.validator_value if isinstance(k, str) and k not in instance]
        named = [k for k in missing if error.message == f"{k!r} is a required property"]
        return tuple(f"{rel}/{_escape(k)}" for k in (named or missing))
    if error.validator == "additionalProperties" and isinstance(instance, dict) and isinstance(error.schema, dict):
        known = error.schema.get("properties", {})
        extra = [k for k in instance if k not in known] if not error.schema.get("patternProperties") else []
        return tuple(f"{rel}/{_escape(k)}" for k in extra)
    return (rel,)


# Load findings whose rule is the whole schema of one envelope member: they explain any schema
# error in or under it (the member's schema is exactly that rule's shape check).
_MEMBER_RULES: dict[ErrorCode, str] = {
    "SURFACE_MARKER_MISSING": "/surfaceOp",
    "SURFACE_MARKER_INVALID": "/surfaceOp",
    "SURFACE_REPLACE_MARKER_INVALID": "/surfaceOp",
    "SURFACE_LOG_ONLY_MARKER": "/surfaceOp",
    "SURFACE_LOG_ONLY_SOURCES": "/sourceEventSeqs",
    "SURFACE_SOURCES_INVALID": "/sourceEventSeqs",
    # JSONL-14: the payload is in an earlier shape the load path cannot upgrade (no current schema describes it)
    "JSONL_LEGACY_MALFORMED": "/data",
}
# Load findings about an object whose named members they check (SEED-5, SEED-6: provider/model).
_CHECKED_MEMBERS: dict[ErrorCode, tuple[str, ...]] = {"SEED_REQUEST_HEADER_CONFIG": ("provider", "model"), "SEED_PROVENANCE": ("provider", "model")}


def _explains(code: ErrorCode, pointer: str, target: str, event: dict[str, Any]) -> bool:
    """Whether a load finding ``code`` (at ``pointer`` in the event) already reports schema error ``target``."""
    if code == "SEED_ENVELOPE":
        return target in envelope_defects(event)
    member = _MEMBER_RULES.get(code)
    if member is not None:
        return target == member or target.startswith(member + "/")
    if not pointer:
        return False
    if target == pointer:
        return True
    return any(target == f"{pointer}/{k}" for k in _CHECKED_MEMBERS.get(code, ()))


def is_failure(finding: Finding, fail_on: str) -> bool:
    return finding.severity == ERROR or fail_on == WARNING
