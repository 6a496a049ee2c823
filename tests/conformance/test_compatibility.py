"""Every published release runs at its own revision, and docs/release-matrix.md is the fresh result.

Needs node and npm (skipped, with the reason, only when they are absent); a
release whose pinned install is missing is installed with `npm ci` from its
own lockfile.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from sessionspec.conformance import compat

NODE, NPM = shutil.which("node"), shutil.which("npm")
DOC = Path(__file__).resolve().parents[2] / "docs" / "release-matrix.md"

pytestmark = pytest.mark.skipif(NODE is None or NPM is None,
                                reason="node and npm are not on PATH: the published releases cannot be run here")


@pytest.fixture(scope="module")
def runs() -> list[compat.ReleaseRun]:
    return [compat.run_release(release) for release in compat.RELEASES]


def test_each_release_declares_itself_and_runs_the_vectors_of_its_revision(runs):
    for run in runs:
        assert run.result.implementation["implementation"]["version"] == run.release
        assert run.revision == "b150a551b8"
        outcomes = [r.outcome for r in run.result.results]
        assert "failed" not in outcomes and "errored" not in outcomes and "xpass" not in outcomes, run.release
        assert outcomes.count("passed") >= 439, run.release


def test_no_release_has_a_known_failure_classed_revision_difference(runs):
    for run in runs:
        assert [r.case.id for r in run.result.results if r.outcome == "xfail" and (r.reason or "").startswith("(a)")] == []


def test_the_compatibility_page_is_fresh(runs):
    assert DOC.read_text(encoding="utf-8") == compat.render(runs), (
        "docs/release-matrix.md is stale: regenerate with python -m sessionspec.conformance.compat")
