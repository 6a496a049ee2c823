"""Replies compare as JSON any language can produce; rejections by code, index, phase, state."""

from __future__ import annotations

from sessionspec.conformance.compare import NOW, diff, judge, normalise_result


def test_numbers_compare_by_value_but_booleans_are_not_numbers():
    assert diff({"a": 1}, {"a": 1.0}) == []
    assert [d.kind for d in diff({"a": 1}, {"a": True})] == ["value"]
    assert [d.kind for d in diff(None, 0)] == ["value"]


def test_key_order_is_ignored_and_list_order_is_not():
    assert diff({"a": 1, "b": 2}, {"b": 2, "a": 1}) == []
    found = diff([1, 2], [2, 1])
    assert [d.pointer for d in found] == ["/0", "/1"]


def test_missing_and_unexpected_keys_and_items_are_located():
    found = {d.pointer: d.kind for d in diff({"a": {"x": 1}, "l": [1, 2]}, {"a": {"y": 1}, "l": [1]})}
    assert found == {"/a/x": "missing", "/a/y": "unexpected", "/l/1": "missing"}
    assert diff({"a/b": 1}, {"a/b": 2})[0].pointer == "/a~1b"


def test_ignore_patterns_skip_values_but_not_presence():
    expected = {"events": [{"time": 1, "x": 1}, {"time": 2, "x": 2}]}
    assert diff(expected, {"events": [{"time": 9, "x": 1}, {"time": 8, "x": 2}]}, ["/events/*/time"]) == []
    assert [d.kind for d in diff(expected, {"events": [{"x": 1}, {"time": 8, "x": 2}]}, ["/events/*/time"])] == ["missing"]
    assert diff(expected, {"events": [{"time": 9, "x": 3}, {"time": 8, "x": 2}]}, ["/events/*/time"])[0].pointer == "/events/0/x"


def test_diff_handles_ten_thousand_levels():
    a = b = 0
    for _ in range(10_000):
        a, b = [a], [b]
    assert diff(a, b) == []
    c = 1
    for _ in range(10_000):
        c = [c]
    (only,) = diff(a, c)
    assert only.pointer == "/0" * 10_000


def test_live_times_and_synthesised_created_at_normalise_only_when_well_formed():
    args = {"seed": [{"type": "x", "seq": 0, "time": 5, "data": None}]}
    state = {"header": {"createdAt": 123}, "events": [{"time": 5}, {"time": 77}, {"time": "soon"}]}
    out = normalise_result("append", args, state)
    assert out["header"]["createdAt"] == NOW
    assert [e["time"] for e in out["events"]] == [5, NOW, "soon"]
    with_header = normalise_result("append", {**args, "header": {}}, state)
    assert with_header["header"]["createdAt"] == 123


def test_rejections_compare_code_index_phase_and_state():
    expect = {"rejected": {"code": "SURFACE_REPLACE_RANGE", "index": 2}}
    ok = {"seq": 1, "kind": "rejected", "code": "SURFACE_REPLACE_RANGE", "message": "m", "index": 2}
    assert judge("fold", {}, expect, ok).outcome == "passed"
    assert judge("fold", {}, expect, {**ok, "code": "OTHER"}).outcome == "failed"
    assert judge("fold", {}, expect, {**ok, "index": 1}).outcome == "failed"
    assert judge("fold", {}, expect, {**ok, "phase": "setup"}).outcome == "failed"
    assert judge("fold", {}, expect, {"seq": 1, "kind": "result", "result": {}}).outcome == "failed"
    assert judge("fold", {}, {"rejected": {}}, {**ok, "code": None}).outcome == "passed"
    mapped = judge("fold", {}, expect, {**ok, "code": "E_RANGE"}, code_map={"E_RANGE": "SURFACE_REPLACE_RANGE"})
    assert mapped.outcome == "passed"
    with_state = {"rejected": {"code": "X", "state": {"live": ["a"]}}}
    assert judge("fork", {}, with_state, {**ok, "code": "X", "state": {"live": ["a"]}}).outcome == "passed"
    bad = judge("fork", {}, with_state, {**ok, "code": "X", "state": {"live": ["a", "child"]}})
    assert bad.outcome == "failed" and bad.differences[0].pointer == "/state/live/1"


def test_an_unexpected_rejection_fails_and_errored_and_skipped_pass_through():
    rej = {"seq": 1, "kind": "rejected", "code": "C", "message": "why", "phase": "setup"}
    verdict = judge("derive", {}, {"result": {}}, rej)
    assert verdict.outcome == "failed" and "setting up" in verdict.message
    assert judge("fold", {}, {"result": {}}, {"seq": 1, "kind": "errored", "message": "boom"}).outcome == "errored"
    assert judge("fold", {}, {"result": {}}, {"seq": 1, "kind": "skipped", "reason": "no"}).outcome == "skipped"


def test_code_map_applies_to_codes_inside_store_traces() -> None:
    """PROTOCOL.md §3: the adapter's codeMap maps trace codes too, not only the reply's code."""
    expect = {"result": {"trace": [{"at": 0, "do": "create", "rejected": {"code": "SESSION_ALREADY_EXISTS"}}]}}
    reply = {"kind": "result", "result": {"trace": [{"at": 0, "do": "create", "rejected": {"code": "E_EXISTS"}}]}}
    assert judge("store", {}, expect, reply).outcome == "failed"
    assert judge("store", {}, expect, reply, code_map={"E_EXISTS": "SESSION_ALREADY_EXISTS"}).outcome == "passed"
    # The reply itself is not modified by the mapping.
    assert reply["result"]["trace"][0]["rejected"]["code"] == "E_EXISTS"
