"""The reference passes every vector, in-process and as a subprocess, with
identical replies: the in-process fast path takes no serialisation shortcut."""

from __future__ import annotations

import shlex

import pytest
from conformance_fakes import REFERENCE_CMD
from sessionspec.conformance import wire
from sessionspec.conformance.cases import for_revision, for_sqlite_layout, load_corpus, sqlite_layouts
from sessionspec.conformance.compare import normalise_reply
from sessionspec.conformance.harness import InProcessConnection, connector_for
from sessionspec.conformance.runner import run_cases, start_implementation
from sessionspec.spec.revisions import known_revisions


def _replies(connect):
    impl = start_implementation(connect, 30.0)
    corpus = for_revision(load_corpus())
    try:
        return [normalise_reply(c.op, c.args, impl.request(c.op, c.args)) for c in corpus]
    finally:
        impl.close()


def test_in_process_and_subprocess_replies_are_identical():
    inproc = _replies(InProcessConnection)
    sub = _replies(connector_for(REFERENCE_CMD))
    assert len(inproc) == len(sub) > 0
    for a, b in zip(inproc, sub, strict=True):
        a.pop("seq"), b.pop("seq")
        assert wire.dumps(a) == wire.dumps(b)


LAYOUTS = [(revision, layout) for revision in known_revisions() for layout in sqlite_layouts([revision])]
"""Every SQLite layout of every revision: the reference serves each (DEC-21)."""


@pytest.mark.parametrize(("revision", "layout"), LAYOUTS)
def test_the_reference_passes_every_vector_in_process(revision, layout):
    run = run_cases(for_sqlite_layout(for_revision(load_corpus(), revision), layout),
                    lambda: InProcessConnection(revision=revision, sqlite_layout=layout))
    failures = [(r.case.source, r.outcome, r.message) for r in run.results if r.outcome != "passed"]
    assert failures == []


@pytest.mark.parametrize(("revision", "layout"), LAYOUTS)
def test_the_reference_passes_every_vector_as_a_subprocess_with_two_workers(revision, layout):
    cases = for_sqlite_layout(for_revision(load_corpus(), revision), layout)
    command = f"{REFERENCE_CMD} --revision {shlex.quote(revision)} --sqlite-layout {layout}"
    run = run_cases(cases, connector_for(command), jobs=2)
    assert [r.case.id for r in run.results] == [c.id for c in cases]  # corpus order kept
    assert {r.outcome for r in run.results} == {"passed"}
    assert run.implementation["implementation"]["name"] == "sessionspec-reference"
