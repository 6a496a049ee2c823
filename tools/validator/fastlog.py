"""The accept-fast path of `sessionspec validate`: prove a whole JSONL log clean, or give up.

The exact path (the reference's reader in its every-defect mode, `load_log`, + `sessionspec.validator.lint`) explains every
problem of a log, but it builds every event (expanding packed chunk rows)
and runs each check through general code: 10-20 us per event. Most logs
are clean, and for a clean log the only output is "ok". This module runs one
tight loop over the lines that checks the same rules, level by level, and
returns a `CleanLog` only when it has *proved* that the exact path would
report nothing; at the first doubt it returns ``None`` and the caller runs
the exact path, which then locates and explains the findings. A verdict is
therefore never weaker than the exact path's (differential tests:
``tests/cli/test_fastlog.py``).

What makes it fast:

* lines are decoded by msgspec into structs generated from the schemas
  (`sessionspec.validator.mstypes`), 64 KiB of lines per call (``decode_lines``):
  acceptance means each event (or row) is valid for its schema, and
  ``encode_lines(decode_lines(text))`` proves every line lossless JSON and exactly one
  struct by the reference's one statement of it (`json_text.first_lossy_line`, a batch
  of `json_text.lossless`: the text is its re-encoding, with no ``-0.0``; the scan for
  ``-0.0`` is left out where the generated types cannot hold one, proved on the types:
  `_no_negative_zero`). A line a group cannot take costs that
  line only: the lines before it are taken, it is read alone, and the batch goes
  on after it (`group`): what the structs refuse goes through the one parsing
  path of log text (`json_text.loads`, taken only when it reports no anomaly) and
  the compiled predicate specialised for its type (`CompiledSchema.by_tag`);
* the revision's rules are read from its `Rules`, and a record of a type its load path
  may read apart (JSONL-13..15: the load path's own test, `StoredReader.reads_apart`,
  which its `read` dispatches on) is read by that `StoredReader` before any check, so the
  pass checks the records the exact path checks (upgraded, kept as stored: counted);
* no load rule is restated: what a struct type implies (envelope keys, the revision's
  seq and time bounds, SEED-6, a row's CHUNK-9 storage shape) is verified on the
  generated type (`_struct_kinds`), so a log-only event costs one seq test and a
  typed row the rule table's numbering and arithmetic of its members (`member_seqs`, `member_bounds`);
* a packed chunk row is never expanded: CHUNK-9 is the rule table's (`row_shape`
  and `member_bounds`, whole-list operations), its place the load path's (`jsonl_read.row_in_place`), and its members are
  checked against the event schema as one family (`RowPlan`): the bounds that
  `sessionspec.validator.schemavary` derives for the varying values (seq, time, text)
  and the per-row values, plus one verdict for everything shared;
* parsed values are not kept (only ``tool/result`` events, which a later
  surface replace may need: SURF-10), and the cyclic GC is paused.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

import orjson

try:
    import msgspec
except ImportError:  # pragma: no cover - a dependency; without it only the dict path runs
    msgspec = None  # type: ignore[assignment]

from sessionspec.reference import Finding, LoadedLog, fragment_finding, json_text, jsonl, jsonl_read, parse_line
from sessionspec.reference.chunk_rows import NUMBER_KEYS, ROW_SPECS, RowSpec, decode_storage_record, row_parts
from sessionspec.reference.invariants import InvariantFold
from sessionspec.reference.json_value import gc_paused
from sessionspec.reference.jsonl import StoredReader
from sessionspec.reference.repair import TURN_BOUNDARIES
from sessionspec.reference.revision import Rules, rules_for
from sessionspec.reference.rule_table import TABLE, is_own
from sessionspec.reference.session import SEED_DATA_RULE_TYPES, SEED_ENTRY_OWN_TYPES, is_event_envelope
from sessionspec.reference.surface import SurfacePlan, SurfaceState
from sessionspec.spec import FORMAT
from sessionspec.spec.errors import ChunkRowError, JsonTextError, SessionSpecError
from sessionspec.validator.fastschema import CompiledSchema
from sessionspec.validator.lint import Checker, SchemaSet
from sessionspec.validator.schemavary import ScalarBounds, Unsupported, varying_constraints

if TYPE_CHECKING:
    from sessionspec.reference import RevisionLike
    from sessionspec.reference.upgrade import UpgradeReader
    from sessionspec.spec.schema_types import JsonObject, JsonValue
    from sessionspec.validator.detect import InlineDetection

__all__ = ["CleanLog", "RowPlan", "check_clean", "proves", "row_members_ok"]

_MAX = FORMAT.max_safe_integer


def _legacy_types() -> frozenset[str]:
    """JSONL-12's retired types as the load path refuses them: the rule table's entry, so a variant of the reference
    (a mutant's table) is followed here too, never a copy of the format's list."""
    return frozenset(TABLE.load_rejected_types)
_HEADER_TYPE = FORMAT.jsonl_header_line_type
_ROW_SPECS = ROW_SPECS  # the reference's own row layouts (from the spec constants)
_NUMBER_KEYS = NUMBER_KEYS  # turn, step, index: JSON numbers


def _looked_into(rules: Rules) -> frozenset[str]:
    """The types whose seed rules look into `data` at a revision (SEED-4 ... SEED-8, its message shape's check)."""
    return SEED_DATA_RULE_TYPES | rules.messages.seed_types


def _seed_checked(rules: Rules) -> frozenset[str]:
    """Seed rules that look into `data` and that a generated struct type cannot prove (SEED-6 of a flat
    assistant/message is proved on its type: `_struct_kinds`); events of these types are converted."""
    on_type = frozenset({"assistant/message"}) if rules.messages.name == "flat" else frozenset()
    return _looked_into(rules) - on_type


def _reads_apart(rules: Rules) -> Callable[[str, Iterable[str] | None], bool]:
    """JSONL-13..15: the load path's own test of the records it may read other than as stored
    (`StoredReader.reads_apart`, which its `read` dispatches on). A struct or row member of such a type is converted
    and goes through that reader (`_Pass.event`); of every other type the reader returns the record as stored.
    (Built without a registry's added types: a type they add is then read through the reader too.)"""
    return StoredReader("", None, rules).reads_apart
_NONE: frozenset[str] = frozenset()


@dataclass(frozen=True)
class CleanLog:
    """A log whose whole report the fast pass has proved: no finding at the level checked, except
    the crash-tail warnings in `findings` (a torn final fragment, JSONL-4; an open final turn,
    REPAIR-6), built by the exact path's own code."""

    name: str
    events: int
    lines: int
    rows: int
    kind: str = "jsonl"
    findings: list[Finding] = field(default_factory=list)
    #: what the revision's load path read upgraded (JSONL-13) and kept as stored (DEC-24), by stored type
    upgraded: dict[str, int] = field(default_factory=dict)
    kept_as_stored: dict[str, int] = field(default_factory=dict)


# ----------------------------------------------------------------------------- chunk rows


def _row_parts(value: dict[str, Any], spec: RowSpec) -> tuple[dict[str, Any], list[str], range, tuple[int, int, int]] | None:
    """CHUNK-9 and CHUNK-11 as the reference decides them (`chunk_rows.row_parts`: the rule table's entries, so a
    variant's are followed): ``(data, members, member seqs, (lowest, highest, last member time))``, or None where the
    reference refuses the row."""
    try:
        data, members, _, seqs, bounds = row_parts(value, spec)
    except ChunkRowError:
        return None
    return cast("dict[str, Any]", data), members, seqs, bounds  # (a row read as a dict: its data is a dict)


class RowPlan:
    """How the members of one row layout are checked as a family (see the module docstring).

    The member shape is learnt from the reference decoder itself (a probe row with sentinel
    values), so nothing here restates it. ``bounds`` is None when the schema analysis could not
    prove the shortcut; the caller then checks members one by one.
    """

    def __init__(self, tag: str, present: frozenset[str], compiled: CompiledSchema | None,
                 rules: Rules | None = None) -> None:
        rules = rules_for(rules)
        spec = _ROW_SPECS[tag]
        sentinels: dict[Any, tuple[str, str]] = {}  # sentinel -> ("row", key) | ("data", key) | ("member", "")
        counter = itertools.count(7_000_001, 2)
        data: dict[str, Any] = {}
        for key in spec.data_keys:
            if key in spec.optional and key not in present:
                continue
            if key == spec.list_key:
                data[key] = ["\x00member"]
                sentinels["\x00member"] = ("member", "")
            elif key == "dt":
                data[key] = []
            elif key in spec.fixed:
                data[key] = f"\x00{key}"
                sentinels[data[key]] = ("data", key)
            else:
                data[key] = next(counter)
                sentinels[data[key]] = ("data", key)
        seq0, time0 = next(counter), next(counter)
        sentinels[seq0], sentinels[time0] = ("row", "seq0"), ("row", "time0")
        (decoded,) = decode_storage_record({"type": tag, "seq0": seq0, "time0": time0, "data": data})
        member = cast("dict[str, JsonValue]", decoded)  # (a row's member: an event object)
        paths: dict[tuple[str, str], tuple[str, ...]] = {}
        consts: list[Any] = []  # values the template holds that no literal states exactly (read as c[i])
        body = _template_source(member, sentinels, (), paths, consts)
        self.builder: Callable[[int, int, JsonObject, str], dict[str, Any]] = eval(  # noqa: S307 - generated here
            "lambda seq, time, d, member, c=c: " + body, {"__builtins__": {}}, {"c": tuple(consts)})
        self.member_type = member.get("type")
        self.seq_path, self.time_path = paths[("row", "seq0")], paths[("row", "time0")]
        self.member_path = paths[("member", "")]
        # Per-row values (turn, step, index, tool call id/name): shared by a row's members.
        self.per_row = [(key, p) for (kind, key), p in paths.items() if kind == "data"]
        # Load level: a member must be a plain log-only event whose only seed rule is the envelope.
        self.loadable = (
            type(self.member_type) is str
            and self.member_type not in rules.surface_types | _legacy_types() | _seed_checked(rules) | {_HEADER_TYPE}
            and not _reads_apart(rules)(self.member_type, None)
            and member.keys() <= rules.envelope_keys
            and "data" in member
            and "surfaceOp" not in member
            and "sourceEventSeqs" not in member
            and self.seq_path == ("seq",)
            and self.time_path == ("time",)
        )
        self.bounds: dict[tuple[str, ...], ScalarBounds] | None = None
        self.predicate: Callable[[Any], bool] | None = None
        # The verdict of everything that is neither varying nor per-row: the same for every member
        # of every row (the analysis proves no decision reads those values); learnt from the first
        # member whose varying and per-row values meet their bounds.
        self.constant: bool | None = None
        # What the schema analysis reads: one member with None at the varying and per-row paths, and those paths.
        self.template = _blank(member, set(paths.values()))
        self.analysed = (self.seq_path, self.time_path, self.member_path, *(p for _, p in self.per_row))
        if compiled is not None:
            self.predicate = compiled.predicate_for(member)
            stored = _stored_bounds(compiled, tag, present, self.template, self.analysed)
            if stored is not _NOT_STORED:
                self.bounds = cast("dict[tuple[str, ...], ScalarBounds] | None", stored)
            else:
                try:
                    self.bounds = varying_constraints(compiled, self.template, self.analysed)
                except Unsupported:
                    self.bounds = None
        # The checks that can fail at all: `_row_parts` already guarantees seq0 >= 0, the last
        # seq <= 2^53-1, times within +/-(2^53-1), string members and run-constant keys, numeric
        # turn/step/index; a bound that admits all of that is skipped.
        self.checks: list[tuple[str, Any, str]] = []
        self.reads_data = False
        if self.bounds is not None:
            b = self.bounds
            if not b[self.seq_path].admits_ints(0, _MAX):
                self.checks.append(("seq", b[self.seq_path], ""))
            if not b[self.time_path].admits_ints(-_MAX, _MAX):
                self.checks.append(("time", b[self.time_path], ""))
            if not b[self.member_path].admits_all_strings():
                self.checks.append(("members", b[self.member_path], ""))
            for key, path in self.per_row:
                trivial = b[path].admits_all_strings() if key in spec.fixed else b[path].admits_all_numbers()
                if not trivial:
                    self.checks.append(("value", b[path], key))
        self.reads_data = any(what == "value" for what, _, _ in self.checks)

    def members_valid(self, seqs: range, time0: int, tmin: int, tmax: int, data: JsonObject,
                      members: list[str]) -> bool:
        """Whether every member (of seqs ``seqs``: the rule table's `member_seqs`) satisfies the event schema (exact; a
        None plan answers False).

        verdict(member) = constant AND (each varying or per-row value meets its bounds).
        """
        if not self.bounds_ok(seqs, tmin, tmax, data, members):
            return False
        if self.constant is None:
            predicate = self.predicate
            self.constant = predicate is not None and bool(predicate(self.builder(seqs[0], time0, data, members[0])))
        return self.constant

    def bounds_ok(self, seqs: range, tmin: int, tmax: int, data: JsonObject | None, members: list[str]) -> bool:
        """Whether each varying and per-row value meets its bounds (`data` is only read when `reads_data`)."""
        if self.bounds is None or self.predicate is None:
            return False
        for what, bounds, key in self.checks:
            if what == "seq":
                ok = bounds.ints_ok(seqs[0], seqs[-1])
            elif what == "time":
                ok = bounds.ints_ok(tmin, tmax)
            elif what == "members":
                ok = bounds.strs_ok(members)
            else:
                ok = key not in data or bounds.value_ok(data[key])  # type: ignore[operator,index]
            if not ok:
                return False
        return True


_NOT_STORED = object()


def _stored_bounds(compiled: CompiledSchema, tag: str, present: frozenset[str], template: Any,
                   analysed: tuple[tuple[str, ...], ...]) -> Any:
    """The bounds `varying_constraints` gave for this row layout when the generated module was written (`pregen`:
    ``ROW_BOUNDS``, for the generated schemas only), None where it found the shortcut unprovable; `_NOT_STORED` when
    the module holds none for this schema, or holds one for another template or other paths (then it is analysed now:
    the analysis builds the oracle, a third of a short run's start-up)."""
    table = getattr(compiled, "row_bounds", None)
    entry = table.get((tag, tuple(sorted(present)))) if table else None
    if entry is None or entry[0] != template or entry[1] != analysed:
        return _NOT_STORED
    return None if entry[2] is None else {path: ScalarBounds(**fields) for path, fields in entry[2].items()}


def row_bounds_table(compiled: CompiledSchema) -> dict[tuple[str, tuple[str, ...]], tuple[Any, Any, Any]]:
    """For `pregen`: each row layout's (template, paths, bounds) as `RowPlan` analyses them for `compiled`, every
    set of optional keys; bounds as each `ScalarBounds`' fields (None: the analysis refused the shortcut)."""
    import dataclasses

    table: dict[tuple[str, tuple[str, ...]], tuple[Any, Any, Any]] = {}
    for tag, spec in sorted(_ROW_SPECS.items()):
        for count in range(len(spec.optional) + 1):
            for present in itertools.combinations(sorted(spec.optional), count):
                plan = RowPlan(tag, frozenset(present), compiled)
                bounds = None if plan.bounds is None else {
                    path: {f.name: getattr(b, f.name) for f in dataclasses.fields(b)} for path, b in plan.bounds.items()}
                table[(tag, present)] = (plan.template, plan.analysed, bounds)
    return table


def _template_source(value: Any, sentinels: dict[Any, tuple[str, str]], path: tuple[str, ...],
                     paths: dict[tuple[str, str], tuple[str, ...]], consts: list[Any]) -> str:
    """Python source that rebuilds `value` with the sentinels replaced by the builder's arguments.

    Spec data enters it only as values: the repr of a checked ``str``/``int``/``bool``/``None`` (a
    literal equal to it), anything else as ``c[i]``, an element of the constants the builder reads."""
    if type(value) in (int, str) and value in sentinels:
        kind, key = sentinels[value]
        paths[(kind, key)] = path
        return {"row": {"seq0": "seq", "time0": "time"}.get(key, ""), "data": f"d[{_literal(key)}]",
                "member": "member"}[kind]
    if type(value) is dict:
        items = ", ".join(f"{_literal(k)}: {_template_source(v, sentinels, path + (k,), paths, consts)}"
                          for k, v in value.items())
        return "{" + items + "}"
    if type(value) is list:
        return "[" + ", ".join(_template_source(v, sentinels, path + (str(i),), paths, consts)
                               for i, v in enumerate(value)) + "]"
    return _literal(value, consts)


def _literal(value: Any, consts: list[Any] | None = None) -> str:
    """The repr of a ``str``, ``bool``, ``None`` or machine-sized ``int``; else ``c[i]`` (with `consts`)."""
    if value is None or type(value) in (str, bool) or (type(value) is int and -(2**63) < value < 2**63):
        return repr(value)
    if consts is None:
        raise ValueError(f"a key of type {type(value).__name__} in a row template")
    consts.append(value)
    return f"c[{len(consts) - 1}]"


def _blank(value: Any, paths: set[tuple[str, ...]], path: tuple[str, ...] = ()) -> Any:
    """`value` with None at `paths` (the analysis proves no decision reads them)."""
    if path in paths:
        return None
    if type(value) is dict:
        return {k: _blank(v, paths, path + (k,)) for k, v in value.items()}
    return value


def row_members_ok(value: dict[str, JsonValue], compiled: CompiledSchema) -> bool | None:
    """For tests: the family verdict of a row's members (None when the row is malformed)."""
    tag, seq0 = value.get("type"), value.get("seq0")
    if type(tag) is not str or tag not in _ROW_SPECS or type(seq0) is not int:
        return None
    spec = _ROW_SPECS[tag]
    shape = _row_parts(value, spec)
    if shape is None:
        return None
    data, members, seqs, (tmin, tmax, _) = shape
    plan = RowPlan(tag, frozenset([k for k in spec.optional if k in data]), compiled)
    return plan.members_valid(seqs, cast(int, value["time0"]), tmin, tmax, data, members)


# ----------------------------------------------------------------------------- the loop


class _GiveUp(Exception):
    """The log is not provably clean: the exact path must explain it."""


_AT_VALUE = re.compile(r"at `\$\[(\d+)\]")  # a decode_lines ValidationError: the index of the value at fault
_AT_BYTE = re.compile(r"\(byte (\d+)\)")  # a DecodeError: the offset of the malformed byte


def _failed_line(text: bytes, error: Exception) -> int:
    """The start of the line of `text` that msgspec's `error` names (0 when it names none: the first line, read
    alone, is then taken and the batch goes on after it). A value index counts the lines before it only when none
    of them is blank; a cut too early costs a line read alone, never a verdict."""
    message = str(error)
    found = _AT_VALUE.search(message)
    if found is not None:
        start, skip = 0, int(found.group(1))
        for _ in range(skip):
            start = text.find(b"\n", start) + 1
            if start == 0:
                return 0
        return start if start < len(text) else 0
    found = _AT_BYTE.search(message)
    if found is not None and int(found.group(1)) < len(text):
        return text.rfind(b"\n", 0, int(found.group(1))) + 1
    return 0


#: the encoder of plain values whose texts the generated types' encoder writes (`Pass._laid_out`)
_ENCODER = msgspec.json.Encoder()
#: the canonical text of values in any member order (`Pass._laid_out`)
_SORTED = orjson.OPT_SORT_KEYS | orjson.OPT_STRICT_INTEGER


def _trusted(raw: bytes, number: int) -> Any:
    """The value of a line known to be lossless JSON, or `_GiveUp`."""
    findings: list[Finding] = []
    value = parse_line(raw, number, findings)
    if findings or not isinstance(value, (dict, list, str, int, float, bool, type(None))):
        raise _GiveUp
    return value


def check_clean(data: bytes | Iterable[bytes], name: str, level: str, schemas: SchemaSet | None,
                progress: Callable[[int, int], None] | None = None, size: int | None = None,
                revision: RevisionLike = None, detection: InlineDetection | None = None) -> CleanLog | None:
    """A `CleanLog` when the exact path would report nothing for this JSONL artifact, else None.

    `data` is the whole artifact or its bytes in consecutive blocks (a file read piece by piece):
    the pass keeps one block, the surface and the open turn, never the log. `size` (the total, when
    known) scales `progress`, which is called with bytes done and bytes in all. `revision` (default:
    the pinned one) is the revision the log is checked at (`proves`): its rules, and its load path's
    reading of stored records (JSONL-13..15: upgrades, refusals) record by record. `detection`, when given, is
    fed every line revision detection reads, as the pass parses it (valid when the pass returns a `CleanLog`).
    """
    if not proves(revision) or not is_own("check_seed_entry"):
        # (the seed entry, SEED-11: what the generated types prove of the seed rules, the envelope of every type and
        # SEED-6 of a flat assistant message, and that no other seed rule looks into a type's data, is proved about the
        # reference's own entry; under a variant of it the exact path decides)
        return None
    blocks = (data,) if isinstance(data, bytes) else data
    try:
        with gc_paused():
            return _check(iter(blocks), name, level, schemas, progress,
                          len(data) if isinstance(data, bytes) else size, rules_for(revision), detection)
    except (_GiveUp, SessionSpecError, RecursionError):
        return None
    except (TypeError, ValueError, KeyError, OverflowError):
        # Hostile values (an unhashable tag, a huge number) can reach corners no check anticipated:
        # the exact path explains them. Never AttributeError: the pass uses public names only.
        return None


def proves(revision: RevisionLike = None) -> bool:
    """Whether the pass can prove a log clean at ``revision``: at every revision the spec describes.

    It reads what differs from the revision's `Rules` (surface types, envelope keys, time bounds, the message
    shape's seed check, INV-10) and takes every record of a type its load path may read apart (JSONL-13..15: the
    load path's own test, `StoredReader.reads_apart`) through the load path's own reader (`StoredReader.read`)
    before any other check, so the records it checks are the ones the exact path checks (``tests/cli/test_fastlog.py``
    holds it to the exact path at every revision, and under variants of that test).
    """
    try:
        rules_for(revision)
    except SessionSpecError:  # a revision the spec does not describe: the exact path says so
        return False
    return True


#: Bytes of the open turn's lines kept for the crash-tail check; a longer open turn gives the log to the
#: exact path instead of growing the pass's memory without bound.
TAIL_LIMIT = 64 << 20


# Struct kinds: how a line accepted by the generated msgspec types is checked (see `_struct_kinds`).
_LOG_ONLY, _SURFACE_EVENT, _SURFACE_TYPED, _ROW_TYPED, _CONVERT, _TURN_START = range(6)
# A surface struct of a type the load path's reader reads apart (its message check, JSONL-13/14): read by the reader
# first (`_Pass._read_surface_struct`), then as `_SURFACE_EVENT` / `_SURFACE_TYPED`.
_READ_SURFACE_EVENT, _READ_SURFACE_TYPED = 6, 7
# A log-only struct of a type whose seed rules look into its data (SEED-4 ... SEED-8: turn/end, request/header): read by
# the load path's reader when it has one, then asked the seed entry (`_Pass._seed_struct`), the rest from its type.
_SEED_EVENT = 8


def _row_struct_typed(data: Any, spec: Any) -> bool:
    """Whether a row's data struct (generated from the row schema by `mstypes`) guarantees the reference's own
    ``row_shape`` (CHUNK-9's storage shape) of every row it decodes: the typed rows (`_Pass._typed_row`).

    Member texts are strings, gaps are ints within +/-(2^53-1), turn/step/index are ints or
    floats (msgspec never yields a non-finite float), run-constant keys are strings; its fields
    are the layout's data keys, the optional ones exactly those that may be missing (UNSET).
    """
    fields = {f.name: f for f in data.fields}
    if (any(f.name != f.encode_name for f in data.fields) or set(fields) != set(spec.data_keys)
            or {f.name for f in data.fields if not f.required} != set(spec.optional)):
        return False

    def kinds(t: Any) -> list[Any]:
        return list(t.types) if isinstance(t, msgspec.inspect.UnionType) else [t]

    def only(t: Any, classes: tuple[type, ...]) -> bool:
        return all(isinstance(k, classes) for k in kinds(t))  # (UNSET defaults are not part of the type)

    members, dt = fields.get(spec.list_key), fields.get("dt")
    return (
        members is not None and dt is not None
        and isinstance(members.type, msgspec.inspect.ListType) and isinstance(members.type.item_type, msgspec.inspect.StrType)
        and isinstance(dt.type, msgspec.inspect.ListType) and _int_field(dt.type.item_type, -_MAX, _MAX)
        and all(k in fields and only(fields[k].type, (msgspec.inspect.IntType, msgspec.inspect.FloatType)) for k in _NUMBER_KEYS)
        and all(only(fields[k].type, (msgspec.inspect.StrType,)) for k in spec.fixed if k in fields)
    )


def _int_field(kind: Any, low: int, high: int) -> bool:
    """A msgspec int type whose bounds lie within [low, high]."""
    if not isinstance(kind, msgspec.inspect.IntType):
        return False
    lo = kind.ge if kind.ge is not None else (kind.gt + 1 if kind.gt is not None else None)
    hi = kind.le if kind.le is not None else (kind.lt - 1 if kind.lt is not None else None)
    return lo is not None and hi is not None and lo >= low and hi <= high


def _distinct_seq_list(cls: type, info: Any) -> bool:
    """Whether a struct's ``sourceEventSeqs`` admits only lists of distinct ints within [0, 2^53-1] (bounds on its
    type, distinctness by the generated ``__post_init__``): what ``SurfaceState.try_append(distinct_ints=True)``
    takes as given."""
    field = next((f for f in info.fields if f.name == "sourceEventSeqs"), None)
    unique = getattr(getattr(cls, "__post_init__", None), "checks", ((),))[0]
    return (field is not None and field.encode_name == field.name and isinstance(field.type, msgspec.inspect.ListType)
            and _int_field(field.type.item_type, 0, _MAX) and field.name in unique)


def _required_str(info: Any, name: str) -> bool:
    field = next((f for f in info.fields if f.name == name and f.encode_name == name), None)
    kind = field.type if field is not None else None
    return bool(field and field.required and isinstance(kind, msgspec.inspect.StrType) and (kind.min_length or 0) >= 1)


def _struct_kinds(fast: Any, rules: Rules | None = None) -> dict[type, int]:
    """For each generated struct, the cheapest exact way to apply the load rules to it.

    Acceptance by a struct implies the schema, so some load rules hold by construction; each
    such implication is *checked here on the generated type* (not assumed): the envelope keys
    and the seq/time bounds (SEED-3), the provider/model of an assistant message (SEED-6).
    Whatever cannot be shown takes `_CONVERT`: a plain dict, then the dict path's rules (at ``rules``' revision:
    its envelope keys and time bounds, its surface types, the types its seed rules or load path read into).
    """
    rules = rules_for(rules)
    envelope, surface, data_checked = rules.envelope_keys, rules.surface_types, _seed_checked(rules)
    reads_apart = _reads_apart(rules)
    # The message types, where the load path's reader makes the message shape's check on every record it reads
    # (`UpgradeReader.read`): a struct of one is read by that reader and asked the seed entry as the dict path asks it
    # (`_read_surface_struct`), the rest of its rules as for any struct.
    reader_checked = rules.messages.seed_types if rules.load_upgrade is not None else _NONE
    # The log-only types whose seed rules look into their data: a struct of one takes `_seed_struct`, which reads it as the
    # dict path does (the load path's reader, then the rule table's seed entry); what else the dict path checks follows
    # from the type as for any struct.
    seed_read = (SEED_DATA_RULE_TYPES & data_checked) - reader_checked - surface
    (seq_low, seq_high), (time_low, time_high) = rules.seq_range, rules.time_range  # SEED-3's bounds
    kinds: dict[type, int] = {}
    for (cls, tag), info in zip(fast.tags.items(), _type_infos(fast)):
        fields = {f.name: f for f in info.fields}
        plain = all(f.name == f.encode_name for f in info.fields)
        if tag in fast.rows:
            ok = plain and set(fields) == {"seq0", "time0", "data"} and all(f.required for f in info.fields)
            ok = ok and isinstance(fields["data"].type, msgspec.inspect.StructType)
            kinds[cls] = _ROW_TYPED if ok and _row_struct_typed(fields["data"].type, _ROW_SPECS[tag]) else _CONVERT
            continue
        payload = _payload_members(fields["data"].type) if "data" in fields else None
        read = tag in reader_checked and tag in surface
        seeded = tag in seed_read
        envelope_ok = (
            plain
            and set(fields) <= envelope - {"type"}
            and all(k in fields and fields[k].required for k in ("seq", "time", "data"))
            and _int_field(fields["seq"].type, seq_low, seq_high)
            and _int_field(fields["time"].type, time_low, time_high)
            and tag not in _legacy_types() | (data_checked - reader_checked if read else data_checked - seed_read)
            | {_HEADER_TYPE}
            and (read or seeded or not reads_apart(tag, payload))
        )
        if not envelope_ok:
            kinds[cls] = _CONVERT
        elif seeded:
            kinds[cls] = _SEED_EVENT if not {"surfaceOp", "sourceEventSeqs"} & set(fields) else _CONVERT
        elif tag in TURN_BOUNDARIES:  # (a turn/start) the crash tail's suffix starts at it
            kinds[cls] = _TURN_START if not {"surfaceOp", "sourceEventSeqs"} & set(fields) else _CONVERT
        elif tag in surface:
            seed_ok = True
            if tag == "assistant/message" and not read:  # SEED-6 must follow from the type (else the reader checks it)
                data = fields["data"].type
                prov = next((f for f in data.fields if f.name == "provenance"), None) if isinstance(
                    data, msgspec.inspect.StructType) else None
                prov_type = prov.type if prov is not None else None
                seed_ok = bool(prov and prov.required and prov.encode_name == "provenance"
                               and isinstance(prov_type, msgspec.inspect.StructType)
                               and _required_str(prov_type, "provider") and _required_str(prov_type, "model"))
            if not (seed_ok and "surfaceOp" in fields):
                kinds[cls] = _CONVERT
            elif "sourceEventSeqs" not in fields or _distinct_seq_list(cls, info):
                kinds[cls] = _READ_SURFACE_TYPED if read else _SURFACE_TYPED
            else:
                kinds[cls] = _READ_SURFACE_EVENT if read else _SURFACE_EVENT
        elif "surfaceOp" in fields or "sourceEventSeqs" in fields:
            kinds[cls] = _CONVERT
        else:
            kinds[cls] = _LOG_ONLY
    return kinds


def _payload_members(kind: Any) -> frozenset[str] | None:
    """The members a struct's payload can hold: its fields' JSON names (None: a payload of no struct type)."""
    return frozenset(f.encode_name for f in kind.fields) if isinstance(kind, msgspec.inspect.StructType) else None


#: Bytes of whole lines decoded and verified with one call each way: a group the generated types refuse (or
#: holding a line that is not canonical) is read again line by line, so this bounds the work a doubtful line repeats.
GROUP_BYTES = 64 << 10


class _Pass:
    """One accept-fast pass over a log: its state and the steps that advance it.

    The steps, in the order a line meets them: `header` (the first line, with the exact path's own
    checks); `block` (a piece of the file: the line the previous piece cut, then the rest); `region`
    (complete lines: the ``-0.0`` scan, groups, the open turn's lines); `group` (64 KiB of lines
    decoded and verified with one call each way); `structs` (the load rules on verified structs, a
    log-only event inline, a step per other kind); `line` (one line of a group that could not be
    taken whole: the structs, else `json_text.loads`); `event` and `row` (the rules on a plain event or a
    chunk row); `finish` (the crash-tail warnings). ``expected`` (the next seq) is the state every
    step advances.
    """

    def __init__(self, name: str, level: str, schemas: SchemaSet | None,
                 progress: Callable[[int, int], None] | None, total: int | None, rules: Rules | None = None,
                 detection: InlineDetection | None = None) -> None:
        self.name, self.level, self.schemas = name, level, schemas
        rules = self.rules = rules_for(rules)
        self.surface_types = rules.surface_types
        self.looked_into = _looked_into(rules)
        self.legacy = _legacy_types()
        # SEED-3: the envelope's seq and time bounds (the revision's statement of them), which a packed row's lowest
        # and highest member seq and time meet for its members to take the family step
        (self.seq_low, self.seq_high), (self.time_low, self.time_high) = rules.seq_range, rules.time_range
        self.progress = progress if progress is not None and total else None
        self.total = total or 0
        core = schemas if schemas is not None else _core_schema_set(rules.id)
        compiled = schemas.event if schemas is not None and level != "load" else None
        self.compiled = compiled
        self.by_tag = compiled.by_tag if compiled is not None else {}
        self.generic = compiled.predicate if compiled is not None else None
        self.row_compiled = compiled if compiled is not None else core.event  # member checks of struct rows
        self.plans = _plans_for(self.row_compiled, rules)
        self.strict = level == "strict"
        fast = self.fast = core.fast_types if msgspec is not None else None
        checker = Checker(level, schemas, rules) if compiled is not None else None
        # EVENT_TYPE_UNREGISTERED: the exact path's set (`Checker.registered_types`); a struct, event or row member of a
        # type outside it gives up (the exact path warns, once per type): its struct takes the dict path
        registered = self.registered = (checker.registered_types() or frozenset()) if checker is not None else frozenset()
        kinds = _kinds_of(fast, rules) if fast is not None else {}
        if fast is not None and checker is not None:
            kinds = {cls: kind if fast.tags[cls] in registered or fast.tags[cls] in fast.rows else _CONVERT
                     for cls, kind in kinds.items()}
            # (the dict path gives up on a type with no predicate of its own in the event schema: so does its struct)
            kinds = {cls: kind if kind != _SEED_EVENT or fast.tags[cls] in self.by_tag else _CONVERT
                     for cls, kind in kinds.items()}
        self.tags: dict[type, str] = dict(fast.tags) if fast is not None else {}  # struct class -> tag (member order variants too)
        self.members: dict[str, type] = {tag: cls for cls, tag in self.tags.items()}  # the decoder's struct of each tag
        self.adopted = False  # a new struct order adopted in the current group (`_adopt`): its rest is decoded again
        self.orders: set[type] = set()  # the struct variants adopted so far
        self.laid_out = False  # the last line `line` read was in another writer's layout (`_laid_out`)
        self.decode = fast.decoder.decode if fast is not None else None
        self.encode = fast.encoder.encode if fast is not None else None
        self.decode_lines = fast.decoder.decode_lines if fast is not None else None
        self.encode_lines = fast.encoder.encode_lines if fast is not None else None
        # Log-only events take no step at the schema level (the loop checks their seq inline); at strict
        # they go through `_strict_log_only` for the INV fold.
        # Revision detection fed by the pass (`detection`): the structs whose lines it reads (a canonical line starts
        # with its type, so its struct's class decides), each handed over as its value; its own step when log-only.
        self.detection = detection
        self.picked: frozenset[Any] = frozenset(
            cls for cls, tag in fast.tags.items() if detection.picks(b'{"type":' + msgspec.json.encode(tag) + b",")
        ) if detection is not None and fast is not None else frozenset()
        self.converted: tuple[Any, Any] = (None, None)  # the last picked struct and its value (`_convert_struct`)
        self.feed: Callable[[int, object], None] | None = (
            detection.struct_feeder(self.tags, self._detected_data, rules.id)
            if detection is not None and self.picked else None)
        self.log_only: frozenset[Any] = frozenset(
            cls for cls, kind in kinds.items() if kind == _LOG_ONLY and not self.strict and cls not in self.picked)
        # A typed row's storage shape is proved by its struct type about the reference's own `row_shape` (CHUNK-9):
        # under a table with another (a variant), every row takes the dict path, which asks that entry.
        typed_shape = is_own("row_shape")
        steps: dict[int, Callable[[Any, int], None]] = {
                 _LOG_ONLY: self._strict_log_only if self.strict else self._log_only_struct, _SURFACE_EVENT: self._surface_struct,
                 _SURFACE_TYPED: functools.partial(self._surface_struct, distinct=True),
                 _ROW_TYPED: self._convert_struct if not typed_shape else self._row_struct if self.strict else self._typed_row,
                 _TURN_START: self._turn_start_struct, _CONVERT: self._convert_struct,
                 _READ_SURFACE_EVENT: self._read_surface_struct,
                 _READ_SURFACE_TYPED: functools.partial(self._read_surface_struct, distinct=True),
                 _SEED_EVENT: self._seed_struct}
        self.handlers: dict[type, Callable[[Any, int], None]] = {
            cls: steps[kind] for cls, kind in kinds.items() if cls not in self.log_only}
        self.typed_rows = frozenset(cls for cls, kind in kinds.items() if kind == _ROW_TYPED) if typed_shape else frozenset()
        self.in_step_classes: frozenset[Any] = _in_step_classes(fast) if fast is not None and self.strict else frozenset()
        self.kept: dict[int, Any] = {}  # tool/result events by seq (dicts or structs), for SURF-10
        self.surface = SurfaceState(self._lookup, rules)
        self.inv = InvariantFold(revision=rules)  # INV-*: a mutable fold, advanced in place
        # JSONL-13..15: the load path's reading of each record the dict path takes (None: records read as stored;
        # made with the header's session id); the types a registry adds are known to it, as to the exact path's.
        # (only the types a registry adds to the revision's own: the revision's registry is the load path's, so a
        # variant of it is followed here too)
        self.extra_types = frozenset(schemas.spec.events) - rules.known_types if schemas is not None else frozenset()
        self.reader: StoredReader | None = None
        self.messages_read = False
        # DEC-24: earlier-format records kept as stored (valid at the parent revision), by type
        self.kept_as_stored: dict[str, int] = {}
        self.earlier = checker.earlier_schemas() if checker is not None else None
        self.expected = 0  # the seq the next event must have (JSONL-7)
        # JSONL-7: whether a record is in place is the load path's own statement (`jsonl_read.in_place`), and whether
        # a packed row's members are (`jsonl_read.row_in_place`, of their seqs: the rule table's `member_seqs`)
        self.in_place, self.row_in_place = jsonl_read.in_place, jsonl_read.row_in_place
        self.member_seqs = TABLE.member_seqs
        self.rows = 0
        # REPAIR-6: the crash tail's check runs on the events from the last turn boundary on (`repair.TURN_BOUNDARIES`:
        # the closers' scan resets there), or on every event when the log has none
        self.turn_line = 1  # index (0 = header) of the line of the last turn boundary, else of the first event
        self.tail: list[tuple[bytes, int, int]] = []  # regions from that line on (the crash-tail check)
        self.tail_bytes = 0
        self.tail_lost = False  # the suffix outgrew TAIL_LIMIT: the crash tail then goes to the exact path
        # The generated types cannot hold -0.0 (`_no_negative_zero`): accepted structs need no scan for it.
        self.scan_neg_zero = fast is None or not _no_negative_zero_of(fast)
        self.neg_zero = False  # the current block holds "-0.0" somewhere (when scanned)
        self.carry = b""  # a line cut by the end of a block
        self.base = 1  # lines before the current block (the header is line 1)
        # JSONL-3: lines ending in CRLF (their CR removed: `_without_crlf`), the first one's number, the CRs removed,
        # and whether the last piece ended in a CR
        self.crlf = self.first_crlf = self.removed = 0
        self.cr_pending = False
        self.done = 0  # bytes before the current block

    def _lookup(self, seq: int) -> Any:
        found = self.kept.get(seq)
        return found if found is None or type(found) is dict else msgspec.to_builtins(found)

    # -- the first line ---------------------------------------------------------------------

    def header(self, blocks: Iterator[bytes]) -> bytes:
        """Check the header line (the exact path's own checks on a one-line log); the bytes after it."""
        first = b""
        for block in blocks:  # up to the end of the header line
            first += block
            if b"\n" in block:
                break
        if not first or jsonl_read.holds_event_array(first):
            raise _GiveUp  # empty, or a JSON array of events: the exact path (a BOM: the header is not lossless JSON)
        header_raw, newline, rest = first.partition(b"\n")
        if not newline:
            raise _GiveUp
        if jsonl_read.may_hold_crlf(header_raw):  # JSONL-3: a CRLF line end, which the exact path warns of
            if header_raw.find(b"\r") != len(header_raw) - 1:
                raise _GiveUp  # (a CR within the line)
            header_raw = header_raw[:-1]
            first = header_raw + b"\n" + rest
            self.crlf, self.first_crlf, self.removed = 1, 1, 1
        reading = jsonl_read.read_header_line(first, every_defect=True)  # the exact path's reading of line 1 (JSONL-2)
        if reading.findings or not reading.ok:
            raise _GiveUp
        header = reading.value
        if self.detection is not None and self.detection.picks(header_raw):
            self.detection.feed(1, header)
        probe = LoadedLog(name=self.name, kind="jsonl", size=len(header_raw) + 1, header_line=header, header_ok=True)
        Checker(self.level, self.schemas, self.rules).check_header(probe)
        if probe.findings:
            raise _GiveUp
        reader = StoredReader(header["id"] if type(header.get("id")) is str else "", None, self.rules, self.extra_types)
        self.reader = reader if reader.active else None
        # the load path's reader checks each record it reads with this revision's message shape (SEED-18, SEED-6:
        # `UpgradeReader.read`), as the rule table's entry does
        self.messages_read = reader.reader is not None and reader.reader.messages is self.rules.messages
        self.done = len(header_raw) + 1
        return rest

    # -- pieces of the file -----------------------------------------------------------------

    def block(self, piece: bytes) -> None:
        """The next piece of the file: the line the previous piece cut, then its complete lines (no copy of it)."""
        if self.cr_pending or jsonl_read.may_hold_crlf(piece):
            piece = self._without_crlf(piece)
        start = 0
        if self.carry:
            newline = piece.find(b"\n")
            if newline < 0:
                self.carry += piece
                return
            start = newline + 1
            head = self.carry + piece[:start]
            self.region(head, 0, len(head))
        cut = piece.rfind(b"\n") + 1
        self.carry = piece[max(cut, start):]  # b"" after a newline; at the end, a torn final fragment (JSONL-4)
        if cut > start:
            self.region(piece, start, cut)

    def _without_crlf(self, piece: bytes) -> bytes:
        """``piece`` with the CR of each CRLF line end removed, counted for JSONL-3's warning (the exact path's, made by
        `jsonl_read.crlf_finding` in `finish`): the lines are then the ones the exact path reads, the CR being white
        space after each value. A CR anywhere else is the exact path's (`_GiveUp`); one that ends the piece waits for
        the next one's newline."""
        if self.cr_pending:
            if not piece.startswith(b"\n"):
                raise _GiveUp
            self.cr_pending = False
            self._count_crlf(1, self.base + 1)  # (the line the last piece left in `carry`)
        crs = piece.count(b"\r")
        if not crs:
            return piece
        pairs = piece.count(b"\r\n")
        self.cr_pending = piece.endswith(b"\r")
        if crs != pairs + self.cr_pending:
            raise _GiveUp  # (a CR within a line)
        if pairs:
            self._count_crlf(pairs, self.base + 1 + piece.count(b"\n", 0, piece.find(b"\r\n")))
        self.removed += crs
        stripped = piece.replace(b"\r\n", b"\n")
        return stripped[:-1] if self.cr_pending else stripped

    def _count_crlf(self, count: int, line: int) -> None:
        if not self.crlf:
            self.first_crlf = line
        self.crlf += count

    def region(self, buf: bytes, lo: int, hi: int) -> None:
        """The complete lines ``buf[lo:hi]`` (`hi` follows a newline), group by group."""
        self.neg_zero = self.scan_neg_zero and json_text.may_hold_negative_zero(buf, lo, hi)
        base = index = self.base
        progress, done = self.progress, self.done - lo
        pos = lo
        while pos < hi:
            if progress is not None:
                progress(done + pos, self.total)
            end = buf.find(b"\n", pos + GROUP_BYTES, hi)
            end = hi if end < 0 else end + 1
            index += self.group(buf[pos:end], index)
            pos = end
        self._keep_tail(buf, lo, hi, base)
        self.base = index
        self.done += hi - lo

    def _keep_tail(self, buf: bytes, lo: int, hi: int, base: int) -> None:
        """Keep the lines from the last turn boundary on for the crash-tail check, up to TAIL_LIMIT.

        Whole regions are kept by reference (`_tail_lines` finds the boundary's line in the first one at the end),
        so this costs nothing per line.
        """
        if self.turn_line >= base:  # a boundary in this region
            self.tail = [(buf, lo, hi)]
            self.tail_bytes = hi - lo
            self.tail_lost = False
        elif not self.tail_lost:
            self.tail.append((buf, lo, hi))
            self.tail_bytes += hi - lo
        if self.tail_bytes > TAIL_LIMIT:
            self.tail.clear()
            self.tail_bytes = 0
            self.tail_lost = True

    def group(self, text: bytes, index: int) -> int:
        """Complete lines from line `index` (0 = header) on: decoded by the generated types and re-encoded to
        themselves (lossless JSON) with one call each way. A line that cannot be taken so costs only itself (no
        cliff): the lines before it are taken as verified, it is read alone (`line`), and the batch goes on after
        it (its structs verified against the text after the line, or the rest decoded again after a decoding
        error). Returns the number of lines."""
        taken = 0
        while text:
            try:
                objs = self.decode_lines(text) if self.decode_lines is not None else None
                error: Exception | None = None
            except msgspec.MsgspecError as exc:
                objs, error = None, exc
            if objs is None:
                cut = _failed_line(text, error) if error is not None else 0
                if cut:  # the lines before the one msgspec names: decoded and verified by themselves
                    taken += self.group(text[:cut], index + taken)
            else:
                # `encode_lines` writes each struct's canonical JSON and a newline: equal bytes mean each line is
                # exactly one struct's canonical form (blank lines, spaces, escapes, duplicate keys all differ).
                # Offsets into both (no copy of the rest after each doubtful line): `pos` in the text, `at` in the
                # encoding, `first` the struct of the line at `pos`.
                encoded = self.encode_lines(objs)
                pos = at = first = 0
                tried = False  # (the rest of the group proved in another writer's layout at once: once a decoding)
                while True:
                    doubt = self._doubtful(encoded, at, text, pos)
                    verified = len(objs) - first if doubt is None else text.count(b"\n", pos, doubt)
                    if verified:
                        self.structs(objs[first:first + verified] if first or doubt is not None else objs, index + taken)
                        taken += verified
                    if doubt is None:
                        return taken
                    end = text.index(b"\n", doubt) + 1
                    taken += 1
                    # the structs after it against the text after it: equal bytes prove those lines, whichever
                    # struct the doubtful line decoded to
                    at_line = at + (doubt - pos)
                    after = encoded.find(b"\n", at_line) + 1
                    k = first + verified
                    laid = bool(after) and k < len(objs) and self._laid_out(text[doubt:end], encoded[at_line:after],
                                                                            objs[k:k + 1], any_order=False)
                    if laid:
                        self.structs(objs[k:k + 1], index + taken - 1)  # another writer's layout: its struct still
                    else:
                        self.line(text[doubt:end - 1], index + taken)  # (which tries another member order first)
                    pos = end
                    if not after or pos >= len(text) or self.adopted:
                        self.adopted = False  # (a struct in another member order: the rest decoded by it)
                        break
                    first, at = first + verified + 1, after
                    if (laid or self.laid_out) and not tried:  # another writer's layout: the rest of the group too?
                        tried, self.laid_out = True, False
                        if self._laid_out(text[pos:], encoded[at:], objs[first:]):
                            self.structs(objs[first:], index + taken)
                            return taken + len(objs) - first
                text = text[pos:]
                continue
            end = text.index(b"\n", cut) + 1
            taken += 1
            self.line(text[cut:end - 1], index + taken)
            text = text[end:]
        return taken

    def _laid_out(self, text: bytes, encoded: bytes, objs: list[Any], any_order: bool = True) -> bool:
        """Whether ``objs``, the structs ``encoded`` encodes (a line each), hold the values of the lines of ``text``
        (whole lines), each read alone, line for line, member for member (in the line's order, or in another when
        ``any_order``: DEC-4, member order is no rule), and each line is lossless JSON (`json_text.lossless`, of the
        lines their structs write back) or lossless JSON in another writer's layout (`json_text.laid_out`, of the
        others together): the structs are then the values the exact path reads."""
        lines = text.split(b"\n")
        lines.pop()  # (after the last newline)
        try:
            values = list(map(json_text.fast_loads, lines))
            if _ENCODER.encode_lines(values) != encoded and not (any_order and (  # (not in the structs' member order)
                    orjson.dumps(values, option=_SORTED) == orjson.dumps(msgspec.to_builtins(objs), option=_SORTED))):
                return False
        except (*json_text.FAST_DECLINED, orjson.JSONEncodeError):
            return False
        written = encoded.split(b"\n")
        same = b"\n".join([line for line, back in zip(lines, written) if line == back])
        return (json_text.laid_out(text, encoded, negative_zero=self.scan_neg_zero)
                and (not same or json_text.lossless(same, same, negative_zero=self.neg_zero)))

    def _doubtful(self, encoded: bytes, at: int, text: bytes, pos: int) -> int | None:
        """The start of the first line of ``text[pos:]`` that is not lossless JSON by its struct's re-encoding in
        ``encoded[at:]``: the reference's statement (`json_text.first_lossy_line`), with no scan for ``-0.0`` where the
        generated types cannot hold one and the block holds none (`scan_neg_zero`); None when every line is."""
        return json_text.first_lossy_line(text, pos, encoded, at, negative_zero=self.neg_zero)

    def line(self, raw: bytes, number: int) -> None:
        """One line by itself: a generated struct when it verifies, else the value the one parsing path reads
        (`json_text.loads`, through `parse_line`), when it reports no anomaly."""
        typed = False
        if self.decode is not None:
            try:
                obj = self.decode(raw)
            except msgspec.MsgspecError:
                obj = None
            if obj is not None:
                encoded = self.encode(obj)
                if json_text.lossless(raw, encoded, negative_zero=self.neg_zero):
                    self.structs([obj], number - 1)
                    return
                # A struct accepted the line but writes it otherwise (its members in another order: the package
                # writes an assistant message's before its usage): the struct still proves the event's schema, and
                # the one parsing path below proves the line lossless, so its value is the struct's. The same struct
                # in the line's member order (`in_key_order`), when it writes the line back, is taken by the decoder
                # from here on, so the lines of that writer take the batch again.
                ordered = self._in_line_order(obj, raw)
                if ordered is not None:
                    self.structs([ordered], number - 1)
                    return
                if self._laid_out(raw + b"\n", encoded + b"\n", [obj]):  # another writer's layout
                    self.laid_out = True  # (`group` then tries the rest of the group so)
                    self.structs([obj], number - 1)
                    return
                typed = True
        value = _trusted(raw, number)
        if self.detection is not None and self.detection.picks(raw):
            self.detection.feed(number, value, self.rules.id if typed else None)
        if type(value) is not dict:
            raise _GiveUp
        tag = value.get("type")
        spec = _ROW_SPECS.get(tag) if type(tag) is str else None
        if spec is None:
            self.event(value, number - 1, checked=typed)
            return
        self.row(spec, value, number - 1)

    def _in_line_order(self, obj: Any, raw: bytes) -> Any:
        """`raw` decoded by `obj`'s struct in the line's member order when that struct writes it back (the decoder
        then takes that struct for its tag: `_adopt`), else None. Member order is no rule: an evaluation only."""
        from sessionspec.validator.mstypes import in_key_order, union_decoder  # (a log in another member order)

        try:
            order = json_text.loads(raw)
        except JsonTextError:
            return None
        cls = obj.__class__
        variant = in_key_order(cls, order)
        if variant is None or variant is cls:
            return None
        try:
            ordered = union_decoder((variant,)).decode(raw)
        except msgspec.MsgspecError:  # pragma: no cover - the same field types as the struct that decoded it
            return None
        if not json_text.lossless(raw, self.encode(ordered), negative_zero=self.neg_zero):
            return None
        self._adopt(variant, cls)
        return ordered

    def _adopt(self, variant: Any, cls: Any) -> None:
        """Decode `cls`'s tag as `variant` (the same struct in another member order) from here on: it takes every
        step and table `cls` has."""
        from sessionspec.validator.mstypes import union_decoder

        tag = self.tags[cls]
        self.tags[variant] = tag
        for name in ("log_only", "picked", "typed_rows", "in_step_classes"):
            classes = getattr(self, name)
            if cls in classes:
                setattr(self, name, classes | {variant})
        if cls in self.handlers:
            self.handlers[variant] = self.handlers[cls]
        self.members[tag] = variant
        decoder = union_decoder(tuple(self.members.values()))
        self.decode, self.decode_lines = decoder.decode, decoder.decode_lines
        # The rest of the group is decoded again the first time only: a log that goes back and forth between two
        # orders pays each switching line (read alone), never a group per line.
        self.adopted = variant not in self.orders
        self.orders.add(variant)

    # -- verified structs -------------------------------------------------------------------

    def structs(self, objs: list[Any], index: int) -> None:
        """Structs accepted by the generated types and canonical (schema-valid, lossless JSON), from line `index`.

        A log-only event (most of a log: chunks) costs a seq test here; the other kinds have their step.
        """
        log_only, handlers, picked, in_place, feed = self.log_only, self.handlers, self.picked, self.in_place, self.feed
        expected = self.expected
        for i, obj in enumerate(objs, index):
            if obj.__class__ in log_only:
                if not in_place(obj.seq, expected):
                    raise _GiveUp  # JSONL-7
                expected += 1
                continue
            if obj.__class__ in picked:  # (a canonical line: its value is the struct's, as detection parses it)
                feed(i + 1, obj)  # type: ignore[misc]
            self.expected = expected
            handlers[obj.__class__](obj, i)
            expected = self.expected
        self.expected = expected

    def _detected_data(self, obj: Any) -> Any:
        """The payload of a picked struct as detection reads it (its value's, kept for the struct's own step)."""
        value = msgspec.to_builtins(obj)
        self.converted = (obj, value)
        return value.get("data")

    def _log_only_struct(self, obj: Any, index: int) -> None:
        """A log-only event at the load and schema levels that detection reads (`structs` inlines the others)."""
        if not self.in_place(obj.seq, self.expected):
            raise _GiveUp  # JSONL-7
        self.expected += 1

    def _strict_log_only(self, obj: Any, index: int) -> None:
        """A log-only event at the strict level: its seq, then the INV fold (from the struct when it can)."""
        seq = obj.seq
        if not self.in_place(seq, self.expected):
            raise _GiveUp  # JSONL-7
        if not (obj.__class__ in self.in_step_classes and self.inv.in_step(seq, obj.data.turn, obj.data.step)) and (
                self.inv.step(msgspec.to_builtins(obj), seq)):
            raise _GiveUp
        self.expected = seq + 1

    def _turn_start_struct(self, obj: Any, index: int) -> None:
        """A turn boundary (a turn/start: log-only, no seed rule on its data), where the crash-tail check starts."""
        seq = obj.seq
        if not self.in_place(seq, self.expected):
            raise _GiveUp  # JSONL-7
        self.turn_line = index
        if self.strict and self.inv.step(msgspec.to_builtins(obj), seq):
            raise _GiveUp
        self.expected = seq + 1

    def _surface_struct(self, obj: Any, index: int, distinct: bool = False) -> None:
        """A surface event whose struct type implies its load rules (`_struct_kinds`); `distinct`: its type also
        proves its ``sourceEventSeqs`` distinct non-negative ints (`_distinct_seq_list`)."""
        seq = obj.seq
        if not self.in_place(seq, self.expected):
            raise _GiveUp  # JSONL-7
        state = self.surface
        state.skip(seq - state.length)  # the log-only events before it
        sources = obj.sourceEventSeqs
        tag = self.tags[obj.__class__]
        if not (state.try_append(tag, obj.surfaceOp) if sources is msgspec.UNSET
                else state.try_append(tag, obj.surfaceOp, sources, distinct_ints=distinct)):
            self._replace(state.check(msgspec.to_builtins(obj), seq))
        if tag == "tool/result":
            self.kept[seq] = obj
        if self.strict and self.inv.step(msgspec.to_builtins(obj), seq):
            raise _GiveUp
        self.expected = seq + 1

    def _read_surface_struct(self, obj: Any, index: int, distinct: bool = False) -> None:
        """A surface event of a type the load path's reader reads apart (`_struct_kinds`): the reader reads its value
        first, as the dict path does (JSONL-13..15 and the message check, SEED-18 / SEED-6); read as stored and
        unrefused, the seed entry where the dict path asks it, then `_surface_struct`; an upgraded record takes the dict
        path's rules. (A refusal or a seed finding ends the pass either way: the exact path reports it.)"""
        if self.reader is None or not self.messages_read:
            self._convert_struct(obj, index)
            return
        value = self._read_as_stored(obj, index)
        if value is None:
            return
        if self.tags[obj.__class__] in SEED_ENTRY_OWN_TYPES:  # the rule table's entry where it adds to the reader's
            TABLE.check_seed_entry(value, obj.seq, self.rules)  # message check (`_read_event`)
        self._surface_struct(obj, index, distinct)

    def _read_as_stored(self, obj: Any, index: int) -> dict[str, Any] | None:
        """A struct's value as the load path's reader reads it (JSONL-13..15), when it reads it as stored and unrefused;
        None when the reader upgraded it (the record then took the dict path's rules, `_read_event`). A refusal ends
        the pass (the exact path reports it)."""
        value: dict[str, Any] = self.converted[1] if self.converted[0] is obj else msgspec.to_builtins(obj)
        reader = self.reader
        if reader is None:
            return value
        read, refusal = reader.read(value, index)
        if refusal is not None or type(read) is not dict:
            raise _GiveUp
        if read is not value:
            self._read_event(read, value, index, False)
            return None
        return value

    def _seed_struct(self, obj: Any, index: int) -> None:
        """A log-only struct of a type whose seed rules look into its data (`_struct_kinds`: turn/end, request/header):
        read by the load path's reader first when it has one (JSONL-13..15), as the dict path reads it; read as stored
        and unrefused, the dict path's checks that its type does not prove: JSONL-7, the rule table's seed entry
        (SEED-4 ... SEED-8), JSONL-12's rejected request header, the crash tail's turn boundary, the INV fold. An upgraded
        record takes the dict path's rules (`_read_event`); a refusal ends the pass (the exact path reports it)."""
        value = self._read_as_stored(obj, index)
        if value is None:
            return
        seq = obj.seq
        if not self.in_place(seq, self.expected):
            raise _GiveUp  # JSONL-7
        rules = self.rules
        TABLE.check_seed_entry(value, seq, rules)  # SEED-4 ... SEED-8 (raises SeedError), as `_read_event` asks it
        if jsonl.is_legacy_record(value, self.legacy):
            raise _GiveUp  # JSONL-12 (a rejected request header)
        if value["type"] in TURN_BOUNDARIES:
            self.turn_line = index  # REPAIR-6: the crash tail's check starts here
        if self.strict and self.inv.step(value, seq):
            raise _GiveUp
        self.expected = seq + 1

    def _typed_row(self, obj: Any, index: int) -> None:
        """A typed row (its struct type proves its storage shape: `_row_struct_typed`) at the schema and load levels,
        with a known family verdict, checked from the struct's fields; anything else takes `_row_struct`."""
        spec = _ROW_SPECS[self.tags[obj.__class__]]
        d = obj.data
        members = getattr(d, spec.list_key)
        seq0 = obj.seq0
        seqs = self.member_seqs(seq0, len(members))
        if not self.row_in_place(seqs, self.expected):
            self._row_struct(obj, index)
            return
        try:
            tmin, tmax, _ = TABLE.member_bounds(spec, seqs, obj.time0, d.dt)
        except ChunkRowError:
            raise _GiveUp from None  # CHUNK-9
        optional = spec.optional
        present = frozenset([k for k in optional if getattr(d, k) is not msgspec.UNSET]) if optional else _NONE
        plan = self.plans.get((spec.tag, present))
        if (plan is None or not plan.loadable or not self._in_envelope(seqs, tmin, tmax) or (
                self.compiled is not None and not (
                    plan.constant is True and not plan.reads_data and plan.member_type in self.registered
                    and plan.bounds_ok(seqs, tmin, tmax, None, members)))):
            self._row_struct(obj, index)
            return
        self.rows += 1
        self.expected += len(seqs)

    def _in_envelope(self, seqs: range, tmin: int, tmax: int) -> bool:
        """SEED-3 of a row's members from their extremes: the lowest and highest seq and time within the revision's
        envelope bounds (`Rules.seq_range`, `Rules.time_range`), which the envelope rule tests of each event."""
        return self.time_low <= tmin and tmax <= self.time_high and self.seq_low <= seqs[0] and seqs[-1] <= self.seq_high

    def _row_struct(self, obj: Any, index: int) -> None:
        """A typed row: its storage shape proved by its struct type, its members' arithmetic the rule table's."""
        d = obj.data
        unset = msgspec.UNSET
        spec = _ROW_SPECS[self.tags[obj.__class__]]
        row_data = {k: v for k, v in zip(d.__struct_fields__, msgspec.structs.astuple(d)) if v is not unset}
        members = row_data[spec.list_key]
        seqs = self.member_seqs(obj.seq0, len(members))
        try:
            times = TABLE.member_bounds(spec, seqs, obj.time0, row_data["dt"])
        except ChunkRowError:
            raise _GiveUp from None  # CHUNK-9
        self._members(spec, seqs, obj.time0, row_data, members, times, lambda: msgspec.to_builtins(obj), index)

    def _convert_struct(self, obj: Any, index: int) -> None:
        """A struct whose type cannot prove its load rules: the dict path's rules on its plain value."""
        value = self.converted[1] if self.converted[0] is obj else msgspec.to_builtins(obj)
        spec = _ROW_SPECS.get(value.get("type"))
        if spec is None:
            self.event(value, index, checked=True)
            return
        self.row(spec, value, index)

    # -- plain values -----------------------------------------------------------------------

    def _replace(self, plan: SurfacePlan) -> None:
        """Apply a checked plan; a node it shadows is never current again, so SURF-10 never looks it up."""
        self.surface.apply(plan)
        for gone in plan.shadowed or ():
            self.kept.pop(gone, None)

    def event(self, value: Any, index: int, checked: bool = False) -> None:
        """One event as a dict: the load rules in the exact path's order, then the schema, surface, INV.

        `checked`: the schema is already known to hold (a generated struct accepted it).
        """
        if type(value) is not dict:
            raise _GiveUp
        stored = value
        if self.reader is not None:  # JSONL-13..15: the record as the load path reads it, before every check
            value, refusal = self.reader.read(value, index)
            if refusal is not None or type(value) is not dict:
                raise _GiveUp
            checked = checked and value is stored  # an upgraded record is checked again
        self._read_event(value, stored, index, checked)

    def _read_event(self, value: dict[str, Any], stored: dict[str, Any], index: int, checked: bool) -> None:
        """`event`'s checks after the load path's reading of the record: ``value`` as read, from ``stored``."""
        seq = value.get("seq")
        if not self.in_place(seq, self.expected):
            raise _GiveUp  # JSONL-7 (or a late header line, JSONL-1)
        tag = value.get("type")
        rules = self.rules
        if not is_event_envelope(value, rules) or jsonl.is_legacy_record(value, self.legacy):
            raise _GiveUp  # SEED-3, JSONL-12 (the load path's statement of a record it refuses)
        # SEED-4 ... SEED-8 and the message shape's check (raises SeedError): the rule table's entry, as the exact
        # path asks it of a lossless line (SEED-2 holds: the line was proved lossless JSON), without a frozen copy.
        # Of a type the entry reads with no rule of its own (`SEED_ENTRY_OWN_TYPES`: it asks the message shape's check
        # only), where the load path's reader has just made that check on this very record (`messages_read`), the
        # reference's own entry holds (`check_clean` runs under no other): the envelope and the seq are checked above.
        if tag in self.looked_into and not (self.messages_read and tag not in SEED_ENTRY_OWN_TYPES):
            TABLE.check_seed_entry(value, seq, rules)
        if tag in TURN_BOUNDARIES:
            self.turn_line = index  # REPAIR-6: the crash tail's check starts here
        if self.generic is not None and (tag not in self.registered or tag not in self.by_tag):
            raise _GiveUp  # a type in no registry: the exact path warns (EVENT_TYPE_UNREGISTERED)
        if not checked and self.generic is not None and not self.by_tag.get(tag, self.generic)(value):  # type: ignore[arg-type]
            self._kept_as_stored(stored)  # DEC-24, else the exact path explains the schema finding
        if tag in self.surface_types or "surfaceOp" in value or "sourceEventSeqs" in value:
            state = self.surface
            state.skip(seq - state.length)  # the log-only events before it
            if not (("sourceEventSeqs" not in value and state.try_append(tag, value.get("surfaceOp")))
                    or ("sourceEventSeqs" in value and state.try_append(tag, value.get("surfaceOp"), value["sourceEventSeqs"]))):
                self._replace(state.check(value, seq))  # SEED-10 / SURF-* (raises SurfaceError)
            if tag == "tool/result":
                self.kept[seq] = value
        if self.strict and self.inv.step(value, seq):
            raise _GiveUp
        self.expected = seq + 1

    def _kept_as_stored(self, stored: dict[str, Any]) -> None:
        """An event the revision's schemas reject: an earlier-format record the load path keeps as stored when the
        parent revision's schemas accept its stored form (DEC-24: counted, as the exact path counts it), else
        `_GiveUp`."""
        earlier = self.earlier
        etype = stored.get("type")
        if earlier is None or type(etype) is not str or etype not in earlier[1] or not earlier[0].is_valid(stored):
            raise _GiveUp  # schema
        self.kept_as_stored[etype] = self.kept_as_stored.get(etype, 0) + 1

    def row(self, spec: RowSpec, value: dict[str, Any], index: int) -> None:
        """One chunk row as a dict: CHUNK-9 as the reference decides it (`_row_parts`), then `_members`."""
        shape = _row_parts(value, spec)
        if shape is None:
            raise _GiveUp  # CHUNK-9
        row_data, members, seqs, times = shape
        self._members(spec, seqs, value["time0"], row_data, members, times, value, index)

    def _members(self, spec: RowSpec, seqs: range, time0: int, row_data: dict[str, Any], members: list[str],
                 times: tuple[int, int, int], value: dict[str, Any] | Callable[[], dict[str, Any]], index: int) -> None:
        """A row that CHUNK-9 decodes: JSONL-7, then its members as a family (`RowPlan`), or one by one (`event`)
        where the family cannot be proved (`seqs`: the members' seqs, the rule table's `member_seqs`; `times`: the
        lowest, highest and last member time; `value`: the row, or a function building it)."""
        tag = spec.tag
        tmin, tmax, last_time = times
        if not self.row_in_place(seqs, self.expected):
            raise _GiveUp  # JSONL-7
        present = frozenset([k for k in spec.optional if k in row_data]) if spec.optional else _NONE
        plan = self.plans.get((tag, present))
        if plan is None:
            plan = self.plans[(tag, present)] = RowPlan(tag, present, self.row_compiled, self.rules)
        self.rows += 1
        if not plan.loadable or not self._in_envelope(seqs, tmin, tmax) or (self.compiled is not None and not (
                plan.member_type in self.registered and plan.members_valid(seqs, time0, tmin, tmax, row_data, members))):
            for member in decode_storage_record(value() if callable(value) else value):  # the exact per-event checks
                self.event(member, index)
            return
        if self.strict:
            for probe_event in (plan.builder(seqs[0], time0, row_data, members[0]),
                                plan.builder(seqs[-1], last_time, row_data, members[-1])):
                if self.inv.step(probe_event, probe_event["seq"]):
                    raise _GiveUp
        self.expected += len(seqs)

    # -- the end ----------------------------------------------------------------------------

    def _tail_lines(self) -> list[bytes]:
        """The complete lines from the last turn boundary's on (or the first event's): the last ``base - turn_line``
        lines of the kept regions, found from their end (a closed log's are its last few), not a split of them all."""
        wanted = self.base - self.turn_line
        parts: list[bytes] = []
        for buf, lo, hi in reversed(self.tail):
            have = buf.count(b"\n", lo, hi)
            if have >= wanted:
                at = hi - 1  # (`hi` follows a newline)
                for _ in range(wanted):
                    at = buf.rfind(b"\n", lo, at)
                parts.append(buf[max(at + 1, lo):hi])
                break
            parts.append(buf[lo:hi])
            wanted -= have
        return b"".join(reversed(parts)).split(b"\n")[:-1]

    def finish(self) -> CleanLog:
        """The report: the crash-tail warnings (REPAIR-6, JSONL-4) the exact path's own code gives, if any."""
        if self.cr_pending:
            raise _GiveUp  # (a CR ending the file: the exact path's fragment)
        fragment = self.carry
        size = self.done + len(fragment) + self.removed
        findings: list[Finding] = [jsonl_read.crlf_finding(self.crlf, self.first_crlf)] if self.crlf else []
        if self.expected:
            # REPAIR-6: whether the log ends inside a turn is the exact path's check (the rule table's closers). They
            # depend only on the events from the last turn boundary on (the scan resets there), so it runs on that
            # suffix alone.
            if self.tail_lost:
                raise _GiveUp
            suffix = LoadedLog(name=self.name, kind="jsonl", size=size)
            lines = self._tail_lines()
            # the records as the load path reads them (JSONL-13), as the exact path's crash-tail check sees them
            reading = self.reader.reader if self.reader is not None else None
            again = reading.upgrade.reader(reading.session_id, self.rules.messages) if reading is not None else None
            for number, raw in enumerate(lines, self.turn_line + 1):
                for member in decode_storage_record(json_text.loads(raw)):
                    suffix.events.append(_read_again(again, member, len(suffix.events)))
                    suffix.event_lines.append(number)
            Checker(self.level, self.schemas, self.rules).check_crash_tail(suffix)
            findings += suffix.findings
        if fragment:
            findings.append(fragment_finding(fragment, self.base + 1))
            if self.detection is not None and self.detection.picks(fragment):  # detection parses a last line too
                try:
                    self.detection.feed(self.base + 1, json_text.loads(fragment))
                except JsonTextError:
                    pass
        for finding in findings:
            finding.file = self.name
        findings.sort(key=lambda f: (f.line if f.line is not None else 1 << 62))
        upgraded = dict(self.reader.upgraded) if self.reader is not None else {}
        return CleanLog(name=self.name, events=self.expected, lines=self.base + (1 if fragment else 0), rows=self.rows,
                        findings=findings, upgraded=upgraded, kept_as_stored=dict(self.kept_as_stored))


def _read_again(reader: UpgradeReader | None, event: Any, index: int) -> Any:
    """An event of the open turn as the load path reads it (the pass proved it reads without a refusal; a
    replacement whose message id lies before the turn cannot be minted again here: `_GiveUp`)."""
    if reader is None:
        return event
    try:
        return reader.read(event, index)
    except SessionSpecError:
        raise _GiveUp from None


def _check(blocks: Iterator[bytes], name: str, level: str, schemas: SchemaSet | None,
           progress: Callable[[int, int], None] | None, total: int | None, rules: Rules | None = None,
           detection: InlineDetection | None = None) -> CleanLog:
    run = _Pass(name, level, schemas, progress, total, rules, detection)
    run.block(run.header(blocks))
    for block in blocks:
        run.block(block)
    return run.finish()


_PLANS: dict[tuple[int, str, frozenset[str]], tuple[Any, dict[tuple[str, frozenset[str]], RowPlan]]] = {}


def _plans_for(compiled: CompiledSchema | None, rules: Rules) -> dict[tuple[str, frozenset[str]], RowPlan]:
    """Row plans are pure functions of the schemas, the rules and the rule table's retired types: built once per
    compiled schema, revision and table."""
    key = (id(compiled), rules.id, _legacy_types())
    cached = _PLANS.get(key)
    if cached is None or cached[0] is not compiled:
        cached = _PLANS[key] = (compiled, {})
    return cached[1]


def _no_negative_zero(fast: Any) -> bool:
    """Whether no struct the generated types accept can hold a float ``-0.0`` (JSON-2): no float type anywhere,
    and each field that can hold a ``JsonValue`` (``Any``) is one its struct's generated ``__post_init__`` checks
    (`mstypes._any_ok` refuses ``-0.0``). Read off the types, like `_struct_kinds`; anything else keeps the scan."""
    inspect = msgspec.inspect
    leaves = (inspect.IntType, inspect.StrType, inspect.BoolType, inspect.NoneType, inspect.LiteralType)
    seen: set[type] = set()

    def ok(kind: Any, covered: bool) -> bool:
        if isinstance(kind, inspect.StructType):
            if kind.cls in seen:
                return True
            seen.add(kind.cls)
            universal = getattr(getattr(kind.cls, "__post_init__", None), "checks", ((), ()))[1]
            return all(ok(f.type, f.name in universal) for f in kind.fields)
        if isinstance(kind, inspect.AnyType):
            return covered
        if isinstance(kind, inspect.UnionType):
            return all(ok(k, covered) for k in kind.types)
        if isinstance(kind, (inspect.ListType, inspect.SetType, inspect.FrozenSetType, inspect.VarTupleType)):
            return ok(kind.item_type, covered)
        if isinstance(kind, inspect.DictType):
            return ok(kind.key_type, covered) and ok(kind.value_type, covered)
        if isinstance(kind, inspect.Metadata):
            return ok(kind.type, covered)
        return isinstance(kind, leaves)  # a float, or a kind not foreseen here: scan

    return all(ok(info, False) for info in _type_infos(fast))


_TYPE_INFOS: dict[int, tuple[Any, tuple[Any, ...]]] = {}


def _type_infos(fast: Any) -> tuple[Any, ...]:
    """`msgspec.inspect` of every generated struct, in `fast.tags` order: one translation of the shared parts."""
    cached = _TYPE_INFOS.get(id(fast))
    if cached is None or cached[0] is not fast:
        cached = _TYPE_INFOS[id(fast)] = (fast, msgspec.inspect.multi_type_info(list(fast.tags)))
    return cached[1]


_NO_NEGATIVE_ZERO: dict[int, tuple[Any, bool]] = {}


def _no_negative_zero_of(fast: Any) -> bool:
    cached = _NO_NEGATIVE_ZERO.get(id(fast))
    if cached is None or cached[0] is not fast:
        cached = _NO_NEGATIVE_ZERO[id(fast)] = (fast, _no_negative_zero(fast))
    return cached[1]


_KINDS: dict[tuple[int, Rules, frozenset[str]], tuple[Any, dict[type, int]]] = {}


def _kinds_of(fast: Any, rules: Rules) -> dict[type, int]:
    key = (id(fast), rules, _legacy_types())  # (the rules themselves: their facts decide the kinds)
    cached = _KINDS.get(key)
    if cached is None or cached[0] is not fast:
        cached = _KINDS[key] = (fast, _struct_kinds(fast, rules))
    return cached[1]


_IN_STEP_CLASSES: dict[int, tuple[Any, frozenset[type]]] = {}


def _in_step_classes(fast: Any) -> frozenset[type]:
    """The `assistant/chunk` structs whose `data.turn`/`data.step` attributes are the JSON keys.

    For them the INV fold's in-step shortcut can read the struct instead of a converted dict.
    """
    cached = _IN_STEP_CLASSES.get(id(fast))
    if cached is None or cached[0] is not fast:
        found = set()
        for cls, tag in fast.tags.items():
            if tag != "assistant/chunk":
                continue
            fields = {f.name: f for f in msgspec.inspect.type_info(cls).fields}  # type: ignore[attr-defined]
            data = fields["data"].type if "data" in fields else None
            if isinstance(data, msgspec.inspect.StructType):
                inner = {f.name: f for f in data.fields}
                if all(k in inner and inner[k].encode_name == k and inner[k].required for k in ("turn", "step")):
                    found.add(cls)
        cached = _IN_STEP_CLASSES[id(fast)] = (fast, frozenset(found))
    return cached[1]


def _core_schema_set(revision: str | None = None) -> SchemaSet:
    from sessionspec.validator.lint import schema_set

    return schema_set((), revision)
