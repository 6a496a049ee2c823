"""Every protocol message has a JSON Schema, and real traffic fits the schemas."""

from __future__ import annotations

import json
from importlib import resources

import pytest
from jsonschema import Draft202012Validator
from sessionspec.conformance import protocol, wire
from sessionspec.conformance.adapter import ReferenceAdapter
from sessionspec.conformance.cases import load_corpus
from sessionspec.conformance.harness import Implementation


def _schema_files():
    root = resources.files("sessionspec.spec").joinpath("protocol")
    return [*root.iterdir(), *root.joinpath("ops").iterdir()]


def test_every_schema_is_valid_and_has_an_id_under_the_protocol_base():
    ids = set()
    for file in _schema_files():
        if not file.name.endswith(".json"):
            continue
        schema = json.loads(file.read_text(encoding="utf-8"))
        Draft202012Validator.check_schema(schema)
        assert schema["$id"].startswith(protocol.SCHEMA_BASE), file.name
        assert schema["$id"] not in ids
        ids.add(schema["$id"])


def test_every_op_has_a_schema_with_args_and_result_and_the_vocabularies_agree():
    common = json.loads(resources.files("sessionspec.spec").joinpath("protocol/common.json").read_text())
    assert common["$defs"]["opName"]["enum"] == list(protocol.OPS)
    assert common["$defs"]["capability"]["enum"] == list(protocol.CAPABILITIES)
    ops_dir = resources.files("sessionspec.spec").joinpath("protocol/ops")
    assert {f.name.removesuffix(".json") for f in ops_dir.iterdir()} == set(protocol.OPS)
    for op in protocol.OPS:
        defs = json.loads(ops_dir.joinpath(f"{op}.json").read_text())["$defs"]
        assert {"args", "result"} <= defs.keys(), op
    assert set(ReferenceAdapter().handlers) == set(protocol.OPS)


class Recorder:
    """An in-process connection that keeps every line that crosses it."""

    def __init__(self):
        self.adapter = ReferenceAdapter()
        self.lines = []

    def exchange(self, line, timeout):
        reply = wire.dumps(self.adapter.handle(wire.loads(line)))
        self.lines.append((line, reply))
        return reply

    def close(self):
        pass


def test_real_traffic_of_the_whole_corpus_fits_the_schemas():
    recorder = Recorder()
    impl = Implementation(lambda: recorder, check_schema=False)
    impl.start()
    for case in load_corpus():
        impl.request(case.op, case.args)
    impl.close()
    kinds = set()
    for request_line, reply_line in recorder.lines:
        request, reply = wire.loads(request_line), wire.loads(reply_line)
        protocol.validate_request(request)
        protocol.validate_reply(reply, request["op"])
        if reply["kind"] == "rejected" and "state" in reply:
            protocol.validate(reply["state"], f"ops/{request['op']}.json#/$defs/state")
        kinds.add(reply["kind"])
    assert kinds == {"result", "rejected"}
    assert wire.loads(recorder.lines[-1][0])["op"] == "stop"


@pytest.mark.parametrize(
    ("message", "schema", "where"),
    [
        ({"seq": 1, "kind": "rejected", "message": "no code"}, "reply.json", ""),
        ({"seq": -1, "kind": "result", "result": {}}, "reply.json", ""),
        ({"seq": 1, "kind": "finished"}, "reply.json", ""),
        ({"seq": 1, "op": "load"}, "request.json", ""),
        ({"seq": 1, "op": "teleport", "args": {}}, "request.json", "/op"),
        ({"protocolVersion": 1, "implementation": {"name": "x"}, "specRevision": "r", "capabilities": ["flying"]},
         "ops/start.json#/$defs/result", ""),
    ],
)
def test_malformed_messages_are_refused_with_a_location(message, schema, where):
    with pytest.raises(protocol.ProtocolViolation) as info:
        protocol.validate(message, schema)
    assert info.value.pointer.startswith(where)


def test_store_script_steps_are_checked_by_the_schema():
    with pytest.raises(protocol.ProtocolViolation):
        protocol.validate({"script": [{"do": "teleport"}]}, "ops/store.json#/$defs/args")
    protocol.validate({"script": [{"do": "create", "as": "s"}, {"do": "flush", "session": "s", "async": "p"},
                                  {"do": "await", "promise": "p"}]}, "ops/store.json#/$defs/args")
