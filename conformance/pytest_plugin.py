"""The conformance suite inside an implementation's own pytest run (entry point ``pytest11``).

``pytest --sessionspec-impl "CMD" [--sessionspec-expect FILE] [--sessionspec-revision R]`` adds
every vector of the revision the adapter declares as a test item: node id ``AREA/CASE-ID``,
markers for the area, each requirement family and each requirement id (``-m "SURF-5"``). A case
listed in the expectation file is a strict ``xfail`` (passing fails the run, as ``xpass`` does in
``sessionspec conformance``); a case needing a capability the adapter does not claim is skipped
with that reason. Verdicts are the harness's own (``runner.run_case``), so ``-k``, ``-x``,
``--lf``, ``-n`` (each xdist worker starts its own adapter) and ``--junitxml`` work as usual.
``--sessionspec-impl reference`` runs the embedded reference in-process.

Without ``--sessionspec-impl`` the plugin does nothing: it imports no suite module and adds no item.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from .cases import Case
    from .harness import Implementation

_IMPL = "sessionspec_impl"
_REFERENCE = "reference"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("sessionspec", "dsh-session conformance suite")
    group.addoption("--sessionspec-impl", dest=_IMPL, metavar="CMD", default=None,
                    help="run the conformance vectors against this adapter command ('reference': the embedded reference)")
    group.addoption("--sessionspec-expect", dest="sessionspec_expect", metavar="FILE", default=None,
                    help="expectation file: its known failures are strict xfails")
    group.addoption("--sessionspec-revision", dest="sessionspec_revision", metavar="R", default=None,
                    help="format revision to check (default: the one the adapter declares)")
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
        from sessionspec.spec.revisions import resolve_revision

        self.revision = resolve_revision(revision if revision is not None else self.impl.info.get("specRevision")).id
        layouts = cases_mod.sqlite_layouts([self.revision])
        layout = self.impl.info.get("sqliteLayout") or layouts[0]
        self.cases: list[Case] = cases_mod.for_sqlite_layout(
            cases_mod.for_revision(cases_mod.load_corpus(), self.revision), layout)

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
    config.addinivalue_line("markers", "sessionspec: a dsh-session conformance vector")
    for name in _markers():
        config.addinivalue_line("markers", f"{name}: sessionspec vectors of {name}")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption(_IMPL, None) is None:
        return
    suite = _Suite(config)
    config.add_cleanup(suite.impl.close)
    for case in suite.cases:
        name = f"{case.area}/{case.id}"
        items.append(CaseItem.from_parent(session, name=name, nodeid=name, case=case, suite=suite))
