"""`sessionspec smoke`: the handshake and one case per claimed op, with advice on what is miswired."""

from __future__ import annotations

import io

from conformance_fakes import REFERENCE_CMD, broken_cmd
from sessionspec import cli
from sessionspec.conformance import cases as cases_mod
from sessionspec.conformance import protocol
from sessionspec.conformance.smoke import check_ops, pick_cases


def run(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = cli.run(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def _op_lines(out: str) -> dict[str, str]:
    ops = {line.split()[0]: line for line in out.splitlines() if line.startswith("  ") and not line.startswith("   ")}
    ops.pop("handshake:", None)
    ops.pop("advice:", None)
    return ops


def test_the_reference_adapter_is_wired_right_for_every_op_it_claims():
    code, out, err = run("smoke", "--impl", REFERENCE_CMD)
    assert code == 0, out + err
    assert "handshake: ok: sessionspec-reference" in out and out.splitlines()[-1].startswith("OK: ")
    lines = _op_lines(out)
    assert set(lines) == set(protocol.OPS) - {"start", "stop"}  # the reference claims every op
    assert all(line.split()[1] == "ok" for line in lines.values()), out


def test_an_adapter_that_exits_before_the_handshake_is_told_so():
    code, out, _ = run("smoke", "--impl", broken_cmd("--no-start"))
    assert code == 2 and "handshake: FAILED" in out
    assert "cannot start: missing library" in out and "the adapter process ends" in out


def test_an_adapter_printing_non_json_on_stdout_is_told_to_log_to_stderr():
    code, out, _ = run("smoke", "--impl", broken_cmd("--banner"))
    assert code == 2 and "write everything but replies to stderr" in out


def test_a_wrong_handshake_names_the_protocol_version():
    code, out, _ = run("smoke", "--impl", broken_cmd("--bad-version"))
    assert code == 2 and "protocol version 99" in out and "must declare protocolVersion 1" in out


def test_each_claimed_op_that_is_miswired_gets_its_own_advice():
    code, out, _ = run("smoke", "--impl", broken_cmd("--errored-op", "append", "--exit-on-op", "fold",
                                                     "--crash-op", "derive", "--wrong"))
    assert code == 1
    lines = _op_lines(out)
    assert {op for op, line in lines.items() if line.split()[1] != "ok"} == {"append", "fold", "derive", "json-value"}
    assert lines["append"].split()[1] == "ERRORED" and "leave append out of `capabilities`" in out
    assert lines["fold"].split()[1] == "ERRORED" and "adapter: cannot handle fold" in out
    assert lines["derive"].split()[1] == "CRASHED" and "decodes `derive`'s args wrongly" in out
    assert lines["json-value"].split()[1] == "FAILED" and "--only json" in out
    assert out.splitlines()[-1].startswith("FAILED: 4 of ")


def test_a_hanging_op_and_a_skipping_adapter(tmp_path):
    code, out, _ = run("smoke", "--impl", broken_cmd("--hang-all"), "--timeout", "3")
    assert code == 1 and _op_lines(out)["json-value"].split()[1] == "ERRORED" and "flush stdout" in out
    code, out, _ = run("smoke", "--impl", broken_cmd("--skip-all"))
    assert code == 1 and "but skipped `load`" in out


def test_an_adapter_claiming_nothing_and_a_command_that_cannot_run():
    code, out, _ = run("smoke", "--impl", broken_cmd("--no-caps"))
    assert code == 1 and "claims no capability" in out
    code, out, _ = run("smoke", "--impl", "/nonexistent/adapter --x")
    assert code == 2 and "check the program name" in out and "Traceback" not in out
    code, _, err = run("smoke", "--impl", "")
    assert code == 2 and "empty command" in err


def test_the_budget_stops_further_ops():
    from sessionspec.conformance.harness import connector_for
    from sessionspec.conformance.runner import start_implementation

    corpus = cases_mod.for_revision(cases_mod.load_corpus())
    chosen = pick_cases(corpus, frozenset(protocol.CAPABILITIES), {})
    assert all(case is not None and case.op == op for op, case in chosen.items())
    ticks = iter(range(0, 1000, 6))  # the clock moves 6 s per op
    with start_implementation(connector_for(None), 5.0) as impl:
        checks = check_ops(impl, chosen, budget=10, clock=lambda: next(ticks), started=0)
    assert [c.outcome for c in checks[:3]] == ["passed", "passed", "not-tried"]
    assert all(c.outcome == "not-tried" and not c.wired for c in checks[2:])


def test_smoke_checks_only_the_cases_it_picks_not_the_corpus(monkeypatch):
    """The ten seconds are the adapter's: smoke reads the corpus as plain JSON and schema-checks only its
    picks (one per claimed op), never a whole vector file (counted, not timed, so the test cannot flake)."""
    schemas: list[str] = []
    real_validate = protocol.validate

    def counting(instance, schema):
        schemas.append(schema)
        return real_validate(instance, schema)

    monkeypatch.setattr(protocol, "validate", counting)
    monkeypatch.setattr(cases_mod, "load_case_file", lambda *a, **k: (_ for _ in ()).throw(AssertionError("file load")))
    code, out, err = run("smoke", "--impl", REFERENCE_CMD)
    assert code == 0, out + err
    claimed = len(_op_lines(out))
    assert "case-file.json" not in schemas  # no whole file validated
    assert schemas.count("case-file.json#/$defs/case") == claimed  # each pick once
    args = [s for s in schemas if s.endswith("#/$defs/args")]  # the picks' (and their requests'): not the corpus's
    assert len(args) <= 2 * claimed
    monkeypatch.undo()
    assert len(cases_mod.load_corpus()) > 10 * claimed


def test_the_unchecked_picks_are_the_checked_corpus_picks():
    """Reading the corpus unchecked changes nothing smoke picks (and each pick checks to the same case)."""
    every = frozenset(protocol.CAPABILITIES)
    full = cases_mod.for_revision(cases_mod.load_corpus())
    light = cases_mod.for_revision(cases_mod.unchecked_corpus())
    for capabilities in (every, every - {"big-integers", "persistence"}, frozenset({"append", "find"})):
        want = pick_cases(full, capabilities, {})
        got = pick_cases(light, capabilities, {})
        assert {op: c and c.id for op, c in got.items()} == {op: c and c.id for op, c in want.items()}
        assert all(cases_mod.checked(c) == want[op] for op, c in got.items() if c is not None)
