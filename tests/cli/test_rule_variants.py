"""The validator asks the reference's rule table for every entry: a variant of a rule holds in `validate`.

No pre-check of its own decides that an entry certainly passes, so a tightened rule (a conformance
mutant, a later revision's stricter check) rejects in the validator exactly what it rejects in the
reference, plain events included.
"""

from __future__ import annotations

from typing import Any

import pytest
from cli_helpers import jsonl, turn_events
from sessionspec.reference import load_log, rule_table
from sessionspec.spec.errors import SeedError
from sessionspec.validator.lint import Checker


def _codes(data: bytes) -> list[tuple[str, int | None]]:
    log = load_log(data, "x.jsonl")
    Checker("load", None).check(log)
    return [(finding.code, finding.seq) for finding in log.findings]


def _refusing(etype: str) -> rule_table.RuleSet:
    def build(entry: Any) -> Any:
        def check(event: Any, index: int, *rest: Any) -> Any:
            if event.get("type") == etype:
                raise SeedError(f"seed event at index {index} is refused by the variant", "SEED_ENVELOPE",
                                requirement="SEED-3", index=index)
            return entry(event, index, *rest)

        return check

    return rule_table.default().derive("check_seed_entry", build)


@pytest.mark.req("SEED-11")
def test_a_tightened_seed_entry_rule_holds_for_plain_events_in_validate() -> None:
    events = turn_events()
    plain = next(e for e in events if len(e) == 4 and e["type"] == "turn/start")
    data = jsonl(events)
    assert _codes(data) == []
    with rule_table.use(_refusing(plain["type"])):
        found = _codes(data)
    assert ("SEED_ENVELOPE", plain["seq"]) in found
    assert _codes(data) == []
