"""`sessionspec summary` (text, Markdown, GitHub annotations) and `conformance --format github`."""

from __future__ import annotations

import io
import re

from conformance_fakes import broken_cmd, json_case, misbehave, write_corpus
from sessionspec import cli
from sessionspec.conformance.run_summary import MAX_LISTED
from sessionspec.reference.json_text import markdown_text, workflow_value

HOSTILE = "evil | <script>alert(1)</script> `code` *em* [l](u) %0A\n::error file=x::forged\r\x1b[31m"


def run(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = cli.run(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def _corpus(tmp_path, *, failing: int = 1):
    cases = [json_case(1), misbehave("hostile-text"), json_case(3, False, HOSTILE)]
    cases += [json_case(10 + n, False, f"wrong on purpose {n}") for n in range(failing)]
    return write_corpus(tmp_path / "v", "t", cases)


def _commands(text: str) -> list[str]:
    """The lines GitHub's runner would read as workflow commands (it trims leading space)."""
    return [line.strip() for line in text.splitlines() if line.strip().startswith("::")]


def test_conformance_format_github_annotates_each_problem_case_and_escapes(tmp_path):
    report = tmp_path / "r.jsonl"
    code, out, err = run("conformance", "--impl", broken_cmd(), "--vectors", str(_corpus(tmp_path)),
                         "--report", str(report), "--format", "github")
    assert code == 1, out + err
    commands = _commands(out)
    assert len(commands) == 3, commands  # the errored hostile-text case and the two wrong ones; no forged line
    assert all(re.match(r"^::(error|warning) title=[^:]*::", c) for c in commands)
    assert not any("forged" in c and c.startswith("::error file=x") for c in commands)
    errored = next(c for c in commands if "errored" in c.partition("::")[2].partition("::")[0])
    assert "%0A::error file=x::forged%0D" in errored and "\x1b" not in errored and "\ud800" not in errored


def test_summary_of_a_failing_run_in_each_format(tmp_path):
    report = tmp_path / "r.jsonl"
    run("conformance", "--impl", broken_cmd(), "--vectors", str(_corpus(tmp_path)), "--report", str(report))
    code, text, err = run("summary", str(report))
    assert code == 1 and err == ""
    assert text.startswith(f"FAILED: {report}") and "1 passed, 2 failed, 1 errored" in text
    assert "wrong on purpose 0" in text and "/isJsonValue: expected false, got true" in text
    assert "\x1b" not in text and "\r" not in text

    code, md, _ = run("summary", str(report), "--format", "markdown")
    assert code == 1 and md.startswith("## sessionspec conformance\n")
    assert "<script>" not in md and "\\<script\\>" in md
    hostile_rows = [line for line in md.splitlines() if "evil" in line]
    assert len(hostile_rows) == 1 and len(re.findall(r"(?<!\\)\|", hostile_rows[0])) == 6  # no text ends a cell
    problem_rows = [line for line in md.splitlines() if line.startswith("| ") and "wrong on purpose" in line]
    assert len(problem_rows) == 1 and len(re.findall(r"(?<!\\)\|", problem_rows[0])) == 6

    code, gh, _ = run("summary", str(report), "--format", "github")
    assert code == 1 and len(_commands(gh)) == 3 and gh.rstrip().splitlines()[-1].startswith("FAILED: ")


def test_summary_of_a_passing_run_exits_0_and_compares_runs(tmp_path):
    good, bad = tmp_path / "good.jsonl", tmp_path / "bad.jsonl"
    vectors = write_corpus(tmp_path / "ok", "t", [json_case(1), json_case(2)])
    assert run("conformance", "--vectors", str(vectors), "--report", str(good))[0] == 0
    assert run("summary", str(good))[0] == 0
    assert run("summary", str(good), "--format", "github")[1] == f"OK: {good}: 2 passed\n"
    run("conformance", "--impl", broken_cmd(), "--vectors", str(_corpus(tmp_path)), "--report", str(bad))
    code, md, _ = run("summary", str(good), str(bad), "--format", "markdown")
    assert code == 1
    table = [line for line in md.splitlines() if line.startswith("| ") and "jsonl" in line]
    assert len(table) == 2 and "✅ ok" in table[0] and "❌ failed" in table[1]


def test_the_listing_is_capped_per_run(tmp_path):
    report = tmp_path / "r.jsonl"
    run("conformance", "--vectors", str(_corpus(tmp_path, failing=MAX_LISTED + 5)), "--report", str(report))
    _, gh, _ = run("summary", str(report), "--format", "github")
    assert len(_commands(gh)) == MAX_LISTED + 1 and "6 more problem case(s)" in gh
    _, md, _ = run("summary", str(report), "--format", "markdown")
    assert "and 6 more" in md


def test_unreadable_reports_exit_2_with_a_located_message(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"kind": "header"}\n', encoding="utf-8")
    code, out, err = run("summary", str(bad))
    assert code == 2 and out == "" and f"{bad}:1:" in err and "Traceback" not in err
    code, _, err = run("summary", str(tmp_path / "missing.jsonl"))
    assert code == 2 and "missing.jsonl" in err
    (tmp_path / "bin.jsonl").write_bytes(b"\xff\xfe\x00garbage\n")
    code, _, err = run("summary", str(tmp_path / "bin.jsonl"))
    assert code == 2 and "Traceback" not in err


def test_escapers_follow_the_workflow_command_and_commonmark_rules():
    assert workflow_value("50% a\r\nb") == "50%25 a%0D%0Ab"
    assert workflow_value("a::b,c", prop=True) == "a%3A%3Ab%2Cc"
    assert markdown_text("a|b\nc<d>`e`") == "a\\|b c\\<d\\>\\`e\\`"
