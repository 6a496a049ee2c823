"""What a revision's load path does with records of the earlier format and with types it does not know.

The published load path (JSONL-13..15, ``b150a551b8`` only) reads a stored log
written in the pinned format: before crash repair and seeding it upgrades, in
log order, each record of the earlier shape (a ``turn/start`` trigger dropped,
old ``turn/end`` reasons rewritten, ``steering/message`` folded into
``user/message``, flat messages wrapped as identified messages with minted
ids), refuses such a record when it is malformed, checks each resulting
message as a seeded one, and then refuses an event whose type the revision
does not know unless it is marked ``ignorable``. The stored file is never
rewritten by the upgrade.

The facts (the minted id format, the reason mapping, the accepted reason
keys, the vocabulary) are the revision's constants (``jsonl.loadUpgrade``,
``jsonl.unknownTypesOnLoad``; the vocabulary is the revision's registry); a revision without them
(the pinned one) loads records as stored.
"""

from __future__ import annotations

import copy
from collections.abc import Collection, Iterable, Mapping
from typing import Any, Protocol, TypedDict, TypeGuard, overload

from sessionspec.spec.errors import JsonlError, SeedError
from sessionspec.spec.schema_types import JsonObject, JsonValue

from .finding import Finding
from .json_value import is_object, is_safe_int


class MessageChecks(Protocol):
    """What the upgrade needs of the revision's message shape (``revision.MessageShape``)."""

    #: the types `seed_problem` looks at (it finds nothing in a record of any other type)
    seed_types: frozenset[str]

    def seed_problem(self, etype: str, data: object) -> Finding | None: ...


class ErrorReasonFacts(TypedDict):
    """How an earlier ``error`` reason of ``turn/end`` becomes the current one (``turnEndReasons.error``)."""

    kind: str
    failureKeys: Mapping[str, str]
    optionalFailureKeys: Mapping[str, str]
    defaultCode: str


class TurnEndReasonFacts(TypedDict):
    """The earlier ``turn/end`` reasons: kept, rewritten, or read as an error (``turnEndReasons``)."""

    kindOnly: list[str]
    currentWhenKeyed: Mapping[str, str]
    rewritten: Mapping[str, JsonValue]
    error: ErrorReasonFacts


class LoadUpgradeFacts(TypedDict):
    """A revision's ``constants.jsonl.loadUpgrade`` (spec data): what `LoadUpgrade` is built from."""

    messageIdFormat: str
    otherEarlierRecords: str
    turnEndReasons: TurnEndReasonFacts

__all__ = ["UPGRADED_TYPES", "ErrorReasonFacts", "LoadUpgrade", "LoadUpgradeFacts", "MessageChecks", "TurnEndReasonFacts",
           "UpgradeReader", "is_refused_type", "may_rewrite", "unknown_type_error"]

#: The stored types the upgrade may rewrite (`LoadUpgrade.rewrite` reads no other record; `UpgradeReader.reads_apart`,
#: the reader's dispatch, is decided from it).
UPGRADED_TYPES = frozenset({"turn/start", "turn/end", "steering/message", "user/message", "assistant/message",
                            "tool/result"})


#: The payload members that make a record of these types one of the earlier format (`_turn_start`): a payload
#: without them is read as stored.
_EARLIER_MEMBERS: Mapping[str, frozenset[str]] = {"turn/start": frozenset({"trigger"})}


def may_rewrite(etype: str, members: Iterable[str]) -> bool:
    """Whether the upgrade may read a record of type ``etype`` otherwise than stored, or refuse it (JSONL-14), when
    its payload is an object whose members are among ``members``. False for a type it never reads and for a type
    whose earlier form needs a member outside ``members`` (a ``turn/start`` without a ``trigger``): such a record is
    read as stored (a reader of the log, the validator's fast pass, may take it as given)."""
    if etype not in UPGRADED_TYPES:
        return False
    earlier = _EARLIER_MEMBERS.get(etype)
    return earlier is None or not earlier.isdisjoint(members)


def _record(value: Any) -> Mapping[str, Any] | None:
    """An object (never an array), as the upgrade reads a payload."""
    return value if value.__class__ is dict or is_object(value) else None  # (a parsed record's payload: a dict)


def _only_keys(record: Mapping[str, Any], required: Collection[str], optional: Iterable[str] = ()) -> bool:
    """Every ``required`` key present and no key outside ``required`` and ``optional`` (``required``: distinct keys,
    so a record holding them all and as many members holds no other)."""
    for key in required:
        if key not in record:
            return False
    return len(record) == len(required) or {*required, *optional}.issuperset(record)


def _positive_turn(value: Any) -> bool:
    return is_safe_int(value) and value >= 1


class LoadUpgrade:
    """One revision's reading of earlier-format records (JSONL-13) and their refusal (JSONL-14)."""

    def __init__(self, data: LoadUpgradeFacts) -> None:
        self.message_id_format: str = data["messageIdFormat"]
        # An earlier-format record no upgrade rewrites (a hook record of the pinned dialect names) is read as
        # stored: valid when it is valid at the earlier revision (`validator.lint`, DEC-24).
        self.keeps_other_records: bool = data["otherEarlierRecords"] == "kept-as-stored"
        reasons = data["turnEndReasons"]
        self.kind_only_reasons: frozenset[str] = frozenset(reasons["kindOnly"])
        self.current_reason_keys: Mapping[str, str] = reasons["currentWhenKeyed"]
        self.reason_rewrites: Mapping[str, JsonValue] = reasons["rewritten"]
        self.error_kind: str = reasons["error"]["kind"]
        self.failure_required: Mapping[str, str] = reasons["error"]["failureKeys"]
        self.failure_optional: Mapping[str, str] = reasons["error"]["optionalFailureKeys"]
        self.default_error_code: str = reasons["error"]["defaultCode"]

    def reader(self, session_id: str, messages: MessageChecks, where: str | None = None) -> UpgradeReader:
        """A reader of one stored log's records in log order, one record at a time (`jsonl.StoredReader`)."""
        return UpgradeReader(self, session_id, messages, where)

    # -- one record ------------------------------------------------------------------------
    def rewrite(self, event: Mapping[str, object], session_id: str, ids: Mapping[int, str],
                where: str | None) -> Mapping[str, object]:
        """One stored record as the upgrade reads it (JSONL-13, JSONL-14): ``event`` itself, or a new record; raises
        ``JsonlError`` for a malformed earlier-format one. ``ids`` are the message ids noted so far, by seq."""
        etype = event.get("type")
        if type(etype) is not str or etype not in UPGRADED_TYPES:  # (a type that is no string is unhashable)
            return event
        if etype == "turn/start":
            return self._turn_start(event, session_id, where)
        if etype == "turn/end":
            return self._turn_end(event, session_id, where)
        if etype == "steering/message":
            event = self._steering(event, session_id, where)
        return self._message(event, session_id, ids)

    def _minted(self, session_id: str, seq: Any) -> str:
        return self.message_id_format.format(sessionId=session_id, seq=seq)

    def _malformed(self, event: Mapping[str, Any], session_id: str, where: str | None) -> JsonlError:
        seq = event.get("seq")
        return JsonlError(f"session {session_id!r} contains malformed earlier-format {event.get('type')} at seq {seq!r}",
                          "JSONL_LEGACY_MALFORMED", requirement="JSONL-14", seq=_seq(event), path=where)

    def _turn_start(self, event: Mapping[str, Any], session_id: str, where: str | None) -> Mapping[str, Any]:
        data = _record(event.get("data"))
        if data is None or not may_rewrite("turn/start", data):
            return event
        trigger = _record(data["trigger"])
        kind = trigger.get("kind") if trigger is not None else None
        if not (_positive_turn(data.get("turn")) and _only_keys(data, ("turn", "trigger"))
                and type(kind) is str and kind != ""):
            raise self._malformed(event, session_id, where)
        return {**event, "data": {"turn": data["turn"]}}

    def _turn_end(self, event: Mapping[str, Any], session_id: str, where: str | None) -> Mapping[str, Any]:
        data = _record(event.get("data"))
        if data is None:
            return event
        reason = _record(data.get("reason"))
        if (not _positive_turn(data.get("turn")) or not _only_keys(data, ("turn", "reason"))
                or reason is None or type(reason.get("kind")) is not str):
            raise self._malformed(event, session_id, where)
        kind = reason["kind"]
        if kind in self.current_reason_keys and self.current_reason_keys[kind] in reason:
            return event  # already the current shape
        kind_only = _only_keys(reason, ("kind",))
        if kind in self.kind_only_reasons:
            if not kind_only:
                raise self._malformed(event, session_id, where)
            return event
        if kind in self.reason_rewrites:
            if not kind_only:
                raise self._malformed(event, session_id, where)
            return {**event, "data": {**data, "reason": copy.deepcopy(self.reason_rewrites[kind])}}
        if kind == self.error_kind:
            rewritten = self._error_reason(reason)
            if rewritten is None:
                raise self._malformed(event, session_id, where)
            return {**event, "data": {**data, "reason": rewritten}}
        return event

    def _error_reason(self, reason: Mapping[str, Any]) -> dict[str, Any] | None:
        """The current error reason of an earlier one: its ``failure``, or its ``message`` and ``code``."""
        step: Any = reason.get("step")
        if not (is_safe_int(step) and step >= 0):
            return None
        failure = _record(reason.get("failure"))
        if (failure is not None and _only_keys(reason, ("kind", "step", "failure"))
                and _only_keys(failure, self.failure_required, self.failure_optional)
                and all(_json_type(failure[k]) == t for k, t in self.failure_required.items())
                and all(_json_type(failure[k]) == t for k, t in self.failure_optional.items() if k in failure)):
            return {"kind": self.error_kind, "error": failure}
        keys = ("kind", "step", "message") + (("code",) if "code" in reason else ())
        if not _only_keys(reason, keys) or type(reason["message"]) is not str:
            return None
        code = reason.get("code", self.default_error_code)
        if type(code) is not str:
            return None
        return {"kind": self.error_kind, "error": {"message": reason["message"], "code": code}}

    def _steering(self, event: Mapping[str, Any], session_id: str, where: str | None) -> Mapping[str, Any]:
        data = _record(event.get("data"))
        if data is None:
            raise self._malformed(event, session_id, where)
        wrapped = _record(data.get("message"))
        if wrapped is not None and is_safe_int(data.get("turn")) and _only_keys(data, ("turn", "message")):
            return {**event, "type": "user/message", "data": wrapped}
        if not is_safe_int(data.get("turn")) or not _only_keys(data, ("turn", "content", "source")):
            raise self._malformed(event, session_id, where)
        message = {k: v for k, v in data.items() if k != "turn"}
        return {**event, "type": "user/message",
                "data": {**message, "id": self._minted(session_id, event.get("seq")), "role": "user"}}

    def _message(self, event: Mapping[str, Any], session_id: str, ids: Mapping[Any, str]) -> Mapping[str, Any]:
        etype = event.get("type")
        if etype != "user/message" and etype != "assistant/message" and etype != "tool/result":
            return event  # (decided before reading the payload: most records of a log are chunks)
        data = _record(event.get("data"))
        if data is None:
            return event
        seq = event.get("seq")
        if etype == "user/message":
            if "id" in data or "role" in data or "message" in data or "content" not in data or "source" not in data:
                return event
            return {**event, "data": {**data, "id": self._minted(session_id, seq), "role": "user"}}
        if etype == "assistant/message":
            if "message" in data or "content" not in data or "provenance" not in data:
                return event
            rest = {k: v for k, v in data.items() if k not in ("content", "provenance")}
            source = {**(_record(data["provenance"]) or {}), "kind": "model"}
            return {**event, "data": {**rest, "message": {
                "id": self._minted(session_id, seq), "role": "assistant", "content": data["content"], "source": source}}}
        if etype == "tool/result":
            if "message" in data or "callId" not in data or "content" not in data or "isError" not in data:
                return event
            rest = {k: v for k, v in data.items() if k not in ("callId", "content", "isError")}
            call_id = data["callId"]
            start = _replacement_start(event)
            message: dict[str, Any] = {}
            message_id = self._minted(session_id, seq) if start is None else ids.get(start)
            if message_id is not None:  # a replacement of a node with no message id has none (refused by SEED-18)
                message["id"] = message_id
            message.update({"role": "user",
                            "content": [{"type": "tool-result", "toolCallId": call_id, "content": data["content"],
                                         "isError": data["isError"]}],
                            "source": {"kind": "tool", "callId": call_id}})
            return {**event, "data": {**rest, "message": message}}
        return event


class UpgradeReader:
    """One stored log read record by record as the load path reads it (JSONL-13, JSONL-14, the message check).

    The state between records is the message id of each record read so far (by seq): a replacing
    ``tool/result`` of the earlier format inherits the id of the node it replaces.
    """

    def __init__(self, upgrade: LoadUpgrade, session_id: str, messages: MessageChecks, where: str | None) -> None:
        self.upgrade = upgrade
        self.session_id = session_id
        self.messages = messages
        self.where = where
        self.ids: dict[Any, str] = {}  # seq -> message id of each record read so far
        #: how many records were upgraded, by their stored type
        self.upgraded: dict[str, int] = {}

    @overload
    def read(self, stored: JsonObject, index: int) -> JsonObject: ...
    @overload
    def read(self, stored: object, index: int) -> object: ...
    def read(self, stored: object, index: int) -> object:
        """The record as the load path reads it: ``stored`` itself, or a new upgraded record (the stored
        one is never changed).

        Raises ``JsonlError`` (``JSONL_LEGACY_MALFORMED``, JSONL-14) and ``SeedError`` (SEED-18, SEED-6)
        as the load path does; ``index`` is the record's position, named by a ``SeedError``.
        """
        if stored.__class__ is not dict and not is_object(stored):  # (a parsed record: a dict, decided first)
            return stored
        etype = stored.get("type")
        if type(etype) is not str:  # (any such record: as stored, unrefused, no message id noted)
            return stored
        event: Mapping[str, Any] = stored
        data = stored.get("data")
        if self.reads_apart(etype, data if data.__class__ is dict or is_object(data) else None):  # (any other record: as stored, unrefused)
            event = self.upgrade.rewrite(stored, self.session_id, self.ids, self.where)
            if event is not stored:
                self.upgraded[etype] = self.upgraded.get(etype, 0) + 1
                etype = event.get("type")
                if type(etype) is not str:
                    return event
                data = event.get("data")
            problem = self.messages.seed_problem(etype, data)
            if problem is not None:
                raise SeedError(f"stored event at seq {event.get('seq')!r} {problem.message}", problem.code,
                                requirement=problem.requirement, index=index, seq=_seq(event), path=self.where)
        # (noted of every record; a note a reader skipping the records `reads_apart` clears misses can only leave
        # a later replacing tool/result without a message id, which SEED-18 refuses)
        message_id = _message_id(etype, data)
        if message_id is not None:
            seq = event.get("seq")
            if type(seq) is int:
                self.ids[seq] = message_id
        return event

    def reads_apart(self, etype: str, members: Iterable[str] | None = None) -> bool:
        """JSONL-13, JSONL-14 and the message check by type: whether a record of type ``etype`` may be read other
        than as stored or refused (one the revision's message shape checks, or a type the upgrade may rewrite,
        `UPGRADED_TYPES`, unless its payload's ``members`` (when known: an object's keys) rule the rewrite out,
        `may_rewrite`). `read` takes a record of any other type as stored and unrefused by this very test, so a
        reader of the log that skips those records (the validator's fast pass) reads what the load path reads."""
        if etype in self.messages.seed_types:
            return True
        return etype in UPGRADED_TYPES if members is None else may_rewrite(etype, members)


def _json_type(value: Any) -> str:
    """The JavaScript ``typeof`` of a JSON value, as the upgrade's checks name it."""
    t = type(value)
    if t is str:
        return "string"
    if t is int or t is float:
        return "number"
    if t is bool:
        return "boolean"
    return "object"


def _replacement_start(event: Mapping[str, Any]) -> Any:
    """The ``start`` of a replace marker (a number), else ``None``."""
    op = _record(event.get("surfaceOp"))
    if op is None or op.get("op") != "replace":
        return None
    start = op.get("start")
    return start if type(start) in (int, float) else None


def _message_id(etype: str, data: Any) -> str | None:
    """The id of the identified message an event carries, if it is a string."""
    if data.__class__ is not dict and not is_object(data):
        return None
    if etype != "user/message":
        data = data.get("message")
        if data.__class__ is not dict and not is_object(data):
            return None
    found = data.get("id")
    return found if type(found) is str else None


def _seq(event: Mapping[str, Any]) -> int | None:
    seq = event.get("seq")
    return seq if type(seq) is int else None


def is_refused_type(event: object, known: frozenset[str]) -> TypeGuard[JsonObject]:
    """JSONL-15's test of one record: its type is not in ``known`` and it is not marked ``ignorable: true``."""
    if event.__class__ is not dict and not is_object(event):
        return False
    etype = event.get("type")
    return not ((type(etype) is str and etype in known) or event.get("ignorable") is True)


def unknown_type_error(event: JsonObject, session_id: str, where: str | None = None) -> JsonlError:
    """The refusal of a record `is_refused_type` names (JSONL-15)."""
    return JsonlError(
        f"session {session_id!r} contains event type {event.get('type')!r} (seq {event.get('seq')!r}) unknown to this "
        "revision and not marked ignorable: refusing to interpret the log (likely written by a newer writer)",
        "JSONL_UNKNOWN_TYPE", requirement="JSONL-15", seq=_seq(event), path=where,
    )
