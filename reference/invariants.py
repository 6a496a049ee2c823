"""Optional relational invariants of a session log (INV-1 … INV-13).

These rules are not part of the always-on validation (INV-13): ``append``
accepts a log that breaks them. They are checked in two ways:

* ``check_invariants(events)``: a strict, offline pass that reports *every*
  violation (the CLI's strict mode). After a violation the fold continues
  with the transition the event would have made, so one bad event does not
  drown the rest of the report.
* ``InvariantChecker``: installed on a ``SessionStore``. Each append is
  checked before commit through the store's pre-commit hook (a violation
  vetoes it, APPEND-10) and the per-session trace advances only after the
  commit (INV-11). Installation and every announcement replay the existing
  events (SEED-16); uninstalling removes every effect (INV-12).

The store's fold is pure: ``InvariantTrace.advance(event)`` returns a new
trace and never mutates the old one. ``check_invariants`` runs the same
transition on a mutable ``InvariantFold`` (no trace per event), with a
shortcut for a chunk inside the open step; the results are the same. Comparisons follow the reference's
strict equality (``===``): numbers compare by value, ``bool`` is never a
number, absent (``MISSING``) differs from ``null`` (``None``), and objects
or lists never equal anything (they are distinct references).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sessionspec.spec import FORMAT
from sessionspec.spec.error_codes import ErrorCode
from sessionspec.spec.errors import InvariantError
from sessionspec.spec.schema_types import JsonObject, JsonValue

from .revision import Rules, rules_for
from .rule_table import TABLE, define

if TYPE_CHECKING:  # pragma: no cover
    from sessionspec.reference.revision import RevisionLike

    from .session import Session
    from .store import SessionStore

__all__ = [
    "INV_CODES",
    "TURN_BOUNDS",
    "InvariantChecker",
    "InvariantFold",
    "InvariantTrace",
    "check_invariants",
    "replay",
]

TOOL_NOT_STARTED: str = FORMAT.repair["notStarted"]["code"]
_PINNED = rules_for(None)

#: The stable codes (``spec/errors.json``): one per rejection condition.
INV_CODES: frozenset[str] = frozenset(
    {
        "INV_SEQ_NOT_INCREASING",
        "INV_TURN_ALREADY_OPEN",
        "INV_TURN_NUMBER",
        "INV_TURN_MISMATCH",
        "INV_STEP_STILL_OPEN",
        "INV_STEP_ALREADY_OPEN",
        "INV_STEP_NUMBER",
        "INV_STEP_MISMATCH",
        "INV_CALL_NOT_PENDING",
        "INV_NO_OPEN_TURN",
    }
)


class _Missing:
    """A field that is absent (JavaScript ``undefined``), as opposed to ``null``."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


def _field(data: Any, key: str) -> Any:
    """``data[key]`` when ``data`` is an object and has the key, else ``MISSING``."""
    if isinstance(data, Mapping):
        return data.get(key, MISSING)
    return MISSING


def _is_number(value: Any) -> bool:
    return type(value) is int or type(value) is float


def _same(a: Any, b: Any) -> bool:
    """The reference's ``a === b`` on JSON values."""
    if a is b:
        return True
    if _is_number(a) and _is_number(b):
        return bool(a == b)
    if type(a) is str and type(b) is str:
        return a == b
    return False  # bools/None are singletons (caught by `is`); containers are references


define("turn_number_ok", _same)  # INV-2: a turn/start carries the expected turn number (JavaScript ===)


def _not_started_waiver(is_error: Any, code: Any) -> bool:
    """INV-7: a result waives the pending check only with ``isError`` true and the not-started error code."""
    return _truthy(is_error) and _same(code, TOOL_NOT_STARTED)


define("not_started_waiver", _not_started_waiver)


def _truthy(value: Any) -> bool:
    """JavaScript truthiness of a JSON value (``[]`` and ``{}`` are truthy)."""
    if value is MISSING or value is None or value is False:
        return False
    if _is_number(value):
        nonzero: bool = value != 0
        return nonzero
    if type(value) is str:
        return value != ""
    return True


def _call_key(call_id: Any) -> Any:
    """A hashable key under which ``===`` equality of call ids is set membership."""
    if type(call_id) is str:
        return ("s", call_id)
    if _is_number(call_id):
        return ("n", float(call_id))
    if call_id is None or call_id is MISSING or type(call_id) is bool:
        return ("k", repr(call_id))
    return ("ref", id(call_id))  # a container equals only itself


def _show(value: Any) -> str:
    if value is MISSING:
        return "undefined"
    if value is None:
        return "null"
    return repr(value)


@dataclass(frozen=True, slots=True)
class InvariantTrace:
    """The committed relational state of one session (immutable).

    ``open_turn``/``open_step`` are ``None`` when closed; a value read from
    an event may be ``MISSING`` (the field was absent), which counts as open,
    exactly as in the reference.
    """

    last_seq: JsonValue = -1
    open_turn: object = None
    open_step: object = None
    next_turn: int = 1
    next_step: int = 1
    pending: frozenset[object] = field(default_factory=frozenset)
    rules: Rules = field(default=_PINNED, compare=False, repr=False)
    """The format revision whose rules the trace follows (INV-7, INV-10 differ between revisions)."""

    def advance(self, event: JsonObject, *, index: int | None = None) -> InvariantTrace:
        """The trace after ``event``; raises the first ``InvariantError`` instead."""
        trace, errors = self.step(event, index=index)
        if errors:
            raise errors[0]
        return trace

    #: ``check(event)`` is ``advance(event)``: validate and return the next trace.
    check = advance

    def step(
        self, event: JsonObject, *, index: int | None = None
    ) -> tuple[InvariantTrace, list[InvariantError]]:
        """Every violation ``event`` causes, and the trace after it (pure: ``self`` is untouched)."""
        fold = InvariantFold(self)
        errors = _transition(fold, event, index)
        return fold.snapshot(), errors


_NO_ERRORS: tuple[InvariantError, ...] = ()
_IN_STEP = frozenset({"assistant/chunk", "assistant/message"})


class InvariantFold:
    """The same fold with mutable state: the offline pass's hot loop (``check_invariants``, the CLI).

    ``InvariantTrace`` allocates a new frozen trace per event, which the store
    needs (a vetoed append must leave the committed trace untouched, INV-11)
    but a one-pass check over a whole log does not. Both run the one
    transition below, so they report the same errors; ``step`` only adds a
    shortcut for the dominant event, a chunk or message inside the open step
    whose seq, turn and step are plain ints (a property test keeps the
    shortcut and the pure trace in agreement).
    """

    __slots__ = ("last_seq", "next_step", "next_turn", "open_step", "open_turn", "pending", "rules")

    def __init__(self, trace: InvariantTrace | None = None, revision: RevisionLike = None) -> None:
        self.rules = trace.rules if trace is not None else rules_for(revision)
        if trace is None:
            self.last_seq: Any = -1
            self.open_turn: Any = None
            self.open_step: Any = None
            self.next_turn: int = 1
            self.next_step: int = 1
            self.pending: set[Any] = set()
        else:
            self.last_seq = trace.last_seq
            self.open_turn = trace.open_turn
            self.open_step = trace.open_step
            self.next_turn = trace.next_turn
            self.next_step = trace.next_step
            self.pending = set(trace.pending)

    def snapshot(self) -> InvariantTrace:
        """The immutable trace of the current state."""
        return InvariantTrace(
            self.last_seq, self.open_turn, self.open_step, self.next_turn, self.next_step, frozenset(self.pending),
            self.rules,
        )

    def in_step(self, seq: JsonValue, turn: JsonValue, step: JsonValue) -> bool:
        """The shortcut of ``step`` for an ``assistant/chunk``/``assistant/message`` given by its parts.

        True when it applied (the event is clean and the state has moved past
        it); False when nothing was changed and the caller must use ``step``.
        """
        last = self.last_seq
        open_turn = self.open_turn
        open_step = self.open_step
        if (
            type(seq) is int and type(last) is int and seq > last
            and type(turn) is int and type(open_turn) is int and turn == open_turn
            and type(step) is int and type(open_step) is int and step == open_step
        ):
            self.last_seq = seq
            return True
        return False

    def step(self, event: JsonObject, index: int | None = None) -> Sequence[InvariantError]:
        """Advance past ``event`` (in place) and return the violations it causes."""
        if type(event) is dict:
            seq = event.get("seq")
            last = self.last_seq
            etype = event.get("type")
            if type(seq) is int and type(last) is int and seq > last and type(etype) is str and etype in _IN_STEP:
                data = event.get("data")
                if type(data) is dict:
                    turn = data.get("turn")
                    step = data.get("step")
                    open_turn = self.open_turn
                    open_step = self.open_step
                    # INV-1 holds and INV-5 holds (`===` on ints; bool is excluded by the type test).
                    if (
                        type(turn) is int and type(open_turn) is int and turn == open_turn
                        and type(step) is int and type(open_step) is int and step == open_step
                    ):
                        self.last_seq = seq
                        return _NO_ERRORS
        return _transition(self, event, index)


def _fail(errors: list[InvariantError], rule: str, code: ErrorCode, message: str, index: int | None, seq: Any) -> None:
    errors.append(InvariantError(message, code, requirement=rule, index=index, seq=seq))


def _require_open_step(
    errors: list[InvariantError], state: InvariantFold, kind: str, rule: str, turn: Any, step: Any,
    index: int | None, seq: Any,
) -> None:
    open_turn, open_step = state.open_turn, state.open_step
    if not (_same(open_turn, turn) and _same(open_step, step)):
        _fail(
            errors, rule, "INV_STEP_MISMATCH",
            f"{kind} names turn {_show(turn)}/step {_show(step)} but open is "
            f"turn {_show(open_turn)}/step {_show(open_step)}",
            index, seq,
        )


def _transition(state: InvariantFold, event: Mapping[str, Any], index: int | None) -> list[InvariantError]:
    """Every violation ``event`` causes; moves ``state`` to the state after it.

    After a violation the state still takes the transition the event would
    have made, so ``check_invariants`` goes on reporting later violations.
    The seq rule (INV-1) holds for every event; the rest is one step per event kind
    (:data:`_KIND_STEPS`), each called as ``step(errors, state, event, data, turn, step, index, seq)``.
    """
    errors: list[InvariantError] = []
    is_map = isinstance(event, Mapping)
    seq = event.get("seq", MISSING) if is_map else MISSING
    etype = event.get("type", MISSING) if is_map else MISSING
    err_seq = seq if type(seq) is int else None
    _check_seq(errors, state, seq, index, err_seq)
    data = event.get("data", MISSING) if is_map else MISSING
    kind_step = _KIND_STEPS.get(etype, _other_kind) if type(etype) is str else _other_kind
    kind_step(errors, state, event, data, _field(data, "turn"), _field(data, "step"), index, err_seq)
    return errors


def _check_seq(errors: list[InvariantError], state: InvariantFold, seq: Any, index: int | None, err_seq: Any) -> None:
    """INV-1: strictly increasing seq."""
    if not _is_number(seq):
        _fail(errors, "INV-1", "INV_SEQ_NOT_INCREASING", f"seq must be a number, got {_show(seq)}", index, err_seq)
        return
    last_seq = state.last_seq
    if _is_number(last_seq) and seq <= last_seq:
        _fail(errors, "INV-1", "INV_SEQ_NOT_INCREASING", f"seq must strictly increase: saw {seq} after {last_seq}",
              index, err_seq)
    state.last_seq = seq


def _turn_start(errors: list[InvariantError], state: InvariantFold, event: Mapping[str, Any], data: Any, turn: Any, step: Any,
        index: int | None, seq: Any) -> None:
    """INV-2: no turn is open, and the turn number is the next one."""
    next_turn = state.next_turn
    if state.open_turn is not None:
        _fail(errors, "INV-2", "INV_TURN_ALREADY_OPEN",
              f"turn/start {_show(turn)} while turn {_show(state.open_turn)} is still open", index, seq)
    if not TABLE.turn_number_ok(turn, next_turn):
        _fail(errors, "INV-2", "INV_TURN_NUMBER", f"turn/start expected turn {next_turn}, got {_show(turn)}", index, seq)
    state.open_turn = turn
    state.next_step = 1


def _turn_end(errors: list[InvariantError], state: InvariantFold, event: Mapping[str, Any], data: Any, turn: Any, step: Any,
        index: int | None, seq: Any) -> None:
    """INV-3: it closes the open turn, whose steps are all closed."""
    if not _same(state.open_turn, turn):
        _fail(errors, "INV-3", "INV_TURN_MISMATCH",
              f"turn/end {_show(turn)} does not match open turn {_show(state.open_turn)}", index, seq)
    if state.open_step is not None:
        _fail(errors, "INV-3", "INV_STEP_STILL_OPEN",
              f"turn/end {_show(turn)} while step {_show(state.open_step)} is still open", index, seq)
    state.open_turn = None
    state.next_turn += 1


def _step_start(errors: list[InvariantError], state: InvariantFold, event: Mapping[str, Any], data: Any, turn: Any, step: Any,
        index: int | None, seq: Any) -> None:
    """INV-4: inside the open turn, no step open, and the step number is the next one."""
    if not _same(state.open_turn, turn):
        _fail(errors, "INV-4", "INV_TURN_MISMATCH",
              f"step/start in turn {_show(turn)} but open turn is {_show(state.open_turn)}", index, seq)
    if state.open_step is not None:
        _fail(errors, "INV-4", "INV_STEP_ALREADY_OPEN",
              f"step/start {_show(step)} while step {_show(state.open_step)} is still open", index, seq)
    next_step = state.next_step
    if not _same(step, next_step):
        _fail(errors, "INV-4", "INV_STEP_NUMBER",
              f"step/start expected step {next_step} in turn {_show(turn)}, got {_show(step)}", index, seq)
    state.open_step = step


def _step_end(errors: list[InvariantError], state: InvariantFold, event: Mapping[str, Any], data: Any, turn: Any, step: Any,
        index: int | None, seq: Any) -> None:
    """INV-5 (it names the open step); INV-6: unanswered calls are dropped at step end."""
    _require_open_step(errors, state, "step/end", "INV-5", turn, step, index, seq)
    state.pending.clear()
    state.open_step = None
    state.next_step += 1


def _in_open_step(errors: list[InvariantError], state: InvariantFold, event: Mapping[str, Any], data: Any, turn: Any, step: Any,
        index: int | None, seq: Any) -> None:
    """INV-5: an assistant chunk or message names the open step."""
    _require_open_step(errors, state, event["type"], "INV-5", turn, step, index, seq)


def _tool_call(errors: list[InvariantError], state: InvariantFold, event: Mapping[str, Any], data: Any, turn: Any, step: Any,
        index: int | None, seq: Any) -> None:
    """INV-5, INV-6: a tool call names the open step and is pending until its result."""
    _require_open_step(errors, state, "tool/call", "INV-5", turn, step, index, seq)
    state.pending.add(_call_key(_field(data, "callId")))


def _tool_result(errors: list[InvariantError], state: InvariantFold, event: Mapping[str, Any], data: Any, turn: Any, step: Any,
        index: int | None, seq: Any) -> None:
    """INV-7: an appended result answers a pending call of the open step; INV-8: a replacement needs an open turn."""
    if not _same(event.get("surfaceOp", MISSING), "append"):
        if state.open_turn is None:
            _fail(errors, "INV-8", "INV_NO_OPEN_TURN", "tool/result surface replacement appended outside any open turn",
                  index, seq)
        return
    _require_open_step(errors, state, "tool/result", "INV-7", turn, step, index, seq)
    shape = state.rules.messages
    call_id = shape.result_call_id(data, MISSING)
    not_started = TABLE.not_started_waiver(shape.result_is_error(data, MISSING), _field(_field(data, "error"), "code"))
    key = _call_key(call_id)
    if key not in state.pending and not not_started:
        _fail(errors, "INV-7", "INV_CALL_NOT_PENDING",
              f"tool/result for {_show(call_id)} with no prior tool/call in this step", index, seq)
    state.pending.discard(key)


def _user_message(errors: list[InvariantError], state: InvariantFold, event: Mapping[str, Any], data: Any, turn: Any, step: Any,
        index: int | None, seq: Any) -> None:
    """INV-9: allowed inside or outside a turn."""


def _other_kind(errors: list[InvariantError], state: InvariantFold, event: Mapping[str, Any], data: Any, turn: Any, step: Any,
        index: int | None, seq: Any) -> None:
    """INV-10: the other kinds the revision names need an open turn."""
    etype = event.get("type", MISSING) if isinstance(event, Mapping) else MISSING
    if state.open_turn is None and state.rules.needs_open_turn(etype):
        what = _show(etype) if type(etype) is not str else etype
        _fail(errors, "INV-10", "INV_NO_OPEN_TURN", f"{what} appended outside any open turn", index, seq)


_KindStep = Callable[[list[InvariantError], InvariantFold, Mapping[str, Any], Any, Any, Any, "int | None", Any], None]
_KIND_STEPS: dict[str, _KindStep] = {
    "turn/start": _turn_start,
    "turn/end": _turn_end,
    "step/start": _step_start,
    "step/end": _step_end,
    "assistant/chunk": _in_open_step,
    "assistant/message": _in_open_step,
    "tool/call": _tool_call,
    "tool/result": _tool_result,
    "user/message": _user_message,
}

TURN_BOUNDS: tuple[str, str] = (next(t for t, f in _KIND_STEPS.items() if f is _turn_start),
                                next(t for t, f in _KIND_STEPS.items() if f is _turn_end))
"""The types that open and close a turn (INV-2, INV-3): what a reader tracking "inside a turn" follows."""


def check_invariants(events: Iterable[JsonObject], revision: RevisionLike = None) -> list[InvariantError]:
    """Every INV violation in ``events``, in log order (empty when the log is clean)."""
    fold = InvariantFold(revision=revision)
    step = fold.step
    found: list[InvariantError] = []
    for index, event in enumerate(events):
        errors = step(event, index)
        if errors:
            found.extend(errors)
    return found


def replay(events: Iterable[JsonObject], revision: RevisionLike = None) -> InvariantTrace:
    """The trace after ``events``; raises the first violation."""
    trace = InvariantTrace(rules=rules_for(revision))
    for index, event in enumerate(events):
        trace = trace.advance(event, index=index)
    return trace


class InvariantChecker:
    """The relational checker as a store companion (install / uninstall).

    It keeps one trace per session object (weakly, so a dropped session is
    forgotten). The pre-commit validator computes the next trace from the
    frozen candidate and returns a commit callback; the store runs that
    callback only after the event is in the log, so a veto by any validator
    leaves the trace unchanged (INV-11).
    """

    def __init__(self) -> None:
        self._traces: weakref.WeakKeyDictionary[Session, InvariantTrace] = weakref.WeakKeyDictionary()
        self._store: SessionStore | None = None
        self._removers: list[Callable[[], None]] = []

    @property
    def installed(self) -> bool:
        return self._store is not None

    def trace_of(self, session: Session) -> InvariantTrace | None:
        """The committed trace of ``session`` (``None`` when not tracked yet)."""
        return self._traces.get(session)

    def install(self, store: SessionStore) -> InvariantChecker:
        """Replay every live session, then check every later append (SEED-16).

        A live session that already violates a rule makes installation fail
        with that error and leaves the store untouched.
        """
        if self._store is not None:
            raise RuntimeError("this InvariantChecker is already installed")
        traces = {session: self._replay(session) for session in store.list()}
        self._traces = weakref.WeakKeyDictionary(traces)
        self._store = store
        self._removers = [
            store.add_pre_commit_validator(self._validate),
            store.on("session/created", self._on_created),
        ]
        return self

    def uninstall(self) -> None:
        """Remove every effect: later appends are not checked (INV-12)."""
        for remove in reversed(self._removers):
            remove()
        self._removers = []
        self._store = None
        self._traces = weakref.WeakKeyDictionary()

    def __enter__(self) -> InvariantChecker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.uninstall()

    @staticmethod
    def _replay(session: Session) -> InvariantTrace:
        try:
            return replay(session.events, session._rules)
        except InvariantError as error:
            error.message = f"session {session.id!r}: {error.message}"
            error.args = (error.message,)
            raise

    def _on_created(self, session: Session) -> None:
        # Raising here vetoes publication: `create` rolls back (STORE-7, SEED-16).
        self._traces[session] = self._replay(session)

    def _validate(self, session: Session, candidate: Mapping[str, Any]) -> Callable[[], None]:
        trace = self._traces.get(session)
        if trace is None:
            trace = self._replay(session)
            self._traces[session] = trace
        after = trace.advance(candidate, index=candidate.get("seq"))

        def commit() -> None:
            self._traces[session] = after

        return commit
