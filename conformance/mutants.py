"""Deliberately broken references ("mutants"): the suite must catch every one.

A conformance suite is only as good as the broken implementations it
catches. Each mutant here breaks exactly ONE rule of the reference, named by
its requirement id, and runs as an ordinary adapter process::

    python -m sessionspec.conformance.mutants NAME        # serve the protocol, mutated
    python -m sessionspec.conformance.mutants --list      # the catalogue
    python -m sessionspec.conformance.mutants --check     # run the suite on every mutant, print who caught it

A mutant is a patch applied in the adapter process before it serves: a
wrapper around a reference function, a replaced module constant, or (for
logic written inline) a recompiled copy of one function with one snippet
changed. The reference's files are never modified, and the patch lives only
in that process, so the in-process reference that judges it stays intact.

:func:`check` runs the suite against a mutant through the subprocess
protocol: the vectors of the mutant's requirement family, then a short,
derandomised run of the state machines focused on the rules that matter for
it (``Mutant.probe``). It reports every catching vector or machine rule with
the requirement ids it checks.
"""

from __future__ import annotations
import __future__

import argparse
import functools
import importlib
import inspect
import io
import json
import sys
import tempfile
import textwrap
import time
import types
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

__all__ = ["MUTANTS", "Catch", "Mutant", "check", "command", "main"]


@dataclass(frozen=True)
class Mutant:
    """One broken variant: the rule it violates, how, and where the suite should look."""

    name: str
    rule: str
    description: str
    apply: Callable[[], None]
    probe: Mapping[str, Sequence[str]]
    """Machine -> the rules (``"rule"`` or ``"rule:kind,kind"``) a short run focuses on."""

    @property
    def family(self) -> str:
        return self.rule.split("-")[0]


MUTANTS: dict[str, Mutant] = {}


def mutant(name: str, rule: str, description: str,
           **probe: Sequence[str]) -> Callable[[Callable[[], None]], Callable[[], None]]:
    """Register a mutant: ``probe`` keywords are machine names mapped to their focus rules."""

    def register(apply: Callable[[], None]) -> Callable[[], None]:
        if name in MUTANTS:
            raise ValueError(f"duplicate mutant {name!r}")
        MUTANTS[name] = Mutant(name, rule, description, apply, dict(probe))
        return apply

    return register


# -- patch helpers -----------------------------------------------------------------------


def _modules() -> list[types.ModuleType]:
    return [m for n, m in list(sys.modules.items()) if m is not None and n.startswith("sessionspec.")]


def replace_everywhere(original: Any, replacement: Any) -> None:
    """Rebind every module-level name that refers to ``original`` (``from x import f`` copies)."""
    hits = 0
    for module in _modules():
        for key, value in list(vars(module).items()):
            if value is original:
                setattr(module, key, replacement)
                hits += 1
    if not hits:
        raise LookupError(f"no module refers to {original!r}")


def patch_source(owner: Any, attr: str, old: str, new: str) -> None:
    """Recompile ``owner.attr`` (a function or method) with one snippet of its source changed.

    For logic written inline, where no wrapper can reach. Fails loudly when the
    reference no longer contains the snippet exactly once."""
    raw = inspect.getattr_static(owner, attr)
    function = raw.__func__ if isinstance(raw, (staticmethod, classmethod)) else raw
    source = textwrap.dedent(inspect.getsource(function))
    if source.count(old) != 1:
        raise LookupError(f"{owner.__name__}.{attr}: expected the snippet once, found {source.count(old)}: {old!r}")
    module = sys.modules[function.__module__]
    code = compile(source.replace(old, new), inspect.getsourcefile(function) or "<mutant>", "exec",
                   flags=__future__.annotations.compiler_flag, dont_inherit=True)
    scope: dict[str, Any] = {}
    exec(code, vars(module), scope)  # noqa: S102 - recompiling the reference's own function
    patched = scope[attr]
    if isinstance(patched, (staticmethod, classmethod)):
        setattr(owner, attr, patched)
    elif isinstance(raw, staticmethod):
        setattr(owner, attr, staticmethod(patched))
    else:
        setattr(owner, attr, patched)


def patch_constant(function: Any, old: Any, new: Any) -> None:
    """Change one literal constant of a function's code (e.g. the type a check compares with)."""
    code = function.__code__
    if code.co_consts.count(old) != 1:
        raise LookupError(f"{function.__qualname__}: constant {old!r} not found exactly once")
    function.__code__ = code.replace(co_consts=tuple(new if c == old and type(c) is type(old) else c
                                                     for c in code.co_consts))


_REFERENCE_MODULES = ("chunk_rows", "derive", "find", "invariants", "json_value", "jsonl", "repair",
                      "request_header", "session", "store", "surface")


def _ref() -> Any:
    """Import every reference module (so ``from`` copies exist before patching)."""
    for module in _REFERENCE_MODULES:
        importlib.import_module(f"sessionspec.reference.{module}")
    return importlib.import_module("sessionspec.reference")


# -- the catalogue ------------------------------------------------------------------------
# One rule each; `probe` names the state-machine rules that exercise it.


@mutant("json2-accepts-negative-zero", "JSON-2", "treats -0.0 as a lossless JSON value",
        session=("json_value", "append_invalid:data-not-json,metadata-not-json"))
def _json2() -> None:
    from sessionspec.reference import json_value as jv

    jv._bad = lambda v: v != v or v in (jv._INF, jv._NINF)
    original = jv._bad_float
    jv._bad_float = lambda v: None if v == 0.0 else original(v)  # type: ignore[assignment]


@mutant("json10-rejects-proto-key", "JSON-10", "rejects a value holding a \"__proto__\" key",
        session=("json_value",))
def _json10() -> None:
    from sessionspec.reference import json_value as jv

    original = jv.is_json_value

    def is_json_value(value: Any) -> bool:
        stack = [value]
        while stack:
            item = stack.pop()
            if isinstance(item, dict):
                if "__proto__" in item:
                    return False
                stack.extend(item.values())
            elif isinstance(item, list):
                stack.extend(item)
        return original(value)

    replace_everywhere(original, is_json_value)


@mutant("append3-accepts-header-delta", "APPEND-3", "appends a legacy request/header-delta event",
        session=("append_invalid:legacy-type",))
def _append3() -> None:
    _ref()
    from sessionspec.reference import session as mod

    if not hasattr(mod, "_DELTA_TYPE"):  # the check compares with a literal
        patch_constant(mod.Session.append, "request/header-delta", "request/header-delta (check disabled)")
        return
    original = mod.Session.append
    delta = mod._DELTA_TYPE

    def append(self: Any, type: str, data: Any, intent: Any = None) -> Any:
        mod._DELTA_TYPE = "(append check disabled)"  # only the append-time check; seeds still refuse it
        try:
            return original(self, type, data, intent)
        finally:
            mod._DELTA_TYPE = delta

    mod.Session.append = append  # type: ignore[method-assign]


@mutant("append5-surface-without-marker", "APPEND-5", "appends a surface event without surfaceOp as if it said append",
        session=("append_invalid:marker-missing,registry-invalid",))
def _append5() -> None:
    from sessionspec.reference.surface import SURFACE_TYPES, SurfaceState

    original = SurfaceState.check

    def check(self: Any, event: Mapping[str, Any], index: int | None = None) -> Any:
        if event.get("type") in SURFACE_TYPES and "surfaceOp" not in event:
            return original(self, {**event, "surfaceOp": "append"}, index)
        return original(self, event, index)

    SurfaceState.check = check  # type: ignore[method-assign]


@mutant("seed11-seq-before-provenance", "SEED-11",
        "checks a seed entry's seq before its provider/model, aborted-reason and fallback checks",
        session=("seed_invalid:two-faults",))
def _seed11() -> None:
    _ref()
    from sessionspec.reference import session as mod
    from sessionspec.spec.errors import SeedError

    original = mod.check_seed_entry
    later = {"SEED_REQUEST_HEADER_CONFIG", "SEED_PROVENANCE", "SEED_ABORTED_REASON", "SEED_LEGACY_FALLBACK"}

    def check(entry: Any, index: int, *rest: Any) -> Any:
        try:
            return original(entry, index, *rest)
        except SeedError as error:
            if error.code in later and entry.get("seq") != index:
                raise SeedError(f"seed event at index {index} is not contiguous", "SEED_NOT_CONTIGUOUS",
                                requirement="SEED-9", index=index) from error
            raise

    replace_everywhere(original, check)


@mutant("hdr6-accepts-relative-cwd", "HDR-6", "accepts a header whose cwd is a relative path",
        session=("header:relative-cwd,valid",))
def _hdr6() -> None:
    _ref()
    from sessionspec.reference import session as mod

    mod._is_absolute = lambda path: True


@mutant("surf5-compares-seq-values", "SURF-5",
        "refuses a replace whose start seq is larger than its end seq, though start comes first by position",
        session=("compaction",))
def _surf5() -> None:
    from sessionspec.reference.surface import SurfaceState

    patch_source(SurfaceState, "check", "if slot_s > slot_e:", "if slot_s > slot_e or start > end:")


@mutant("surf7-empty-sources", "SURF-7", "accepts an empty sourceEventSeqs on a type other than assistant/message",
        session=("append_invalid:sources-invalid,registry-invalid",))
def _surf7() -> None:
    from sessionspec.reference.surface import SurfaceState

    original = SurfaceState._check_sources

    def check_sources(self: Any, event: Any, etype: str, seq: int, shadowed: Any, index: int) -> None:
        if event.get("sourceEventSeqs") == [] and etype != "assistant/message":
            event = {k: v for k, v in event.items() if k != "sourceEventSeqs"}
        original(self, event, etype, seq, shadowed, index)

    SurfaceState._check_sources = check_sources  # type: ignore[method-assign, assignment]


@mutant("surf9-provenance-misses-shadowed", "SURF-9",
        "accepts a replace whose sourceEventSeqs cite the start node but miss another shadowed node",
        session=("append", "compaction", "append_invalid:replace-coverage"))
def _surf9() -> None:
    from sessionspec.reference.surface import SurfaceState

    original = SurfaceState._check_sources

    def check_sources(self: Any, event: Any, etype: str, seq: int, shadowed: Any, index: int) -> None:
        cited = shadowed[:1] if "sourceEventSeqs" in event else shadowed
        original(self, event, etype, seq, cited, index)

    SurfaceState._check_sources = check_sources  # type: ignore[method-assign, assignment]


@mutant("surf10-rewrite-checks-call-id-only", "SURF-10",
        "accepts a tool/result rewrite that changes more than content, as long as the callId matches",
        session=("append", "append_invalid:tool-result-rewrite"))
def _surf10() -> None:
    from sessionspec.reference.revision import FlatMessages

    original = FlatMessages.rewrite_key
    FlatMessages.rewrite_key = lambda self, data: (  # type: ignore[method-assign]
        {"callId": data.get("callId")} if isinstance(data, dict) else original(self, data)
    )


@mutant("surf13-generation-counts-shadowed", "SURF-13",
        "increases replaceGeneration by the number of shadowed nodes instead of by one",
        session=("compaction",))
def _surf13() -> None:
    from sessionspec.reference.surface import SurfaceState

    original = SurfaceState.apply

    def apply(self: Any, plan: Any) -> None:
        original(self, plan)
        if plan.kind == "replace":
            self._generation += len(plan.shadowed) - 1

    SurfaceState.apply = apply  # type: ignore[method-assign]


def _wrap_messages(change: Callable[[Mapping[str, Any], Any], Any]) -> None:
    _ref()
    from sessionspec.reference.revision import FlatMessages

    original = FlatMessages.derive

    def derive(self: Any, event: Mapping[str, Any]) -> Any:
        return change(event, original(self, event))

    FlatMessages.derive = derive  # type: ignore[method-assign]


@mutant("derive4-empty-assistant-message", "DERIVE-4", "derives a message from an assistant/message with empty content",
        session=("append",))
def _derive4() -> None:
    from sessionspec.reference.json_value import FrozenDict, FrozenList

    def change(event: Mapping[str, Any], message: Any) -> Any:
        data = event.get("data")
        if message is None and event.get("type") == "assistant/message" and isinstance(data, dict) \
                and data.get("content") == []:
            return FrozenDict({"role": "assistant", "content": FrozenList(), "provenance": data.get("provenance")})
        return message

    _wrap_messages(change)


@mutant("derive5-tool-result-drops-false-is-error", "DERIVE-5",
        "leaves isError out of a derived tool result when it is false",
        session=("append",))
def _derive5() -> None:
    from sessionspec.reference.json_value import FrozenDict, FrozenList

    def change(event: Mapping[str, Any], message: Any) -> Any:
        if event.get("type") != "tool/result" or message is None:
            return message
        part = message["content"][0]
        if part.get("isError") is False:
            part = FrozenDict({k: v for k, v in part.items() if k != "isError"})
            return FrozenDict({**message, "content": FrozenList([part])})
        return message

    _wrap_messages(change)


@mutant("req1-keeps-empty-system", "REQ-1", "keeps an empty system prompt in the canonical header",
        session=("header_views", "request_header"))
def _req1() -> None:
    _ref()
    from sessionspec.reference import request_header

    original = request_header.canonical_header

    def canonical_header(header: Any) -> Any:
        out = original(header)
        if isinstance(header, Mapping) and header.get("system") == "":
            out["system"] = ""
        return out

    replace_everywhere(original, canonical_header)


@mutant("req4-equality-ignores-system", "REQ-4", "calls two request headers equal when only their system prompts differ",
        session=("header_views",))
def _req4() -> None:
    _ref()
    from sessionspec.reference import request_header

    original = request_header.header_equals

    def header_equals(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
        return original({k: v for k, v in a.items() if k != "system"}, {k: v for k, v in b.items() if k != "system"})

    replace_everywhere(original, header_equals)


@mutant("store9-disposes-unannounced", "STORE-9", "emits session/disposed for an entry that was never announced",
        store=("listen", "prepare", "detach"))
def _store9() -> None:
    from sessionspec.reference.store import SessionStore

    original = SessionStore._remove

    def remove(self: Any, entry: Any) -> None:
        entry.announced = True
        original(self, entry)

    SessionStore._remove = remove  # type: ignore[method-assign]


@mutant("store13-flush-stops-at-sync-raise", "STORE-13",
        "stops starting session/flush listeners at the first one that raises synchronously",
        store=("listen", "create", "act"))
def _store13() -> None:
    from sessionspec.reference.store import SessionStore

    patch_source(SessionStore, "flush", "outcomes.append(error)", "raise error")


@mutant("oob4-wraps-open-turn", "OOB-4", "wraps an out-of-band event in a new turn even while a turn is open",
        store=("out_of_band",))
def _oob4() -> None:
    from sessionspec.reference.store import SessionStore

    patch_source(SessionStore, "append_out_of_band",
                 'if last_boundary is not None and last_boundary["type"] == "turn/start":', "if False:")


@mutant("oob8-swallows-flush-failure", "OOB-8", "returns the event when only the closing flush of an out-of-band turn fails",
        store=("out_of_band",))
def _oob8() -> None:
    from sessionspec.reference.store import SessionStore

    original = SessionStore.append_out_of_band

    async def append_out_of_band(self: Any, session: Any, type: str, data: Any, trigger: Any) -> Any:
        real = self.flush

        async def flush(target: Any) -> None:
            try:
                await real(target)
            except Exception:  # noqa: BLE001, S110 - the mutation: a failed flush is forgotten
                pass

        self.flush = flush
        try:
            return await original(self, session, type, data, trigger)
        finally:
            del self.flush

    SessionStore.append_out_of_band = append_out_of_band  # type: ignore[method-assign]


@mutant("fork5-boundary-true-is-one", "FORK-5", "accepts the boolean true as fork boundary 1",
        fork=("fork_invalid:not-safe-int",))
def _fork5() -> None:
    from sessionspec.reference.store import SessionStore

    original = SessionStore._fork_seed

    def fork_seed(self: Any, session: Any, requested: Any) -> Any:
        return original(self, session, int(requested) if type(requested) is bool else requested)

    SessionStore._fork_seed = fork_seed  # type: ignore[method-assign]


@mutant("fork8-forks-at-step-end", "FORK-8", "forks at a step/end boundary as if it closed a turn",
        fork=("fork_invalid:not-turn-end",))
def _fork8() -> None:
    from sessionspec.reference.store import SessionStore
    from sessionspec.spec.errors import SessionForkError

    original = SessionStore._fork_seed

    def fork_seed(self: Any, session: Any, requested: Any) -> Any:
        try:
            return original(self, session, requested)
        except SessionForkError as error:
            log = session._log
            boundary = log[-1]["seq"] if requested is None else requested
            if error.code == "OPEN_TURN" and log[boundary]["type"] == "step/end":
                return log[: boundary + 1]
            raise

    SessionStore._fork_seed = fork_seed  # type: ignore[method-assign]


@mutant("fork9-seed-length-off-by-one", "FORK-9", "records seedLength one short in the child's header",
        fork=("fork_valid",))
def _fork9() -> None:
    from sessionspec.reference.store import SessionStore

    patch_source(SessionStore, "fork", 'meta["seedLength"] = len(seed)', 'meta["seedLength"] = max(len(seed) - 1, 0)')


@mutant("find2-ignores-trigger-kind", "FIND-2", "answers with the last turn end of any trigger kind, not only message turns",
        storage=("find",))
def _find2() -> None:
    _ref()
    from sessionspec.reference import find

    original = find.find_last_message_turn_end

    def find_last_message_turn_end(events: Iterable[Mapping[str, Any]]) -> Any:
        started: set[Any] = set()
        latest = None
        for event in events:
            data = event.get("data")
            turn = find._turn_key(data.get("turn") if isinstance(data, dict) else None)
            if event.get("type") == "turn/start":
                started.add(turn)
            elif event.get("type") == "turn/end" and turn in started:
                started.discard(turn)
                latest = event
        return latest

    replace_everywhere(original, find_last_message_turn_end)


@mutant("chunk3-run-ignores-name-presence", "CHUNK-3",
        "continues a tool-call run across a delta that adds or drops the tool name",
        storage=("pack", "stream"))
def _chunk3() -> None:
    from sessionspec.reference import chunk_rows

    patch_source(chunk_rows, "_continues", "if (key in ca) != (key in cb) or ca.get(key) != cb.get(key):",
                 "if ca.get(key, cb.get(key)) != cb.get(key, ca.get(key)):")


@mutant("chunk4-packs-runs-of-two", "CHUNK-4", "packs runs of two deltas into a row (the minimum run is three)",
        storage=("pack", "stream"))
def _chunk4() -> None:
    from sessionspec.reference import chunk_rows

    chunk_rows.MIN_RUN = chunk_rows.MIN_RUN - 1


@mutant("chunk6-dt-off-by-one", "CHUNK-6", "writes every time gap of a row one millisecond too large",
        storage=("pack", "stream"))
def _chunk6() -> None:
    from sessionspec.reference import chunk_rows

    original = chunk_rows._build_row

    def build_row(row: Any, run: Any) -> dict[str, Any]:
        out = original(row, run)
        out["data"]["dt"] = [gap + 1 for gap in out["data"]["dt"]]
        return out

    chunk_rows._build_row = build_row


@mutant("chunk9-decodes-stray-key", "CHUNK-9", "decodes a chunk row that carries a key outside its layout",
        storage=("pack", "stream"))
def _chunk9() -> None:
    from sessionspec.reference import chunk_rows

    original = chunk_rows._validate_row

    def validate_row(value: Mapping[str, Any], row: Any) -> Any:
        value = {k: v for k, v in value.items() if k in chunk_rows.ROW_ENVELOPE_KEYS}
        if isinstance(value.get("data"), dict):
            value["data"] = {k: v for k, v in value["data"].items() if k in row.data_keys}
        return original(value, row)

    chunk_rows._validate_row = validate_row


@mutant("repair6-step-end-first", "REPAIR-6", "closes the open step before answering the pending calls",
        storage=("repair", "grow"))
def _repair6() -> None:
    _ref()
    from sessionspec.reference import repair

    original = repair.interrupted_turn_closers

    def interrupted_turn_closers(events: Any) -> list[dict[str, Any]]:
        closers = original(events)
        if not closers:
            return closers
        ordered = [c for c in closers if c["type"] == "step/end"] + [c for c in closers if c["type"] != "step/end"]
        first = closers[0]["seq"]
        return [{**c, "seq": first + i} for i, c in enumerate(ordered)]

    replace_everywhere(original, interrupted_turn_closers)


@mutant("repair9-swapped-texts", "REPAIR-9", "uses the not-started text for a started call and vice versa",
        storage=("repair", "grow"))
def _repair9() -> None:
    from sessionspec.reference import repair

    texts = repair._REPAIR
    repair._REPAIR = {
        **texts,
        "notStarted": {**texts["notStarted"], "text": texts["outcomeUnknown"]["text"]},
        "outcomeUnknown": {**texts["outcomeUnknown"], "text": texts["notStarted"]["text"]},
    }


@mutant("jsonl1-omits-delegation-depth", "JSONL-1", "leaves delegationDepth out of the header line when the header has none",
        storage=("jsonl",))
def _jsonl1() -> None:
    _ref()
    from sessionspec.reference import jsonl

    original = jsonl.header_line

    def header_line(header: Mapping[str, Any]) -> dict[str, Any]:
        line = original(header)
        if "delegationDepth" not in header:
            del line["delegationDepth"]
        return line

    replace_everywhere(original, header_line)


@mutant("jsonl7-skips-holes", "JSONL-7", "skips an unparsable line, even inside the committed region, and reads on",
        storage=("jsonl_damaged:hole-in-committed", "close"))
def _jsonl7() -> None:
    from sessionspec.reference import jsonl

    original = jsonl._decode_line
    jsonl._decode_line = lambda raw: [] if (found := original(raw)) is jsonl._HOLE else found


@mutant("jsonl10-keeps-tilde", "JSONL-10", "keeps '~' unescaped in a path segment (the encoding is no longer injective)",
        storage=("paths",))
def _jsonl10() -> None:
    from sessionspec.reference import jsonl

    jsonl._SAFE = jsonl._SAFE | {ord("~")}


@mutant("jsonl12-loads-mode-set", "JSONL-12", "loads an artifact holding a legacy mode/set event",
        storage=("jsonl_damaged:legacy",))
def _jsonl12() -> None:
    from sessionspec.reference import jsonl

    jsonl._LEGACY_TYPES = [t for t in jsonl._LEGACY_TYPES if t != "mode/set"]


@mutant("persist3-accepts-restated-seqs", "PERSIST-3", "lets an append batch start anywhere instead of at the stored length")
def _persist3() -> None:
    from sessionspec.reference import sqlite_store

    patch_source(sqlite_store, "check_appendable", "if event.get(\"seq\") != expected or", "if offset and event.get(\"seq\") != expected or")
    from sessionspec.reference import persistence

    persistence.check_appendable = sqlite_store.check_appendable


@mutant("persist5-skips-data-check", "PERSIST-5", "appends event data without checking it is lossless JSON")
def _persist5() -> None:
    from sessionspec.reference import persistence, sqlite_store

    patch_source(sqlite_store, "check_appendable", "if not is_json_value(event.get(\"data\")):", "if False:")
    persistence.check_appendable = sqlite_store.check_appendable


@mutant("zstd3-tolerates-bad-checksums", "ZSTD-3", "treats a complete frame that fails its checksum like a torn one")
def _zstd3() -> None:
    from sessionspec.reference import jsonl_zstd

    patch_source(jsonl_zstd, "decode_frames", "text = decompress(view[start:end], left)",
                 "text = decompress(view[start:end], left, tolerate_errors=True)")


@mutant("zstd7-drops-torn-frame-records", "ZSTD-7", "drops the complete records of a torn final frame")
def _zstd7() -> None:
    from sessionspec.reference import jsonl_zstd

    patch_source(jsonl_zstd, "read_compressed_artifact", "if decoded.torn_plaintext:", "if False:")


@mutant("sqlite1-accepts-foreign-databases", "SQLITE-1", "opens a database whatever its application id")
def _sqlite1() -> None:
    from sessionspec.reference import sqlite_store

    patch_source(sqlite_store.SqliteStore, "_check_identity", "if app != APPLICATION_ID:", "if False:")


@mutant("sqlite5-tolerates-committed-holes", "SQLITE-5", "ends the preserved prefix at a committed hole instead of rejecting")
def _sqlite5() -> None:
    from sessionspec.reference import sqlite_store

    patch_source(sqlite_store.SqliteStore, "read_session", "if i <= last_end:", "if False:")


@mutant("inv2-turn-number-unchecked", "INV-2", "lets a turn/start carry any turn number",
        session=("invariants",))
def _inv2() -> None:
    from sessionspec.reference import invariants

    patch_source(invariants, "_transition", "if not _same(turn, next_turn):", "if False:")


# -- serving --------------------------------------------------------------------------------


def command(name: str) -> str:
    """The adapter command line of a mutant (for ``--impl``)."""
    return f"{sys.executable} -m sessionspec.conformance.mutants {name}"


def serve_mutant(name: str) -> int:
    """Apply one mutation, then serve the protocol on stdin/stdout (log noise to stderr only)."""
    import logging

    from . import adapter

    logging.basicConfig(level=logging.ERROR, stream=sys.stderr)
    from .reference_adapter import serve

    _ref()
    MUTANTS[name].apply()

    def start(args: Mapping[str, Any]) -> Any:
        info = adapter.op_start(args)
        info["implementation"] = {**info["implementation"], "name": f"sessionspec-mutant-{name}"}
        return info

    handlers = {**adapter.HANDLERS, "start": start}
    return serve(sys.stdin.buffer, sys.stdout.buffer, adapter.ReferenceAdapter(handlers))


# -- checking -------------------------------------------------------------------------------


@dataclass
class Catch:
    """What the suite saw of one mutant: each catching vector or rule with its requirement ids."""

    mutant: Mutant
    catchers: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)
    traces: list[str] = field(default_factory=list)
    duration: float = 0.0

    @property
    def caught(self) -> bool:
        return bool(self.catchers)

    @property
    def requirements(self) -> list[str]:
        return sorted({r for _, reqs in self.catchers for r in reqs})

    @property
    def in_family(self) -> list[str]:
        """Catching requirement ids of the family the mutant targets."""
        return [r for r in self.requirements if r.split("-")[0] == self.mutant.family]

    @property
    def exact(self) -> bool:
        """Whether a catcher checks the very rule the mutant breaks."""
        return self.mutant.rule in self.requirements

    def row(self) -> str:
        by = ", ".join(sorted({c for c, _ in self.catchers})) or "NOT CAUGHT"
        family = ", ".join(self.in_family) or "-"
        return f"{self.mutant.name:<42} {self.mutant.rule:<9} {'yes' if self.exact else 'no':<5} {family:<40} {by}"


@functools.cache
def _corpus() -> tuple[Any, ...]:
    from . import cases as cases_mod

    return tuple(cases_mod.load_corpus())


def check(name: str, *, examples: int = 30, steps: int = 12, vectors: bool = True, machines: bool = True,
          trace_dir: Path | None = None, timeout: float = 30.0) -> Catch:
    """Run the suite against one mutant through the subprocess protocol (one adapter process):
    the vectors of its requirement family, then its focused machine run."""
    from . import cases as cases_mod
    from . import machines as machines_mod
    from .harness import connector_for
    from .runner import run_case, start_implementation

    mutant_ = MUTANTS[name]
    catch = Catch(mutant_)
    started = time.perf_counter()
    impl = start_implementation(connector_for(command(name)), timeout)
    try:
        if vectors:
            try:
                selected = cases_mod.select(list(_corpus()), [mutant_.family])
            except ValueError:  # no vector of this family yet
                selected = []
            for case in selected:
                result = run_case(impl, case)
                if result.outcome in ("failed", "crashed", "errored"):
                    catch.catchers.append((f"vector {case.id}", tuple(case.requirements)))
        if machines and mutant_.probe:
            with tempfile.TemporaryDirectory(prefix="sessionspec-mutant-") as tmp:
                failures = machines_mod.run(
                    connect=lambda: impl, examples=examples, steps=steps, trace_dir=trace_dir or Path(tmp),
                    out=io.StringIO(), machines=dict(mutant_.probe), shrink=False, derandomize=True,
                    stop_at_first=True,
                )
            for failure in failures:
                catch.catchers.append((f"machine {failure['rule']}", tuple(failure["requirements"])))
                if trace_dir is not None:
                    catch.traces.append(failure["trace"])
    finally:
        impl.close()
    catch.duration = time.perf_counter() - started
    return catch


def machine_catches(catch: Catch) -> list[str]:
    """The machine rule labels that caught the mutant on the very requirement it breaks."""
    return sorted({who.removeprefix("machine ") for who, reqs in catch.catchers
                   if who.startswith("machine ") and catch.mutant.rule in reqs})


def _table(names: Sequence[str], out: TextIO, evidence: dict[str, list[str]] | None = None, **options: Any) -> int:
    out.write(f"{'mutant':<42} {'breaks':<9} {'exact':<5} {'catching requirements of its family':<40} catchers\n")
    missed = 0
    for name in names:
        catch = check(name, **options)
        if evidence is not None and machine_catches(catch):
            evidence[catch.mutant.rule] = machine_catches(catch)
        missed += not (catch.caught and catch.in_family)
        out.write(catch.row() + f"  ({catch.duration:.1f} s)\n")
        out.flush()
    out.write(f"{len(names) - missed} of {len(names)} mutants caught by their own family\n")
    return 1 if missed else 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sessionspec.conformance.mutants", description=__doc__.split("\n\n")[0])
    parser.add_argument("name", nargs="?", help="serve this mutant on stdin/stdout")
    parser.add_argument("--list", action="store_true", help="list the mutants")
    parser.add_argument("--check", nargs="*", metavar="NAME", help="run the suite on these mutants (default: all)")
    parser.add_argument("--evidence", metavar="FILE",
                        help="with --check: write the machine rules that caught each mutant (conformance/evidence.json)")
    args = parser.parse_args(argv)
    if args.list:
        for m in MUTANTS.values():
            sys.stdout.write(f"{m.name:<42} {m.rule:<9} {m.description}\n")
        return 0
    if args.check is not None:
        unknown = [n for n in args.check if n not in MUTANTS]
        if unknown:
            parser.error(f"unknown mutant(s): {', '.join(unknown)}")
        evidence: dict[str, list[str]] | None = {} if args.evidence else None
        status = _table(args.check or list(MUTANTS), sys.stdout, evidence)
        if args.evidence and evidence is not None:
            from .report import atomic_write_text

            document = {"$comment": "Requirement -> the state-machine rule labels shown to catch a mutant of it "
                                    "(python -m sessionspec.conformance.mutants --check --evidence FILE). Only these "
                                    "count as machine coverage (sessionspec requirements); tests/conformance/"
                                    "test_mutants.py re-proves every entry.",
                        "machineCatches": dict(sorted(evidence.items()))}
            atomic_write_text(args.evidence, json.dumps(document, indent=2) + "\n")
        return status
    if args.name is None:
        parser.error("give a mutant NAME to serve, --list or --check")
    if args.name not in MUTANTS:
        parser.error(f"unknown mutant {args.name!r}; see --list")
    return serve_mutant(args.name)


if __name__ == "__main__":
    sys.exit(main())
