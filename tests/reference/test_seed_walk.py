"""The one walk of the load rules (`seed_walk.LoadWalk`): every defect located and the walk goes on; the seed and
load paths raise the first; a rule table variant changes every use alike."""

from __future__ import annotations

from typing import Any

import pytest
from sessionspec.reference import Session, rule_table
from sessionspec.reference.revision import rules_for
from sessionspec.reference.seed_walk import LoadWalk
from sessionspec.reference.surface import SurfaceState
from sessionspec.spec.errors import SeedError

req = pytest.mark.req


def ev(seq: int, type: str = "plugin/x", data: Any = None, **extra: Any) -> dict[str, Any]:
    return {"type": type, "seq": seq, "time": 1000 + seq, "data": data, **extra}


def walk_all(records: list[Any], **options: Any) -> tuple[list[Any], LoadWalk, list[Any]]:
    """Every finding of the walk over ``records`` (each located at its position), the walk and what it kept."""
    rules = rules_for(None)
    by_seq: dict[int, Any] = {}
    kept: list[Any] = []

    def keep(event: Any) -> None:
        by_seq[event["seq"]] = event
        kept.append(event)

    walk = LoadWalk(rules, SurfaceState(by_seq.__getitem__, rules), keep, frozen=False,
                    locate=lambda i: (i + 2, f"/{i}"), **options)
    return list(walk.run(records)), walk, kept


SEED = [
    ev(0, "turn/start", {"turn": 1}),
    ev(1, "user/message", {"content": []}, surfaceOp="append"),
    ev(2, "plugin/x", {}, surfaceOp="append"),  # SURF-3: a log-only type with a marker
    ev(3, "plugin/x", {}, extra=1),  # SEED-3: a key outside the envelope
    ev(4, "plugin/x", {}),
]


@req("SEED-1", "SEED-3", "SEED-10")
def test_every_defect_is_found_located_and_the_walk_goes_on() -> None:
    found, walk, kept = walk_all(SEED)
    assert [(f.code, f.line, f.seq, f.pointer) for f in found] == [
        ("SURFACE_LOG_ONLY_MARKER", 4, 2, "/2/surfaceOp"),
        ("SEED_ENVELOPE", 5, 3, "/3/extra"),
    ]
    assert [e["seq"] for e in kept] == [0, 1, 4]  # a rejected event keeps its seq and changes nothing
    assert walk.suppressed == 0
    assert all(isinstance(f.error, SeedError) for f in found)


@req("SEED-1")
def test_the_seed_path_raises_the_first_finding_of_the_same_walk() -> None:
    found, _, _ = walk_all(SEED)
    with pytest.raises(SeedError) as info:
        Session("s", SEED)
    assert info.value is not found[0].error  # a new walk, the same verdict
    assert (info.value.code, info.value.index, str(info.value)) == (
        found[0].code, 2, str(found[0].error))
    assert info.value.__cause__ is not None and info.value.__cause__.code == "SURFACE_LOG_ONLY_MARKER"


@req("SEED-10", "SURF-5")
def test_a_replace_naming_a_rejected_event_is_a_knock_on_not_reported_again() -> None:
    seed = [
        ev(0, "user/message", {"content": []}, surfaceOp="append", extra=1),  # rejected (SEED-3)
        ev(1, "user/message", {"content": []}, surfaceOp="append"),
        ev(2, "user/message", {"content": []}, surfaceOp={"op": "replace", "start": 0, "end": 0},
           sourceEventSeqs=[0]),
    ]
    found, walk, kept = walk_all(seed)
    assert [f.code for f in found] == ["SEED_ENVELOPE"]
    assert walk.suppressed == 1 and [e["seq"] for e in kept] == [1]


@req("SEED-11")
def test_a_variant_of_the_entry_rule_holds_for_every_use_of_the_walk() -> None:
    default = rule_table.current()["check_seed_entry"]

    def refuses_plugin_types(event: Any, index: int, rules: Any) -> Any:
        if event["type"].startswith("plugin/"):
            raise SeedError(f"seed event at index {index} is refused by the variant", "SEED_ENVELOPE",
                            requirement="SEED-3", index=index)
        return default(event, index, rules)

    seed = [ev(0, "turn/start", {"turn": 1}), ev(1), ev(2)]
    Session("s", seed)  # the reference's own rule accepts it
    with rule_table.use(rule_table.current().extend(check_seed_entry=refuses_plugin_types)):
        found, _, _ = walk_all(seed)
        with pytest.raises(SeedError) as info:
            Session("s", seed)
    assert [(f.code, f.seq) for f in found] == [("SEED_ENVELOPE", 1), ("SEED_ENVELOPE", 2)]
    assert info.value.index == 1


@req("SEED-9")
def test_following_the_numbering_skips_a_backward_seq_and_counts_a_gap() -> None:
    seen: list[tuple[int, int | None, bool, bool]] = []

    def observe(i: int, event: Any, stored: Any, refusal: Any, seq: int | None, renumbered: bool, placed: bool) -> bool:
        seen.append((i, seq, renumbered, placed))
        return False

    records = [ev(0, "turn/start", {"turn": 1}), ev(3), ev(1), ev(4)]
    found, _, kept = walk_all(records, follow_numbering=True, observe=observe)
    assert found == []  # the numbering is the reader's finding (JSONL-7, SEED-9 in a JSON array), not the walk's
    assert seen == [(0, 0, False, True), (1, 3, True, True), (2, 1, True, False), (3, 4, False, True)]
    assert [e["seq"] for e in kept] == [0, 3, 4]


@req("JSONL-7", "SEED-9")
def test_following_the_numbering_asks_the_one_statement_of_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Whether a record is in place is `jsonl_read.in_place` (JSONL-7), as the reader decides: under a variant that
    never places seq 2, the walk follows it too (seq 2 takes no place; seq 3 comes after a gap)."""
    from sessionspec.reference import jsonl_read

    seen: list[tuple[int | None, bool, bool]] = []

    def observe(i: int, event: Any, stored: Any, refusal: Any, seq: int | None, renumbered: bool, placed: bool) -> bool:
        seen.append((seq, renumbered, placed))
        return False

    records = [ev(0, "turn/start", {"turn": 1}), ev(1), ev(2), ev(3)]
    walk_all(records, follow_numbering=True, observe=observe)
    assert seen == [(0, False, True), (1, False, True), (2, False, True), (3, False, True)]
    seen.clear()
    original = jsonl_read.in_place
    monkeypatch.setattr(jsonl_read, "in_place", lambda found, expected: original(found, expected) and found != 2)
    _, _, kept = walk_all(records, follow_numbering=True, observe=observe)
    assert seen == [(0, False, True), (1, False, True), (2, True, False), (3, True, True)]
    assert [e["seq"] for e in kept] == [0, 1, 3]


@req("JSONL-12", "JSONL-15")
def test_the_stored_reader_s_refusals_are_located_findings_and_the_walk_goes_on() -> None:
    from sessionspec.reference.jsonl import StoredReader

    rules = rules_for("b150a551b8")
    records = [ev(0, "turn/start", {"turn": 1}), ev(1, "mode/set", {}), ev(2, "plugin/x", {}),
               ev(3, "plugin/x", {}, ignorable=True)]
    by_seq: dict[int, Any] = {}
    walk = LoadWalk(rules, SurfaceState(by_seq.__getitem__, rules), lambda e: by_seq.__setitem__(e["seq"], e),
                    frozen=True, reader=StoredReader("s", None, rules), follow_numbering=True,
                    locate=lambda i: (i + 2, ""))
    found = list(walk.run(records))
    assert [(f.code, f.requirement, f.line, f.seq, f.pointer) for f in found] == [
        ("JSONL_LEGACY_EVENT", "JSONL-12", 3, 1, "/type"),
        ("JSONL_UNKNOWN_TYPE", "JSONL-15", 4, 2, "/type"),
    ]
    assert sorted(by_seq) == [0, 3]  # an ignorable unknown type is read; refused records keep their seqs
