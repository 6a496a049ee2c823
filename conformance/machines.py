"""Differential state machines: drive any implementation next to the reference.

``sessionspec conformance --fuzz N`` runs these Hypothesis
``RuleBasedStateMachine``s (contract in ``fuzz.py``). Each rule builds a
request, sends it to the implementation under test (through its adapter) and
to the embedded reference (in-process), and compares the two replies the way
vectors are compared (``compare.judge``: results structurally, rejections by
code, index, phase and state). The reference is the oracle; the machines
never restate expected behaviour.

Machines and what they drive:

* ``session`` — one live session grown through ``append`` requests: valid
  and invalid events of every rejection kind, surface appends and replaces
  (valid and invalid ranges and provenance, tool/result rewrites), request
  headers, chunk runs; ``derive`` after every step; fold, request-header
  views, seed replay and corrupted seeds, headers, invariants, JSON values.
* ``fork`` — sources built offline, forked at valid and invalid boundaries.
* ``storage`` — generated logs packed into chunk rows and decoded (and
  near-miss rows), written to JSONL, damaged and read back, crash-cut and
  repaired, searched for the last message turn end, path encoding.
* ``store`` — store-lifecycle scripts grown step by step (listeners that
  return, raise or fail asynchronously), and out-of-band appends.

The protocol is stateless, so every request carries its whole situation: the
machine keeps the log on this side and re-sends it (an append request holds
every append so far). A mismatch raises :class:`Mismatch`; Hypothesis
shrinks the run, then :func:`shrink_failure` shrinks the failing request's payload
(events, entries, keys, scalars) while the same difference holds, and that
request, with the expected and the actual reply, is written as a trace (``trace.json``
format) that ``sessionspec replay TRACE --impl CMD`` re-runs. :data:`COVERAGE` maps each rule label to the requirement ids it
checks (``sessionspec requirements``).
"""

from __future__ import annotations

import base64
import copy
import functools
import inspect
import shlex
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, TextIO, cast

from hypothesis import HealthCheck, Phase, settings
from hypothesis import seed as fixed_seed
from hypothesis import strategies as st
from hypothesis.errors import Flaky
from hypothesis.reporting import with_reporter
from hypothesis.stateful import (
    RULE_MARKER,
    RuleBasedStateMachine,
    get_state_machine_test,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)
from sessionspec.reference import SteppingClock, json_text
from sessionspec.reference.jsonl import encode_records
from sessionspec.spec.revisions import UnknownRevision, resolve_revision

from . import generators as gen
from . import wire
from .compare import judge, normalise_reply, normalise_result
from .expectations import FuzzExpectation
from .harness import Implementation, InProcessConnection
from .nesting import expand as expand_nest
from .persistence_script import difference_context
from .protocol import OPS, ProtocolViolation, needs_big_integers, needs_persistence_faults, validate_request
from .shrink import ShrinkBudget, shrink_args
from .trace import TraceStep, write_trace

__all__ = ["COVERAGE", "MACHINES", "QUICK", "Mismatch", "QuickRun", "ReferenceBroke", "run", "run_quick"]


# -- coverage ------------------------------------------------------------------------------

_INVALID_APPEND_COVERAGE: dict[str, tuple[str, ...]] = {
    "registry-invalid": ("APPEND-3", "APPEND-5", "APPEND-15", "SURF-3", "SURF-7", "SEED-6"),
    "data-not-json": ("APPEND-2", "JSON-1", "JSON-2"),
    "metadata-not-json": ("APPEND-4", "JSON-2"),
    "legacy-type": ("APPEND-3", "REQ-7"),
    "legacy-reason": ("APPEND-3", "REQ-6"),
    "marker-missing": ("APPEND-5", "SURF-3"),
    "log-only-marker": ("APPEND-6", "SURF-3", "REQ-8"),
    "log-only-sources": ("APPEND-6", "SURF-3"),
    "marker-invalid": ("SURF-3",),
    "sources-invalid": ("SURF-7", "SURF-16"),
    "replace-range": ("SURF-5", "SURF-16"),
    "replace-coverage": ("SURF-9",),
    "tool-result-rewrite": ("SURF-10",),
}

COVERAGE: dict[str, tuple[str, ...]] = {
    "session.append": ("APPEND-1", "APPEND-7", "APPEND-13", "APPEND-15", "SURF-4", "SURF-8", "SURF-13", "INV-13"),
    "session.stream": ("APPEND-7", "APPEND-15"),
    "session.request_header": ("REQ-3", "REQ-8"),
    "session.compaction": ("SURF-5", "SURF-6", "SURF-9", "SURF-10", "SURF-13", "DERIVE-9"),
    "session.prune": ("SURF-6", "SURF-10", "SURF-13", "DERIVE-9"),
    **{f"session.append_invalid.{kind}": ("APPEND-1", "SURF-11", *reqs)
       for kind, reqs in _INVALID_APPEND_COVERAGE.items()},
    "session.derive": ("DERIVE-1", "DERIVE-2", "DERIVE-3", "DERIVE-4", "DERIVE-5", "DERIVE-6", "DERIVE-8",
                       "DERIVE-9", "DERIVE-10", "DERIVE-11", "DERIVE-12", "REQ-1", "REQ-3"),
    "session.fold": ("SURF-2", "SURF-3", "SURF-12", "SURF-16"),
    "session.header_views": ("REQ-1", "REQ-2", "REQ-4", "REQ-5"),
    "session.replay": ("SEED-1", "SEED-13", "SEED-14", "SEED-15", "SURF-13", "SEED-16"),
    "session.seed_invalid": ("SEED-1", "SEED-2", "SEED-3", "SEED-4", "SEED-5", "SEED-6", "SEED-7", "SEED-8",
                             "SEED-9", "SEED-10", "SEED-11"),
    "session.header": ("HDR-1", "HDR-2", "HDR-3", "HDR-4", "HDR-5", "HDR-6", "HDR-7", "HDR-8", "HDR-9"),
    "session.json_value": ("JSON-1", "JSON-2", "JSON-9", "JSON-10"),
    "session.invariants": ("INV-1", "INV-2", "INV-3", "INV-4", "INV-5", "INV-6", "INV-7", "INV-8", "INV-9",
                           "INV-10", "APPEND-10"),
    "fork.valid": ("FORK-3", "FORK-4", "FORK-9", "FORK-10", "FORK-11", "STORE-1", "HDR-11"),
    "fork.invalid": ("FORK-1", "FORK-5", "FORK-6", "FORK-8", "FORK-12"),
    "storage.pack": ("CHUNK-1", "CHUNK-2", "CHUNK-3", "CHUNK-4", "CHUNK-5", "CHUNK-6", "CHUNK-7", "CHUNK-13",
                     "CHUNK-14", "CHUNK-16"),
    "storage.decode": ("CHUNK-8", "CHUNK-10", "CHUNK-11", "CHUNK-12"),
    "storage.decode_invalid": ("CHUNK-9",),
    "storage.jsonl": ("JSONL-1", "JSONL-3", "JSONL-6", "JSONL-8", "JSONL-9", "JSONL-12", "CHUNK-15", "REPAIR-11"),
    "storage.jsonl_damaged": ("JSONL-2", "JSONL-4", "JSONL-5", "JSONL-6", "JSONL-7", "JSONL-8", "JSONL-12"),
    "storage.repair": ("REPAIR-1", "REPAIR-2", "REPAIR-3", "REPAIR-4", "REPAIR-5", "REPAIR-6", "REPAIR-7",
                       "REPAIR-8", "REPAIR-9", "REPAIR-10", "REPAIR-12"),
    "storage.find": ("FIND-1", "FIND-2", "FIND-3", "FIND-4"),
    "storage.paths": ("JSONL-10", "JSONL-11"),
    "store.script": ("STORE-1", "STORE-2", "STORE-3", "STORE-4", "STORE-5", "STORE-6", "STORE-7", "STORE-8",
                     "STORE-9", "STORE-10", "STORE-11", "STORE-12", "STORE-13", "APPEND-11", "APPEND-14"),
    "store.oob": ("OOB-1", "OOB-4", "OOB-5", "OOB-6", "OOB-7", "OOB-8", "OOB-11"),
    "persistence.live": ("LIVE-1", "LIVE-2", "LIVE-3", "LIVE-4", "LIVE-5"),
    "persistence.script": ("PERSIST-1", "PERSIST-2", "PERSIST-3", "PERSIST-4", "PERSIST-5", "PERSIST-6",
                           "PERSIST-7", "PERSIST-8", "PERSIST-9", "PERSIST-10", "PERSIST-11", "ZSTD-7"),
}
"""Rule label -> requirement ids it checks (property coverage for ``sessionspec requirements``)."""


# -- the differential driver --------------------------------------------------------------


class ReferenceBroke(RuntimeError):
    """The reference replied ``errored`` or ``skipped``: a machine or reference bug, not a verdict."""


class Mismatch(AssertionError):
    """The implementation's reply differs from the reference's for one request."""

    def __init__(self, label: str, op: str, message: str) -> None:
        super().__init__(f"{label} ({op}): {message}")
        self.label = label
        self.op = op


@dataclass
class _Failure:
    machine: str
    label: str
    message: str
    steps: list[TraceStep]
    signature: dict[str, Any]


@dataclass
class _Run:
    """What one machine run shares across its examples (and its rounds)."""

    impl: Implementation
    reference: Implementation
    capabilities: frozenset[str]
    known: Sequence[FuzzExpectation] = ()
    found: set[tuple[Any, ...]] = field(default_factory=set)  # keys of the distinct failures already saved
    seen: Counter[int] = field(default_factory=Counter)  # known-difference index -> times matched
    failure: _Failure | None = None
    requests: int = 0
    skipped: int = 0  # requests not sent: the implementation lacks the capability
    behaviours: set[tuple[str, str]] = field(default_factory=set)
    """(rule label, the reference's reply: ``result`` or the rejection code) pairs met: a run's breadth."""


def _pointer_class(pointer: str | None) -> str | None:
    """A difference's pointer with indices and numbered names (handles such as ``h5``,
    listener actions such as ``l1#2.0``) as ``*``: where it is, not which element."""
    if pointer is None:
        return None
    return "/".join("*" if any(ch.isdigit() for ch in part) else part for part in pointer.split("/"))


def _signature(machine: str, label: str, op: str, expected: Mapping[str, Any], actual: Mapping[str, Any],
               verdict: Any, code_map: Mapping[str, str], args: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """What identifies a difference: rule, op, expected and actual code, where the first difference is, and
    its context (a persistence or live scenario's: the differing step's kind, and whether a writer wrote
    through a stale view before it, PERSIST-12)."""
    rejected = expected.get("rejected")
    kind = actual.get("kind")
    if kind == "rejected":
        code = actual.get("code")
        actual_code = code_map.get(code, code) if isinstance(code, str) else code
    elif kind == "crashed":
        actual_code = f"crashed:{actual.get('class')}"
    else:
        actual_code = None if kind == "result" else kind
    return {
        "machine": machine, "rule": label, "op": op, "requirements": list(COVERAGE.get(label, ())),
        "expectedCode": rejected.get("code") if isinstance(rejected, dict) else None,
        "actualCode": actual_code,
        "pointer": _pointer_class(verdict.differences[0].pointer) if verdict.differences else None,
        "context": _context(op, args or {}, expected, verdict),
    }


def _context(op: str, args: Mapping[str, Any], expected: Mapping[str, Any], verdict: Any) -> list[str]:
    """The context tags of a difference (``context`` of a fuzz expectation entry matches them)."""
    if op not in ("persistence", "live") or not verdict.differences:
        return []
    result = expected.get("result")
    trace = result.get("trace") if isinstance(result, Mapping) else None
    return difference_context(args, trace, verdict.differences[0].pointer, live=op == "live")


def failure_key(signature: Mapping[str, Any]) -> tuple[Any, ...]:
    """Two differences with one key are one failure (``--fuzz`` reports each key once)."""
    return (*(signature.get(k) for k in ("machine", "rule", "op", "expectedCode", "actualCode", "pointer")),
            tuple(signature.get("context") or ()))


def _expectation(reply: Mapping[str, Any], op: str, args: Mapping[str, Any]) -> dict[str, Any]:
    """The reference reply as a case expectation (normalised like a stored vector)."""
    if reply["kind"] == "result":
        return {"result": normalise_result(op, args, reply["result"])}
    rejected = {k: reply[k] for k in ("code", "index", "phase") if reply.get(k) is not None}
    if "state" in reply:
        rejected["state"] = normalise_reply(op, args, {"kind": "rejected", "state": reply["state"]})["state"]
    return {"rejected": rejected}


class Differential(RuleBasedStateMachine):
    """Base machine: :meth:`send` one request to both sides and compare."""

    name: ClassVar[str] = ""
    kinds: ClassVar[Mapping[str, Sequence[str]]] = {}
    """Rule -> the kinds of input it chooses from (a focused run may narrow them)."""
    focus_kinds: ClassVar[Mapping[str, Sequence[str]]] = {}
    run_state: ClassVar[_Run]

    def __init__(self) -> None:
        super().__init__()
        self.trace: list[TraceStep] = []

    def kind(self, draw: gen.Draw, rule_name: str) -> str:
        """The kind of input a rule makes this time (from its focus when the run has one)."""
        return cast("str", draw(st.sampled_from(list(self.focus_kinds.get(rule_name) or self.kinds[rule_name]))))

    def send(self, label: str, op: str, args: Mapping[str, Any], *, needs: Iterable[str] = ()) -> dict[str, Any]:
        """The reference's reply; raises :class:`Mismatch` when the implementation disagrees."""
        if label not in COVERAGE:
            raise KeyError(f"rule label {label!r} has no COVERAGE entry")
        shared = self.run_state
        reference = shared.reference.request(op, args)
        if reference["kind"] not in ("result", "rejected"):
            raise ReferenceBroke(f"{label} ({op}): the reference replied {reference['kind']}: "
                                 f"{reference.get('message') or reference.get('reason')}")
        shared.behaviours.add((label, reference["kind"] if reference["kind"] == "result" else str(reference.get("code"))))
        capability = OPS[op].capability
        wanted = {capability, *needs} - {None}
        if needs_big_integers(args):
            wanted.add("big-integers")
        if not wanted <= shared.capabilities:
            shared.skipped += 1
            return reference
        expected = _expectation(reference, op, args)
        actual = shared.impl.request(op, args)
        shared.requests += 1
        verdict = judge(op, args, expected, actual, code_map=shared.impl.code_map)
        self.trace.append(TraceStep(op, args, expected, actual, note=label))  # args are never mutated later
        if verdict.outcome in ("failed", "crashed", "errored"):
            signature = _signature(self.name, label, op, expected, actual, verdict, shared.impl.code_map, args)
            for i, known in enumerate(shared.known):
                if known.matches(signature):
                    shared.seen[i] += 1
                    return reference  # a listed difference: keep looking for others
            if failure_key(signature) in shared.found:
                return reference  # saved in an earlier round: keep looking for others
            details = "".join(f"\n    {d.render()}" for d in verdict.differences[:8])
            message = f"{verdict.outcome}: {verdict.message}{details}"
            shared.failure = _Failure(self.name, label, message, list(self.trace), signature)
            raise Mismatch(label, op, message)
        return reference


def _ok(reply: Mapping[str, Any]) -> bool:
    return cast("bool", reply["kind"] == "result")


# -- session ---------------------------------------------------------------------------------

_SESSION_ID = "s"


class SessionMachine(Differential):
    """A live session grown append by append; every view checked after every step."""

    name = "session"
    kinds = {"append_invalid": gen.INVALID_APPEND_KINDS, "seed_invalid": gen.SEED_CORRUPTIONS,  # noqa: RUF012 - Hypothesis rule tables are class-level by design
             "header": gen.HEADER_KINDS}

    @initialize(data=st.data())
    def begin(self, data: st.DataObject) -> None:
        draw = data.draw
        self.input: dict[str, Any] = {"id": _SESSION_ID}
        how = draw(st.sampled_from(["bare", "header", "seed", "seed+header"]))
        if "header" in how:
            self.input["header"] = gen.header_variant(draw, _SESSION_ID, "valid")
        if "seed" in how:
            self.input["seed"] = gen.build_log(draw, max_events=14)
        self.input["appends"] = []
        self.derived = -1
        reply = self.send("session.append", "append", self.input)
        if not _ok(reply):
            raise ReferenceBroke(f"the reference refused a generated session: {reply}")
        self.state: dict[str, Any] = reply["result"]
        self.ctx = gen.scan(self.state["events"])

    def _commit(self, label: str, steps: Sequence[gen.AppendStep]) -> dict[str, Any]:
        args = {**self.input, "appends": [*self.input["appends"], *steps]}
        reply = self.send(label, "append", args)
        if _ok(reply):
            self.input = args
            self.state = reply["result"]
            self.ctx = gen.scan(self.state["events"])
        return reply

    # growth
    @rule(data=st.data())
    def append(self, data: st.DataObject) -> None:
        names = [n for n in gen.move_names() if n not in ("compaction", "prune", "request_header")]
        self._commit("session.append", [gen.moves_for(data.draw, self.ctx, names)])

    @rule(data=st.data())
    def stream(self, data: st.DataObject) -> None:
        if self.ctx.open_step is None:
            step = gen.move_step_start(data.draw, self.ctx) or gen.move_turn_start(data.draw, self.ctx)
            if step is not None:
                self._commit("session.append", [step])
            return
        self._commit("session.stream", gen.chunk_run(data.draw, self.ctx))

    @rule(data=st.data())
    def request_header(self, data: st.DataObject) -> None:
        step = gen.move_request_header(data.draw, self.ctx)
        assert step is not None
        self._commit("session.request_header", [step])

    @rule(data=st.data())
    def compaction(self, data: st.DataObject) -> None:
        """One replace, sometimes two in a row (the second may start at the first's node,
        whose seq exceeds the seqs after it: positions, not values, order a range)."""
        while len(self.ctx.nodes) < 3:  # something to compact
            if not _ok(self._commit("session.append", [gen.moves_for(data.draw, self.ctx, ["message"])])):
                return
        for _ in range(data.draw(st.integers(1, 2))):
            step = gen.move_compaction(data.draw, self.ctx)
            if step is not None:
                self._commit("session.compaction", [step])

    @rule(data=st.data())
    def prune(self, data: st.DataObject) -> None:
        step = gen.move_prune(data.draw, self.ctx)
        if step is not None:
            self._commit("session.prune", [step])

    @rule(data=st.data())
    def append_invalid(self, data: st.DataObject) -> None:
        """A bad step (maybe followed by a good one that must not be attempted); never kept."""
        draw = data.draw
        kind = self.kind(draw, "append_invalid")
        found = gen.invalid_append_with_setup(draw, self.ctx, kind)
        if found is None:
            return
        steps = list(found)
        if draw(st.booleans()):
            steps.append(gen.moves_for(draw, self.ctx, ["message", "log_only"]))
        args = {**self.input, "appends": [*self.input["appends"], *steps]}
        self.send(f"session.append_invalid.{kind}", "append", args)

    # views
    @invariant()
    def derive(self) -> None:
        """Derivation after every step (incremental inside the adapter, compared in full)."""
        if self.derived != len(self.input["appends"]):
            self.derived = len(self.input["appends"])
            self.send("session.derive", "derive", self.input)

    @rule(data=st.data(), corruption=st.sampled_from([None, "surface", "seq-gap", "registry-invalid"]))
    def fold(self, data: st.DataObject, corruption: str | None) -> None:
        """The surface fold of the log so far, or of a corrupted copy of it (``corruption``, when there are events)."""
        events = copy.deepcopy(self.state["events"])
        if events and corruption is not None:
            seed, _ = gen.seed_corruption(data.draw, events, corruption)
            events = seed
        self.send("session.fold", "fold", {"events": events})

    @rule(data=st.data(), start=st.none() | st.composite(lambda draw: gen.request_header_data(draw)["header"])())
    def header_views(self, data: st.DataObject, start: Any) -> None:
        """The request-header fold of the log so far, from the default start or from ``start``; then the
        canonical form of a header and its comparison with an edited copy (REQ-1, REQ-4, REQ-5)."""
        draw = data.draw
        events = self.state["events"]
        args: dict[str, Any] = {"events": events}
        if start is not None:
            args["start"] = start
        self.send("session.header_views", "fold-request-header", args)
        raw = [e["data"]["header"] for e in events if e["type"] == gen.REQUEST_HEADER
               and isinstance(e.get("data"), dict) and isinstance(e["data"].get("header"), dict)]
        header = draw(st.sampled_from(raw)) if raw and draw(st.booleans()) else gen.request_header_data(draw)["header"]  # type: ignore[arg-type]
        canonical = self.send("session.header_views", "canonical-header", {"header": header})
        if _ok(canonical):
            a = canonical["result"]["header"]
            b = _header_edit(draw, a)
            self.send("session.header_views", "header-equals", {"a": a, "b": b})

    @rule(invariants=st.booleans())
    def replay(self, invariants: bool) -> None:
        """The log so far as a seed (SEED-14), sometimes with the invariant checker (SEED-16)."""
        args: dict[str, Any] = {"id": "replayed", "seed": self.state["events"]}
        needs: tuple[str, ...] = ()
        if invariants:
            args["invariants"] = True
            needs = ("invariants",)
        self.send("session.replay", "load", args, needs=needs)

    @rule(data=st.data())
    def seed_invalid(self, data: st.DataObject) -> None:
        kind = self.kind(data.draw, "seed_invalid")
        seed, _ = gen.seed_corruption(data.draw, self.state["events"], kind)
        self.send("session.seed_invalid", "load", {"id": "seeded", "seed": seed})

    @rule(data=st.data(), with_seed=st.booleans())
    def header(self, data: st.DataObject, with_seed: bool) -> None:
        kind = self.kind(data.draw, "header")
        args: dict[str, Any] = {"id": "h", "header": gen.header_variant(data.draw, "h", kind)}
        if with_seed:
            args["seed"] = self.state["events"]
        self.send("session.header", "load", args)

    @rule(value=gen.json_values())
    def json_value(self, value: Any) -> None:
        self.send("session.json_value", "json-value", {"value": value})

    @rule(data=st.data(), append_too=st.integers(0, 2).map(lambda n: n == 0))
    def invariants(self, data: st.DataObject, append_too: bool) -> None:  # type: ignore[override]  # a Hypothesis rule named for the INV family
        draw = data.draw
        events = _relational_perturbation(draw, self.state["events"])
        self.send("session.invariants", "invariants", {"events": events})
        if append_too:
            step = gen.moves_for(draw, self.ctx)
            args = {**self.input, "appends": [*self.input["appends"], step], "invariants": True}
            self.send("session.invariants", "append", args, needs=("invariants",))




def _header_edit(draw: gen.Draw, header: Mapping[str, Any]) -> Any:
    """``header`` unchanged, or with one field changed the way REQ-4/REQ-5 compare it.

    Stays inside the epoch-header schema: only optional keys are dropped (of the
    header and of its call configuration), so the comparison never meets an input
    the format does not define."""
    out = copy.deepcopy(dict(header))
    how = draw(st.sampled_from(["same", "system", "tools", "config", "drop"]))
    if how == "system":
        out["system"] = draw(st.sampled_from(["", "other", out.get("system", "") + " "]))
    elif how == "tools" and out.get("tools"):
        tools = out["tools"]
        out["tools"] = [dict(reversed(list(t.items()))) if isinstance(t, dict) else t for t in tools] \
            if draw(st.booleans()) or len(tools) < 2 else list(reversed(tools))
    elif how == "config" and isinstance(out.get("config"), dict) and out["config"]:
        config = dict(out["config"])
        key = draw(st.sampled_from(sorted(config)))
        node = gen.schema("type/llm-call-config.json")
        if draw(st.booleans()) and key not in node.get("required", ()):
            del config[key]
        else:
            config[key] = gen.changed_value(config[key], node.get("properties", {}).get(key, {}))
        out["config"] = config
    elif how == "drop":
        optional = sorted(set(out) - set(gen.schema("type/epoch-header.json").get("required", ())))
        if optional:
            del out[draw(st.sampled_from(optional))]
    return out


def _relational_perturbation(draw: gen.Draw, events: Sequence[Any]) -> list[Any]:
    """The log, or a copy with one relational fact broken (a turn or step number, a call id,
    a missing boundary, a repeated seq)."""
    out = copy.deepcopy(list(events))
    if not out or draw(st.booleans()):
        return out
    numbered = [i for i, e in enumerate(out) if isinstance(e.get("data"), dict)
                and any(type(e["data"].get(k)) is int for k in ("turn", "step"))]
    how = draw(st.sampled_from(["number", "drop", "seq", "call"]))
    if how == "number" and numbered:
        i = draw(st.sampled_from(numbered))
        key = draw(st.sampled_from([k for k in ("turn", "step") if type(out[i]["data"].get(k)) is int]))
        out[i]["data"][key] += draw(st.sampled_from([1, -1]))
    elif how == "drop":
        del out[draw(st.integers(0, len(out) - 1))]
    elif how == "seq" and len(out) >= 2:
        i = draw(st.integers(1, len(out) - 1))
        out[i]["seq"] = out[i - 1]["seq"]
    elif how == "call":
        calls = [i for i, e in enumerate(out) if isinstance(e.get("data"), dict) and "callId" in e["data"]]
        if calls:
            out[draw(st.sampled_from(calls))]["data"]["callId"] = "call-unknown"
    return out


# -- offline logs ------------------------------------------------------------------------------


class _OfflineLog(Differential):
    """A log built on this side (no requests) with drawn times; rules send views of it."""

    def _begin(self, draw: gen.Draw) -> None:
        self.events: list[dict[str, Any]] = gen.build_log(draw, max_events=16, balanced=draw(st.booleans()))
        self.time = self.events[-1]["time"] if self.events else draw(st.integers(0, 2**41))
        self.ctx = gen.scan(self.events)

    def _extend(self, draw: gen.Draw, steps: Sequence[gen.AppendStep]) -> None:
        times = []
        for _ in steps:
            self.time += draw(st.integers(0, 2))
            times.append(self.time)
        self.events += gen.materialise(steps, times, len(self.events))
        self.ctx = gen.scan(self.events)

    @rule(data=st.data(), count=st.integers(1, 4))
    def grow(self, data: st.DataObject, count: int) -> None:
        draw = data.draw
        for _ in range(count):
            self._extend(draw, [gen.moves_for(draw, self.ctx)])

    @rule(data=st.data())
    def stream(self, data: st.DataObject) -> None:
        draw = data.draw
        if self.ctx.open_step is None:
            step = gen.move_step_start(draw, self.ctx) or gen.move_turn_start(draw, self.ctx)
            if step is not None:
                self._extend(draw, [step])
            return
        self._extend(draw, gen.chunk_run(draw, self.ctx))

    @rule(data=st.data())
    def close(self, data: st.DataObject) -> None:
        """Close the open step and turn (forks and committed regions need turn ends)."""
        for closer in (gen.move_step_end, gen.move_turn_end):
            step = closer(data.draw, self.ctx)
            if step is not None:
                self._extend(data.draw, [step])


class ForkMachine(_OfflineLog):
    """Forks of a source (part seed, part live appends) at valid and invalid boundaries."""

    name = "fork"
    kinds = {"fork_invalid": ("not-turn-end", "out-of-range", "not-safe-int", "child-exists", "omitted-open")}  # noqa: RUF012 - Hypothesis rule tables are class-level by design

    @initialize(data=st.data())
    def begin(self, data: st.DataObject) -> None:
        self._begin(data.draw)
        self.header = gen.header_variant(data.draw, "src", "valid") if data.draw(st.booleans()) else None

    def _source(self, draw: gen.Draw) -> tuple[dict[str, Any], Callable[[Any], Any]]:
        """The source (part seed, part appends) and the map from a seq of the log to its seq there."""
        seed, appends, moved = gen.split_at_seed(self.events, draw(st.integers(0, len(self.events))))
        source: dict[str, Any] = {"id": "src", "seed": seed, "appends": appends}
        if self.header is not None:
            source["header"] = self.header
        return source, moved

    def _fork(self, draw: gen.Draw, label: str, boundary: Any = None, omit: bool = False,
              child: str | None = None, live: Sequence[str] = ()) -> None:
        source, moved = self._source(draw)
        args: dict[str, Any] = {"source": source, "by": draw(st.sampled_from(["object", "id"]))}
        if not omit:
            args["boundary"] = moved(boundary)
        if child is not None:
            args["childId"] = child
        if live:
            args["live"] = list(live)
        self.send(label, "fork", args)

    @rule(data=st.data(), child=st.sampled_from([None, "child", "session-1"]),
          live=st.sampled_from([(), ("other",), ("session-1",)]))
    def fork_valid(self, data: st.DataObject, child: str | None, live: tuple[str, ...]) -> None:
        draw = data.draw
        ends = self.ctx.turn_ends
        last_is_end = bool(self.events) and self.events[-1]["type"] == gen.TURN_END
        omit = (last_is_end or not self.events) and draw(st.booleans())
        if not omit and not ends:
            return
        boundary = None if omit else draw(st.sampled_from(ends))
        if child is not None and child in live:
            child = None
        self._fork(draw, "fork.valid", boundary, omit, child, live)

    @rule(data=st.data())
    def fork_invalid(self, data: st.DataObject) -> None:
        draw = data.draw
        kind = self.kind(draw, "fork_invalid")
        n = len(self.events)
        if kind == "not-turn-end":
            others = [e["seq"] for e in self.events if e["type"] != gen.TURN_END]
            boundaries = [e["seq"] for e in self.events if e["type"] in gen.BOUNDARY_TYPES and e["type"] != gen.TURN_END]
            if boundaries and draw(st.booleans()):  # type: ignore[arg-type]
                others = boundaries  # a step or turn start, a step end: the near misses of a turn end
            if others:
                self._fork(draw, "fork.invalid", draw(st.sampled_from(others)))
        elif kind == "out-of-range":
            self._fork(draw, "fork.invalid", n + draw(st.integers(0, 2)))
        elif kind == "not-safe-int":
            misses = [v for v in gen.near_misses(gen.SAFE_INT) if not (type(v) is int and 0 <= v < n)]
            self._fork(draw, "fork.invalid", draw(st.sampled_from(misses)))
        elif kind == "child-exists":
            live = ("other",)
            child = draw(st.sampled_from(["other", "src"]))
            boundary = draw(st.sampled_from(self.ctx.turn_ends)) if self.ctx.turn_ends else 0
            self._fork(draw, "fork.invalid", boundary, child=child, live=live)
        elif kind == "omitted-open" and self.events and self.events[-1]["type"] != gen.TURN_END:
            self._fork(draw, "fork.invalid", omit=True)


class StorageMachine(_OfflineLog):
    """Chunk rows, JSONL artifacts, crash repair and find over generated logs."""

    name = "storage"
    kinds = {"jsonl_damaged": ("torn", "hole-in-committed", "hole-after", "seq-gap", "empty-line", "header-fault",  # noqa: RUF012 - Hypothesis rule tables are class-level by design
                               "no-header", "legacy")}

    @initialize(data=st.data())
    def begin(self, data: st.DataObject) -> None:
        self._begin(data.draw)

    def _timed(self, draw: gen.Draw) -> list[dict[str, Any]]:
        """The log, sometimes re-timed with gaps across the whole signed safe range (CHUNK-3, CHUNK-12)."""
        events = copy.deepcopy(self.events)
        if events and draw(st.booleans()):
            time = draw(st.integers(-gen.MAX_SAFE, gen.MAX_SAFE))
            for event in events:
                gap = draw(st.one_of(st.integers(-3, 5), st.sampled_from([gen.MAX_SAFE, -gen.MAX_SAFE])))
                time = max(-gen.MAX_SAFE, min(gen.MAX_SAFE, time + gap))
                event["time"] = time
        return events

    @rule(data=st.data())
    def pack(self, data: st.DataObject) -> None:
        """Pack the log (maybe re-timed, maybe ending in a fresh delta run), decode what comes back,
        and a near-miss of a row."""
        draw = data.draw
        events = self._timed(draw)
        if draw(st.booleans()):
            run = gen.chunk_run(draw, self.ctx)
            time = events[-1]["time"] if events else 0
            step = draw(st.integers(0, 2))
            times = [min(gen.MAX_SAFE, time + step * k) for k in range(len(run))]  # within §9
            events += gen.materialise(run, times, len(events))
        reply = self.send("storage.pack", "pack", {"events": events})
        records = reply["result"]["records"] if _ok(reply) else []
        rows = [r for r in records if isinstance(r, dict) and r.get("type") in gen.ROWS]
        for record in rows[:2] + ([draw(st.sampled_from(records))] if records else []):
            self.send("storage.decode", "decode", {"record": record})
        if rows:  # every near miss of one row: decoding is cheap, and each is a distinct CHUNK-9 clause
            for _what, bad in gen.near_miss_rows(draw(st.sampled_from(rows))):
                self.send("storage.decode_invalid", "decode", {"record": bad})

    def _write(self, draw: gen.Draw, events: Sequence[Any], header: Mapping[str, Any]) -> str | None:
        batches: list[list[Any]] = []
        rest = list(events)
        while rest:
            k = draw(st.integers(1, max(1, len(rest))))
            batches.append(rest[:k])
            rest = rest[k:]
        args = {"header": header, "batches": batches, "packChunks": draw(st.booleans())}
        reply = self.send("storage.jsonl", "jsonl-write", args)
        return reply["result"]["data"].get("text") if _ok(reply) else None

    def _header(self, draw: gen.Draw) -> dict[str, Any]:
        return gen.header_variant(draw, "s", "valid")  # type: ignore[no-any-return]

    @rule(data=st.data(), load_id=st.sampled_from(["s", "s", "other"]))
    def jsonl(self, data: st.DataObject, load_id: str) -> None:
        draw = data.draw
        text = self._write(draw, self.events, self._header(draw))
        if text is None:
            return
        self.send("storage.jsonl", "jsonl-read", {"data": {"text": text}})
        self.send("storage.jsonl", "jsonl-load", {"id": load_id,
                                                  "data": {"text": text}})

    @rule(data=st.data())
    def jsonl_damaged(self, data: st.DataObject) -> None:
        draw = data.draw
        kind = self.kind(draw, "jsonl_damaged")
        header = self._header(draw)
        text = self._write(draw, self.events, header)
        if text is None:
            return
        lines = text.split("\n")[:-1]
        body = lines[1:]
        # the committed region ends at the last line holding a turn/end (rows never do)
        committed = max((i for i, line in enumerate(body) if wire.loads(line).get("type") == gen.TURN_END), default=-1)
        if kind == "torn" and body:
            i = draw(st.integers(0, len(body) - 1))
            cut = draw(st.integers(1, max(1, len(body[i]) - 1)))
            text = "\n".join([lines[0], *body[:i], body[i][:cut]])
        elif kind in _LINE_DAMAGE and body:
            everywhere = list(range(len(body)))
            pool = {"hole-in-committed": everywhere[: committed + 1], "hole-after": everywhere[committed + 1 :]}
            i = draw(st.sampled_from(pool.get(kind) or everywhere))
            body = [*body[:i], *_LINE_DAMAGE[kind], *body[i + 1 :]]
            text = "\n".join([lines[0], *body]) + "\n"
        elif kind == "header-fault":
            misses = [("delegationDepth", None), ("version", 1), ("createdAt", -1), ("type", "sess"), ("id", 7)]
            key, value = draw(st.sampled_from(misses))
            head = wire.loads(lines[0])
            if value is None:
                head.pop(key, None)
            else:
                head[key] = value
            text = "\n".join([wire.dumps(head), *body]) + "\n"
        elif kind == "no-header":
            text = draw(st.sampled_from(["", lines[0]]))
        elif kind == "legacy":
            legacy = {"type": draw(st.sampled_from(gen.LEGACY_TYPES)), "seq": len(self.events), "time": 0,
                      "data": gen.request_header_data(draw)}
            text = text + wire.dumps(legacy) + "\n"
        args = {"data": {"text": text}}
        self.send("storage.jsonl_damaged", "jsonl-read", args)
        self.send("storage.jsonl_damaged", "jsonl-load", {"id": "s", **args})

    @rule(data=st.data())
    def repair(self, data: st.DataObject) -> None:
        """Crash repair of the log cut after any event (open turns, open steps, pending calls)."""
        draw = data.draw
        cut = draw(st.integers(0, len(self.events)))
        events = self.events[:cut]
        self.send("storage.repair", "repair", {"events": events})
        if draw(st.booleans()):
            text = self._write(draw, events, self._header(draw))
            if text is not None:
                self.send("storage.repair", "jsonl-load", {"id": "s", "data": {"text": text}})

    @rule(data=st.data())
    def find(self, data: st.DataObject) -> None:
        draw = data.draw
        a = draw(st.integers(0, len(self.events)))
        b = draw(st.integers(a, len(self.events)))
        for events in (self.events, self.events[a:b]):
            self.send("storage.find", "find-last-message-turn-end", {"events": events})

    @rule(data=st.data(), text=gen.path_text())
    def paths(self, data: st.DataObject, text: str) -> None:
        fn = data.draw(st.sampled_from(["segment", "project", "log-path"]))
        if fn == "segment":
            args: dict[str, Any] = {"fn": fn, "value": text}
        elif fn == "project":
            args = {"fn": fn, "cwd": text}
        else:
            args = {"fn": fn, "root": "/data", "id": text or "x", "compressed": data.draw(st.booleans())}
            if data.draw(st.booleans()):
                args["cwd"] = "/" + text
        self.send("storage.paths", "jsonl-path", args)


_LINE_DAMAGE: Mapping[str, list[str]] = {
    "hole-in-committed": ["{not json"], "hole-after": ["{not json"], "seq-gap": [], "empty-line": [""],
}
"""What replaces one line of an artifact for each kind of line damage."""


# -- store lifecycle ------------------------------------------------------------------------

_LISTENER_EVENTS: tuple[str, ...] = tuple(e["name"] for e in gen.SPEC.service_events["events"])


class StoreMachine(Differential):
    """Store-lifecycle scripts grown one step at a time, re-sent whole; out-of-band appends."""

    name = "store"

    @initialize(data=st.data())
    def begin(self, data: st.DataObject) -> None:
        self.script: list[dict[str, Any]] = []
        self.handles: list[str] = []  # session handles the reference reported
        self.detaches: list[str] = []
        self.counter = 0
        self.live: list[str] = []
        for event in _LISTENER_EVENTS:
            for _ in range(data.draw(st.sampled_from([1, 2, 0, 3]))):  # several per event: order matters
                self.script.append({**self._listener(data.draw, actions=False), "event": event})
        self.detaches.append("d0")
        self._run([{"do": "create", "as": "h0", "detach": "d0"}])

    def _fresh(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def _run(self, steps: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        """Send the script with ``steps`` added; returns the reference's trace entries of those steps."""
        script = [*self.script, *steps]
        reply = self.send("store.script", "store", {"script": script})
        if not _ok(reply):
            return []
        self.script = script
        sessions = reply["result"]["sessions"]
        self.handles = sorted(sessions)
        self.live = sorted(h for h, s in sessions.items() if s["live"] and not h.startswith("@"))
        first = len(script) - len(steps)
        return [t for t in reply["result"]["trace"] if t.get("at", "").isdigit() and int(t["at"]) >= first]

    def _listener(self, draw: gen.Draw, *, actions: bool = True) -> dict[str, Any]:
        step: dict[str, Any] = {"do": "on", "event": draw(st.sampled_from(_LISTENER_EVENTS)),
                                "listener": self._fresh("l"),
                                "outcome": draw(st.sampled_from(["return", "raise", "reject"]))}
        if draw(st.booleans()):
            step["once"] = True
        if actions and self.detaches and draw(st.integers(0, 3)) == 0:
            step["actions"] = [{"do": "detach", "handle": draw(st.sampled_from(self.detaches))}]
        return step

    @rule(data=st.data())
    def listen(self, data: st.DataObject) -> None:
        self._run([self._listener(data.draw)])

    @rule(data=st.data())
    def create(self, data: st.DataObject) -> None:
        draw = data.draw
        handle, detach = self._fresh("h"), self._fresh("d")
        step: dict[str, Any] = {"do": "create", "as": handle, "detach": detach}
        session_id = draw(st.sampled_from([None, "a", "b", "session-1"]))
        if session_id is not None:
            step["id"] = session_id
        if draw(st.booleans()):
            step["seed"] = gen.build_log(draw, max_events=6)
        self.detaches.append(detach)
        self._run([step])

    @rule(data=st.data())
    def prepare(self, data: st.DataObject) -> None:
        """prepare, then maybe enter (with a detach handle) and announce (STORE-2, STORE-3, STORE-6)."""
        draw = data.draw
        handle = self._fresh("h")
        self._run([{"do": "prepare", "as": handle, "id": draw(st.sampled_from(["a", "b", "c"]))}])
        if handle not in self.handles or draw(st.integers(0, 3)) == 0:
            return
        detach = self._fresh("d")
        entered = self._run([{"do": "enter", "session": handle, "detach": detach}])
        if entered and "ok" in entered[0]:
            self.detaches.append(detach)
            if draw(st.booleans()):
                self._run([{"do": "announce", "session": handle}])

    @rule(data=st.data())
    def detach(self, data: st.DataObject) -> None:
        if self.detaches:
            self._run([{"do": "detach", "handle": data.draw(st.sampled_from(self.detaches))}])

    def _session(self, draw: gen.Draw) -> str | None:
        """A named session, live ones first (operations on dead ones are refused early)."""
        named = [h for h in self.handles if not h.startswith("@")]
        pool = self.live if self.live and draw(st.integers(0, 3)) else named
        return draw(st.sampled_from(pool)) if pool else None

    @rule(data=st.data())
    def act(self, data: st.DataObject) -> None:
        """An append, flush, out-of-band append, fork, announce, get or list on a known session."""
        draw = data.draw
        handle = self._session(draw)
        if handle is None:
            return
        do = draw(st.sampled_from(["flush", "append", "flush", "oob", "fork", "announce", "get", "list"]))
        if do == "append":
            step = gen.moves_for(draw, gen.scan([]), ["log_only", "message"])
            self._run([{"do": "append", "session": handle, **step}])
        elif do == "flush":
            self._run([{"do": "flush", "session": handle}])
        elif do == "oob" and gen.OUT_OF_BAND_TYPES:
            event_type = draw(st.sampled_from(gen.OUT_OF_BAND_TYPES))
            example = draw(st.sampled_from(gen.VALID[event_type]))
            self._run([{"do": "oob", "session": handle, "type": event_type, "data": example["data"],
                        "trigger": _trigger(draw)}])
        elif do == "fork":
            self._run([{"do": "fork", "source": handle, "as": self._fresh("h")}])
        elif do == "announce":
            self._run([{"do": "announce", "session": handle}])
        elif do == "get":
            self._run([{"do": "get", "id": draw(st.sampled_from(["a", "b", "c", "session-1"]))}])
        else:
            self._run([{"do": "list"}])

    @rule(data=st.data())
    def out_of_band(self, data: st.DataObject) -> None:
        """``oob`` op: the session's last boundary decides wrap-or-join; the flush may fail."""
        draw = data.draw
        if not gen.OUT_OF_BAND_TYPES:
            return
        seed = gen.build_log(draw, max_events=10, balanced=draw(st.booleans()), chunks=False)
        event_type = draw(st.sampled_from(gen.OUT_OF_BAND_TYPES))
        args: dict[str, Any] = {
            "session": {"id": "s", "seed": seed}, "type": event_type,
            "data": draw(st.sampled_from(gen.VALID[event_type]))["data"] if draw(st.integers(0, 5)) else -0.0,
            "trigger": _trigger(draw) if draw(st.integers(0, 5)) else {"bad": -0.0},
            "flush": draw(st.sampled_from(["return", "raise", "reject"])),
        }
        needs: tuple[str, ...] = ()
        if draw(st.integers(0, 4)) == 0:
            args["admit"] = draw(st.sampled_from([[], [gen.TURN_START], [gen.ASSISTANT], [event_type]]))
            needs = ("oob-admission",)
        self.send("store.oob", "oob", args, needs=needs)


# -- persistence -----------------------------------------------------------------------------

_BACKENDS = ("jsonl", "jsonl-zstd", "sqlite")
_BACKEND_CAPABILITY = {"jsonl": "persistence-jsonl", "jsonl-zstd": "persistence-jsonl-zstd",
                       "sqlite": "persistence-sqlite"}
_RETIRED = ({"type": "mode/set", "data": {"mode": "plan"}}, {"type": "request/header-delta", "data": {}},
            {"type": "request/header", "data": {"reason": "fallback"}})


class PersistenceMachine(Differential):
    """Session histories written through one backend form (PROTOCOL.md §6a), the scenario grown one
    step at a time and re-sent whole: creates (valid, refused, repeated), append batches (valid, off by
    a seq, with a gap, a retired shape or non-JSON data, to a session never created), crashes that leave
    a torn tail, loads with repair, appends after repair, inspection, listing and revision tokens. With
    ``persistence-faults``: the damage a crash leaves at a random byte offset (a record cut anywhere, a
    multi-block zstd frame cut anywhere or whole, stray bytes, the file cut short, SQLite rows of a
    writer that crashed between its transactions), restarts, a second writer on the same location, and
    the raw JSONL bytes. A ``live`` rule grows a live-persistence scenario (§6b) on the same backend
    form: listener failures, failed writes and the flush after them, dispose during a flush, values at
    the serialiser's limits. Every step's result (events, header, closers, codes, bytes) is compared
    with the reference."""

    name = "persistence"
    kinds = {"fault": ("cut-record", "whole-record", "torn-frame", "whole-frame", "stray-bytes", "truncate",  # noqa: RUF012 - Hypothesis rule tables are class-level by design
                       "rows"),
             "live": ("append", "fail-writes", "listener", "flush", "flush-during-dispose", "deep", "stored"),
             "append": ("valid", "crash", "seq-continue", "seq-gap", "retired", "non-json")}

    @initialize(data=st.data())
    def begin(self, data: st.DataObject) -> None:
        draw = data.draw
        self.backend: str = draw(st.sampled_from(_BACKENDS))
        self.faults = "persistence-faults" in self.run_state.capabilities
        self.steps: list[dict[str, Any]] = []
        self.log = gen.build_log(draw, max_events=24)  # the history the appends write, in order
        self.stored: dict[str, int] = {}  # session id -> events stored (as the reference's load reports)
        self.created: list[str] = []
        self.live_steps: list[dict[str, Any]] = []
        self.live_log = gen.build_log(draw, max_events=12)
        self.live_sent = 0  # events of ``live_log`` appended live so far
        self.live_open = False  # whether the live scenario's backend is still attached
        self.live_unsettled = False  # an event appended live that no resolved barrier has written since
        self._run([{"do": "create", "header": {"version": 0, "id": "s1", "createdAt": 1000, "cwd": "/work"}}])

    def _run(self, steps: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        """Send the scenario with ``steps`` added; returns the reference's trace entries of those steps."""
        scenario = [*self.steps, *steps]
        args = {"backend": self.backend, "steps": scenario}
        needs = [_BACKEND_CAPABILITY[self.backend]]
        if needs_persistence_faults("persistence", args):
            needs.append("persistence-faults")
        reply = self.send("persistence.script", "persistence", args, needs=needs)
        if not _ok(reply):
            raise ReferenceBroke(f"the reference refused a persistence scenario: {reply}")
        self.steps = scenario
        entries: list[dict[str, Any]] = reply["result"]["trace"][len(scenario) - len(steps):]
        for step, entry in zip(steps, entries, strict=True):
            self._behaviour("persistence.script", step, entry)
            if "ok" not in entry:
                continue
            if step["do"] == "create":
                self.created.append(step["header"]["id"])
            elif step["do"] in ("append", "crash"):
                self.stored[step["id"]] = self.stored.get(step["id"], 0) + len(step["events"])
            elif step["do"] in ("load", "inspect"):
                self.stored[step["id"]] = len(entry["ok"]["events"])
            elif step["do"] == "reopen":  # created-only sessions do not survive a restart
                self.created = [i for i in self.created if self.stored.get(i)]
        return entries

    def _behaviour(self, label: str, step: Mapping[str, Any], entry: Mapping[str, Any]) -> None:
        """A scenario reply is always ``result``: its breadth is each step's kind with its outcome."""
        outcome = entry["rejected"].get("code") if "rejected" in entry else "ok"
        writer = "/second" if step.get("writer") == "second" else ""
        self.run_state.behaviours.add((label, f"{step['do']}{writer}:{outcome}"))

    def _id(self, draw: gen.Draw) -> str:
        return cast("str", draw(st.sampled_from([*self.created, "s1", "ghost"])))

    def _writer(self, draw: gen.Draw) -> dict[str, Any]:
        """``{"writer": "second"}`` now and then (a second backend on the same location), when claimed."""
        return {"writer": "second"} if self.faults and draw(st.integers(0, 4)) == 0 else {}

    def _batch(self, draw: gen.Draw, session_id: str) -> list[dict[str, Any]]:
        """The next events of the history from the stored length (an empty batch when it is used up)."""
        start = self.stored.get(session_id, 0)
        size = draw(st.integers(1, 6))
        batch = copy.deepcopy(self.log[start:start + size])
        for offset, event in enumerate(batch):
            event["seq"] = start + offset
        return batch

    @rule(data=st.data())
    def create(self, data: st.DataObject) -> None:
        draw = data.draw
        how = draw(st.sampled_from(["new", "again", "bad-created-at", "relative-cwd"]))
        session_id = f"s{len(self.created) + 2}" if how != "again" else self._id(draw)
        header: dict[str, Any] = {"version": 0, "id": session_id, "createdAt": 1000, "cwd": "/work"}
        if how == "bad-created-at":
            header["createdAt"] = draw(st.sampled_from([-1, 1.5, "1000", gen.MAX_SAFE + 1]))
        elif how == "relative-cwd":
            header["cwd"] = "relative/dir"
        self._run([{"do": "create", "header": header, **self._writer(draw)}])

    @rule(data=st.data())
    def append(self, data: st.DataObject) -> None:
        draw = data.draw
        session_id = self._id(draw)
        batch = self._batch(draw, session_id)
        # a focused run draws only its kinds (a short run reaching PERSIST-5's non-JSON batch); an unfocused one
        # keeps its weights, valid batches three times as likely
        focused = self.focus_kinds.get("append")
        how = draw(st.sampled_from(list(focused) if focused else ["valid", "valid", "valid", "crash", "seq-continue",
                                                                  "seq-gap", "retired", "non-json"]))
        if how == "crash":
            self._run([{"do": "crash", "id": session_id, "events": batch}])
            return
        if batch and how == "seq-continue":
            batch[0]["seq"] += draw(st.sampled_from([-1, 1, 2]))
        elif len(batch) > 1 and how == "seq-gap":
            batch[-1]["seq"] += 1
        elif how == "retired":
            extra = {**copy.deepcopy(draw(st.sampled_from(_RETIRED))), "time": 0}
            at = draw(st.integers(0, len(batch)))
            batch.insert(at, {**extra, "seq": self.stored.get(session_id, 0) + at})
            for offset, event in enumerate(batch):
                event["seq"] = self.stored.get(session_id, 0) + offset
        elif batch and how == "non-json":
            batch[-1]["data"] = {**batch[-1]["data"], "x": {"$nonJson": draw(st.sampled_from(["nan", "infinity"]))}}
        self._run([{"do": "append", "id": session_id, "events": batch, **self._writer(draw)}])

    @rule(data=st.data())
    def read(self, data: st.DataObject) -> None:
        """A load (durable repair: later appends continue after its closers), an inspection, the list or
        a revision token, of a stored, created-only or unknown session."""
        draw = data.draw
        do = draw(st.sampled_from(["load", "load", "inspect", "list", "revision"]))
        step = {"do": do} if do == "list" else {"do": do, "id": self._id(draw)}
        self._run([{**step, **self._writer(draw)}])

    @precondition(lambda self: self.faults)
    @rule(data=st.data())
    def fault(self, data: st.DataObject) -> None:
        """A crash at a random byte offset of the next batch (or between its records, frames or
        transactions), or the file cut short; then an inspection (the stored length the next batch
        continues from) and, for raw JSONL, the artifact's bytes (fixed by the format)."""
        draw = data.draw
        session_id = self._id(draw)
        kinds = {"jsonl": ("cut-record", "whole-record", "truncate"),
                 "jsonl-zstd": ("torn-frame", "whole-frame", "stray-bytes", "truncate"),
                 "sqlite": ("rows",)}[self.backend]
        kind = draw(st.sampled_from([k for k in kinds if k in (self.focus_kinds.get("fault") or kinds)] or kinds))
        batch = self._batch(draw, session_id) or [{"type": "turn/end", "seq": self.stored.get(session_id, 0),
                                                   "time": 0, "data": {}}]
        step: dict[str, Any] = {"do": "tear", "id": session_id}
        if kind in ("cut-record", "whole-record"):
            plain = encode_records(batch)
            cut = len(plain) if kind == "whole-record" else draw(st.integers(0, len(plain) - 1))
            step["base64"] = base64.b64encode(plain[:cut]).decode("ascii")
        elif kind in ("torn-frame", "whole-frame"):
            frame = _multi_block_frame(draw, encode_records(batch))
            cut = len(frame) if kind == "whole-frame" else draw(st.integers(1, len(frame) - 1))
            step["base64"] = base64.b64encode(frame[:cut]).decode("ascii")
        elif kind == "stray-bytes":
            step["base64"] = base64.b64encode(bytes(draw(st.lists(st.integers(0, 255), min_size=1, max_size=3))))
            step["base64"] = step["base64"].decode("ascii")
        elif kind == "truncate":  # a zstd file is cut only inside its last frame's checksum (frame sizes vary)
            drop = draw(st.integers(1, 4)) if self.backend == "jsonl-zstd" else draw(st.integers(1, 120))
            step = {"do": "truncate", "id": session_id, "drop": drop}
        else:  # committed rows of a crashed writer, the last one maybe cut anywhere
            rows = [{"type": e["type"], "data": json_text.dumps(e["data"])} for e in batch]
            if draw(st.booleans()):
                rows[-1]["data"] = rows[-1]["data"][:draw(st.integers(0, max(0, len(rows[-1]["data"]) - 1)))]
            step["rows"] = rows
        after: list[dict[str, Any]] = [{"do": "inspect", "id": session_id}]
        if self.backend == "jsonl":
            after.append({"do": "bytes", "id": session_id})
        self._run([step, *after])

    @precondition(lambda self: self.faults)
    @rule(data=st.data())
    def restart(self, data: st.DataObject) -> None:
        """Close every backend and go on with a fresh one; for raw JSONL, read the bytes."""
        steps: list[dict[str, Any]] = [{"do": "reopen"}]
        if self.backend == "jsonl" and self.stored:
            steps.append({"do": "bytes", "id": data.draw(st.sampled_from(sorted(self.stored)))})
        self._run(steps)

    @rule(data=st.data())
    def live(self, data: st.DataObject) -> None:
        """Grow the live-persistence scenario (§6b) on this backend form and send it whole."""
        draw = data.draw
        if not self.live_steps:
            self.live_steps = [{"do": "create", "id": "l"}]
            self.live_open = True
        kind = self.kind(draw, "live")
        steps: list[dict[str, Any]] = []
        if not self.live_open:
            kind = "stored"
        if kind in ("append", "deep"):
            for event in self.live_log[self.live_sent:self.live_sent + draw(st.integers(1, 3))]:
                step = {"do": "append", "id": "l", "type": event["type"], "data": copy.deepcopy(event["data"])}
                step.update({k: event[k] for k in ("surfaceOp", "sourceEventSeqs") if k in event})
                steps.append(step)
                self.live_sent += 1
            carriers = [s for s in steps if isinstance(s["data"], dict) and "arguments" in s["data"]]
            if kind == "deep" and carriers:  # a value append accepts at the serialiser's limit (DEC-16)
                carriers[0]["data"]["arguments"] = expand_nest({
                    "$nest": {"depth": draw(st.sampled_from([1000, 10_000])), "wrap": [{"$hole": True}], "leaf": 1}})
        elif kind == "fail-writes":
            steps.append({"do": "fail-writes", "count": draw(st.integers(1, 2))})
        elif kind == "listener":
            steps.append({"do": "on", "event": draw(st.sampled_from(["session/event", "session/flush"])),
                          "outcome": draw(st.sampled_from(["return", "raise", "reject"]))})
        elif kind == "flush":
            steps.append({"do": "flush", "id": "l"})
        elif kind == "flush-during-dispose":
            steps += [{"do": "flush", "id": "l", "async": "f"}, {"do": "dispose"}, {"do": "await", "promise": "f"}]
            self.live_open = False
        # Where writes between barriers are eager (liveWrites, LIVE-2: at 2f74ac98ba), what a fresh reader sees
        # of an event no barrier has written yet is a scheduling choice: read only when every append is settled.
        if not (gen.RULES.live_writes_eager and (self.live_unsettled or kind in ("append", "deep"))):
            steps.append({"do": "stored"})
        if not steps:
            return
        self.live_steps += steps
        reply = self.send("persistence.live", "live", {"backend": self.backend, "steps": self.live_steps},
                          needs=[_BACKEND_CAPABILITY[self.backend]])
        if not _ok(reply):
            raise ReferenceBroke(f"the reference refused a live scenario: {reply}")
        for step, entry in zip(steps, reply["result"]["trace"][-len(steps):], strict=True):
            self._behaviour("persistence.live", step, entry)
            if step["do"] == "append":
                self.live_unsettled = True
            elif step["do"] in ("flush", "dispose", "await") and "ok" in entry:
                self.live_unsettled = False  # a resolved barrier wrote every event committed before it (LIVE-1)


def _multi_block_frame(draw: gen.Draw, plaintext: bytes) -> bytes:
    """``plaintext`` as one zstd frame (content checksum on) whose blocks end at drawn offsets: a frame
    a crash may cut inside any of its blocks, so the complete blocks before the cut still decode."""
    import zstandard

    cuts = sorted(set(draw(st.lists(st.integers(1, max(1, len(plaintext) - 1)), max_size=3))))
    compressor = zstandard.ZstdCompressor(write_checksum=True, write_content_size=False).compressobj()
    out = bytearray()
    start = 0
    for cut in [*cuts, len(plaintext)]:
        out += compressor.compress(plaintext[start:cut])
        if cut < len(plaintext):
            out += compressor.flush(zstandard.COMPRESSOBJ_FLUSH_BLOCK)
        start = cut
    out += compressor.flush(zstandard.COMPRESSOBJ_FLUSH_FINISH)
    return bytes(out)


def _trigger(draw: gen.Draw) -> Any:
    return copy.deepcopy(draw(st.sampled_from(gen.VALID[gen.TURN_START]))["data"]["trigger"])


MACHINES: dict[str, type[Differential]] = {
    m.name: m for m in (SessionMachine, ForkMachine, StorageMachine, StoreMachine, PersistenceMachine)
}


# -- running ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Profile:
    """How hard to look: examples per machine, steps per example, whether to shrink, and the
    random source (a fixed ``seed``, else derandomised or fresh)."""

    examples: int
    steps: int = 20
    shrink: bool = True
    derandomize: bool = False
    seed: int | None = None
    content: bool = True
    """Whether a failure's payload is shrunk too (:func:`shrink_failure`), after Hypothesis' own shrinking."""


def _settings(profile: Profile) -> settings:
    phases = [Phase.explicit, Phase.generate] + ([Phase.shrink] if profile.shrink else [])
    return settings(
        max_examples=profile.examples,
        stateful_step_count=profile.steps,
        deadline=None,
        database=None,
        derandomize=profile.derandomize,
        phases=phases,
        report_multiple_bugs=False,
        print_blob=False,
        suppress_health_check=list(HealthCheck),
    )


@functools.cache
def _settle_imports() -> None:
    """Import every module of the reference and the suite before a run draws anything.

    Hypothesis sometimes draws a constant found in the code of the modules imported so far
    (its "local constants"), so a run that imports a module lazily (the reference loads its
    storage forms on first use) would change what a later run of the same seed draws; with
    the modules all loaded first, and the reference's clock injected (:func:`_paired`), a fixed
    seed repeats its requests exactly."""
    import importlib
    import pkgutil

    import sessionspec.conformance
    import sessionspec.reference

    for package in (sessionspec.reference, sessionspec.conformance):
        for info in pkgutil.iter_modules(package.__path__, f"{package.__name__}."):
            importlib.import_module(info.name)


def _run_state_machine(machine: type[Differential], profile: Profile) -> None:
    _settle_imports()
    if profile.seed is None:
        run_state_machine_as_test(machine, settings=_settings(profile))
        return
    test = get_state_machine_test(machine, settings=_settings(profile))
    fixed_seed(profile.seed)(test)()  # Hypothesis' @seed on the machine's test: the same examples every run


def rule_names(machine: type[Differential]) -> list[str]:
    """The names of a machine's rules (not its initializers or invariants)."""
    return sorted(n for n, f in inspect.getmembers(machine) if getattr(f, RULE_MARKER, None) is not None)


MAX_DISTINCT = 8
"""Distinct failures a machine looks for before it stops (one Hypothesis run, shrunk, per failure)."""


SHRINK_TRIES = 400
"""Candidates the content pass (:func:`shrink_failure`) may try per failure (two requests each)."""
SHRINK_SECONDS = 20.0
"""And the seconds it may spend: a slow implementation cannot make it run away."""


def shrink_failure(failure: _Failure, shared: _Run, *, tries: int = SHRINK_TRIES,
                   seconds: float = SHRINK_SECONDS) -> _Failure:
    """The failure with its failing request's payload shrunk (:mod:`.shrink`) while the difference holds:
    the reference still answers (a result or a rejection), and the implementation still differs with
    the same :func:`failure_key` (same rule, op, expected and actual code, differing place). The trace
    step, message and signature are those of the smallest request reached."""
    last = failure.steps[-1]
    key = failure_key(failure.signature)
    smallest: dict[str, Any] = {}

    def holds(args: dict[str, Any]) -> bool:
        try:
            validate_request({"seq": 1, "op": last.op, "args": args})
        except ProtocolViolation:
            return False  # not a request the protocol allows: never a trace
        reference = shared.reference.request(last.op, args)
        if reference["kind"] not in ("result", "rejected"):
            return False
        expected = _expectation(reference, last.op, args)
        actual = shared.impl.request(last.op, args)
        verdict = judge(last.op, args, expected, actual, code_map=shared.impl.code_map)
        if verdict.outcome not in ("failed", "crashed", "errored"):
            return False
        signature = _signature(failure.machine, failure.label, last.op, expected, actual, verdict,
                               shared.impl.code_map, args)
        if failure_key(signature) != key:
            return False
        details = "".join(f"\n    {d.render()}" for d in verdict.differences[:8])
        smallest.update(step=TraceStep(last.op, args, expected, actual, note=last.note),
                        message=f"{verdict.outcome}: {verdict.message}{details}", signature=signature)
        return True

    shrink_args(dict(last.args), holds, budget=ShrinkBudget(tries, seconds))
    if not smallest:
        return failure
    return _Failure(failure.machine, failure.label, smallest["message"], [*failure.steps[:-1], smallest["step"]],
                    smallest["signature"])


def _save(failure: _Failure, impl: Implementation, trace_dir: Path) -> Path:
    from sessionspec.reference.atomic import output_folder

    output_folder(str(trace_dir), create=True)  # the one output policy for a folder of the suite's files
    path = trace_dir / f"{failure.machine}-{uuid.uuid4().hex[:8]}.jsonl"
    summary = failure.message.splitlines()[0][:200]
    # Every request is self-contained (the protocol is stateless), so the failing request of
    # the smallest failing run reproduces the failure on its own: the trace is that request.
    write_trace(path, failure.steps[-1:], description=f"machine {failure.machine}, rule {failure.label}: {summary}",
                origin="sessionspec conformance --fuzz", implementation=impl.info.get("implementation"),
                force=False)  # a new file: a name the suite chose is never a replace
    return path


def replay_hint(trace: Path | str, command: str | None) -> str:
    """The command that replays ``trace`` against the adapter run (``command``; None: the in-process
    reference), each word shell-quoted and the line escaped, as the end-of-run summary prints it."""
    from sessionspec.reference.json_text import display

    impl = f" --impl {shlex.quote(command)}" if command else ""
    return display(f"sessionspec replay {shlex.quote(str(trace))}{impl}")


def run_machine(name: str, impl: Implementation, reference: Implementation, profile: Profile,
                trace_dir: Path, out: TextIO, focus: Sequence[str] | None = None, *,
                known: Sequence[FuzzExpectation] = (), max_distinct: int = MAX_DISTINCT,
                seen: Counter[int] | None = None, behaviours: set[tuple[str, str]] | None = None,
                ) -> list[dict[str, Any]]:
    """Run one machine until it finds no new failure; returns every distinct failure (each with its trace).

    After a failure is shrunk and saved, the machine runs again with that
    failure's key (:func:`failure_key`) and the ``known`` differences set aside,
    so one difference does not hide the others behind it. ``seen`` counts how
    often each known difference matched.

    ``focus`` keeps only those rules, each optionally narrowed to some of its
    input kinds (``"append_invalid:replace-range"``): a short run then spends
    its budget where a suspected fault lives (every machine starts from a
    generated log, so growth rules are optional)."""
    shared = _Run(impl, reference, frozenset(impl.capabilities), known=known)
    base = MACHINES[name]
    namespace: dict[str, Any] = {"run_state": shared}
    if focus is not None:
        rules: dict[str, list[str]] = {}
        for entry in focus:
            rule_name, _, kinds = entry.partition(":")
            rules.setdefault(rule_name, []).extend(k for k in kinds.split(",") if k)
        unknown = sorted(set(rules) - set(rule_names(base)))
        if unknown:
            raise ValueError(f"machine {name} has no rule(s) {', '.join(unknown)}")
        for rule_name, kinds in rules.items():  # type: ignore[assignment]
            bad = sorted(set(kinds) - set(base.kinds.get(rule_name, ())))
            if bad:
                raise ValueError(f"rule {name}.{rule_name} has no kind(s) {', '.join(bad)}")
        namespace.update({r: None for r in rule_names(base) if r not in rules})
        namespace["focus_kinds"] = {r: k for r, k in rules.items() if k}
    machine = type(base.__name__, (base,), namespace)
    started = time.perf_counter()
    failures: list[dict[str, Any]] = []
    while len(failures) < max_distinct:
        shared.failure = None
        try:
            # Hypothesis' own report shows Python calls; the saved trace is the language-neutral report.
            with with_reporter(lambda _text: None):
                _run_state_machine(machine, profile)
        except ReferenceBroke as exc:  # a sessionspec bug: say so instead of blaming the implementation
            out.write(f"fuzz: {name}: INTERNAL ERROR (not a verdict on the implementation): {exc}\n")
            failures.append({"machine": name, "message": f"internal error: {exc}", "trace": None, "rule": None,
                             "requirements": [], "steps": 0})
            break
        except (Mismatch, Flaky) as exc:
            failure = shared.failure
            if failure is None:  # pragma: no cover - a Mismatch always records its failure
                raise
            key = failure_key(failure.signature)
            if key in shared.found:  # pragma: no cover - a found key never raises again
                break
            shared.found.add(key)
            if profile.content:
                failure = shrink_failure(failure, shared)
            path = _save(failure, impl, trace_dir)
            out.write(f"fuzz: {name}: FAILED {failure.label}: {failure.message}\n"
                      f"fuzz: {name}: minimal trace saved to {path} (the failing request of a "
                      f"{len(failure.steps)}-request run)\n"
                      f"fuzz: {name}: re-run it with: {replay_hint(path, impl.command)}\n")
            if isinstance(exc, Flaky):
                out.write(f"fuzz: {name}: note: the failure did not reproduce on every run (flaky implementation)\n")
            failures.append({**failure.signature, "message": failure.message, "trace": str(path),
                             "steps": len(failure.steps)})
            continue
        break
    if seen is not None:
        seen.update(shared.seen)
    if behaviours is not None:
        behaviours.update(shared.behaviours)
    known_note = f", {sum(shared.seen.values())} known difference(s) set aside" if shared.seen else ""
    if shared.requests == 0 and shared.skipped:
        out.write(f"fuzz: {name}: skipped (the implementation claims none of the capabilities it needs)\n")
    elif failures:
        out.write(f"fuzz: {name}: {len(failures)} distinct failure(s){known_note} "
                  f"({shared.requests} requests compared, {time.perf_counter() - started:.1f} s)\n")
    else:
        out.write(f"fuzz: {name}: passed ({shared.requests} requests compared{known_note}, "
                  f"{time.perf_counter() - started:.1f} s)\n")
    return failures


@contextmanager
def _paired(connect: Callable[[], Implementation],
            revision: str | None) -> Iterator[tuple[Implementation, Implementation]]:
    """The implementation under test and the in-process reference serving the same revision (the given
    one, else the one the implementation declares), with the generators drawing from that revision."""
    impl = connect()
    try:
        revision = resolve_revision(revision if revision is not None else impl.info.get("specRevision")).id
    except UnknownRevision:
        impl.close()
        raise
    # A deterministic clock: the reference's event times feed later requests (its log replayed as a
    # seed, forked, stored), so with the wall clock a fixed seed would not repeat its requests.
    clock = SteppingClock()
    reference = Implementation(functools.partial(InProcessConnection, revision=revision, clock=clock),
                               check_schema=False)
    reference.start()
    previous = gen.REVISION
    gen.use_revision(revision)
    try:
        yield impl, reference
    finally:
        gen.use_revision(previous)
        impl.close()
        reference.close()


def run(*, connect: Callable[[], Implementation], examples: int, trace_dir: Path | str, out: TextIO,
        machines: Sequence[str] | Mapping[str, Sequence[str] | None] | None = None, steps: int | None = None,
        shrink: bool = True, derandomize: bool = False, stop_at_first: bool = False,
        known: Sequence[FuzzExpectation] = (), seen: Counter[int] | None = None,
        revision: str | None = None, content: bool = True) -> list[dict[str, Any]]:
    """Run the machines against ``connect()`` (a started implementation); returns the failures.

    The ``fuzz.py`` contract: ``examples`` is Hypothesis' ``max_examples`` per
    machine; each failure is ``{"machine", "message", "trace", ...}`` with the
    path of a replayable trace under ``trace_dir``. ``machines`` selects machines
    by name, or maps names to the rules to focus on. ``known`` differences (an
    expectation file's ``fuzz`` entries) are set aside; ``seen`` counts their
    matches. Each machine keeps going after a failure (up to :data:`MAX_DISTINCT`
    distinct ones); ``stop_at_first`` stops at the first failure of the run. The run is at
    ``revision`` (default: the one the implementation declares, ``specRevision``): the generators
    draw from that revision's registry and the reference serves that revision."""
    plan: dict[str, Sequence[str] | None] = (
        dict(machines) if isinstance(machines, Mapping) else dict.fromkeys(machines or MACHINES)
    )
    selected = list(plan)
    unknown = [m for m in selected if m not in MACHINES]
    if unknown:
        raise ValueError(f"unknown machine(s) {', '.join(unknown)}; known: {', '.join(MACHINES)}")
    profile = Profile(examples=examples, steps=steps or Profile.steps, shrink=shrink, derandomize=derandomize,
                      content=content)
    failures: list[dict[str, Any]] = []
    with _paired(connect, revision) as (impl, reference):
        for name in selected:
            found = run_machine(name, impl, reference, profile, Path(trace_dir), out, plan[name], known=known,
                                max_distinct=1 if stop_at_first else MAX_DISTINCT, seen=seen)
            failures.extend(found)
            if found and stop_at_first:
                break
    return failures



@dataclass(frozen=True)
class QuickRun:
    """One run of the CI-quick profile: a machine (maybe focused on some rules) with a fixed seed
    (``None``: Hypothesis' derandomised one)."""

    machine: str
    seed: int | None
    examples: int
    steps: int
    focus: tuple[str, ...] | None = None

    @property
    def profile(self) -> Profile:
        return Profile(examples=self.examples, steps=self.steps, shrink=False, derandomize=self.seed is None,
                       seed=self.seed)


QUICK: tuple[QuickRun, ...] = (
    QuickRun("session", None, 6, 10),
    QuickRun("session", 2, 6, 10),
    QuickRun("session", 4, 6, 10),
    QuickRun("session", 5, 6, 10),
    QuickRun("session", 6, 6, 10),
    QuickRun("session", 7, 6, 10),
    QuickRun("session", 0, 3, 8, ("append_invalid",)),
    QuickRun("session", 1, 3, 8, ("append_invalid",)),
    QuickRun("session", 0, 3, 8, ("header",)),
    QuickRun("session", 1, 3, 8, ("header",)),
    QuickRun("session", 1, 3, 8, ("invariants",)),
    QuickRun("session", 0, 3, 8, ("replay",)),
    QuickRun("session", 0, 3, 8, ("seed_invalid",)),
    QuickRun("session", 1, 3, 8, ("seed_invalid",)),
    QuickRun("fork", None, 6, 10),
    QuickRun("storage", None, 6, 10),
    QuickRun("storage", 0, 6, 10),
    QuickRun("storage", 3, 6, 10),
    QuickRun("store", None, 6, 10),
    QuickRun("persistence", None, 6, 10),
    QuickRun("persistence", 0, 3, 8, ("fault", "append", "read", "restart")),
    QuickRun("persistence", 1, 2, 6, ("live",)),
    QuickRun("persistence", 3, 2, 6, ("append:non-json",)),
)
"""The CI-quick profile (the project's test profile): the old profile's four derandomised runs plus
fixed-seed runs, broad and focused, chosen by ``bench/quick_profile.py`` (a greedy cover of the
behaviours the reference shows, within 3x the old profile's time, after the runs that show its
``REQUIRED`` behaviours: the persistence machine's non-JSON batch, PERSIST-5). The same requests on every run."""


def run_quick(*, connect: Callable[[], Implementation], trace_dir: Path | str, out: TextIO,
              stop_at_first: bool = False, runs: Sequence[QuickRun] | None = None,
              known: Sequence[FuzzExpectation] = (), seen: Counter[int] | None = None,
              behaviours: set[tuple[str, str]] | None = None, revision: str | None = None,
              machines: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """The CI-quick machine runs (:data:`QUICK`, or ``runs``; only those of ``machines`` when named) against
    ``connect()``, at ``revision`` as in :func:`run`; returns the failures, one per distinct difference
    (:func:`run`'s contract)."""
    unknown = [m for m in machines or () if m not in MACHINES]
    if unknown:
        raise ValueError(f"unknown machine(s) {', '.join(unknown)}; known: {', '.join(MACHINES)}")
    chosen = [e for e in (QUICK if runs is None else runs) if not machines or e.machine in machines]
    failures: list[dict[str, Any]] = []
    with _paired(connect, revision) as (impl, reference):
        for entry in chosen:
            found = run_machine(entry.machine, impl, reference, entry.profile, Path(trace_dir), out, entry.focus,
                                known=known, max_distinct=1 if stop_at_first else MAX_DISTINCT, seen=seen,
                                behaviours=behaviours)
            failures.extend(f for f in found if failure_key(f) not in {failure_key(g) for g in failures})
            if found and stop_at_first:
                break
    return failures
