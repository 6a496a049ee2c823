"""Running cases against an implementation: scheduling, verdicts, expectations.

``run_cases`` starts ``jobs`` adapters (one per worker thread; each is its
own process for a subprocess implementation), hands each worker cases from
a shared queue, judges every reply, and applies the expectation file. The
results come back in corpus order whatever the scheduling was.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from . import protocol
from .cases import Case
from .compare import judge, render_value
from .expectations import Expectations
from .harness import Connection, Implementation, StartupFailed
from .results import KNOWN_FAILURE_OUTCOMES, CaseResult, skip_reasons

__all__ = ["RunResult", "apply_stale", "run_case", "run_cases", "start_implementation"]

Progress = Callable[[int, int, CaseResult], None]

#: What a result keeps of a reply: a longer reply is judged in full, then kept as its kind and size only
#: (a run of large replies must not hold them all); messages and differences are cut the same way.
KEEP_REPLY_CHARS = 64 << 10
KEEP_MESSAGE_CHARS = 4 << 10
KEEP_DIFFERENCES = 50


@dataclass
class RunResult:
    """Everything a report needs about one run."""

    implementation: dict[str, Any]
    results: list[CaseResult]
    duration: float
    stale_expectations: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    fuzz_failures: list[dict[str, Any]] = field(default_factory=list)
    fuzz_known: list[dict[str, Any]] = field(default_factory=list)  # known differences and their matches
    fuzz_unmatched: list[str] = field(default_factory=list)  # known differences never seen
    fuzz_held: list[str] = field(default_factory=list)  # of those, the ones a named test holds (no failure)

    @property
    def exit_code(self) -> int:
        bad = any(r.problem for r in self.results)
        return 1 if bad or self.stale_expectations or self.problems or self.fuzz_failures else 0


def start_implementation(connect: Callable[[], Connection], timeout: float) -> Implementation:
    """A started adapter; raises :class:`StartupFailed` with a readable reason."""
    impl = Implementation(connect, timeout=timeout)
    impl.start()
    return impl


def run_case(impl: Implementation, case: Case, expectations: Expectations | None = None) -> CaseResult:
    """Send one case to a started adapter and judge the reply."""
    missing = sorted(case.needs - impl.capabilities)
    beyond = protocol.beyond_limits({"seq": 0, "op": case.op, "args": case.args}, impl.limits) if not missing else None
    if missing:
        result = CaseResult(case, "skipped", f"implementation does not claim capability {', '.join(missing)}")
    elif beyond:
        result = CaseResult(case, "skipped", beyond)
    else:
        started = time.perf_counter()
        reply = impl.request(case.op, case.args)
        duration = time.perf_counter() - started
        verdict = judge(case.op, case.args, case.expect, reply, ignore=case.ignore, code_map=impl.code_map)
        message, differences = verdict.message, verdict.differences
        if len(message) > KEEP_MESSAGE_CHARS:
            message = message[:KEEP_MESSAGE_CHARS] + f"… ({len(message) - KEEP_MESSAGE_CHARS} more characters)"
        if len(differences) > KEEP_DIFFERENCES:
            message += f" ({len(differences) - KEEP_DIFFERENCES} more differences not kept)"
            differences = differences[:KEEP_DIFFERENCES]
        if impl.last_reply_bytes > KEEP_REPLY_CHARS:
            reply = {"seq": reply.get("seq"), "kind": reply.get("kind"),
                     "notKept": f"a reply of {impl.last_reply_bytes} characters (more than {KEEP_REPLY_CHARS} are not kept)"}
            differences = tuple(replace(d, actual=render_value(d.actual, 200)) for d in differences)
        result = CaseResult(case, verdict.outcome, message, differences, reply, duration=duration, crash=verdict.crash)
    reason = expectations.reasons.get(case.id) if expectations else None
    if reason is None:
        return result
    if result.outcome in KNOWN_FAILURE_OUTCOMES:
        return CaseResult(case, "xfail", result.message, result.differences, result.reply, reason, result.duration,
                          crash=result.crash)
    if result.outcome == "passed":
        return CaseResult(
            case, "xpass", "listed as a known failure but passed: remove it from the expectation file",
            (), result.reply, reason, result.duration,
        )
    return result


def run_cases(
    cases: Sequence[Case],
    connect: Callable[[], Connection],
    *,
    jobs: int = 1,
    timeout: float = 30.0,
    expectations: Expectations | None = None,
    progress: Progress | None = None,
    first: Implementation | None = None,
    maxfail: int | None = None,
) -> RunResult:
    """Run ``cases`` on ``jobs`` adapters; ``first`` is an already started adapter to reuse. With ``maxfail``
    no further case starts once that many cases had a problem (failed, crashed, errored, xpass); the cases not
    run are left out and a problem says how many."""
    started = time.perf_counter()
    impl0 = first or start_implementation(connect, timeout)
    if expectations is not None:  # Node-specific entries apply on the Node the handshake names
        expectations = expectations.for_runtime(impl0.info.get("runtime"))
    workers: list[Implementation] = [impl0]
    try:
        for _ in range(max(1, min(jobs, len(cases))) - 1):
            workers.append(start_implementation(connect, timeout))
    except StartupFailed:
        for w in workers[1:]:
            w.close()
        raise
    results: list[CaseResult | None] = [None] * len(cases)
    todo: queue.SimpleQueue[int] = queue.SimpleQueue()
    for i in range(len(cases)):
        todo.put(i)
    done = 0
    problems = 0
    lock = threading.Lock()
    errors: list[BaseException] = []

    def work(impl: Implementation) -> None:
        nonlocal done, problems
        try:
            while True:
                if maxfail is not None and problems >= maxfail:
                    return
                try:
                    i = todo.get_nowait()
                except queue.Empty:
                    return
                result = run_case(impl, cases[i], expectations)
                results[i] = result
                with lock:
                    done += 1
                    problems += result.problem
                    if progress is not None:
                        progress(done, len(cases), result)
        except BaseException as exc:  # pragma: no cover - surfaced below  # noqa: BLE001 - an implementation's crash of any kind is a verdict, never a suite crash
            errors.append(exc)

    try:
        if len(workers) == 1:
            work(workers[0])
        else:
            threads = [threading.Thread(target=work, args=(w,), daemon=True) for w in workers]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
    finally:
        for w in workers:
            w.close()
    if errors:
        raise errors[0]
    final = [r for r in results if r is not None]
    run = RunResult(dict(impl0.info), final, time.perf_counter() - started)
    if len(final) < len(cases):
        run.problems.append(f"stopped after {problems} failing case(s) (--maxfail {maxfail}): "
                            f"{len(cases) - len(final)} of {len(cases)} selected case(s) not run")
    if final and all(r.outcome == "skipped" for r in final):
        # Zero coverage must never read as a pass (pytest exits 5 on an empty run): an adapter that claims
        # no capability the selection needs proves nothing, nor does one that skips every case it claims.
        if any(r.reply is not None for r in final):
            why = "the adapter skipped them, including cases of capabilities it claims"
        else:
            why = "the adapter claims none of the capabilities they need"
        run.problems.append(f"no case was attempted: all {len(final)} selected cases were skipped ({why}); "
                            f"top skip reasons: {'; '.join(f'{n} x {m}' for m, n in skip_reasons(final)[:3])}")
    return run


def apply_stale(run: RunResult, expectations: Expectations | None, corpus_ids: set[str]) -> None:
    """Record expectation entries that name no case of the whole corpus."""
    if expectations is not None:
        run.stale_expectations = expectations.stale(corpus_ids)
