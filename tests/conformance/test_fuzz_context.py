"""Fuzz expectation entries match precisely: context tags, exact codes (#27, PERSIST-12).

The package's stale-cursor defect (PERSIST-12: a backend appends through its in-memory cursor after another
writer changed the stored log) shows with the code PERSIST-3 has too (`PERSIST_SEQ_CONTINUE`), so an entry
by rule and code alone would also set aside a real PERSIST-3 difference. The persistence machine tags a
difference `stale-view` when a writer appended through a stale view at or before it
(`persistence_script.stale_steps`), and the Node expectation file's entry asks for that tag. An append the
reference refuses because reading the stored log's header line refuses it (a header create accepted without
`version`) is tagged `unreadable-log` (`persistence_script.unreadable_steps`): the same class of defect, the
package appends without reading what is stored.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest
from sessionspec.conformance import machines
from sessionspec.conformance.compare import judge
from sessionspec.conformance.expectations import FuzzExpectation, load_expectations
from sessionspec.conformance.harness import connector_for
from sessionspec.conformance.persistence_script import (
    DEEP_VALUE,
    STALE_VIEW,
    UNREADABLE_LOG,
    difference_context,
    stale_steps,
    unreadable_steps,
)
from sessionspec.conformance.runner import start_implementation

ROOT = Path(__file__).resolve().parents[2]
VECTORS = ROOT / "conformance" / "vectors" / "persistence.json"
NODE_EXPECT = ROOT / "conformance" / "adapters" / "node-dsh-session" / "expectations.json"
UPSTREAM_EXPECT = ROOT / "conformance" / "adapters" / "upstream-source" / "expectations.json"
HEADER = {"version": 0, "id": "s1", "createdAt": 1000, "cwd": "/work"}
TURN = [{"type": "turn/start", "seq": 0, "time": 0, "data": {"turn": 1}},
        {"type": "turn/end", "seq": 1, "time": 0, "data": {"turn": 1, "reason": {"kind": "completed"}}}]


def _cases() -> list[dict[str, Any]]:
    return [c for c in json.loads(VECTORS.read_text(encoding="utf-8"))["cases"] if c["input"]["op"] == "persistence" and "result" in c["expect"]]


def _signature(args: dict[str, Any], expected: dict[str, Any], actual: dict[str, Any]) -> dict[str, Any]:
    verdict = judge("persistence", args, expected, actual)
    assert verdict.outcome == "failed"
    return machines._signature("persistence", "persistence.script", "persistence", expected, actual, verdict, {},
                               args)


def _reference_trace(args: dict[str, Any], revision: str = "b150a551b8") -> dict[str, Any]:
    from sessionspec.conformance.harness import Implementation, InProcessConnection

    reference = Implementation(lambda: InProcessConnection(revision=revision), check_schema=False)
    reference.start()
    try:
        reply = reference.request("persistence", args)
    finally:
        reference.close()
    assert reply["kind"] == "result"
    return {"result": {"trace": [{k: v for k, v in e.items() if k != "message"} | (
        {"rejected": {"code": e["rejected"]["code"]}} if "rejected" in e else {}) for e in reply["result"]["trace"]]}}


@pytest.mark.req("PERSIST-12")
def test_only_the_stale_cursor_vectors_have_stale_appends() -> None:
    """Of the persistence vectors, the appends run through a stale view are exactly those of the
    'after a second backend appended' vectors (one per backend form): steps 3 and 4, the first writer's."""
    stale = {c["id"]: stale_steps(c["input"]["args"]["steps"], c["expect"]["result"]["trace"]) for c in _cases()}
    hit = {cid: s for cid, s in stale.items() if s}
    assert hit == {cid: {3: "s1", 4: "s1"} for cid in ("56d27d2f48a666bb", "01ed5c8ffa932c81", "0b4c29fe6f1eb86e")}


@pytest.mark.parametrize(("fault", "stale"), [
    ({"do": "append", "id": "s1", "events": [{**TURN[0], "seq": 2, "data": {"turn": 2}}], "writer": "second"}, True),
    ({"do": "truncate", "id": "s1", "drop": 150}, True),
    ({"do": "tear", "id": "s1", "base64": "eyJ0"}, True),
    ({"do": "inspect", "id": "s1", "writer": "second"}, False),  # a read changes nothing
    ({"do": "load", "id": "s1", "writer": "second"}, False),  # a load with nothing to repair writes nothing
    ({"do": "reopen"}, False),  # a fresh backend adopts before it appends
])
def test_a_view_goes_stale_when_the_stored_log_changes_behind_it(fault: dict[str, Any], stale: bool) -> None:
    steps = [{"do": "create", "header": HEADER}, {"do": "append", "id": "s1", "events": TURN}, fault,
             {"do": "append", "id": "s1", "events": [{**TURN[0], "seq": 2, "data": {"turn": 2}}]}]
    trace = _reference_trace({"backend": "jsonl", "steps": steps})["result"]["trace"]
    assert (3 in stale_steps(steps, trace)) is stale
    context = difference_context({"steps": steps}, trace, "/trace/3/ok")
    assert context[0] == "do:append" and (STALE_VIEW in context) is stale


def test_an_adoption_that_closes_an_open_turn_leaves_the_other_writer_stale() -> None:
    """The second backend's adoption writes the open turn's closers even when its batch is then refused: the
    first backend's next append is a stale one (its cursor does not count the closers)."""
    steps = [{"do": "create", "header": HEADER}, {"do": "append", "id": "s1", "events": TURN[:1]},
             {"do": "append", "id": "s1", "events": [{**TURN[0], "seq": 1}], "writer": "second"},
             {"do": "append", "id": "s1", "events": [{**TURN[1], "seq": 1}]}]
    trace = _reference_trace({"backend": "jsonl", "steps": steps})["result"]["trace"]
    assert trace[2]["rejected"]["code"] == "PERSIST_SEQ_CONTINUE"  # the closer took seq 1
    assert stale_steps(steps, trace) == {3: "s1"}


def test_a_crash_leaves_its_own_writer_stale() -> None:
    """The crash step's torn tail is written behind the writer's cursor: its next append is a stale one."""
    steps = [{"do": "create", "header": HEADER}, {"do": "crash", "id": "s1", "events": TURN},
             {"do": "append", "id": "s1", "events": [{**TURN[0], "seq": 2, "data": {"turn": 2}}]}]
    trace = _reference_trace({"backend": "jsonl", "steps": steps})["result"]["trace"]
    assert stale_steps(steps, trace) == {2: "s1"}


def _stale_cursor_case() -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """Vector 56d27d2f48a666bb with the package's reply as docs/node-results.md records it (defect 9): the
    first backend accepts the repeated seq 2 and refuses the true next seq 3."""
    case = next(c for c in _cases() if c["id"] == "56d27d2f48a666bb")
    args, expected = case["input"]["args"], case["expect"]
    trace = json.loads(json.dumps(expected["result"]["trace"]))
    trace[3] = {"at": "3", "do": "append", "ok": None}
    trace[4] = {"at": "4", "do": "append", "rejected": {"code": "PERSIST_SEQ_CONTINUE", "message": "m"}}
    return args, expected, {"kind": "result", "result": {"trace": trace}}


def _persist3_case() -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """One writer, a batch restating a stored seq (PERSIST-3), accepted: the same rule, op, codes and
    pointer class as the stale cursor's first difference, and no stale view."""
    args = {"backend": "jsonl", "steps": [{"do": "create", "header": HEADER}, {"do": "append", "id": "s1", "events": TURN},
                                          {"do": "append", "id": "s1", "events": TURN[1:]}]}
    expected = _reference_trace(args)
    assert expected["result"]["trace"][2]["rejected"]["code"] == "PERSIST_SEQ_CONTINUE"
    trace = [*expected["result"]["trace"][:2], {"at": "2", "do": "append", "ok": None}]
    return args, expected, {"kind": "result", "result": {"trace": trace}}


def test_the_node_entry_sets_aside_the_stale_cursor_and_not_a_persist3_difference() -> None:
    stale_sig = _signature(*_stale_cursor_case())
    persist3_sig = _signature(*_persist3_case())
    assert stale_sig["context"] == ["do:append", STALE_VIEW] and persist3_sig["context"] == ["do:append"]
    # rule, op, codes and pointer alone cannot tell them apart: the context does
    fields = ("machine", "rule", "op", "expectedCode", "actualCode", "pointer")
    assert {k: stale_sig[k] for k in fields} == {k: persist3_sig[k] for k in fields}
    assert machines.failure_key(stale_sig) != machines.failure_key(persist3_sig)
    entries = [k for k in load_expectations(NODE_EXPECT).fuzz if k.context]
    assert entries, "the Node expectation file lists the stale-cursor defect by context"
    assert any(k.matches(stale_sig) for k in entries)
    assert not any(k.matches(persist3_sig) for k in load_expectations(NODE_EXPECT).fuzz)


def test_exact_codes_match_one_side_only() -> None:
    signature = {"machine": "persistence", "expectedCode": "PERSIST_SEQ_CONTINUE", "actualCode": None}
    assert FuzzExpectation("r", code="PERSIST_SEQ_CONTINUE").matches(signature)
    assert FuzzExpectation("r", expectedCode="PERSIST_SEQ_CONTINUE").matches(signature)
    assert not FuzzExpectation("r", actualCode="PERSIST_SEQ_CONTINUE").matches(signature)
    assert not FuzzExpectation("r", context=(STALE_VIEW,)).matches(signature)
    assert FuzzExpectation("r", context=(STALE_VIEW,)).matches({**signature, "context": [STALE_VIEW]})


def test_the_expectation_file_reads_context_and_exact_codes(tmp_path: Path) -> None:
    path = tmp_path / "known.json"
    path.write_text(json.dumps({"implementation": "x", "failures": [], "fuzz": [
        {"rule": "persistence.script", "context": ["stale-view"], "expectedCode": "A", "reason": "r"}]}))
    [entry] = load_expectations(path).fuzz
    assert entry.context == ("stale-view",) and entry.expectedCode == "A"
    assert "context=stale-view" in entry.describe()
    path.write_text(json.dumps({"implementation": "x", "failures": [], "fuzz": [
        {"rule": "persistence.script", "context": ["no-such-tag"], "reason": "r"}]}))
    with pytest.raises(ValueError, match="context"):
        load_expectations(path)


def test_an_unreached_entry_held_by_a_test_does_not_fail_a_deep_run() -> None:
    """A rare difference (LIVE-4's failed disposal) is held by the test its entry names: a deep run that does
    not reach it lists it, and fails only on unreached entries that no test holds (CLI and pytest plugin)."""
    from collections import Counter

    from sessionspec.conformance.fuzz import FuzzResult
    from sessionspec.conformance.pytest_plugin import _unmatched

    held = FuzzExpectation(reason="(b) rare", machine="persistence", heldBy="tests/x.py::test_y")
    bare = FuzzExpectation(reason="(b) common", machine="persistence")
    unmatched = [held.describe(), bare.describe()]
    deep = FuzzResult([], unmatched=unmatched, strict=True, held=[held.describe()])
    assert len(deep.problems) == 1 and "common" in deep.problems[0] and "heldBy=tests/x.py::test_y" in held.describe()
    assert FuzzResult([], unmatched=unmatched, strict=False, held=[held.describe()]).problems == []
    stale = _unmatched([held, bare], Counter(), 100, lambda k: True)
    assert len(stale) == 1 and "common" in stale[0]


@pytest.mark.parametrize("adapter", ["node-dsh-session", "upstream-source"])
def test_every_held_by_names_a_test_of_this_project(adapter: str) -> None:
    """An entry's ``heldBy`` is a test function that exists (what holds the difference cannot go missing)."""
    import ast

    path = ROOT / "conformance" / "adapters" / adapter / "expectations.json"
    for entry in load_expectations(path).fuzz:
        if entry.heldBy is None:
            continue
        file, _, name = entry.heldBy.partition("::")
        tree = ast.parse((ROOT / file).read_text(encoding="utf-8"))
        assert name in {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}, entry.heldBy


@pytest.fixture(scope="module")
def npm_command(node_adapter_dir: Path) -> str:
    return shlex.join(["node", str(node_adapter_dir / "adapter.mjs")])


def _differs_on(command: str, op: str, rule: str, args: dict[str, Any], expected: dict[str, Any]
                ) -> tuple[dict[str, Any], dict[str, Any]]:
    """The real implementation's reply to one request and the machine signature of how it differs from
    ``expected`` (the reference's), as a fuzz run would key it; the request must differ."""
    impl = start_implementation(connector_for(command), 60.0)
    try:
        actual = impl.request(op, args)
        code_map = impl.code_map
    finally:
        impl.close()
    verdict = judge(op, args, expected, actual, code_map=code_map)
    assert verdict.outcome == "failed"
    return actual, machines._signature("persistence", rule, op, expected, actual, verdict, code_map, args)


def test_on_the_package_the_stale_cursor_vector_is_set_aside_by_the_entry(npm_command: str) -> None:
    """PERSIST-12 on the package: its reply to vector 56d27d2f48a666bb carries the tag and the entry
    matches it (the package, not a recorded reply)."""
    case = next(c for c in _cases() if c["id"] == "56d27d2f48a666bb")
    _, signature = _differs_on(npm_command, "persistence", "persistence.script", case["input"]["args"], case["expect"])
    assert STALE_VIEW in signature["context"]
    assert any(k.matches(signature) for k in load_expectations(NODE_EXPECT).fuzz if k.context)


def test_on_the_package_a_failed_disposal_is_set_aside_only_at_its_dispose_step(npm_command: str) -> None:
    """LIVE-4 (docs/node-results.md, Fuzzing): the package's disposal resolves after its drain failed; its entry matches the
    difference at the `dispose` step (context `do:dispose`) and not a flush's difference of the same codes."""
    args = {"backend": "jsonl", "steps": [{"do": "create", "id": "l"},
                                          {"do": "append", "id": "l", "type": "turn/start", "data": {"turn": 1}},
                                          {"do": "fail-writes", "count": 2}, {"do": "dispose"}]}
    from sessionspec.conformance.harness import Implementation, InProcessConnection

    reference = Implementation(lambda: InProcessConnection(revision="b150a551b8"), check_schema=False)
    reference.start()
    impl = start_implementation(connector_for(npm_command), 60.0)
    try:
        expected = machines._expectation(reference.request("live", args), "live", args)
        actual = impl.request("live", args)
        code_map = impl.code_map
    finally:
        impl.close()
        reference.close()
    verdict = judge("live", args, expected, actual, code_map=code_map)
    assert verdict.outcome == "failed"
    signature = machines._signature("persistence", "persistence.live", "live", expected, actual, verdict, code_map,
                                    args)
    assert signature["context"] == ["do:dispose"] and signature["pointer"] == "/trace/*/ok"
    assert expected["result"]["trace"][3]["rejected"]["code"] == "SCRIPTED" and "ok" in actual["result"]["trace"][3]
    known = load_expectations(NODE_EXPECT).fuzz
    assert any(k.matches(signature) for k in known)
    assert not any(k.matches({**signature, "context": ["do:flush"]}) for k in known)


@pytest.mark.req("LIVE-4")
@pytest.mark.parametrize("revision", ["2f74ac98ba", "b150a551b8"])
def test_the_reference_disposal_rejects_when_its_drain_fails(revision: str) -> None:
    """LIVE-4: a drain that fails makes the disposal reject with its failure (never a silent loss)."""
    args = {"backend": "jsonl", "steps": [{"do": "create", "id": "l"},
                                          {"do": "append", "id": "l", "type": "turn/start", "data": {"turn": 1}},
                                          {"do": "fail-writes", "count": 2}, {"do": "dispose"}, {"do": "stored"}]}
    from sessionspec.conformance.harness import Implementation, InProcessConnection

    reference = Implementation(lambda: InProcessConnection(revision=revision), check_schema=False)
    reference.start()
    try:
        trace = reference.request("live", args)["result"]["trace"]
    finally:
        reference.close()
    assert trace[3]["rejected"]["code"] == "SCRIPTED"
    assert trace[4]["ok"] == {"sessions": {}}


def _unreadable_case() -> tuple[dict[str, Any], dict[str, Any]]:
    """A session created with a header without `version` (create accepts it as it is, PERSIST-10; reading
    refuses it, JSONL-2), then two appends: the reference's second append reads the stored log and is refused."""
    header = {k: v for k, v in HEADER.items() if k != "version"}
    args = {"backend": "jsonl", "steps": [{"do": "create", "header": header}, {"do": "append", "id": "s1", "events": TURN[:1]},
                                          {"do": "append", "id": "s1", "events": TURN[1:]}]}
    return args, _reference_trace(args)


@pytest.mark.req("PERSIST-12")
def test_an_append_the_reader_refuses_is_tagged_unreadable_log_and_a_persist3_difference_is_not() -> None:
    args, expected = _unreadable_case()
    trace = expected["result"]["trace"]
    assert "ok" in trace[1] and trace[2]["rejected"]["code"] == "JSONL_BAD_HEADER"
    assert unreadable_steps(args["steps"], trace) == {2: "s1"} and not stale_steps(args["steps"], trace)
    assert difference_context(args, trace, "/trace/2/ok") == ["do:append", UNREADABLE_LOG]
    assert UNREADABLE_LOG not in difference_context(args, trace, "/trace/1/ok")  # before the refused append
    persist3_args, persist3_expected, _ = _persist3_case()
    persist3_trace = persist3_expected["result"]["trace"]
    assert not unreadable_steps(persist3_args["steps"], persist3_trace)
    assert UNREADABLE_LOG not in difference_context(persist3_args, persist3_trace, "/trace/2/ok")
    for path in (NODE_EXPECT, UPSTREAM_EXPECT):
        entries = [k for k in load_expectations(path).fuzz if k.context and UNREADABLE_LOG in k.context]
        assert entries, f"{path.name} lists the unreadable-log difference"
        assert not any(k.matches(_signature(*_persist3_case())) for k in entries)


def test_on_the_package_an_append_to_an_unreadable_log_is_set_aside_by_its_entry(npm_command: str) -> None:
    """PERSIST-12 on the package: it accepts the append the reference refuses (it appends without reading the stored log):
    the difference carries `unreadable-log` and the Node file's entry of that tag matches it."""
    _assert_unreadable_log_entry(npm_command, NODE_EXPECT)


def test_on_the_source_an_append_to_an_unreadable_log_is_set_aside_by_its_entry(source_command: str) -> None:
    """PERSIST-12 on upstream's source at 2f74ac98ba (its build, when present): the same difference, matched by the
    source's entry."""
    _assert_unreadable_log_entry(source_command, UPSTREAM_EXPECT)


def _assert_unreadable_log_entry(command: str, expectations: Path) -> None:
    actual, signature = _differs_on(command, "persistence", "persistence.script", *_unreadable_case())
    assert "ok" in actual["result"]["trace"][2]
    assert signature["context"] == ["do:append", UNREADABLE_LOG]
    known = load_expectations(expectations).fuzz
    assert any(k.matches(signature) for k in known if k.context == (UNREADABLE_LOG,))
    assert not any(k.matches({**signature, "context": ["do:append"]}) for k in known)


def _deep_case(levels: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """A live session on the zstd backend that appends a tool/code-dispatch whose arguments nest ``levels``
    deep (append accepts it, DEC-16), flushes and reads the store (the persistence machine's ``deep`` kind)."""
    from sessionspec.conformance.harness import Implementation, InProcessConnection

    arguments: Any = 1
    for _ in range(levels):
        arguments = [arguments]
    data = {"rootCallId": "call_7", "parentCallId": "call_7", "subCallId": "call_7:code:2", "name": "grep",
            "arguments": arguments, "isError": False, "content": []}
    args = {"backend": "jsonl-zstd", "steps": [{"do": "create", "id": "l"},
                                               {"do": "append", "id": "l", "type": "tool/code-dispatch", "data": data},
                                               {"do": "flush", "id": "l"}, {"do": "stored"}]}
    reference = Implementation(lambda: InProcessConnection(revision="b150a551b8"), check_schema=False)
    reference.start()
    try:
        expected = machines._expectation(reference.request("live", args), "live", args)
    finally:
        reference.close()
    return args, expected


@pytest.mark.req("LIVE-5")
def test_a_difference_after_a_deep_append_is_tagged_deep_value() -> None:
    args, expected = _deep_case(10_000)
    trace = expected["result"]["trace"]
    assert "l" in trace[3]["ok"]["sessions"]  # the reference stores it
    assert difference_context(args, trace, "/trace/3/ok/sessions/l", live=True) == ["do:stored", DEEP_VALUE]
    assert DEEP_VALUE not in difference_context(args, trace, "/trace/0/ok", live=True)  # before the append
    shallow, shallow_expected = _deep_case(3)
    assert difference_context(shallow, shallow_expected["result"]["trace"], "/trace/3/ok/sessions/l", live=True) == [
        "do:stored"]


def test_on_the_package_a_deep_value_lost_by_the_store_is_set_aside_by_its_entry(npm_command: str) -> None:
    """LIVE-5 on the package: a 10,000-level value a live session accepts is never stored (its write path's
    clone overflows); the difference carries `deep-value` and only the Node file's entry of that tag matches it."""
    _, signature = _differs_on(npm_command, "live", "persistence.live", *_deep_case(10_000))
    assert DEEP_VALUE in signature["context"]
    known = load_expectations(NODE_EXPECT).fuzz
    assert any(k.matches(signature) for k in known if k.context and DEEP_VALUE in k.context)
    assert not any(k.matches({**signature, "context": [t for t in signature["context"] if t != DEEP_VALUE]})
                   for k in known)
