"""Crash repair: the synthetic events that close an interrupted final turn (REPAIR-1..12).

After a crash the log may end inside a turn. :func:`interrupted_turn_closers`
scans it and returns, in order: one error ``tool/result`` per tool call that
was requested but never answered, a ``step/end`` if a step is open, and a
``turn/end`` with reason ``interrupted``. Appending them yields a balanced log
that seeds cleanly (the results are valid surface appends whose provenance
points at earlier ``tool/call`` events). Nothing already written is removed.

Texts, codes, error names and the turn-end reason come from the spec
constants (``FORMAT.repair``) and are compared byte for byte.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from sessionspec.spec import FORMAT
from sessionspec.spec.schema_types import JsonObject, JsonValue

from .revision import rules_for
from .rule_table import TABLE, define

if TYPE_CHECKING:
    from sessionspec.reference.revision import RevisionLike

__all__ = ["TOOL_NOT_STARTED", "TOOL_OUTCOME_UNKNOWN", "TURN_BOUNDARIES", "interrupted_turn_closers"]

_REPAIR = FORMAT.repair
TOOL_NOT_STARTED: str = _REPAIR["notStarted"]["code"]
TOOL_OUTCOME_UNKNOWN: str = _REPAIR["outcomeUnknown"]["code"]
#: the event types that reset the closers' whole scan (open turn, open step, pending calls): the closers of a log are
#: those of its events from the last of them on (REPAIR-1 … REPAIR-6), so a reader that keeps only that suffix (the
#: validator's fast pass) asks the same question of it
TURN_BOUNDARIES: frozenset[str] = frozenset({"turn/start", "turn/end"})


def _data(event: Mapping[str, Any]) -> Mapping[str, Any]:
    data = event.get("data")
    return data if isinstance(data, Mapping) else {}


def interrupted_turn_closers(events: Sequence[JsonObject], revision: RevisionLike = None) -> list[dict[str, JsonValue]]:
    """Closer events for an open final turn, or ``[]`` when no turn is open (REPAIR-1).

    Seqs continue from the last event's ``seq + 1``; every closer reuses the
    last event's ``time`` (REPAIR-7). Returned events are new plain dicts,
    with ``surfaceOp`` written before ``sourceEventSeqs``. The payload shape of
    the synthetic results follows ``revision`` (REPAIR-8).
    """
    return TABLE.interrupted_turn_closers(events, revision)  # type: ignore[no-any-return]


def _interrupted_turn_closers(events: Sequence[Mapping[str, Any]], revision: RevisionLike = None) -> list[dict[str, Any]]:
    rules = rules_for(revision)
    shape = rules.messages
    open_turn: Any = None
    open_step: Any = None
    # callId -> [step, call seq or None]; insertion ordered (REPAIR-2, REPAIR-3)
    pending: dict[Any, list[Any]] = {}
    for event in events[_last_turn_boundary(events):]:
        etype = event.get("type")
        if etype == "turn/start":
            open_turn = _data(event).get("turn")
            open_step = None
            pending.clear()
        elif etype == "turn/end":
            open_turn = None
            open_step = None
            pending.clear()
        elif etype == "step/start":
            open_step = _data(event).get("step")
        elif etype == "step/end":
            pending.clear()
            open_step = None
        elif etype == "assistant/message":
            data = _data(event)
            for block in shape.tool_calls(data):
                # A repeated id keeps its position and restarts its entry.
                pending[block.get("id")] = [data.get("step"), None]
        elif etype == "tool/call":
            entry = pending.get(_data(event).get("callId"))
            if entry is not None:
                entry[1] = event.get("seq")
        elif etype == "tool/result":
            pending.pop(shape.result_call_id(_data(event)), None)

    if open_turn is None or not events:
        return []
    last = events[-1]
    seq = last["seq"] + 1
    time = last["time"]
    closers: list[dict[str, Any]] = []
    for call_id, (step, call_seq) in pending.items():
        started = call_seq is not None
        texts = TABLE.repair_texts
        spec = texts["outcomeUnknown"] if started else texts["notStarted"]
        message_id = rules.interrupted_message_id.format(callId=call_id, seq=seq)
        data = shape.closer_result(open_turn, step, call_id, spec["text"], message_id)
        data["error"] = {"name": spec["name"], "code": spec["code"]}
        result: dict[str, Any] = {"type": "tool/result", "seq": seq, "time": time, "data": data, "surfaceOp": "append"}
        if started:
            result["sourceEventSeqs"] = [call_seq]
        closers.append(result)
        seq += 1
    if open_step is not None:
        closers.append({"type": "step/end", "seq": seq, "time": time, "data": {"turn": open_turn, "step": open_step}})
        seq += 1
    closers.append(
        {
            "type": "turn/end",
            "seq": seq,
            "time": time,
            "data": {"turn": open_turn, "reason": dict(_REPAIR["turnEndReason"])},
        }
    )
    return closers


def _last_turn_boundary(events: Sequence[Mapping[str, Any]]) -> int:
    """The index of the last ``turn/start`` or ``turn/end``, or 0: both reset the whole scan state
    (open turn, open step, pending calls), so the scan may begin there (a log that ends closed
    costs one test, not a pass over the log)."""
    for index in range(len(events) - 1, -1, -1):
        if events[index].get("type") in TURN_BOUNDARIES:
            return index
    return 0


define("interrupted_turn_closers", _interrupted_turn_closers)  # REPAIR-1 … REPAIR-8 (REPAIR-6: their order)
define("repair_texts", _REPAIR)  # REPAIR-9: the text of each synthetic result
