"""A seconds-long "is my adapter wired right" check: the handshake, then one small case per op it claims.

A new adapter's first problems are wiring, not conformance: it exits, logs to stdout, declares the
wrong protocol version, never flushes, or claims an op it does not serve. The full suite reports
those as hundreds of errored cases; the smoke check tries each claimed op once, with its smallest
case, and says in words what is miswired and what to do about it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from . import protocol, wire
from .cases import Case
from .harness import Implementation
from .runner import run_case

__all__ = ["BUDGET_SECONDS", "OpCheck", "check_ops", "pick_cases", "startup_advice"]

BUDGET_SECONDS = 10.0
"""The whole check stops trying further ops once this much time has passed."""


@dataclass(frozen=True)
class OpCheck:
    """What one op's smoke case gave: ``ok``, or what is wrong and the advice."""

    op: str
    case: Case | None
    outcome: str  # passed | failed | crashed | errored | skipped | no-case | not-tried
    message: str = ""
    advice: str = ""
    seconds: float = 0.0

    @property
    def wired(self) -> bool:
        return self.outcome in ("passed", "no-case")


def pick_cases(cases: Sequence[Case], capabilities: frozenset[str], limits: object) -> dict[str, Case | None]:
    """Per op the adapter claims (its capability is in ``capabilities``), its smallest applicable case
    (shortest request), or None when the corpus holds none the adapter can take."""
    claimed = [op for op in protocol.OPS.values()
               if op.name not in ("start", "stop") and (op.capability is None or op.capability in capabilities)]
    chosen: dict[str, Case | None] = {}
    for op in claimed:
        best: tuple[int, str, Case] | None = None
        for c in cases:
            if c.op != op.name or not c.needs <= capabilities:
                continue
            if protocol.beyond_limits({"seq": 0, "op": c.op, "args": c.args}, limits):
                continue
            try:
                size = len(wire.dumps(c.args))
            except wire.WireError:
                continue
            if best is None or (size, c.id) < best[:2]:
                best = (size, c.id, c)
        if best is not None or op.capability is not None:  # `persistence` needs a backend: absent = not claimed
            chosen[op.name] = best[2] if best else None
    return chosen


_PROTOCOL = "conformance/PROTOCOL.md"


_HARNESS_MADE = ("malformed reply", "reply is not", "reply seq", "reply kind", "reply does not fit",
                 "reply holds", "reply longer", "adapter exited", "adapter closed", "adapter restart",
                 "adapter failed to restart", "no reply within", "not sent:", "request cannot be encoded")
"""How the harness's own ``errored`` messages begin (the adapter misbehaved), as opposed to an adapter's."""


def wiring_advice(message: str) -> str:
    """What an adapter failure (a harness-made ``errored`` message) says about the wiring."""
    text = message.lower()
    if "cannot run" in text:
        return "the command cannot be started: check the program name, its path and that it is executable"
    if "not json" in text or "not utf-8" in text:
        return ("the adapter prints something other than one JSON reply per line on stdout (a banner, a log "
                "line, debug output?): write everything but replies to stderr")
    if "does not fit the protocol schema" in text or "is not a json object" in text or "reply kind" in text:
        return f"the reply does not follow the reply schema (spec/protocol/, {_PROTOCOL} §2)"
    if "reply seq" in text:
        return f"a reply must carry the `seq` of its request ({_PROTOCOL} §2)"
    if "exited" in text or "closed its stdout" in text or "restart" in text:
        return ("the adapter process ends: run the command by hand, send it the request line and read its "
                "stderr (shown above); it must keep reading stdin until `stop`")
    if "no reply within" in text or "hung" in text:
        return ("no reply came: write each reply as one line ending in \\n and flush stdout after it, and read "
                "requests line by line (not until end of input)")
    if "protocol version" in text:
        return f"the `start` reply must declare protocolVersion {protocol.PROTOCOL_VERSION} ({_PROTOCOL} §3)"
    return f"compare the adapter's replies with {_PROTOCOL}"


def startup_advice(message: str) -> str:
    """The advice for a failed handshake (:class:`~sessionspec.conformance.harness.StartupFailed`)."""
    if "protocol version" in message:
        return wiring_advice("protocol version")
    if "handshake: errored" in message or "handshake: rejected" in message or "handshake: crashed" in message:
        inner = message.partition("handshake: ")[2].partition(": ")[2]
        if inner.startswith(_HARNESS_MADE):
            return wiring_advice(inner)
        return f"the adapter must answer `start` with a result (protocolVersion, implementation, capabilities; {_PROTOCOL} §3)"
    return wiring_advice(message)


def _case_advice(check_op: str, case: Case, outcome: str, message: str, reply: object) -> str:
    kind = reply.get("kind") if isinstance(reply, dict) else None
    capability = protocol.OPS[check_op].capability or ", ".join(sorted(case.needs))
    if outcome == "errored":
        if message.startswith(_HARNESS_MADE):
            return wiring_advice(message)
        return (f"the adapter claims capability {capability} but answered `{check_op}` errored: serve the op "
                f"({_PROTOCOL} §5), or leave {capability} out of `capabilities`")
    if outcome == "skipped" and kind == "skipped":
        return (f"the adapter claims capability {capability} but skipped `{check_op}`: serve it, or leave "
                f"{capability} out of `capabilities`")
    if outcome == "crashed":
        return ("the implementation threw while serving the request: when the error is about the arguments, the "
                f"adapter decodes `{check_op}`'s args wrongly ({_PROTOCOL} §5); an error the implementation "
                "defines must be replied `rejected` with its code")
    if outcome == "failed":
        return (f"the op is wired (a well-formed reply came) but its result differs from the spec: run "
                f"`sessionspec conformance --impl ... --only {case.area}` for every case of it")
    return ""


def check_ops(impl: Implementation, chosen: dict[str, Case | None], *,
              budget: float = BUDGET_SECONDS, clock: Callable[[], float] = time.monotonic,
              started: float | None = None) -> list[OpCheck]:
    """Run each op's case once, in protocol order, until ``budget`` seconds have passed since ``started``."""
    begin = clock() if started is None else started
    checks: list[OpCheck] = []
    for op, case in chosen.items():
        if case is None:
            checks.append(OpCheck(op, None, "no-case", "the corpus holds no case of this op the adapter can take"))
            continue
        if clock() - begin > budget:
            checks.append(OpCheck(op, case, "not-tried", f"not tried: the {budget:g} s budget is spent",
                                  "the adapter is slow to answer: a smoke case takes milliseconds in the reference"))
            continue
        t0 = time.perf_counter()
        result = run_case(impl, case)
        seconds = time.perf_counter() - t0
        message = result.message
        if result.differences:
            message += "; " + "; ".join(d.render() for d in result.differences[:3])
        advice = "" if result.outcome == "passed" else _case_advice(op, case, result.outcome, result.message,
                                                                    result.reply)
        checks.append(OpCheck(op, case, result.outcome, message, advice, seconds))
    return checks
