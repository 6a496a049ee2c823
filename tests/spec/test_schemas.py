"""The JSON Schemas: metaschema validity, offline references, and the shapes the rules pin down."""

from __future__ import annotations

from collections.abc import Iterator
from importlib import resources
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from referencing import Registry
from referencing.exceptions import Unresolvable
from sessionspec.spec import ENVELOPE_ID, SCHEMA_BASE, SURFACE_TYPES, constants, load_spec
from sessionspec.spec.loader import json_pointer

SPEC = load_spec()
MAX = 9007199254740991
DRAFT = "https://json-schema.org/draft/2020-12/schema"
IDS = sorted(SPEC.schemas)


def S(path: str) -> str:
    return SCHEMA_BASE + path


def valid(path: str, instance: Any) -> bool:
    return bool(SPEC.validator(S(path)).is_valid(instance))


def paths(path: str, instance: Any) -> list[str]:
    return [json_pointer(e.absolute_path) for e in SPEC.validator(S(path)).iter_errors(instance)]


def refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                yield value
            else:
                yield from refs(value)
    elif isinstance(node, list):
        for item in node:
            yield from refs(item)


def event(type_: str, data: Any, **extra: Any) -> dict[str, Any]:
    return {"type": type_, "seq": 3, "time": 5, "data": data, **extra}


@pytest.mark.parametrize("schema_id", IDS)
def test_schema_is_valid_against_its_metaschema(schema_id: str) -> None:
    schema = SPEC.schemas[schema_id]
    assert schema["$schema"] == DRAFT
    Draft202012Validator.check_schema(schema)


def test_schema_ids_mirror_their_file_paths() -> None:
    root = resources.files("sessionspec.spec").joinpath("schemas")
    for schema_id, where in SPEC.schema_files.items():
        assert where.startswith("core/schemas/")
        rel = where.removeprefix("core/schemas/")
        assert schema_id == S(rel), where
        assert root.joinpath(rel).is_file()


def test_every_ref_resolves_offline() -> None:
    resolver = SPEC.registry.resolver()
    count = 0
    for schema_id, schema in SPEC.schemas.items():
        local = resolver.in_subresource(SPEC.registry[schema_id])
        for ref in refs(schema):
            local.lookup(ref)
            count += 1
    assert count > 100


def test_registry_never_retrieves_unknown_uris() -> None:
    assert isinstance(SPEC.registry, Registry)
    with pytest.raises(Unresolvable):
        SPEC.registry.resolver().lookup("https://sessionspec.dev/schema/not-there.json")


def test_safe_integers_are_spelled_exactly() -> None:
    safe = {k: v for k, v in SPEC.schemas[S("common/safe-int.json")].items() if not k.startswith("$") and k not in ("title", "description")}
    assert safe == {"type": "integer", "minimum": 0, "maximum": MAX}
    for value, ok in [(0, True), (MAX, True), (MAX + 1, False), (-1, False), (True, False), ("1", False), (1.5, False)]:
        assert valid("common/safe-int.json", value) is ok, value


def test_number_fields_are_plain_numbers() -> None:
    for event_type, entry in SPEC.events.items():
        schema = SPEC.schemas[entry["payloadSchema"]]
        for name in ("turn", "step"):
            if name in schema.get("properties", {}):
                assert schema["properties"][name]["type"] == "number", (event_type, name)
    assert valid("payload/turn/start.json", {"turn": 1.5, "trigger": {"kind": "retry"}})


# -- envelope ------------------------------------------------------------------------------------


def test_envelope_keys_and_surface_types_match_the_constants() -> None:
    envelope = SPEC.schemas[ENVELOPE_ID]
    assert list(envelope["properties"]) == constants()["envelopeKeys"]
    assert envelope["additionalProperties"] is False
    assert set(envelope["if"]["properties"]["type"]["enum"]) == SURFACE_TYPES


@pytest.mark.req("SEED-3")
def test_seed3_envelope_is_closed_and_typed() -> None:
    assert paths("envelope/session-event.json", event("plan/mode", {"active": True}, extra=1)) == [""]
    assert paths("envelope/session-event.json", {"type": "plan/mode", "seq": 0, "time": 0}) == [""]
    assert paths("envelope/session-event.json", event("plan/mode", None, seq=-1)) == ["/seq"]
    assert paths("envelope/session-event.json", event("plan/mode", None, time=MAX + 1)) == ["/time"]
    assert paths("envelope/session-event.json", event("plan/mode", None, seq=True)) == ["/seq"]
    assert paths("envelope/session-event.json", {**event("x/y", None), "type": 7}) == ["/type"]
    assert valid("envelope/session-event.json", event("x/y", None))


@pytest.mark.req("APPEND-5")
@pytest.mark.parametrize("type_", sorted(SURFACE_TYPES))
def test_append5_surface_types_require_surface_op(type_: str) -> None:
    assert paths("envelope/session-event.json", event(type_, {})) == [""]
    assert valid("envelope/session-event.json", event(type_, {}, surfaceOp="append"))


@pytest.mark.req("SURF-3")
def test_surf3_log_only_types_forbid_surface_metadata() -> None:
    assert set(paths("envelope/session-event.json", event("turn/start", {}, surfaceOp=None))) == {"/surfaceOp"}
    assert paths("envelope/session-event.json", event("turn/start", {}, sourceEventSeqs=[1])) == ["/sourceEventSeqs"]
    assert paths("envelope/session-event.json", event("context/message", {}, surfaceOp="append")) == ["/surfaceOp"]


@pytest.mark.req("SURF-7")
def test_surf7_empty_sources_only_on_assistant_message() -> None:
    assert valid("envelope/session-event.json", event("assistant/message", {}, surfaceOp="append", sourceEventSeqs=[]))
    for type_ in sorted(SURFACE_TYPES - {"assistant/message"}):
        assert paths("envelope/session-event.json", event(type_, {}, surfaceOp="append", sourceEventSeqs=[])) == ["/sourceEventSeqs"]
    assert paths("envelope/session-event.json", event("user/message", {}, surfaceOp="append", sourceEventSeqs=[1, 1])) == ["/sourceEventSeqs"]
    assert paths("envelope/session-event.json", event("user/message", {}, surfaceOp="append", sourceEventSeqs=[-1])) == ["/sourceEventSeqs/0"]


@pytest.mark.req("SURF-3")
def test_surf3_surface_op_forms() -> None:
    assert valid("envelope/surface-op.json", "append")
    assert valid("envelope/surface-op.json", {"op": "replace", "start": 9, "end": 2})
    for bad in ["prepend", None, 1, [], {"op": "replace", "start": 1}, {"op": "replace", "start": 1, "end": 2, "x": 0},
                {"op": "insert", "start": 1, "end": 1}, {"op": "replace", "start": -1, "end": 2}]:
        assert not valid("envelope/surface-op.json", bad), bad


def test_surface_intent_shape() -> None:
    assert valid("envelope/surface-intent.json", {"surfaceOp": "append"})
    assert valid("envelope/surface-intent.json", {"surfaceOp": "append", "sourceEventSeqs": [0, 2]})
    assert not valid("envelope/surface-intent.json", {"sourceEventSeqs": [0]})
    assert not valid("envelope/surface-intent.json", {"surfaceOp": "append", "seqs": []})


# -- nested types -------------------------------------------------------------------------------------


def test_content_block_is_open_but_checks_known_tags() -> None:
    assert valid("type/content-block.json", {"type": "image", "data": "..."})
    assert valid("type/content-block.json", {"type": "tool-result", "toolCallId": "c", "content": [{"type": "text", "text": "x"}]})
    assert paths("type/content-block.json", {"type": "tool-result", "toolCallId": "c", "content": [{"type": "text"}]}) == ["/content/0"]
    assert not valid("type/content-block.json", {"type": "tool-call", "id": "c", "name": "n", "arguments": {}})
    assert not valid("type/content-block.json", {"text": "no tag"})


def test_message_source_user_kind_allows_the_rpc_variant_only() -> None:
    assert valid("type/message-source.json", {"kind": "user"})
    assert valid("type/message-source.json", {"kind": "user", "rpcId": "r1"})
    assert not valid("type/message-source.json", {"kind": "user", "other": 1})
    assert valid("type/message-source.json", {"kind": "goal", "goalId": "g", "revision": 2, "round": 0,
                                              "change": {"kind": "goal/change", "version": 1, "operation": "clear",
                                                         "cleared": {"id": "g", "revision": 1}, "clearedAt": 5}})
    assert not valid("type/message-source.json", {"kind": "goal", "goalId": "g", "revision": 2, "round": 0,
                                                  "change": {"kind": "goal/change", "version": 1, "operation": "clear", "goal": {}}})


def test_stream_chunk_is_closed() -> None:
    assert paths("type/stream-chunk.json", {"type": "image-delta", "index": 0}) == ["/type"]
    assert valid("type/stream-chunk.json", {"type": "block-start", "index": 0, "blockType": "image"})
    assert valid("type/stream-chunk.json", {"type": "finish", "reason": {"kind": "error", "failure": {"message": "m", "code": "SERVER"}}})
    assert not valid("type/stream-chunk.json", {"type": "finish", "reason": {"kind": "error"}})


@pytest.mark.req("SEED-7")
def test_seed7_turn_end_reason_aborted_has_only_kind() -> None:
    assert valid("type/turn-end-reason.json", {"kind": "aborted"})
    assert not valid("type/turn-end-reason.json", {"kind": "aborted", "reason": "x"})
    assert valid("type/turn-end-reason.json", {"kind": "rejected", "reason": "merged kinds pass"})


def test_turn_end_reason_error_shapes_are_exclusive() -> None:
    failure = {"message": "m", "code": "RATE_LIMIT"}
    assert valid("type/turn-end-reason.json", {"kind": "error", "step": 1, "failure": failure})
    assert valid("type/turn-end-reason.json", {"kind": "error", "step": 1, "message": "m"})
    assert not valid("type/turn-end-reason.json", {"kind": "error", "step": 1, "failure": failure, "code": "X"})
    assert not valid("type/turn-end-reason.json", {"kind": "error", "step": 1})


def test_turn_trigger_variants_and_openness() -> None:
    assert valid("type/turn-trigger.json", {"kind": "session-title"})
    assert valid("type/turn-trigger.json", {"kind": "injection", "source": {"kind": "plugin", "plugin": "p"}})
    assert not valid("type/turn-trigger.json", {"kind": "retry", "source": {"kind": "user"}})
    assert valid("type/turn-trigger.json", {"kind": "continuation-like-plugin-kind"})


@pytest.mark.req("SEED-5")
def test_seed5_call_config_needs_provider_and_model() -> None:
    assert valid("type/llm-call-config.json", {"provider": "p", "model": "m", "stop": ["x"]})
    assert paths("type/llm-call-config.json", {"provider": "", "model": "m"}) == ["/provider"]
    assert paths("type/llm-call-config.json", {"provider": "p"}) == [""]


@pytest.mark.req("SEED-8")
def test_seed8_fallback_is_not_a_request_header_reason() -> None:
    assert [valid("type/request-header-reason.json", r) for r in constants()["requestHeaderReasons"]] == [True] * 3
    assert not valid("type/request-header-reason.json", "fallback")


def test_derived_message_shape() -> None:
    assert valid("type/message.json", {"role": "assistant", "content": [], "provenance": {"provider": "p", "model": "m"}})
    assert valid("type/message.json", {"role": "user", "content": [{"type": "tool-result", "toolCallId": "c", "content": [], "isError": False}]})
    assert not valid("type/message.json", {"role": "tool", "content": []})


# -- session metadata and storage -----------------------------------------------------------------


@pytest.mark.req("HDR-9")
def test_hdr9_session_header_keeps_unknown_keys() -> None:
    assert valid("session/session-header.json", {"version": 0, "id": "s", "createdAt": 1, "team": "x"})
    assert paths("session/session-header.json", {"version": 1, "id": "s", "createdAt": 1}) == ["/version"]
    assert paths("session/session-header.json", {"version": 0, "id": "s", "createdAt": 1, "seedLength": -1}) == ["/seedLength"]


@pytest.mark.req("JSONL-1")
def test_jsonl1_header_line_keys_in_written_order() -> None:
    schema = SPEC.schemas[S("storage/jsonl-header.json")]
    assert list(schema["properties"]) == constants()["jsonl"]["headerKeyOrder"]
    assert schema["properties"]["type"]["const"] == constants()["jsonl"]["headerLineType"]


@pytest.mark.req("JSONL-2")
def test_jsonl2_header_line_requires_delegation_depth() -> None:
    line = {"type": "session", "version": 0, "id": "s", "createdAt": 5, "delegationDepth": 0}
    assert valid("storage/jsonl-header.json", line)
    assert paths("storage/jsonl-header.json", {k: v for k, v in line.items() if k != "delegationDepth"}) == [""]
    assert paths("storage/jsonl-header.json", {**line, "createdAt": -1}) == ["/createdAt"]


def test_chunk_row_keys_match_the_constants() -> None:
    rows = constants()["chunkRows"]["rows"]
    for tag, facts in rows.items():
        schema = SPEC.schemas[S(f"storage/{tag}.json")]
        data = schema["properties"]["data"]
        assert list(data["properties"]) == facts["dataKeys"]
        assert set(data["required"]) == set(facts["dataKeys"]) - set(facts.get("optionalDataKeys", []))
        assert set(schema["properties"]) == {"type", "seq0", "time0", "data"}


@pytest.mark.req("CHUNK-9")
def test_chunk9_rows_are_exact() -> None:
    row = {"type": "tool-call-chunks", "seq0": 4, "time0": -3, "data": {"turn": 1, "step": 1, "index": 0, "dt": [-2, 5], "id": "c", "args": ["{", "}", ""]}}
    assert valid("storage/storage-record.json", row)
    assert valid("storage/storage-record.json", {**row, "data": {**row["data"], "name": "read"}})
    assert paths("storage/storage-record.json", {**row, "surfaceOp": "append"}) == [""]
    assert paths("storage/storage-record.json", {**row, "data": {**row["data"], "args": []}}) == ["/data/args"]
    assert paths("storage/storage-record.json", {**row, "seq0": -1}) == ["/seq0"]
    assert paths("storage/storage-record.json", {**row, "data": {**row["data"], "texts": ["a"]}}) == ["/data"]


def test_storage_record_falls_back_to_the_event_envelope() -> None:
    assert valid("storage/storage-record.json", event("assistant/chunk", {"turn": 1, "step": 1, "chunk": {"type": "text-delta", "index": 0, "text": "a"}}))
    assert not valid("storage/storage-record.json", {"type": "session", "version": 0})
    assert not valid("storage/storage-record.json", None)


# -- data files with their own schemas --------------------------------------------------------------


def test_openness_file_validates_and_examples_match_openness() -> None:
    import json

    doc = json.loads(resources.files("sessionspec.spec").joinpath("openness.json").read_text(encoding="utf-8"))
    assert list(SPEC.validator(S("meta/openness.json")).iter_errors(doc)) == []
    kinds = {s["openness"] for s in SPEC.openness}
    assert kinds == {"open", "closed"}
    for subject in SPEC.openness:
        for schema_id in subject["schemas"]:
            assert schema_id in SPEC.schemas, schema_id
        accepted = SPEC.validator(subject["schemas"][0]).is_valid(subject["unknownExample"])
        assert accepted is (subject["openness"] == "open"), subject["subject"]


def test_openness_names_the_required_subjects() -> None:
    by_subject = {s["subject"]: s["openness"] for s in SPEC.openness}
    for name in ["ContentBlock types", "MessageSource kinds", "TurnTrigger kinds", "TurnEndReason kinds",
                 "StreamChunk block-start blockType"]:
        assert by_subject[name] == "open"
    assert by_subject["Event envelope keys"] == "closed"
    payloads = next(s for s in SPEC.openness if s["subject"].startswith("Payload objects"))
    assert set(payloads["schemas"]) == {e["payloadSchema"] for e in SPEC.events.values()}


def test_service_events_file_validates_and_lists_the_four_events() -> None:
    doc = SPEC.service_events
    assert list(SPEC.validator(S("meta/service-events.json")).iter_errors(doc)) == []
    modes = {e["name"]: e["mode"] for e in doc["events"]}
    assert modes == {"session/created": "emit", "session/disposed": "emit", "session/event": "emit", "session/flush": "parallel"}
    assert [a["name"] for a in doc["events"][2]["arguments"]] == ["session", "event"]


# -- DEC-18: constraints stricter than the upstream types, each backed by its owner's run-time check --


def _at(instance: Any, pointer: str, value: Any) -> Any:
    """A deep copy of ``instance`` with the member at the JSON pointer ``pointer`` set to ``value``."""
    import copy

    out = copy.deepcopy(instance)
    *parents, last = pointer.strip("/").split("/")
    node = out
    for part in parents:
        node = node[int(part)] if isinstance(node, list) else node[part]
    node[int(last) if isinstance(node, list) else last] = value
    return out


_GOAL = {"id": "g", "revision": 1, "objective": "ship it", "phase": "active", "maxGoalRounds": 3}
_REFERENCE = {"sessionId": "s0", "label": "earlier", "capturedThroughSeq": 9, "compacted": False, "originalMessages": 4,
              "retainedMessages": 3, "omittedMessages": 1, "omittedBytes": 120, "truncated": True, "inputIndex": 0}
DEC_18_INTEGERS = [
    ("type/message-source/goal.json", {"kind": "goal", "goalId": "g", "revision": 2, "round": 1}, ["/revision", "/round"]),
    ("type/goal-change-meta/snapshot.json",
     {"kind": "goal/change", "version": 1, "operation": "create", "goal": _GOAL, "roundsStarted": 0, "createdAt": 5, "updatedAt": 6},
     ["/goal/revision", "/goal/maxGoalRounds", "/roundsStarted", "/createdAt", "/updatedAt"]),
    ("type/goal-change-meta/clear.json",
     {"kind": "goal/change", "version": 1, "operation": "clear", "cleared": {"id": "g", "revision": 2}, "clearedAt": 7},
     ["/cleared/revision", "/clearedAt"]),
    ("type/message-source/session-reference.json", {"kind": "session-reference", "version": 1, "references": [_REFERENCE]},
     [f"/references/0/{name}" for name in ("capturedThroughSeq", "originalMessages", "retainedMessages", "omittedMessages",
                                           "omittedBytes", "inputIndex")]),
]
"""The goal fields and session-reference counters DEC-18 keeps integer where the types say `number`."""


@pytest.mark.parametrize("rid", ["2f74ac98ba", "b150a551b8"])
def test_dec_18_integers_refuse_a_fraction_at_every_revision(rid: str) -> None:
    spec = load_spec(revision=rid)
    assert "DEC-18" in spec.decisions
    for path, instance, pointers in DEC_18_INTEGERS:
        validator = spec.validator(S(path))
        assert validator.is_valid(instance), path
        for pointer in pointers:
            assert [json_pointer(e.absolute_path) for e in validator.iter_errors(_at(instance, pointer, 1.5))] == [pointer], (path, pointer)


@pytest.mark.parametrize("rid", ["2f74ac98ba", "b150a551b8"])
def test_dec_18_title_and_title_request_provenance_are_non_empty_at_every_revision(rid: str) -> None:
    spec = load_spec(revision=rid)
    validate = spec.event_validator()
    title = spec.events["session/title"]["examples"]["valid"][0]["event"]
    # the pinned message carries a provenance; the published one is identified, its model in its source
    message, where = ({"role": "assistant", "content": [], "provenance": {"provider": "p", "model": "m"}}, "provenance")
    if rid == "b150a551b8":
        message, where = ({"id": "m1", "role": "assistant", "content": [],
                           "source": {"kind": "model", "provider": "p", "model": "m"}}, "source")
    request = _at(spec.events["session/title-llm-request"]["examples"]["valid"][0]["event"], "/data/messages/0", message)
    assert validate.is_valid(title) and validate.is_valid(request)
    assert not validate.is_valid(_at(title, "/data/title", ""))
    for key in ("provider", "model"):
        assert not validate.is_valid(_at(request, f"/data/messages/0/{where}/{key}", "")), key
