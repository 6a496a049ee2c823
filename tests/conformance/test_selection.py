"""Selection in `sessionspec conformance`: -k expressions, --deselect, --maxfail/-x, --last-failed."""

from __future__ import annotations

import io

import pytest
from conformance_fakes import broken_cmd, json_case, write_corpus
from sessionspec import cli
from sessionspec.conformance import cases as cases_mod
from sessionspec.conformance.report import load_report
from sessionspec.conformance.selection import MAX_EXPRESSION, SelectionError, keyword_matcher


def run(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = cli.run(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def _listed(out: str) -> list[str]:
    return [line.split()[0] for line in out.splitlines()]


@pytest.fixture(scope="module")
def corpus():
    return cases_mod.for_revision(cases_mod.load_corpus())


def test_a_keyword_expression_matches_ids_areas_ops_descriptions_and_whole_requirement_ids(corpus):
    def chosen(expr):
        return {c.id for c in corpus if keyword_matcher(expr)(c)}

    assert chosen("JSON-2") == {c.id for c in corpus if "JSON-2" in c.requirements}
    assert chosen("surf-1") == {c.id for c in corpus if "SURF-1" in c.requirements}  # not SURF-10..19
    assert chosen("SURF") >= {c.id for c in corpus if any(r.startswith("SURF-") for r in c.requirements)}
    negative = {c.id for c in corpus if "negative" in c.description.lower() and "zero" in c.description.lower()}
    assert negative and chosen("Negative and ZERO") == negative
    some = next(iter(negative))
    assert chosen(some[:10]) == {some}
    assert chosen("not json-value and (json or hdr)") == {
        c.id for c in corpus if c.op != "json-value" and (any(
            "json" in f.lower() for f in (c.id, c.area, c.op, c.description)) or any(
            r.split("-")[0] == "JSON" for r in c.requirements) or any(
            "hdr" in f.lower() for f in (c.id, c.area, c.op, c.description)) or any(
            r.split("-")[0] == "HDR" for r in c.requirements))}
    phrase = next(c for c in corpus if " " in c.description).description.split()[:2]
    assert chosen(f'"{" ".join(phrase)}"') == {c.id for c in corpus if " ".join(phrase).lower() in c.description.lower()}


@pytest.mark.parametrize("expr", ["a and", "(a", "a b", "and", "", "   ", '"x', "a)", "not " * 100 + "x",
                                  "x" * (MAX_EXPRESSION + 1), "a or or b", '""'])
def test_bad_expressions_are_located_usage_errors(expr):
    with pytest.raises(SelectionError):
        keyword_matcher(expr)
    code, out, err = run("conformance", "-k", expr, "--list")
    assert code == 2 and out == "" and "-k" in err and "Traceback" not in err


def test_k_and_deselect_narrow_the_listed_selection(corpus):
    code, out, _ = run("conformance", "--only", "json", "-k", "negative", "--list")
    assert code == 0
    assert set(_listed(out)) == {c.id for c in corpus if c.area == "json" and "negative" in c.description.lower()}
    code, out, _ = run("conformance", "--only", "json", "--deselect", "JSON-2", "--list")
    assert code == 0 and _listed(out)
    assert set(_listed(out)) == {c.id for c in corpus if c.area == "json" and "JSON-2" not in c.requirements}
    code, _, err = run("conformance", "--only", "json", "--deselect", "surf", "--list")
    assert code == 2 and "--deselect surf: no selected case matches" in err
    code, _, err = run("conformance", "--only", "json", "-k", "no-such-words-anywhere", "--list")
    assert code == 2 and "no case to run" in err and "-k no-such-words-anywhere" in err


def test_maxfail_stops_and_says_how_many_did_not_run(tmp_path):
    vectors = write_corpus(tmp_path / "v", "t", [json_case(n, False, f"wrong {n}") for n in range(6)])
    report = tmp_path / "r.jsonl"
    code, out, _ = run("conformance", "--vectors", str(vectors), "--maxfail", "2", "--report", str(report))
    assert code == 1 and "stopped after 2 failing case(s) (--maxfail 2): 4 of 6" in out
    loaded = load_report(report)
    assert len(loaded.cases) == 2 and "--maxfail 2" in loaded.footer["problems"][0]
    code, out, _ = run("conformance", "--vectors", str(vectors), "-x")
    assert code == 1 and "(--maxfail 1): 5 of 6" in out
    code, _, err = run("conformance", "--vectors", str(vectors), "--maxfail", "0")
    assert code == 2 and "--maxfail must be >= 1" in err


def test_last_failed_reruns_the_problem_cases_of_the_previous_report(tmp_path):
    vectors = write_corpus(tmp_path / "v", "t", [json_case(1), json_case(2), json_case(3, False, "wrong"),
                                                 json_case(4, False, "also wrong")])
    report = tmp_path / "r.jsonl"
    code, _, _ = run("conformance", "--vectors", str(vectors), "--report", str(report))
    assert code == 1
    failing = {c["id"] for c in load_report(report).cases if c["outcome"] == "failed"}
    assert len(failing) == 2
    code, out, _ = run("conformance", "--vectors", str(vectors), "--report", str(report), "--force",
                        "--last-failed")
    assert code == 1
    rerun = load_report(report)  # the rerun replaced the report: only the failures, recorded as selected
    assert {c["id"] for c in rerun.cases} == failing and rerun.header["selection"] == [f"--last-failed {report}"]
    other = tmp_path / "other.jsonl"
    code, _, _ = run("conformance", "--vectors", str(vectors), "--last-failed", str(report), "-k", "also",
                     "--report", str(other))
    assert {c["description"] for c in load_report(other).cases} == {"also wrong"}


def test_last_failed_after_a_clean_run_runs_everything_and_refuses_a_bad_report(tmp_path):
    vectors = write_corpus(tmp_path / "v", "t", [json_case(1), json_case(2)])
    report = tmp_path / "r.jsonl"
    assert run("conformance", "--vectors", str(vectors), "--report", str(report))[0] == 0
    code, _, err = run("conformance", "--vectors", str(vectors), "--report", str(report), "--force",
                        "--last-failed")
    assert code == 0 and "no failing case; running the whole selection" in err and len(load_report(report).cases) == 2
    code, _, err = run("conformance", "--vectors", str(vectors), "--last-failed")
    assert code == 2 and "--last-failed needs the previous run's report" in err
    (tmp_path / "bad.jsonl").write_text("not json\n", encoding="utf-8")
    code, _, err = run("conformance", "--vectors", str(vectors), "--last-failed", str(tmp_path / "bad.jsonl"))
    assert code == 2 and "bad.jsonl:1:" in err and "Traceback" not in err


def test_maxfail_with_parallel_adapters(tmp_path):
    vectors = write_corpus(tmp_path / "v", "t", [json_case(n, True, f"case {n}") for n in range(12)])
    code, out, _ = run("conformance", "--impl", broken_cmd("--wrong"), "--vectors", str(vectors), "-j", "2",
                       "--maxfail", "3")
    assert code == 1 and "stopped after" in out and "--maxfail 3" in out
