"""The one walk of a log's records through the revision's load rules, yielding located findings as it goes.

Every path that seeds or loads records walks them here: ``Session(seed=...)``, ``validate_seed`` and the load
path's restore (`session`), and the validator's load level (`sessionspec.validator.lint`). Per record, in order:

* reading (JSONL-12..15, with ``reader``: the validator's every-defect reading): the record as the revision's
  load path reads it (`jsonl.StoredReader.read`: upgraded, or as stored), its refusal (JSONL-14, JSONL-15) and
  the legacy vocabulary (JSONL-12, `StoredReader.is_legacy`);
* numbering (with ``follow_numbering``: the reader reported a seq that is not in place, `jsonl_read.in_place`,
  JSONL-7 or SEED-9 in a JSON array, so the walk follows the record's own seq; a repeated or backward seq, or one
  the statement does not place, takes no place);
* SEED-2 (unless the records are frozen parses already), then the rule table's entry rule
  (``TABLE.check_seed_entry``: SEED-3 … SEED-9 in the order of SEED-11);
* the surface fold (SEED-10), where a rejected replace that only fails because it names an event rejected
  before is a knock-on effect: counted (`LoadWalk.suppressed`), not reported again.

A rejected record keeps its seq but changes nothing, and the walk goes on. The load path raises the first
finding's error (`Finding.error`: the exception the rule raised); the validator reports every finding. The walk
checks nothing of its own: each decision is the function that states it (the entry rule, ``SurfaceState.check``,
the stored reader), so a mutant that replaces one rule table entry changes every path alike.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterable, Mapping, MutableSequence, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from sessionspec.spec import FORMAT
from sessionspec.spec.error_codes import ErrorCode
from sessionspec.spec.errors import JsonlError, JsonValueError, SeedError, SessionSpecError, SurfaceError
from sessionspec.spec.schema_types import JsonObject, JsonValue

from . import jsonl_read
from .finding import Finding
from .json_value import FrozenDict, freeze_json_value
from .rule_table import TABLE

if TYPE_CHECKING:
    from .revision import Rules
    from .surface import SurfaceState

__all__ = ["LoadWalk", "Observer", "StoredLoad", "StoredRecords", "frozen_entry"]

_LEGACY_TYPES = FORMAT.legacy_rejected_types


class StoredRecords(Protocol):
    """What the walk asks of a stored reader (`jsonl.StoredReader`, every-defect reading)."""

    @property
    def active(self) -> bool: ...

    def read(self, event: JsonObject, index: int) -> tuple[JsonObject, JsonlError | SeedError | None]: ...

    def is_legacy(self, event: JsonObject) -> bool: ...


class StoredLoad(StoredRecords, Protocol):
    """A stored reader in the load path's first-defect reading: it notes its refusals as it reads."""

    def read_on(self, events: Sequence[JsonValue], start: int) -> None: ...

    def first_defect(self, first: Finding) -> SessionSpecError: ...


Observer = Callable[[int, JsonValue, JsonValue, "JsonlError | SeedError | None", "int | None", bool, bool], bool]
"""``observe(position, record, stored, refusal, seq, renumbered, placed)``, called for each record once it is read
and numbered, before its load rules: the record as read (``stored``: as stored), the reader's refusal of it, its
integer seq (or None), whether its seq is not the next one (the reader reported it) and whether it takes a place
in the log (False: a repeated or backward seq, skipped). It returns whether the record needs SEED-2 although the
walk's records are frozen parses (its line holds a number the reader found not lossless JSON). The validator's
schema checks hang here."""


def frozen_entry(entry: JsonValue, index: int) -> JsonValue:
    """SEED-2 (one pass: validate, detach, freeze)."""
    try:
        return freeze_json_value(entry)
    except JsonValueError as error:
        raise SeedError(
            f"seed event at index {index} is not losslessly JSON-serializable ({error.message})",
            "SEED_NOT_JSON",
            requirement="SEED-2",
            index=index,
            path=error.path,
            cause=error,
        ) from error


class LoadWalk:
    """The walk of one log's records (or a seed's entries) into ``surface``, at ``rules``.

    ``keep(event)``: every accepted event, in order (a session's log append; the validator keeps them by seq for
    the surface's lookups); ``project(event)``: each accepted surface node (a session's message log), or None;
    ``frozen``: the records are frozen parses already (SEED-2 holds, the load path), else each is frozen first;
    ``reader``, ``follow_numbering``, ``observe`` (`Observer`), ``locate``: the validator's reading (see the
    module's docstring); ``locate(position)`` gives a record's (line, JSON pointer).
    """

    __slots__ = ("follow_numbering", "freeze_read", "frozen", "keep", "locate", "observe", "project", "reader",
                 "rules", "suppressed", "surface")

    def __init__(self, rules: Rules, surface: SurfaceState, keep: Callable[[FrozenDict], object],
                 project: Callable[[FrozenDict], object] | None = None, *, frozen: bool = False,
                 reader: StoredRecords | None = None, follow_numbering: bool = False, observe: Observer | None = None,
                 locate: Callable[[int], tuple[int | None, str]] | None = None, freeze_read: bool = False) -> None:
        self.rules, self.surface, self.keep, self.project = rules, surface, keep, project
        self.frozen, self.reader, self.follow_numbering = frozen, reader, follow_numbering
        #: with ``frozen``: a record the reader rewrites (a new plain object, JSONL-13) is frozen first (SEED-2), so
        #: what ``keep`` receives is frozen (the load path keeps the walk's records as the session's events)
        self.freeze_read = freeze_read
        self.observe, self.locate = observe, locate
        #: rejected surface events that only failed because they name an event rejected before (not reported)
        self.suppressed = 0

    def run(  # noqa: C901 - one loop; the validator's steps inline (see `extra`)
            self, records: Iterable[JsonValue], start: int = 0, *,
            replace: MutableSequence[JsonObject] | None = None) -> Generator[Finding, None, None]:
        """Walk ``records`` (the first at index ``start``), yielding each finding, located, as it is found.

        ``replace``: the list ``records`` is, where a record the reader rewrites (JSONL-13) replaces the stored
        one (what every later check of the caller sees)."""
        rules = self.rules
        entry_rule = TABLE.check_seed_entry
        surface = self.surface
        check, apply, skip = surface.check, surface.apply, surface.skip
        types = rules.surface_types
        keep, project, frozen = self.keep, self.project, self.frozen
        reader, follow, observe = self.reader, self.follow_numbering, self.observe
        in_place = jsonl_read.in_place  # JSONL-7's one statement (read here, so a variant of it is followed)
        freeze_read = frozen and self.freeze_read
        # the validator's steps (reading, numbering, observing, SEED-2 per record); without them, the load path's
        extra = reader is not None or follow or observe is not None
        reading = reader is not None and reader.active
        is_legacy = reader.is_legacy if reader is not None else None
        rejected: set[int] = set()
        pending = 0  # accepted events that change nothing on the surface, not yet counted into it (one skip)
        expected = start
        position = -1
        found: Finding | None
        for entry in records:
            index = expected
            if extra:  # inline, not a helper per record: a call per record measured 5-8% of the validator's load level
                position += 1
                is_dict = isinstance(entry, dict)
                stored = entry
                refusal: JsonlError | SeedError | None = None
                rewritten = False
                if reading and is_dict:
                    entry, refusal = reader.read(stored, position)  # type: ignore[union-attr, arg-type]
                    if entry is not stored:
                        rewritten = freeze_read
                        if replace is not None:
                            replace[position] = entry
                seq = entry.get("seq") if is_dict else None  # type: ignore[union-attr]  # (is_dict: a dict)
                seq_int = seq if type(seq) is int else None
                renumbered = follow and seq_int is not None and not in_place(seq_int, index)
                if renumbered:
                    placed = seq_int > index  # type: ignore[operator]  # a repeated or backward seq takes no place
                    if placed:
                        pending += seq_int - index  # type: ignore[operator]
                        index = seq_int  # type: ignore[assignment]
                else:
                    placed = True
                json_check = observe(position, entry, stored, refusal, seq_int, renumbered, placed) \
                    if observe is not None else rewritten
                if not placed:
                    continue
                expected = index + 1
                if is_legacy is not None and is_dict:
                    legacy = is_legacy(entry)  # type: ignore[arg-type]
                    if legacy or refusal is not None:
                        pending += 1
                        yield self._refused(entry, refusal, legacy, position, seq_int, rejected)  # type: ignore[arg-type]
                        continue
                if json_check:
                    try:
                        entry = frozen_entry(entry, index)
                    except SeedError as error:
                        found = self._seed_finding(error, position, seq_int, rejected)
                    else:
                        found = None
                    if found is not None:
                        pending += 1
                        yield found
                        continue
            expected = index + 1
            try:
                event = entry_rule(entry if frozen else frozen_entry(entry, index), index, rules)
            except SeedError as error:
                found = self._seed_finding(error, position if extra else index - start, _seq(entry), rejected)
            else:
                if event["type"] not in types and "surfaceOp" not in event and "sourceEventSeqs" not in event:
                    keep(event)  # log-only without markers, seq checked (SEED-9): the transition is a count
                    pending += 1
                    continue
                if pending:
                    skip(pending)
                    pending = 0
                try:
                    plan = check(event, index)  # SEED-10: the same transition as a live append
                except SurfaceError as error:
                    found = self._surface_finding(error, event, index, position if extra else index - start, rejected)
                else:
                    keep(event)
                    apply(plan)
                    if project is not None and plan.kind != "log":
                        project(event)
                    continue
            pending += 1
            if found is not None:
                yield found
        if pending:
            skip(pending)

    def _where(self, position: int) -> tuple[int | None, str]:
        locate = self.locate
        return (None, "") if locate is None else locate(position)

    def _refused(self, event: Mapping[str, Any], refusal: JsonlError | SeedError | None, legacy: bool,
                 position: int, seq: int | None, rejected: set[int]) -> Finding:
        """A record the load path refuses as it reads it: a legacy record (JSONL-12), else the reader's refusal
        (JSONL-14, the upgraded message's seed check, JSONL-15)."""
        if seq is not None:
            rejected.add(seq)
        line, base = self._where(position)
        if legacy:
            etype = event.get("type")
            what = etype if etype in _LEGACY_TYPES else "request/header with reason 'fallback'"
            return Finding("JSONL_LEGACY_EVENT", "JSONL-12",
                           f"legacy record {what}: the load path refuses the whole file",
                           line=line, seq=seq, pointer=base + "/type")
        assert refusal is not None
        if isinstance(refusal, SeedError):
            return Finding.from_error(refusal, line=line, seq=seq,
                                      pointer=base + (refusal.path or _SEED_POINTERS.get(refusal.code, "")),
                                      raises=refusal)
        member = "/type" if refusal.code == "JSONL_UNKNOWN_TYPE" else "/data"
        return Finding.from_error(refusal, line=line, seq=seq, pointer=base + member, raises=refusal)

    def _seed_finding(self, error: SeedError, position: int, seq: int | None, rejected: set[int]) -> Finding:
        """A seed rule's error (SEED-2 … SEED-9), located at the member it names."""
        if seq is not None:
            rejected.add(seq)
        line, base = self._where(position)
        return Finding.from_error(error, line=line, seq=seq,
                                  pointer=base + (error.path or _SEED_POINTERS.get(error.code, "")), raises=error)

    def _surface_finding(self, error: SurfaceError, event: Mapping[str, Any], index: int, position: int,
                         rejected: set[int]) -> Finding | None:
        """SEED-10: a surface transition the fold refuses, as the seed's error; None for a knock-on (the event
        names one rejected before: counted, not reported again)."""
        seq = _seq(event)
        knock_on = bool(rejected) and bool(_refs(event) & rejected)
        if seq is not None:
            rejected.add(seq)
        if knock_on:
            self.suppressed += 1
            return None
        raised = SeedError(
            f"invalid seed event at index {index}: {error.message}",
            error.code,  # re-raised: the surface error's own code
            requirement=error.requirement,
            index=index,
            seq=index,
            cause=error,
        )
        line, base = self._where(position)
        pointer = "/sourceEventSeqs" if error.code == "SURFACE_LOG_ONLY_SOURCES" else _SURFACE_POINTERS.get(
            error.requirement or "", "")
        return Finding.from_error(error, line=line, seq=seq, pointer=base + pointer, raises=raised)


def _seq(event: Any) -> int | None:
    seq = event.get("seq") if isinstance(event, dict) else None
    return seq if type(seq) is int else None


def _refs(event: Mapping[str, Any]) -> set[int]:
    """Seqs a surface event refers to (replace range and sources): its knock-on exposure."""
    out: set[int] = set()
    op = event.get("surfaceOp")
    if isinstance(op, dict):
        for key in ("start", "end"):
            if type(op.get(key)) is int:
                out.add(op[key])
    sources = event.get("sourceEventSeqs")
    if isinstance(sources, list):
        out.update(s for s in sources if type(s) is int)
    return out


#: Where a seed rule's finding points when its error names no member.
_SEED_POINTERS: dict[ErrorCode, str] = {
    "SEED_LEGACY_HEADER_DELTA": "/type",
    "SEED_REQUEST_HEADER_CONFIG": "/data/header/config",
    "SEED_PROVENANCE": "/data/provenance",
    "SEED_ABORTED_REASON": "/data/reason",
    "SEED_LEGACY_FALLBACK": "/data/reason",
    "SEED_NOT_CONTIGUOUS": "/seq",
}
#: Where a surface rule's finding points, by requirement.
_SURFACE_POINTERS: dict[str, str] = {
    "SURF-2": "/seq",
    "SURF-3": "/surfaceOp",
    "SURF-5": "/surfaceOp",
    "SURF-7": "/sourceEventSeqs",
    "SURF-9": "/sourceEventSeqs",
    "SURF-10": "/data",
}

