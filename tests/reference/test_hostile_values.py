"""Unhashable JSON values where a string is expected are ordinary data, never a TypeError."""

from __future__ import annotations

import pytest
from sessionspec.reference import decode_storage_record, fold_surface, is_surface_eligible_type, pack_chunk_runs
from sessionspec.reference.session import Session
from sessionspec.spec.errors import SeedError

HEADER = {"config": {"provider": "p", "model": "m"}}


@pytest.mark.parametrize("value", [[1], {"k": "fallback"}, ["fallback"]])
def test_seed8_only_the_string_fallback_is_a_legacy_reason(value: object) -> None:
    session = Session("s", [{"type": "request/header", "seq": 0, "time": 0, "data": {"reason": value, "header": HEADER}}])
    assert session.seq == 1
    with pytest.raises(SeedError) as caught:
        Session("s", [{"type": "request/header", "seq": 0, "time": 0, "data": {"reason": "fallback", "header": HEADER}}])
    assert caught.value.code == "SEED_LEGACY_FALLBACK"


def test_seed3_a_list_type_is_an_invalid_envelope() -> None:
    with pytest.raises(SeedError) as caught:
        Session("s", [{"type": ["user/message"], "seq": 0, "time": 0, "data": None}])
    assert caught.value.code == "SEED_ENVELOPE"


def test_surf1_a_list_type_is_not_surface_eligible() -> None:
    assert is_surface_eligible_type(["user/message"]) is False
    assert fold_surface([{"type": ["user/message"], "seq": 0, "time": 0, "data": None}]) == {
        "nodes": [],
        "replacements": [],
    }


def test_chunk8_a_list_tag_decodes_to_itself() -> None:
    record = {"type": ["text-chunks"], "seq0": 0}
    assert decode_storage_record(record) == [record]


def test_chunk2_a_list_chunk_type_is_not_packable() -> None:
    events = [
        {"type": "assistant/chunk", "seq": i, "time": 0, "data": {"turn": 1, "step": 1, "chunk": {"type": ["text-delta"], "index": 0, "text": "a"}}}
        for i in range(3)
    ]
    assert pack_chunk_runs(events) == events
