"""The rule table: the one seam through which a variant of the reference replaces one rule.

Like python-jsonschema's ``validators.extend(...)``, which builds a validator
with one keyword function replaced, a variant of the reference (a conformance
mutant, ``conformance/mutants.py``) replaces one entry of :data:`TABLE`. Each
entry is the function or datum that decides one rule, and the reference
consults it through the table at the place the rule is decided, so nothing
else of the reference is patched and no variant depends on its source text.

The table is as small as that purpose allows: it holds the decisions the
hand-written mutants break, not every rule. Entries are registered once by the
module that holds their default (:func:`define`); :func:`swap` replaces one in
this process only (the mutant's adapter process) and :func:`restore` undoes it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["HOMES", "TABLE", "RuleTable", "define", "entries", "restore", "swap"]

T = TypeVar("T")

#: entry -> (requirement it decides, reference module that defines the default)
HOMES: dict[str, tuple[str, str]] = {
    "float_problem": ("JSON-2", "json_value"),
    "is_json_value": ("JSON-10", "json_value"),
    "append_legacy_type": ("APPEND-3", "session"),
    "surface_op_when_missing": ("APPEND-5", "surface"),
    "check_seed_entry": ("SEED-11", "session"),
    "intent_key_supplied": ("APPEND-4", "session"),
    "is_absolute_path": ("HDR-6", "session"),
    "replace_range_reversed": ("SURF-5", "surface"),
    "check_sources": ("SURF-7, SURF-9", "surface"),
    "rewrite_key_for": ("SURF-10", "surface"),
    "next_replace_generation": ("SURF-13", "surface"),
    "message_deriver": ("DERIVE-4, DERIVE-5", "derive"),
    "canonical_header": ("REQ-1", "request_header"),
    "header_equals": ("REQ-4", "request_header"),
    "header_fold_start": ("REQ-3", "request_header"),
    "disposal_announced": ("STORE-9", "store"),
    "sync_flush_failure": ("STORE-13", "store"),
    "turn_is_open": ("OOB-4", "store"),
    "out_of_band_flush": ("OOB-8", "store"),
    "fork_seed": ("FORK-5, FORK-8", "store"),
    "seed_length": ("FORK-9", "store"),
    "message_turn_start": ("FIND-2", "find"),
    "run_continues": ("CHUNK-3", "chunk_rows"),
    "min_run": ("CHUNK-4", "chunk_rows"),
    "build_row": ("CHUNK-6", "chunk_rows"),
    "validate_row": ("CHUNK-9", "chunk_rows"),
    "interrupted_turn_closers": ("REPAIR-6", "repair"),
    "repair_texts": ("REPAIR-9", "repair"),
    "header_line": ("JSONL-1", "jsonl"),
    "decode_line": ("JSONL-7", "jsonl"),
    "path_safe_units": ("JSONL-10", "jsonl"),
    "load_rejected_types": ("JSONL-12", "jsonl"),
    "check_appendable": ("PERSIST-3, PERSIST-4", "sqlite_store"),
    "batch_lossless": ("PERSIST-5", "sqlite_store"),
    "frame_decoder": ("ZSTD-3", "jsonl_zstd"),
    "keep_torn_frame_records": ("ZSTD-7", "jsonl_zstd"),
    "application_id_ok": ("SQLITE-1", "sqlite_store"),
    "in_committed_region": ("SQLITE-5", "sqlite_store"),
    "turn_number_ok": ("INV-2", "invariants"),
    "not_started_waiver": ("INV-7", "invariants"),
}


class RuleTable:
    """The current entries, read by the reference as ``TABLE.<entry>`` where each rule is decided."""

    __slots__ = tuple(HOMES)

    # Typed loosely on purpose: each entry's signature is its default's (see the module that defines it).
    def __getattr__(self, name: str) -> Any:  # only reached for an entry not registered yet
        if name in HOMES:
            importlib.import_module(f"{__package__}.{HOMES[name][1]}")
            return object.__getattribute__(self, name)
        raise AttributeError(f"the rule table has no entry {name!r}")


TABLE: Any = RuleTable()
"""The process's rule table (``Any``: entries keep their defaults' signatures)."""

_DEFAULTS: dict[str, Any] = {}


def define(name: str, default: T) -> T:
    """Register the reference's own entry ``name`` (once, by the module named in :data:`HOMES`)."""
    if name not in HOMES:
        raise KeyError(f"{name!r} is not an entry of the rule table (add it to HOMES)")
    if name in _DEFAULTS:
        raise ValueError(f"rule table entry {name!r} is defined twice")
    _DEFAULTS[name] = default
    setattr(TABLE, name, default)
    return default


def entries() -> dict[str, Any]:
    """Every entry with its current value (imports the modules that define them)."""
    return {name: getattr(TABLE, name) for name in HOMES}


def swap(name: str, build: Callable[[Any], Any]) -> None:
    """Make this process's reference a variant: entry ``name`` becomes ``build(current entry)``."""
    if name not in HOMES:
        raise KeyError(f"{name!r} is not an entry of the rule table; entries: {', '.join(HOMES)}")
    setattr(TABLE, name, build(getattr(TABLE, name)))


def restore() -> None:
    """Every entry back to the reference's own."""
    for name, default in _DEFAULTS.items():
        setattr(TABLE, name, default)
