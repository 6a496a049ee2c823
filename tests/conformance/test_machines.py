"""The differential state machines (`sessionspec conformance --fuzz N`).

They must agree with the reference when the reference is the implementation
(in-process and through the subprocess adapter), catch an implementation
that answers differently, save a trace that `sessionspec replay` re-runs,
and declare the requirements each rule checks.

Quick profile by default; HYPOTHESIS_PROFILE=fuzz runs the machines deeper.
"""

from __future__ import annotations

import functools
import io
import itertools
import os
import shlex
import sys
from pathlib import Path

import pytest
from conformance_fakes import REFERENCE_CMD, broken_cmd
from sessionspec import cli
from sessionspec.conformance import fuzz, machines
from sessionspec.conformance import generators as gen
from sessionspec.conformance.coverage import coverage, load_requirements
from sessionspec.conformance.harness import Implementation, InProcessConnection, connector_for
from sessionspec.conformance.runner import start_implementation
from sessionspec.conformance.trace import read_trace
from sessionspec.reference import SteppingClock
from sessionspec.spec import load_spec

DEEP = os.environ.get("HYPOTHESIS_PROFILE") == "fuzz"
EXAMPLES = 200 if DEEP else 6
STEPS = 25 if DEEP else 10


def _in_process() -> Implementation:
    impl = Implementation(InProcessConnection)
    impl.start()
    return impl


def _run(connect, tmp_path: Path, **options) -> tuple[list[dict], str]:
    out = io.StringIO()
    options.setdefault("examples", EXAMPLES)
    options.setdefault("steps", STEPS)
    failures = machines.run(connect=connect, trace_dir=tmp_path / "traces", out=out, derandomize=not DEEP, **options)
    return failures, out.getvalue()


@pytest.mark.parametrize("name", sorted(machines.MACHINES))
def test_each_machine_agrees_with_the_in_process_reference(name, tmp_path):
    """The CI-quick profile's runs of the machine (the deep profile under HYPOTHESIS_PROFILE=fuzz).

    Quick: the old profile's derandomised run is kept, and the fixed-seed runs added to it show
    behaviours (rule label, the reference's result or rejection code) that run does not."""
    if DEEP:
        failures, out = _run(_in_process, tmp_path, machines=[name])
        assert failures == [], out
        assert f"fuzz: {name}: passed" in out
        return
    runs = [r for r in machines.QUICK if r.machine == name]
    old = machines.QuickRun(name, None, 6, 10)
    assert old in runs
    seen: dict[machines.QuickRun, set] = {}
    for run in runs:
        out = io.StringIO()
        seen[run] = set()
        failures = machines.run_quick(connect=_in_process, trace_dir=tmp_path / "traces", out=out, runs=[run],
                                      behaviours=seen[run])
        assert failures == [] and f"fuzz: {name}: passed" in out.getvalue(), out.getvalue()
    assert not (tmp_path / "traces").exists()
    added = set().union(*seen.values()) - seen[old]
    assert (len(added) > 0) == (len(runs) > 1), added
    if name == "session":
        labels = {label for label, _ in set().union(*seen.values())}
        assert {f"session.append_invalid.{k}" for k in gen.INVALID_APPEND_KINDS} <= labels
        assert len(added) >= len(seen[old])  # the profile at least doubles what the session machine shows
    if name == "persistence":  # PERSIST-5's non-JSON batch, through both writers (bench/quick_profile.py REQUIRED)
        assert {("persistence.script", "append:PERSIST_DATA_NOT_JSON"),
                ("persistence.script", "append/second:PERSIST_DATA_NOT_JSON")} <= set().union(*seen.values())


def _requests_of(machine: str, seed: int, tmp_path: Path, examples: int = 2, steps: int = 5,
                 focus: tuple[str, ...] | None = None) -> list[tuple[str, dict]]:
    impl, sent = _recording_without()
    machines.run_quick(connect=lambda: impl, trace_dir=tmp_path, out=io.StringIO(),
                       runs=[machines.QuickRun(machine, seed, examples, steps, focus)])
    return sent


@pytest.mark.parametrize(("machine", "seeds"), [("session", range(1, 21)), ("fork", range(1, 6)),
                                                ("storage", range(1, 6)), ("store", range(1, 4)),
                                                ("persistence", range(1, 3))])
def test_a_fixed_seed_repeats_its_requests_and_seeds_differ(machine, seeds, tmp_path):
    """Every seed, not one: the reference's clock is injected (its event times feed later requests:
    replay, fork, store) and every module Hypothesis takes constants from is loaded before the first
    draw, so the same seed sends the same requests however often and in whatever order it runs."""
    first = {seed: _requests_of(machine, seed, tmp_path) for seed in seeds}
    for seed in reversed(seeds):
        assert _requests_of(machine, seed, tmp_path) == first[seed], seed
    sent = [repr(requests) for requests in first.values() if requests]
    assert len(sent) >= len(first) // 2 and len(set(sent)) == len(sent)


def _published_requests_of(machine: str, seed: int, tmp_path: Path) -> list[tuple[str, dict]]:
    """The requests a machine sends at the published revision (an in-process reference serving it)."""
    impl = Implementation(functools.partial(InProcessConnection, revision=PUBLISHED))
    impl.start()
    sent: list[tuple[str, dict]] = []
    request = impl.request

    def record(op, args):
        sent.append((op, args))
        return request(op, args)

    impl.request = record  # type: ignore[method-assign]
    machines.run_quick(connect=lambda: impl, trace_dir=tmp_path, out=io.StringIO(), revision=PUBLISHED,
                       runs=[machines.QuickRun(machine, seed, 2, 5, None)])
    return sent


PUBLISHED = "b150a551b8"


@pytest.mark.parametrize(("machine", "seeds"), [("session", range(1, 13)), ("fork", range(1, 4)),
                                                ("storage", range(1, 4)), ("store", range(1, 3)),
                                                ("persistence", range(1, 3))])
def test_a_fixed_seed_repeats_its_requests_at_the_published_revision(machine, seeds, tmp_path):
    """The same at the published revision (other payload shapes, the seed-end marker, the upgrade): its
    generators draw from that revision's registry and the reference's clock is still the injected one."""
    first = {seed: _published_requests_of(machine, seed, tmp_path) for seed in seeds}
    for seed in reversed(seeds):
        assert _published_requests_of(machine, seed, tmp_path) == first[seed], seed
    sent = [repr(requests) for requests in first.values() if requests]
    assert len(sent) >= len(first) // 2 and len(set(sent)) == len(sent)


def test_with_the_wall_clock_a_fixed_seed_would_not_repeat(tmp_path, monkeypatch):
    """The repeat tests can fail: a reference clock that starts elsewhere on each run (as the wall clock
    does) changes the requests of some seed of 1..12, since the reference's event times feed later
    requests (its log replayed as a seed, forked, stored)."""
    starts = itertools.count(1_785_000_000_000, 7_919)
    monkeypatch.setattr(machines, "SteppingClock", lambda: SteppingClock(next(starts)))
    differ = [seed for seed in range(1, 13) if _requests_of("session", seed, tmp_path) != _requests_of(
        "session", seed, tmp_path)]
    assert differ != []


@pytest.mark.parametrize("revision", [None, PUBLISHED])
def test_every_request_of_every_machine_is_inside_the_op_schemas(revision, tmp_path):
    """Every request every machine sends, at both revisions and for several seeds, is valid under the
    protocol's op schemas (the bad values the machines send are inside the op's `args`, never a broken
    request)."""
    from sessionspec.conformance.protocol import validate_request

    checked = 0
    for machine in machines.MACHINES:
        for seed in range(1, 5):
            sent = (_requests_of(machine, seed, tmp_path) if revision is None
                    else _published_requests_of(machine, seed, tmp_path))
            for op, args in sent:
                validate_request({"seq": 1, "op": op, "args": args})
                checked += 1
    assert checked >= 100


@pytest.mark.parametrize("revision", ["2f74ac98ba", PUBLISHED])
def test_generated_headers_and_request_headers_stay_inside_their_schemas(revision):
    """`header_variant(..., "valid")` is a header of the session-header schema, and `request_header_data`
    a payload of its schema but for the legacy keys its docstring names (a registry invalid example's)."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    spec = load_spec(revision=revision)
    header = spec.validator(gen.SCHEMA + "session/session-header.json")
    payload = spec.validator(gen.SCHEMA + "payload/request/header.json")
    previous = gen.REVISION
    gen.use_revision(revision)
    try:
        known = set(gen._resolve(gen._resolve(gen.schema("payload/request/header.json"))["properties"]["header"])
                    ["properties"])
        legacy = {k for e in gen.INVALID_EVENTS if e["type"] == gen.REQUEST_HEADER and isinstance(e.get("data"), dict)
                  and isinstance(e["data"].get("header"), dict) for k in e["data"]["header"]} - known
        assert legacy  # the invalid examples hold a legacy key

        @settings(max_examples=150, database=None, derandomize=True, suppress_health_check=list(HealthCheck))
        @given(st.data())
        def check(data):
            drawn = gen.header_variant(data.draw, "s1", "valid")
            assert list(header.iter_errors(drawn)) == [], drawn
            request = gen.request_header_data(data.draw)
            extra = set(request["header"]) - known
            assert extra <= legacy, extra
            if not extra:
                assert list(payload.iter_errors(request)) == [], request

        check()
    finally:
        gen.use_revision(previous)


def test_every_request_the_machines_send_is_inside_its_schemas(tmp_path):
    """Generated values stay inside the schema their generator promises: every request is valid
    under the protocol's op schemas, and the header edits of `header-equals` stay inside the
    epoch-header schema when the header they edit is inside it (a float config value once became
    the string f"{value}x")."""
    from sessionspec.conformance.protocol import validate_request

    epoch = load_spec().validator("https://sessionspec.dev/schema/type/epoch-header.json")
    edits = 0
    for seed in range(1, 13):
        for op, args in _requests_of("session", seed, tmp_path, 3, 8, ("header_views",)):
            validate_request({"seq": 1, "op": op, "args": args})
            if op == "header-equals" and epoch.is_valid(args["a"]):
                assert list(epoch.iter_errors(args["b"])) == [], (args["a"], args["b"])
                edits += args["a"] != args["b"]
    assert edits >= 10


def test_a_changed_value_stays_inside_its_schema():
    from jsonschema import Draft202012Validator

    cases = [({"type": "number"}, 0.5), ({"type": "number", "maximum": 1}, 1), ({"type": "integer", "minimum": 0,
              "maximum": 0}, 0), ({"type": "string", "minLength": 1}, "a"), ({"type": "string", "maxLength": 1}, "ab"),
             ({"type": "array", "items": {"type": "string"}}, []), ({"enum": ["a", "b"]}, "a"), ({"const": 1}, 1),
             ({"type": "array", "items": {"type": "integer"}, "maxItems": 1}, [3]),
             ({"type": "number", "exclusiveMaximum": 1.5}, 0.75), ({"type": "integer", "exclusiveMinimum": 0,
              "exclusiveMaximum": 2}, 1), ({"type": "integer", "multipleOf": 5, "maximum": 10}, 10),
             ({"type": "number", "multipleOf": 0.25}, 0.5), ({"type": "number", "exclusiveMinimum": 0, "maximum": 1}, 1)]
    for node, value in cases:
        changed = gen.changed_value(value, node)
        assert Draft202012Validator(node).is_valid(changed), (node, value, changed)
    assert gen.changed_value(0.5, {"type": "number"}) == 1.5
    assert gen.changed_value(10, {"type": "integer", "multipleOf": 5, "maximum": 10}) == 5
    assert gen.changed_value(0.75, {"type": "number", "exclusiveMaximum": 1.5}) == -0.25
    assert gen.changed_value("a", {"enum": ["a", "b"]}) == "b"


def test_the_machines_agree_with_the_reference_adapter_process(tmp_path):
    """End to end through the pipe: every machine, one adapter process (restarted only on failure)."""
    failures, out = _run(lambda: start_implementation(connector_for(REFERENCE_CMD), 30.0), tmp_path,
                         examples=3, steps=8)
    assert failures == [], out
    assert out.count("passed (") == len(machines.MACHINES)


def test_a_wrong_implementation_is_caught_with_a_replayable_minimal_trace(tmp_path):
    wrong = broken_cmd("--wrong")  # answers every json-value request with the opposite
    failures, out = _run(lambda: start_implementation(connector_for(wrong), 30.0), tmp_path,
                         machines={"session": ["json_value"]}, examples=10, shrink=True)
    assert len(failures) == 1
    failure = failures[0]
    assert failure["machine"] == "session" and failure["rule"] == "session.json_value"
    assert "JSON-2" in failure["requirements"]
    path = Path(failure["trace"])
    assert path.exists() and str(path) in out and "sessionspec replay" in out
    # The progress line's replay hint names the real adapter command, shell-quoted: it runs as printed.
    hint = next(line for line in out.splitlines() if "re-run it with: " in line).partition("re-run it with: ")[2]
    assert "COMMAND" not in hint
    assert shlex.split(hint) == ["sessionspec", "replay", str(path), "--impl", shlex.join(shlex.split(wrong))]
    header, steps = read_trace(path)
    assert header["origin"] == "sessionspec conformance --fuzz"
    assert len(steps) == 1  # shrunk to the one request that differs
    assert steps[0].op == "json-value" and steps[0].actual is not None
    replay_out, replay_err = io.StringIO(), io.StringIO()
    assert cli.run(["replay", str(path), "--impl", wrong], replay_out, replay_err) == 1
    assert "0 of 1 steps match" in replay_out.getvalue()
    assert cli.run(["replay", str(path)], io.StringIO(), io.StringIO()) == 0


def test_the_replay_hint_quotes_every_word_and_names_no_impl_for_the_in_process_reference():
    command = shlex.join(["node", "my adapter.mjs", "--name=it's"])
    hint = machines.replay_hint("traces/a b.jsonl", command)
    assert shlex.split(hint) == ["sessionspec", "replay", "traces/a b.jsonl", "--impl", command]
    assert shlex.split(machines.replay_hint("t.jsonl", None)) == ["sessionspec", "replay", "t.jsonl"]
    assert "\\n" in machines.replay_hint("t\n.jsonl", None) and "\n" not in machines.replay_hint("t\n.jsonl", None)


def test_two_distinct_failures_of_one_machine_are_both_reported_with_their_traces(tmp_path):
    """The first failure does not hide the next: each distinct one is shrunk and saved."""
    wrong = broken_cmd("--wrong-find", "--wrong-paths")
    failures, out = _run(lambda: start_implementation(connector_for(wrong), 30.0), tmp_path,
                         machines={"storage": ["find", "paths"]}, examples=12, steps=4)
    by_rule = {f["rule"]: f for f in failures}
    assert set(by_rule) == {"storage.find", "storage.paths"}, out
    assert "FIND-1" in by_rule["storage.find"]["requirements"]
    assert by_rule["storage.paths"]["pointer"] == "/path" and by_rule["storage.find"]["pointer"] == "/index"
    for f in failures:
        header, steps = read_trace(Path(f["trace"]))
        assert len(steps) == 1 and steps[0].note == f["rule"]
    assert "fuzz: storage: 2 distinct failure(s)" in out


def test_known_fuzz_differences_are_set_aside_and_strict(tmp_path):
    """A listed difference does not fail the run and does not hide the others; one never
    matched is reported, and fails a deep run."""
    from collections import Counter

    from sessionspec.conformance.expectations import FuzzExpectation
    from sessionspec.conformance.fuzz import FuzzResult

    wrong = broken_cmd("--wrong-find", "--wrong-paths")
    known = (FuzzExpectation("paths differ on purpose", rule="storage.paths", pointer="/path"),
             FuzzExpectation("never happens", rule="storage.pack"))
    seen: Counter[int] = Counter()
    failures, out = _run(lambda: start_implementation(connector_for(wrong), 30.0), tmp_path,
                         machines={"storage": ["find", "paths"]}, examples=12, steps=4, known=known, seen=seen)
    assert [f["rule"] for f in failures] == ["storage.find"], out
    assert seen[0] > 0 and seen[1] == 0
    assert "known difference(s) set aside" in out
    shallow = FuzzResult(failures, [], [known[1].describe()], strict=False)
    deep = FuzzResult(failures, [], [known[1].describe()], strict=True)
    assert shallow.problems == [] and "never happens" in deep.problems[0]


def test_a_crash_met_by_a_machine_is_a_failure_keyed_by_its_class():
    from sessionspec.conformance.compare import judge

    expected = {"rejected": {"code": "SEED_ENVELOPE", "index": 0}}
    reply = {"seq": 1, "kind": "crashed", "class": "TypeError", "message": "null"}
    verdict = judge("load", {"seed": [None]}, expected, reply)
    assert verdict.outcome == "crashed"
    signature = machines._signature("session", "session.seed_invalid", "load", expected, reply, verdict, {})
    assert signature["expectedCode"] == "SEED_ENVELOPE" and signature["actualCode"] == "crashed:TypeError"
    assert "SEED-2" in signature["requirements"]


def test_an_implementation_without_a_capability_is_not_compared_on_it(tmp_path):
    caps_less = broken_cmd("--no-caps")
    failures, out = _run(lambda: start_implementation(connector_for(caps_less), 30.0), tmp_path,
                         machines={"storage": ["pack", "find"]}, examples=2, steps=5)
    assert failures == []
    assert "fuzz: storage: skipped" in out


def _recording_without(*capabilities: str) -> tuple[Implementation, list[tuple[str, dict]]]:
    """An in-process reference that does not claim ``capabilities``; records what it is sent."""
    impl = _in_process()
    impl.info = {**impl.info, "capabilities": [c for c in impl.info["capabilities"] if c not in capabilities]}
    sent: list[tuple[str, dict]] = []
    request = impl.request

    def record(op, args):
        sent.append((op, args))
        return request(op, args)

    impl.request = record  # type: ignore[method-assign]
    return impl, sent


def test_generators_honour_the_portable_integer_range_unless_claimed(tmp_path):
    """PROTOCOL §9: no integer a binary64 double cannot hold reaches an adapter without
    `big-integers` (the storage machine's re-timed chunk runs once sent 2**53 + 1)."""
    from sessionspec.conformance.protocol import needs_big_integers

    impl, sent = _recording_without("big-integers")
    failures, out = _run(lambda: impl, tmp_path, machines={"storage": ["pack"], "fork": ["fork_invalid"]},
                         examples=40, steps=6)
    assert failures == [], out
    assert sent and not [args for _, args in sent if needs_big_integers(args)]
    assert needs_big_integers({"time": 2**53 + 1}) and needs_big_integers([[-(2**53) - 1]])
    assert not needs_big_integers({"time": 2**53 - 1, "x": 2**53, "y": -0.0})


def test_header_edits_stay_inside_the_epoch_header_schema(tmp_path):
    """The `header-equals` inputs keep the required `config` and its provider/model (REQ-4
    defines no rule for a header without them)."""
    validator = load_spec().validator(gen.SCHEMA + "type/epoch-header.json")
    impl, sent = _recording_without()
    failures, out = _run(lambda: impl, tmp_path, machines={"session": ["header_views"]}, examples=30, steps=6)
    assert failures == [], out
    pairs = [args for op, args in sent if op == "header-equals"]
    assert len(pairs) > 10
    for args in pairs:
        for side in ("a", "b"):
            assert not list(validator.iter_errors(args[side])), args[side]


def test_focus_names_real_rules_and_kinds(tmp_path):
    with pytest.raises(ValueError, match="no rule"):
        _run(_in_process, tmp_path, machines={"session": ["no_such_rule"]})
    with pytest.raises(ValueError, match="no kind"):
        _run(_in_process, tmp_path, machines={"session": ["append_invalid:no-such-kind"]})
    with pytest.raises(ValueError, match="unknown machine"):
        _run(_in_process, tmp_path, machines=["nope"])


def test_every_invalid_append_kind_and_seed_corruption_reaches_the_reference(tmp_path):
    """Each kind of bad input is generated and the reference refuses most of them: the
    machines probe rejection paths, not only the happy path."""
    seen: dict[str, set[str]] = {}
    original = machines.Differential.send

    def spy(self, label, op, args, **kw):
        reply = original(self, label, op, args, **kw)
        seen.setdefault(label, set()).add(reply["kind"])
        return reply

    machines.Differential.send = spy
    try:
        for kind in gen.INVALID_APPEND_KINDS:
            _run(_in_process, tmp_path, machines={"session": [f"append_invalid:{kind}"]}, examples=3, steps=3)
        _run(_in_process, tmp_path, examples=4, steps=4, machines={"session": [
            "seed_invalid:stray-key,seq-gap,not-json,two-faults", "header:near-miss,relative-cwd,missing,not-object"]})
    finally:
        machines.Differential.send = original
    for kind in gen.INVALID_APPEND_KINDS:
        assert "rejected" in seen.get(f"session.append_invalid.{kind}", set()), kind
    assert "rejected" in seen["session.seed_invalid"] and "rejected" in seen["session.header"]


def test_coverage_names_real_requirements_for_every_rule_label():
    known = set(load_spec().requirements)
    for label, reqs in machines.COVERAGE.items():
        assert label.split(".")[0] in machines.MACHINES, label
        assert reqs and set(reqs) <= known, (label, set(reqs) - known)
    for kind in gen.INVALID_APPEND_KINDS:
        assert f"session.append_invalid.{kind}" in machines.COVERAGE
    for label, reqs in fuzz.property_coverage().items():  # only evidenced requirements are counted
        assert set(reqs) <= set(machines.COVERAGE[label]), label
    families = {r.split("-")[0] for reqs in machines.COVERAGE.values() for r in reqs}
    assert families >= {"JSON", "APPEND", "SEED", "HDR", "SURF", "DERIVE", "REQ", "STORE", "OOB", "FORK", "FIND",
                        "CHUNK", "REPAIR", "JSONL", "INV"}


def test_requirement_coverage_lists_machine_rules_as_properties():
    """What `sessionspec requirements` reads: fuzz.property_coverage() feeds coverage()."""
    rows = {r.id: r for r in coverage(load_requirements(), [], fuzz.property_coverage())}
    evidence = fuzz.machine_evidence()
    assert evidence
    for req, labels in evidence.items():
        assert set(labels) <= set(rows[req].properties), req
        assert rows[req].covered


def test_conformance_fuzz_option_runs_every_machine(tmp_path):
    out, err = io.StringIO(), io.StringIO()
    code = cli.run(["conformance", "--only", "find", "--fuzz", "1", "--trace-dir", str(tmp_path)], out, err)
    assert code == 0, err.getvalue()
    for name in machines.MACHINES:
        assert f"fuzz: {name}: passed" in err.getvalue()


PUBLISHED = "b150a551b8"


def _at(revision: str):
    """A started in-process reference serving ``revision`` (it declares it in its handshake)."""
    def connect() -> Implementation:
        impl = Implementation(lambda: InProcessConnection(revision=revision))
        impl.start()
        return impl
    return connect


@pytest.mark.parametrize("name", sorted(machines.MACHINES))
def test_each_machine_runs_at_the_revision_the_implementation_declares(name, tmp_path):
    """#10: an implementation of the published revision is fuzzed with inputs of that revision
    (identified messages, no steering, the seed-end marker) against the reference serving it; a
    generated input the reference refused would be a ReferenceBroke, not a pass."""
    failures, out = _run(_at(PUBLISHED), tmp_path, machines=[name])
    assert failures == [], out
    assert f"fuzz: {name}: passed" in out or f"fuzz: {name}: skipped" in out
    assert load_spec().revision.id == gen.REVISION  # the module tables are restored afterwards


def test_inputs_of_another_revision_are_caught_as_differences(tmp_path):
    """The published reference fuzzed as if it were the pinned one differs (message shapes, markers):
    the machines' revision is what the comparison is about, not a detail."""
    failures, _ = _run(_at(PUBLISHED), tmp_path, machines=["session"], revision=load_spec().revision.id,
                       stop_at_first=True)
    assert failures


def test_generators_switch_every_table_with_the_revision():
    pinned = gen.REVISION
    try:
        assert gen.use_revision(PUBLISHED) == PUBLISHED
        spec = load_spec(revision=PUBLISHED)
        assert set(gen.SURFACE_TYPES) == set(spec.surface_types) and "steering/message" not in gen.FREE_SURFACE
        assert gen.OUT_OF_BAND_TYPES == ()  # appendOutOfBand is retired at the published revision
        data = gen.with_call_id(gen.VALID[gen.TOOL_RESULT][0]["data"], "c9")
        assert gen.RULES.messages.result_call_id(data) == "c9"
        assert {b["toolCallId"] for b in gen.content_of(gen.TOOL_RESULT, data)} == {"c9"}
        events = [{"type": "turn/start", "seq": 0, "time": 0, "data": {"turn": 1}},
                  {"type": "user/message", "seq": 1, "time": 0, "data": {}, "surfaceOp": "append"},
                  {"type": "user/message", "seq": 2, "time": 0, "data": {}, "sourceEventSeqs": [1],
                   "surfaceOp": {"op": "replace", "start": 1, "end": 1}}]
        seed, steps, moved = gen.split_at_seed(events, 1)  # the marker takes seq 1: later seqs move up
        assert seed == events[:1] and moved(0) == 0 and moved(2) == 3
        assert steps[1]["surfaceOp"] == {"op": "replace", "start": 2, "end": 2} and steps[1]["sourceEventSeqs"] == [2]
    finally:
        gen.use_revision(pinned)
    assert gen.split_at_seed(events, 1)[2](2) == 2  # no marker at the pinned revision


def test_conformance_fuzz_quick_runs_the_quick_profile(tmp_path, monkeypatch, capsys):
    """`--fuzz quick` runs machines.QUICK (here shrunk to one focused run) and fails on a difference."""
    monkeypatch.setattr(machines, "QUICK", (machines.QuickRun("session", 1, 3, 4, ("json_value",)),))
    out, err = io.StringIO(), io.StringIO()
    assert cli.run(["conformance", "--only", "find", "--fuzz", "quick", "--trace-dir", str(tmp_path)], out, err) == 0
    assert "fuzz: session: passed" in err.getvalue() and "fuzz: fork" not in err.getvalue()
    out, err = io.StringIO(), io.StringIO()
    code = cli.run(["conformance", "--impl", broken_cmd("--wrong"), "--only", "find", "--fuzz", "quick",
                    "--trace-dir", str(tmp_path)], out, err)
    assert code == 1 and "FAILED session.json_value" in err.getvalue()
    assert cli.run(["conformance", "--fuzz", "often"], io.StringIO(), io.StringIO()) == 2
    assert "expected a number of examples or 'quick', got 'often'" in capsys.readouterr().err


def test_generators_follow_the_registry():
    spec = load_spec()
    log_only = {t for t, e in spec.events.items() if e["class"] != "surface"}
    assert set(gen.FREE_LOG_ONLY) < log_only and set(gen.SURFACE_TYPES) == set(spec.surface_types)
    structural = {gen.TURN_START, gen.TURN_END, gen.STEP_START, gen.STEP_END, gen.TOOL_CALL, gen.CHUNK}
    assert set(gen.FREE_LOG_ONLY) | structural == log_only
    assert set(gen.OUT_OF_BAND_TYPES) == set(spec.out_of_band_types)
    assert {e["type"] for e in gen.INVALID_EVENTS} <= set(spec.events)


def test_generated_logs_are_valid_seeds_and_balanced():
    from hypothesis import given, settings
    from hypothesis import strategies as st
    from sessionspec.reference import interrupted_turn_closers
    from sessionspec.reference.session import Session

    @settings(max_examples=25, database=None, derandomize=True)
    @given(st.data())
    def check(data):
        events = gen.build_log(data.draw, max_events=20)
        session = Session("s", events)
        assert session.seq == len(events)
        assert interrupted_turn_closers(events) == []

    check()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))
