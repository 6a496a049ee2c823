"""Surface fold (SURF-1..16): rules, precedence, and equivalence with a naive fold."""

from __future__ import annotations

import copy
import time
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sessionspec.reference import (
    FrozenList,
    SurfaceError,
    SurfaceState,
    SurfaceView,
    fold_surface,
    freeze_json_value,
    is_surface_eligible_type,
    is_surface_event,
    json_equal,
)
from sessionspec.spec import SURFACE_TYPES, constants
from strategies import MAX_SAFE, LogBuilder, session_logs

_MISSING: Any = object()


# ------------------------------------------------------------ naive oracle
class NaiveReject(Exception):
    def __init__(self, code: str, index: int) -> None:
        super().__init__(code, index)
        self.code = code
        self.index = index


def _seqlike(v: Any) -> bool:
    return type(v) is int and 0 <= v <= MAX_SAFE


def _rest(data: Any) -> Any:
    return {k: v for k, v in data.items() if k != "content"} if isinstance(data, dict) else {}


def naive_fold(events: list[Any]) -> dict[str, Any]:
    """Upstream's algorithm written plainly: list.index + splice, checks in SURF-16 order."""
    nodes: list[int] = []
    replacements: list[dict[str, Any]] = []
    for i, e in enumerate(events):
        seq = e.get("seq")
        if type(seq) is not int or seq != i:
            raise NaiveReject("SURFACE_NOT_CONTIGUOUS", i)
        t = e.get("type")
        if t not in SURFACE_TYPES:
            if "surfaceOp" in e:
                raise NaiveReject("SURFACE_LOG_ONLY_MARKER", i)
            if "sourceEventSeqs" in e:
                raise NaiveReject("SURFACE_LOG_ONLY_SOURCES", i)
            continue
        if "surfaceOp" not in e:
            raise NaiveReject("SURFACE_MARKER_MISSING", i)
        op = e["surfaceOp"]
        shadowed = None
        if isinstance(op, str) and op == "append":
            pass
        elif not isinstance(op, dict):
            raise NaiveReject("SURFACE_MARKER_INVALID", i)
        elif not (
            set(op) == {"op", "start", "end"} and op["op"] == "replace" and _seqlike(op["start"]) and _seqlike(op["end"])
        ):
            raise NaiveReject("SURFACE_REPLACE_MARKER_INVALID", i)
        else:
            if op["start"] not in nodes or op["end"] not in nodes:
                raise NaiveReject("SURFACE_REPLACE_RANGE", i)
            a, b = nodes.index(op["start"]), nodes.index(op["end"])
            if a > b:
                raise NaiveReject("SURFACE_REPLACE_RANGE", i)
            shadowed = nodes[a : b + 1]
        src = e.get("sourceEventSeqs", _MISSING)
        if src is not _MISSING:
            if not isinstance(src, list):
                raise NaiveReject("SURFACE_SOURCES_INVALID", i)
            if not src and t != "assistant/message":
                raise NaiveReject("SURFACE_SOURCES_INVALID", i)
            if not all(_seqlike(x) for x in src) or len(set(src)) != len(src) or any(x >= i for x in src):
                raise NaiveReject("SURFACE_SOURCES_INVALID", i)
        if shadowed is None:
            nodes.append(i)
            continue
        if any(s not in (src if src is not _MISSING else []) for s in shadowed):
            raise NaiveReject("SURFACE_SOURCES_COVERAGE", i)
        if t == "tool/result":
            if len(shadowed) != 1 or events[shadowed[0]].get("type") != "tool/result":
                raise NaiveReject("SURFACE_TOOL_RESULT_REWRITE", i)
            if not json_equal(_rest(events[shadowed[0]].get("data")), _rest(e.get("data"))):
                raise NaiveReject("SURFACE_TOOL_RESULT_REWRITE", i)
        nodes[a : b + 1] = [i]
        replacements.append({"seq": i, "start": op["start"], "end": op["end"], "shadowedSeqs": shadowed})
    return {"nodes": nodes, "replacements": replacements}


def outcome(fn: Any, events: list[Any]) -> Any:
    try:
        return ("ok", fn(events))
    except SurfaceError as err:
        return ("reject", err.code, err.index)
    except NaiveReject as err:
        return ("reject", err.code, err.index)


# -------------------------------------------------------------- generators
_TYPES = ["user/message", "assistant/message", "tool/result", "steering/message", "turn/start", "tool/call"]


@st.composite
def surface_logs(draw: st.DrawFn, size: int = 40) -> list[dict[str, Any]]:
    """Mostly valid surface traffic (so folds get deep) with occasional perturbations."""
    nodes: list[int] = []
    events: list[dict[str, Any]] = []
    for i in range(draw(st.integers(0, size))):
        t = draw(st.sampled_from(_TYPES))
        e: dict[str, Any] = {"type": t, "seq": i, "time": 0, "data": {"callId": "c", "isError": False, "content": [i]}}
        valid = draw(st.integers(0, 39)) != 17  # not a boundary value: Hypothesis favours those
        if t not in SURFACE_TYPES:
            if not valid:
                e[draw(st.sampled_from(["surfaceOp", "sourceEventSeqs"]))] = draw(st.sampled_from(["append", None, [0]]))
        elif nodes and draw(st.booleans()) and not (
            t == "tool/result" and valid and not any(events[s]["type"] == "tool/result" for s in nodes)
        ):
            a = draw(st.integers(0, len(nodes) - 1))
            b = draw(st.integers(a, min(len(nodes) - 1, a + 3)))
            if t == "tool/result":
                results = [p for p, s in enumerate(nodes) if events[s]["type"] == "tool/result"]
                if results and valid:
                    a = draw(st.sampled_from(results))
                b = a  # content-only prune (a perturbed one may target a non-result node)
            shadowed = nodes[a : b + 1]
            e["surfaceOp"] = {"op": "replace", "start": nodes[a], "end": nodes[b]}
            sources = sorted(shadowed)
            if draw(st.booleans()):
                extra = draw(st.integers(0, i - 1))
                if extra not in sources:
                    sources.append(extra)
            e["sourceEventSeqs"] = sources
            if not valid:
                e.update(
                    draw(
                        st.sampled_from(
                            [
                                {"surfaceOp": {"op": "replace", "start": nodes[b], "end": nodes[a]}},
                                {"surfaceOp": {"op": "replace", "start": nodes[a], "end": i + 5}},
                                {"sourceEventSeqs": sources[1:]},
                                {"sourceEventSeqs": sources + [i]},
                                {"sourceEventSeqs": sources + sources[:1]},
                                {"surfaceOp": {"op": "replace", "start": nodes[a]}},
                                {"data": {"callId": "other", "isError": False, "content": []}},
                                {"seq": i + 1},
                            ]
                        )
                    )
                )
            if "seq" in e and e["seq"] == i:
                try:
                    naive_fold(events + [e])  # keep our model in step only on success
                    nodes[a : b + 1] = [i]
                except NaiveReject:
                    pass
        else:
            e["surfaceOp"] = "append"
            if i and draw(st.booleans()):
                e["sourceEventSeqs"] = [draw(st.integers(0, i - 1))]
            if not valid:
                e.update(
                    draw(
                        st.sampled_from(
                            [{"surfaceOp": None}, {"surfaceOp": "replace"}, {"sourceEventSeqs": []}, {"sourceEventSeqs": [True]}, {"seq": True}]
                        )
                    )
                )
            if e.get("surfaceOp") == "append" and type(e["seq"]) is int and e["seq"] == i:
                nodes.append(i)
        events.append(e)
    return events


# ------------------------------------------------------------- properties
@given(surface_logs())
def test_surf12_fold_equals_naive_fold_including_rejections(events: list[dict[str, Any]]) -> None:
    assert outcome(fold_surface, events) == outcome(naive_fold, events)


@given(surface_logs())
def test_surf11_incremental_equals_fold_after_every_event_and_rejects_atomically(events: list[dict[str, Any]]) -> None:
    state = SurfaceState(events)
    for i, event in enumerate(events):
        before = (list(state.nodes), state.replace_generation, state.length)
        try:
            plan = state.check(event)
        except SurfaceError as err:
            assert (list(state.nodes), state.replace_generation, state.length) == before
            assert outcome(naive_fold, events[: i + 1]) == ("reject", err.code, i)
            return
        assert (list(state.nodes), state.replace_generation, state.length) == before  # check never mutates
        state.apply(plan)
        expected = naive_fold(events[: i + 1])
        assert list(state.nodes) == expected["nodes"]
        assert state.replace_generation == len(expected["replacements"])


@given(session_logs())
def test_surf12_realistic_logs_fold_like_the_naive_fold(events: list[dict[str, Any]]) -> None:
    result = fold_surface(events)
    assert result == naive_fold(events)
    frozen = freeze_json_value(events)
    assert fold_surface(frozen) == result


# ------------------------------------------------------------------ rules
def ev(seq: int, type_: str = "user/message", op: Any = "append", sources: Any = _MISSING, data: Any = _MISSING) -> dict[str, Any]:
    event: dict[str, Any] = {"type": type_, "seq": seq, "time": seq, "data": {"content": []} if data is _MISSING else data}
    if sources is not _MISSING:
        event["sourceEventSeqs"] = sources
    if op is not _MISSING:
        event["surfaceOp"] = op
    return event


def rep(start: int, end: int) -> dict[str, Any]:
    return {"op": "replace", "start": start, "end": end}


def reject(events: list[Any]) -> SurfaceError:
    with pytest.raises(SurfaceError) as info:
        fold_surface(events)
    return info.value


def test_surf1_eligible_types_are_the_registry_four() -> None:
    assert frozenset(constants()["surfaceTypes"]) == SURFACE_TYPES
    for t in ("user/message", "assistant/message", "tool/result", "steering/message"):
        assert is_surface_eligible_type(t)
    for t in ("context/message", "turn/start", "assistant/chunk", "tool/call", "request/header", "", "User/Message"):
        assert not is_surface_eligible_type(t)


def test_surf2_non_contiguous_seq_rejected() -> None:
    err = reject([ev(0), ev(2)])
    assert err.code == "SURFACE_NOT_CONTIGUOUS" and err.requirement == "SURF-2" and err.index == 1
    assert "not contiguous; expected 1" in err.message
    assert reject([ev(0), dict(ev(1), seq=True)]).code == "SURFACE_NOT_CONTIGUOUS"
    assert reject([dict(ev(0), seq=0.0)]).code == "SURFACE_NOT_CONTIGUOUS"
    assert reject([{"type": "x", "time": 0, "data": None}]).code == "SURFACE_NOT_CONTIGUOUS"


@pytest.mark.parametrize(
    ("event", "code"),
    [
        (ev(0, "turn/start", op="append"), "SURFACE_LOG_ONLY_MARKER"),
        (ev(0, "turn/start", op=None), "SURFACE_LOG_ONLY_MARKER"),
        (ev(0, "turn/start", op="append", sources=[0]), "SURFACE_LOG_ONLY_MARKER"),
        (ev(0, "context/message", op="append"), "SURFACE_LOG_ONLY_MARKER"),
        (ev(0, "tool/call", op=_MISSING, sources=[]), "SURFACE_LOG_ONLY_SOURCES"),
        (ev(0, "tool/call", op=_MISSING, sources=None), "SURFACE_LOG_ONLY_SOURCES"),
        (ev(0, "user/message", op=_MISSING), "SURFACE_MARKER_MISSING"),
        (ev(0, "tool/result", op=_MISSING, sources=[1]), "SURFACE_MARKER_MISSING"),
        (ev(0, op=None), "SURFACE_MARKER_INVALID"),
        (ev(0, op="Append"), "SURFACE_MARKER_INVALID"),
        (ev(0, op="replace"), "SURFACE_MARKER_INVALID"),
        (ev(0, op=1), "SURFACE_MARKER_INVALID"),
        (ev(0, op=["append"]), "SURFACE_MARKER_INVALID"),
        (ev(0, op={"op": "replace", "start": 0}), "SURFACE_REPLACE_MARKER_INVALID"),
        (ev(0, op={"op": "replace", "start": 0, "end": 0, "x": 1}), "SURFACE_REPLACE_MARKER_INVALID"),
        (ev(0, op={"op": "Replace", "start": 0, "end": 0}), "SURFACE_REPLACE_MARKER_INVALID"),
        (ev(0, op={"op": "append", "start": 0, "end": 0}), "SURFACE_REPLACE_MARKER_INVALID"),
        (ev(0, op={"op": "replace", "start": -1, "end": 0}), "SURFACE_REPLACE_MARKER_INVALID"),
        (ev(0, op={"op": "replace", "start": 0, "end": 1.0}), "SURFACE_REPLACE_MARKER_INVALID"),
        (ev(0, op={"op": "replace", "start": True, "end": 0}), "SURFACE_REPLACE_MARKER_INVALID"),
        (ev(0, op={"op": "replace", "start": 0, "end": 2**53}), "SURFACE_REPLACE_MARKER_INVALID"),
        (ev(0, op={}), "SURFACE_REPLACE_MARKER_INVALID"),
    ],
)
def test_surf3_marker_checks(event: dict[str, Any], code: str) -> None:
    err = reject([event])
    assert err.code == code and err.requirement == "SURF-3" and err.index == 0 and err.seq == 0


def test_surf4_append_goes_to_the_end_without_a_new_generation() -> None:
    state = SurfaceState([])
    for i in range(3):
        state.advance(ev(i))
    assert list(state.nodes) == [0, 1, 2] and state.replace_generation == 0


def test_surf5_replace_range_checks() -> None:
    base = [ev(0), ev(1), ev(2)]
    err = reject(base + [ev(3, op=rep(7, 1), sources=[0, 1])])
    assert err.code == "SURFACE_REPLACE_RANGE" and err.requirement == "SURF-5" and "start seq 7" in err.message
    err = reject(base + [ev(3, op=rep(1, 7), sources=[0, 1])])
    assert err.code == "SURFACE_REPLACE_RANGE" and "end seq 7" in err.message
    err = reject(base + [ev(3, op=rep(2, 0), sources=[0, 1, 2])])
    assert err.code == "SURFACE_REPLACE_RANGE" and "after end" in err.message


def test_surf5_positions_not_seq_values_are_compared() -> None:
    # [0,1,2,3] -> replace 0..1 by 4 -> [4,2,3]; now start=4 (numerically larger) before end=2
    events = [ev(0), ev(1), ev(2), ev(3), ev(4, op=rep(0, 1), sources=[0, 1]), ev(5, op=rep(4, 2), sources=[2, 4])]
    result = fold_surface(events)
    assert result["nodes"] == [5, 3]
    assert result["replacements"][1] == {"seq": 5, "start": 4, "end": 2, "shadowedSeqs": [4, 2]}


def test_surf5_shadowed_seq_cannot_be_referenced_again() -> None:
    events = [ev(0), ev(1), ev(2, op=rep(0, 1), sources=[0, 1])]
    assert reject(events + [ev(3, op=rep(1, 1), sources=[1])]).code == "SURFACE_REPLACE_RANGE"
    assert reject(events + [ev(3, op=rep(2, 0), sources=[0, 2])]).code == "SURFACE_REPLACE_RANGE"


def test_surf6_start_equals_end_replaces_one_node() -> None:
    result = fold_surface([ev(0), ev(1), ev(2), ev(3, op=rep(1, 1), sources=[1])])
    assert result["nodes"] == [0, 3, 2]
    assert result["replacements"] == [{"seq": 3, "start": 1, "end": 1, "shadowedSeqs": [1]}]


@pytest.mark.parametrize(
    ("sources", "type_", "fragment"),
    [
        ("0", "user/message", "must be a list"),
        ({"0": 0}, "user/message", "must be a list"),
        ((0,), "user/message", "must be a list"),
        ([], "user/message", "must not be empty"),
        ([], "tool/result", "must not be empty"),
        (["0"], "user/message", "non-negative safe integers"),
        ([0.5], "user/message", "non-negative safe integers"),
        ([-1], "user/message", "non-negative safe integers"),
        ([True], "user/message", "non-negative safe integers"),
        ([2**53], "user/message", "non-negative safe integers"),
        ([0, 0], "user/message", "duplicates"),
        ([2], "user/message", "earlier events"),
        ([0, 5], "assistant/message", "earlier events"),
    ],
)
def test_surf7_source_event_seqs_shape(sources: Any, type_: str, fragment: str) -> None:
    err = reject([ev(0, "turn/start", op=_MISSING), ev(1), ev(2, type_, sources=sources)])
    assert err.code == "SURFACE_SOURCES_INVALID" and err.requirement == "SURF-7" and fragment in err.message


def test_surf7_order_non_int_before_duplicates_before_future() -> None:
    assert "non-negative" in reject([ev(0), ev(1, sources=[5, 5, "x"])]).message
    assert "duplicates" in reject([ev(0), ev(1, sources=[5, 5])]).message


def test_surf7_surf8_empty_allowed_on_assistant_and_sources_may_name_log_only_events() -> None:
    events = [ev(0, "assistant/message", sources=[]), ev(1, "tool/call", op=_MISSING), ev(2, sources=[1, 0]), ev(3)]
    assert fold_surface(events)["nodes"] == [0, 2, 3]


def test_surf9_replace_must_cover_every_shadowed_seq() -> None:
    base = [ev(0), ev(1), ev(2)]
    err = reject(base + [ev(3, op=rep(0, 1))])
    assert err.code == "SURFACE_SOURCES_COVERAGE" and err.requirement == "SURF-9" and "missing 0, 1" in err.message
    err = reject(base + [ev(3, op=rep(0, 2), sources=[0, 2])])
    assert err.code == "SURFACE_SOURCES_COVERAGE" and "missing 1" in err.message
    ok = fold_surface(base + [ev(3, op=rep(0, 1), sources=[2, 1, 0])])  # extra earlier seqs allowed
    assert ok["nodes"] == [3, 2]


def _result(seq: int, content: Any = "x", op: Any = "append", sources: Any = _MISSING, **extra: Any) -> dict[str, Any]:
    data = {"turn": 1, "step": 1, "callId": "c1", "content": [{"type": "text", "text": content}], "isError": False, **extra}
    return ev(seq, "tool/result", op=op, sources=sources, data=data)


def test_surf10_tool_result_content_only_prune_accepted() -> None:
    events = [ev(0), _result(1), _result(2, "[pruned]", rep(1, 1), [1])]
    assert fold_surface(events)["nodes"] == [0, 2]


def test_surf10_tool_result_rewrite_violations() -> None:
    two = [_result(0), _result(1), _result(2, "p", rep(0, 1), [0, 1])]
    err = reject(two)
    assert err.code == "SURFACE_TOOL_RESULT_REWRITE" and err.requirement == "SURF-10" and "exactly one" in err.message
    non_result = [ev(0), _result(1, "p", rep(0, 0), [0])]
    assert "target a current tool/result" in reject(non_result).message
    changed = [_result(0), dict(_result(1, "p", rep(0, 0), [0]))]
    changed[1]["data"] = dict(changed[1]["data"], isError=True)
    assert "only content" in reject(changed).message
    extra_key = [_result(0), _result(1, "p", rep(0, 0), [0], meta={"x": 1})]
    assert reject(extra_key).code == "SURFACE_TOOL_RESULT_REWRITE"
    int_vs_float = [_result(0), _result(1, "p", rep(0, 0), [0])]
    int_vs_float[1]["data"] = dict(int_vs_float[1]["data"], turn=1.0)
    assert reject(int_vs_float).code == "SURFACE_TOOL_RESULT_REWRITE"  # DEC-4: 1 != 1.0


def test_surf10_key_order_of_data_is_irrelevant() -> None:
    original = _result(0)
    rewritten = _result(1, "p", rep(0, 0), [0])
    rewritten["data"] = dict(reversed(list(rewritten["data"].items())))
    assert fold_surface([original, rewritten])["nodes"] == [1]


def test_surf10_other_types_may_shadow_anything() -> None:
    events = [ev(0), _result(1), ev(2, "assistant/message", data={"content": []}), ev(3, "user/message", op=rep(0, 2), sources=[0, 1, 2])]
    assert fold_surface(events)["nodes"] == [3]
    summary = [_result(0), _result(1), ev(2, "steering/message", op=rep(0, 1), sources=[0, 1])]
    assert fold_surface(summary)["nodes"] == [2]


def test_surf10_non_object_data_compares_like_an_object_spread() -> None:
    a = ev(0, "tool/result", data="ab")
    b = ev(1, "tool/result", op=rep(0, 0), sources=[0], data="ab")
    assert fold_surface([a, b])["nodes"] == [1]
    c = ev(1, "tool/result", op=rep(0, 0), sources=[0], data=None)
    assert reject([a, c]).code == "SURFACE_TOOL_RESULT_REWRITE"
    d = ev(0, "tool/result", data=None)
    e = ev(1, "tool/result", op=rep(0, 0), sources=[0], data=5)
    assert fold_surface([d, e])["nodes"] == [1]  # both spread to {}


def test_surf11_rejected_candidate_leaves_state_unchanged_and_plans_are_single_use() -> None:
    events = [ev(0), ev(1), ev(2, op=rep(0, 1), sources=[0, 1])]
    state = SurfaceState(events)
    for e in events:
        state.advance(e)
    nodes, gen = state.nodes, state.replace_generation
    for bad in (ev(3, op=rep(5, 5), sources=[0]), ev(3, op=rep(2, 2)), ev(4), ev(3, "turn/start")):
        with pytest.raises(SurfaceError):
            state.check(bad)
        assert state.nodes is nodes and state.replace_generation == gen and state.length == 3
    plan = state.check(ev(3, op=rep(2, 2), sources=[2]))
    assert state.nodes is nodes  # check alone changes nothing
    state.apply(plan)
    assert list(state.nodes) == [3]
    with pytest.raises(RuntimeError):
        state.apply(plan)


def test_surf12_fold_result_shape_and_input_untouched() -> None:
    events = [ev(0), ev(1), ev(2), ev(3, op=rep(1, 2), sources=[2, 1])]
    before = copy.deepcopy(events)
    result = fold_surface(events)
    assert events == before
    assert result == {"nodes": [0, 3], "replacements": [{"seq": 3, "start": 1, "end": 2, "shadowedSeqs": [1, 2]}]}
    assert type(result["nodes"]) is list
    assert fold_surface([]) == {"nodes": [], "replacements": []}


def test_surf13_generation_counts_replaces() -> None:
    b = LogBuilder()
    for _ in range(5):
        b.user()
    b.compact(0, 1)
    b.compact(1, 2)
    b.user()
    state = SurfaceState(b.events)
    assert state.replace_generation == 0
    gens = []
    for e in b.events:
        state.advance(e)
        gens.append(state.replace_generation)
    assert gens == [0, 0, 0, 0, 0, 1, 2, 2]


def test_surf14_view_is_one_read_only_live_object() -> None:
    events: list[Any] = []
    state = SurfaceState(events)
    view = state.view
    assert isinstance(view, SurfaceView) and state.view is view
    events.append(ev(0))
    state.advance(events[0])
    assert view.nodes == [0]
    events.append(ev(1, op=rep(0, 0), sources=[0]))
    state.advance(events[1])
    assert view.nodes == [1] and view.replace_generation == 1
    assert type(view.nodes) is FrozenList
    with pytest.raises(TypeError):
        view.nodes.append(5)
    for name in ("check", "apply", "advance"):
        assert not hasattr(view, name)
    with pytest.raises(AttributeError):
        view.replace_generation = 5  # type: ignore[misc]
    with pytest.raises(AttributeError):
        view.extra = 1  # type: ignore[attr-defined]
    assert view.nodes is view.nodes  # cached until the next change


def test_surf15_is_surface_event_needs_type_and_marker() -> None:
    assert is_surface_event(ev(0))
    assert is_surface_event(ev(0, op=None))  # a present key counts
    assert not is_surface_event(ev(0, op=_MISSING))
    assert not is_surface_event(ev(0, "turn/start"))


@pytest.mark.parametrize(
    ("event", "code"),
    [
        # SURF-2 before SURF-3
        (dict(ev(9, "turn/start", op="append")), "SURFACE_NOT_CONTIGUOUS"),
        # SURF-3 before SURF-7
        (ev(3, op=None, sources="bad"), "SURFACE_MARKER_INVALID"),
        # SURF-5 before SURF-7
        (ev(3, op=rep(9, 0), sources="bad"), "SURFACE_REPLACE_RANGE"),
        # SURF-7 before SURF-9
        (ev(3, op=rep(0, 1), sources=[0, 0]), "SURFACE_SOURCES_INVALID"),
        # SURF-9 before SURF-10
        (ev(3, "tool/result", op=rep(0, 1), sources=[0]), "SURFACE_SOURCES_COVERAGE"),
        # SURF-10 last
        (ev(3, "tool/result", op=rep(0, 1), sources=[0, 1]), "SURFACE_TOOL_RESULT_REWRITE"),
        # an append checks only SURF-7
        (ev(3, sources=[3]), "SURFACE_SOURCES_INVALID"),
    ],
)
def test_surf16_error_precedence(event: dict[str, Any], code: str) -> None:
    err = reject([ev(0), ev(1), ev(2), event])
    assert err.code == code and err.index == 3


def test_surf_replace_cost_does_not_grow_with_surface_size() -> None:
    """Replaces near the end of a 60,000-node surface: a list.index fold needs seconds."""
    n, k = 60_000, 3_000
    events = [{"type": "user/message", "seq": i, "time": 0, "data": None, "surfaceOp": "append"} for i in range(n)]
    tail = list(range(n - 2 * k, n))
    for j in range(k):
        a, b = tail[2 * j], tail[2 * j + 1]
        events.append({"type": "user/message", "seq": n + j, "time": 0, "data": None, "surfaceOp": rep(a, b), "sourceEventSeqs": [a, b]})
    start = time.process_time()
    result = fold_surface(events)
    elapsed = time.process_time() - start
    assert len(result["nodes"]) == n - k and result["nodes"][-1] == n + k - 1
    assert elapsed < 1.0, elapsed
