"""The conformance suite inside an implementation's own pytest run (entry point ``pytest11``).

``pytest --sessionspec-impl "CMD" [--sessionspec-expect FILE] [--sessionspec-revision R]`` adds
every vector of the revision the adapter declares as a test item: node id ``AREA/CASE-ID``,
markers for the area, each requirement family and each requirement id (``-m "SURF-5"``). A case
listed in the expectation file is a strict ``xfail`` (passing fails the run, as ``xpass`` does in
``sessionspec conformance``); a case needing a capability the adapter does not claim is skipped
with that reason. Verdicts are the harness's own (``runner.run_case``), so ``-k``, ``-x``,
``--lf``, ``-n`` (each xdist worker starts its own adapter) and ``--junitxml`` work as usual.
``--sessionspec-impl reference`` runs the embedded reference in-process. ``--sessionspec-fuzz N``
(or ``quick``, the CI profile of ``conformance --fuzz quick``) adds one item per differential state
machine, node id ``fuzz/MACHINE``, marker ``fuzz``; it fails with each distinct difference and the
replayable trace saved under ``--sessionspec-trace-dir`` (the expectation file's ``fuzz`` entries
are set aside, as in ``sessionspec conformance``). In a deep run (N of at least
``STRICT_FUZZ_EXAMPLES``) an entry nothing matched fails, as in the CLI: the item of the machine it
names, or ``fuzz/expectations`` (last; it needs every machine's item run in its process) for one
naming no machine.

A run whose vectors were all skipped (an adapter claiming no capability they need, or a ``-m``/``-k``
selection of such cases) attempted nothing: it fails (exit status 1) with the top skip reasons, as
``sessionspec conformance`` does, instead of a green run with zero coverage.

Without ``--sessionspec-impl`` the plugin does nothing: it imports no suite module and adds no item.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from .cases import Case
    from .expectations import FuzzExpectation
    from .harness import Implementation

_IMPL = "sessionspec_impl"
_REFERENCE = "reference"
_CASE_PROPERTY = "sessionspec-case"
"""The user property that marks a vector's reports, so the controller of an xdist run can count them too."""


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("sessionspec", "dsh-session conformance suite")
    group.addoption("--sessionspec-impl", dest=_IMPL, metavar="CMD", default=None,
                    help="run the conformance vectors against this adapter command ('reference': the embedded reference)")
    group.addoption("--sessionspec-expect", dest="sessionspec_expect", metavar="FILE", default=None,
                    help="expectation file: its known failures are strict xfails")
    group.addoption("--sessionspec-revision", dest="sessionspec_revision", metavar="R", default=None,
                    help="format revision to check (default: the one the adapter declares)")
    group.addoption("--sessionspec-fuzz", dest="sessionspec_fuzz", metavar="N|quick", default=None,
                    help="also add one item per state machine, run with N examples or the CI-quick profile")
    group.addoption("--sessionspec-trace-dir", dest="sessionspec_trace_dir", metavar="DIR", default=".sessionspec/traces",
                    help="where fuzz items save failure traces (default: .sessionspec/traces)")
    group.addoption("--sessionspec-timeout", dest="sessionspec_timeout", metavar="SECONDS", type=float, default=30.0,
                    help="per-request timeout (default: 30)")


class _Suite:
    """The adapter of this process (started once, at collection) and the cases of its revision."""

    def __init__(self, config: pytest.Config) -> None:
        from . import cases as cases_mod
        from .expectations import load_expectations
        from .harness import StartupFailed, connector_for
        from .runner import start_implementation

        impl = config.getoption(_IMPL)
        revision = config.getoption("sessionspec_revision")
        self.timeout: float = config.getoption("sessionspec_timeout")
        self.connect = connector_for(None if impl == _REFERENCE else impl, revision)
        self.expectations = load_expectations(config.getoption("sessionspec_expect")) \
            if config.getoption("sessionspec_expect") else None
        try:
            self.impl: Implementation = start_implementation(self.connect, self.timeout)
        except StartupFailed as exc:
            raise pytest.UsageError(f"sessionspec: the adapter could not start: {exc}") from None
        if self.expectations is not None:  # Node-specific entries: those of the Node the handshake names
            self.expectations = self.expectations.for_runtime(self.impl.info.get("runtime"))
        from sessionspec.spec.revisions import resolve_revision

        self.revision = resolve_revision(revision if revision is not None else self.impl.info.get("specRevision")).id
        layouts = cases_mod.sqlite_layouts([self.revision])
        layout = self.impl.info.get("sqliteLayout") or layouts[0]
        self.cases: list[Case] = cases_mod.for_sqlite_layout(
            cases_mod.for_revision(cases_mod.load_corpus(), self.revision), layout)
        self.fuzz_seen, self.fuzz_ran = Counter(), set()

    fuzz_seen: Counter[int]
    """Per fuzz entry (its index), how often the fuzz items of this process matched it."""
    fuzz_ran: set[str]

    def run(self, case: Case) -> Any:
        from .runner import run_case

        return run_case(self.impl, case)  # the harness restarts an adapter that died or hung


class CaseFailed(Exception):
    """A case's verdict was failed, crashed or errored; the message is the harness's."""


class CaseItem(pytest.Item):
    """One vector."""

    def __init__(self, *, case: Case, suite: _Suite, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.case = case
        self.suite = suite
        self.add_marker("sessionspec")
        self.add_marker(case.area)
        for requirement in case.requirements:
            self.add_marker(requirement.split("-")[0])
            self.add_marker(requirement)
        reason = suite.expectations.reasons.get(case.id) if suite.expectations else None
        if reason is not None:
            self.add_marker(pytest.mark.xfail(strict=True, reason=f"known failure: {reason}", raises=CaseFailed))
        self.user_properties.append(("requirements", " ".join(case.requirements)))
        self.user_properties.append((_CASE_PROPERTY, case.id))

    def runtest(self) -> None:
        result = self.suite.run(self.case)
        if result.outcome == "skipped":
            pytest.skip(result.message)
        if result.outcome != "passed":
            raise CaseFailed(f"{result.outcome}: {result.message}")

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, CaseFailed):
            c = self.case
            return (f"{c.id} ({', '.join(c.requirements)}, {c.level}): {c.description}\n"
                    f"  {excinfo.value}\n  source: {c.source}")
        return str(super().repr_failure(excinfo, style=style))

    def reportinfo(self) -> tuple[str, int | None, str]:
        return self.case.source.split("#")[0], None, f"{self.case.area}/{self.case.id}: {self.case.description}"


class FuzzFailed(Exception):
    """A state machine found differences; the message lists them with their traces."""


class FuzzItem(pytest.Item):
    """One differential state machine, run against the adapter (``machines.run`` / ``run_quick``)."""

    def __init__(self, *, machine: str, budget: int | str, suite: _Suite, trace_dir: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.machine, self.budget, self.suite, self.trace_dir = machine, budget, suite, trace_dir
        self.add_marker("sessionspec")
        self.add_marker("fuzz")

    def runtest(self) -> None:
        import io
        from pathlib import Path

        from . import machines
        from .runner import start_implementation

        suite = self.suite

        def connect() -> Implementation:
            return start_implementation(suite.connect, suite.timeout)

        known = tuple(suite.expectations.fuzz) if suite.expectations else ()
        log = io.StringIO()
        seen: Counter[int] = Counter()
        if self.budget == "quick":
            runs = [r for r in machines.QUICK if r.machine == self.machine]
            found = machines.run_quick(connect=connect, trace_dir=Path(self.trace_dir), out=log, runs=runs,
                                       known=known, seen=seen, revision=suite.revision)
        else:
            found = machines.run(connect=connect, examples=int(self.budget), trace_dir=Path(self.trace_dir), out=log,
                                 machines=[self.machine], known=known, seen=seen, revision=suite.revision)
        suite.fuzz_seen.update(seen)
        suite.fuzz_ran.add(self.machine)
        from sessionspec.reference.json_text import display

        command = suite.impl.command
        lines = [display(f"{f.get('rule') or '?'} ({f.get('op') or '?'}): "
                         f"{str(f.get('message') or '').partition(chr(10))[0][:300]}; trace {f.get('trace')}")
                 + (f"\n    replay with: {machines.replay_hint(f['trace'], command)}" if f.get("trace") else "")
                 for f in found]
        # The CLI's strict rule (FuzzResult.problems): a deep run's unmatched entry fails; this item
        # answers for the entries naming its machine, fuzz/expectations for those naming none.
        stale = _unmatched(known, seen, self.budget, lambda k: k.machine == self.machine)
        if found or stale:
            head = f"{len(found)} distinct difference(s)" + (f", {len(stale)} stale expectation(s)" if stale else "")
            raise FuzzFailed(head + ":\n  " + "\n  ".join(lines + [display(p) for p in stale]))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, FuzzFailed):
            return f"machine {self.machine}: {excinfo.value}"
        return str(super().repr_failure(excinfo, style=style))

    def reportinfo(self) -> tuple[str, int | None, str]:
        return "sessionspec/conformance/machines.py", None, f"fuzz/{self.machine}"


def _unmatched(known: Sequence[FuzzExpectation], seen: Counter[int], budget: int | str,
               answers_for: Callable[[FuzzExpectation], bool]) -> list[str]:
    """The CLI's problems for the unmatched entries ``answers_for`` picks (none below the strict depth)."""
    from .expectations import STRICT_FUZZ_EXAMPLES
    from .fuzz import FuzzResult

    if not isinstance(budget, int) or budget < STRICT_FUZZ_EXAMPLES:
        return []
    unmatched = [k.describe() for i, k in enumerate(known) if not seen[i] and answers_for(k) and not k.heldBy]
    return FuzzResult([], unmatched=unmatched, strict=True).problems


class FuzzExpectationsItem(pytest.Item):
    """``fuzz/expectations``: the expectation file's fuzz entries naming no machine that no item matched
    (a deep run only, as ``conformance --fuzz N``); it needs every machine's item run before it in its process."""

    def __init__(self, *, budget: int | str, suite: _Suite, machines: Sequence[str], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.budget, self.suite, self.machines = budget, suite, tuple(machines)
        self.add_marker("sessionspec")
        self.add_marker("fuzz")

    def runtest(self) -> None:
        suite = self.suite
        known = tuple(suite.expectations.fuzz) if suite.expectations else ()
        missing = [m for m in self.machines if m not in suite.fuzz_ran]
        if missing:
            pytest.skip(f"entries naming no machine are checked when every fuzz item runs in this process "
                        f"(not here: {', '.join(missing)})")
        stale = _unmatched(known, suite.fuzz_seen, self.budget, lambda k: k.machine is None)
        if stale:
            from sessionspec.reference.json_text import display

            raise FuzzFailed(f"{len(stale)} stale expectation(s):\n  " + "\n  ".join(display(p) for p in stale))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, FuzzFailed):
            return f"fuzz expectations: {excinfo.value}"
        return str(super().repr_failure(excinfo, style=style))

    def reportinfo(self) -> tuple[str, int | None, str]:
        return "sessionspec/conformance/expectations.py", None, "fuzz/expectations"


def _fuzz_budget(value: str) -> int | str:
    if value == "quick":
        return value
    try:
        number = int(value)
    except ValueError:
        number = 0
    if number < 1:
        raise pytest.UsageError(f"--sessionspec-fuzz: expected a number of examples (>= 1) or 'quick', got {value!r}")
    return number


@functools.cache
def _markers() -> tuple[str, ...]:
    from .cases import load_corpus

    names: set[str] = set()
    for case in load_corpus():
        names.add(case.area)
        names.update(case.requirements)
        names.update(r.split("-")[0] for r in case.requirements)
    return tuple(sorted(names))


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption(_IMPL, None) is None:
        return
    if not hasattr(config, "workerinput"):  # an xdist worker's reports go to its controller, which counts them
        config.pluginmanager.register(_Coverage(), "sessionspec-coverage")
    config.addinivalue_line("markers", "sessionspec: a dsh-session conformance vector")
    config.addinivalue_line("markers", "fuzz: a sessionspec differential state machine (--sessionspec-fuzz)")
    for name in _markers():
        config.addinivalue_line("markers", f"{name}: sessionspec vectors of {name}")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption(_IMPL, None) is None:
        return
    fuzz = config.getoption("sessionspec_fuzz")
    budget = _fuzz_budget(fuzz) if fuzz is not None else None
    suite = _Suite(config)
    config.add_cleanup(suite.impl.close)
    for case in suite.cases:
        name = f"{case.area}/{case.id}"
        items.append(CaseItem.from_parent(session, name=name, nodeid=name, case=case, suite=suite))
    if budget is not None:
        from .machines import MACHINES, QUICK

        names = [m for m in MACHINES if budget != "quick" or any(r.machine == m for r in QUICK)]
        for machine in names:
            name = f"fuzz/{machine}"
            items.append(FuzzItem.from_parent(session, name=name, nodeid=name, machine=machine, budget=budget,
                                              suite=suite, trace_dir=config.getoption("sessionspec_trace_dir")))
        if suite.expectations and any(k.machine is None for k in suite.expectations.fuzz) and _unmatched(
                suite.expectations.fuzz, Counter(), budget, lambda k: k.machine is None):
            items.append(FuzzExpectationsItem.from_parent(session, name="fuzz/expectations", nodeid="fuzz/expectations",
                                                          budget=budget, suite=suite, machines=names))



class _Coverage:
    """Counts the vectors' verdicts from their reports (on an xdist controller: the workers' reports), so a run
    that attempted none fails instead of passing with zero coverage."""

    def __init__(self) -> None:
        self.attempted = 0
        self.skips: Counter[str] = Counter()

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if not any(name == _CASE_PROPERTY for name, _ in report.user_properties):
            return
        if report.skipped and not hasattr(report, "wasxfail"):
            longrepr = report.longrepr
            reason = str(longrepr[2]) if isinstance(longrepr, tuple) else str(longrepr)
            self.skips[reason.removeprefix("Skipped: ")] += 1
        elif report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
            self.attempted += 1

    def nothing_attempted(self) -> str | None:
        """The line saying that no vector was attempted, or None (some was, or none was selected)."""
        if self.attempted or not self.skips:
            return None
        top = "; ".join(f"{n} x {reason}" for reason, n in sorted(self.skips.items(), key=lambda kv: (-kv[1], kv[0]))[:3])
        return (f"sessionspec: no case was attempted: all {self.skips.total()} selected cases were skipped "
                f"(the adapter claims none of the capabilities they need); top skip reasons: {top}")

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if self.nothing_attempted() and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        line = self.nothing_attempted()
        if line:
            terminalreporter.write_line(line, red=True)
