"""The rule table: the one seam through which a variant of the reference replaces one rule.

Like python-jsonschema's ``validators.extend(...)``, which builds a validator
with one keyword function replaced, a variant of the reference (a conformance
mutant, ``conformance/mutants.py``) replaces one entry of :data:`TABLE`. Each
entry is the function or datum that decides one rule, and the reference
consults it through the table at the place the rule is decided, so nothing
else of the reference is patched and no variant depends on its source text.

The table is as small as that purpose allows: it holds the decisions the
hand-written mutants break, not every rule. Entries are registered once by the
module that holds their default (:func:`define`), and the reference reads each
one only through :data:`TABLE` -- never a private copy, never a test of whether
the entry is its own default -- so a fast form of a rule evaluates the entry too.
(:func:`is_own` is that test for an accelerator outside the reference whose shortcut
is proved about the default entry: it takes the shortcut only then, and asks the
entry otherwise.)

A variant is a :class:`RuleSet`, derived like ``jsonschema.validators.extend``::

    variant = rule_table.default().extend(min_run=2)           # entries replaced, the rest the reference's
    variant = rule_table.default().derive("min_run", lambda n: n - 1)   # built from the entry it replaces
    with rule_table.use(variant):                               # this process's reference, until the block ends
        ...
    rule_table.activate(variant)                                # for good (a mutant's adapter process)

:func:`swap` / :func:`restore` are the older spelling of ``activate(current().derive(...))`` / ``activate(default())``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Never, TypeVar

__all__ = ["HOMES", "TABLE", "RuleSet", "RuleTable", "activate", "current", "default", "define", "entries",
           "is_own", "restore", "swap", "use"]

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
    "run_fields": ("CHUNK-3", "chunk_rows"),
    "min_run": ("CHUNK-4", "chunk_rows"),
    "build_row": ("CHUNK-6", "chunk_rows"),
    "row_shape": ("CHUNK-9", "chunk_rows"),
    "member_bounds": ("CHUNK-9", "chunk_rows"),
    "member_seqs": ("CHUNK-11", "chunk_rows"),
    "interrupted_turn_closers": ("REPAIR-6", "repair"),
    "repair_texts": ("REPAIR-9", "repair"),
    "header_line": ("JSONL-1", "jsonl"),
    "decode_line": ("JSONL-7", "jsonl"),
    "path_safe_units": ("JSONL-10", "jsonl"),
    "load_rejected_types": ("JSONL-12", "jsonl"),
    "check_appendable": ("PERSIST-3, PERSIST-4", "sqlite_store"),
    "batch_lossless": ("PERSIST-5", "sqlite_store"),
    "batch_retired": ("PERSIST-9", "sqlite_store"),
    "created_at_ok": ("PERSIST-10", "persistence"),
    "no_session": ("PERSIST-11", "persistence"),
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


def is_own(name: str) -> bool:
    """Whether entry ``name`` is the reference's own now. The reference never asks (it reads every entry through the
    table); an accelerator does whose shortcut is proved about the reference's own entry, to take it only then (the
    validator's typed chunk rows, whose struct types are proved to imply the own ``row_shape``)."""
    return getattr(TABLE, name) is _DEFAULTS[name]


def entries() -> dict[str, object]:
    """Every entry with its current value (imports the modules that define them)."""
    return {name: getattr(TABLE, name) for name in HOMES}


class RuleSet(Mapping[str, Any]):
    """An immutable set of every rule table entry: the reference's own (:func:`default`) or a variant.

    Derive variants with :meth:`extend` (entries given by value) or :meth:`derive` (an entry built from
    the one it replaces); run the reference with one through :func:`use` or :func:`activate`.
    """

    __slots__ = ("_entries",)

    def __init__(self, values: Mapping[str, object]) -> None:
        unknown = [name for name in values if name not in HOMES]
        if unknown:
            raise KeyError(f"not entries of the rule table: {', '.join(map(repr, unknown))}; entries: {', '.join(HOMES)}")
        missing = [name for name in HOMES if name not in values]
        if missing:
            raise KeyError(f"a rule set needs every entry; missing: {', '.join(missing)}")
        self._entries: dict[str, Any] = {name: values[name] for name in HOMES}  # each entry its default's type

    def __getitem__(self, name: str) -> Any:
        return self._entries[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def extend(self, values: Mapping[str, object] | None = None, **named: object) -> RuleSet:
        """This set with the given entries replaced (as ``jsonschema.validators.extend`` replaces keywords)."""
        changed = {**(values or {}), **named}
        unknown = [name for name in changed if name not in HOMES]
        if unknown:
            raise KeyError(f"not entries of the rule table: {', '.join(map(repr, unknown))}; entries: {', '.join(HOMES)}")
        return RuleSet({**self._entries, **changed})

    def derive(self, name: str, build: Callable[[Never], object]) -> RuleSet:
        """This set with entry ``name`` replaced by ``build(its current value)`` (``build`` takes the entry's own
        type, its default's: `Never` here says only that the table does not know it)."""
        if name not in HOMES:
            raise KeyError(f"{name!r} is not an entry of the rule table; entries: {', '.join(HOMES)}")
        return self.extend({name: build(self._entries[name])})

    def changed(self, other: Mapping[str, object] | None = None) -> list[str]:
        """The entries whose value differs from ``other`` (default: the reference's own), by identity."""
        base = default() if other is None else other
        return [name for name in HOMES if self._entries[name] is not base[name]]


def default() -> RuleSet:
    """The reference's own entries (imports every module that defines one)."""
    for name in HOMES:
        getattr(TABLE, name)  # registers the entry's module on first use
    return RuleSet(_DEFAULTS)


def current() -> RuleSet:
    """The entries this process's reference uses now."""
    return RuleSet(entries())


def activate(rules: RuleSet) -> None:
    """Make ``rules`` this process's rule set (a mutant's adapter process: for the rest of its life)."""
    for name, value in rules.items():
        setattr(TABLE, name, value)


@contextmanager
def use(rules: RuleSet) -> Iterator[RuleSet]:
    """Run the reference with ``rules`` inside the block; the previous entries come back after it."""
    previous = current()
    activate(rules)
    try:
        yield rules
    finally:
        activate(previous)


def swap(name: str, build: Callable[[Never], object]) -> None:
    """Make this process's reference a variant: entry ``name`` becomes ``build(current entry)``."""
    activate(current().derive(name, build))


def restore() -> None:
    """Every entry back to the reference's own."""
    activate(default())
