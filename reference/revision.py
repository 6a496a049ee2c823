"""One switch for the format revision: the rules that differ, read from the spec data.

Every behaviour that differs between revisions is either a value of the
revision's resolved constants (surface types, envelope keys, the seed-end
marker, the fork boundary rule, call-config fields, ...) or one of two small
strategies for the message payload shape (:class:`FlatMessages` at the pinned
revision, :class:`IdentifiedMessages` at the published one). ``Session``,
``SessionStore`` and the pure folds take ``revision=`` (an id, a release or
a :class:`Rules`) and consult the rules instead of branching on a name.
"""

from __future__ import annotations

import functools
from typing import Any

from sessionspec.spec import load_spec
from sessionspec.spec.revisions import Revision, resolve_revision
from sessionspec.spec.schema_types import JsonObject, JsonValue

from .finding import Finding
from .json_value import MAX_SAFE_INTEGER, FrozenDict, FrozenList, freeze_json_value, is_object
from .upgrade import LoadUpgrade

__all__ = ["FlatMessages", "IdentifiedMessages", "MessageShape", "RevisionLike", "Rules", "revision_of", "rules_for"]

_MISSING: Any = object()


def _frozen(value: Any) -> Any:
    """Share already-frozen log data; freeze anything else (plain-dict events)."""
    t = type(value)
    if t is FrozenDict or t is FrozenList or t is str or t is int or t is bool or value is None:
        return value
    return freeze_json_value(value)


def has_provider_model(value: JsonValue) -> bool:
    """Whether an object carries non-empty string ``provider`` and ``model``."""
    if value.__class__ is not dict and not is_object(value):
        return False
    provider = value.get("provider")
    model = value.get("model")
    return type(provider) is str and provider != "" and type(model) is str and model != ""


def _nonempty_str(value: Any) -> bool:
    return type(value) is str and value != ""


class MessageShape:
    """Where a message payload keeps its parts, and what its message projects to."""

    name = ""

    def tool_calls(self, data: object) -> list[JsonObject]:
        """The ``tool-call`` blocks of an ``assistant/message`` payload."""
        raise NotImplementedError

    def result_call_id(self, data: object, default: object = None) -> object:
        """The call a ``tool/result`` payload answers (``default`` when absent)."""
        raise NotImplementedError

    def result_is_error(self, data: object, default: object = None) -> object:
        """The error flag of a ``tool/result`` payload (``default`` when absent)."""
        raise NotImplementedError

    def derive(self, event: JsonObject) -> FrozenDict | None:
        """The message one event projects to, or ``None`` (DERIVE-2..6)."""
        raise NotImplementedError

    def rewrite_key(self, data: object) -> dict[str, JsonValue]:
        """What a ``tool/result`` replacement must keep equal (SURF-10): everything but the content it may change."""
        raise NotImplementedError

    def closer_result(self, turn: JsonValue, step: JsonValue, call_id: JsonValue, text: str,
                      message_id: str) -> dict[str, JsonValue]:
        """The payload of a synthetic crash-repair result without its ``error`` (REPAIR-8).

        ``message_id`` is the revision's id for it (``repair.interruptedMessageIdFormat``), where messages have ids.
        """
        raise NotImplementedError

    #: the event types whose payload :meth:`seed_problem` looks into (any other: ``None`` without a call)
    seed_types: frozenset[str] = frozenset()

    def seed_problem(self, etype: str, data: object) -> Finding | None:
        """The finding when a seeded message payload is rejected (its message completes "seed event at index N ..."),
        else ``None``."""
        raise NotImplementedError


def _content_blocks(content: object) -> list[JsonObject]:
    if isinstance(content, (list, FrozenList)):
        return [b for b in content if is_object(b) and b.get("type") == "tool-call"]
    return []


def _spread(data: object, drop: str | None = None) -> dict[str, JsonValue]:
    """``data`` spread into an object (without the key ``drop``), as a JavaScript object spread would.

    Strings and lists spread into index keys, other scalars into nothing.
    """
    if is_object(data):
        return {k: v for k, v in data.items() if k != drop}
    if type(data) is str or isinstance(data, (list, FrozenList)):
        return {str(i): v for i, v in enumerate(data) if str(i) != drop}
    return {}


class FlatMessages(MessageShape):
    """Pinned revision: content, provenance and callId sit directly in the payload."""

    name = "flat"
    seed_types = frozenset({"assistant/message"})

    def tool_calls(self, data: object) -> list[JsonObject]:
        return _content_blocks(data.get("content")) if is_object(data) else []

    def result_call_id(self, data: object, default: object = None) -> object:
        return data.get("callId", default) if is_object(data) else default

    def result_is_error(self, data: object, default: object = None) -> object:
        return data.get("isError", default) if is_object(data) else default

    def derive(self, event: JsonObject) -> FrozenDict | None:
        etype = event.get("type")
        data = event.get("data")
        if etype == "user/message" or etype == "steering/message":
            content = data.get("content", _MISSING) if is_object(data) else _MISSING
            if content is _MISSING:
                return FrozenDict({"role": "user"})
            return FrozenDict({"role": "user", "content": _frozen(content)})
        if etype == "assistant/message":
            if not is_object(data):
                return None
            content = data.get("content", _MISSING)
            if content is _MISSING or (type(content) in (list, FrozenList, str) and len(content) == 0):
                return None
            message: dict[str, Any] = {"role": "assistant", "content": _frozen(content)}
            provenance = data.get("provenance", _MISSING)
            if provenance is not _MISSING:
                message["provenance"] = _frozen(provenance)
            return FrozenDict(message)
        if etype == "tool/result":
            if not is_object(data):
                data = {}
            part: dict[str, Any] = {"type": "tool-result"}
            for source_key, key in (("callId", "toolCallId"), ("content", "content"), ("isError", "isError")):
                value = data.get(source_key, _MISSING)
                if value is not _MISSING:
                    part[key] = _frozen(value)
            return FrozenDict({"role": "user", "content": FrozenList([FrozenDict(part)])})
        return None

    def rewrite_key(self, data: object) -> dict[str, JsonValue]:
        return _spread(data, "content")

    def closer_result(self, turn: JsonValue, step: JsonValue, call_id: JsonValue, text: str,
                      message_id: str) -> dict[str, JsonValue]:
        return {"turn": turn, "step": step, "callId": call_id,
                "content": [{"type": "text", "text": text}], "isError": True}

    def seed_problem(self, etype: str, data: object) -> Finding | None:
        # SEED-6 applies to any object data (a JS array is an object too: it has no provenance).
        if etype in self.seed_types and (is_object(data) or isinstance(data, (list, FrozenList))):
            provenance = data.get("provenance") if is_object(data) else None
            if not has_provider_model(provenance):
                return Finding("SEED_PROVENANCE", "SEED-6", "is an assistant/message that lacks provider/model provenance")
        return None


class IdentifiedMessages(MessageShape):
    """Published revision: every message payload holds an identified message ``{id, role, source, content}``."""

    name = "identified"
    seed_types = frozenset({"user/message", "assistant/message", "tool/result"})

    @staticmethod
    def _message(etype: Any, data: Any) -> Any:
        if etype == "user/message":
            return data
        return data.get("message", _MISSING) if data.__class__ is dict or is_object(data) else _MISSING

    def tool_calls(self, data: object) -> list[JsonObject]:
        message = self._message("assistant/message", data)
        return _content_blocks(message.get("content")) if is_object(message) else []

    def result_call_id(self, data: object, default: object = None) -> object:
        message = self._message("tool/result", data)
        source = message.get("source") if is_object(message) else None
        return source.get("callId", default) if is_object(source) else default

    def result_is_error(self, data: object, default: object = None) -> object:
        message = self._message("tool/result", data)
        content = message.get("content") if is_object(message) else None
        block = content[0] if isinstance(content, (list, FrozenList)) and content else None
        return block.get("isError", default) if is_object(block) else default

    def derive(self, event: JsonObject) -> FrozenDict | None:
        etype = event.get("type")
        if etype not in ("user/message", "assistant/message", "tool/result"):
            return None
        message = self._message(etype, event.get("data"))
        if not is_object(message):
            return None  # only an unvalidated live append can get here (APPEND-15)
        if etype == "assistant/message":
            content = message.get("content", _MISSING)
            if type(content) in (list, FrozenList, str) and len(content) == 0:
                return None
        return _frozen(message)  # type: ignore[no-any-return]

    def rewrite_key(self, data: object) -> dict[str, JsonValue]:
        rest = _spread(data)
        message = data.get("message") if is_object(data) else None
        content = message.get("content") if is_object(message) else None
        first = content[0] if isinstance(content, (list, FrozenList)) and content else None
        rest["message"] = {**_spread(message, "content"), "content": [{**_spread(first, "content"), "content": None}]}
        return rest

    def closer_result(self, turn: JsonValue, step: JsonValue, call_id: JsonValue, text: str,
                      message_id: str) -> dict[str, JsonValue]:
        message: JsonObject = {
            "id": message_id,
            "role": "user",
            "source": {"kind": "tool", "callId": call_id},
            "content": [{"type": "tool-result", "toolCallId": call_id, "isError": True,
                         "content": [{"type": "text", "text": text}]}],
        }
        return {"turn": turn, "step": step, "message": message}

    def seed_problem(self, etype: str, data: object) -> Finding | None:
        if etype not in self.seed_types:
            return None
        message = self._message(etype, data)
        if message.__class__ is not dict and not is_object(message):  # (a parsed payload: a dict, decided first)
            return _no_message(etype)
        found = message.get("id")
        if type(found) is not str or found == "":
            return _no_message(etype)
        role = "assistant" if etype == "assistant/message" else "user"
        if message.get("role") != role:
            return _seed_message(etype, f'message must have role "{role}"')
        source = message.get("source")
        kind = source.get("kind") if source.__class__ is dict or is_object(source) else None
        if type(kind) is not str or kind == "":
            return _seed_message(etype, "message has an invalid source")
        content = message.get("content")
        if not isinstance(content, (list, FrozenList)):
            return _seed_message(etype, "message has invalid content")
        if etype == "assistant/message":
            if kind != "model" or not has_provider_model(source):
                return Finding("SEED_PROVENANCE", "SEED-6", f"is an {etype} whose message lacks a model source with provider/model")
            return None
        if etype == "tool/result":
            call_id = source.get("callId")  # type: ignore[union-attr]  # (an object: it has a kind)
            if kind != "tool" or not _nonempty_str(call_id):
                return _seed_message(etype, "message must have a tool source")
            block = content[0] if len(content) == 1 else None
            if (not is_object(block) or block.get("type") != "tool-result"
                    or not isinstance(block.get("content"), (list, FrozenList))):
                return _seed_message(etype, "message must contain one tool-result block")
            if block.get("toolCallId") != call_id:
                return _seed_message(etype, "message has mismatched tool call ids")
        return None


def _no_message(etype: str) -> Finding:
    """SEED-18's finding of a message payload without an identified message."""
    return Finding("SEED_MESSAGE", "SEED-18", f"is a {etype} that lacks an identified message")


def _seed_message(etype: str, what: str) -> Finding:
    """SEED-18's finding of a message payload whose message is wrong in ``what``."""
    return Finding("SEED_MESSAGE", "SEED-18", f"is a {etype} whose {what}")


_SHAPES: dict[str, MessageShape] = {s.name: s for s in (FlatMessages(), IdentifiedMessages())}


class Rules:
    """The behaviour of one format revision, resolved once from the spec data."""

    def __init__(self, revision: Revision) -> None:
        spec = load_spec(revision=revision)
        c = spec.constants
        self.revision = revision
        self.id = revision.id
        self.surface_types: frozenset[str] = frozenset(c["surfaceTypes"])
        self.envelope_keys: frozenset[str] = frozenset(c["envelopeKeys"])
        #: whether type, seq, time and data are envelope keys (then an event of exactly those has no other key)
        self.plain_envelope: bool = self.envelope_keys >= {"type", "seq", "time", "data"}
        self.negative_time = bool(c["negativeTimeAllowed"])
        #: SEED-3: the least and greatest seq and time an event's envelope may carry (the one statement of those
        #: bounds: the envelope rule tests them, the validator's pass tests its generated types and a packed row's
        #: lowest and highest member against them)
        self.seq_range: tuple[int, int] = (0, MAX_SAFE_INTEGER)
        self.time_range: tuple[int, int] = (-MAX_SAFE_INTEGER if self.negative_time else 0, MAX_SAFE_INTEGER)
        self.messages: MessageShape = _SHAPES[c["messageShape"]]
        self.seed_checks_turn_end_reason = bool(c["seedChecksTurnEndReason"])
        self.seed_request_header_any_data = c["seedRequestHeaderCheck"] == "any-data"
        self.call_config_fields: tuple[str, ...] = tuple(c["callConfigFields"])
        self.adapter_default_markers: tuple[str, ...] = tuple(c["adapterDefaultMarkers"])
        self.header_keys: tuple[str, ...] = tuple(c["sessionHeaderKeys"])
        self.seed_end_marker: str | None = c.get("seedEndMarker")
        self.interrupted_message_id: str = c["repair"].get("interruptedMessageIdFormat", "")
        self.fork_between_turns = c["forkBoundary"] == "between-turns"
        self.flush_reports_participation = c["flushResult"] == "participation"
        # Whether the persistence load path seeds the balanced events (SEED-*, HDR-* refusals at load: JSONL-12).
        self.load_seeds = bool(c["loadSeeds"])
        # Whether live persistence writes each committed event at once, a failure kept for the next barrier
        # ("eager"), or only at a barrier (flush, retirement, disposal), which fails with the write (LIVE-2).
        self.live_writes_eager = c["liveWrites"] == "eager"
        self.unknown_needs_turn = c["unknownTypeEnclosure"] == "turn"
        self.known_types: frozenset[str] = frozenset(spec.events)
        self.turn_types: frozenset[str] = frozenset(t for t, e in spec.events.items() if e["enclosure"] == "turn")
        jsonl = c["jsonl"]
        # The load path's reading of earlier-format records (JSONL-13, JSONL-14) and its vocabulary guard (JSONL-15).
        self.load_upgrade: LoadUpgrade | None = LoadUpgrade(jsonl["loadUpgrade"]) if "loadUpgrade" in jsonl else None
        # Known to the load path: the revision's registry (its parent's, less its `events.removed`, with its renames
        # and additions), never a second list of it.
        self.load_known_types: frozenset[str] | None = (
            self.known_types if jsonl["unknownTypesOnLoad"] == "refused-unless-ignorable" else None)

    # What the revision's requirements say, read when first asked: resolving them (`Spec.requirements`) is a part of
    # every process's start-up that validate never asks for (#24).
    @functools.cached_property
    def out_of_band(self) -> bool:
        """Whether the revision has out-of-band appends (OOB-1)."""
        return "OOB-1" in load_spec(revision=self.revision).requirements

    @functools.cached_property
    def find_last_message_turn_end(self) -> bool:
        """Whether the revision has the last message turn's find (FIND-1)."""
        return "FIND-1" in load_spec(revision=self.revision).requirements

    @functools.cached_property
    def out_of_band_types(self) -> frozenset[str]:
        """The types admitted out of band by default (none without OOB-1)."""
        return frozenset(load_spec(revision=self.revision).out_of_band_types) if self.out_of_band else frozenset()

    def needs_open_turn(self, event_type: object) -> bool:
        """Whether the relational checker wants ``event_type`` inside a turn (INV-10, non-core branch)."""
        if isinstance(event_type, str) and event_type in self.known_types:
            return event_type in self.turn_types
        return bool(self.unknown_needs_turn)

    def __repr__(self) -> str:
        return f"Rules({self.id!r})"


@functools.cache
def _rules(revision_id: str) -> Rules:
    return Rules(resolve_revision(revision_id))


#: What a ``revision=`` parameter accepts: a revision id or release name, a `Revision`, its `Rules`, or
#: ``None`` (the pinned default); `rules_for` turns any of them into the `Rules`.
RevisionLike = str | Revision | Rules | None


def revision_of(revision: RevisionLike = None) -> Revision:
    """The `Revision` a ``revision=`` value names (for the spec data of a `Rules`, its own revision)."""
    return revision.revision if isinstance(revision, Rules) else resolve_revision(revision)


def rules_for(revision: RevisionLike = None) -> Rules:
    """The rules of a revision (id, release, `Revision` or `Rules`); ``None`` is the pinned default."""
    if isinstance(revision, Rules):
        return revision
    return _rules(resolve_revision(revision).id)
