"""``Session``: the append-only event log, its surface and derived views.

A session is built from an optional seed (validated entry by entry, SEED-*)
and an optional header (HDR-*), then grows through ``append`` (APPEND-*).
Every accepted event is a deeply frozen ``FrozenDict`` (DEC-5), so neither
the caller nor an observer can rewrite history.

``append`` runs its stages in the order of APPEND-1: snapshot data, legacy
check, snapshot surface metadata, re-entrancy, build and freeze the
candidate, surface check, the owning store's pre-commit validators, commit,
notify. Everything up to the commit only *plans*; the commit is a list
append plus ``SurfaceState.apply`` (which cannot fail), so a rejection at
any stage leaves every observable state unchanged.

Cost model (why it is fast): one freeze pass per value; no per-event schema
validation; no O(n) work per append. ``events`` is a ``FrozenList`` built
lazily on the first read after an append and cached until the next one
(APPEND-12); derived messages and the request header fold incrementally, and
each surface node's message is built once, when the node is committed, so a
derive only gathers. A seed is folded with the cyclic GC paused (a bulk
build of acyclic values; collections during it only re-traverse the log).
"""

from __future__ import annotations

import enum
import os.path
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, Protocol

from sessionspec.spec import FORMAT
from sessionspec.spec.error_codes import ErrorCode
from sessionspec.spec.errors import AppendError, HeaderError, JsonValueError, SeedError
from sessionspec.spec.schema_types import JsonObject, JsonValue

from .derive import MessageLog
from .finding import Finding
from .json_value import MAX_SAFE_INTEGER as _MAX_SAFE
from .json_value import FrozenDict, FrozenList, freeze_json_value, gc_paused
from .json_value import is_nonneg_safe_int as _nonneg_safe
from .request_header import RequestHeaderFold, is_rejected_reason
from .revision import Rules, has_provider_model, rules_for
from .rule_table import TABLE, define
from .seed_walk import LoadWalk, StoredLoad, frozen_entry
from .surface import SurfacePlan, SurfaceState, SurfaceView

if TYPE_CHECKING:
    from sessionspec.reference.revision import RevisionLike

__all__ = [
    "NO_HEADER",
    "SEED_DATA_RULE_TYPES",
    "SEED_ENTRY_OWN_TYPES",
    "SESSION_FORMAT_VERSION",
    "Clock",
    "Session",
    "SteppingClock",
    "check_seed_entry",
    "envelope_defects",
    "envelope_findings",
    "has_provider_model",
    "is_event_envelope",
    "validate_header",
    "validate_seed",
]

SESSION_FORMAT_VERSION: int = FORMAT.session_format_version
_DELTA_TYPE = "request/header-delta"  # the removed delta vocabulary (APPEND-3, SEED-4, REQ-7)
SEED_ENTRY_OWN_TYPES: frozenset[str] = frozenset({_DELTA_TYPE, "request/header", "turn/end"})
"""The event types whose payload the seed entry (:func:`check_seed_entry`) checks with rules of its own (SEED-4,
SEED-5, SEED-7, SEED-8); of an entry of any other type whose envelope holds (SEED-3) and whose seq is its index
(SEED-9), the entry asks only the revision's message shape's check (``Rules.messages.seed_problem``: SEED-6, and
SEED-18 where messages are identified), so a caller that has just asked that check of the same payload knows it."""
SEED_DATA_RULE_TYPES: frozenset[str] = SEED_ENTRY_OWN_TYPES | {"assistant/message"}
"""The event types whose seed rules look beyond the envelope (SEED-4 … SEED-8; SEED-6 is the message shape's check
of an assistant/message); for any other type, :func:`check_seed_entry` is SEED-2, SEED-3 (:func:`is_event_envelope`),
SEED-9 and the message shape's check of the types it names."""
_INTENT_KEYS = frozenset(("surfaceOp", "sourceEventSeqs"))
_PINNED = rules_for(None)
_time_ns = time.time_ns
_new_dict = dict.__new__  # FrozenDict's own __new__ is Python code; the C constructor is enough here
_init_dict = dict.__init__
_set_item = dict.__setitem__


class _Absent(enum.Enum):
    NO_HEADER = "no header"

    def __repr__(self) -> str:
        return "NO_HEADER"


NO_HEADER: Final = _Absent.NO_HEADER
"""The default of ``header``: no header supplied, so one is synthesised (HDR-1).

A sentinel and not ``None``, because a supplied ``None`` is a present JSON
``null``, which HDR-2 rejects with ``HEADER_NOT_OBJECT`` as upstream does."""


def now_ms() -> int:
    """Current Unix time in integer milliseconds (DEC-6): the clock of a session given none."""
    return _time_ns() // 1_000_000


Clock = Callable[[], int]
"""A source of event times: integer milliseconds (DEC-6). A session or store given one stamps every
event and synthesised ``createdAt`` with it, so a run that injects a deterministic clock repeats
exactly (the conformance machines); without one, :func:`now_ms`."""


class SteppingClock:
    """A deterministic :data:`Clock`: ``start``, then ``step`` ms later at each reading."""

    __slots__ = ("_next", "_step")

    def __init__(self, start: int = 1_785_000_000_000, step: int = 1) -> None:
        self._next = start
        self._step = step

    def __call__(self) -> int:
        now = self._next
        self._next = now + self._step
        return now


class Attachment(Protocol):
    """What a store entry offers the append path (implemented by ``store._Entry``)."""

    appending: bool
    id: str
    store: Any

    def publish(self, session: Session, event: FrozenDict, plan: SurfacePlan) -> None:
        """Run stages (g) to (i): validators, commit via ``session._commit``, observers."""


# ---------------------------------------------------------------- validation


def _seed_error(index: int, message: str, code: ErrorCode, requirement: str | None, seq: Any = None,
                path: str | None = None) -> SeedError:
    return SeedError(
        f"seed event at index {index} {message}",
        code,
        requirement=requirement,
        index=index,
        seq=seq if type(seq) is int else None,
        path=path,
    )


def is_event_envelope(event: JsonObject, rules: Rules = _PINNED) -> bool:
    """SEED-3: a string ``type``, a non-negative safe integer ``seq``, a safe integer ``time`` (non-negative
    unless the revision allows negative times), a ``data`` member, ``ignorable`` only as ``true``, and no
    key outside the revision's envelope keys (``FORMAT.envelope_keys`` at the pinned revision).

    True exactly when :func:`envelope_findings` finds nothing (the rule is that one function)."""
    return not _envelope_rule(rules)(event)


def envelope_findings(event: JsonObject, rules: Rules = _PINNED) -> tuple[Finding, ...]:
    """SEED-3's findings for one event, each located by the JSON pointer of the member at fault
    (``/key``; an unknown key is named with its own pointer); empty when the envelope is valid.

    The seed and load paths raise the first (:class:`SeedError` ``SEED_ENVELOPE``), the validator
    reports them all."""
    return _envelope_rule(rules)(event)


def envelope_defects(event: JsonObject, rules: Rules = _PINNED) -> set[str]:
    """The pointers of :func:`envelope_findings` (the members that make the envelope invalid)."""
    return {finding.pointer for finding in _envelope_rule(rules)(event) if finding.pointer is not None}


def _envelope_rule(rules: Rules) -> Callable[[Mapping[str, Any]], tuple[Finding, ...]]:
    rule = _ENVELOPE_RULES.get(rules)
    if rule is None:
        rule = _ENVELOPE_RULES[rules] = _bind_envelope_rule(rules)
    return rule


_NO_FINDINGS: tuple[Finding, ...] = ()


def _bind_envelope_rule(rules: Rules) -> Callable[[Mapping[str, Any]], tuple[Finding, ...]]:
    """SEED-3 at one revision, its facts bound: it runs once per seeded, loaded or validated event, so
    each member's test is evaluated once and a valid envelope returns the shared empty tuple without
    building anything."""
    keys = rules.envelope_keys
    plain = rules.plain_envelope  # an event with these four members and no fifth key has no other key
    seq_low, seq_high = rules.seq_range
    time_low, time_high = rules.time_range
    ignorable_known = "ignorable" in keys

    def rule(event: Mapping[str, Any]) -> tuple[Finding, ...]:
        seq = event.get("seq")
        time_ = event.get("time")
        bad_type = event.get("type").__class__ is not str
        bad_seq = not (seq.__class__ is int and seq_low <= seq <= seq_high)
        bad_time = not (time_.__class__ is int and time_low <= time_ <= time_high)
        no_data = "data" not in event
        members_ok = not (bad_type or bad_seq or bad_time or no_data)
        if members_ok and plain and len(event) == 4:
            return _NO_FINDINGS
        extra = not event.keys() <= keys
        bad_ignorable = ignorable_known and "ignorable" in event and event["ignorable"] is not True
        if members_ok and not extra and not bad_ignorable:
            return _NO_FINDINGS
        found = [_envelope_finding(pointer, problem) for pointer, problem, wrong in (
            ("/type", "must be a string", bad_type),
            ("/seq", _range_problem(seq_low, seq_high), bad_seq),
            ("/time", _range_problem(time_low, time_high), bad_time),
            ("/data", "is required", no_data),
            ("/ignorable", "may only be true", bad_ignorable),
        ) if wrong]
        if extra:
            found.extend(_envelope_finding(_pointer(key), "is not an envelope key of this revision")
                         for key in event if key not in keys)
        return tuple(found)

    return rule


def _range_problem(low: int, high: int) -> str:
    """What an envelope integer out of ``low`` … ``high`` must be (the revisions' ranges read as words)."""
    if (low, high) == (0, _MAX_SAFE):
        return "must be a non-negative safe integer"
    if (low, high) == (-_MAX_SAFE, _MAX_SAFE):
        return "must be a safe integer"
    return f"must be an integer from {low} to {high}"


def _pointer(key: object) -> str:
    return "/" + str(key).replace("~", "~0").replace("/", "~1")


def _envelope_finding(pointer: str, problem: str) -> Finding:
    return Finding("SEED_ENVELOPE", "SEED-3", f"event envelope member {pointer} {problem}", pointer=pointer)


_ENVELOPE_RULES: dict[Rules, Callable[[Mapping[str, Any]], tuple[Finding, ...]]] = {}


def check_seed_entry(entry: JsonValue, index: int, rules: Rules = _PINNED) -> FrozenDict:
    """SEED-2 … SEED-9 for one entry, in the order of SEED-11; returns the frozen entry."""
    return TABLE.check_seed_entry(frozen_entry(entry, index), index, rules)  # type: ignore[no-any-return]


def _entry_facts(rules: Rules) -> tuple[Callable[[Mapping[str, Any]], tuple[Finding, ...]], frozenset[str]]:
    """The revision's SEED-3 function and the types a later seed rule reads (SEED-4 … SEED-8, its message shape's)."""
    facts = _ENTRY_FACTS[rules] = (_envelope_rule(rules), SEED_DATA_RULE_TYPES | rules.messages.seed_types)
    return facts


_ENTRY_FACTS: dict[Rules, tuple[Callable[[Mapping[str, Any]], tuple[Finding, ...]], frozenset[str]]] = {}


def _checked_entry(event: Any, index: int, rules: Rules) -> FrozenDict:
    """SEED-3 … SEED-9 for one entry already frozen by SEED-2's pass, in the order of SEED-11; returns it.

    The rule table's ``check_seed_entry``: every seed, load and validation asks it for every entry, so
    it first asks the rules of the common case, each the one function that states it: no envelope
    findings (SEED-3), ``seq`` its index (SEED-9), a type none of its own later rules looks into (SEED-4, SEED-5,
    SEED-7, SEED-8: `SEED_ENTRY_OWN_TYPES`) and a payload its message shape accepts. Anything else takes the checks in the order of
    SEED-11, which raise the first finding, located."""
    cls = event.__class__
    envelope, looked_into = _ENTRY_FACTS.get(rules) or _entry_facts(rules)
    findings = None  # (SEED-3's, found once: the common case's test and the checks below both read them)
    if cls is FrozenDict or cls is dict:
        findings = envelope(event)
        if not findings and event["seq"] == index:
            etype = event["type"]
            if etype not in looked_into or (
                etype not in SEED_ENTRY_OWN_TYPES and rules.messages.seed_problem(etype, event["data"]) is None
            ):
                return event  # type: ignore[no-any-return]  # a frozen dict, or a parsed one (the validator's)
    elif not isinstance(event, dict):
        raise _seed_error(index, "has an invalid event envelope (not an object)", "SEED_ENVELOPE", "SEED-3")
    etype = event.get("type")
    if etype == _DELTA_TYPE:  # SEED-4 comes before the envelope check
        raise _seed_error(index, "uses unsupported legacy request/header-delta format",
                          "SEED_LEGACY_HEADER_DELTA", "SEED-4", event.get("seq"))
    seq = event.get("seq")
    if findings is None:
        findings = envelope(event)
    if findings:
        extra = sorted(set(event) - rules.envelope_keys)
        detail = f" (unknown keys {extra})" if extra else ""
        raise _seed_error(index, f"has an invalid event envelope{detail}", "SEED_ENVELOPE", "SEED-3", seq,
                          path=findings[0].pointer)
    data = event["data"]
    if etype == "request/header":
        problem = _request_header_problem(data, rules)
        if problem is not None:
            raise _seed_error(index, f"is a request/header that {problem}", "SEED_REQUEST_HEADER_CONFIG", "SEED-5", seq)
    else:
        message_problem = rules.messages.seed_problem(str(etype), data)  # a str: the envelope check passed
        if message_problem is not None:
            raise _seed_error(index, message_problem.message, message_problem.code, message_problem.requirement, seq)
    if rules.seed_checks_turn_end_reason and etype == "turn/end" and isinstance(data, dict):
        reason = data.get("reason")
        if isinstance(reason, dict) and reason.get("kind") == "aborted" and len(reason) != 1:
            raise _seed_error(index, "is a turn/end with unsupported reason-bearing aborted format",
                              "SEED_ABORTED_REASON", "SEED-7", seq)
    if etype == "request/header" and isinstance(data, dict) and is_rejected_reason(data.get("reason")):
        raise _seed_error(index, f"uses unsupported legacy request/header reason {data.get('reason')!r}",
                          "SEED_LEGACY_FALLBACK", "SEED-8", seq)
    if seq != index:  # SEED-9
        raise _seed_error(index, f"has seq {seq} (expected {index}); a seed must be contiguous from 0",
                          "SEED_NOT_CONTIGUOUS", "SEED-9", seq)
    return event  # type: ignore[no-any-return]  # a frozen dict: freeze_json_value returns FrozenDict for objects


def _request_header_problem(data: Any, rules: Rules) -> str | None:
    """SEED-5: what is wrong with a seeded request header, or ``None``."""
    if not rules.seed_request_header_any_data and not isinstance(data, (dict, list)):
        return None  # the pinned check looks only at object data (a JS array is an object too)
    header = data.get("header") if isinstance(data, dict) else None
    if rules.seed_request_header_any_data and not isinstance(header, dict):
        header = None
    config = header.get("config") if isinstance(header, dict) else None
    if not has_provider_model(config):
        return "lacks provider/model"
    markers = rules.adapter_default_markers
    if not markers:
        return None
    assert isinstance(config, dict)
    assert isinstance(header, dict)
    effort = config.get("reasoningEffort", _ABSENT)
    if effort is not _ABSENT and (type(effort) is not str or effort == ""):
        return "has an invalid reasoningEffort"
    defaults = header.get("adapterDefaults", _ABSENT)
    if defaults is _ABSENT:
        return None
    if (
        not isinstance(defaults, dict)
        or any(k not in markers or v is not True for k, v in defaults.items())
        or any(k not in config for k in defaults)
    ):
        return "has invalid adapterDefaults"
    return None


def validate_header(session_id: str, header: object = NO_HEADER, revision: RevisionLike = None, *,
                    clock: Clock | None = None) -> FrozenDict:
    """The validated, detached, frozen header of session ``session_id`` (HDR-1 … HDR-10).

    :data:`NO_HEADER` (the default) synthesises ``{version: 0, id, createdAt: now}``
    (HDR-1); ``None`` is a present ``null`` and is rejected (HDR-2).
    """
    if header is NO_HEADER:
        created = now_ms() if clock is None else clock()
        return FrozenDict({"version": SESSION_FORMAT_VERSION, "id": session_id, "createdAt": created})
    try:
        record = freeze_json_value(header)
    except JsonValueError as error:
        raise HeaderError(f"session header is not losslessly JSON-serializable ({error.message})",
                          "HEADER_NOT_JSON", requirement="HDR-2", path=error.path, cause=error) from error
    if not isinstance(record, dict):
        raise HeaderError("session header is not a JSON object", "HEADER_NOT_OBJECT", requirement="HDR-2")
    version = record.get("version")
    if type(version) is not int or version != SESSION_FORMAT_VERSION:
        raise HeaderError(f"session header version must be {SESSION_FORMAT_VERSION}, got {version!r}",
                          "HEADER_VERSION", requirement="HDR-3")
    if record.get("id") != session_id or type(record.get("id")) is not str:
        raise HeaderError(f"session header id {record.get('id')!r} does not match session id {session_id!r}",
                          "HEADER_ID_MISMATCH", requirement="HDR-4")
    if not _nonneg_safe(record.get("createdAt")):
        raise HeaderError("session header createdAt must be a non-negative safe integer",
                          "HEADER_CREATED_AT", requirement="HDR-5")
    if "cwd" in record:
        cwd = record["cwd"]
        if type(cwd) is not str:
            raise HeaderError("session header cwd must be a string", "HEADER_CWD", requirement="HDR-6")
        if not TABLE.is_absolute_path(cwd):
            raise HeaderError(f"session header cwd must be an absolute path, got {cwd!r}",
                              "HEADER_CWD", requirement="HDR-6")
    if "parentSession" in record and type(record["parentSession"]) is not str:
        raise HeaderError("session header parentSession must be a string",
                          "HEADER_PARENT_SESSION", requirement="HDR-7")
    if "seedLength" in record and not _nonneg_safe(record["seedLength"]):
        raise HeaderError("session header seedLength must be a non-negative safe integer",
                          "HEADER_SEED_LENGTH", requirement="HDR-8")
    keys = rules_for(revision).header_keys
    if "origin" in keys and "origin" in record and record["origin"] != "subagent":  # checked before the depth
        raise HeaderError('session header origin must be "subagent"', "HEADER_ORIGIN", requirement="HDR-13")
    if "delegationDepth" in record and not _nonneg_safe(record["delegationDepth"]):
        raise HeaderError("session header delegationDepth must be a non-negative safe integer",
                          "HEADER_DELEGATION_DEPTH", requirement="HDR-8")
    if "agentPreset" in keys and "agentPreset" in record and type(record["agentPreset"]) is not str:
        raise HeaderError("session header agentPreset must be a string", "HEADER_AGENT_PRESET", requirement="HDR-13")
    return record  # type: ignore[return-value]  # a frozen dict: freeze_json_value returns FrozenDict for objects


def _is_absolute(path: str) -> bool:
    return os.path.isabs(path)  # DEC-12: absolute on the host


define("is_absolute_path", _is_absolute)
define("check_seed_entry", _checked_entry)  # SEED-11: the order of the entry checks (after SEED-2)
define("append_legacy_type", _DELTA_TYPE)  # APPEND-3: the type append refuses (seeds refuse it by SEED-4)


def _intent_key_supplied(intent: Mapping[str, Any], key: str) -> bool:
    """APPEND-4: a surface key the caller supplied is kept, a ``null`` one too; only an omitted one is absent."""
    return key in intent


define("intent_key_supplied", _intent_key_supplied)


def validate_seed(seed: Iterable[JsonValue], revision: RevisionLike = None) -> list[FrozenDict]:
    """Validate a whole seed (SEED-1 … SEED-11) and return its frozen events."""
    rules = rules_for(revision)
    log: list[FrozenDict] = []
    with gc_paused():
        _fold_seed(seed, log, SurfaceState(log, rules), rules)
    return log


def _fold_seed(seed: Iterable[Any], log: list[FrozenDict], surface: SurfaceState, rules: Rules,
               messages: MessageLog | None = None, start: int = 0) -> None:
    """Accept seed entries one by one into ``log``/``surface``; the first bad entry raises (SEED-1).

    The one walk of the load rules (`seed_walk.LoadWalk`: SEED-2, the rule table's entry rule, SEED-3 … SEED-9,
    and the surface fold, SEED-10), raising its first finding's error (the load path's walk: `Session._load`). With ``messages``, each accepted surface node is
    projected as it is committed. Callers pause the cyclic GC around it (``gc_paused``): a seed is a bulk
    build of acyclic frozen values, and collections during it would repeatedly traverse the growing log
    for nothing.
    """
    walk = LoadWalk(rules, surface, log.append, messages.project if messages is not None else None)
    for finding in walk.run(seed, start):
        raise finding.error  # type: ignore[misc]  # the walk's findings of a seed carry the error raised


class _Taken:
    """An iteration of ``records`` that counts the records taken (where a walk stopped)."""

    __slots__ = ("count", "records")

    def __init__(self, records: Sequence[Any]) -> None:
        self.records, self.count = records, 0

    def __iter__(self) -> Iterator[Any]:
        for record in self.records:
            self.count += 1
            yield record


# ---------------------------------------------------------------- session


class Session:
    """An event-sourced session: an append-only log of frozen events.

    ``Session(id, seed=None, header=NO_HEADER)``: ``seed`` replays (or forks) an
    existing log and is validated entry by entry (SEED-*); ``header`` is the
    creation metadata (HDR-*), synthesised when omitted (a supplied ``None``
    is a present ``null``: rejected, HDR-2); ``revision`` picks the format
    revision (an id, a release or `Rules`; default: the pinned one). Create
    sessions through ``SessionStore.create`` to get notifications; a bare
    session accepts appends but publishes nothing (APPEND-14).
    """

    __slots__ = (
        "__weakref__",
        "_clock",
        "_entry",
        "_events",
        "_first_live_seq",
        "_header",
        "_log",
        "_messages",
        "_request_header",
        "_rules",
        "_surface",
    )

    def __init__(self, id: str, seed: Iterable[JsonValue] | None = None, header: object = NO_HEADER, *,
                 revision: RevisionLike = None, clock: Clock | None = None) -> None:
        self._open(id, revision, clock)
        if seed is not None:
            with gc_paused(long_lived=True):
                _fold_seed(seed, self._log, self._surface, self._rules, self._messages)
        self._seeded(id, seed is not None, header)

    @classmethod
    def _load(cls, id: str, records: list[Any], header: Any, reader: StoredLoad,
              closers: Callable[[Sequence[Any]], list[dict[str, JsonValue]]], *, revision: RevisionLike = None,
              frozen: bool = False) -> tuple[Session, list[dict[str, JsonValue]]]:
        """The seeded load path (JSONL-12), one pass: the walk of the load rules reads each stored record through
        ``reader`` (`jsonl.StoredReader`: upgraded where the revision says, JSONL-13; a record it rewrites replaces
        the stored one in ``records``) and checks it (SEED-*), yielding each finding in order. At the first finding
        the seed stops and the reader reads the rest (`StoredReader.read_on`: a legacy record further on, say, is
        refused first), and the error raised is ``reader.first_defect`` (the refusal order). Then the crash-repair closers, ``closers(records)``
        of the records as read, are seeded after them; returns the session and the closers.
        ``frozen``: ``records`` are ``json_value.freeze_parsed`` parses: SEED-2 already holds for them (the parser
        and the freeze proved it), so they are kept, not copied, as the TypeScript package's restore takes ownership
        of the objects it parsed; a record the reader rewrites is frozen first."""
        self = cls.__new__(cls)
        self._open(id, revision, clock=None)
        rules, log, surface, messages = self._rules, self._log, self._surface, self._messages
        with gc_paused(long_lived=True):
            walk = LoadWalk(rules, surface, log.append, messages.project, frozen=frozen, reader=reader,
                            freeze_read=True)
            taken = _Taken(records)
            findings = walk.run(taken, replace=records)
            first = next(findings, None)
            if first is not None:  # the seed stops at its first finding; the reading goes on to the end
                findings.close()
                reader.read_on(records, taken.count)
                raise reader.first_defect(first)
            tail = closers(records)
            if tail:
                _fold_seed(tail, log, surface, rules, messages, len(records))
        self._seeded(id, True, header)
        return self, tail

    def _open(self, id: str, revision: RevisionLike, clock: Clock | None) -> None:
        if type(id) is not str:
            raise TypeError(f"a session id must be a str, got {type(id).__name__}")
        self._clock = clock
        rules = self._rules = rules_for(revision)
        log: list[FrozenDict] = []
        self._log = log
        self._events: FrozenList | None = None
        self._surface = SurfaceState(log, rules)
        self._entry: Attachment | None = None
        self._messages = MessageLog(rules)

    def _seeded(self, id: str, seeded: bool, header: Any) -> None:
        """The header, the request-header fold and the SEED-17 marker, after every seed entry passed (SEED-11)."""
        log = self._log
        rules = self._rules
        self._first_live_seq = len(log)
        self._header = validate_header(id, header, rules, clock=self._clock)
        self._request_header = RequestHeaderFold(rules)
        marker = rules.seed_end_marker
        if seeded and marker is not None and not (log and log[-1]["type"] == marker):
            self.append(marker, {})  # SEED-17: a bare session, so nothing is published

    @property
    def revision(self) -> str:
        """The format revision this session follows."""
        return self._rules.id

    @property
    def first_live_seq(self) -> int:
        """The seq of the first event not taken from the seed (the seed's length, SEED-17)."""
        return self._first_live_seq

    @property
    def header(self) -> FrozenDict:
        """The detached, frozen creation metadata (HDR-10)."""
        return self._header

    @property
    def id(self) -> str:
        """The session id: always ``header['id']`` (HDR-10)."""
        return self._header["id"]  # type: ignore[no-any-return]

    @property
    def seq(self) -> int:
        """The next event's seq, i.e. the log length (APPEND-13)."""
        return len(self._log)

    @property
    def events(self) -> FrozenList:
        """The log as an immutable list; the same object until the next append (APPEND-12)."""
        events = self._events
        if events is None:
            events = self._events = FrozenList(self._log)
        return events

    @property
    def surface(self) -> SurfaceView:
        """The live read-only surface view (SURF-14)."""
        return self._surface.view

    def __repr__(self) -> str:
        return f"Session({self.id!r}, seq={len(self._log)})"

    # ------------------------------------------------------------ append
    def append(self, type: str, data: JsonValue, intent: JsonObject | None = None) -> FrozenDict:
        """Append one event and return the committed (frozen) event.

        ``intent`` is the surface metadata ``{"surfaceOp": ..., "sourceEventSeqs": ...}``:
        required for the four surface types, forbidden otherwise; a key that is
        absent is not supplied (APPEND-4). Raises ``AppendError`` /
        ``SurfaceError`` / a validator's error without changing anything.
        """
        if type.__class__ is not str:
            raise TypeError(f"an event type must be a str, got {type.__class__.__name__}")
        # (a) snapshot data (APPEND-2): one validating, detaching, freezing pass.
        try:
            frozen = freeze_json_value(data)
        except JsonValueError as error:
            raise AppendError(
                f'session event "{type}" carries non-JSON-serializable data ({error.message})',
                "APPEND_DATA_NOT_JSON", requirement="APPEND-2", path=error.path, cause=error,
            ) from error
        # (b) legacy vocabulary (APPEND-3).
        if type == TABLE.append_legacy_type:
            raise AppendError(f'session event "{type}" uses unsupported legacy request/header-delta format',
                              "APPEND_LEGACY_HEADER_DELTA", requirement="APPEND-3")
        if type == "request/header" and frozen.__class__ is FrozenDict and is_rejected_reason(frozen.get("reason")):
            raise AppendError(f'session event "{type}" uses unsupported legacy request/header reason '
                              f'{frozen.get("reason")!r}', "APPEND_LEGACY_FALLBACK", requirement="APPEND-3")
        # (c) snapshot surface metadata (APPEND-4): only supplied keys, in written order.
        source_seqs: Any = _ABSENT
        op: Any = _ABSENT
        if intent is not None:
            if intent.__class__ is not dict and not isinstance(intent, Mapping):
                raise TypeError(f"intent must be a mapping or None, got {intent.__class__.__name__}")
            if not _INTENT_KEYS.issuperset(intent):
                unknown = sorted(str(k) for k in intent if k not in _INTENT_KEYS)
                raise TypeError(f"unknown intent keys {unknown}; expected surfaceOp and/or sourceEventSeqs")
            supplied = TABLE.intent_key_supplied
            try:
                if supplied(intent, "sourceEventSeqs"):
                    source_seqs = freeze_json_value(intent["sourceEventSeqs"])
                if supplied(intent, "surfaceOp"):
                    op = freeze_json_value(intent["surfaceOp"])
            except JsonValueError as error:
                raise AppendError(
                    f'session event "{type}" carries non-JSON-serializable surface metadata ({error.message})',
                    "APPEND_METADATA_NOT_JSON", requirement="APPEND-4", path=error.path, cause=error,
                ) from error
        # (d) re-entrancy (APPEND-9).
        entry = self._entry
        if entry is not None and entry.appending:
            raise AppendError("session append cannot reenter while another append is being published",
                              "APPEND_REENTRANT", requirement="APPEND-9")
        # (e) build and freeze the candidate (APPEND-7), filled in place (no temporary dict).
        log = self._log
        clock = self._clock
        event = _new_dict(FrozenDict)
        _init_dict(event, type=type, seq=len(log), time=_time_ns() // 1_000_000 if clock is None else clock(),
                   data=frozen)
        if source_seqs is not _ABSENT:
            _set_item(event, "sourceEventSeqs", source_seqs)
        if op is not _ABSENT:
            _set_item(event, "surfaceOp", op)
        # (f) surface validation (SURF-*).
        surface = self._surface
        plan = surface.check(event)
        if entry is None:  # APPEND-14: no validators, no notifications; (h) commit, as in _commit
            log.append(event)
            surface.apply(plan)
            self._events = None
            if plan.kind != "log":
                self._messages.project(event)
        else:  # (g) validators, (h) commit, (i) observers, inside the publish window
            entry.publish(self, event, plan)
        return event

    def _commit(self, event: FrozenDict, plan: SurfacePlan) -> None:
        """Stage (h): the only mutation of the log; cannot fail."""
        self._log.append(event)
        self._surface.apply(plan)
        self._events = None
        if plan.kind != "log":
            self._messages.project(event)  # the message is built once, now (DERIVE-11)

    # ------------------------------------------------------------ derived views
    def derive_messages(self) -> list[FrozenDict]:
        """The model-visible history in surface order, as a new list (DERIVE-1, DERIVE-7)."""
        return self._messages.messages(self._log, self._surface)

    def derive_event_message(self, event: JsonObject) -> FrozenDict | None:
        """The message one event projects to, or ``None`` (DERIVE-2 … DERIVE-6)."""
        message: FrozenDict | None = TABLE.message_deriver(self._rules.messages)(event)
        return message

    def request_header(self) -> JsonValue:
        """The canonical request header in force, or ``None`` before the first ``request/header`` (REQ-3)."""
        return self._request_header.fold(self._log)


class _Unsupplied:
    __slots__ = ()

    def __repr__(self) -> str:
        return "<absent>"


_ABSENT: Any = _Unsupplied()
