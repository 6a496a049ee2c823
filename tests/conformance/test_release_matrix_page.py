"""docs/release-matrix.md lists known failures once per cause, and loses no case of the expectation file.

These run without node: the page is rendered from runs made of the expectation
file's own cases (`test_compatibility.py` re-runs the real releases when node
and npm are present and compares the committed page).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from sessionspec.conformance import compat
from sessionspec.conformance.cases import for_revision, load_corpus
from sessionspec.conformance.results import CaseResult
from sessionspec.conformance.runner import RunResult

DOC = Path(__file__).resolve().parents[2] / "docs" / "release-matrix.md"
FAILURES = json.loads(compat.EXPECTATIONS.read_text(encoding="utf-8"))["failures"]
REASONS = {f["case"]: f["reason"] for f in FAILURES}
PERSIST_5 = "PersistenceCoordinator.append, which every backend's append delegates to"


def runs(releases: tuple[str, ...] = compat.RELEASES, *, drop: dict[str, str] | None = None) -> list[compat.ReleaseRun]:
    """Every release's run with every listed case a known failure (``drop``: case id -> release where it passes)."""
    cases = for_revision(load_corpus(), "b150a551b8")
    out = []
    for release in releases:
        results = [CaseResult(c, "xfail", reason=REASONS[c.id])
                   if c.id in REASONS and (drop or {}).get(c.id) != release else CaseResult(c, "passed")
                   for c in cases]
        out.append(compat.ReleaseRun(release, "b150a551b8", RunResult({"implementation": {"language": "ts"}}, results, 1.0), 14))
    return out


def known_section(page: str) -> str:
    return page.split("## Known failures", 1)[1].split("## Skipped", 1)[0]


def test_the_expectation_file_is_the_one_the_page_is_built_from() -> None:
    assert len(REASONS) == len(FAILURES) >= 30  # ids are unique
    assert set(REASONS) <= {c.id for c in for_revision(load_corpus(), "b150a551b8")}


def _causes() -> int:
    """How many distinct causes the newest release's known failures have (the page's entries)."""
    return len(compat.known_failure_groups(
        {r.case.id: (r.case, r.reason or "", [run.release]) for run in runs()[-1:] for r in run.result.results
         if r.outcome == "xfail"}))


def test_one_entry_per_cause_with_its_cases_releases_requirements_and_one_reproducer() -> None:
    section = known_section(compat.render(runs()))
    for case_id in REASONS:  # every case id, once, as a list item
        assert len(re.findall(rf"^- `{case_id}` ", section, re.MULTILINE)) == 1, case_id
    assert section.count(PERSIST_5) == 1  # was once per case (21 times)
    headings = re.findall(r"^### \d+\. (.+)$", section, re.MULTILINE)
    causes = _causes()
    assert len(headings) == causes, headings
    # every cause is a defect: no suite assumption since #28 scoped the validator's policy
    assert sum(h.startswith("defect: ") for h in headings) == causes
    assert f"defect: PERSIST-5 (21 cases; {', '.join(compat.RELEASES)})" in headings
    assert f"{len(REASONS)} cases, {causes} distinct causes ({causes} defects)" in section
    # "as case <id>" joins the group of that case; its own text stays on its line
    surf = section.split("defect: SURF-10 (2 cases")[1].split("###")[0]
    assert "`54e698556e2f9acc`" in surf and "`637fd25a12aec310`" in surf and "through foldSurface" in surf
    # a reproducer is printed once per group; where the cases' differ, the page says whose it shows
    assert section.count("Reproducer") == causes + 2  # one per cause, and the 2 joined cases keep their own
    assert "Reproducer (of `02a3775612f79d76`; each case's own is in the expectation file): on a JsonlSessionPersistence" in section
    assert "Reproducer: write the two lines" in section  # the two null-line cases share theirs


def test_a_case_known_in_fewer_releases_says_which() -> None:
    section = known_section(compat.render(runs(drop={"62748e700e084818": "0.1.0-rc.6"})))
    only = "(only 0.1.0-rc.7, 0.1.0-rc.8, 0.1.1-rc.2)"
    assert f"- `62748e700e084818` a null line after the last turn/end has no seq and stops reading there {only}" in section
    assert f"defect: JSONL-7, CHUNK-8 (2 cases; {', '.join(compat.RELEASES)})" in section


def test_reasons_split_into_class_requirements_explanation_and_reproducer() -> None:
    split = compat._split_reason
    assert split("(b) defect: SEED-3, as case 6bad5b5fff61f9c2: more. Minimal repro: f(null).") == (
        "defect", ["SEED-3"], "6bad5b5fff61f9c2", "more.", "f(null).")
    assert split("(c) suite assumption: ZSTD-4. No repro here") == ("suite assumption", ["ZSTD-4"], None, "No repro here", "")
    assert split("JSON-6, JSONL-3. x. repro: y") == ("unclassified", ["JSON-6", "JSONL-3"], None, "x.", "y")
    assert split("free text") == ("unclassified", [], None, "free text", "")


def test_the_committed_page_keeps_every_case_and_states_each_cause_once() -> None:
    page = DOC.read_text(encoding="utf-8")
    section = known_section(page)
    for case_id in REASONS:
        assert f"`{case_id}`" in section, case_id
    assert section.count(PERSIST_5) == 1
    assert len(re.findall(r"^### \d+\. ", section, re.MULTILINE)) == _causes()


def test_compatibility_md_links_the_page_and_restates_none_of_its_numbers() -> None:
    """docs/compatibility.md links the generated page (and its total row) instead of copying counts that go stale."""
    text = " ".join((DOC.parent / "compatibility.md").read_text(encoding="utf-8").split())
    page = DOC.read_text(encoding="utf-8")
    assert "[release-matrix.md](release-matrix.md)" in text and "(release-matrix.md#known-failures)" in text
    assert re.search(r"^\| \*\*total\*\* \| ([^|]+) \|", page, re.MULTILINE), "no total row"
    assert not re.search(r"\d+ (?:pass|known failures?|skipped|distinct causes)\b", text), "a count restated by hand"
