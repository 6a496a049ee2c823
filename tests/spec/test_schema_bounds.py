"""Every bound of every schema under spec/schemas has a witness that fails with it and passes without it.

Issue 26: deleting a new `maximum` from `session-header.json` left every test passing. A bound (the keywords
`maximum`/`minimum`/`exclusive*`, `maxLength`/`minLength`, `maxItems`/`minItems`, `pattern`, `enum`, `const`,
`type`, `minProperties`, `uniqueItems`, an entry of `required`, `additionalProperties: false`) of a schema at
a revision is *witnessed* when a document labelled invalid fails the schemas and passes them once that bound
alone is deleted. The labelled documents are the registry's invalid examples, the closed openness subjects'
`unknownExample`, the documents of the conformance vectors at the place the reference rejects them (header,
seed or fold event, append intent, decoded record, JSONL header line), and the generated single-bound
violations of `conformance/schema-witnesses.json` (`python -m sessionspec.conformance.schema_bounds --write`).

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
        if bound is None:
            stale.append(f"{entry['bound']}: no such bound at {revision} (deleted? regenerate the witness file)")
        elif oracle.valid(entry["root"], entry["document"]):
            stale.append(f"{entry['bound']}: its witness now passes the schemas (was the bound loosened?)")
        elif not oracle.valid(entry["root"], entry["document"], loosened=bound):
            stale.append(f"{entry['bound']}: its witness breaks more than this bound")
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


def test_deleting_a_bound_fails_its_witness() -> None:
    """The issue's case, for a bound with a generated witness: loosen it in a copy of the schemas and the witness
    test names it."""
    revision = REVISIONS[0]
    entry = next(w for w in _file()["witnesses"] if revision in w["revisions"] and w["bound"].startswith("payload/"))
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
