"""The msgspec types generated from the schemas accept only what the schemas accept.

The rule of `sessionspec.validator.mstypes`: if the generated decoder accepts a line and re-encodes it to
the same bytes, python-jsonschema (the oracle) accepts the value. The translation may be
stricter (then the exact path decides), never looser.
"""

from __future__ import annotations

import copy
from typing import Any

import msgspec
import orjson
from cli_helpers import turn_events
from cli_strategies import EDGE_NUMBERS, EXAMPLES, SCHEMAS, mutate, paths, vector_events
from cli_strategies import set_at as _set
from cli_strategies import value_at as _get
from hypothesis import given
from hypothesis import strategies as st
from sessionspec.reference import json_text
from sessionspec.reference.chunk_rows import pack_chunk_runs
from sessionspec.validator.fastlog import _LOG_ONLY, _ROW_TYPED, _SURFACE_TYPED, _struct_kinds
from sessionspec.validator.mstypes import build_fast_types

FAST = SCHEMAS.fast_types


def _accepted(value: Any) -> bool:
    """Whether the fast types take `value` (written canonically) as a valid event or row."""
    try:
        raw = json_text.dumps_bytes(value)
        obj = FAST.decoder.decode(raw)
    except (msgspec.MsgspecError, ValueError, RecursionError):
        return False
    return FAST.encoder.encode(obj) == raw


def _oracle(value: Any) -> bool:
    row = isinstance(value, dict) and value.get("type") in FAST.rows
    return bool((SCHEMAS.row if row else SCHEMAS.event).oracle.is_valid(value))


def _never_looser(value: Any) -> None:
    if _accepted(value):
        assert _oracle(value), value


def test_the_hot_types_have_structs():
    """If the translation lost one of these, validate would silently fall back to the slow path."""
    for tag in ("assistant/chunk", "assistant/message", "tool/call", "tool/result", "user/message",
                "step/start", "step/end", "turn/start", "turn/end"):
        assert tag in FAST.events, FAST.skipped
    assert FAST.rows == {"text-chunks", "reasoning-chunks", "tool-call-chunks"}
    kinds = {FAST.tags[cls]: kind for cls, kind in _struct_kinds(FAST).items()}
    assert kinds["assistant/chunk"] == _LOG_ONLY and kinds["step/start"] == _LOG_ONLY
    # their types prove sourceEventSeqs distinct non-negative ints: only SURF-7's order is left to the surface
    assert kinds["assistant/message"] == _SURFACE_TYPED and kinds["tool/result"] == _SURFACE_TYPED
    assert kinds["text-chunks"] == kinds["tool-call-chunks"] == _ROW_TYPED  # CHUNK-9 types guaranteed by the struct


def test_registry_examples_vectors_and_log_events():
    valid = EXAMPLES + turn_events() + vector_events()
    accepted = 0
    for value in valid:
        if _accepted(value):
            accepted += 1
            assert _oracle(value), value
    assert accepted > 100


def test_packed_rows():
    rows = [r for r in pack_chunk_runs(turn_events()) if r["type"] in FAST.rows]
    assert rows and all(_accepted(r) and _oracle(r) for r in rows)


@given(st.sampled_from(EXAMPLES + turn_events() + pack_chunk_runs(turn_events())), st.data())
def test_mutations_are_never_accepted_when_invalid(value, data):
    _never_looser(mutate(data.draw, value))


@given(st.sampled_from(EXAMPLES + turn_events()), st.data())
def test_integer_and_float_edges(event, data):
    """1.0 where the schema says integer, ints beyond 2^53, -0.0, bools, huge floats."""
    event = copy.deepcopy(event)
    numeric = [p for p in paths(event) if p and type(_get(event, p)) in (int, float)]
    for path in data.draw(st.lists(st.sampled_from(numeric), min_size=1, max_size=3)) if numeric else []:
        _set(event, path, data.draw(EDGE_NUMBERS))
    _never_looser(event)
    if _accepted(event):  # what the struct path lets through is also lossless JSON for the log reader
        raw = json_text.dumps_bytes(event)
        assert orjson.dumps(orjson.loads(raw), option=orjson.OPT_STRICT_INTEGER) == raw
        # -0.0 is a valid number for the schema, but no accepted struct holds one (the log pass relies on it)
        assert not _negative_zeros(FAST.decoder.decode(raw))


def _negative_zeros(value: Any) -> bool:
    value = msgspec.to_builtins(value) if isinstance(value, msgspec.Struct) else value
    if type(value) is float:
        return value == 0 and str(value).startswith("-")
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    return any(_negative_zeros(v) for v in items)


def test_negative_zero_is_refused_in_numbers_and_json_values():
    """Numbers decode as whole ints only; a JsonValue part holding -0.0 fails its generated check."""
    chunk = turn_events()[3]
    for path in (("data", "turn"), ("data", "chunk", "index")):
        for number in (-0.0, 0.0, 1.5):
            changed = copy.deepcopy(chunk)
            _set(changed, path, number)
            assert not _accepted(changed), (path, number)
    message = copy.deepcopy(turn_events()[7])
    message["data"]["provenance"]["replayState"] = {"k": [1, "x"]}
    assert _accepted(message)
    message["data"]["provenance"]["replayState"] = {"k": [1, -0.0]}
    assert not _accepted(message)


def test_edge_cases_by_hand():
    chunk = turn_events()[3]
    assert _accepted(chunk)
    for path, value in ((("seq",), 3.0), (("seq",), 2**53), (("time",), True), (("data", "turn"), 2**53),
                        (("data", "turn"), True), (("data", "chunk", "index"), None), (("data", "chunk", "text"), 1)):
        bad = copy.deepcopy(chunk)
        _set(bad, path, value)
        assert not _accepted(bad), (path, value)
    dup = json_text.dumps_bytes(chunk).replace(b'"step":1,', b'"step":1,"step":1,')
    assert FAST.encoder.encode(FAST.decoder.decode(dup)) != dup  # the identity guard sees the duplicate
    message = turn_events()[7]
    message["data"]["provenance"]["replayState"] = {"n": 2**60}  # JsonValue: any value, but a safe integer
    assert not _accepted(message)
    message["data"]["provenance"]["replayState"] = {"n": 2**52}
    assert _accepted(message) and _oracle(message)
    sources = turn_events()[7]
    sources["sourceEventSeqs"] = [3, 3]  # uniqueItems
    assert not _accepted(sources) and not _oracle(sources)


def test_a_stricter_translation_only_rejects():
    """Tags the translation leaves out still validate: through the exact path (here: not accepted)."""
    assert all(isinstance(reason, str) and reason for reason in FAST.skipped.values())
    block = {"type": "tool-result", "toolCallId": "c", "content": []}
    end = {"type": "assistant/chunk", "seq": 0, "time": 1, "data": {"turn": 1, "step": 1,
           "chunk": {"type": "block-end", "index": 0, "block": block}}}
    assert _oracle(end) and not _accepted(end)


def test_translation_is_deterministic():
    again = build_fast_types(SCHEMAS.event, SCHEMAS.row)
    assert {t for t in again.tags.values()} == set(FAST.tags.values())


def _translate(schema: dict[str, Any]) -> Any:
    import jsonschema
    import referencing
    from referencing.jsonschema import DRAFT202012
    from sessionspec.validator.fastschema import CompiledSchema
    from sessionspec.validator.mstypes import _Translator

    registry = referencing.Registry().with_resources([(schema["$id"], DRAFT202012.create_resource(schema))])
    compiled = CompiledSchema(schema, jsonschema.Draft202012Validator(schema, registry=registry), registry=registry)
    translator = _Translator(compiled)
    kind = translator.translate(schema, compiled.root_resolver)
    return msgspec.json.Decoder(kind), compiled.oracle


@given(st.one_of(EDGE_NUMBERS, st.integers(-2**64, 2**64), st.floats(allow_nan=False, allow_infinity=False)))
def test_numeric_bounds_stay_within_the_safe_range(number):
    """Wide or fractional bounds: the int part is clamped to +/-(2^53-1) and rounded inwards."""
    for schema in ({"$id": "urn:a", "type": "integer", "minimum": -1e20, "maximum": 1e20},
                   {"$id": "urn:b", "type": "number", "exclusiveMinimum": 0.5, "maximum": 2**60},
                   {"$id": "urn:c", "type": "integer", "exclusiveMaximum": 7.5}):
        decoder, oracle = _translate(schema)
        raw = orjson.dumps(number) if not isinstance(number, int) or abs(number) < 2**63 else str(number).encode()
        try:
            accepted = decoder.decode(raw)
        except msgspec.MsgspecError:
            continue
        assert oracle.is_valid(number), (schema, number)
        if type(accepted) is int:
            assert abs(accepted) <= 2**53 - 1


def test_types_msgspec_refuses_are_left_out():
    """Two length bounds on one list: msgspec refuses the type; the translation reports Unsupported."""
    from sessionspec.validator.mstypes import Unsupported

    schema = {"$id": "urn:d", "type": "object", "properties": {"l": {"type": "array", "minItems": 2}},
              "allOf": [{"properties": {"l": {"minItems": 1}}}]}
    try:
        decoder, oracle = _translate(schema)
    except Unsupported:
        return
    for value in ([], [1], [1, 2]):
        try:
            decoder.decode(orjson.dumps({"l": value}))
        except msgspec.MsgspecError:
            continue
        assert oracle.is_valid({"l": value})


def test_the_published_revision_has_structs_and_its_ignorable_marker_is_exact():
    """The published envelope's `ignorable` (`const: true`) is translated as `Literal[True]`: before, no published
    type had a struct (every log the npm package writes took the slow path); `false` or `1` stays refused."""
    from sessionspec.validator.lint import schema_set

    published = schema_set((), "b150a551b8")
    fast = published.fast_types
    for tag in ("assistant/chunk", "assistant/message", "tool/call", "tool/result", "user/message", "step/start",
                "step/end", "turn/start", "turn/end"):
        assert tag in fast.events, fast.skipped
    event = {"type": "step/start", "seq": 3, "time": 5, "data": {"turn": 1, "step": 1}}
    for marker, valid in ((True, True), (False, False), (1, False), (None, False)):
        raw = json_text.dumps_bytes({**event, "ignorable": marker})
        try:
            accepted = fast.encoder.encode(fast.decoder.decode(raw)) == raw
        except msgspec.MsgspecError:
            accepted = False
        assert accepted is valid is bool(published.event.oracle.is_valid({**event, "ignorable": marker})), marker


def _published() -> Any:
    from sessionspec.validator.lint import schema_set

    return schema_set((), "b150a551b8")


PUBLISHED = _published()
PUB_EXAMPLES = [example["event"] for entry in PUBLISHED.spec.events.values() for kind in ("valid", "invalid")
                for example in entry.get("examples", {}).get(kind, []) if "event" in example]
_SUMMARY = {"type": "compaction/summary", "seq": 4, "time": 9, "data": {
    "compactionId": "c1", "summary": [{"type": "text", "text": "s"}], "shadowedRange": {"start": 1, "end": 3},
    "shadowedSeqs": [1, 2, 3], "shadowedTokenCount": 10, "provider": "p", "model": "m"}}
_PLUGIN = {"type": "user/message", "seq": 5, "time": 9, "data": {
    "id": "m-5", "role": "user", "content": [{"type": "text", "text": "t"}], "source": {"kind": "plugin", "plugin": "compact"}},
    "surfaceOp": "append"}


def _published_accepts(value: Any, fast: Any = None) -> bool:
    fast = fast if fast is not None else PUBLISHED.fast_types
    try:
        raw = json_text.dumps_bytes(value)
        return bool(fast.encoder.encode(fast.decoder.decode(raw)) == raw)
    except (msgspec.MsgspecError, ValueError, RecursionError):
        return False


def test_an_if_that_requires_a_key_is_translated_by_forbidding_the_key():
    """`if: {required: [k]}` (compaction/summary's llmStreamCall, a plugin source's form) and `not: {required: [k]}` are
    not decided by a tag: the struct forbids `k`, so only the `else` applies (stricter: a value holding `k` takes the
    exact path). The plain values are accepted; a value with `k` is refused by the struct, whatever the oracle says."""
    fast = PUBLISHED.fast_types
    assert "compaction/summary" in fast.events, fast.skipped
    assert not any("plugin" in where for where in fast.skipped), fast.skipped
    oracle = PUBLISHED.event.oracle
    for value in (_SUMMARY, _PLUGIN):
        assert _published_accepts(value) and oracle.is_valid(value)
    cases = [("llmStreamCall", "x", None), ("llmStreamCall", "x", ("rawOutput", [{"type": "text", "text": "r"}]))]
    for key, v, extra in cases:
        value = copy.deepcopy(_SUMMARY)
        value["data"][key] = v
        if extra:
            value["data"][extra[0]] = extra[1]
        assert not _published_accepts(value)
    for source in ({"form": "snapshot"}, {"form": "snapshot", "sections": [{"name": "a", "text": "b"}]},
                   {"sections": [{"name": "a", "text": "b"}]}, {"form": "notice", "summary": "s"}, {"summary": "s"}):
        value = copy.deepcopy(_PLUGIN)
        value["data"]["source"].update(source)
        assert not _published_accepts(value), source


@given(st.sampled_from([_SUMMARY, _PLUGIN] + PUB_EXAMPLES), st.data())
def test_published_mutations_are_never_accepted_when_invalid(value, data):
    mutated = mutate(data.draw, value)
    if _published_accepts(mutated):
        assert PUBLISHED.event.oracle.is_valid(mutated), mutated


def _reversed(value: Any) -> Any:
    return {k: _reversed(v) for k, v in reversed(list(value.items()))} if type(value) is dict else value


def _in_order_accepts(value: Any, fast: Any) -> bool | None:
    """Whether the struct of `value`'s type in `value`'s own member order takes its text and writes it back (None:
    no struct in that order)."""
    from sessionspec.validator.mstypes import in_key_order

    try:
        raw = orjson.dumps(value)
    except TypeError:  # (orjson.JSONEncodeError) an integer wider than 64 bits
        return None
    cls = next((c for c, tag in fast.tags.items() if type(value) is dict and tag == value.get("type")), None)
    variant = in_key_order(cls, value) if cls is not None else None
    if variant is None:
        return None
    try:
        return bool(fast.encoder.encode(msgspec.json.decode(raw, type=variant)) == raw)
    except msgspec.MsgspecError:
        return False


def test_a_struct_in_another_member_order_accepts_what_the_struct_accepts():
    """`in_key_order`: the struct with its fields (and its struct fields') in a value's key order takes the value's text
    in that order only when the generated struct takes it in its own order (the same field types, bounds, tag and
    checks; a union member in another order is not reordered: refused), and writes it back; a value whose keys are not
    the struct's members (or whose tag is not first) has none."""
    from sessionspec.validator.mstypes import in_key_order

    for fast, schemas, values in ((FAST, SCHEMAS, EXAMPLES + turn_events() + vector_events()),
                                  (PUBLISHED.fast_types, PUBLISHED, PUB_EXAMPLES + [_SUMMARY, _PLUGIN])):
        taken = 0
        for value in values:
            if type(value) is not dict or type(value.get("data")) is not dict:
                continue
            turned = {**value, "data": _reversed(value["data"])}
            verdict = _in_order_accepts(turned, fast)
            if verdict is None:
                continue
            oracle = (schemas.row if value.get("type") in fast.rows else schemas.event).oracle
            assert oracle.is_valid(turned) or not verdict, turned  # never looser
            taken += verdict
        assert taken > 20
    cls = next(c for c, tag in FAST.tags.items() if tag == "step/start")
    assert in_key_order(cls, {"seq": 1, "type": "step/start", "time": 1, "data": {"turn": 1, "step": 1}}) is None
    assert in_key_order(cls, {"type": "step/start", "seq": 1, "time": 1, "data": {"turn": 1, "step": 1}, "x": 1}) is None
    assert in_key_order(cls, {"type": "step/start", "seq": 1, "time": 1, "data": {"turn": 1, "step": 1}}) is cls
    # the package's order of a published assistant message: its message before its usage
    fast = PUBLISHED.fast_types
    message = {"type": "assistant/message", "seq": 3, "time": 1, "data": {"turn": 1, "step": 1, "message": {
        "id": "m", "role": "assistant", "content": [], "source": {"kind": "model", "provider": "p", "model": "m"}},
        "usage": {"inputTokens": 1, "outputTokens": 2}}, "surfaceOp": "append"}
    assert not _published_accepts(message) and _in_order_accepts(message, fast) is True


@given(st.sampled_from([_SUMMARY, _PLUGIN] + PUB_EXAMPLES), st.data())
def test_mutations_in_another_member_order_are_never_accepted_when_invalid(value, data):
    mutated = mutate(data.draw, value)
    if type(mutated) is not dict or type(mutated.get("data")) is not dict:
        return
    turned = {**mutated, "data": _reversed(mutated["data"])}
    if _in_order_accepts(turned, PUBLISHED.fast_types):
        assert PUBLISHED.event.oracle.is_valid(turned), turned
