"""Suite strength: every deliberately broken reference ("mutant") must be caught.

Each mutant breaks one rule and runs as its own adapter process
(`python -m sessionspec.conformance.mutants NAME`); the suite reaches it only
through the subprocess protocol: the vectors of the mutant's requirement
family, then a short derandomised machine run focused on the rules that
exercise it. A mutant counts as caught only when a catching vector or rule
checks a requirement of the family the mutant breaks. Run
`python -m sessionspec.conformance.mutants --check` for the whole table.
"""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest
from sessionspec import cli
from sessionspec.conformance import cases, fuzz, machines, mutants
from sessionspec.conformance.harness import connector_for
from sessionspec.conformance.runner import start_implementation
from sessionspec.conformance.trace import read_trace
from sessionspec.spec import load_spec

REFERENCE_CMD = f"{sys.executable} -m sessionspec.conformance.reference_adapter"


def test_a_published_revision_mutant_serves_that_revision():
    """APPEND-4, REQ-3 and INV-7 bind both revisions; their mutants break them where the published one is served."""
    published = {m.rule: m for m in mutants.MUTANTS.values() if m.revision is not None}
    assert {"APPEND-4", "REQ-3", "INV-7"} <= set(published)
    impl = start_implementation(connector_for(mutants.command(published["REQ-3"].name)), 30.0)
    try:
        assert impl.info["specRevision"] == published["REQ-3"].revision == "b150a551b8"
    finally:
        impl.close()


def test_the_catalogue_breaks_at_least_25_different_rules_across_the_families():
    catalogue = list(mutants.MUTANTS.values())
    rules = [m.rule for m in catalogue]
    assert len(set(rules)) >= 25
    # one mutant per entry; two mutants break the same rule only through two entries of it (CHUNK-9's shape, its arithmetic)
    assert len({(m.rule, m.entry) for m in catalogue}) == len(catalogue), "two mutants break the same rule the same way"
    assert set(rules) <= set(load_spec().requirements)
    assert len({m.family for m in catalogue}) >= 14
    for m in catalogue:
        # storage backends have no state machine: their mutants are caught by vectors alone
        assert (m.probe or m.family in ("PERSIST", "ZSTD", "SQLITE")) and set(m.probe) <= set(machines.MACHINES), m.name
        assert m.description and m.name.startswith(m.rule.lower().replace("-", "")), m.name


@pytest.mark.parametrize("name", list(mutants.MUTANTS))
def test_mutant_is_caught_through_the_subprocess_protocol(name, record_property):
    catch = mutants.check(name)
    print(catch.row())
    record_property("caught_by", catch.row())
    assert catch.caught, f"{name} ({catch.mutant.rule}) was not caught: {catch.mutant.description}"
    assert catch.in_family, (
        f"{name} breaks {catch.mutant.rule} but only requirements of other families caught it: {catch.requirements}"
    )
    assert catch.exact, f"{name}: no catching vector or rule names {catch.mutant.rule}: {catch.requirements}"
    # judged at the revision it serves: every catching vector applies there (a case of another revision would
    # fail the unmutated reference too), and a mutant of a published-revision rule is caught by that revision's
    # own vectors of the rule it breaks
    applies = {case.id for case in cases.for_revision(cases.load_corpus(), catch.mutant.revision)}
    vectors = {who.removeprefix("vector ") for who, _ in catch.catchers if who.startswith("vector ")}
    assert vectors <= applies, f"{name}: caught by vectors of another revision: {sorted(vectors - applies)}"
    if catch.mutant.revision is not None:
        assert any(who.startswith("vector ") and catch.mutant.rule in reqs for who, reqs in catch.catchers), catch.row()
    # the machine evidence recorded for this rule (what `requirements` counts) is re-proven here
    claimed = set(fuzz.machine_evidence().get(catch.mutant.rule, ()))
    assert claimed <= set(mutants.machine_catches(catch)), (
        f"{name}: evidence.json says {sorted(claimed)} catch {catch.mutant.rule}; this run: {mutants.machine_catches(catch)}")


@pytest.mark.parametrize("machine", sorted({m for mutant in mutants.MUTANTS.values() for m in mutant.probe}))
def test_the_unmutated_reference_passes_every_probe(machine, tmp_path):
    """No false alarm: the focused runs that catch the mutants find nothing in the reference process."""
    focus = sorted({r for m in mutants.MUTANTS.values() for r in m.probe.get(machine, ())})
    failures = machines.run(
        connect=lambda: start_implementation(connector_for(REFERENCE_CMD), 30.0), examples=30, steps=12,
        trace_dir=tmp_path, out=io.StringIO(), machines={machine: focus}, shrink=False, derandomize=True,
    )
    assert failures == []


def test_a_saved_trace_reproduces_the_failure_of_a_mutant_and_passes_on_the_reference(tmp_path):
    name = "find2-ignores-trigger-kind"
    out = io.StringIO()
    failures = machines.run(  # with shrinking, as `sessionspec conformance --fuzz` runs them
        connect=lambda: start_implementation(connector_for(mutants.command(name)), 30.0), examples=30, steps=12,
        trace_dir=tmp_path, out=out, machines={"storage": ["find"]}, derandomize=True,
    )
    assert len(failures) == 1 and failures[0]["rule"] == "storage.find"
    path = Path(failures[0]["trace"])
    assert f"saved to {path}" in out.getvalue()
    header, steps = read_trace(path)
    assert header["implementation"]["name"] == f"sessionspec-mutant-{name}"
    assert len(steps) == 1 and steps[0].op == "find-last-message-turn-end"
    assert steps[0].expected != {"result": steps[0].actual.get("result")}
    assert "FIND-2" in failures[0]["requirements"]

    against_mutant = io.StringIO()
    assert cli.run(["replay", str(path), "--impl", mutants.command(name)], against_mutant, io.StringIO()) == 1
    assert "step 1 find-last-message-turn-end: failed" in against_mutant.getvalue()
    against_reference = io.StringIO()
    assert cli.run(["replay", str(path), "--impl", REFERENCE_CMD], against_reference, io.StringIO()) == 0
    assert "1 of 1 steps match" in against_reference.getvalue()


def _reference_state() -> dict[str, object]:
    """Every global of every reference module and every class attribute defined there, by identity."""
    import sessionspec.reference as reference
    from sessionspec.reference import rule_table

    rule_table.entries()  # import every module that defines an entry
    state: dict[str, object] = {}
    for name, module in list(sys.modules.items()):
        if not name.startswith(reference.__name__ + ".") or module is None:
            continue
        for key, value in vars(module).items():
            state[f"{name}.{key}"] = value
            if isinstance(value, type) and value.__module__ == name:
                for attr, member in vars(value).items():
                    state[f"{name}.{key}.{attr}"] = member
    return state


@pytest.mark.parametrize("name", list(mutants.MUTANTS))
def test_each_mutant_swaps_exactly_one_rule_table_entry_and_nothing_else(name, monkeypatch):
    """A mutant is a variant through the public seam: one entry differs, no module or class is patched,
    and building it reads no source text (so renaming locals in the reference cannot break it)."""
    import inspect
    import linecache

    from sessionspec.reference import rule_table

    def no_source(*args, **kwargs):
        raise AssertionError("a mutant read source text")

    before_state = _reference_state()
    before = rule_table.entries()
    monkeypatch.setattr(inspect, "getsource", no_source)
    monkeypatch.setattr(inspect, "getsourcelines", no_source)
    monkeypatch.setattr(linecache, "getlines", no_source)
    try:
        mutants.MUTANTS[name].apply()
        after = rule_table.entries()
        after_state = _reference_state()
    finally:
        rule_table.restore()
    assert [entry for entry in before if after[entry] is not before[entry]] == [mutants.MUTANTS[name].entry]
    assert {k for k in before_state if after_state.get(k) is not before_state[k]} == set()
    assert rule_table.entries() == before


def test_mutants_use_the_rule_table_only_never_source_text():
    """No recompiling, no getsource, no private reference names (tests/packaging/test_private_names.py)."""
    import ast

    tree = ast.parse(Path(mutants.__file__).read_text(encoding="utf-8"))
    names = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    attributes = {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))
                for alias in node.names}
    assert not {"exec", "compile", "eval", "setattr"} & names
    assert not {"getsource", "getsourcelines", "__code__", "co_consts"} & attributes
    assert not {"inspect", "textwrap", "linecache"} & imported
    from sessionspec.reference import rule_table

    assert {m.entry for m in mutants.MUTANTS.values()} == set(rule_table.HOMES), "an entry no mutant swaps"


def test_the_mutant_process_names_itself_and_leaves_this_process_untouched():
    from sessionspec.reference import chunk_rows

    impl = start_implementation(connector_for(mutants.command("chunk4-packs-runs-of-two")), 30.0)
    try:
        assert impl.info["implementation"]["name"] == "sessionspec-mutant-chunk4-packs-runs-of-two"
    finally:
        impl.close()
    assert chunk_rows.MIN_RUN == 3
