"""Counts in prose are generated from their data, never restated by hand (issue 26, facts once).

`python -m sessionspec.conformance.docfacts` renders each generated block of README, CONTRIBUTING and
docs/ from its source (the recorded Node run, every revision's error codes). These tests hold the blocks
fresh, show that a changed source makes a block stale (and that the command repairs it), and refuse
run counts and vocabulary counts restated outside the blocks in the pages a contributor reads first.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from sessionspec.conformance import docfacts

ROOT = Path(__file__).resolve().parents[2]

# Pages whose prose may not restate counts: the run's outcomes or the size of the vocabulary.
NO_COUNTS = ("README.md", "CONTRIBUTING.md", "docs/architecture.md")
COUNT = re.compile(
    r"\b\d[\d,]* (?:cases?|vectors?|pass(?:es|ed)?|known failures?|skipped|mutants?|deliberately broken|"
    r"distinct|suite assumptions?|defects?|error codes?|codes|event types?|types|requirements?)\b")


def _outside_blocks(text: str) -> str:
    return re.sub(r"<!-- generated: .*?<!-- end generated: [a-z-]+ -->", "", text, flags=re.DOTALL)


def test_every_generated_block_is_fresh() -> None:
    assert docfacts.stale_blocks(ROOT) == []
    for name in docfacts.BLOCKS:  # every block is used somewhere
        assert any(f"<!-- generated: {name} " in (ROOT / rel).read_text(encoding="utf-8") for rel in docfacts.DOCUMENTS), name


def test_the_node_run_block_states_the_recorded_runs_counts() -> None:
    lines = [json.loads(line) for line in (ROOT / docfacts.NODE_RUN).read_text(encoding="utf-8").splitlines()]
    footer = next(line for line in lines if line["kind"] == "footer")["counts"]
    cases = [line for line in lines if line["kind"] == "case"]
    defects = sum(1 for c in cases if c["outcome"] == "xfail" and str(c.get("reason", "")).startswith("(b)"))
    block = docfacts.render_node_run(ROOT)
    assert f"runs {len(cases)} vectors" in block
    assert f"**{footer['passed']} pass, {footer['xfail']} known failure" in block
    assert f"({defects} defect" in block and f"{footer['skipped']} skipped**" in block


def test_a_changed_source_makes_its_block_stale_and_the_command_refreshes_it(tmp_path: Path) -> None:
    for rel in (*docfacts.DOCUMENTS, str(docfacts.NODE_RUN)):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / rel, tmp_path / rel)
    run = tmp_path / docfacts.NODE_RUN
    lines = run.read_text(encoding="utf-8").splitlines()
    cases = [i for i, line in enumerate(lines) if json.loads(line).get("outcome") == "passed"]
    first = json.loads(lines[cases[0]])
    lines[cases[0]] = json.dumps({**first, "outcome": "skipped", "message": "a re-recorded run"})
    footer_at = next(i for i, line in enumerate(lines) if json.loads(line)["kind"] == "footer")
    footer = json.loads(lines[footer_at])
    counts = footer["counts"]
    footer["counts"] = {**counts, "passed": counts["passed"] - 1, "skipped": counts["skipped"] + 1}
    lines[footer_at] = json.dumps(footer)
    run.write_text("\n".join(lines) + "\n", encoding="utf-8")

    assert docfacts.stale_blocks(tmp_path) == ["docs/node-results.md: node-run", "docs/node-results.md: node-run-vectors",
                                               "docs/node-results.md: node-run-skipped"]
    assert docfacts.main(["--check", "--root", str(tmp_path)]) == 1
    assert docfacts.main(["--root", str(tmp_path)]) == 0
    assert docfacts.stale_blocks(tmp_path) == []
    page = (tmp_path / "docs/node-results.md").read_text(encoding="utf-8")
    assert f"**{counts['passed'] - 1} pass," in page and f"{counts['skipped'] + 1} skipped**" in page
    assert f"* **{counts['skipped'] + 1} skipped**, each with its reason:" in page and f"`{first['id']}` (" in page
    assert (tmp_path / "README.md").read_bytes() == (ROOT / "README.md").read_bytes()  # nothing else touched


def _recorded() -> tuple[dict[str, int], list[dict]]:
    lines = [json.loads(line) for line in (ROOT / docfacts.NODE_RUN).read_text(encoding="utf-8").splitlines()]
    return next(line for line in lines if line["kind"] == "footer")["counts"], [case for case in lines if case["kind"] == "case"]


def test_the_node_run_by_op_adds_up_to_the_recorded_runs_counts() -> None:
    counts, cases = _recorded()
    rows = [line.split(" | ") for line in docfacts.render_node_run_vectors(ROOT).splitlines()[2:]]
    totals = [sum(int(row[i]) for row in rows) for i in (1, 2, 3, 4)]
    assert totals == [len(cases), counts["passed"], counts["xfail"], counts["skipped"]]
    assert all(row[5] == "" for row in rows)  # nothing failed or errored in the recording
    by_op = {row[0].lstrip("| "): int(row[1]) for row in rows}
    assert by_op["`zstd-read`"] == sum(1 for c in cases if c["id"] in _ops("zstd-read"))


def _ops(op: str) -> set[str]:
    from sessionspec.conformance.cases import load_corpus

    return {case.id for case in load_corpus() if case.op == op}


def test_the_skipped_block_lists_every_skipped_case_with_its_reason() -> None:
    _, cases = _recorded()
    block = docfacts.render_node_run_skipped(ROOT)
    skipped = [c for c in cases if c["outcome"] == "skipped"]
    assert block.startswith(f"* **{len(skipped)} skipped**, each with its reason:\n")
    assert sorted(re.findall(r"^    \* `([0-9a-f]{16})`", block, re.MULTILINE)) == sorted(c["id"] for c in skipped)
    for case in skipped:
        assert case["message"] in block


# The Node page's prose outside its generated blocks: no outcome counts of the recorded run (the blocks hold them).
RUN_COUNT = re.compile(r"\b\d[\d,]* (?:pass(?:es|ed)?|known failures?|skipped)\b|\bof the \d[\d,]* (?:cases|scenarios)\b")


def test_the_node_page_states_the_runs_counts_only_in_its_blocks() -> None:
    text = _outside_blocks((ROOT / "docs/node-results.md").read_text(encoding="utf-8"))
    assert [m[0] for m in RUN_COUNT.finditer(text)] == []
    assert RUN_COUNT.search("Of the 23 zstd scenarios, 16 pass and 7 fail") and RUN_COUNT.search("* **6 skipped**")


def test_the_mutant_block_counts_the_catalogue() -> None:
    from sessionspec.conformance.mutants import MUTANTS

    block = docfacts.render_mutant_catalogue(ROOT)
    assert f"holds **{len(MUTANTS)} mutants**" in block
    assert f"{sum(1 for m in MUTANTS.values() if m.probe)} with a state-machine probe" in block
    families = dict(re.findall(r"([A-Z]+) (\d+)", block.split("by family: ", 1)[1]))
    assert {f: int(n) for f, n in families.items()} == {f: sum(m.family == f for m in MUTANTS.values())
                                                         for f in {m.family for m in MUTANTS.values()}}
    page = _outside_blocks((ROOT / "docs/suite-strength.md").read_text(encoding="utf-8"))
    assert not re.search(r"catalogue (?:now )?holds \d+", page)  # the current size is the block's


def test_the_error_code_table_lists_every_code_of_every_revision() -> None:
    from sessionspec.spec.error_codes import ERROR_CODES

    table = docfacts.render_error_codes(ROOT)
    assert set(re.findall(r"`([A-Z][A-Z_]+)`", table)) == set(ERROR_CODES)


def test_no_page_a_contributor_reads_first_restates_a_count() -> None:
    restated = {}
    for rel in NO_COUNTS:
        text = _outside_blocks((ROOT / rel).read_text(encoding="utf-8"))
        found = [m[0] for m in COUNT.finditer(text)]
        if found:
            restated[rel] = found
    assert restated == {}, "link to a generated page or block (python -m sessionspec.conformance.docfacts) instead"


def test_the_refusal_sees_a_restated_count() -> None:
    assert COUNT.search("so its 34 known failures show as KNOWN")
    assert COUNT.search("616 cases pass, 3 are skipped")
    assert COUNT.search("40 deliberately broken references")
    assert not COUNT.search(_outside_blocks(
        "<!-- generated: node-run (x) -->\n**650 pass, 6 skipped**\n<!-- end generated: node-run -->"))
