"""Every bound of every schema under spec/schemas has a witness that fails with it and passes without it.

Issue 26: deleting a new `maximum` from `session-header.json` left every test passing. A bound (the keywords
`maximum`/`minimum`/`exclusive*`, `maxLength`/`minLength`, `maxItems`/`minItems`, `pattern`, `enum`, `const`,
`type`, `minProperties`, `uniqueItems`, an entry of `required`, `additionalProperties: false`) of a schema at
a revision is *witnessed* when a document labelled invalid fails the schemas and passes them once that bound
alone is deleted. The labelled documents are the registry's invalid examples, the closed openness subjects'
`unknownExample`, the documents of the conformance vectors at the place the reference rejects them (header,
seed or fold event, append intent, decoded record, JSONL header line), and the generated single-bound
violations of `conformance/schema-witnesses.json` (`python -m sessionspec.conformance.schema_bounds --write`).
A bound of a `oneOf` branch may instead have a *kept* witness there: a valid document the schemas reject once
the bound is deleted (the loosened branch then matches beside its sibling).

So deleting a bound fails here: its generated witness (or vector document) then validates, and a new bound
without a witness is refused until it gets one. Exempt: meta-schemas and the keywords of `if`/`not`
(`schema_bounds.exempt` says why); the file's `open` list names the bounds no valid document reaches yet, and
may only shrink. Cost: one instrumented python-jsonschema pass per document names the candidate bounds; only
those pairs are re-validated with a bound deleted.
"""

from __future__ import annotations

import functools
import json
from typing import Any

import pytest
from sessionspec.conformance import schema_bounds
from sessionspec.conformance.schema_bounds import Bound, Oracle, label
from sessionspec.spec import load_spec
from sessionspec.spec.revisions import known_revisions

REVISIONS = tuple(known_revisions())


@functools.cache
def _file() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(schema_bounds.WITNESS_FILE.read_text(encoding="utf-8"))
    return data


@functools.cache
def _survey(revision: str) -> tuple[Oracle, frozenset[Bound], dict[Bound, str]]:
    return schema_bounds.survey(revision)


def _by_label(bounds: frozenset[Bound]) -> dict[str, Bound]:
    return {label(b): b for b in bounds}


def stale_witnesses(oracle: Oracle, revision: str) -> list[str]:
    """The generated witnesses of ``revision`` that no longer witness their bound under ``oracle``'s schemas."""
    bounds = _by_label(oracle.bounds)
    stale = []
    for entry in _file()["witnesses"]:
        if revision not in entry["revisions"]:
            continue
        bound = bounds.get(entry["bound"])
        kept = bool(entry.get("kept", False))  # a kept witness: valid, and invalid once the bound is deleted
        if bound is None:
            stale.append(f"{entry['bound']}: no such bound at {revision} (deleted? regenerate the witness file)")
        elif oracle.valid(entry["root"], entry["document"]) is not kept:
            stale.append(f"{entry['bound']}: its witness now " + ("fails" if kept else "passes")
                         + " the schemas (was the bound changed?)")
        elif oracle.valid(entry["root"], entry["document"], loosened=bound) is kept:
            stale.append(f"{entry['bound']}: " + ("its witness does not need this bound" if kept
                                                  else "its witness breaks more than this bound"))
    return stale


@pytest.mark.parametrize("revision", REVISIONS)
def test_every_schema_bound_has_a_witness_or_is_listed_open(revision: str) -> None:
    _survey(revision)
    missing = schema_bounds.uncovered(revision, _file())
    assert missing == [], f"bounds without a witness (python -m sessionspec.conformance.schema_bounds --write): {missing[:20]}"


@pytest.mark.parametrize("revision", REVISIONS)
def test_every_generated_witness_still_fails_with_its_bound_and_passes_without_it(revision: str) -> None:
    oracle, _bounds, _hit = _survey(revision)
    assert stale_witnesses(oracle, revision) == []


def test_the_open_list_only_shrinks() -> None:
    """An open bound exists at some revision and still has no witness (else it leaves the list)."""
    lacking: set[str] = set()  # the bounds without a witness at some revision holding them
    for revision in REVISIONS:
        _oracle, bounds, hit = _survey(revision)
        filed = {w["bound"] for w in _file()["witnesses"] if revision in w["revisions"]}
        lacking |= {label(b) for b in bounds if b not in hit and label(b) not in filed}
    assert sorted(set(_file()["open"]) - lacking) == [], "open bounds that exist nowhere or have witnesses: drop them"


@pytest.mark.parametrize("kept", [False, True], ids=["rejected", "kept"])
def test_deleting_a_bound_fails_its_witness(kept: bool) -> None:
    """The issue's case, for a bound with a generated witness (and one with a kept witness, valid only with the
    bound: a `oneOf` branch's required name): loosen it in a copy of the schemas and the witness test names it."""
    entry = next(w for w in _file()["witnesses"] if bool(w.get("kept")) is kept
                 and (kept or w["bound"].startswith("payload/")))
    revision = entry["revisions"][0]
    oracle, _bounds, _hit = _survey(revision)
    bound = _by_label(oracle.bounds)[entry["bound"]]
    sid, ptr = bound
    spec = load_spec(revision=revision)
    loosened = Oracle({**spec.schemas, sid: schema_bounds.without(spec.schemas[sid], ptr)}, spec.event_schema)
    assert any(item.startswith(entry["bound"] + ":") for item in stale_witnesses(loosened, revision))


def test_a_vector_witnesses_the_header_id_type() -> None:
    """A bound the reference decides too (HDR-4: a header's id is a string) is witnessed by a conformance vector."""
    _oracle, bounds, hit = _survey(REVISIONS[0])
    bound = _by_label(bounds)["session/session-header.json#/properties/id/type"]
    assert hit[bound].startswith("vector ")


def test_the_violation_generator_breaks_one_bound() -> None:
    spec = load_spec()
    oracle = Oracle(spec.schemas, spec.event_schema)
    header = {"version": 0, "id": "s", "createdAt": 5}
    root = schema_bounds.HEADER_ID
    bound = _by_label(oracle.bounds)["session/session-header.json#/required/1"]
    node, keyword, value = oracle.node(bound)
    assert (keyword, value) == ("required", "id")
    [broken] = schema_bounds.violations(header, (), node, keyword, value)
    assert broken == {"version": 0, "createdAt": 5}
    assert not oracle.valid(root, broken) and oracle.valid(root, broken, loosened=bound)


# -- the witnesses against the implementations, not only python-jsonschema --------------------------------------

ENVELOPE_SCHEMAS = ("envelope/session-event.json#", "envelope/surface-op.json#")



def _kept_as_earlier_format(revision: str, document: Any) -> bool:
    """Whether the load path of ``revision`` keeps ``document`` as an earlier-format record: the revision keeps the
    records of its parent it does not upgrade as stored (``jsonl.loadUpgrade.otherEarlierRecords``) and the parent's
    schemas accept it. `sessionspec validate` does not flag those, by that rule (``lint.Checker._invalid_event``)."""
    from sessionspec.reference.revision import rules_for

    rules = rules_for(revision)
    upgrade, parent = rules.load_upgrade, rules.revision.parent
    if upgrade is None or not upgrade.keeps_other_records or parent is None:
        return False
    registered = load_spec(revision=parent).events
    return isinstance(document, dict) and document.get("type") in registered \
        and _survey(parent)[0].valid(schema_bounds.EVENT, document)


def _event_witnesses(revision: str) -> list[dict[str, Any]]:
    """The event-rooted generated witnesses of ``revision`` (not the kept ones, which are valid), each renumbered to its place in one log (its ``seq``
    kept where the witness is about it: not a non-negative integer)."""
    out = []
    for entry in _file()["witnesses"]:
        if entry["root"] != schema_bounds.EVENT or revision not in entry["revisions"] or entry.get("kept"):
            continue
        document = dict(entry["document"]) if isinstance(entry["document"], dict) else entry["document"]
        if isinstance(document, dict) and type(document.get("seq")) is int and document["seq"] >= 0:
            document["seq"] = len(out)
        out.append({"bound": entry["bound"], "document": document})
    return out


@pytest.mark.parametrize("revision", REVISIONS)
def test_the_validator_flags_every_event_witness(revision: str, tmp_path: Any) -> None:
    """`sessionspec validate` (schema level, exact) reports a finding (an error, or a DEC-27 deviation for what
    no reader of the revision reads) on the line of every event-rooted witness, but for those the revision's load
    path keeps as earlier-format records (valid at its parent: a b150a551b8 tool/code-dispatch without the
    rootCallId that revision added): the bounds are the validator's too. One log per revision holds them all, one
    per line after a valid header."""
    from sessionspec.validate import check_file

    witnesses = _event_witnesses(revision)
    header = {"type": "session", "version": 0, "id": "s", "createdAt": 1, "delegationDepth": 0}
    path = tmp_path / "witnesses.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in [header, *(w["document"] for w in witnesses)]) + "\n",
                    encoding="utf-8")
    report = check_file(str(path), level="schema", exact=True, revision=revision)
    flagged = {f["line"] for f in report["findings"]}
    unflagged = [(line, w["bound"]) for line, w in enumerate(witnesses, start=2) if line not in flagged]
    assert len(witnesses) > 100
    assert [(line, bound) for line, bound in unflagged
            if not _kept_as_earlier_format(revision, witnesses[line - 2]["document"])] == []


@pytest.mark.parametrize("revision", REVISIONS)
def test_the_validators_compiled_event_schema_refuses_every_event_witness(revision: str) -> None:
    """The compiled evaluation behind `sessionspec validate` (`lint.schema_set(...).event`, the one its fast pass
    and its findings use) refuses each event-rooted witness one by one, as python-jsonschema does."""
    from sessionspec.validator.lint import schema_set

    compiled = schema_set(revision=revision).event
    accepted = [w["bound"] for w in _event_witnesses(revision) if compiled.is_valid(w["document"])]
    assert accepted == []


@pytest.mark.parametrize("revision", REVISIONS)
def test_the_reference_rejects_every_envelope_witness(revision: str) -> None:
    """The reference checks the envelope of every event it is given (SEED-3, and the surface marker rules): a
    witness of an envelope bound, as a one-event seed, is refused. (The payload schemas the reference does not
    check at seed or load, by design: its seed rules read the message shapes, provenance and request header
    config only; `sessionspec validate` checks the rest, above.)"""
    from sessionspec.reference.session import validate_seed

    witnesses = [w for w in _event_witnesses(revision) if w["bound"].startswith(ENVELOPE_SCHEMAS)]
    assert witnesses
    for witness in witnesses:
        document = dict(witness["document"], seq=0) if type(witness["document"].get("seq")) is int else witness["document"]
        with pytest.raises(Exception) as caught:
            validate_seed([document], revision)
        assert getattr(caught.value, "code", None), witness["bound"]


def test_the_validator_accepts_every_kept_witness(tmp_path: Any) -> None:
    """A kept witness is a valid event: `sessionspec validate` (schema level, exact and fast) and the compiled event
    schema accept it, as python-jsonschema does (loosening the bound would refuse it)."""
    from sessionspec.validate import check_file
    from sessionspec.validator.lint import schema_set

    header = {"type": "session", "version": 0, "id": "s", "createdAt": 1, "delegationDepth": 0}
    entries = [w for w in _file()["witnesses"] if w.get("kept") and w["root"] == schema_bounds.EVENT]
    assert entries
    for entry in entries:
        for revision in entry["revisions"]:
            assert schema_set(revision=revision).event.is_valid(entry["document"]), entry["bound"]
            path = tmp_path / "kept.jsonl"
            path.write_text("\n".join(json.dumps(x) for x in [header, dict(entry["document"], seq=0)]) + "\n",
                            encoding="utf-8")
            for exact in (True, False):
                report = check_file(str(path), level="schema", exact=exact, revision=revision)
                assert [f for f in report["findings"] if f.get("line") == 2] == [], (entry["bound"], exact)


def test_the_file_lists_exactly_the_bounds_exempt_at_each_revision() -> None:
    """`exempt` is generated from `schema_bounds.exempt_at`: unreached schemas, and bounds their guard forces."""
    computed: set[tuple[str, str]] = set()
    for revision in REVISIONS:
        oracle, bounds, hit = _survey(revision)
        computed |= {(label(b), revision) for b in bounds if schema_bounds.exempt(b) is None and b not in hit
                     and schema_bounds.exempt_at(oracle, b) is not None}
    filed = {(e["bound"], r) for e in _file()["exempt"] for r in e["revisions"]}
    assert filed == computed


def test_a_guarded_branch_bound_is_exempt_and_the_builder_steers_into_branches() -> None:
    """A branch's own `kind` const is forced by the `if` that selects it; the builder reaches a branch no registry
    example uses (a user message whose source is a session reference) with a valid document."""
    revision = REVISIONS[-1]
    oracle, bounds, _hit = _survey(revision)
    by = _by_label(bounds)
    forced = by["type/message-source/session-reference.json#/properties/kind/const"]
    assert (schema_bounds.exempt_at(oracle, forced) or "").startswith("forced by its guard")
    builder = schema_bounds.Builder(oracle)
    host = ("https://sessionspec.dev/schema/type/message-source/session-reference.json", ())
    data = builder.instance("https://sessionspec.dev/schema/payload/user/message.json", host)
    assert data["source"]["kind"] == "session-reference"
    event = {"type": "user/message", "seq": 0, "time": 1, "surfaceOp": "append", "data": data}
    assert oracle.valid(schema_bounds.EVENT, event)


def test_every_open_bound_says_why_it_has_no_witness() -> None:
    assert sorted(schema_bounds.OPEN_REASONS) == sorted(_file()["open"])
