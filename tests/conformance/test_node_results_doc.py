"""docs/node-results.md keeps its known-failure counts and defect reproducers in step with the expectation file.

Runs without Node: it reads the expectation file and the page only. Each distinct
defect of the page names the cases it reproduces (`--only <case id>`, or
`--only <REQ-ID>` for every defect case of that requirement); together they must be
exactly the file's `(b)` entries, so a defect added, dropped or reclassified there
makes the page stale here.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from sessionspec.conformance.cases import load_corpus

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "node-results.md"
EXPECTATIONS = ROOT / "conformance" / "adapters" / "node-dsh-session" / "expectations.json"


def _classes() -> dict[str, list[str]]:
    failures = json.loads(EXPECTATIONS.read_text(encoding="utf-8"))["failures"]
    by_class: dict[str, list[str]] = {}
    for entry in failures:
        by_class.setdefault(entry["reason"][:3], []).append(entry["case"])
    return by_class


def test_the_counts_of_known_failures_match_the_expectation_file() -> None:
    text = PAGE.read_text(encoding="utf-8")
    classes = _classes()
    defects, assumptions = len(classes.get("(b)", [])), len(classes.get("(c)", []))
    summary = re.search(r"(\d+) known failures \((\d+) defects, (\d+) suite assumptions\)", text)
    assert summary, "the Results paragraph states the known failures and their classes"
    assert [int(n) for n in summary.groups()] == [defects + assumptions, defects, assumptions]
    heading = re.search(r"^### Defects \((\d+) cases, (\d+) distinct\)$", text, re.MULTILINE)
    assert heading and int(heading[1]) == defects


def test_each_distinct_defect_reproduces_exactly_the_listed_defect_cases() -> None:
    text = PAGE.read_text(encoding="utf-8")
    heading = re.search(r"^### Defects \((\d+) cases, (\d+) distinct\)$", text, re.MULTILINE)
    assert heading
    section = text[heading.end():text.index("\n## ", heading.end())]
    items = re.split(r"^\d+\. ", section, flags=re.MULTILINE)[1:]
    assert len(items) == int(heading[2])
    defects = set(_classes()["(b)"])
    corpus = {case.id: case for case in load_corpus()}
    named: set[str] = set()
    for item in items:
        assert "*Package:*" in item and "*Spec:*" in item and "*Repro:*" in item, item[:80]
        only = re.findall(r"--only ([0-9a-f]{16}|[A-Z]+-\d+)", item)
        assert only, item[:80]
        for target in only:
            named |= {target} if target in corpus else {c for c in defects if target in corpus[c].requirements}
    assert named == defects
