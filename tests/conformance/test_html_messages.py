"""The HTML page: the revision in each run's column header; the adapter's own message, not the harness's generic one."""

from __future__ import annotations

import io

from conformance_fakes import broken_cmd, json_case, misbehave, write_corpus
from sessionspec import cli


def test_column_headers_name_the_revision_and_messages_are_the_adapters(tmp_path):
    vectors = write_corpus(tmp_path / "v", "t", [json_case(1, False, "wrong on purpose"), misbehave("errored")])
    page = tmp_path / "run.html"
    code = cli.run(["conformance", "--impl", broken_cmd(), "--vectors", str(vectors), "--html", str(page)],
                   io.StringIO(), io.StringIO())
    assert code == 1
    html = page.read_text(encoding="utf-8")
    assert '<span class="rev">revision 2f74ac98ba</span></th>' in html
    assert "result differs in 1 place(s)</pre>" not in html  # the differences table says where; no generic line labelled the adapter's
    assert "<h5>Adapter's message</h5><pre class=\"msg\">adapter bug</pre>" in html


def test_requirement_texts_render_code_spans_escaped():
    from sessionspec.conformance.html_report import _inline_code

    assert _inline_code("use `a<b>` & `c`") == "use <code>a&lt;b&gt;</code> &amp; <code>c</code>"
    assert _inline_code("no `closing <i>") == "no `closing &lt;i&gt;"
    assert "<code>" not in _inline_code("<script>`</script>")[:8]


def test_passed_cases_and_their_durations_are_listed_slowest_first_behind_a_fold():
    from sessionspec.conformance.html_report import render_html, run_from_lines

    header = {"kind": "header", "implementation": {"name": "impl", "version": "1"}}
    cases = [{"kind": "case", "id": f"{i:016x}", "area": "surf", "description": f"case <{i}>", "requirements": ["SURF-1"],
              "outcome": "passed", "durationMs": ms} for i, ms in enumerate([2.0, 40.5, float("nan"), 7.25])]
    cases.append({"kind": "case", "id": "f" * 16, "area": "surf", "description": "broken", "requirements": ["SURF-1"],
                  "outcome": "failed", "durationMs": 99.0, "message": "m"})
    page = render_html([run_from_lines([header, *cases], "run.jsonl")])
    section = page[page.index('<section id="passed"'):]
    section = section[:section.index("</section>")]
    assert '<details class="passed" data-run="1"><summary>Run 1: 4 passed case(s), slowest first</summary>' in section
    ids = [line.split("</code>")[0] for line in section.split("<tr><td><code>")[1:]]
    assert ids == [f"{1:016x}", f"{3:016x}", f"{0:016x}", f"{2:016x}"]  # 40.5, 7.25, 2.0, then the one without a number
    assert "<td class=\"num\">40.5</td>" in section and "case &lt;1&gt;" in section and "f" * 16 not in section
