"""``find_last_message_turn_end``: the last completed user-message turn (FIND-1..4).

Callers use it to fork or resume at the last point where a turn started by a
user message was closed; turns started by other triggers (injection, retry,
session title, ...) are not candidates.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from sessionspec.spec.schema_types import JsonObject

from .rule_table import TABLE, define

__all__ = ["find_last_message_turn_end"]


def _turn_key(turn: Any) -> Any:
    """Set key with JavaScript ``Set`` semantics: 1 and 1.0 match, ``True`` does not."""
    t = type(turn)
    if t is int or t is float:
        return turn
    if t is str:
        return ("str", turn)
    if t is bool or turn is None:
        return (t.__name__, turn)
    return ("id", id(turn))


def find_last_message_turn_end(events: Iterable[JsonObject]) -> JsonObject | None:
    """The last ``turn/end`` whose ``turn/start`` (in ``events``) had ``trigger.kind == 'message'``.

    Returns the event object from ``events`` itself, or ``None`` (FIND-4).
    """
    pending: set[Any] = set()
    latest = None
    event: Any  # an event as read: members narrowed by the rule table's checks, not by isinstance
    for event in events:
        etype = event.get("type")
        if etype == "turn/start":
            if TABLE.message_turn_start(event):
                pending.add(_turn_key(event["data"].get("turn")))
        elif etype == "turn/end":
            data = event.get("data")
            key = _turn_key(data.get("turn") if isinstance(data, dict) else None)
            if key in pending:
                pending.discard(key)
                latest = event
    return latest


def _message_turn_start(event: Mapping[str, Any]) -> bool:
    """FIND-2: a turn/start whose trigger kind is ``message`` (other triggers start no candidate turn)."""
    data = event.get("data")
    if not isinstance(data, dict):
        return False
    trigger = data.get("trigger")
    return isinstance(trigger, dict) and trigger.get("kind") == "message"


define("message_turn_start", _message_turn_start)
