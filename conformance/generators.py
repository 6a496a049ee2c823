"""Registry-derived inputs for the differential state machines (``machines.py``).

Nothing here restates the vocabulary. Event types, their classes (surface or
log-only) and enclosures come from the event registry
(``sessionspec.spec.load_spec().events``); payloads are the registry's own
valid examples, fitted to the log being built (turn and step numbers, call
ids); known-bad events are the registry's invalid examples; near-miss values
are derived from the JSON Schemas (``safe-int``, the surface marker, the
session header, the chunk rows); format facts (row layouts, the minimum run,
legacy types, rejected reasons) come from ``constants.json``. A plugin
registry that adds types or examples therefore widens what the machines
generate without touching this module.

The names of the handful of types whose *roles* drive log structure (turn
and step boundaries, the assistant message that requests tool calls, the
call and the result that answer them, streamed chunks, request headers) are
looked up in the registry and fail loudly if the registry stops defining them.

Everything is a plain function of a Hypothesis ``draw`` and a
:class:`LogContext` (what the log so far implies: open turn and step, pending
calls, surface nodes), so the same moves build logs live through the protocol
and offline (seeds, storage inputs).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from hypothesis import strategies as st
from sessionspec.spec import load_spec

__all__ = [
    "AppendStep",
    "LogContext",
    "build_log",
    "changed_value",
    "chunk_run",
    "header_variant",
    "invalid_append",
    "invalid_append_with_setup",
    "json_values",
    "materialise",
    "move_names",
    "moves_for",
    "near_miss_rows",
    "near_misses",
    "path_text",
    "scan",
    "seed_corruption",
    "split_at_seed",
    "steps_until",
    "use_revision",
]

AppendStep = dict[str, Any]
Draw = Callable[[st.SearchStrategy[Any]], Any]

SCHEMA = "https://sessionspec.dev/schema/"

# The registry tables below belong to one format revision at a time: ``use_revision`` derives them
# all from that revision's registry (the pinned one at import). The machines generate for the
# revision the implementation declares, so every input is valid (or deliberately invalid) there.
REVISION: str
SPEC: Any
CONSTANTS: Mapping[str, Any]
RULES: Any
MAX_SAFE: int
ENVELOPE_KEYS: tuple[str, ...]
SURFACE_TYPES: tuple[str, ...]
BOUNDARY_TYPES: tuple[str, ...]
TURN_START: str
TURN_END: str
STEP_START: str
STEP_END: str
ASSISTANT: str
TOOL_CALL: str
TOOL_RESULT: str
CHUNK: str
REQUEST_HEADER: str
OUT_OF_BAND_TYPES: tuple[str, ...]
LEGACY_TYPES: tuple[str, ...]
REJECTED_REASONS: tuple[str, ...]
ROWS: Mapping[str, Mapping[str, Any]]
MIN_RUN: int
_STRUCTURAL: set[str]
FREE_LOG_ONLY: tuple[str, ...]
"""Log-only types with no structural role (todo/write, plugin-ish events, headers...)."""
FREE_SURFACE: tuple[str, ...]
"""Surface types a plain append or a compaction replace may use (user messages; steering where it exists)."""
VALID: Mapping[str, list[dict[str, Any]]]
INVALID_EVENTS: tuple[dict[str, Any], ...]
"""Every invalid registry example: append and seed must agree with the reference on each."""
INVALID_RULED: tuple[dict[str, Any], ...]
"""The invalid examples whose reason names a run-time rule (the ones append and seed refuse)."""
SAFE_INT: Mapping[str, Any]
MARKER: Mapping[str, Any]
SESSION_HEADER: Mapping[str, Any]
_APPEND_MARKER: Any
_REPLACE_MARKER: Mapping[str, Any]
REPLACE_OP: Any


def _registered(event_type: str) -> str:
    """A type the machines give a structural role; the registry must define it."""
    if event_type not in SPEC.events:
        raise LookupError(f"the event registry no longer defines {event_type!r}; update conformance/generators.py")
    return event_type


def _examples(kind: str) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for event_type, entry in SPEC.events.items():
        out[event_type] = [ex["event"] for ex in entry.get("examples", {}).get(kind, ())]
    return out


def use_revision(revision: str | None = None) -> str:
    """Derive every registry table of this module from ``revision`` (an id or a release; ``None``:
    the pinned one) and return its id. Not thread-safe: the machines run one revision at a time."""
    global REVISION, SPEC, CONSTANTS, RULES, MAX_SAFE, ENVELOPE_KEYS, SURFACE_TYPES, BOUNDARY_TYPES
    global TURN_START, TURN_END, STEP_START, STEP_END, ASSISTANT, TOOL_CALL, TOOL_RESULT, CHUNK
    global REQUEST_HEADER, OUT_OF_BAND_TYPES, LEGACY_TYPES, REJECTED_REASONS, ROWS, MIN_RUN
    global _STRUCTURAL, FREE_LOG_ONLY, FREE_SURFACE, VALID, INVALID_EVENTS, INVALID_RULED
    global SAFE_INT, MARKER, SESSION_HEADER, _APPEND_MARKER, _REPLACE_MARKER, REPLACE_OP
    from sessionspec.reference.revision import rules_for

    SPEC = load_spec(revision=revision)
    REVISION = SPEC.revision.id
    RULES = rules_for(REVISION)
    CONSTANTS = SPEC.constants
    MAX_SAFE = CONSTANTS["maxSafeInteger"]
    ENVELOPE_KEYS = tuple(CONSTANTS["envelopeKeys"])
    SURFACE_TYPES = tuple(sorted(SPEC.surface_types))
    BOUNDARY_TYPES = tuple(sorted(t for t, e in SPEC.events.items() if e["enclosure"] == "boundary"))
    TURN_START = _registered("turn/start")
    TURN_END = _registered("turn/end")
    STEP_START = _registered("step/start")
    STEP_END = _registered("step/end")
    ASSISTANT = _registered("assistant/message")
    TOOL_CALL = _registered("tool/call")
    TOOL_RESULT = _registered("tool/result")
    CHUNK = _registered("assistant/chunk")
    REQUEST_HEADER = _registered("request/header")
    OUT_OF_BAND_TYPES = tuple(sorted(RULES.out_of_band_types))
    LEGACY_TYPES = tuple(CONSTANTS["legacyRejectedTypes"])
    REJECTED_REASONS = tuple(CONSTANTS["rejectedRequestHeaderReasons"])
    ROWS = CONSTANTS["chunkRows"]["rows"]
    MIN_RUN = CONSTANTS["chunkRows"]["minRun"]
    _STRUCTURAL = {TURN_START, TURN_END, STEP_START, STEP_END, ASSISTANT, TOOL_CALL, TOOL_RESULT, CHUNK}
    FREE_LOG_ONLY = tuple(sorted(t for t, e in SPEC.events.items() if e["class"] != "surface" and t not in _STRUCTURAL))
    FREE_SURFACE = tuple(t for t in SURFACE_TYPES if t not in (ASSISTANT, TOOL_RESULT))
    VALID = _examples("valid")
    INVALID_EVENTS = tuple(e for events in _examples("invalid").values() for e in events)
    INVALID_RULED = tuple(
        ex["event"] for entry in SPEC.events.values() for ex in entry.get("examples", {}).get("invalid", ())
        if re.search(r"\b(SEED|SURF|APPEND)-\d+", ex.get("reason", ""))
    )
    for event_type in (*_STRUCTURAL, *FREE_SURFACE):
        if not VALID.get(event_type):
            raise LookupError(f"the registry has no valid example of {event_type!r}; the machines need one")
    SAFE_INT = schema("common/safe-int.json")
    MARKER = schema("envelope/surface-op.json")
    SESSION_HEADER = schema("session/session-header.json")
    _APPEND_MARKER = next(b["const"] for b in MARKER["oneOf"] if "const" in b)
    _REPLACE_MARKER = next(b for b in MARKER["oneOf"] if b.get("type") == "object")
    REPLACE_OP = _REPLACE_MARKER["properties"]["op"]["const"]
    return REVISION


# -- schemas ---------------------------------------------------------------------------


def schema(path: str) -> Mapping[str, Any]:
    """A registry schema by its path under ``schemas/`` (``"common/safe-int.json"``)."""
    return cast("Mapping[str, Any]", SPEC.schemas[SCHEMA + path])


def _resolve(node: Mapping[str, Any]) -> Mapping[str, Any]:
    while "$ref" in node and node["$ref"].split("#")[0] in SPEC.schemas:
        node = SPEC.schemas[node["$ref"].split("#")[0]]
    return node


def near_misses(node: Mapping[str, Any]) -> list[Any]:
    """JSON values that just miss a simple schema: the wrong type, the bound +/- 1,
    a fraction for an integer, the other spelling of a constant."""
    node = _resolve(node)
    out: list[Any] = []
    if "const" in node:
        c = node["const"]
        out += [c + 1, str(c)] if type(c) is int else [str(c).upper(), f"{c}x", ""]
    kind = node.get("type")
    if kind == "integer":
        low, high = node.get("minimum"), node.get("maximum")
        if low is not None:
            out.append(low - 1)
        if high is not None:
            out.append(high + 1)
        out += [(low or 0) + 0.5, str(low or 0), True]
    elif kind == "string":
        out += [1, True, ["x"]]
    elif kind == "array":
        out += ["x", {"0": 1}]
    elif kind == "object":
        out += [[], "x"]
    return [v for v in out if v is not None]


def _within_bounds(number: float, node: Mapping[str, Any]) -> bool:
    """Whether ``number`` meets the numeric bounds of ``node`` (inclusive and exclusive)."""
    low, high = node.get("minimum"), node.get("maximum")
    above, below = node.get("exclusiveMinimum"), node.get("exclusiveMaximum")
    return ((low is None or number >= low) and (high is None or number <= high)
            and (above is None or number > above) and (below is None or number < below))


def changed_value(value: Any, node: Mapping[str, Any]) -> Any:
    """A value other than ``value`` that stays inside the simple schema ``node`` (``value``
    itself when the schema leaves no other within reach): a number moved by one inside its
    bounds (inclusive or exclusive; by an integer ``multipleOf`` where the schema has one, not at all by a
    fractional one), a string grown or shrunk
    inside its lengths, another enum member, an array with
    one more valid item. Never a value of another type (a generator that promises its schema
    keeps it: tests/conformance/test_machines.py validates what the machines send)."""
    node = _resolve(node)
    if "const" in node:
        return value
    if "enum" in node:
        others = [v for v in node["enum"] if v != value or type(v) is not type(value)]
        return others[0] if others else value
    kind = node.get("type")
    if kind in ("number", "integer") and type(value) in (int, float):
        step = node.get("multipleOf", 1)
        if type(step) is not int:  # a fractional multiple's sums are not exact in binary floating point
            return value
        for candidate in (value + step, value - step):
            if _within_bounds(candidate, node):
                return candidate
        return value
    if kind == "string" and type(value) is str and "pattern" not in node and "format" not in node:
        if "maxLength" not in node or len(value) < node["maxLength"]:
            return value + "x"
        return value[:-1] if len(value) > node.get("minLength", 0) else value
    if kind == "array" and isinstance(value, list) and not node.get("uniqueItems"):
        if "maxItems" in node and len(value) >= node["maxItems"]:
            return value
        item = _resolve(node.get("items", {}))
        if item.get("type") == "string" and not {"pattern", "format", "enum", "const"} & item.keys():
            return [*value, "x" * max(1, item.get("minLength", 1))]
        return [*value, value[0]] if value else value
    return value


use_revision()


def replace_marker(start: int, end: int) -> dict[str, Any]:
    return {"op": REPLACE_OP, "start": start, "end": end}


def bad_markers(nodes: Sequence[int]) -> list[Any]:
    """Surface markers that are neither the append constant nor a well-formed replace object."""
    some = nodes[0] if nodes else 0
    out: list[Any] = [v for v in near_misses(MARKER["oneOf"][0]) if v != _APPEND_MARKER]
    out += [None, 0, [_APPEND_MARKER]]
    good = replace_marker(some, some)
    for key in _REPLACE_MARKER["required"]:
        missing = dict(good)
        del missing[key]
        out.append(missing)
    out.append({**good, "reason": "x"})
    for key in ("start", "end"):
        out += [{**good, key: v} for v in near_misses(_REPLACE_MARKER["properties"][key])]
    out += [{**good, "op": v} for v in near_misses(_REPLACE_MARKER["properties"]["op"])]
    return out


# -- the log so far ----------------------------------------------------------------------


@dataclass
class LogContext:
    """What a log implies for the next event: open turn/step, pending calls, the surface."""

    events: list[Any] = field(default_factory=list)
    nodes: list[int] = field(default_factory=list)
    open_turn: Any = None
    last_turn: int = 0
    open_step: Any = None
    last_step: int = 0
    requested: dict[str, int | None] = field(default_factory=dict)  # call id -> tool/call seq
    step_chunks: list[int] = field(default_factory=list)
    turn_ends: list[int] = field(default_factory=list)

    @property
    def seq(self) -> int:
        return len(self.events)

    def type_at(self, seq: int) -> Any:
        event = self.events[seq] if 0 <= seq < len(self.events) else None
        return event.get("type") if isinstance(event, dict) else None

    def turn(self) -> Any:
        return self.open_turn if self.open_turn is not None else max(self.last_turn, 1)

    def step(self) -> Any:
        return self.open_step if self.open_step is not None else max(self.last_step, 1)


def _data(event: Any) -> Mapping[str, Any]:
    data = event.get("data") if isinstance(event, dict) else None
    return data if isinstance(data, dict) else {}


def scan(events: Sequence[Any]) -> LogContext:
    """The context after ``events`` (a valid log as the reference holds it)."""
    ctx = LogContext(events=list(events))
    for seq, event in enumerate(events):
        etype = event.get("type") if isinstance(event, dict) else None
        data = _data(event)
        if etype == TURN_START:
            ctx.open_turn = data.get("turn")
            if type(ctx.open_turn) is int:
                ctx.last_turn = ctx.open_turn
            ctx.open_step, ctx.last_step = None, 0
            ctx.requested.clear()
            ctx.step_chunks.clear()
        elif etype == TURN_END:
            ctx.open_turn = ctx.open_step = None
            ctx.requested.clear()
            ctx.turn_ends.append(seq)
        elif etype == STEP_START:
            ctx.open_step = data.get("step")
            if type(ctx.open_step) is int:
                ctx.last_step = ctx.open_step
            ctx.step_chunks.clear()
        elif etype == STEP_END:
            ctx.open_step = None
            ctx.requested.clear()
        elif etype == CHUNK:
            ctx.step_chunks.append(seq)
        elif etype == ASSISTANT:
            for block in RULES.messages.tool_calls(data):
                if isinstance(block, dict) and block.get("type") == "tool-call" and isinstance(block.get("id"), str):
                    ctx.requested[block["id"]] = None
        elif etype == TOOL_CALL:
            if data.get("callId") in ctx.requested:
                ctx.requested[data["callId"]] = seq
        elif etype == TOOL_RESULT:
            ctx.requested.pop(RULES.messages.result_call_id(data), None)
        op = event.get("surfaceOp") if isinstance(event, dict) else None
        if op == _APPEND_MARKER:
            ctx.nodes.append(seq)
        elif isinstance(op, dict) and op.get("start") in ctx.nodes and op.get("end") in ctx.nodes:
            a, b = ctx.nodes.index(op["start"]), ctx.nodes.index(op["end"])
            ctx.nodes[a : b + 1] = [seq]
    return ctx


def split_at_seed(events: Sequence[Mapping[str, Any]], cut: int) -> tuple[list[Any], list[AppendStep], Callable[[Any], Any]]:
    """``events[:cut]`` as a seed and the rest as append steps, for a session built from them at
    the current revision. Where the revision appends a seed-end marker after a seed (SEED-17 at the
    published one), every later event moves one seq up: the steps' references to seqs from ``cut``
    on (surface markers, provenance) are moved with them. Returns the seed, the steps and the map
    from a seq of ``events`` to its seq in the built session (for boundaries and positions)."""
    marker = RULES.seed_end_marker
    shift = 1 if marker and not (cut and events[cut - 1].get("type") == marker) else 0

    def moved(seq: Any) -> Any:
        return seq + shift if type(seq) is int and seq >= cut else seq

    steps: list[AppendStep] = []
    for event in events[cut:]:
        step = {k: copy.deepcopy(event[k]) for k in ("type", "data", "surfaceOp", "sourceEventSeqs") if k in event}
        op = step.get("surfaceOp")
        if shift and isinstance(op, dict):
            step["surfaceOp"] = {**op, **{k: moved(op[k]) for k in ("start", "end") if k in op}}
        if shift and isinstance(step.get("sourceEventSeqs"), list):
            step["sourceEventSeqs"] = [moved(s) for s in step["sourceEventSeqs"]]
        steps.append(step)
    return [copy.deepcopy(e) for e in events[:cut]], steps, moved


def materialise(steps: Sequence[AppendStep], times: Sequence[int], first_seq: int = 0) -> list[dict[str, Any]]:
    """Events for append steps, as a session would commit them (seq, time, markers)."""
    out = []
    for i, (step, time) in enumerate(zip(steps, times, strict=True)):
        event: dict[str, Any] = {"type": step["type"], "seq": first_seq + i, "time": time, "data": step["data"]}
        for key in ("sourceEventSeqs", "surfaceOp"):
            if key in step:
                event[key] = step[key]
        out.append(event)
    return out


# -- moves: one valid next event for a context ------------------------------------------------


def _fit(data: Any, ctx: LogContext) -> Any:
    """A registry example payload placed in this log: its turn and step are the current ones."""
    data = copy.deepcopy(data)
    if isinstance(data, dict):
        if type(data.get("turn")) is int:
            data["turn"] = ctx.turn()
        if type(data.get("step")) is int:
            data["step"] = ctx.step()
    return data


def _identified() -> bool:
    return cast("bool", RULES.messages.name == "identified")


def content_of(event_type: str, data: Any) -> Any:
    """The content list of a message payload, wherever the revision's message shape keeps it."""
    holder = data.get("message") if _identified() and event_type != "user/message" else data
    return holder.get("content") if isinstance(holder, dict) else None


def with_content(event_type: str, data: dict[str, Any], content: Any) -> dict[str, Any]:
    """A message payload with its content replaced (flat: ``data.content``; identified: the message's)."""
    if _identified() and event_type != "user/message":
        return {**data, "message": {**data["message"], "content": content}}
    return {**data, "content": content}


def with_call_id(data: dict[str, Any], call_id: str) -> dict[str, Any]:
    """A ``tool/result`` payload answering ``call_id`` (identified: the message's source, its
    tool-result blocks and its id follow the call)."""
    if not _identified():
        return {**data, "callId": call_id}
    message = data["message"]
    blocks = [{**b, "toolCallId": call_id} if isinstance(b, dict) and b.get("type") == "tool-result" else b
              for b in message.get("content") or ()]
    return {**data, "message": {**message, "id": f"msg-{call_id}", "source": {**message["source"], "callId": call_id},
                                "content": blocks}}


def result_contents() -> list[Any]:
    """Tool-result contents of the registry's examples (what a SURF-10 rewrite may put in place)."""
    out = []
    for event in VALID[TOOL_RESULT]:
        content = content_of(TOOL_RESULT, event["data"])
        if _identified():
            content = content[0].get("content") if isinstance(content, list) and content and isinstance(content[0], dict) else None
        if content is not None:
            out.append(content)
    return out


def with_result_content(data: dict[str, Any], content: Any) -> dict[str, Any]:
    """A ``tool/result`` payload whose result content is ``content`` (identified: the tool-result block's)."""
    if not _identified():
        return {**data, "content": content}
    blocks = list(content_of(TOOL_RESULT, data) or [{}])
    return with_content(TOOL_RESULT, data, [{**blocks[0], "content": content}, *blocks[1:]])


def _example(draw: Draw, event_type: str, pred: Callable[[dict[str, Any]], bool] | None = None) -> dict[str, Any]:
    pool = [e for e in VALID[event_type] if pred is None or pred(e)] or VALID[event_type]
    return cast("dict[str, Any]", draw(st.sampled_from(pool)))


def _step(event_type: str, data: Any, **intent: Any) -> AppendStep:
    out: AppendStep = {"type": event_type, "data": data}
    for key in ("surfaceOp", "sourceEventSeqs"):
        if key in intent:
            out[key] = intent[key]
    return out


def _is_plain_append(event: Mapping[str, Any]) -> bool:
    return cast("bool", event.get("surfaceOp") == _APPEND_MARKER)


def move_turn_start(draw: Draw, ctx: LogContext) -> AppendStep | None:
    if ctx.open_turn is not None:
        return None
    data = copy.deepcopy(_example(draw, TURN_START)["data"])
    data["turn"] = ctx.last_turn + 1
    return _step(TURN_START, data)


def move_turn_end(draw: Draw, ctx: LogContext) -> AppendStep | None:
    if ctx.open_turn is None or ctx.open_step is not None:
        return None
    data = copy.deepcopy(_example(draw, TURN_END)["data"])
    data["turn"] = ctx.open_turn
    return _step(TURN_END, data)


def move_step_start(draw: Draw, ctx: LogContext) -> AppendStep | None:
    if ctx.open_turn is None or ctx.open_step is not None:
        return None
    return _step(STEP_START, {**_fit(_example(draw, STEP_START)["data"], ctx), "step": ctx.last_step + 1})


def move_step_end(draw: Draw, ctx: LogContext) -> AppendStep | None:
    if ctx.open_step is None:
        return None
    return _step(STEP_END, _fit(_example(draw, STEP_END)["data"], ctx))


def move_assistant(draw: Draw, ctx: LogContext) -> AppendStep | None:
    """An assistant message: maybe empty, maybe requesting fresh tool calls, maybe citing its chunks."""
    if ctx.open_step is None:
        return None
    data = _fit(_example(draw, ASSISTANT)["data"], ctx)
    template = [b for e in VALID[ASSISTANT] for b in content_of(ASSISTANT, _data(e)) or () if isinstance(b, dict)]
    texts = [b for b in template if b.get("type") != "tool-call"]
    calls = [b for b in template if b.get("type") == "tool-call"]
    content: list[Any] = []
    if texts and draw(st.booleans()):
        content.append(copy.deepcopy(draw(st.sampled_from(texts))))
    if calls:
        for k in range(draw(st.integers(0, 2))):
            block = copy.deepcopy(draw(st.sampled_from(calls)))
            block["id"] = f"call-{ctx.seq}-{k}"
            content.append(block)
    data = with_content(ASSISTANT, data, content)
    sources = draw(st.sampled_from(["none", "chunks", "empty"]))
    if sources == "chunks" and ctx.step_chunks:
        return _step(ASSISTANT, data, surfaceOp=_APPEND_MARKER, sourceEventSeqs=list(ctx.step_chunks))
    if sources == "empty":
        return _step(ASSISTANT, data, surfaceOp=_APPEND_MARKER, sourceEventSeqs=[])
    return _step(ASSISTANT, data, surfaceOp=_APPEND_MARKER)


def move_tool_call(draw: Draw, ctx: LogContext) -> AppendStep | None:
    waiting = [c for c, seq in ctx.requested.items() if seq is None]
    if ctx.open_step is None or not waiting:
        return None
    data = _fit(_example(draw, TOOL_CALL)["data"], ctx)
    data["callId"] = draw(st.sampled_from(waiting))
    return _step(TOOL_CALL, data)


def move_tool_result(draw: Draw, ctx: LogContext) -> AppendStep | None:
    """A result for a requested call (started or not), citing the call when it was logged."""
    if ctx.open_step is None or not ctx.requested:
        return None
    call_id = draw(st.sampled_from(sorted(ctx.requested)))
    data = with_call_id(_fit(_example(draw, TOOL_RESULT, _is_plain_append)["data"], ctx), call_id)
    call_seq = ctx.requested[call_id]
    if call_seq is None:
        return _step(TOOL_RESULT, data, surfaceOp=_APPEND_MARKER)
    return _step(TOOL_RESULT, data, surfaceOp=_APPEND_MARKER, sourceEventSeqs=[call_seq])


def move_message(draw: Draw, ctx: LogContext) -> AppendStep | None:
    """A user or steering message appended to the surface (steering only inside a turn)."""
    choices = [t for t in FREE_SURFACE if ctx.open_turn is not None or SPEC.events[t]["enclosure"] == "any"]
    if not choices:
        return None
    event_type = draw(st.sampled_from(choices))
    data = _fit(_example(draw, event_type, _is_plain_append)["data"], ctx)
    if ctx.nodes and draw(st.integers(0, 3)) == 0:
        return _step(event_type, data, surfaceOp=_APPEND_MARKER, sourceEventSeqs=[draw(st.sampled_from(ctx.nodes))])
    return _step(event_type, data, surfaceOp=_APPEND_MARKER)


def _vary(value: Any, node: Mapping[str, Any], draw: Draw) -> Any:
    """Keep, drop or empty each optional property of an object (from its schema's ``required``)."""
    node = _resolve(node)
    if not isinstance(value, dict) or node.get("type") != "object":
        return value
    required = set(node.get("required", ()))
    out = {}
    for key, item in value.items():
        if key in required:
            out[key] = item
            continue
        how = draw(st.sampled_from(["keep", "keep", "drop", "empty"]))
        if how == "keep":
            out[key] = item
        elif how == "empty" and isinstance(item, (str, list, dict)):
            out[key] = type(item)()
    return out


def request_header_data(draw: Draw) -> Any:
    """A request/header payload: a registry example whose header keeps, drops or empties
    its optional parts (the canonical form drops empty ones, REQ-1)."""
    data = copy.deepcopy(_example(draw, REQUEST_HEADER)["data"])
    node = _resolve(schema("payload/request/header.json"))["properties"]["header"]
    data["header"] = _vary(data["header"], node, draw)
    if draw(st.integers(0, 4)) == 0:  # a legacy key the canonical form drops (registry invalid example)
        legacy = [e for e in INVALID_EVENTS if e["type"] == REQUEST_HEADER and "header" in _data(e)]
        extra = {k: v for e in legacy for k, v in _data(e)["header"].items() if k not in data["header"]}
        data["header"].update(copy.deepcopy(extra))
    return data


def move_request_header(draw: Draw, ctx: LogContext) -> AppendStep | None:
    return _step(REQUEST_HEADER, request_header_data(draw))


def move_log_only(draw: Draw, ctx: LogContext) -> AppendStep | None:
    """Any other registered log-only type, from its examples."""
    event_type = draw(st.sampled_from(FREE_LOG_ONLY))
    return _step(event_type, _fit(_example(draw, event_type)["data"], ctx))


def chunk_delta(kind: str, index: int, text: str, ctx: LogContext, *, call_id: str | None = None,
                name: str | None = None) -> AppendStep:
    """One streamed delta of a row kind (``constants.json`` chunk rows: chunk type, member key, fixed keys)."""
    row = ROWS[kind]
    chunk: dict[str, Any] = {"type": row["chunkType"], "index": index}
    for key in row["dataKeys"]:
        if key in ("turn", "step", "index", "dt", row["listKey"]):
            continue
        if key in row.get("optionalDataKeys", ()):
            if name is not None:
                chunk[key] = name
        else:
            chunk[key] = call_id or f"call-{ctx.seq}"
    chunk[row["memberKey"]] = text
    return _step(CHUNK, {"turn": ctx.turn(), "step": ctx.step(), "chunk": chunk})


def chunk_run(draw: Draw, ctx: LogContext, *, max_size: int = 5) -> list[AppendStep]:
    """A run of deltas of one kind and index (a tool-call run names its tool on the first
    delta, on all or on none), sometimes broken by a non-delta chunk of the registry."""
    kind = draw(st.sampled_from(sorted(ROWS)))
    index = draw(st.integers(0, 1))
    size = draw(st.integers(1, max_size))
    naming = draw(st.sampled_from(["first", "first", "all", "none"]))  # streams name the tool on the first delta
    call_id = f"call-{ctx.seq}"
    out = []
    for k in range(size):
        name = "read" if naming == "all" or (naming == "first" and k == 0) else None
        out.append(chunk_delta(kind, index, draw(st.text("ab ", max_size=3)), ctx, call_id=call_id, name=name))
    if draw(st.integers(0, 3)) == 0:
        others = [e for e in VALID[CHUNK] if _data(e).get("chunk", {}).get("type") not in {r["chunkType"] for r in ROWS.values()}]
        if others:
            breaker = _step(CHUNK, _fit(draw(st.sampled_from(others))["data"], ctx))
            out.insert(draw(st.integers(0, len(out))), breaker)
    return out


def replace_range(draw: Draw, ctx: LogContext) -> tuple[int, int]:
    """Positions ``a <= b`` on the surface; half the time ``a`` holds a seq larger than a
    later node's (the start seq then exceeds the end seq: positions, not values, count)."""
    n = len(ctx.nodes)
    inverted = [i for i in range(n - 1) if any(ctx.nodes[j] < ctx.nodes[i] for j in range(i + 1, n))]
    if inverted and draw(st.booleans()):
        a = draw(st.sampled_from(inverted))
        later = [j for j in range(a + 1, n) if ctx.nodes[j] < ctx.nodes[a]]
        return a, draw(st.sampled_from(later))
    a = draw(st.integers(0, n - 1))
    return a, draw(st.integers(a, min(n - 1, a + 3)))


def move_compaction(draw: Draw, ctx: LogContext) -> AppendStep | None:
    """A replace of surface positions a..b by a message citing every shadowed node (maybe more)."""
    if not ctx.nodes:
        return None
    a, b = replace_range(draw, ctx)
    shadowed = ctx.nodes[a : b + 1]
    extra = [s for s in range(ctx.seq) if s not in shadowed]
    sources = sorted(shadowed + (draw(st.lists(st.sampled_from(extra), max_size=2, unique=True)) if extra else []))
    event_type = draw(st.sampled_from([t for t in SURFACE_TYPES if t != TOOL_RESULT]))
    if event_type == ASSISTANT:
        data = _fit(_example(draw, ASSISTANT)["data"], ctx)
        data = with_content(ASSISTANT, data, [b for b in content_of(ASSISTANT, data) or () if b.get("type") != "tool-call"])
    else:
        data = _fit(_example(draw, event_type)["data"], ctx)
    return _step(event_type, data, surfaceOp=replace_marker(ctx.nodes[a], ctx.nodes[b]), sourceEventSeqs=sources)


def current_results(ctx: LogContext) -> list[int]:
    return [s for s in ctx.nodes if ctx.type_at(s) == TOOL_RESULT]


def move_prune(draw: Draw, ctx: LogContext) -> AppendStep | None:
    """A content-only rewrite of one current tool/result (SURF-10), content from another example."""
    results = current_results(ctx)
    if not results:
        return None
    target = draw(st.sampled_from(results))
    data = copy.deepcopy(dict(_data(ctx.events[target])))
    data = with_result_content(data, copy.deepcopy(draw(st.sampled_from([*result_contents(), []]))))
    return _step(TOOL_RESULT, data, surfaceOp=replace_marker(target, target), sourceEventSeqs=[target])


MOVES: dict[str, Callable[[Draw, LogContext], AppendStep | None]] = {
    "turn_start": move_turn_start,
    "turn_end": move_turn_end,
    "step_start": move_step_start,
    "step_end": move_step_end,
    "assistant": move_assistant,
    "tool_call": move_tool_call,
    "tool_result": move_tool_result,
    "message": move_message,
    "request_header": move_request_header,
    "log_only": move_log_only,
    "compaction": move_compaction,
    "prune": move_prune,
}


def move_names() -> list[str]:
    return list(MOVES)


def _weighted(ctx: LogContext) -> list[str]:
    """Move names weighted for the context, so logs look like agent runs (turns close, steps
    hold messages, calls and results) while odd events still appear."""
    anywhere = ["message", "request_header", "log_only", "compaction", "prune"]
    if ctx.open_turn is None:
        return ["turn_start"] * 4 + anywhere
    if ctx.open_step is None:
        return ["step_start"] * 3 + ["turn_end"] * 2 + anywhere
    if ctx.requested:
        return ["tool_call"] * 4 + ["tool_result"] * 4 + ["assistant", "step_end"] + anywhere
    return ["assistant"] * 4 + ["step_end"] * 2 + anywhere


def moves_for(draw: Draw, ctx: LogContext, names: Sequence[str] | None = None) -> AppendStep:
    """One valid next step: a random applicable move (weighted by context unless ``names`` is given)."""
    pool = _weighted(ctx)
    if names:
        pool = [n for n in pool if n in names] or list(names)
    while True:
        name = draw(st.sampled_from(pool))
        step = MOVES[name](draw, ctx)
        if step is not None:
            return step
        pool = [n for n in pool if n != name] or list(MOVES)


def steps_until(draw: Draw, ctx: LogContext, goal: Callable[[LogContext], bool], names: Sequence[str],
                max_steps: int = 12) -> tuple[list[AppendStep], LogContext] | None:
    """Valid steps (from ``names``) that lead from ``ctx`` to a context where ``goal`` holds,
    with that context; ``None`` when the walk does not get there in ``max_steps``."""
    steps: list[AppendStep] = []
    events = list(ctx.events)
    while not goal(ctx):
        if len(steps) >= max_steps:
            return None
        step = moves_for(draw, ctx, names)
        steps.append(step)
        events += materialise([step], [0], len(events))
        ctx = scan(events)
    return steps, ctx


def build_log(draw: Draw, *, max_events: int = 24, time0: int | None = None, balanced: bool = True,
              chunks: bool = True) -> list[dict[str, Any]]:
    """A valid log built offline with the moves (times strictly from a drawn start, small gaps).

    ``balanced`` closes the last turn, so the log is a valid seed and forkable."""
    time = draw(st.integers(0, 2**41)) if time0 is None else time0
    events: list[dict[str, Any]] = []
    ctx = scan(events)
    target = draw(st.integers(0, max_events))
    while len(events) < target:
        if chunks and ctx.open_step is not None and draw(st.booleans()):
            steps = chunk_run(draw, ctx)
        else:
            steps = [moves_for(draw, ctx)]
        times = []
        for _ in steps:
            time += draw(st.integers(0, 3))
            times.append(time)
        events += materialise(steps, times, len(events))
        ctx = scan(events)
    if balanced:
        for closer in (move_step_end, move_turn_end):
            step = closer(draw, ctx)
            if step is not None:
                events += materialise([step], [time], len(events))
                ctx = scan(events)
    return events


# -- invalid appends -------------------------------------------------------------------------

INVALID_APPEND_KINDS: tuple[str, ...] = (
    "registry-invalid",
    "data-not-json",
    "metadata-not-json",
    "legacy-type",
    "legacy-reason",
    "marker-missing",
    "log-only-marker",
    "log-only-sources",
    "marker-invalid",
    "sources-invalid",
    "replace-range",
    "replace-coverage",
    "tool-result-rewrite",
)


def poison(value: Any, draw: Draw) -> Any:
    """``value`` with ``-0.0`` (the one JSON-representable non-lossless value, JSON-2) inside it."""
    if isinstance(value, dict) and value and draw(st.booleans()):
        key = draw(st.sampled_from(sorted(value)))
        return {**value, key: poison(value[key], draw)}
    if isinstance(value, list) and value and draw(st.booleans()):
        i = draw(st.integers(0, len(value) - 1))
        return [*value[:i], poison(value[i], draw), *value[i + 1 :]]
    return draw(st.sampled_from([-0.0, [-0.0], {"x": -0.0}]))


_SETUP: Mapping[str, tuple[Callable[[LogContext], bool], tuple[str, ...]]] = {
    "tool-result-rewrite": (lambda c: bool(current_results(c)),
                            ("turn_start", "step_start", "assistant", "tool_call", "tool_result")),
    "replace-coverage": (lambda c: len(c.nodes) >= 3, ("turn_start", "message")),
    "replace-range": (lambda c: len(c.nodes) >= 2, ("turn_start", "message")),
}


def invalid_append_with_setup(draw: Draw, ctx: LogContext, kind: str) -> list[AppendStep] | None:
    """Valid setup steps (when the log lacks what ``kind`` needs: a tool result to rewrite,
    nodes to replace) followed by one invalid step of ``kind``."""
    setup: list[AppendStep] = []
    if kind in _SETUP:
        goal, names = _SETUP[kind]
        found = steps_until(draw, ctx, goal, names)
        if found is None:
            return None
        setup, ctx = found
    step = invalid_append(draw, ctx, kind)
    return None if step is None else [*setup, step]


def invalid_append(draw: Draw, ctx: LogContext, kind: str) -> AppendStep | None:
    """An append step that a rule of APPEND/SURF (or the registry's invalid examples) refuses,
    or that the reference accepts where a careless implementation might not (APPEND-15)."""
    surface = draw(st.sampled_from(SURFACE_TYPES))
    log_only = draw(st.sampled_from(FREE_LOG_ONLY))
    if kind == "registry-invalid":
        event = copy.deepcopy(draw(st.sampled_from(INVALID_RULED if draw(st.booleans()) else INVALID_EVENTS)))
        return {k: event[k] for k in ("type", "data", "surfaceOp", "sourceEventSeqs") if k in event}
    if kind == "data-not-json":
        step = moves_for(draw, ctx)
        return {**step, "data": poison(step["data"], draw)}
    if kind == "metadata-not-json":
        step = moves_for(draw, ctx, ["message", "assistant", "compaction"])
        key = draw(st.sampled_from(["surfaceOp", "sourceEventSeqs"]))
        return {**step, key: poison(step.get(key, []), draw)}
    if kind == "legacy-type":
        return _step(draw(st.sampled_from(LEGACY_TYPES)), request_header_data(draw))
    if kind == "legacy-reason":
        return _step(REQUEST_HEADER, {**request_header_data(draw), "reason": draw(st.sampled_from(REJECTED_REASONS))})
    if kind == "marker-missing":
        return _step(surface, _fit(_example(draw, surface)["data"], ctx))
    if kind == "log-only-marker":
        marker = draw(st.sampled_from([_APPEND_MARKER, None, *bad_markers(ctx.nodes)[:3]]))
        return _step(log_only, _fit(_example(draw, log_only)["data"], ctx), surfaceOp=marker)
    if kind == "log-only-sources":
        sources = draw(st.sampled_from([[0], [], None, "x"]))
        return _step(log_only, _fit(_example(draw, log_only)["data"], ctx), sourceEventSeqs=sources)
    if kind == "marker-invalid":
        marker = draw(st.sampled_from(bad_markers(ctx.nodes)))
        return _step(surface, _fit(_example(draw, surface)["data"], ctx), surfaceOp=marker)
    if kind == "sources-invalid":
        clause = draw(st.sampled_from(["not-list", "empty", "not-safe-int", "duplicate", "not-earlier"]))
        seq = ctx.seq
        earlier = ctx.nodes[0] if ctx.nodes else 0
        sources = draw(st.sampled_from({  # type: ignore[call-overload]
            "not-list": ["x", {"0": 0}, 0, None],
            "empty": [[]],
            "not-safe-int": [[-1], [0.5], [True], ["0"], [MAX_SAFE + 1]],
            "duplicate": [[earlier, earlier]],
            "not-earlier": [[seq], [seq + 5]],
        }[clause]))
        if clause == "empty":  # empty provenance is allowed on assistant messages only
            step = moves_for(draw, ctx, ["message"])
        else:
            step = moves_for(draw, ctx, ["message", "assistant", "compaction"])
        return {**step, "sourceEventSeqs": sources}
    if kind == "replace-range":
        live = set(ctx.nodes)
        gone = [s for s in range(ctx.seq) if s not in live]  # shadowed or log-only seqs
        absent = draw(st.sampled_from([*gone[:5], ctx.seq, ctx.seq + 3] if gone else [ctx.seq, ctx.seq + 3]))
        anchor = draw(st.sampled_from(ctx.nodes)) if ctx.nodes else 0
        start, end = draw(st.sampled_from([(absent, anchor), (anchor, absent)]))
        if len(ctx.nodes) >= 2 and draw(st.booleans()):
            a = draw(st.integers(1, len(ctx.nodes) - 1))
            b = draw(st.integers(0, a - 1))
            start, end = ctx.nodes[a], ctx.nodes[b]  # start after end by position
        sources = sorted({start, end} & set(range(ctx.seq)))
        event_type = draw(st.sampled_from(FREE_SURFACE))
        return _step(event_type, _fit(_example(draw, event_type)["data"], ctx),
                     surfaceOp=replace_marker(start, end), sourceEventSeqs=sources)
    if kind == "replace-coverage":
        step = move_compaction(draw, ctx)  # type: ignore[assignment]
        if step is None:
            return None
        shadowed = [s for s in step["sourceEventSeqs"] if s in _shadowed(ctx, step["surfaceOp"])]
        how = draw(st.sampled_from(["drop-one", "absent", "only-ends"]))
        if how == "absent":
            return {k: v for k, v in step.items() if k != "sourceEventSeqs"}
        if how == "only-ends" and len(shadowed) > 2:
            return {**step, "sourceEventSeqs": [shadowed[0], shadowed[-1]]}
        dropped = draw(st.sampled_from(shadowed))
        rest = [s for s in step["sourceEventSeqs"] if s != dropped]
        return {**step, "sourceEventSeqs": rest} if rest else {k: v for k, v in step.items() if k != "sourceEventSeqs"}
    if kind == "tool-result-rewrite":
        return _bad_rewrite(draw, ctx)
    raise ValueError(f"unknown invalid-append kind {kind!r}")


def _shadowed(ctx: LogContext, op: Mapping[str, Any]) -> list[int]:
    a, b = ctx.nodes.index(op["start"]), ctx.nodes.index(op["end"])
    return ctx.nodes[a : b + 1]


def _bad_rewrite(draw: Draw, ctx: LogContext) -> AppendStep | None:
    """A tool/result replace that breaks SURF-10: two nodes, a non-result target, or a change
    outside ``content``."""
    if not ctx.nodes:
        return None
    results = current_results(ctx)
    how = draw(st.sampled_from(["changed-field", "two-nodes", "not-a-result"]))
    data = _fit(_example(draw, TOOL_RESULT, _is_plain_append)["data"], ctx)
    if how == "changed-field" and results:
        target = draw(st.sampled_from(results))
        original = dict(_data(ctx.events[target]))
        key = draw(st.sampled_from(sorted(k for k in original if k != "content") or ["extra"]))
        value = original.get(key)
        changed = (not value) if isinstance(value, bool) else (value + 1 if type(value) is int else [value, "x"])
        data = {**original, key: changed}
        if draw(st.booleans()):
            data.pop(key)
        return _step(TOOL_RESULT, data, surfaceOp=replace_marker(target, target), sourceEventSeqs=[target])
    if how == "two-nodes" and len(ctx.nodes) >= 2:
        a = draw(st.integers(0, len(ctx.nodes) - 2))
        start, end = ctx.nodes[a], ctx.nodes[a + 1]
        return _step(TOOL_RESULT, data, surfaceOp=replace_marker(start, end), sourceEventSeqs=sorted([start, end]))
    others = [s for s in ctx.nodes if ctx.type_at(s) != TOOL_RESULT]
    if not others:
        return None
    target = draw(st.sampled_from(others))
    return _step(TOOL_RESULT, data, surfaceOp=replace_marker(target, target), sourceEventSeqs=[target])


# -- seeds and headers ------------------------------------------------------------------------

SEED_CORRUPTIONS: tuple[str, ...] = (
    "registry-invalid", "not-json", "legacy-type", "stray-key", "missing-data", "bad-seq-type",
    "bad-time", "bad-type", "not-object", "seq-gap", "surface", "two-faults",
)


def seed_corruption(draw: Draw, events: Sequence[Any], kind: str) -> tuple[list[Any], int]:
    """A copy of a valid seed with entry ``i`` broken by one SEED rule; returns (seed, i).

    ``two-faults`` breaks one entry twice (a registry-invalid event at a wrong seq), so
    the order of the per-entry checks (SEED-11) decides the reported code."""
    seed = [copy.deepcopy(e) for e in events]
    i = draw(st.integers(0, max(len(seed) - 1, 0)))
    if not seed:
        seed.append({"type": TURN_START, "seq": 0, "time": 0, "data": {}})
    entry = seed[i]
    if kind in ("registry-invalid", "two-faults"):
        pool = INVALID_RULED if kind == "two-faults" or draw(st.booleans()) else INVALID_EVENTS
        bad = copy.deepcopy(draw(st.sampled_from(pool)))
        bad["seq"] = i if kind == "registry-invalid" else i + draw(st.sampled_from([1, 2]))
        bad["time"] = entry["time"]
        seed[i] = bad
    elif kind == "not-json":
        entry["data"] = poison(entry["data"], draw)
    elif kind == "legacy-type":
        entry["type"] = draw(st.sampled_from(LEGACY_TYPES))
    elif kind == "stray-key":
        entry[draw(st.sampled_from(["extra", "id", "meta"]))] = 1
    elif kind == "missing-data":
        del entry["data"]
    elif kind == "bad-seq-type":
        entry["seq"] = draw(st.sampled_from([v for v in near_misses(SAFE_INT) if not (type(v) is int and v >= 0)]))
    elif kind == "bad-time":
        entry["time"] = draw(st.sampled_from(near_misses(SAFE_INT)))
    elif kind == "bad-type":
        entry["type"] = draw(st.sampled_from([1, None, ["x"]]))
    elif kind == "not-object":
        seed[i] = draw(st.sampled_from([[entry], "event", 1, None]))
    elif kind == "seq-gap":
        entry["seq"] = i + draw(st.sampled_from([1, 2]))
    elif kind == "surface":
        if "surfaceOp" not in entry:
            entry["surfaceOp"] = _APPEND_MARKER  # a log-only entry with a marker
        elif draw(st.booleans()):
            del entry["surfaceOp"]  # a surface entry without one
        else:
            entry["surfaceOp"] = draw(st.sampled_from(bad_markers([i])))
    else:
        raise ValueError(f"unknown seed corruption {kind!r}")
    return seed, i


def _header_value(key: str, node: Mapping[str, Any], session_id: str, draw: Draw) -> Any:
    node = _resolve(node)
    if "const" in node:
        return node["const"]
    if key == "id":
        return session_id
    if node.get("type") == "string":
        return "/work/" + draw(st.sampled_from(["a", "proj x", "ü"])) if key == "cwd" else "parent-1"
    if node.get("type") == "integer":
        return draw(st.integers(0, 4)) if key != "createdAt" else draw(st.integers(0, 2**41))
    raise ValueError(f"no generator for header key {key!r}")


HEADER_KINDS: tuple[str, ...] = ("valid", "unknown-key", "near-miss", "relative-cwd", "missing", "not-object")


def header_variant(draw: Draw, session_id: str, kind: str) -> Any:
    """A session header from the header schema: required keys, a random subset of the
    optional ones, then one deliberate fault of ``kind`` (HDR-2 ... HDR-9)."""
    props = SESSION_HEADER["properties"]
    required = list(SESSION_HEADER["required"])
    header = {k: _header_value(k, props[k], session_id, draw) for k in required}
    for key in props:
        if key not in required and draw(st.booleans()):
            header[key] = _header_value(key, props[key], session_id, draw)
    if kind == "valid":
        return header
    if kind == "unknown-key":
        return {**header, draw(st.sampled_from(["title", "x-plugin", "__proto__"])): {"kept": True}}
    if kind == "near-miss":
        key = draw(st.sampled_from(sorted(props)))
        misses = near_misses(props[key]) + ([f"{session_id}-other"] if key == "id" else [])
        return {**header, key: draw(st.sampled_from(misses))}
    if kind == "relative-cwd":
        return {**header, "cwd": draw(st.sampled_from(["relative/path", "./x", "x", ""]))}
    if kind == "missing":
        key = draw(st.sampled_from(required))
        return {k: v for k, v in header.items() if k != key}
    if kind == "not-object":
        return draw(st.sampled_from([[header], "header", 0, True]))
    raise ValueError(f"unknown header kind {kind!r}")


# -- chunk rows ------------------------------------------------------------------------------


def near_miss_rows(row: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """Variants of a valid row that the decoder must refuse (CHUNK-9), each with what is wrong."""
    spec = ROWS[row["type"]]
    data = row["data"]
    members = data[spec["listKey"]]
    out: list[tuple[str, Any]] = [
        ("stray envelope key", {**row, "surfaceOp": "append"}),
        ("stray data key", {**row, "data": {**data, "extra": 1}}),
        ("seq0 negative", {**row, "seq0": -1}),
        ("seq0 fraction", {**row, "seq0": 0.5}),
        ("time0 beyond safe", {**row, "time0": MAX_SAFE + 1}),
        ("data not an object", {**row, "data": [data]}),
        ("dt too long", {**row, "data": {**data, "dt": [*data["dt"], 0]}}),
        ("dt not integers", {**row, "data": {**data, "dt": [0.5] * len(data["dt"])}} if data["dt"] else None),
        ("members empty", {**row, "data": {**data, spec["listKey"]: [], "dt": []}}),
        ("member not a string", {**row, "data": {**data, spec["listKey"]: [1] * len(members)}}),
        ("turn not a number", {**row, "data": {**data, "turn": str(data["turn"])}}),
        ("index boolean", {**row, "data": {**data, "index": True}}),
        ("member seqs beyond safe", {**row, "seq0": MAX_SAFE - len(members) + 2}),
        ("member times beyond safe", {**row, "time0": MAX_SAFE, "data": {**data, "dt": [1] * len(data["dt"])}}
         if data["dt"] else None),
    ]
    for key in spec["dataKeys"]:
        if key in data and key not in spec.get("optionalDataKeys", ()):
            out.append((f"missing {key}", {**row, "data": {k: v for k, v in data.items() if k != key}}))
        if key in data and key not in ("turn", "step", "index", "dt", spec["listKey"]):
            out.append((f"{key} not a string", {**row, "data": {**data, key: 7}}))
    return [(what, value) for what, value in out if value is not None]


# -- values ---------------------------------------------------------------------------------


def json_values(max_leaves: int = 12) -> st.SearchStrategy[Any]:
    """JSON-representable values, sometimes holding ``-0.0`` or a ``__proto__`` key (JSON-2, JSON-10).

    Integers stay within the safe range and floats are never integral, so every
    language reads these values the same way (PROTOCOL.md section 9)."""
    floats = st.floats(allow_nan=False, allow_infinity=False).filter(lambda f: f != int(f) or f == 0.0)
    scalars = st.one_of(
        st.none(), st.booleans(), st.integers(-MAX_SAFE, MAX_SAFE), floats, st.text(max_size=6),
        st.sampled_from([-0.0, 0.0]),
    )
    keys = st.one_of(st.text(max_size=4), st.sampled_from(["__proto__", "constructor", "toString"]))
    return st.recursive(
        scalars,
        lambda children: st.one_of(st.lists(children, max_size=4), st.dictionaries(keys, children, max_size=4)),
        max_leaves=max_leaves,
    )


def path_text() -> st.SearchStrategy[str]:
    """Session ids and project paths for path encoding: separators, dots, tildes, non-ASCII,
    characters outside the BMP (two UTF-16 units each, JSONL-11)."""
    return st.text(st.sampled_from(list("aZ09._-~/\\: ") + ["é", "\u4e2d", "\U0001f600"]), max_size=10)
