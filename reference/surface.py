"""The surface: the ordered list of event seqs that produce model messages.

One transition function serves the live session, seeding and
:func:`fold_surface` (SURF-1..16): :meth:`SurfaceState.check` validates a
candidate against the current state and returns a plan without changing
anything observable; :meth:`SurfaceState.apply` commits a plan and cannot fail.
Validation is therefore atomic (SURF-11).

Data structure (why replaces are cheap). Each node lives in a *slot*; slots
are numbered in surface order and only ever added at the end (on append). A
replacement inherits the slot of its ``start`` node and kills the other
shadowed slots, so slot order stays surface order forever. Hence:

* "position of start <= position of end" (SURF-5) is a slot comparison, O(1);
* the shadowed nodes are the live slots between the two, enumerated with a
  union-find "next live slot" structure (path halving): O(m) amortised for m
  shadowed nodes, independent of the surface size;
* ``nodes`` is materialised on demand and cached until the next change.

A naive ``list.index`` + splice fold (upstream) costs O(surface size) per
replace; ``tests/reference/test_surface.py`` proves both folds agree.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from sessionspec.spec import SURFACE_TYPES
from sessionspec.spec.error_codes import ErrorCode
from sessionspec.spec.errors import SurfaceError
from sessionspec.spec.schema_types import JsonObject, JsonValue, SurfaceFold, SurfaceFoldReplacementsItem

from .json_value import MAX_SAFE_INTEGER, FrozenDict, FrozenList, json_equal
from .json_value import is_nonneg_safe_int as _is_event_seq
from .rule_table import TABLE, define

if TYPE_CHECKING:
    from sessionspec.reference.revision import RevisionLike

__all__ = [
    "SURFACE_TYPES",
    "SurfacePlan",
    "SurfaceState",
    "SurfaceView",
    "fold_surface",
    "is_surface_eligible_type",
    "is_surface_event",
    "plain_append_sources",
]

_MISSING: Any = object()
_LISTS = (list, FrozenList)


def is_surface_eligible_type(event_type: object, revision: RevisionLike = None) -> bool:
    """True for the message-producing types of the revision's registry (SURF-1)."""
    if revision is None:
        return isinstance(event_type, str) and event_type in SURFACE_TYPES
    from .revision import rules_for

    return isinstance(event_type, str) and event_type in rules_for(revision).surface_types


def is_surface_event(event: JsonObject, revision: RevisionLike = None) -> bool:
    """True iff the type is surface-eligible and the event has a ``surfaceOp`` key (SURF-15)."""
    return is_surface_eligible_type(event.get("type"), revision) and "surfaceOp" in event


def plain_append_sources(sources: object, seq: int, etype: str) -> bool:
    """SURF-7 for the ``sourceEventSeqs`` of an append at ``seq``, as a boolean: True when the rule
    (the rule table's ``check_sources``, the one statement of SURF-7 and SURF-9) finds nothing."""
    return _sources_pass(_probe_state(), sources, seq, etype)


def _sources_pass(state: SurfaceState, sources: object, seq: int, etype: str) -> bool:
    try:
        TABLE.check_sources(state, {"seq": seq, "sourceEventSeqs": sources}, etype, seq, (), seq)
    except SurfaceError:
        return False
    return True


_PROBES: list[SurfaceState] = []


def _probe_state() -> SurfaceState:
    """A state for asking the sources rule outside a fold (the rule reads no state of its own)."""
    if not _PROBES:
        _PROBES.append(SurfaceState(None))
    return _PROBES[0]


class SurfacePlan:
    """A validated transition that has not touched the state yet.

    ``kind`` is ``"log"`` (log-only event: nothing changes but the event
    count), ``"append"`` or ``"replace"``. For a replace, ``shadowed`` lists
    the removed seqs in surface order.
    """

    __slots__ = ("_version", "end", "kind", "seq", "shadowed", "start")

    def __init__(
        self,
        kind: str,
        seq: int,
        version: int,
        start: int = -1,
        end: int = -1,
        shadowed: list[int] | None = None,
    ) -> None:
        self.kind = kind
        self.seq = seq
        self.start = start
        self.end = end
        self.shadowed = shadowed
        self._version = version

    def replacement(self) -> SurfaceFoldReplacementsItem:
        """The ``replacements`` entry of :func:`fold_surface` for a replace plan."""
        return {"seq": self.seq, "start": self.start, "end": self.end, "shadowedSeqs": list(self.shadowed or ())}

    def __repr__(self) -> str:
        extra = f", start={self.start}, end={self.end}, shadowed={self.shadowed}" if self.kind == "replace" else ""
        return f"SurfacePlan({self.kind!r}, seq={self.seq}{extra})"


EventLookup = Callable[[int], JsonObject]


class SurfaceState:
    """Incremental surface fold: ``check`` (pure) then ``apply`` (cannot fail).

    ``events`` gives access to earlier events by seq, needed by the
    tool/result rewrite rule (SURF-10): a sequence indexed by seq (the log) or
    a callable ``seq -> event``. The state counts the events it has seen, so
    the expected seq of the next candidate (SURF-2) is :attr:`length`.
    """

    __slots__ = (
        "_dead",
        "_generation",
        "_length",
        "_lookup",
        "_next",
        "_nodes_cache",
        "_rewrite_key",
        "_seq_slot",
        "_slot_seq",
        "_types",
        "_version",
        "_view",
    )

    def __init__(self, events: Sequence[JsonObject] | EventLookup | None = None, revision: RevisionLike = None) -> None:
        from .revision import rules_for

        rules = rules_for(revision)
        self._types = rules.surface_types
        self._rewrite_key = TABLE.rewrite_key_for(rules.messages)
        if events is None:
            self._lookup: EventLookup | None = None
        elif callable(events):
            self._lookup = events
        else:
            self._lookup = events.__getitem__
        self._slot_seq: list[int] = []  # seq held by each slot, -1 when the slot is dead
        self._seq_slot: dict[int, int] = {}  # live seq -> slot
        self._next: list[int] = []  # union-find: _next[i] == i when slot i is live
        self._dead = 0
        self._length = 0
        self._generation = 0
        self._version = 0
        self._nodes_cache: FrozenList | None = FrozenList()
        self._view: SurfaceView | None = None

    # ----------------------------------------------------------------- reads
    @property
    def length(self) -> int:
        """Number of events folded so far (the next expected seq)."""
        return self._length

    @property
    def replace_generation(self) -> int:
        """Committed replaces so far (SURF-13)."""
        return self._generation

    @property
    def nodes(self) -> FrozenList:
        """Current surface seqs in order; the same object until the next change."""
        cache = self._nodes_cache
        if cache is None:
            if self._dead:
                cache = FrozenList([s for s in self._slot_seq if s >= 0])
            else:
                cache = FrozenList(self._slot_seq)
            self._nodes_cache = cache
        return cache

    @property
    def view(self) -> SurfaceView:
        """The one read-only view of this state (SURF-14)."""
        view = self._view
        if view is None:
            view = self._view = SurfaceView(self)
        return view

    def __contains__(self, seq: object) -> bool:
        return seq in self._seq_slot

    def append_cursor(self) -> int:
        """Opaque cursor for :meth:`appended_since` (incremental consumers)."""
        return len(self._slot_seq)

    def appended_since(self, cursor: int) -> list[int]:
        """Seqs appended after ``cursor`` in surface order.

        Exact only while :attr:`replace_generation` has not changed since the
        cursor was taken (then every newer slot is live and at the end).
        """
        return self._slot_seq[cursor:]

    def position_of(self, seq: int) -> int:
        """Surface position of a live seq. O(n): used for messages only."""
        slot = self._seq_slot[seq]
        return sum(1 for s in self._slot_seq[:slot] if s >= 0)

    # ------------------------------------------------------------ transition
    def _find(self, slot: int) -> int:
        """Smallest live slot >= ``slot`` (path halving; never passes a live slot)."""
        nxt = self._next
        while nxt[slot] != slot:
            nxt[slot] = nxt[nxt[slot]]
            slot = nxt[slot]
        return slot

    def _error(self, message: str, code: ErrorCode, requirement: str, event: Mapping[str, Any], index: int) -> SurfaceError:
        seq = event.get("seq")
        return SurfaceError(
            message,
            code,
            requirement=requirement,
            index=index,
            seq=seq if type(seq) is int else None,
        )

    def skip(self, count: int = 1) -> None:
        """SEED-10's log-only transition, stated once: ``count`` log-only events without surface markers
        (which :meth:`check` refuses, SURF-3) change nothing but the count.

        :meth:`apply` of a ``"log"`` plan is ``skip(1)``, so there is no second form: readers that already
        know events are log-only (bulk folds, the validator) count them here without building plans.
        """
        if count < 0:
            raise ValueError("cannot skip a negative number of events")
        if count:
            self._length += count
            self._version += 1

    def try_append(self, etype: JsonValue, op: JsonValue, sources: JsonValue = _MISSING, *, distinct_ints: bool = False) -> bool:
        """Commit the next event (seq :attr:`length`) if it is a valid plain surface append.

        ``etype``, ``op`` and ``sources`` are its ``type``, ``surfaceOp`` and
        ``sourceEventSeqs`` (omit ``sources`` when the key is absent). Returns False and
        changes nothing for anything else; then :meth:`check` decides (and locates the error).
        The sources are judged by the rule table's ``check_sources`` (SURF-7), as :meth:`check` judges
        them, so a variant of that rule holds here too. ``distinct_ints`` (the caller's types prove the
        sources distinct non-negative ints) is accepted and changes nothing: the rule is asked either way.
        """
        if not (op == "append" and type(op) is str and etype.__class__ is str and etype in SURFACE_TYPES):
            return False
        seq = self._length
        if sources is not _MISSING and not _sources_pass(self, sources, seq, etype):
            return False
        self._version += 1
        self._length = seq + 1
        self._push(seq)
        return True

    def _push(self, seq: int) -> None:
        """A new node at the end of the surface (the commit of an append)."""
        slot = len(self._slot_seq)
        self._slot_seq.append(seq)
        self._next.append(slot)
        self._seq_slot[seq] = slot
        self._nodes_cache = None

    def check(self, event: JsonObject, index: int | None = None) -> SurfacePlan:
        """Validate ``event`` as the next event; return a plan, change nothing.

        The event must be the next one: its ``seq`` must equal
        :attr:`length` (SURF-2). ``index`` only labels errors (a seed entry's
        index; defaults to :attr:`length`). Errors follow
        the precedence of SURF-16 and carry the SURF-* code and requirement.
        """
        expected = self._length
        if index is None:
            index = expected
        seq = event.get("seq", _MISSING)
        if type(seq) is not int or seq != expected:
            shown = "missing" if seq is _MISSING else repr(seq)
            raise self._error(
                f"session event seq {shown} is not contiguous; expected {expected}",
                "SURFACE_NOT_CONTIGUOUS",
                "SURF-2",
                event,
                index,
            )
        etype = event.get("type")
        op = event.get("surfaceOp", _MISSING)
        if not (etype.__class__ is str and etype in self._types):
            if op is not _MISSING:
                raise self._error(
                    f'session event "{etype}" is not surface-eligible and cannot carry surfaceOp',
                    "SURFACE_LOG_ONLY_MARKER",
                    "SURF-3",
                    event,
                    index,
                )
            if "sourceEventSeqs" in event:
                raise self._error(
                    f'session event "{etype}" is not surface-eligible and cannot carry sourceEventSeqs',
                    "SURFACE_LOG_ONLY_SOURCES",
                    "SURF-3",
                    event,
                    index,
                )
            return SurfacePlan("log", seq, self._version)
        if op is _MISSING:
            op = TABLE.surface_op_when_missing(etype)
        if op is _MISSING:
            raise self._error(
                f'session event "{etype}" is surface-eligible and requires a surfaceOp marker',
                "SURFACE_MARKER_MISSING",
                "SURF-3",
                event,
                index,
            )
        if op == "append" and type(op) is str:
            sources = event.get("sourceEventSeqs", _MISSING)
            if sources is not _MISSING:
                TABLE.check_sources(self, event, etype, seq, (), index)  # SURF-7: raises the located error
            return SurfacePlan("append", seq, self._version)
        if not isinstance(op, dict):
            raise self._error(
                f'session event "{etype}" carries an invalid surfaceOp {op!r}',
                "SURFACE_MARKER_INVALID",
                "SURF-3",
                event,
                index,
            )
        if (
            len(op) != 3
            or op.get("op", _MISSING) != "replace"
            or type(op.get("op")) is not str
            or not _is_event_seq(op.get("start"))
            or not _is_event_seq(op.get("end"))
        ):
            raise self._error(
                f'session event "{etype}" carries an invalid replace surfaceOp '
                "(needs exactly op='replace', start and end as non-negative safe integers)",
                "SURFACE_REPLACE_MARKER_INVALID",
                "SURF-3",
                event,
                index,
            )
        start: int = op["start"]
        end: int = op["end"]
        slot_s = self._bound_slot("start", start, event, index)
        slot_e = self._bound_slot("end", end, event, index)
        if TABLE.replace_range_reversed(slot_s, slot_e, start, end):
            raise self._error(
                f"surface replace: start seq {start} (position {self.position_of(start)}) is after "
                f"end seq {end} (position {self.position_of(end)})",
                "SURFACE_REPLACE_RANGE",
                "SURF-5",
                event,
                index,
            )
        slot_seq = self._slot_seq
        shadowed = [start]
        slot = slot_s
        find = self._find
        # A valid replace lists every shadowed node in sourceEventSeqs, so enumerating more nodes than
        # it lists (or than a message shows) only proves it invalid: stopping there keeps a log of
        # rejected replaces linear.
        raw = event.get("sourceEventSeqs")
        limit = max(len(raw) if type(raw) in _LISTS else 0, _SHOWN_SEQS)  # type: ignore[arg-type]  # narrowed by the type test
        while slot != slot_e and len(shadowed) <= limit:
            slot = find(slot + 1)
            shadowed.append(slot_seq[slot])
        TABLE.check_sources(self, event, etype, seq, shadowed, index, complete=slot == slot_e)
        if etype == "tool/result":
            self._check_tool_result_rewrite(event, shadowed, index)
        return SurfacePlan("replace", seq, self._version, start, end, shadowed)

    def _bound_slot(self, which: str, seq: int, event: Mapping[str, Any], index: int) -> int:
        """The slot of a replace bound, which must be on the surface (SURF-5)."""
        slot = self._seq_slot.get(seq)
        if slot is None:
            raise self._error(
                f"surface replace: {which} seq {seq} not found in surface",
                "SURFACE_REPLACE_RANGE",
                "SURF-5",
                event,
                index,
            )
        return slot

    def _check_sources(
        self, event: Mapping[str, Any], etype: str, seq: int, shadowed: Sequence[int], index: int,
        complete: bool = True,
    ) -> None:
        """SURF-7 (shape of sourceEventSeqs) then SURF-9 (replace coverage), in SURF-16's order.

        ``shadowed`` is the first nodes of the range, all of them when ``complete``. One pass over the
        sources: the common source (an exact int, an earlier seq, a safe integer) costs one test; only a
        source failing it is looked at again, to tell an invalid one (raised at once) from a later seq.
        """
        raw = event.get("sourceEventSeqs", _MISSING)
        if raw is _MISSING:
            if shadowed:
                missing = _seq_list(shadowed, complete)
                raise self._error(
                    f"surface replace: sourceEventSeqs must include every shadowed surface node; missing {missing}",
                    "SURFACE_SOURCES_COVERAGE",
                    "SURF-9",
                    event,
                    index,
                )
            return
        if type(raw) not in _LISTS:
            raise self._error(
                f"sourceEventSeqs on event at seq {seq} must be a list when present",
                "SURFACE_SOURCES_INVALID",
                "SURF-7",
                event,
                index,
            )
        if not raw and etype != "assistant/message":
            raise self._error(
                "sourceEventSeqs must not be empty except on assistant/message",
                "SURFACE_SOURCES_INVALID",
                "SURF-7",
                event,
                index,
            )
        earlier = seq if seq <= MAX_SAFE_INTEGER else MAX_SAFE_INTEGER + 1  # a source below it is earlier and safe
        not_earlier = None
        for source in raw:
            if type(source) is not int or not 0 <= source < earlier:
                if type(source) is not int or not 0 <= source <= MAX_SAFE_INTEGER:
                    raise self._error(
                        f'session event "{etype}" sourceEventSeqs must contain non-negative safe integers; '
                        f"got {source!r}",
                        "SURFACE_SOURCES_INVALID",
                        "SURF-7",
                        event,
                        index,
                    )
                if not_earlier is None:
                    not_earlier = source
        sources = set(raw)
        if len(sources) != len(raw):
            raise self._error(
                "sourceEventSeqs must not contain duplicates",
                "SURFACE_SOURCES_INVALID",
                "SURF-7",
                event,
                index,
            )
        if not_earlier is not None:
            raise self._error(
                f"sourceEventSeqs must reference earlier events: {not_earlier} >= current seq {seq}",
                "SURFACE_SOURCES_INVALID",
                "SURF-7",
                event,
                index,
            )
        if shadowed and not sources.issuperset(shadowed):
            raise self._error(
                "surface replace: sourceEventSeqs must include every shadowed surface node; missing "
                + _seq_list([s for s in shadowed if s not in sources], complete),
                "SURFACE_SOURCES_COVERAGE",
                "SURF-9",
                event,
                index,
            )

    def _check_tool_result_rewrite(self, event: Mapping[str, Any], shadowed: list[int], index: int) -> None:
        """SURF-10: a tool/result replace rewrites one tool/result's content only."""
        if len(shadowed) != 1:
            raise self._error(
                f"tool/result surface replacement must rewrite exactly one current node; it shadows {len(shadowed)}",
                "SURFACE_TOOL_RESULT_REWRITE",
                "SURF-10",
                event,
                index,
            )
        if self._lookup is None:
            raise RuntimeError("SurfaceState needs the event log to check a tool/result replacement")
        original = self._lookup(shadowed[0])
        if original is None or original.get("type") != "tool/result":
            raise self._error(
                "tool/result surface replacement must target a current tool/result",
                "SURFACE_TOOL_RESULT_REWRITE",
                "SURF-10",
                event,
                index,
            )
        key = self._rewrite_key
        if not json_equal(key(original.get("data")), key(event.get("data"))):
            raise self._error(
                "tool/result surface replacement may change only content",
                "SURFACE_TOOL_RESULT_REWRITE",
                "SURF-10",
                event,
                index,
            )

    def apply(self, plan: SurfacePlan) -> None:
        """Commit a plan made by :meth:`check` on this exact state (cannot fail)."""
        if plan._version != self._version:
            raise RuntimeError("stale SurfacePlan: the surface changed after check()")
        kind = plan.kind
        if kind == "log":
            self.skip(1)  # SEED-10: a log-only event is counted, nothing else changes
            return
        self._version += 1
        self._length += 1
        if kind == "append":
            self._push(plan.seq)
            return
        shadowed = plan.shadowed or []
        seq_slot = self._seq_slot
        slot_seq = self._slot_seq
        nxt = self._next
        start_slot = seq_slot.pop(shadowed[0])
        for s in shadowed[1:]:
            slot = seq_slot.pop(s)
            slot_seq[slot] = -1
            nxt[slot] = slot + 1
        self._dead += len(shadowed) - 1
        slot_seq[start_slot] = plan.seq
        seq_slot[plan.seq] = start_slot
        self._generation = TABLE.next_replace_generation(self._generation, plan)
        self._nodes_cache = None

    def advance(self, event: JsonObject, index: int | None = None) -> SurfacePlan:
        """``check`` then ``apply``; returns the applied plan."""
        plan = self.check(event, index)
        self.apply(plan)
        return plan


_SHOWN_SEQS = 20


def _replace_range_reversed(start_slot: int, end_slot: int, start: int, end: int) -> bool:
    """SURF-5: a replace range is reversed when its start comes after its end by surface position (not by seq)."""
    return start_slot > end_slot


define("surface_op_when_missing", lambda etype: _MISSING)  # APPEND-5: a surface event without surfaceOp is refused
define("replace_range_reversed", _replace_range_reversed)
define("check_sources", SurfaceState._check_sources)  # SURF-7 then SURF-9
define("rewrite_key_for", lambda shape: shape.rewrite_key)  # SURF-10: what a tool/result rewrite must keep
define("next_replace_generation", lambda generation, plan: generation + 1)  # SURF-13: one per replace


def _seq_list(seqs: Sequence[int], complete: bool) -> str:
    """Seqs for a message, at most ``_SHOWN_SEQS`` of them (a message never grows with the surface)."""
    text = ", ".join(str(s) for s in seqs[:_SHOWN_SEQS])
    if len(seqs) > _SHOWN_SEQS:
        text += f" and {len(seqs) - _SHOWN_SEQS} more"
    return text if complete else text + " (and possibly more: the range holds more nodes than are listed)"


class SurfaceView:
    """Read-only live view of a session's surface (SURF-14).

    It offers no way to validate or mutate; it always reflects the state's
    latest committed events.
    """

    __slots__ = ("_state",)

    def __init__(self, state: SurfaceState) -> None:
        self._state = state

    @property
    def nodes(self) -> FrozenList:
        """Current surface seqs in model-visible order (read-only list)."""
        return self._state.nodes

    @property
    def replace_generation(self) -> int:
        """Committed replaces so far; only ever increases."""
        return self._state.replace_generation

    def __repr__(self) -> str:
        return f"SurfaceView(nodes={list(self.nodes)!r}, replace_generation={self.replace_generation})"


def fold_surface(events: Sequence[JsonObject], revision: RevisionLike = None) -> SurfaceFold:
    """Replay a whole log through the surface fold (SURF-12).

    Returns ``{"nodes": [...], "replacements": [{seq, start, end,
    shadowedSeqs}, ...]}`` (plain lists); raises :class:`SurfaceError` on the
    first violation. The input is not modified.
    """
    state = SurfaceState(events, revision)
    replacements: list[SurfaceFoldReplacementsItem] = []
    check = state.check
    check_sources = TABLE.check_sources
    apply = state.apply
    skip = state.skip
    push = state._push
    types = state._types
    frozen = FrozenDict
    done = 0  # the events before this position are in the state, or are plain and held below
    appended: list[int] = []  # the plain appends among the held events, in order
    for position, event in enumerate(events):
        # A plain event is held rather than committed: a log-only one (a dict whose seq is its position,
        # whose type is not a surface type, without either marker: check() would only count it) and a
        # surface append (its type a surface type, surfaceOp "append"; its sourceEventSeqs, if any, judged
        # by the rule table's check_sources, which raises what check() would raise). The held events are
        # committed as apply() commits their plans (counted, the appends pushed in order) before the next
        # event that is not plain, which check() decides and reports.
        cls = event.__class__
        if cls is dict or cls is frozen:
            try:
                etype = event["type"]
                seq = event["seq"]
                if etype not in types:  # (a non-str type is never a surface type, as in check())
                    if seq.__class__ is int and seq == position and "surfaceOp" not in event and "sourceEventSeqs" not in event:
                        continue
                elif etype.__class__ is str and seq.__class__ is int and seq == position:
                    op = event.get("surfaceOp")
                    if op == "append" and op.__class__ is str:
                        if "sourceEventSeqs" in event:  # SURF-7, raising what check() would raise
                            check_sources(state, event, etype, seq, (), position)
                        appended.append(seq)
                        continue
            except (KeyError, TypeError):  # no type or seq, an unhashable type: check() decides
                pass
        skip(position - done)
        for seq in appended:
            push(seq)
        appended = []
        plan = check(event)
        apply(plan)
        done = position + 1
        if plan.kind == "replace":
            replacements.append(plan.replacement())
    skip(len(events) - done)
    for seq in appended:
        push(seq)
    return {"nodes": list(state.nodes), "replacements": replacements}

