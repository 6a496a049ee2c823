"""Who a case binds and what it needs: only a rule that binds an implementation may fail it (#28).

A requirement's ``binds`` (spec data) says which part of an implementation it constrains; ``validator``
is the project's read-only validator, whose policies are no rule for a store. A case needs a capability
only when it exercises it: each case's extra capability is proven used by its own request.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from conformance_fakes import broken_cmd, case, write_corpus
from sessionspec import cli
from sessionspec.conformance import cases as cases_mod
from sessionspec.conformance import protocol
from sessionspec.conformance.summary import requirement_scope
from sessionspec.spec import load_spec

CORPUS = cases_mod.load_corpus()


def _steps(c: cases_mod.Case) -> list[dict[str, Any]]:
    return [s for s in c.args.get("script") or () if isinstance(s, dict)]


def _text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


# One proof per capability a case may need beyond its op's: the request (or, for a registry's refusal, the
# expectation) must show the capability at work. A capability without a proof here fails the audit below.
PROOFS: dict[str, Any] = {
    # a compile-time registry (TypeScript) cannot refuse a type at run time: only the registry's refusals need it
    "oob-admission": lambda c: bool({"OOB_NOT_ADMITTED", "OOB_INADMISSIBLE_TYPE"} & set(re.findall(r"OOB_[A-Z_]+", _text(c.expect)))),
    "out-of-band": lambda c: c.op == "oob" or any(s.get("do") == "oob" for s in _steps(c)),
    "fork": lambda c: c.op == "fork" or any(s.get("do") == "fork" for s in _steps(c)),
    "scopes": lambda c: any(s.get("do") in ("on", "enter") and "scope" in s for s in _steps(c)),
    "invariants": lambda c: c.op == "invariants" or c.args.get("invariants") is True
    or any(s.get("do") == "install-invariants" for s in _steps(c)),
    "persistence-jsonl": lambda c: c.args.get("backend") == "jsonl",
    "persistence-jsonl-zstd": lambda c: c.args.get("backend") == "jsonl-zstd",
    "persistence-sqlite": lambda c: c.args.get("backend") == "sqlite",
    "big-integers": lambda c: protocol.needs_big_integers(c.args),
    "validator-policy": lambda c: all(r in cases_mod.validator_only_requirements() for r in c.requirements),
}


@pytest.mark.parametrize("c", [c for c in CORPUS if c.capability != protocol.OPS[c.op].capability],
                         ids=lambda c: c.id)
def test_every_capability_a_case_needs_is_one_it_exercises(c):
    assert c.capability in PROOFS, f"{c.source}: no proof that a case uses capability {c.capability}"
    assert PROOFS[c.capability](c), f"{c.source}: needs {c.capability} but its request does not exercise it"


def test_a_positive_out_of_band_case_with_a_no_op_admit_needs_only_out_of_band():
    c = next(c for c in CORPUS if c.id == "5c07a1c3ce2ea8d4")
    assert c.needs == {"out-of-band"}


def _sqlite_cases() -> list[cases_mod.Case]:
    return [c for c in CORPUS if c.op == "sqlite-read"]


def test_refusals_a_store_would_heal_are_validator_policy():
    """Upstream's store initialises a pristine database and creates a missing table or identity row
    (schema.ts): a read-only refusal of either binds only the validator."""
    validator_only = cases_mod.validator_only_requirements()
    for c in _sqlite_cases():
        code = (c.expect.get("rejected") or {}).get("code")
        empty = not c.args.get("sql")
        if code == "SQLITE_LAYOUT" or (empty and code == "SQLITE_FOREIGN"):
            assert set(c.requirements) <= validator_only, c.source
            assert "validator-policy" in c.needs, c.source


def test_a_sqlite_case_building_one_layout_runs_only_for_that_layout():
    """A database claiming layout N is refused with SQLITE_VERSION by a backend of another layout before
    anything else is checked: a case expecting anything else of it applies to layout N only."""
    layouts = {n for r in ("2f74ac98ba", "b150a551b8") for n in cases_mod.sqlite_layouts([r])}
    for c in _sqlite_cases():
        claimed = {int(n) for n in re.findall(r"user_version = (\d+)", " ".join(c.args.get("sql") or ()))}
        if not claimed or (c.expect.get("rejected") or {}).get("code") == "SQLITE_VERSION":
            continue
        (n,) = claimed
        assert n in layouts, c.source
        runs_for = set(c.sqlite_layouts) if c.sqlite_layouts is not None else {
            x for r in (c.revisions or ("2f74ac98ba", "b150a551b8")) for x in cases_mod.sqlite_layouts([r])}
        assert runs_for == {n}, f"{c.source}: builds layout {n}, runs for {sorted(runs_for)}"


def test_every_requirement_says_whom_it_binds_and_its_source_in_words():
    for revision in ("2f74ac98ba", "b150a551b8"):
        for req_id in load_spec(revision=revision).requirements:
            scope = requirement_scope(req_id, revision)
            assert " binds " in scope and "; source: " in scope, req_id
    assert requirement_scope("ZSTD-4").endswith("binds validator; source: a project decision; decisions DEC-19")
    assert "upstream 2f74ac98ba schema.ts" in requirement_scope("SQLITE-2")


def test_an_adapter_not_claiming_validator_policy_skips_validator_cases_and_a_failure_shows_the_source(tmp_path):
    import io

    policy = case("an empty database holds no session store", "sqlite-read", {"sql": []},
                  {"rejected": {"code": "SQLITE_FOREIGN"}}, requirements=("SQLITE-9",))
    store = case("a wrong answer of a store", "sqlite-read", {"sql": []},
                 {"rejected": {"code": "SQLITE_VERSION"}}, requirements=("SQLITE-1",))
    vectors = write_corpus(tmp_path / "v", "persistence", [policy, store])
    out, err = io.StringIO(), io.StringIO()
    code = cli.run(["conformance", "--impl", broken_cmd("--no-validator"), "--vectors", str(vectors)], out, err)
    text = out.getvalue()
    assert code == 1, err.getvalue()
    assert "      1  implementation does not claim capability validator-policy" in text
    assert "SQLITE-1 (MUST) binds storage; source: upstream 2f74ac98ba schema.ts" in text


def test_a_planted_single_bug_yields_one_group_in_the_console_the_report_and_the_page(tmp_path):
    """The crash-repair closers stamped one millisecond late fail cases of many requirements and ops: one cause."""
    import io

    from sessionspec.conformance.report import load_report

    report = tmp_path / "run.jsonl"
    out, err = io.StringIO(), io.StringIO()
    code = cli.run(["conformance", "--impl", "python -m sessionspec.conformance.mutants repair7-closer-time-late",
                    "--only", "repair", "--only", "persistence", "--report", str(report),
                    "--html", str(tmp_path / "run.html")], out, err)
    text = out.getvalue()
    assert code == 1, err.getvalue()
    assert "failures by cause (1 cause(s)," in text
    assert "  1. differs at time: value +1: " in text
    footer = load_report(report).footer  # the report validates against report.json
    assert [g["cause"] for g in footer["groups"]] == ["differs at time: value +1"]
    assert len(footer["groups"][0]["cases"]) >= 3 and len(footer["groups"][0]["requirements"]) >= 2
    page = (tmp_path / "run.html").read_text(encoding="utf-8")  # the HTML page shows the same one group
    section = page.split('<section id="groups"', 1)[1].split("</section>", 1)[0]
    assert "Failures by cause (1)" in section and section.count('<li class="group">') == 1
    assert "<strong>differs at time: value +1</strong>" in section
    assert all(f"<code>{case}</code>" in section for case in footer["groups"][0]["cases"])


def test_the_replay_hint_repeats_the_real_adapter_command():
    import io

    from sessionspec.conformance.runner import RunResult
    from sessionspec.conformance.summary import render_summary

    run = RunResult({"implementation": {"name": "x"}}, [], 0.1,
                    fuzz_failures=[{"machine": "session", "rule": "session.seed_invalid", "op": "load",
                                    "trace": ".sessionspec/traces/session-1.jsonl"}])
    out = io.StringIO()
    render_summary(run, out, command="node conformance/adapters/node-dsh-session/adapter.mjs")
    assert ("replay with: sessionspec replay .sessionspec/traces/session-1.jsonl "
            "--impl 'node conformance/adapters/node-dsh-session/adapter.mjs'") in out.getvalue()
    assert "--impl ..." not in out.getvalue() and "--impl COMMAND" not in out.getvalue()
    out = io.StringIO()
    render_summary(run, out)  # the in-process reference: replay needs no --impl
    assert "replay with: sessionspec replay .sessionspec/traces/session-1.jsonl\n" in out.getvalue()


def test_a_computed_field_difference_reads_in_plain_words():
    from sessionspec.conformance.compare import Difference

    text = Difference("/trace/1/rejected/namesType", "value", True, False).render()
    assert text.startswith("/trace/1/rejected/namesType: the rejection's message does not name the event type")
    token = Difference("/trace/3/ok/revision", "value", "r0", "r2").render()  # tokens renamed by first appearance
    assert token.startswith("/trace/3/ok/revision: the store's revision token should be equal to the trace's first "
                            "token, but it is equal to distinct token number 3 of the trace")
    assert "PERSIST-8" in token and "(expected \"r0\", got \"r2\")" in token
    assert Difference("/trace/3/ok/revision", "value", "abc", "r2").render() == \
        '/trace/3/ok/revision: expected "abc", got "r2"'  # not a renamed token: the plain comparison


def test_a_serde_json_style_adapter_that_declares_its_limits_has_no_errored_case(tmp_path):
    """serde_json reads 128 levels and no lone surrogate: undeclared, those cases break the adapter (errored);
    declared in ``start`` (``limits``), they are skipped with that reason."""
    import io

    from sessionspec.conformance.report import load_report

    argv = ["conformance", "--only", "json", "--only", "jsonl", "--only", "survivors", "-j", "2"]
    counts = {}
    for flag in ("--serde-undeclared", "--serde-limits"):
        report = tmp_path / f"{flag}.jsonl"
        out = io.StringIO()
        cli.run([*argv, "--impl", broken_cmd(flag), "--report", str(report)], out, io.StringIO())
        counts[flag] = load_report(report).counts
        if flag == "--serde-limits":
            assert "the adapter declares limits.maxDepth 128; the request nests" in out.getvalue()
            assert "the adapter declares limits.loneSurrogates false" in out.getvalue()
    assert counts["--serde-undeclared"]["errored"] >= 5
    assert counts["--serde-limits"]["errored"] == 0 and counts["--serde-limits"]["failed"] == 0
    assert counts["--serde-limits"]["skipped"] == counts["--serde-undeclared"]["errored"]


def test_a_group_lists_its_requirements_in_reading_order():
    from sessionspec.conformance.grouping import FailureGroup
    from sessionspec.conformance.results import CaseResult

    picked = [c for c in CORPUS if {"REPAIR-2", "REPAIR-10"} & set(c.requirements)]
    group = FailureGroup("x", tuple(CaseResult(case=c, outcome="failed") for c in picked))
    order = group.requirements
    assert "REPAIR-2" in order and "REPAIR-10" in order
    assert order.index("REPAIR-2") < order.index("REPAIR-10")
