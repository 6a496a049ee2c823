"""The accept-fast log pass never accepts a log the exact path would report anything about.

`sessionspec.validator.fastlog.check_clean` returns a `CleanLog` only when it has proved that the exact
path (`reference.load_log` + `lint.Checker`) finds nothing at that level. These tests feed both
the same logs: generated ones (which the fast pass must accept) and mutated ones (where any
acceptance must be matched by an empty exact report).
"""

from __future__ import annotations

import copy
import dataclasses
import json
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from cli_helpers import HEADER, cli, jsonl, turn_events
from cli_strategies import SCHEMAS, mutate
from hypothesis import example, given
from hypothesis import strategies as st
from sessionspec.reference import json_text, load_log
from sessionspec.reference.chunk_rows import ROW_SPECS, decode_storage_record, pack_chunk_runs
from sessionspec.spec.errors import ChunkRowError
from sessionspec.validator.fastlog import RowPlan, check_clean, row_members_ok
from sessionspec.validator.lint import Checker, schema_set
from sessionspec.validator.schemavary import Unsupported, varying_constraints

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from gen_logs import Mix, artifact_bytes, generate_events

LEVELS = ("load", "schema", "strict")
SMALL = Mix(steps_per_turn=(1, 3), reasoning_deltas=(3, 6), text_deltas=(3, 5), delta_chars=(2, 12),
            calls_per_tool_step=(1, 2), arg_deltas=(2, 4), tool_result_chars=(20, 60), user_chars=(5, 40),
            system_prompt_chars=40, compaction_every=2, header_change_every=3, resume_every=4, summary_chars=(10, 30))


def _logs() -> dict[str, bytes]:
    events = generate_events(150, seed=3, mix=SMALL)
    return {"packed": artifact_bytes(events, packed=True, session_id="s1"),
            "unpacked": artifact_bytes(events, packed=False, session_id="s1")}


LOGS = _logs()


@pytest.fixture
def logs() -> dict[str, bytes]:
    return LOGS


def _exact(data: bytes, level: str) -> list[Any]:
    log = load_log(data, "x.jsonl")
    Checker(level, SCHEMAS if level != "load" else None).check(log)
    return log.findings


def _fast(data: bytes, level: str) -> Any:
    return check_clean(data, "x.jsonl", level, SCHEMAS if level != "load" else None)


def _streamed(data: bytes, level: str, size: int) -> Any:
    """The fast pass fed `data` in blocks of `size` bytes (a file read piece by piece)."""
    blocks = (data[i:i + size] for i in range(0, len(data), size))
    return check_clean(blocks, "x.jsonl", level, SCHEMAS if level != "load" else None, size=len(data))


def _same(one: Any, two: Any) -> bool:
    if one is None or two is None:
        return one is two
    return (one.events, one.lines, one.rows, [f.to_json() for f in one.findings], one.upgraded, one.kept_as_stored) == (
        two.events, two.lines, two.rows, [f.to_json() for f in two.findings], two.upgraded, two.kept_as_stored)


def _small_groups(data: bytes, level: str) -> Any:
    """The fast pass with groups of a line or two (`fastlog.GROUP_BYTES`): every line boundary is a group boundary."""
    from sessionspec.validator import fastlog

    saved = fastlog.GROUP_BYTES
    fastlog.GROUP_BYTES = 1
    try:
        return _fast(data, level)
    finally:
        fastlog.GROUP_BYTES = saved


def _never_looser(data: bytes, block: int = 97) -> None:
    """Whatever the fast pass proves is the exact path's whole report (nothing, or crash-tail warnings);
    fed in blocks, or decoded in groups of any size, it proves exactly the same."""
    for level in LEVELS:
        exact = _exact(data, level)  # also: the exact path never raises on a damaged log
        fast = _fast(data, level)
        assert _same(_streamed(data, level, block), fast), level
        assert _same(_small_groups(data, level), fast), level
        if fast is not None:
            assert [f.to_json() for f in fast.findings] == [f.to_json() for f in exact], level
            assert all(f.severity == "warning" for f in fast.findings)


@pytest.mark.parametrize("size", [1, 2, 64, 4096, 1 << 20])
@pytest.mark.parametrize("layout", ["packed", "unpacked"])
def test_the_pass_reads_blocks_of_any_size_with_the_same_verdict(layout, size):
    data = LOGS[layout]
    lines = _lines(data)
    cut = next(i for i in range(len(lines) - 2, 0, -1) if b'"type":"step/end"' in lines[i])
    crashed = b"\n".join(lines[:cut]) + b"\n" + lines[cut][:25]
    for log in (data, crashed, data.replace(b"\n", b"\r\n", 3)):
        for level in LEVELS:
            whole = _fast(log, level)
            assert _same(_streamed(log, level, size), whole), (level, size)
    assert _streamed(crashed, "strict", size).findings


def test_an_open_turn_longer_than_the_tail_limit_goes_to_the_exact_path(monkeypatch):
    from sessionspec.validator import fastlog

    lines = _lines(LOGS["unpacked"])
    cut = next(i for i in range(len(lines) - 2, 0, -1) if b'"type":"step/end"' in lines[i])
    crashed = b"\n".join(lines[: cut + 1]) + b"\n"
    assert _streamed(crashed, "schema", 256) is not None
    opened = max(i for i in range(cut) if b'"type":"turn/start"' in lines[i])
    limit = 2048  # more than the blocks of the last turn/end's line, less than the open turn's lines
    assert len(b"\n".join(lines[opened:cut + 1])) > limit + 512
    monkeypatch.setattr(fastlog, "TAIL_LIMIT", limit)
    assert _streamed(crashed, "schema", 256) is None  # the exact path reports it, with the whole log in hand
    assert _streamed(LOGS["unpacked"], "schema", 256) is not None  # a closed turn: its check needs its turn/end only


@pytest.mark.parametrize("layout", ["packed", "unpacked"])
@pytest.mark.parametrize("level", LEVELS)
def test_generated_logs_take_the_fast_path(logs, layout, level):
    data = logs[layout]
    clean = _fast(data, level)
    assert clean is not None, "a valid log must not fall back to the exact path"
    exact = load_log(data, "x.jsonl")
    Checker(level, SCHEMAS if level != "load" else None).check(exact)
    assert exact.findings == []
    assert clean.events == len(exact.events) and clean.lines == exact.lines
    assert (clean.rows > 0) == (layout == "packed")


def test_cli_reports_the_same_either_way(logs, write):
    for name, data, invalid in (("g.jsonl", logs["packed"], 0), ("crashed.jsonl", logs["packed"] + b'{"type":"tu', 0)):
        path = write(name, data)
        for fmt in ("json", "text", "github"):
            fast = cli("validate", "--format", fmt, "--level", "strict", path)
            exact = cli("validate", "--format", fmt, "--level", "strict", "--exact", path)
            assert (fast.code, fast.out) == (exact.code, exact.out)
        assert cli("validate", "--format", "json", path).json["summary"]["invalid"] == invalid
        assert cli("validate", "--format", "json", "--fail-on", "repair", path).json["summary"]["invalid"] \
            == (name == "crashed.jsonl")


def _lines(data: bytes) -> list[bytes]:
    return data.split(b"\n")


@st.composite
def damaged(draw: st.DrawFn, data: bytes) -> bytes:
    """A log with one random edit: of a record's JSON, or of its bytes, or of the line layout."""
    lines = _lines(data)
    body = len(lines) - 1  # the last element is the empty text after the final newline
    i = draw(st.integers(1, body - 1))
    kind = draw(st.sampled_from(["json", "json", "json", "dup-key", "cr", "cut", "empty", "swap", "repeat", "drop",
                                 "tail", "neg-zero", "float", "header"]))
    raw = lines[i]
    if kind == "json":
        lines[i] = json_text.dumps_bytes(mutate(draw, orjson.loads(raw), rounds=1))
    elif kind == "dup-key":
        first = raw.index(b",", 1)
        lines[i] = raw[:first] + b"," + raw[1:first] + raw[first:]
    elif kind == "cr":
        lines[i] = raw + b"\r"
    elif kind == "cut":
        lines[i] = raw[: draw(st.integers(1, len(raw) - 1))]
    elif kind == "empty":
        lines[i] = b""
    elif kind == "swap" and i + 1 < body:
        lines[i], lines[i + 1] = lines[i + 1], raw
    elif kind == "repeat":
        lines.insert(i, raw)
    elif kind == "drop":
        del lines[i]
    elif kind == "tail":
        return b"\n".join(lines[:i]) + b"\n" + raw[: draw(st.integers(0, len(raw)))]
    elif kind == "neg-zero":
        lines[i] = raw.replace(b":1,", b":-0.0,", 1)
    elif kind == "float":
        lines[i] = raw.replace(b'"seq":', b'"seq":1e0+', 1).replace(b"1e0+", b"", 1).replace(b'"step":1', b'"step":1.0', 1)
    elif kind == "header":
        lines[0] = json_text.dumps_bytes(mutate(draw, orjson.loads(lines[0]), rounds=1))
    return b"\n".join(lines)


@given(st.data())
def test_damaged_packed_logs(data):
    _never_looser(data.draw(damaged(LOGS["packed"])))


@given(st.data())
def test_damaged_unpacked_logs(data):
    _never_looser(data.draw(damaged(LOGS["unpacked"])))


@pytest.mark.req("JSON-2")
def test_negative_zero_takes_the_exact_path(write):
    events = turn_events()
    events[2]["data"]["step"] = -0.0
    data = jsonl(events)
    assert _fast(data, "load") is None
    assert any(f.code == "JSON_NOT_LOSSLESS" for f in _exact(data, "load"))


@pytest.mark.req("REPAIR-6", "JSONL-4")
@pytest.mark.parametrize("layout", ["packed", "unpacked"])
def test_crash_tails_are_reported_by_the_fast_pass_as_the_exact_path_does(layout):
    """A crashed log (open final turn, torn last line) is common: its warnings come from the exact path's code."""
    data = LOGS[layout]
    lines = _lines(data)
    cut = next(i for i in range(len(lines) - 2, 0, -1) if b'"type":"step/end"' in lines[i])
    for crashed in (b"\n".join(lines[: cut + 1]) + b"\n", b"\n".join(lines[:cut]) + b"\n" + lines[cut][:25],
                    data + b'{"type":"turn/st'):
        for level in LEVELS:
            fast = _fast(crashed, level)
            assert fast is not None and fast.findings, level
            assert [f.to_json() for f in fast.findings] == [f.to_json() for f in _exact(crashed, level)]
    assert [f.code for f in _fast(b"\n".join(lines[: cut + 1]) + b"\n", "schema").findings] == ["REPAIR_NEEDED"]


@pytest.mark.req("SURF-10")
def test_tool_result_rewrite_in_the_fast_path():
    events = turn_events()
    rewrite = copy.deepcopy(events[9])  # the turn's tool/result, rewritten after its step ended
    rewrite.update(seq=11, surfaceOp={"op": "replace", "start": 9, "end": 9}, sourceEventSeqs=[9])
    rewrite["data"]["content"] = [{"type": "text", "text": "shorter"}]
    events[11]["seq"] = 12
    events.insert(11, rewrite)
    ok = jsonl(events)
    assert _fast(ok, "schema") is not None and _exact(ok, "schema") == []
    events[11]["data"]["isError"] = True  # a rewrite may change content only
    bad = jsonl(events)
    assert _fast(bad, "schema") is None
    assert [f.code for f in _exact(bad, "schema")] == ["SURFACE_TOOL_RESULT_REWRITE"]


# -- the pieces, each against the reference -------------------------------------------------

def _rows() -> list[dict[str, Any]]:
    events = generate_events(60, seed=5, mix=SMALL)
    return [r for r in pack_chunk_runs(events) if r["type"] in ROW_SPECS]


ROWS = _rows()


@given(st.sampled_from(ROWS), st.data())
def test_row_family_verdict_matches_every_member(row, data):
    row = mutate(data.draw, row)
    if not isinstance(row, dict) or not isinstance(row.get("type"), str) or row["type"] not in ROW_SPECS:
        return
    verdict = row_members_ok(row, SCHEMAS.event)
    if verdict is None:
        return  # malformed: the decoder rejects it
    members = decode_storage_record(row)
    assert verdict == all(SCHEMAS.event.oracle.is_valid(m) for m in members)


def test_row_family_with_times_below_zero():
    row = copy.deepcopy(next(r for r in ROWS if len(r["data"]["dt"]) >= 2))
    row["time0"] = 3
    row["data"]["dt"][1] = -100  # the third member's time is negative: not a safe-int (envelope)
    assert row_members_ok(row, SCHEMAS.event) is False
    assert not all(SCHEMAS.event.oracle.is_valid(m) for m in decode_storage_record(row))


def test_row_plans_are_proven_for_the_core_schemas():
    for tag in ROW_SPECS:
        for present in ({}, {"name"}):
            plan = RowPlan(tag, frozenset(present) & frozenset(ROW_SPECS[tag].optional), SCHEMAS.event)
            assert plan.bounds is not None and plan.loadable, tag


@pytest.mark.parametrize("revision", ["2f74ac98ba", "b150a551b8"])
def test_row_plans_of_the_generated_schemas_are_read_from_the_module_as_the_analysis_gives_them(revision):
    """`pregen` writes each row layout's bounds (`ROW_BOUNDS`): a plan of the generated event schema reads them without
    building the oracle, and they are the bounds the analysis gives now; a stored entry for another template is not
    used."""
    from sessionspec.validator import fastlog
    from sessionspec.validator.generated import compiled_parts, generated_parts

    parts = generated_parts(schema_set((), revision).spec)
    assert parts is not None
    generated = parts.event  # (its own: no other test builds its oracle)
    assert generated.row_bounds
    fresh = compiled_parts(schema_set((), revision).spec).event
    for (tag, present), (template, paths, stored) in generated.row_bounds.items():
        plan = RowPlan(tag, frozenset(present), generated)
        again = RowPlan(tag, frozenset(present), fresh)
        assert (plan.template, plan.analysed) == (template, paths) == (again.template, again.analysed)
        assert plan.bounds == again.bounds and (stored is None) == (plan.bounds is None), (tag, present)
    assert "oracle" not in generated.__dict__  # (a cached property: built only when asked)
    tag, present = next(iter(generated.row_bounds))
    template = {**generated.row_bounds[(tag, present)][0], "extra": None}
    assert fastlog._stored_bounds(generated, tag, frozenset(present), template, plan.analysed) is fastlog._NOT_STORED
    assert fastlog._stored_bounds(fresh, tag, frozenset(present), generated.row_bounds[(tag, present)][0],
                                  plan.analysed) is fastlog._NOT_STORED  # a schema compiled now: analysed now


def test_schemavary_refuses_decisions_on_varying_values():
    import jsonschema
    import referencing
    from referencing.jsonschema import DRAFT202012
    from sessionspec.validator.fastschema import CompiledSchema

    def compiled(schema: dict[str, Any]) -> CompiledSchema:
        registry = referencing.Registry().with_resources([(schema["$id"], DRAFT202012.create_resource(schema))])
        return CompiledSchema(schema, jsonschema.Draft202012Validator(schema, registry=registry), registry=registry)

    base = {"$id": "urn:m", "type": "object", "properties": {"n": {"type": "integer", "minimum": 2}, "k": {"const": "a"}}}
    bounds = varying_constraints(compiled(base), {"n": None, "k": "a"}, [("n",)])
    assert bounds[("n",)].ints_ok(2, 9) and not bounds[("n",)].ints_ok(1, 9)
    for decides in ({"if": {"properties": {"n": {"const": 3}}}, "then": {"required": ["z"]}},
                    {"anyOf": [{"properties": {"n": {"maximum": 3}}}, {"properties": {"n": {"minimum": 9}}}]},
                    {"not": {"properties": {"n": {"const": 4}}}}):
        with pytest.raises(Unsupported):
            varying_constraints(compiled({**base, **decides}), {"n": None, "k": "a"}, [("n",)])
    # A decision on a shared value is fine: it is decided once.
    shared = {**base, "if": {"properties": {"k": {"const": "a"}}}, "then": {"properties": {"n": {"maximum": 5}}}}
    bounds = varying_constraints(compiled(shared), {"n": None, "k": "a"}, [("n",)])
    assert bounds[("n",)].ints_ok(2, 5) and not bounds[("n",)].ints_ok(2, 6)


def test_header_problems_take_the_exact_path(logs):
    lines = _lines(logs["packed"])
    for header in ({**HEADER, "version": 1}, {**HEADER, "createdAt": -1}, {**HEADER, "cwd": "rel"}, [1]):
        data = b"\n".join([json_text.dumps_bytes(header), *lines[1:]])
        for level in LEVELS:
            assert _fast(data, level) is None
            assert _exact(data, level)


def test_every_line_layout_problem_takes_the_exact_path(logs):
    data = logs["packed"]
    for broken in (b"\xef\xbb\xbf" + data, data.replace(b"\n", b"\r\n", 3).replace(b"\r", b"\r ", 1), b"", b"[]\n",
                   data + b"\n", data[:50]):
        for level in LEVELS:
            assert _fast(broken, level) is None


PLUGIN = Path(__file__).resolve().parents[1] / "spec" / "plugin_registry"


def test_a_plugin_registry_gets_its_own_types_and_stays_exact(write):
    """With --registry, plugin events get structs and predicates too; a bad plugin event is still found."""
    from sessionspec.validator.lint import schema_set

    plugin = schema_set((str(PLUGIN),))
    assert "acme/ping" in plugin.fast_types.events and "acme/ping" in plugin.event.by_tag
    ping = {"type": "acme/ping", "seq": 11, "time": 1767225600000,
            "data": {"target": {"host": "build.acme.example", "port": 443}, "ok": True, "latencyMs": 12.5}}
    events = turn_events(close=False)
    events.append(ping)
    events.append({"type": "turn/end", "seq": 12, "time": 1767225600000, "data": {"turn": 1, "reason": {"kind": "completed"}}})
    good = write("ping.jsonl", jsonl(events))
    assert check_clean(Path(good).read_bytes(), good, "schema", plugin) is not None
    assert cli("validate", "--registry", str(PLUGIN), good).code == 0
    # Unknown to the core: envelope only, and a warning naming the type (once), which fails by default
    unknown = cli("validate", "--format", "json", good)
    assert unknown.code == 1 and [(f["code"], f["severity"], f["seq"]) for f in unknown.json["files"][0]["findings"]] \
        == [("EVENT_TYPE_UNREGISTERED", "warning", 11)]
    assert "'acme/ping'" in unknown.json["files"][0]["findings"][0]["message"]
    assert cli("validate", "--fail-on", "error", good).code == 0
    ping["data"]["target"]["port"] = 70000
    bad = write("ping-bad.jsonl", jsonl(events))
    assert check_clean(Path(bad).read_bytes(), bad, "schema", plugin) is None
    result = cli("validate", "--format", "json", "--registry", str(PLUGIN), bad)
    assert result.code == 1 and [f["pointer"] for f in result.json["files"][0]["findings"]] == ["/data/target/port"]
    # labelled with the plugin schema's own $id (was "schema:load/acme/ping.json": 31 characters cut blindly)
    assert result.json["files"][0]["findings"][0]["requirement"] == "schema:https://acme.example/sessionspec/payload/acme/ping.json"


def test_progress_on_a_terminal(logs, write, monkeypatch):
    """The bar is drawn on a terminal (never in pipes: test_inspect_cmds) and both paths report progress."""
    import io

    from sessionspec.cli import run

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.delenv("CI", raising=False)
    seen: list[tuple[int, int]] = []
    assert check_clean(logs["packed"], "x", "schema", SCHEMAS, progress=lambda d, t: seen.append((d, t))) is not None
    assert seen and all(0 < d < t for d, t in seen)
    path = write("p.jsonl", logs["packed"])
    for extra in ([], ["--exact"]):
        out, err = io.StringIO(), Tty()
        assert run(["validate", *extra, path], out, err) == 0
        assert "ok" in out.getvalue() and "Traceback" not in err.getvalue()


# -- groups of lines and struct-typed rows --------------------------------------------------------

def _long_log(packed: bool) -> bytes:
    return artifact_bytes(generate_events(3000, seed=11, mix=SMALL), packed=packed, session_id="s1")


@pytest.mark.parametrize("layout", ["packed", "unpacked"])
def test_a_doubtful_line_deep_in_a_long_log_is_read_alone(layout):
    """A line that is valid but not canonical (spaces), a duplicate key and a "-0.0" inside a string,
    each in a later 64 KiB group: the group is read line by line, with the exact path's verdict."""
    from sessionspec.validator import fastlog

    data = _long_log(layout == "packed")
    assert len(data) > 3 * fastlog.GROUP_BYTES
    lines = _lines(data)
    i = next(k for k in range(len(lines) * 2 // 3, len(lines)) if b'"type":"user/message"' in lines[k])
    spaced = lines[:i] + [lines[i].replace(b'":', b'": ', 1)] + lines[i + 1:]
    first = lines[i].index(b",", 1)
    duplicated = lines[:i] + [lines[i][:first] + b"," + lines[i][1:first] + lines[i][first:]] + lines[i + 1:]
    text = lines[:i] + [lines[i].replace(b'"text":"', b'"text":"-0.0 ', 1)] + lines[i + 1:]
    for variant, clean in ((spaced, True), (duplicated, False), (text, True)):
        log = b"\n".join(variant)
        for level in LEVELS:
            assert (_fast(log, level) is not None) == clean == (not _exact(log, level)), (level, clean)
            assert _same(_small_groups(log, level), _fast(log, level))


@pytest.mark.parametrize("layout", ["packed", "unpacked"])
def test_a_line_the_batch_cannot_take_costs_only_itself(layout, monkeypatch):
    """No cliff: lines the 64 KiB batch cannot take (not canonical: spaces; members in another order; a struct type
    the msgspec types lack), one in each of several groups, are each read alone (`line` once each), every other
    line is taken by the batch, and the verdict is the exact path's."""
    from sessionspec.validator import fastlog

    data = _long_log(layout == "packed")
    lines = _lines(data)
    picked = [k for k in range(2, len(lines) - 1) if b'"type":"user/message"' in lines[k]][::7][:6]
    for n, k in enumerate(picked):
        if n % 2:
            lines[k] = lines[k].replace(b'":', b'": ', 1)
        else:
            value = orjson.loads(lines[k])
            lines[k] = orjson.dumps(dict(reversed(list(value.items()))))  # another member order: valid, not canonical
    log = b"\n".join(lines)
    calls: list[int] = []
    original = fastlog._Pass.line

    def counted(self: Any, raw: bytes, number: int) -> None:
        calls.append(number)
        original(self, raw, number)

    monkeypatch.setattr(fastlog._Pass, "line", counted)
    fast = _fast(log, "schema")
    assert fast is not None and not _exact(log, "schema")
    # (line numbers count from 1, the header is line 1; a line in another layout is read alone, then the rest of its
    # group is proved at once, `_laid_out`, so a doubtful line after it in its group is not read alone)
    assert calls and set(calls) <= {k + 1 for k in picked}, calls


def _packed_rows(data: bytes) -> tuple[list[bytes], list[int]]:
    lines = _lines(data)
    return lines, [k for k, raw in enumerate(lines) if b'"seq0"' in raw and raw.count(b",") > 12]


def test_typed_rows_whose_times_go_back_or_overflow_take_the_general_row_step():
    lines, rows = _packed_rows(_long_log(True))
    for k in rows[:5]:
        row = orjson.loads(lines[k])
        for gap, valid in ((-1, True), (-(row["time0"] + 10**6), False), (2**53, False)):
            changed = copy.deepcopy(row)
            changed["data"]["dt"][0] = gap
            log = b"\n".join(lines[:k] + [json_text.dumps_bytes(changed)] + lines[k + 1:])
            for level in LEVELS:
                fast = _fast(log, level)
                assert (fast is not None) == (not _exact(log, level)), (level, gap)
                if level != "strict":
                    assert (fast is not None) == valid, (level, gap)


@pytest.mark.req("SURF-7")
@pytest.mark.parametrize(("index", "sources"), [
    (7, [3, 4, 5, 6]), (7, []), (7, [3, 7]), (7, [3, 8]), (7, [3, 3]), (7, [-1, 3]), (7, [3, 2**53]), (7, [3.0]),
    (9, [8]), (9, []), (9, [9]), (9, [8, 8]), (9, [0, 1, 2, 3, 4, 5, 6, 7, 8]), (1, [0]), (1, [1]), (1, []),
])
def test_surface_sources_proved_by_the_struct_type_keep_the_exact_verdict(index, sources):
    """assistant/message, tool/result and user/message structs prove their sourceEventSeqs distinct non-negative
    safe ints, so the pass asks the surface only for SURF-7's order (`try_append(distinct_ints=True)`): every
    verdict is still the exact path's."""
    events = turn_events()
    events[index]["sourceEventSeqs"] = sources
    data = jsonl(events)
    for level in LEVELS:
        exact = _exact(data, level)
        fast = _fast(data, level)
        assert (fast is not None) == (not exact), (level, sources, [f.code for f in exact])


def test_only_a_bounded_unique_int_list_proves_distinct_sources():
    """`_distinct_seq_list` reads the proof off the type: bounds of the items and the generated uniqueness check."""
    from typing import Annotated

    import msgspec
    from sessionspec.validator.fastlog import _distinct_seq_list
    from sessionspec.validator.mstypes import _post_init

    bounded = Annotated[int, msgspec.Meta(ge=0, le=2**53 - 1)]

    def struct(item: Any, unique: bool, name: str = "sourceEventSeqs") -> type:
        namespace = {"__post_init__": _post_init([name] if unique else [], [])}
        return msgspec.defstruct("S", [(name, list[item])], namespace=namespace, kw_only=True)

    def proves(cls: type) -> bool:
        return _distinct_seq_list(cls, msgspec.inspect.type_info(cls))

    assert proves(struct(bounded, unique=True))
    assert not proves(struct(bounded, unique=False))
    assert not proves(struct(int, unique=True))
    assert not proves(struct(Annotated[int, msgspec.Meta(ge=-1, le=5)], unique=True))
    assert not proves(struct(Annotated[int, msgspec.Meta(ge=0)], unique=True))
    assert not proves(struct(bounded, unique=True, name="other"))


def test_the_scan_for_negative_zero_is_skipped_only_when_the_types_cannot_hold_one():
    """`_no_negative_zero` reads off the generated types that no accepted struct holds -0.0: no float anywhere,
    and every JsonValue (Any) field checked by its struct's generated hook; anything else keeps the scan."""
    from typing import Annotated

    import msgspec
    from sessionspec.validator.fastlog import _no_negative_zero
    from sessionspec.validator.mstypes import FastTypes, _post_init

    assert _no_negative_zero(SCHEMAS.fast_types)

    def fast(*fields: tuple[str, Any], checked: tuple[str, ...] = ()) -> Any:
        inner = msgspec.defstruct("Inner", list(fields), namespace={"__post_init__": _post_init([], list(checked))},
                                  kw_only=True)
        outer = msgspec.defstruct("Outer", [("seq", int), ("data", inner)], kw_only=True, tag_field="type", tag="x")
        return FastTypes(msgspec.json.Decoder(outer), msgspec.json.Encoder(), {outer: "x"}, frozenset({"x"}),
                         frozenset(), {})

    assert _no_negative_zero(fast(("n", Annotated[int, msgspec.Meta(ge=0)]), ("s", list[str])))
    assert not _no_negative_zero(fast(("n", float)))
    assert not _no_negative_zero(fast(("n", int | float)))
    assert not _no_negative_zero(fast(("v", Any)))
    assert _no_negative_zero(fast(("v", Any), checked=("v",)))
    assert not _no_negative_zero(fast(("v", dict[str, Any]), ("w", list[Any]), checked=("v",)))


@pytest.mark.req("JSON-2")
def test_negative_zero_in_a_json_value_takes_the_exact_path():
    events = turn_events()
    events[7]["data"]["provenance"]["replayState"] = {"opaque": [1, -0.0]}
    data = jsonl(events)
    for level in LEVELS:
        assert _fast(data, level) is None
        assert any(f.code == "JSON_NOT_LOSSLESS" for f in _exact(data, level))
    events[7]["data"]["provenance"]["replayState"] = {"opaque": "-0.0 as text"}
    assert _fast(jsonl(events), "schema") is not None


# -- the published load path's reading of stored records (JSONL-13..15) ---------------------------------
# The pass reads each revision's rules and takes every record the published load path may read apart (JSONL-13:
# upgraded, JSONL-14: malformed, JSONL-15: unknown) through the load path's own reader before any check, so at
# either revision it proves exactly the exact path's report, the upgraded and kept-as-stored counts included.

PUB = "b150a551b8"
_PUB_SCHEMAS = schema_set((), PUB)


def _readable_logs() -> dict[str, bytes]:
    """Logs both load paths read: a generated pinned log without compaction (the release knows no `compact/*`
    type), packed and not, and a real log the npm package wrote."""
    events = generate_events(150, seed=3, mix=dataclasses.replace(SMALL, compaction_every=0))
    real = Path(__file__).resolve().parents[1] / "real_logs"
    return {"packed": artifact_bytes(events, packed=True, session_id="s1"),
            "unpacked": artifact_bytes(events, packed=False, session_id="s1"),
            "published": (real / "logs" / "published-chat.jsonl").read_bytes(),
            # a pinned log the package resumed (the commonest real log): read upgraded up to the resume
            "mixed": (real / "corpus" / "npm-resumed-pinned.jsonl").read_bytes(),
            "mixed-steering": (real / "corpus" / "npm-resumed-steering.jsonl").read_bytes()}


READABLE = _readable_logs()


#: Records the published load path treats apart (JSONL-13: upgraded; JSONL-14: malformed; JSONL-15: unknown).
_LOAD_RULE_RECORDS = st.sampled_from([
    {"type": "acme/ping", "data": {}},
    {"type": "acme/ping", "data": {}, "ignorable": True},
    {"type": "compact/start", "data": {"turn": 1}},
    {"type": "session/end-seed", "data": {}},
    {"type": "turn/start", "data": {"turn": 1, "trigger": {"kind": ""}}},
    {"type": "turn/start", "data": {"turn": 1, "trigger": {"kind": "message"}}},
    {"type": "turn/end", "data": {"turn": 1, "reason": {"kind": "disposed"}}},
    {"type": "turn/end", "data": {"turn": 1, "reason": {"kind": "error", "step": 0, "message": "m"}}},
    {"type": "turn/end", "data": {"turn": 1, "reason": {"kind": "completed", "x": 1}}},
    {"type": "steering/message", "data": {"turn": 1, "content": [], "source": {"kind": "user"}}},
    {"type": "steering/message", "data": {"turn": 1}},
])


@st.composite
def with_load_rule_records(draw: st.DrawFn, data: bytes) -> bytes:
    """The log with one to three event lines replaced by records the load rules act on (seq and time kept)."""
    lines = _lines(data)
    for _ in range(draw(st.integers(1, 3))):
        i = draw(st.integers(1, len(lines) - 2))
        old = orjson.loads(lines[i])
        if "seq" not in old:  # a packed row: leave it
            continue
        record = {**draw(_LOAD_RULE_RECORDS), "seq": old["seq"], "time": old["time"]}
        lines[i] = json_text.dumps_bytes(record)
    return b"\n".join(lines)


def _at(data: bytes, level: str, revision: str) -> tuple[Any, Any, Any]:
    """(fast, exact log, exact checker) at a revision."""
    schemas = (SCHEMAS if revision != PUB else _PUB_SCHEMAS) if level != "load" else None
    exact = load_log(data, "x.jsonl")
    checker = Checker(level, schemas, revision)
    checker.check(exact)
    return check_clean(data, "x.jsonl", level, schemas, revision=revision), exact, checker


def _never_looser_at(data: bytes, revision: str) -> list[Any]:
    """At ``revision``, at every level: what the pass proves is the exact path's whole report (findings, what the
    load path read upgraded or kept as stored, no deviation), read whole, in blocks or in one-line groups."""
    from sessionspec.validator import fastlog

    proved = []
    for level in LEVELS:
        fast, exact, checker = _at(data, level, revision)
        schemas = (SCHEMAS if revision != PUB else _PUB_SCHEMAS) if level != "load" else None
        blocks = (data[i:i + 97] for i in range(0, len(data), 97))
        assert _same(check_clean(blocks, "x.jsonl", level, schemas, size=len(data), revision=revision), fast), level
        saved, fastlog.GROUP_BYTES = fastlog.GROUP_BYTES, 1
        try:
            assert _same(check_clean(data, "x.jsonl", level, schemas, revision=revision), fast), level
        finally:
            fastlog.GROUP_BYTES = saved
        refused = any(f.requirement in ("JSONL-14", "JSONL-15") for f in exact.findings)
        assert not (refused and fast is not None), (revision, level)
        if fast is not None:
            assert [f.to_json() for f in fast.findings] == [f.to_json() for f in exact.findings], (revision, level)
            assert (fast.upgraded, fast.kept_as_stored) == (exact.upgraded, exact.kept_as_stored), (revision, level)
            assert not checker.deviation_count, (revision, level)
        proved.append(fast)
    return proved


@pytest.mark.req("JSONL-13", "JSONL-15")
@given(st.data())
def test_the_pass_proves_the_exact_report_of_a_log_the_load_rules_act_on_at_either_revision(data):
    log_bytes = data.draw(with_load_rule_records(READABLE[data.draw(st.sampled_from(sorted(READABLE)))]))
    for revision in ("2f74ac98ba", PUB):
        _never_looser_at(log_bytes, revision)


@pytest.mark.req("JSONL-13")
@pytest.mark.parametrize("name", sorted(READABLE))
def test_logs_of_either_format_and_resumed_logs_take_the_fast_path_at_the_published_revision(name):
    """Published logs, pinned ones (read upgraded) and pinned logs the package resumed: proved at every level, with
    the exact path's counts of what was read upgraded (JSONL-13) or kept as stored (DEC-24)."""
    proved = _never_looser_at(READABLE[name], PUB)
    assert all(fast is not None for fast in proved), name
    if name != "published":
        assert all(fast.upgraded for fast in proved), name


@pytest.mark.parametrize("name", ["published", "mixed"])
@given(data=st.data())
def test_damaged_logs_at_the_published_revision(name, data):
    _never_looser_at(data.draw(damaged(READABLE[name])), PUB)


@pytest.mark.req("JSONL-15")
def test_validate_reports_the_same_fast_or_exact_on_load_rule_records(write):
    unknown = _lines(LOGS["unpacked"])
    record = orjson.loads(unknown[5])
    unknown[5] = json_text.dumps_bytes({"type": "acme/ping", "seq": record["seq"], "time": record["time"], "data": {}})
    for name, data in (("pinned.jsonl", LOGS["packed"]), ("unknown.jsonl", b"\n".join(unknown))):
        path = write(name, data)
        for extra in ([], ["--revision", PUB]):
            for level in LEVELS:
                fast = cli("validate", "--format", "json", "--level", level, path, *extra)
                exact = cli("validate", "--format", "json", "--level", level, "--exact", path, *extra)
                assert (fast.code, fast.json) == (exact.code, exact.json), (name, extra, level)
    assert "JSONL_UNKNOWN_TYPE" in cli("validate", "--revision", PUB, path).out


def _reordered(data: bytes, every: int = 1) -> bytes:
    """The log with the members of each `every`-th event's payload (and of its envelope) in reverse order: valid,
    the same values, but not the generated structs' order (as the package writes an assistant message before its
    usage)."""
    lines = _lines(data)
    for k in range(1, len(lines) - 1, every):
        value = orjson.loads(lines[k])
        if "seq" not in value:  # a packed row: its own layout
            continue
        if type(value.get("data")) is dict:
            value["data"] = dict(reversed(list(value["data"].items())))
        lines[k] = orjson.dumps(dict(reversed(list(value.items()))))
    return b"\n".join(lines)


@pytest.mark.parametrize("name", ["packed", "published", "mixed"])
def test_members_in_another_order_are_proved_by_the_struct_and_the_one_parsing_path(name, monkeypatch):
    """A line a struct accepts but writes in another member order: the struct proves its schema (the compiled predicate
    is not asked), the one parsing path its losslessness; the verdict and counts are the exact path's at either
    revision."""
    log = _reordered(READABLE[name])
    compiled = _PUB_SCHEMAS.event.by_tag
    asked: list[str] = []
    for tag, predicate in list(compiled.items()):
        monkeypatch.setitem(compiled, tag, lambda value, tag=tag, predicate=predicate: asked.append(tag) or predicate(value))
    assert check_clean(log, "x.jsonl", "schema", _PUB_SCHEMAS, revision=PUB) is not None
    if name == "published":  # (no record read upgraded, which is checked again)
        rows = [orjson.loads(raw) for raw in _lines(log)[1:-1] if b'"seq0"' in raw]
        members = {decode_storage_record(row)[0]["type"] for row in rows}
        # only a packed row's member family (its one verdict) asks a predicate: no reordered event line does
        assert set(asked) <= members, asked
    monkeypatch.undo()
    _proved_at_both(log, name)


def _proved_at_both(log: bytes, name: str) -> None:
    """Never looser than the exact path at either revision, and proved by the pass at the published one (and at the
    pinned one for the packed log)."""
    for revision in ("2f74ac98ba", PUB):
        proved = _never_looser_at(log, revision)
        if revision == PUB or name == "packed":
            assert all(fast is not None for fast in proved), (name, revision)


@pytest.mark.parametrize("name", ["published", "mixed"])
@given(data=st.data())
def test_damaged_logs_in_another_member_order(name, data):
    """Reordered lines with one random edit (a duplicate key, a number, a cut, ...): never looser than the exact path."""
    log = data.draw(damaged(_reordered(READABLE[name], every=2)))
    for revision in ("2f74ac98ba", PUB):
        _never_looser_at(log, revision)


def _payload_reordered(data: bytes, every: int = 1) -> bytes:
    """The log with the members of each `every`-th event's payload in reverse order, its envelope as written: one
    writer's member order, as the package writes an assistant message before its usage."""
    lines = _lines(data)
    for k in range(1, len(lines) - 1, every):
        value = orjson.loads(lines[k])
        if "seq" in value and type(value.get("data")) is dict:
            value["data"] = dict(reversed(list(value["data"].items())))
            lines[k] = orjson.dumps(value)
    return b"\n".join(lines)


@pytest.mark.parametrize("name", ["packed", "unpacked", "published", "mixed"])
def test_a_writer_s_member_order_takes_the_batch_after_its_first_line_of_each_type(name, monkeypatch):
    """Payloads in another member order: after the first line of a type is read alone, the decoder takes that type's
    struct in the line's order (`mstypes.in_key_order`), so the other lines of the type take the batch; the verdict and
    counts are the exact path's at either revision."""
    from sessionspec.validator import fastlog

    log = _payload_reordered(READABLE[name])
    alone: list[int] = []
    line = fastlog._Pass.line
    monkeypatch.setattr(fastlog._Pass, "line", lambda self, raw, number: alone.append(number) or line(self, raw, number))
    assert check_clean(READABLE[name], "x.jsonl", "schema", _PUB_SCHEMAS, revision=PUB) is not None
    as_written = len(alone)
    alone.clear()
    assert check_clean(log, "x.jsonl", "schema", _PUB_SCHEMAS, revision=PUB) is not None
    events = [orjson.loads(raw) for raw in _lines(log)[1:-1]]
    types = {e["type"] for e in events if "seq" in e and type(e.get("data")) is dict and len(e["data"]) > 1}
    assert len(alone) <= as_written + len(types), (len(alone), as_written, len(types))
    assert len(events) < 100 or as_written + len(types) < len(events) // 4  # (not every line: the batch takes them)
    monkeypatch.undo()
    _proved_at_both(log, name)


@pytest.mark.parametrize("name", ["published", "mixed"])
@given(data=st.data())
def test_damaged_logs_in_a_writer_s_member_order(name, data):
    """Payloads in another member order, every second line, with one random edit: never looser than the exact path
    (a struct in the line's order is taken only when it writes the line back)."""
    log = data.draw(damaged(_payload_reordered(READABLE[name], every=2)))
    for revision in ("2f74ac98ba", PUB):
        _never_looser_at(log, revision)


#: Other writers' layouts of one JSON value (`json_text.laid_out`): Python's `json.dumps` (spaces and ASCII escapes;
#: sorted keys), a compact writer that escapes non-ASCII, Go's HTML escaping, tabs between tokens.
_WRITERS: dict[str, Any] = {
    "python": lambda v: json.dumps(v),
    "python-sorted": lambda v: json.dumps(v, sort_keys=True),
    "ascii": lambda v: json.dumps(v, separators=(",", ":")),
    "sorted": lambda v: json.dumps(v, separators=(",", ":"), sort_keys=True, ensure_ascii=False),
    "go": lambda v: json.dumps(v, separators=(",", ":"), ensure_ascii=False).replace("<", "\\u003c").replace(">", "\\u003e"),
    "tabs": lambda v: json.dumps(v, separators=(",\t", ":\t"), ensure_ascii=False),
}


def _written_by(data: bytes, writer: str, every: int = 1) -> bytes:
    """The log with every `every`-th line (the header too) as `writer` writes its value."""
    lines = _lines(data)
    for k in range(0, len(lines) - 1, every):
        lines[k] = _WRITERS[writer](orjson.loads(lines[k])).encode()
    return b"\n".join(lines)


@pytest.mark.req("JSON-2", "JSON-12")
@pytest.mark.parametrize("writer", sorted(_WRITERS))
@pytest.mark.parametrize("name", ["packed", "unpacked", "published", "mixed"])
def test_a_log_in_another_writer_s_layout_takes_the_batch_with_the_exact_verdict(name, writer, monkeypatch):
    """No cliff for other writers: a log whose every line another writer laid out (white space, escapes, member order)
    is proved by the structs, a line read alone per group at most (`json_text.laid_out`; before, every line was read
    alone and through the exact parser: 10-20x the time); the verdict and counts are the exact path's at either
    revision."""
    from sessionspec.validator import fastlog

    log = _written_by(READABLE[name], writer)
    alone: list[int] = []
    line = fastlog._Pass.line
    monkeypatch.setattr(fastlog._Pass, "line", lambda self, raw, number: alone.append(number) or line(self, raw, number))
    assert check_clean(READABLE[name], "x.jsonl", "schema", _PUB_SCHEMAS, revision=PUB) is not None
    as_written = set(alone)  # (the lines the published load path reads upgraded: as a dict, read alone)
    alone.clear()
    assert check_clean(log, "x.jsonl", "schema", _PUB_SCHEMAS, revision=PUB) is not None
    extra = set(alone) - as_written
    # a line or two a group, or after a line read alone (the batch decodes the rest again from there)
    assert len(extra) <= 2 * (len(log) // fastlog.GROUP_BYTES + 1) + len(as_written), sorted(extra)
    assert len(extra) < len(_lines(log)) // 4
    monkeypatch.undo()
    _proved_at_both(log, name)


@pytest.mark.parametrize("writer", ["python", "sorted", "go"])
@pytest.mark.parametrize("name", ["published", "mixed", "packed"])
@given(data=st.data())
def test_damaged_logs_in_another_writer_s_layout(name, writer, data):
    """Every second line in another writer's layout, with one random edit (a repeated key, negative zero, a cut, ...):
    never looser than the exact path."""
    log = data.draw(damaged(_written_by(READABLE[name], writer, every=2)))
    for revision in ("2f74ac98ba", PUB):
        _never_looser_at(log, revision)


@pytest.mark.req("JSON-2", "JSON-12")
@pytest.mark.parametrize("piece", [b'"a":1,"a":2', b'"a": -0.0', b'"a": -0e0', b'"a": 9007199254740993',
                                   b'"a": "\\ud800"', b'"a": 1e400', b'"a": "\\u0022", "a": 0'])
def test_a_laid_out_line_holding_what_the_exact_reader_reports_is_not_proved(piece):
    """A line in another layout with a repeated key, a negative zero, an unsafe integer, a lone surrogate or an infinite
    number, where the struct types allow a member there: the pass does not prove the log, the exact path reports it."""
    lines = _lines(_written_by(READABLE["published"], "python"))
    k = next(k for k, raw in enumerate(lines) if b'"type": "user/message"' in raw)
    value = orjson.loads(lines[k])
    assert type(value["data"].get("source")) is dict
    lines[k] = lines[k].replace(b'"source": {', b'"source": {' + piece + b", ", 1)
    log = b"\n".join(lines)
    for revision in ("2f74ac98ba", PUB):
        proved = _never_looser_at(log, revision)
        assert all(fast is None for fast in proved), (revision, piece)


def _crlf(data: bytes, how: str) -> bytes:
    """The log with CRLF line ends: on every line, from the middle on (a log resumed by a writer that writes CRLF),
    on the header only, or on the last line only."""
    lines = _lines(data)
    body = len(lines) - 1
    ends = {"every": range(body), "from-middle": range(body // 2, body), "header": range(1),
            "last": range(body - 1, body)}[how]
    for k in ends:
        lines[k] += b"\r"
    return b"\n".join(lines)


@pytest.mark.req("JSONL-3")
@pytest.mark.parametrize("how", ["every", "from-middle", "header", "last"])
@pytest.mark.parametrize("name", ["packed", "unpacked", "published", "mixed"])
def test_a_log_with_crlf_line_ends_is_proved_with_the_exact_paths_warning(name, how):
    """A Windows writer's log (CRLF line ends), whole or resumed: the pass removes the CR of each CRLF and reports the
    exact path's one warning (JSONL-3, `jsonl_read.crlf_finding`: the count and the first such line), read whole, in
    blocks of 97 bytes (a CR and its LF in two blocks) or in one-line groups; before, such a log took the exact path."""
    log = _crlf(READABLE[name], how)
    for revision in ("2f74ac98ba", PUB):
        proved = _never_looser_at(log, revision)
        if revision == PUB or name in ("packed", "unpacked"):
            assert all(fast is not None and "JSONL_CRLF" in [f.code for f in fast.findings] for fast in proved), revision


@pytest.mark.parametrize("how", ["every", "from-middle"])
@pytest.mark.parametrize("name", ["published", "packed"])
@given(data=st.data())
def test_damaged_logs_with_crlf_line_ends(name, how, data):
    """CRLF line ends with one random edit (a CR within a line, a cut, a repeated key, ...): never looser."""
    log = data.draw(damaged(_crlf(READABLE[name], how)))
    for revision in ("2f74ac98ba", PUB):
        _never_looser_at(log, revision)


@pytest.mark.req("JSON-2", "JSON-12")
def test_the_pass_takes_another_writer_s_layout_by_the_references_statement_under_a_variant(monkeypatch):
    """Which laid-out texts are lossless is the reference's one statement (`json_text.laid_out`), which `json_text.loads`
    and the pass both ask: a laid-out line with a repeated key is reported by the exact path and not proved by the pass;
    under a variant that calls every text that is not canonical laid out, neither reports it (the exact path takes
    msgspec's value without an anomaly, the pass proves the log)."""
    lines = _lines(_written_by(READABLE["published"], "python"))
    k = next(k for k, raw in enumerate(lines) if b'"type": "user/message"' in raw)
    kind = orjson.loads(lines[k])["data"]["source"]["kind"]
    lines[k] = lines[k].replace(b'"source": {', b'"source": {"kind": "x", ', 1)  # (the last "kind" wins: the same value)
    assert orjson.loads(lines[k])["data"]["source"]["kind"] == kind
    log = b"\n".join(lines)
    fast, exact, _ = _at(log, "schema", PUB)
    assert fast is None and "JSON_DUPLICATE_KEY" in {f.code for f in exact.findings}, [f.code for f in exact.findings]
    monkeypatch.setattr(json_text, "laid_out", lambda text, canonical, *, negative_zero=True: text != canonical)
    fast, exact, _ = _at(log, "schema", PUB)
    assert "JSON_DUPLICATE_KEY" not in {f.code for f in exact.findings}
    assert fast is not None and [f.to_json() for f in fast.findings] == [f.to_json() for f in exact.findings]


@pytest.mark.req("JSONL-3")
def test_the_pass_warns_of_crlf_by_the_load_paths_statement_under_a_variant(monkeypatch):
    """JSONL-3's warning is the load path's one statement (`jsonl_read.crlf_finding`), which the pass asks with its own
    count and first line: under a variant of its text, both report the variant's."""
    from sessionspec.reference import Finding, jsonl_read

    log = _crlf(READABLE["packed"], "from-middle")
    monkeypatch.setattr(jsonl_read, "crlf_finding", lambda count, first: Finding(
        "JSONL_CRLF", "JSONL-3", f"variant: {count} from {first}", line=first, severity="warning"))
    for level in LEVELS:
        fast, exact, _ = _at(log, level, "2f74ac98ba")
        assert exact.findings[0].message.startswith("variant: "), level
        assert fast is not None and [f.to_json() for f in fast.findings] == [f.to_json() for f in exact.findings], level


def _detection_logs() -> dict[str, bytes]:
    """Logs of both revisions, resumed ones, settings outside a turn, crash tails and torn last lines: every JSONL log
    of the real-log corpus and of `tests/real_logs/logs`, and the generated ones."""
    real = Path(__file__).resolve().parents[1] / "real_logs"
    found = {f"gen-{name}": data for name, data in READABLE.items()}
    found["reordered"] = _reordered(READABLE["published"])
    for path in sorted([*(real / "logs").glob("*.jsonl"), *(real / "corpus").glob("*.jsonl")]):
        found[path.name] = path.read_bytes()
    return found


DETECTION_LOGS = _detection_logs()


def _inline(data: bytes, level: str, revision: str) -> tuple[Any, Any]:
    from sessionspec.validator.detect import InlineDetection

    detection = InlineDetection()
    schemas = (SCHEMAS if revision != PUB else _PUB_SCHEMAS) if level != "load" else None
    blocks = (data[i:i + 4093] for i in range(0, len(data), 4093))
    return check_clean(blocks, "x.jsonl", level, schemas, size=len(data), revision=revision,
                       detection=detection), detection


@pytest.mark.parametrize("name", sorted(DETECTION_LOGS))
def test_the_pass_detecting_as_it_goes_finds_what_the_whole_files_detection_finds(name):
    """Whatever revision the pass checks a log at, when it proves the log the detection it was fed (each line it
    parses, in order) is the one `detect_in_bytes` gives on the whole file: revision, reason, evidence, scores."""
    from sessionspec.validator.detect import detect_in_bytes

    data = DETECTION_LOGS[name]
    whole = detect_in_bytes(data)
    proved = 0
    for revision in ("2f74ac98ba", PUB):
        for level in LEVELS:
            fast, detection = _inline(data, level, revision)
            if fast is not None:
                proved += 1
                assert detection.result() == whole, (name, revision, level)
    assert proved or _fast(data, "load") is None, name  # (what the pass proves, it proves detecting as it goes)


@pytest.mark.parametrize("name", ["published", "mixed", "mixed-steering", "unpacked"])
@given(data=st.data())
def test_the_pass_detecting_as_it_goes_on_damaged_logs(name, data):
    """A damaged log (a member's value, a cut, a duplicate key, a blank line, ...): proved, the detection fed is the whole
    file's."""
    from sessionspec.validator.detect import detect_in_bytes

    log = data.draw(damaged(READABLE[name]))
    for revision in ("2f74ac98ba", PUB):
        fast, detection = _inline(log, "schema", revision)
        if fast is not None:
            assert detection.result() == detect_in_bytes(log), revision


@pytest.mark.parametrize("order", ["pinned first", "published inside"])
def test_validate_reports_what_the_exact_path_reports_when_the_ends_of_a_log_show_another_revision(write, order):
    """The revision the first and last lines show is only the pass's guess: a log whose middle says otherwise is
    reported at the revision its whole content shows, with the whole file's reason, as `--exact` reports it."""
    pinned, published = _lines(READABLE["unpacked"]), _lines(READABLE["published"])
    if order == "pinned first":
        log = READABLE["mixed"]
    else:  # a pinned log with a published turn/start in the middle
        start = next(k for k in range(len(pinned) // 3, len(pinned)) if b'"type":"turn/start"' in pinned[k])
        record = orjson.loads(pinned[start])
        record["data"] = {"turn": record["data"]["turn"]}
        pinned[start] = orjson.dumps(record)
        log = b"\n".join(pinned)
    assert published  # (the published log: the resumed one's second half)
    path = write("log.jsonl", log)
    for level in LEVELS:
        fast = cli("validate", "--format", "json", "--level", level, path)
        exact = cli("validate", "--format", "json", "--level", level, "--exact", path)
        assert (fast.code, fast.json) == (exact.code, exact.json), (order, level)


@pytest.mark.parametrize("form", ["packed", "unpacked"])
def test_the_pass_follows_the_rule_tables_retired_types(logs: dict[str, bytes], form: str) -> None:
    """JSONL-12's retired types are the rule table's entry (`load_rejected_types`), not a copy of the format's list:
    under a variant that retires `turn/start`, the exact path refuses the log and the fast pass gives up on it, at
    every level; under the default table both accept it."""
    from sessionspec.reference import rule_table

    data = logs[form]
    assert _fast(data, "load") is not None
    variant = rule_table.default().derive("load_rejected_types", lambda types: (*types, "turn/start"))
    with rule_table.use(variant):
        for level in LEVELS:
            assert "JSONL_LEGACY_EVENT" in {f.code for f in _exact(data, level)}, level
            assert _fast(data, level) is None, level
    assert _fast(data, "load") is not None


def _read_apart_variant(monkeypatch: pytest.MonkeyPatch) -> None:
    """A fresh start for the pass's per-revision tables (built from the load path's test, cached by revision)."""
    from sessionspec.validator import fastlog

    monkeypatch.setattr(fastlog, "_KINDS", {})
    monkeypatch.setattr(fastlog, "_PLANS", {})


def _member_type(data: bytes) -> str:
    """The type of the members of the first chunk row of a packed log."""
    row = next(orjson.loads(line) for line in _lines(data)[1:] if orjson.loads(line).get("type") in ROW_SPECS)
    return str(decode_storage_record(row)[0]["type"])


@pytest.mark.req("JSONL-15")
@pytest.mark.parametrize(("name", "etype"), [("published", "step/start"), ("packed", None)])
def test_the_pass_follows_the_load_paths_registry_under_a_variant(name, etype, monkeypatch):
    """JSONL-15: which records the pass reads through the load path's reader is the load path's own test
    (`StoredReader.reads_apart`), not a list of the pass's. A variant of the published revision whose registry no
    longer knows a log-only type (a struct, or a packed row's members) makes the exact path refuse the log and the pass
    give up on it, at every level; with the registry as it is both accept it."""
    from sessionspec.reference.revision import rules_for

    data = READABLE[name]
    etype = etype or _member_type(data)
    assert all(fast is not None for fast in _never_looser_at(data, PUB))
    rules = rules_for(PUB)
    assert rules.load_known_types is not None and etype in rules.load_known_types
    monkeypatch.setattr(rules, "load_known_types", rules.load_known_types - {etype})
    _read_apart_variant(monkeypatch)
    for level in LEVELS:
        fast, exact, _checker = _at(data, level, PUB)
        assert "JSONL_UNKNOWN_TYPE" in {f.code for f in exact.findings}, level
        assert fast is None, level


@pytest.mark.req("JSONL-13")
@pytest.mark.parametrize(("name", "etype"), [("published", "step/start"), ("packed", None)])
def test_the_pass_follows_the_load_paths_upgrade_under_a_variant(name, etype, monkeypatch):
    """JSONL-13: a variant of the upgrade that also rewrites a log-only type (the type added to `UPGRADED_TYPES`, the
    datum the reader's dispatch, `UpgradeReader.reads_apart`, is decided from) is followed by the exact path and the
    pass alike: the pass reads those records through the reader too, and what it proves is the exact path's whole
    report, the rewritten records counted as upgraded."""
    from sessionspec.reference import upgrade

    data = READABLE[name]
    etype = etype or _member_type(data)
    original = upgrade.LoadUpgrade.rewrite

    def rewriting(self: Any, event: Any, session_id: str, ids: Any, where: Any) -> Any:
        if event.get("type") == etype:
            return {**event, "data": {**event["data"], "rewritten": True}}
        return original(self, event, session_id, ids, where)

    monkeypatch.setattr(upgrade, "UPGRADED_TYPES", upgrade.UPGRADED_TYPES | {etype})
    monkeypatch.setattr(upgrade.LoadUpgrade, "rewrite", rewriting)
    _read_apart_variant(monkeypatch)
    for level in LEVELS:
        _fast, exact, _checker = _at(data, level, PUB)
        assert exact.upgraded.get(etype), level
    _never_looser_at(data, PUB)  # (what the pass proves, it proves with the exact path's upgraded counts)
    for level in ("load",):
        fast, exact, _checker = _at(data, level, PUB)
        assert fast is not None and fast.upgraded == exact.upgraded, level


@pytest.mark.parametrize(("form", "etype"), [("unpacked", "step/start"), ("packed", None)])
def test_the_pass_follows_the_exact_paths_registered_types_under_a_variant(logs, form, etype, monkeypatch):
    """EVENT_TYPE_UNREGISTERED: the set of registered types is the exact path's (`Checker.registered_types`), not the
    pass's own: under a variant that no longer registers a log-only type (a struct, or a packed row's members), the
    exact path warns about it at the schema and strict levels and the pass gives up there; at the load level (no
    registry) both accept the log, and with the set as it is the pass proves it at every level."""
    data = logs[form]
    etype = etype or _member_type(data)
    assert all(_fast(data, level) is not None for level in LEVELS)
    original = Checker.registered_types

    def variant(self: Checker) -> frozenset[str] | None:
        found = original(self)
        return None if found is None else found - {etype}

    monkeypatch.setattr(Checker, "registered_types", variant)
    assert _fast(data, "load") is not None and not _exact(data, "load")
    for level in ("schema", "strict"):
        assert "EVENT_TYPE_UNREGISTERED" in {f.code for f in _exact(data, level)}, level
        assert _fast(data, level) is None, level


def _seq_at_middle(data: bytes, form: str) -> int:
    """The seq of a record in the middle of a log: a packed log's chunk row's first member, else any record's."""
    values = [orjson.loads(line) for line in _lines(data)[1:] if line]
    if form == "packed":
        rows = [v["seq0"] for v in values if v.get("type") in ROW_SPECS]
        return int(rows[len(rows) // 2])
    return int(values[len(values) // 2]["seq"])


@pytest.mark.req("JSONL-7")
@pytest.mark.parametrize("form", ["unpacked", "packed"])
def test_the_pass_follows_the_load_paths_numbering_under_a_variant(logs, form, monkeypatch):
    """JSONL-7: whether a record is in place is the load path's one statement (`jsonl_read.in_place`), not a seq test
    of the pass's: under a variant that never takes the record of one seq as in place (a plain record, or a packed
    row's first member), the load path's reading stops at its line, the exact path reports it, and the pass gives up,
    at every level; with the statement as it is the pass proves the log at every level."""
    from sessionspec.reference import jsonl_read

    data = logs[form]
    seq = _seq_at_middle(data, form)
    lines = _lines(data)[:-1]
    assert all(_fast(data, level) is not None for level in LEVELS)
    assert jsonl_read.whole_lines(lines, keep=False)[2] == len(lines)
    original = jsonl_read.in_place
    monkeypatch.setattr(jsonl_read, "in_place", lambda found, expected: original(found, expected) and found != seq)
    stop = jsonl_read.whole_lines(lines, keep=False)[2]
    assert stop < len(lines) and seq in {orjson.loads(lines[stop]).get(key) for key in ("seq", "seq0")}
    for level in LEVELS:
        assert "JSONL-7" in {f.requirement for f in _exact(data, level) if f.severity == "error"}, level
        assert _fast(data, level) is None, level


def _row_line_alone(data: bytes, at: int) -> bytes:
    """`data` with the `at`-th row line holding a quote written ``\\u0022``: valid, but neither written back by a struct
    nor proved in another writer's layout (`json_text.laid_out`), so the pass reads that line alone, as a dict
    (`_Pass.row`), while the other rows keep the typed path."""
    lines = _lines(data)
    rows = [k for k, raw in enumerate(lines) if b'"seq0"' in raw]
    k = rows[at]
    row = orjson.loads(lines[k])
    row["data"]["texts"][0] += '"'
    lines[k] = orjson.dumps(row).replace(b'\\"', b"\\u0022", 1)
    return b"\n".join(lines)


def _row_counts(data: bytes) -> list[tuple[int, int]]:
    """(row number, member count) of every row of a packed log."""
    rows = [orjson.loads(raw) for raw in _lines(data) if b'"seq0"' in raw]
    return [(k, len(row["data"]["dt"]) + 1) for k, row in enumerate(rows)]


@pytest.mark.req("CHUNK-9")
@pytest.mark.parametrize("entry", ["member_bounds", "row_shape"])
@pytest.mark.parametrize("path", ["typed", "dict"])
def test_the_pass_follows_the_chunk_row_rule_under_a_variant(logs, entry, path, monkeypatch):
    """CHUNK-9 is the rule table's two entries (`row_shape`, `member_bounds`), which the pass asks as the reference
    does, on a row decoded by its struct type (`typed`) and on a row read alone as a dict (`dict`): under a variant
    that refuses the rows of one member count (in the entry's own arguments), the exact path reports CHUNK-9 and
    the pass gives up at every level; with the entries as they are, the pass proves the log at every level."""
    from sessionspec.reference import rule_table
    from sessionspec.validator import fastlog

    data = logs["packed"]
    counts = _row_counts(data)
    at, count = counts[len(counts) // 2]
    assert sum(1 for _, n in counts if n == count) < len(counts)  # the variant refuses some rows, not all
    data = _row_line_alone(data, at) if path == "dict" else data
    taken: list[str] = []
    for name in ("row", "_typed_row", "_row_struct"):
        original = getattr(fastlog._Pass, name)
        monkeypatch.setattr(fastlog._Pass, name, lambda self, *a, _o=original, _n=name: (taken.append(_n), _o(self, *a))[1])
    assert all(_fast(data, level) is not None for level in LEVELS)
    assert ("row" in taken) == (path == "dict") and "_typed_row" in taken

    def refusing(own: Any) -> Any:
        if entry == "member_bounds":
            def bounds(row: Any, seqs: range, time0: int, dt: list[int]) -> Any:
                if len(seqs) == count:
                    raise ChunkRowError("malformed storage row: a variant's count", requirement="CHUNK-9")
                return own(row, seqs, time0, dt)
            return bounds

        def shape(value: Any, row: Any) -> Any:
            data, payload, dt = own(value, row)
            if len(payload) == count:
                raise ChunkRowError("malformed storage row: a variant's count", requirement="CHUNK-9")
            return data, payload, dt
        return shape

    with rule_table.use(rule_table.default().derive(entry, refusing)):
        for level in LEVELS:
            assert "CHUNK-9" in {f.requirement for f in _exact(data, level) if f.severity == "error"}, level
            assert _fast(data, level) is None, (level, entry, path)


@pytest.mark.req("SEED-18")
@pytest.mark.parametrize("etype", ["user/message", "assistant/message"])
def test_the_pass_reads_published_message_structs_through_the_load_paths_message_check(etype, monkeypatch):
    """SEED-18 / SEED-6 at the published revision: a message struct the generated types accept is read by the load
    path's reader, whose message shape's check is the one statement (`IdentifiedMessages.seed_problem`), before the
    struct's own surface step. The published messages take that struct step; under a variant of the check that refuses
    every message of the type, the exact path refuses the log and the pass gives up on it, at every level."""
    from sessionspec.reference.finding import Finding
    from sessionspec.reference.revision import rules_for
    from sessionspec.validator import fastlog

    data = READABLE["published"]
    assert all(fast is not None for fast in _never_looser_at(data, PUB))
    kinds = fastlog._struct_kinds(_PUB_SCHEMAS.fast_types, rules_for(PUB))
    assert {kind for cls, kind in kinds.items() if _PUB_SCHEMAS.fast_types.tags[cls] == etype} <= {
        fastlog._READ_SURFACE_EVENT, fastlog._READ_SURFACE_TYPED}
    shape = type(rules_for(PUB).messages)
    original = shape.seed_problem

    def refusing(self: Any, kind: str, data: object) -> Any:
        if kind == etype:
            return Finding("SEED_MESSAGE", "SEED-18", f"is a {kind} the variant refuses")
        return original(self, kind, data)

    monkeypatch.setattr(shape, "seed_problem", refusing)
    _read_apart_variant(monkeypatch)
    for level in LEVELS:
        fast, exact, _checker = _at(data, level, PUB)
        assert "SEED_MESSAGE" in {f.code for f in exact.findings}, level
        assert fast is None, level


def _seed_struct_kinds(revision: str, etype: str) -> set[int]:
    """The struct kinds of ``etype``'s generated structs at ``revision``."""
    from sessionspec.reference.revision import rules_for
    from sessionspec.validator import fastlog

    fast = (SCHEMAS if revision != PUB else _PUB_SCHEMAS).fast_types
    return {kind for cls, kind in fastlog._struct_kinds(fast, rules_for(revision)).items() if fast.tags[cls] == etype}


@pytest.mark.req("SEED-11")
@pytest.mark.parametrize(("name", "revision", "etype"), [
    ("published", PUB, "turn/end"), ("mixed", PUB, "request/header"),
    ("unpacked", "2f74ac98ba", "turn/end"), ("packed", "2f74ac98ba", "request/header")])
def test_the_pass_asks_the_rule_tables_seed_entry_of_a_seed_struct_under_a_variant(name, revision, etype, monkeypatch):
    """SEED-4 ... SEED-8 on a log-only struct whose seed rules look into its data (turn/end, request/header): its struct
    step (`_seed_struct`: the load path's reader, then the seed entry) asks the rule table's entry, as the dict path and
    the exact path do. Under a variant of the entry that refuses every record of the type, the exact path refuses the
    log and the pass gives up on it, at every level; under the reference's entry both accept it. (The pass leaves any
    log to the exact path under a variant of the entry, `test_the_pass_leaves_a_log_to_the_exact_path_under_a_variant_seed_entry`;
    that guard is lifted here, so that the struct step's own asking is what is tested.)"""
    from sessionspec.reference import rule_table
    from sessionspec.spec.errors import SeedError
    from sessionspec.validator import fastlog

    monkeypatch.setattr(fastlog, "is_own", lambda name: True)

    data = READABLE[name]
    assert any(orjson.loads(line).get("type") == etype for line in _lines(data)[1:] if line.strip())
    assert _seed_struct_kinds(revision, etype) == {fastlog._SEED_EVENT}
    assert all(fast is not None for fast in _never_looser_at(data, revision))
    def refusing(original: Any) -> Any:
        def entry(event: Any, index: int, rules: Any) -> Any:
            if event.get("type") == etype:
                raise SeedError(f"a {etype} the variant refuses", "SEED_ENVELOPE", requirement="SEED-3", index=index)
            return original(event, index, rules)
        return entry

    with rule_table.use(rule_table.default().derive("check_seed_entry", refusing)):
        for level in LEVELS:
            fast, exact, _checker = _at(data, level, revision)
            assert any("the variant refuses" in f.message for f in exact.findings), level
            assert fast is None, level


@pytest.mark.req("JSONL-13")
@pytest.mark.parametrize("etype", ["user/message", "turn/end"])
def test_the_pass_takes_an_upgraded_struct_by_the_dict_paths_rules(etype, monkeypatch):
    """JSONL-13: a published struct read by the load path's reader (a user/message: the message structs' step; a
    turn/end: the seed struct step) that a variant of the upgrade rewrites (a member added) is read as the reader
    returns it: the pass proves what the exact path reports, the rewritten records counted as upgraded."""
    from sessionspec.reference import upgrade
    from sessionspec.validator import fastlog

    data = READABLE["published"]
    if etype == "turn/end":
        assert _seed_struct_kinds(PUB, etype) == {fastlog._SEED_EVENT}
    original = upgrade.LoadUpgrade.rewrite

    def rewriting(self: Any, event: Any, session_id: str, ids: Any, where: Any) -> Any:
        if event.get("type") == etype:
            return {**event, "data": {**event["data"], "rewritten": True}}
        return original(self, event, session_id, ids, where)

    monkeypatch.setattr(upgrade.LoadUpgrade, "rewrite", rewriting)
    _read_apart_variant(monkeypatch)
    _never_looser_at(data, PUB)
    fast, exact, _checker = _at(data, "load", PUB)
    assert exact.upgraded.get(etype)
    assert fast is not None and fast.upgraded == exact.upgraded


@pytest.mark.req("JSON-2", "JSON-12")
@pytest.mark.parametrize("form", ["unpacked", "packed"])
def test_the_pass_takes_lossless_json_by_the_references_statement_under_a_variant(logs, form, monkeypatch):
    """JSON-2/JSON-12: which lines are lossless JSON is the reference's one statement (`json_text.lossless`, of many
    lines `json_text.first_lossy_line`), by which `json_text.loads` takes a fast reader's value too, not a round trip
    of the pass's: under a variant that no longer calls a step/start line lossless, the exact path and the pass both
    ask it of each such line, are refused, read the line through the exact reader and agree on the report; with the
    statement as it is the pass takes every line of the log from the structs by the batch form alone."""
    from sessionspec.reference import json_text

    data = logs[form]
    marked = {raw for raw in _lines(data) if raw.startswith(b'{"type":"step/start"')}
    assert marked
    lossless, first_lossy_line = json_text.lossless, json_text.first_lossy_line
    asked: list[bytes] = []
    refused: set[bytes] = set()

    def asking(text: bytes, encoded: bytes, *, negative_zero: bool = True) -> bool:
        asked.append(text)
        return lossless(text, encoded, negative_zero=negative_zero)

    monkeypatch.setattr(json_text, "lossless", asking)
    for level in LEVELS:
        assert not _exact(data, level), level
        asked.clear()
        assert _fast(data, level) is not None and not marked & set(asked), level  # (the batch form decided)

    def variant(text: bytes, encoded: bytes, *, negative_zero: bool = True) -> bool:
        if b'"type":"step/start"' in text:
            refused.add(text)
            return False
        return lossless(text, encoded, negative_zero=negative_zero)

    def variant_lines(text: bytes, pos: int, encoded: bytes, at: int, *, negative_zero: bool = True) -> int | None:
        first = first_lossy_line(text, pos, encoded, at, negative_zero=negative_zero)
        marked_at = text.find(b'{"type":"step/start"', pos)
        if marked_at < 0 or (first is not None and first <= marked_at):
            return first
        return marked_at if marked_at == 0 or text[marked_at - 1:marked_at] == b"\n" else first

    monkeypatch.setattr(json_text, "lossless", variant)
    monkeypatch.setattr(json_text, "first_lossy_line", variant_lines)
    for level in LEVELS:
        refused.clear()
        exact = _exact(data, level)
        assert marked <= refused, level  # the exact path asks it of each marked line (`loads`)
        refused.clear()
        fast = _fast(data, level)
        assert marked <= refused, level  # the pass too
        assert fast is not None and not exact, level


@pytest.mark.req("REPAIR-6")
@pytest.mark.parametrize("form", ["unpacked", "packed"])
def test_the_pass_asks_the_crash_tail_of_the_references_closers_under_a_variant(logs, form):
    """REPAIR-6: whether a log ends inside a turn is the reference's closers (the rule table's
    `interrupted_turn_closers`), asked of the events from the last turn boundary on (`repair.TURN_BOUNDARIES`), not an
    open-turn flag of the pass's: under a variant that also closes a turn its turn/end completed, the exact path
    warns on the closed log and the pass reports the same warning; with the closers as they are neither does, and
    on a log cut inside a turn both report the reference's warning."""
    from sessionspec.reference import rule_table

    data = logs[form]
    default = rule_table.current()["interrupted_turn_closers"]

    def closing_too(events: Any, revision: Any = None) -> Any:
        found = default(events, revision)
        last = events[-1] if events else None
        if found or last is None or last.get("type") != "turn/end":
            return found
        return [{"type": "turn/end", "seq": last["seq"] + 1, "time": last["time"],
                 "data": {"turn": last["data"]["turn"], "reason": {"kind": "interrupted"}}}]

    def report(findings: Any) -> list[tuple[Any, ...]]:
        return [(f.code, f.line, f.seq, f.message) for f in findings]

    lines = _lines(data)
    cut = next(i for i in range(len(lines) - 2, 0, -1) if b'"type":"step/end"' in lines[i])
    crashed = b"\n".join(lines[: cut + 1]) + b"\n"
    for level in LEVELS:
        fast, exact = _fast(crashed, level), _exact(crashed, level)
        assert fast is not None and report(fast.findings) == report(exact) and report(exact)[0][0] == "REPAIR_NEEDED"
        fast = _fast(data, level)
        assert fast is not None and fast.findings == [] and not _exact(data, level), level
    with rule_table.use(rule_table.current().extend(interrupted_turn_closers=closing_too)):
        for level in LEVELS:
            exact, fast = _exact(data, level), _fast(data, level)
            assert [f.code for f in exact] == ["REPAIR_NEEDED"], level
            assert fast is not None and report(fast.findings) == report(exact), level


def _times_at(data: bytes, time: int, dip: str) -> bytes:
    """`data` with every record's time ``time`` (a row's gaps 0), but for one dip to ``time - 1`` in the middle: a
    middle member of a row of three or more (``dip`` "row") or a plain record (``dip`` "record")."""
    lines = _lines(data)
    values = [orjson.loads(line) for line in lines[1:-1]]
    rows = [k for k, v in enumerate(values) if v.get("type") in ROW_SPECS and len(v["data"]["dt"]) >= 2]
    plain = [k for k, v in enumerate(values) if v.get("type") not in ROW_SPECS and "surfaceOp" not in v]
    at = (rows if dip == "row" else plain)[len(rows if dip == "row" else plain) // 2]
    for k, value in enumerate(values):
        if value.get("type") in ROW_SPECS:
            value["time0"] = time
            value["data"]["dt"] = [-1, 1, *[0] * (len(value["data"]["dt"]) - 2)] if k == at else [0] * len(value["data"]["dt"])
        else:
            value["time"] = time - 1 if k == at else time
    return b"\n".join([lines[0], *map(orjson.dumps, values), b""])


@pytest.mark.req("SEED-3")
@pytest.mark.parametrize("dip", ["row", "record"])
def test_the_pass_follows_the_envelopes_time_bound_under_a_variant(logs, dip):
    """SEED-3: the envelope's seq and time bounds are the revision's one statement of them (`Rules.seq_range`,
    `Rules.time_range`), which the envelope rule tests of each event and the pass tests of its generated types and of
    a packed row's lowest and highest member: on a log whose times all are 1000 but for one 999 (a row's middle member,
    or a plain record), under revision rules whose least time is 1000 the exact path reports that event's time and the
    pass gives up, at every level; under the revision's own rules both find nothing."""
    from sessionspec.reference.revision import rules_for

    data = _times_at(logs["packed" if dip == "row" else "unpacked"], 1000, dip)
    own = rules_for(None)
    variant = copy.copy(own)
    variant.time_range = (1000, own.time_range[1])
    for level in LEVELS:
        fast, exact, _checker = _at(data, level, own)
        assert fast is not None and fast.findings == [] and not exact.findings, level
        fast, exact, _checker = _at(data, level, variant)
        assert {(f.code, f.pointer) for f in exact.findings if f.severity == "error"} == {("SEED_ENVELOPE", "/time")}, level
        assert fast is None, (level, dip)


@pytest.mark.req("CHUNK-11", "JSONL-7")
@pytest.mark.parametrize("path", ["typed", "dict"])
def test_the_pass_numbers_a_rows_members_by_the_rule_tables_entry_under_a_variant(logs, path):
    """CHUNK-11 / JSONL-7: a row's members are numbered by the rule table's `member_seqs` and placed by
    `jsonl_read.row_in_place`, which the load path and the pass both ask (of a row decoded by its struct type, or read
    alone as a dict): under a variant that numbers the rows of one member count from one past their seq0, the exact
    path reports the numbering and the pass gives up, at every level; with the entry as it is both find nothing."""
    from sessionspec.reference import rule_table

    data = logs["packed"]
    counts = _row_counts(data)
    at, count = counts[len(counts) // 2]
    assert sum(1 for _, n in counts if n == count) < len(counts)  # the variant renumbers some rows, not all
    data = _row_line_alone(data, at) if path == "dict" else data
    assert all(_fast(data, level) is not None and not _exact(data, level) for level in LEVELS)

    def late(own: Any) -> Any:
        return lambda seq0, n: own(seq0 + 1 if n == count else seq0, n)

    with rule_table.use(rule_table.default().derive("member_seqs", late)):
        for level in LEVELS:
            assert "JSONL-7" in {f.requirement for f in _exact(data, level) if f.severity == "error"}, level
            assert _fast(data, level) is None, (level, path)


@pytest.mark.req("JSONL-3")
@pytest.mark.parametrize("form", ["unpacked", "packed"])
def test_the_pass_gives_up_on_crlf_by_the_load_paths_statement_under_a_variant(logs, form, monkeypatch):
    """JSONL-3: which text may hold a CRLF line end is the load path's one statement (`jsonl_read.may_hold_crlf`),
    before it counts them and warns: on a log whose lines end in CRLF the exact path warns and the pass gives up; under
    a variant that never takes text to hold one, the exact path does not warn and the pass proves the log."""
    from sessionspec.reference import jsonl_read

    data = logs[form].replace(b"\n", b"\r\n")
    for level in LEVELS:
        exact = _exact(data, level)
        assert [f.code for f in exact] == ["JSONL_CRLF"], level
        fast = _fast(data, level)  # (the warning is the load path's too: `jsonl_read.crlf_finding`)
        assert fast is not None and [f.to_json() for f in fast.findings] == [f.to_json() for f in exact], level
    monkeypatch.setattr(jsonl_read, "may_hold_crlf", lambda data: False)
    for level in LEVELS:
        assert not _exact(data, level), level
        fast = _fast(data, level)
        assert fast is not None and fast.findings == [], (level, form)


@pytest.mark.req("SEED-9")
def test_the_form_of_a_file_is_the_load_paths_one_statement(logs, monkeypatch):
    """SEED-9: whether a file is a JSON array of events or a JSONL artifact is the load path's one statement
    (`jsonl_read.holds_event_array`: `[` first after a byte order mark and JSON whitespace), which revision detection
    and the pass ask too: an array led by a byte order mark or a CR is an array to it, and detection finds the same
    evidence in a CR-led array as in the array; under a variant
    that takes every file for an array, the exact path reads the JSONL log as one (and refuses it), detection finds no
    record, and the pass gives up."""
    from sessionspec.reference import jsonl_read
    from sessionspec.validator.detect import detect_in_bytes

    data = logs["unpacked"]
    events = [orjson.loads(line) for line in _lines(data)[1:] if line]
    array = orjson.dumps(events)
    for led in (b"\xef\xbb\xbf", b" \r\n", b""):
        assert jsonl_read.holds_event_array(led + array) and not jsonl_read.holds_event_array(led + data)
    assert not jsonl_read.holds_event_array(b"\x0c" + array)  # (not JSON whitespace)
    assert _fast(data, "load") is not None and detect_in_bytes(data).evidence
    assert detect_in_bytes(b" \r\n" + array).evidence == detect_in_bytes(array).evidence != ()
    monkeypatch.setattr(jsonl_read, "holds_event_array", lambda data: True)
    assert any(f.severity == "error" for f in _exact(data, "load"))
    assert _fast(data, "load") is None
    assert detect_in_bytes(data).evidence == ()


@pytest.mark.req("JSONL-2")
@pytest.mark.parametrize("form", ["unpacked", "packed"])
def test_the_pass_reads_the_header_line_by_the_load_paths_reading_under_a_variant(logs, form, monkeypatch):
    """JSONL-2: the first line is read by the load path's one reading (`jsonl_read.read_header_line`, every-defect
    mode), not by a parse of the pass's: under a variant of the reading that finds the header line of session `s1` at
    fault, the exact path reports it and the pass gives up, at every level; with the reading as it is both find
    nothing."""
    from sessionspec.reference import jsonl_read
    from sessionspec.reference.finding import Finding

    data = logs[form]
    assert all(_fast(data, level) is not None and not _exact(data, level) for level in LEVELS)
    original = jsonl_read.read_header_line

    def faulting(data: bytes, *args: Any, **kwargs: Any) -> Any:
        reading = original(data, *args, **kwargs)
        if reading.ok and reading.value.get("id") == "s1":
            fault = Finding("JSONL_BAD_HEADER", "JSONL-2", "a variant's fault", line=1)
            return reading._replace(ok=False, findings=[*reading.findings, fault])
        return reading

    monkeypatch.setattr(jsonl_read, "read_header_line", faulting)
    for level in LEVELS:
        assert "JSONL_BAD_HEADER" in {f.code for f in _exact(data, level)}, level
        assert _fast(data, level) is None, (level, form)


@pytest.mark.req("JSONL-12")
@pytest.mark.parametrize("form", ["unpacked", "packed"])
def test_the_pass_refuses_a_record_by_the_load_paths_statement_under_a_variant(logs, form, monkeypatch):
    """JSONL-12: which stored record the load path refuses the log for is its one statement (`jsonl.is_legacy_record`:
    a retired type or a rejected request header), which the pass asks of the records it reads: under a variant that
    also refuses every turn/end, the exact path reports the log and the pass gives up, at every level."""
    from sessionspec.reference import jsonl

    data = logs[form]
    assert all(_fast(data, level) is not None for level in LEVELS)
    original = jsonl.is_legacy_record
    monkeypatch.setattr(jsonl, "is_legacy_record",
                        lambda event, legacy=None: original(event, legacy) or event.get("type") == "turn/end")
    for level in LEVELS:
        assert "JSONL-12" in {f.requirement for f in _exact(data, level) if f.severity == "error"}, level
        assert _fast(data, level) is None, (level, form)


@pytest.mark.req("SEED-11", "SEED-6")
@pytest.mark.parametrize("form", ["unpacked", "packed"])
def test_the_pass_leaves_a_log_to_the_exact_path_under_a_variant_seed_entry(logs, form):
    """SEED-11: what the generated types prove of the seed rules (the envelope of every type, SEED-6 of a flat
    assistant message, that no other seed rule looks into a type's data) is proved about the reference's own seed entry
    (`rule_table.is_own`): under a variant of the entry that refuses every assistant/message, the exact path refuses the
    log and the pass gives up, at every level, though the assistant messages' structs take no step that asks the
    entry."""
    from sessionspec.reference import rule_table
    from sessionspec.spec.errors import SeedError

    data = logs[form]
    assert all(_fast(data, level) is not None for level in LEVELS)

    def refusing(own: Any) -> Any:
        def entry(event: Any, index: int, *rest: Any) -> Any:
            if isinstance(event, dict) and event.get("type") == "assistant/message":
                raise SeedError("an assistant/message the variant refuses", "SEED_PROVENANCE", requirement="SEED-6")
            return own(event, index, *rest)
        return entry

    with rule_table.use(rule_table.default().derive("check_seed_entry", refusing)):
        for level in LEVELS:
            assert "SEED_PROVENANCE" in {f.code for f in _exact(data, level)}, level
            assert _fast(data, level) is None, (level, form)


def _log_events(name: str) -> list[Any]:
    found = []
    for raw in READABLE[name].splitlines()[1:]:
        if raw.strip():
            found.extend(decode_storage_record(orjson.loads(raw)))
    return found


# (published events, read by the published revision's structs in the pass; pinned events, parsed: fed as values)
_PUBLISHED_EVENTS = [*_log_events("published"),  # and types only the published revision registers (allowed outside
                     *({"type": t, "data": {}} for t in ("compaction/start", "compaction/end", "goal/change"))]  # a turn)
_PINNED_EVENTS = [e for e in _log_events("unpacked") if e["type"] in ("turn/start", "user/message", "turn/end")]
_FIRST = {t: next(e for e in _PUBLISHED_EVENTS if e["type"] == t)
          for t in ("turn/start", "user/message", "turn/end", "compaction/start")}
#: turn/start settles on its third line (its examples and what it is beyond recorded): the compaction after it is inside
_SETTLED_TURN = [(True, _FIRST[t]) for t in ("turn/start", "user/message", "user/message", "turn/end", "turn/start",
                                             "turn/end", "turn/start", "compaction/start", "turn/end")]

#: compaction/start settles on its second line: met again outside a turn, its place is evidence again
_SETTLED_OUTSIDE = [(True, _FIRST[t]) for t in ("compaction/start", "compaction/start", "turn/start", "user/message",
                                                "turn/end", "compaction/start")]


@example(events=_SETTLED_TURN)
@example(events=_SETTLED_OUTSIDE)
@given(st.lists(st.one_of(st.tuples(st.just(True), st.sampled_from(_PUBLISHED_EVENTS)),
                          st.tuples(st.just(False), st.sampled_from(_PINNED_EVENTS))), max_size=60))
def test_detection_fed_structs_counts_what_detection_fed_values_counts(events):
    """`InlineDetection.struct_feeder` (the pass's structs, counted in bulk once their type only counts) gives the
    detection `feed` gives for the same lines, whatever the order: a settled type met again outside a turn, a turn
    boundary between, examples still to record, earlier-format lines parsed between."""
    from sessionspec.validator.detect import InlineDetection

    classes = {t: type(f"S{i}", (), {}) for i, t in enumerate(sorted({e["type"] for _, e in events}))}
    tags = {cls: t for t, cls in classes.items()}
    by_values, by_structs = InlineDetection(), InlineDetection()
    feed = by_structs.struct_feeder(tags, lambda obj: obj.event.get("data"), PUB)
    for number, (published, event) in enumerate(events, 2):
        by_values.feed(number, event, PUB if published else None)
        if published:
            obj = classes[event["type"]]()
            obj.event = event
            feed(number, obj)
        else:
            by_structs.feed(number, event)
    assert by_structs.result() == by_values.result()
