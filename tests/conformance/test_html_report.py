"""The HTML page of conformance runs: contents, escaping, degradation, CLI, freshness of the committed example.

The page is checked here as text (parsed with the standard library's HTML
parser); `test_html_report_browser.py` validates it and loads it in Chromium.
"""

from __future__ import annotations

import ast
import io
import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from sessionspec import cli
from sessionspec.conformance.html_report import render_html, run_from_lines
from sessionspec.conformance.report import load_report
from sessionspec.spec import load_spec

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "docs" / "results"
RECORDED = sorted(RESULTS.glob("*.jsonl"))
EXAMPLE = RESULTS / "conformance.html"
FAILING_RUN = ROOT / "bench" / "data" / "node-0.1.1-rc.2-at-2f74ac98ba-fuzz.jsonl"
"""A Node run with failed, crashed and fuzz-failing cases, recorded against the pinned revision's vectors."""
HOSTILE = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned=2">\ud800"\'&'


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = cli.run(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


class Outline(HTMLParser):
    """Tags, their attributes and the text of a page, for structural assertions."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.script_text: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self._in_script = tag == "script"

    def handle_endtag(self, tag: str) -> None:
        self._in_script = False

    def handle_data(self, data: str) -> None:
        (self.script_text if self._in_script else self.text).append(data)


def outline(page: str) -> Outline:
    parser = Outline()
    parser.feed(page)
    parser.close()
    return parser


def header(**extra: Any) -> dict[str, Any]:
    return {"kind": "header", "format": "sessionspec-conformance-report/1",
            "implementation": {"protocolVersion": 1, "implementation": {"name": "impl", "version": "1.0", "language": "x"},
                               "specRevision": "2f74ac98ba", "capabilities": ["json-value"]},
            "command": ["impl-adapter", "--flag"], "sessionspec": "0.1.0", "specRevision": "2f74ac98ba",
            "started": "2026-12-01T00:00:00+00:00", "selection": None, "expectations": None, **extra}


def case(number: int, outcome: str = "passed", **extra: Any) -> dict[str, Any]:
    return {"kind": "case", "id": f"case{number:04d}", "area": "json", "description": f"case number {number}",
            "requirements": ["JSON-1"], "level": "MUST", "outcome": outcome, "durationMs": 0.1, **extra}


def footer(cases: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    counts: dict[str, int] = {}
    for c in cases:
        counts[c["outcome"]] = counts.get(c["outcome"], 0) + 1
    return {"kind": "footer", "counts": counts, "durationMs": 1.0, "exitCode": 0, **extra}


def page_of(*runs: list[dict[str, Any]]) -> str:
    return render_html([run_from_lines(lines, f"run{i}.jsonl") for i, lines in enumerate(runs, 1)])


def failing(number: int, **extra: Any) -> dict[str, Any]:
    fields = {"message": "result differs in 1 place(s)", "request": {"op": "json-value", "args": {"value": [1, 2]}},
              "expected": {"result": {"isJsonValue": True}},
              "reply": {"seq": 3, "kind": "result", "result": {"isJsonValue": False}},
              "diff": [{"pointer": "/isJsonValue", "kind": "value", "expected": True, "actual": False}]}
    return case(number, "failed", **{**fields, **extra})


# -- from recorded runs -------------------------------------------------------------------


def test_the_recorded_runs_are_todays_reference_at_both_revisions_and_node_at_its_own() -> None:
    assert [p.name for p in RECORDED] == ["1-reference-2f74ac98ba.jsonl", "2-reference-b150a551b8.jsonl",
                                          "3-node-0.1.1-rc.2.jsonl"]
    reports = [load_report(p) for p in RECORDED]
    assert [r.header["revision"] for r in reports] == ["2f74ac98ba", "b150a551b8", "b150a551b8"]  # whose vectors ran
    for clean in reports[:2]:  # the reference passes every case of each revision
        assert clean.header["implementation"]["implementation"]["name"] == "sessionspec-reference"
        assert clean.counts["passed"] == len(clean.cases) >= 600 and clean.footer["exitCode"] == 0
    node = reports[2]
    assert node.header["implementation"]["implementation"]["version"] == "0.1.1-rc.2"
    assert node.header["implementation"]["specRevision"] == "0.1.1-rc.2"  # declared by release, resolved above
    assert node.header["expectations"] == "conformance/adapters/node-dsh-session/expectations.json"
    listed = {f["case"] for f in json.loads((ROOT / node.header["expectations"]).read_text(encoding="utf-8"))["failures"]}
    assert {c["id"] for c in node.cases if c["outcome"] == "xfail"} == listed  # every known failure shows as such
    assert node.footer["exitCode"] == 0 and not any(c["outcome"] in ("failed", "errored", "xpass") for c in node.cases)
    # each known fuzz difference shows in the recorded quick run, or a test holds it on the package: a focused
    # run (test_node_fuzz_traces.py) or the entry matched against the package's own reply (test_fuzz_context.py)
    assert node.footer["fuzzKnown"]
    focused = (ROOT / "tests" / "conformance" / "test_node_fuzz_traces.py").read_text(encoding="utf-8")
    on_package = _package_tests(ROOT / "tests" / "conformance" / "test_fuzz_context.py")
    for entry in node.footer["fuzzKnown"]:
        requirement = re.search(r"\(b\) defect: ([A-Z]+-\d+)", entry["entry"])
        held = requirement and (f"{requirement[1]}:" in focused or any(requirement[1] in t for t in on_package))
        assert entry["matches"] > 0 or held, entry["entry"][:120]


def _package_tests(path: Path) -> list[str]:
    """The source of each test in ``path`` that talks to the real package (takes the ``npm_command`` fixture)."""
    text = path.read_text(encoding="utf-8")
    return [ast.get_source_segment(text, node) or "" for node in ast.walk(ast.parse(text))
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test")
            and any(a.arg == "npm_command" for a in node.args.args)]


def test_the_regenerate_script_records_and_renders_exactly_these_runs() -> None:
    script = (RESULTS / "regenerate.sh").read_text(encoding="utf-8")
    for path in RECORDED:
        assert f"docs/results/{path.name}" in script, path.name
    for flag in ("--revision 2f74ac98ba", "--revision b150a551b8", "--expect conformance/adapters/node-dsh-session/expectations.json",
                 "--fuzz quick", "--impl 'node conformance/adapters/node-dsh-session/adapter.mjs'"):
        assert flag in script, flag


def test_a_page_of_the_recorded_runs_has_headers_matrix_known_failures_and_known_fuzz_differences() -> None:
    page = render_html([run_from_lines([r.header, *r.cases, r.footer], str(p), p.parent)
                        for p, r in ((p, load_report(p)) for p in RECORDED)])
    doc = outline(page)
    text = " ".join(doc.text)
    assert [a.get("id") for t, a in doc.tags if t == "article"] == ["run-1", "run-2", "run-3"]
    for label in ("sessionspec-reference", "@deepseek-ai/dsh-session", "0.1.1-rc.2", "2f74ac98ba", "b150a551b8",
                  "capabilities", "revision"):
        assert label in text
    matrix_rows = [a for t, a in doc.tags if t == "tr" and a.get("class") == "fam"]
    assert len(matrix_rows) >= 14
    assert "SURF" in text and "Surface fold" in text and "PASS" in text and "KNOWN" in text and "SKIP" in text
    assert any(t == "tr" and a.get("class") == "req" and "hidden" in a for t, a in doc.tags)
    # every known failure is listed with the expectation file's reason; nothing failed
    listed = [a for t, a in doc.tags if t == "li" and a.get("class") == "case"]
    node = load_report(RECORDED[2])
    known = json.loads((ROOT / "conformance/adapters/node-dsh-session/expectations.json").read_text(encoding="utf-8"))
    assert len(listed) == sum(1 for c in node.cases if c["outcome"] == "xfail") == len(known["failures"])
    assert {a.get("data-outcome") for a in listed} == {"xfail"} and {a.get("data-run") for a in listed} == {"3"}
    for case in node.cases:
        if case["outcome"] == "xfail":
            assert " ".join(case["reason"].split()) in text, case["id"]
    assert "sessionspec conformance --impl &#x27;node conformance/adapters/node-dsh-session/adapter.mjs&#x27; --only" in page
    assert "Known fuzz differences (expectation file)" in text and "session.seed_invalid" in text


def test_a_recorded_failing_fuzz_run_shows_diffs_replay_commands_and_shrunk_traces() -> None:
    """The run recorded before the spec described the published revision (benchmark input): failures of every kind."""
    report = load_report(FAILING_RUN)
    assert report.footer["exitCode"] == 1 and report.footer.get("fuzz") and report.counts["failed"] > 0
    page = render_html([run_from_lines([report.header, *report.cases, report.footer], str(FAILING_RUN), FAILING_RUN.parent)])
    text = " ".join(outline(page).text)
    assert 'class="diff"' in page and '<span class="del">-' in page and '<span class="add">+' in page
    first = next(c for c in report.cases if c["outcome"] == "failed")
    requirement = load_spec().requirements[first["requirements"][0]]
    from sessionspec.conformance.html_report import _inline_code

    assert _inline_code(requirement["text"]) in page and requirement["title"].replace("`", "") in text.replace("`", "")
    assert "`" not in _inline_code(requirement["text"]) or requirement["text"].count("`") % 2  # rendered, not raw
    assert 'id="fuzz"' in page and "Shrunk trace" in page and "sessionspec replay traces/" in page
    assert "Step 1" in text and "not available here" not in page


def test_the_committed_example_page_is_fresh(monkeypatch) -> None:
    monkeypatch.chdir(ROOT)
    code, out, err = run("report", *(str(p.relative_to(ROOT)) for p in RECORDED),
                         "--html", str(EXAMPLE.relative_to(ROOT)), "--check")
    assert code == 0, f"{err}\n{out[:3000]}"


def test_check_reports_a_stale_page_with_the_command_that_regenerates_it(tmp_path) -> None:
    lines = [header(), case(1), footer([case(1)])]
    report = tmp_path / "r.jsonl"
    report.write_text("".join(json.dumps(line) + "\n" for line in lines))
    target = tmp_path / "r.html"
    target.write_text("old page\n")
    code, out, err = run("report", str(report), "--html", str(target), "--check")
    assert code == 1 and "-old page" in out and f"sessionspec report {report} --html {target}" in err
    assert target.read_text() == "old page\n"  # --check writes nothing
    assert run("report", str(report), "--html", str(target))[0] == 2  # the page exists: replaced only with --force
    assert run("report", str(report), "--html", str(target), "--force")[0] == 0
    assert run("report", str(report), "--html", str(target), "--check")[0] == 0
    assert not list(tmp_path.glob(".*.tmp"))


# -- hostile and odd reports ----------------------------------------------------------------


def test_every_string_from_a_report_is_inert_and_huge_values_are_capped() -> None:
    huge = "A" * 3_000_000
    deep: Any = "bottom"
    for _ in range(10_000):
        deep = {"d": deep}
    hostile_header = header(selection=[HOSTILE], expectations=HOSTILE, command=[HOSTILE])
    hostile_header["implementation"] = {"implementation": {"name": HOSTILE, "version": HOSTILE, "language": HOSTILE,
                                                           "homepage": HOSTILE},
                                        "capabilities": [HOSTILE, huge], "specRevision": HOSTILE, HOSTILE: HOSTILE}
    cases = [
        case(1, "failed", description=HOSTILE + huge, id=HOSTILE, area=HOSTILE, requirements=[HOSTILE, "JSON-1"],
             message=HOSTILE + huge, reason=HOSTILE,
             request={"op": HOSTILE, "args": {HOSTILE: [HOSTILE, huge, deep]}},
             expected={"result": {HOSTILE: deep}}, reply={"seq": 1, "kind": "result", "result": {HOSTILE: huge}},
             diff=[{"pointer": HOSTILE, "kind": HOSTILE, "expected": HOSTILE, "actual": deep}, HOSTILE]),
        case(2, "errored", message="\x00\x01\x1b[31m\x7f\ufffe\U0010ffff", crash={"class": HOSTILE, "message": huge}),
    ]
    lines = [hostile_header, *cases,
             footer(cases, problems=[HOSTILE], staleExpectations=[HOSTILE],
                    fuzz=[{"machine": HOSTILE, "message": HOSTILE, "trace": "/nonexistent/" + HOSTILE,
                           "rule": HOSTILE, "requirements": [HOSTILE], "steps": 1, HOSTILE: HOSTILE}])]
    page = page_of(lines)
    page.encode("utf-8")  # strict: no lone surrogate reaches the file
    doc = outline(page)
    assert sum(1 for t, _ in doc.tags if t == "script") == 1  # only the page's own
    assert not any(t == "img" for t, _ in doc.tags)
    assert not any(k.startswith("on") for _, a in doc.tags for k in a)
    assert "__pwned" not in "".join(doc.script_text)
    text = "".join(doc.text)
    assert "<script>window.__pwned = 1</script>" in text  # shown as text
    assert "\\ud800" in text and "\\u0001" in text and "\\ufffe" in text and "\\U0010ffff" in text
    assert len(page) < 2_000_000, len(page)  # 3 MB strings are capped, deep values elided
    assert "more characters" in text and "{… 1 key}" in text


@pytest.mark.parametrize("value", [None, 7, "text", [1, "two"], {"a": None}])
def test_odd_but_schema_valid_shapes_still_render(value: Any) -> None:
    h = header()
    h["implementation"] = {"implementation": value, "capabilities": value, "error": "start failed"}
    h["command"] = None
    c = case(1, "failed", request={"op": value, "args": value}, expected={"x": value}, reply={"kind": value},
             diff=[{"pointer": value}])
    page = page_of([h, c, footer([c], fuzz=[{"machine": value, "trace": None}])])
    assert "FAIL" in page and "case0001" in page


def test_an_old_report_renders_and_newer_fields_are_shown_when_present() -> None:
    old = [header(), failing(1), footer([failing(1)])]
    old_page = page_of(old)
    assert "2f74ac98ba" in old_page and "CRASHED" not in old_page and 'value="crashed"' not in old_page
    crash = case(2, "crashed", message="the implementation threw", crash={"class": "TypeError", "message": "x is undefined"},
                 request={"op": "json-value", "args": {"value": 1}}, expected={"result": {"isJsonValue": True}})
    newer = [header(revision="0.1.1-rc.2"), crash, failing(3), footer([crash, failing(3)])]
    page = page_of(old, newer)
    text = " ".join(outline(page).text)
    assert "CRASHED" in text and "TypeError" in text and "x is undefined" in text and "0.1.1-rc.2" in text
    assert "1 crashed" in text and 'data-outcome="crashed"' in page
    assert 'value="crashed"' in page  # the outcome filter offers it


def test_cases_group_by_rule_family_and_each_requirement_row_counts_its_cases() -> None:
    cases = [case(1), case(2, "failed", requirements=["SURF-5", "SURF-6", "APPEND-5"]), case(3, "skipped"),
             case(4, "xfail", requirements=["SURF-5"], reason="known"), case(5, requirements=["NOPE-1"])]
    page = page_of([header(), *cases, footer(cases)])
    text = " ".join(outline(page).text)
    assert "SURF" in text and "(2 requirements)" in text and "NOPE-1" in text and "(not in this spec)" in text
    surf = page.split('<span class="fid">SURF</span>')[1].split("</tbody>")[0]
    assert "1 failed, 1 known failure" in surf  # one case counts once in its family
    assert surf.count('<tr class="req" hidden>') == 2


def many_failures(n: int) -> list[dict[str, Any]]:
    """``n`` failing cases repeated from the recorded failing Node run (its failed and crashed cases, each with
    request, expectation, reply and diff; about 9 KB of page each, as in issue 25's 93 MB page), fresh ids."""
    recorded = [c for c in load_report(FAILING_RUN).cases if c["outcome"] in ("failed", "crashed")]
    return [{**recorded[k % len(recorded)], "id": f"{recorded[k % len(recorded)]['id']}-{k}"} for k in range(n)]


def shown_per_requirement(page: str) -> tuple[int, int]:
    """(cases shown in full, cases listed by one line) on a page."""
    return page.count('<li class="case" '), page.count('<li class="case listed" ')


@pytest.mark.parametrize("n", [1_000, 10_000])
def test_a_page_of_thousands_of_failures_is_at_most_5_mb_and_says_how_many_it_does_not_show(n: int) -> None:
    """Issue 25: 10,000 failures made a 93 MB page (26-31 s in Chromium). Each requirement gets its first failing
    cases in full, the next ones by one line; the rest are counted and left to the JSONL report."""
    from sessionspec.conformance import html_report as h

    cases = many_failures(n)
    page = page_of([header(revision="2f74ac98ba"), *cases, footer(cases)])
    assert len(page.encode("utf-8")) <= 5_000_000, len(page)
    full, listed = shown_per_requirement(page)
    assert 0 < full <= h.MAX_PAGE_CASES and 0 < listed <= h.MAX_PAGE_LINES
    assert f"Failing cases ({n:,})" in page
    # the cap note states how many are in full, listed and not shown, and where they all are
    assert f"This page shows {full:,} of the {n:,} failing cases in full" in page
    assert f"lists {listed:,} more by one line" in page
    assert f"{n - full - listed:,} failing case(s) not shown" in page and "run1.jsonl holds every case" in page
    # per requirement (a case's first): at most MAX_FULL_PER_REQUIREMENT in full, and every requirement
    # that fails has its first case in full before any has a sixth
    first: dict[str, int] = {}
    for c in cases:
        first[c["requirements"][0]] = first.get(c["requirements"][0], 0) + 1
    table = page.split('<table class="counts">')[1].split("</table>")[0]
    rows = re.findall(r'<tr><th scope="row"><code>([^<]+)</code></th><td class="num">([\d,]+)</td>'
                      r'<td class="num">([\d,]+)</td><td class="num">([\d,]+)</td><td class="num">([\d,]+)</td></tr>', table)
    got = {r: tuple(int(x.replace(",", "")) for x in xs) for r, *xs in rows}
    assert {r: v[0] for r, v in got.items()} == first
    assert all(1 <= f <= h.MAX_FULL_PER_REQUIREMENT and f + li + rest == total for total, f, li, rest in got.values())
    assert sum(v[1] for v in got.values()) == full and sum(v[2] for v in got.values()) == listed
    # a listed case still carries what the filters read, and says why it is one line
    listed_item = page.split('<li class="case listed" ')[1].split("</li>")[0]
    assert 'data-outcome="' in listed_item and "data-text=" in listed_item
    assert "listed only; the JSONL report holds its details" in listed_item


def test_a_page_with_room_shows_every_failing_case_in_full_and_needs_no_cap_note() -> None:
    cases = many_failures(40)
    page = page_of([header(revision="2f74ac98ba"), *cases, footer(cases)])
    assert shown_per_requirement(page) == (40, 0)
    assert 'id="not-shown"' not in page and '<table class="counts">' not in page


def test_padded_failures_keep_the_page_within_its_character_budget() -> None:
    """Each item's full JSON is capped, and the page's items stop at MAX_FULL_CHARS: the rest are listed."""
    from sessionspec.conformance import html_report as h

    cases = [failing(n, reply={"seq": n, "kind": "result", "result": {"isJsonValue": False, "pad": "x" * 50_000}})
             for n in range(10_000)]
    page = page_of([header(), *cases, footer(cases)])
    assert len(page.encode("utf-8")) <= 5_000_000, len(page)
    full, listed = shown_per_requirement(page)
    assert full <= h.MAX_FULL_PER_REQUIREMENT and listed == h.MAX_LISTED_PER_REQUIREMENT  # one requirement: JSON-1
    assert f"{10_000 - full - listed:,} failing case(s) not shown" in page
    assert "(48,014 more characters)" in page  # a long value truncated, with a visible marker


def test_one_huge_case_is_listed_not_shown_in_full_and_says_why() -> None:
    """A case whose details pass MAX_CASE_CHARS (wide values of characters each escaped to a marked span) is one
    line with the reason; the page stays small and every string in it is still escaped."""
    from sessionspec.conformance import html_report as h

    wide = {f"k{i}": {f"j{j}": "\ud800" * 150 for j in range(25)} for i in range(25)}
    cases = [failing(1, id=HOSTILE, description=HOSTILE, message=HOSTILE, request={"op": "json-value", "args": {"value": wide}},
                     expected={"result": wide}, reply={"seq": 1, "kind": "result", "result": {"x": wide}}),
             failing(2)]
    page = page_of([header(), *cases, footer(cases)])
    assert shown_per_requirement(page) == (1, 1)
    assert f"its details take more than {h.MAX_CASE_CHARS:,} characters" in page
    assert len(page) < 1_000_000, len(page)
    doc = outline(page)
    assert sum(1 for t, _ in doc.tags if t == "script") == 1 and not any(t == "img" for t, _ in doc.tags)
    assert "<script>window.__pwned = 1</script>" in "".join(doc.text)


def test_an_elided_value_is_bounded_however_wide() -> None:
    from sessionspec.conformance.html_report import _MAX_ELIDED, _elided

    wide = {f"k{i}": {f"j{j}": [list(range(25)) for _ in range(25)] for j in range(25)} for i in range(25)}
    text = _elided(wide)
    assert len(text) < _MAX_ELIDED + 2_000, len(text)
    assert "more keys" in text  # what is not shown is counted, visibly


def test_the_matrix_groups_and_fuzz_failures_of_a_crafted_report_are_bounded() -> None:
    """A report may name thousands of requirements, families, groups and fuzz failures: each part of the page
    shows a stated number of them and counts the rest."""
    cases = [case(n, "failed", requirements=[f"F{n}-1"]) for n in range(3_000)]
    groups = [{"cause": f"cause {n}", "cases": [f"case{m:04d}" for m in range(100)], "requirements": [], "ops": [],
               "outcomes": ["failed"]} for n in range(500)]
    fuzz = [{"machine": "m", "message": "x" * 9_000, "rule": "r"} for _ in range(600)]
    page = page_of([header(), *cases, footer(cases, groups=groups, fuzz=fuzz)])
    assert len(page.encode("utf-8")) <= 5_000_000, len(page)
    assert "2,800 more rule families not shown (a page shows 200)" in page
    assert "400 more groups not shown" in page and page.count(" and 50 more") == 100
    assert "Fuzz failures (600)" in page and "more fuzz failure(s) not shown" in page


def test_no_failing_case_says_so() -> None:
    page = page_of([header(), case(1), footer([case(1)])])
    assert "No case failed" in page and 'id="case-list"' not in page


# -- the command ---------------------------------------------------------------------------------


def write_lines(path: Path, lines: list[Any]) -> Path:
    path.write_text("".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines))
    return path


@pytest.mark.parametrize(("lines", "located"), [
    ([], "is empty"),
    (["{not json"], ":1:"),
    ([header(), case(1, "bogus"), footer([])], ":2: /outcome:"),
    ([header(), {**case(1), "requirements": "JSON-1"}, footer([])], ":2: /requirements:"),
    ([header(), case(1)], ":2: the last line is not a footer"),
    ([case(1), footer([])], ":1: the first line is not a report header"),
    ([header(), "", case(1), case(1), footer([])], ":4: case case0001 is reported twice"),
    ([{**header(), "format": "other"}, footer([])], ":1: /format:"),
])
def test_a_report_that_does_not_follow_the_schema_gets_a_located_error_and_nothing_is_written(
        tmp_path, lines, located) -> None:
    report = write_lines(tmp_path / "bad.jsonl", lines)
    target = tmp_path / "out.html"
    target.write_text("keep me")
    good = write_lines(tmp_path / "good.jsonl", [header(), case(1), footer([case(1)])])
    code, out, err = run("report", str(good), str(report), "--html", str(target), "--force")
    assert code == 2 and err.startswith(f"sessionspec report: {report}") and located in err, err
    assert "Traceback" not in err and target.read_text() == "keep me"


def test_unreadable_reports_are_located_errors_too(tmp_path) -> None:
    binary = tmp_path / "bin.jsonl"
    binary.write_bytes(json.dumps(header()).encode() + b"\n\xff\xfe\n")
    code, _, err = run("report", str(binary), "--html", str(tmp_path / "o.html"))
    assert code == 2 and "bin.jsonl:2: not UTF-8" in err
    code, _, err = run("report", str(tmp_path / "missing.jsonl"), "--html", str(tmp_path / "o.html"))
    assert code == 2 and "missing.jsonl: cannot read" in err
    huge = write_lines(tmp_path / "huge.jsonl", [header(), {**case(1), "outcome": "x" * 1_000_000}, footer([])])
    code, _, err = run("report", str(huge), "--html", str(tmp_path / "o.html"))
    assert code == 2 and "huge.jsonl:2:" in err and len(err) < 2_000
    assert not (tmp_path / "o.html").exists()


def test_conformance_html_writes_the_page_of_the_run_at_hand(tmp_path) -> None:
    target = tmp_path / "run.html"
    code, out, _ = run("conformance", "--only", "JSON-1", "--html", str(target))
    assert code == 0, out
    page = target.read_text(encoding="utf-8")
    assert "sessionspec-reference" in page and '<tr class="fam">' in page and "No case failed" in page
    assert not list(tmp_path.glob(".*.tmp"))


def test_a_case_shows_the_requirement_text_of_its_runs_revision() -> None:
    pinned, published = load_spec().requirements["SURF-1"], load_spec(revision="0.1.1-rc.2").requirements["SURF-1"]
    assert pinned["text"] != published["text"]
    c = failing(1, requirements=["SURF-1"])
    page = page_of([header(), c, footer([c])], [header(revision="0.1.1-rc.2"), c, footer([c])],
                   [header(revision="no-such-revision"), c, footer([c])])
    items = page.split('<li class="case"')[1:]
    from sessionspec.conformance.html_report import _inline_code

    rendered_pinned, rendered_published = _inline_code(pinned["text"]), _inline_code(published["text"])
    assert rendered_pinned in items[0] and rendered_published in items[1] and rendered_pinned in items[2]
    assert "<code>" in rendered_pinned  # backticks became code elements


def test_a_case_names_where_its_full_input_is_stored_and_known_fuzz_differences_are_listed() -> None:
    c = failing(1, source="conformance/vectors/json.json#/cases/3")
    known = [{"entry": {"requirement": "FORK-5"}, "reason": "<b>changed upstream</b>", "matches": 2}]
    page = page_of([header(), c, footer([c], fuzzKnown=known)])
    text = " ".join(outline(page).text)
    assert "conformance/vectors/json.json#/cases/3" in text
    assert "Known fuzz differences" in text and "<b>changed upstream</b>" in text and "(2 matches)" in text


@pytest.mark.parametrize("where", ["absolute", "dotdot", "symlink"])
def test_a_report_opens_traces_only_inside_its_own_folder(tmp_path: Path, where: str) -> None:
    """issue 25: a report naming any path as a fuzz trace (`/etc/shadow`) showed its first characters."""
    secret = tmp_path / "secret.json"
    secret.write_text("SECRETX not a trace\n")
    folder = tmp_path / "run"
    folder.mkdir()
    if where == "symlink":
        (folder / "t.json").symlink_to(secret)
    trace = {"absolute": str(secret), "dotdot": "../secret.json", "symlink": "t.json"}[where]
    c = case(1, "passed")
    lines = [header(), c, footer([c], fuzz=[{"machine": "storage", "message": "m", "trace": trace}])]
    page = render_html([run_from_lines(lines, str(folder / "run.jsonl"), folder)])
    assert "SECRETX" not in page and "not available here" in page
