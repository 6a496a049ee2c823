"""Deliberately broken references ("mutants"): the suite must catch every one.

A conformance suite is only as good as the broken implementations it
catches. Each mutant here breaks exactly ONE rule of the reference, named by
its requirement id, and runs as an ordinary adapter process::

    python -m sessionspec.conformance.mutants NAME        # serve the protocol, mutated
    python -m sessionspec.conformance.mutants --list      # the catalogue
    python -m sessionspec.conformance.mutants --check     # run the suite on every mutant, print who caught it

A mutant replaces ONE entry of the reference's rule table
(``sessionspec.reference.rule_table``, the function or datum that decides its
rule), as python-jsonschema's ``validators.extend`` swaps one keyword: it is
built from the reference's own entry, through public names only, never from
source text. The swap happens in the adapter process before it serves, so the
in-process reference that judges it stays intact.

:func:`check` runs the suite against a mutant through the subprocess
protocol: the vectors of the mutant's requirement family, then a short,
derandomised run of the state machines focused on the rules that matter for
it (``Mutant.probe``). It reports every catching vector or machine rule with
the requirement ids it checks.
"""

from __future__ import annotations

import argparse
import functools
import io
import json
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from sessionspec.reference import rule_table

__all__ = ["MUTANTS", "Catch", "Mutant", "check", "command", "main"]


Entry = Any
"""A rule table entry: a function or a datum (``sessionspec.reference.rule_table``)."""


@dataclass(frozen=True)
class Mutant:
    """One broken variant: the rule it violates, the one table entry it swaps, and where the suite should look."""

    name: str
    rule: str
    description: str
    entry: str
    """The rule table entry this mutant replaces (``rule_table.HOMES``)."""
    build: Callable[[Entry], Entry]
    """The reference's entry -> the broken one."""
    probe: Mapping[str, Sequence[str]]
    """Machine -> the rules (``"rule"`` or ``"rule:kind,kind"``) a short run focuses on."""
    revision: str | None = None
    """The format revision the mutant serves and is judged at (its vectors are that revision's; default: pinned)."""
    steps: int | None = None
    """The probe's history length when its rule needs a longer one than :func:`check`'s (a crash with calls pending)."""

    @property
    def family(self) -> str:
        return self.rule.split("-")[0]

    def rules(self) -> rule_table.RuleSet:
        """The variant: the reference's rule set with this mutant's one entry derived (``RuleSet.derive``)."""
        return rule_table.default().derive(self.entry, self.build)

    def apply(self) -> None:
        """Make this process's reference the variant (the adapter process only)."""
        rule_table.activate(self.rules())


MUTANTS: dict[str, Mutant] = {}


def mutant(name: str, rule: str, description: str, entry: str, *, revision: str | None = None,
           steps: int | None = None, **probe: Sequence[str]) -> Callable[[Callable[[Entry], Entry]], Callable[[Entry], Entry]]:
    """Register a mutant of one table entry: ``probe`` keywords are machine names mapped to their focus rules;
    ``revision`` is the format revision it serves (a rule the published revision binds is broken there)."""

    def register(build: Callable[[Entry], Entry]) -> Callable[[Entry], Entry]:
        if name in MUTANTS:
            raise ValueError(f"duplicate mutant {name!r}")
        if entry not in rule_table.HOMES:
            raise ValueError(f"mutant {name!r}: {entry!r} is not a rule table entry")
        MUTANTS[name] = Mutant(name, rule, description, entry, build, dict(probe), revision, steps)
        return build

    return register


# -- the catalogue ------------------------------------------------------------------------
# One rule each, one table entry each; `probe` names the state-machine rules that exercise it.


@mutant("json2-accepts-negative-zero", "JSON-2", "treats -0.0 as a lossless JSON value", "float_problem",
        session=("json_value", "append_invalid:data-not-json,metadata-not-json"))
def _json2(float_problem: Callable[[float], str | None]) -> Callable[[float], str | None]:
    return lambda value: None if value == 0.0 else float_problem(value)


@mutant("json10-rejects-proto-key", "JSON-10", "rejects a value holding a \"__proto__\" key", "is_json_value",
        session=("json_value",))
def _json10(is_json_value: Callable[[Any], bool]) -> Callable[[Any], bool]:
    def check(value: Any) -> bool:
        stack = [value]
        while stack:
            item = stack.pop()
            if isinstance(item, dict):
                if "__proto__" in item:
                    return False
                stack.extend(item.values())
            elif isinstance(item, list):
                stack.extend(item)
        return is_json_value(value)

    return check


@mutant("append3-accepts-header-delta", "APPEND-3", "appends a legacy request/header-delta event",
        "append_legacy_type", session=("append_invalid:legacy-type",))
def _append3(legacy_type: str) -> str:
    return "(append check disabled)"  # only the append-time check; seeds still refuse it (SEED-4)


@mutant("append5-surface-without-marker", "APPEND-5", "appends a surface event without surfaceOp as if it said append",
        "surface_op_when_missing", session=("append_invalid:marker-missing,registry-invalid",))
def _append5(when_missing: Callable[[str], Any]) -> Callable[[str], Any]:
    return lambda etype: "append"


@mutant("seed11-seq-before-provenance", "SEED-11",
        "checks a seed entry's seq before its provider/model, aborted-reason and fallback checks",
        "check_seed_entry", session=("seed_invalid:two-faults",))
def _seed11(check_seed_entry: Callable[..., Any]) -> Callable[..., Any]:
    from sessionspec.spec.errors import SeedError

    later = {"SEED_REQUEST_HEADER_CONFIG", "SEED_PROVENANCE", "SEED_ABORTED_REASON", "SEED_LEGACY_FALLBACK"}

    def check(entry: Any, index: int, *rest: Any) -> Any:
        try:
            return check_seed_entry(entry, index, *rest)
        except SeedError as error:
            if error.code in later and entry.get("seq") != index:
                raise SeedError(f"seed event at index {index} is not contiguous", "SEED_NOT_CONTIGUOUS",
                                requirement="SEED-9", index=index) from error
            raise

    return check


@mutant("append4-drops-null-intent", "APPEND-4",
        "treats a supplied null surfaceOp or sourceEventSeqs as omitted (the published revision)",
        "intent_key_supplied", revision="b150a551b8",
        session=("append_invalid:log-only-marker,marker-invalid,sources-invalid",))
def _append4(supplied: Callable[[Any, str], bool]) -> Callable[[Any, str], bool]:
    return lambda intent, key: supplied(intent, key) and intent[key] is not None


@mutant("hdr6-accepts-relative-cwd", "HDR-6", "accepts a header whose cwd is a relative path", "is_absolute_path",
        session=("header:relative-cwd,valid",))
def _hdr6(is_absolute: Callable[[str], bool]) -> Callable[[str], bool]:
    return lambda path: True


@mutant("surf5-compares-seq-values", "SURF-5",
        "refuses a replace whose start seq is larger than its end seq, though start comes first by position",
        "replace_range_reversed", session=("compaction",))
def _surf5(reversed_range: Callable[[int, int, int, int], bool]) -> Callable[[int, int, int, int], bool]:
    return lambda start_slot, end_slot, start, end: reversed_range(start_slot, end_slot, start, end) or start > end


@mutant("surf7-empty-sources", "SURF-7", "accepts an empty sourceEventSeqs on a type other than assistant/message",
        "check_sources", session=("append_invalid:sources-invalid,registry-invalid",))
def _surf7(check_sources: Callable[..., None]) -> Callable[..., None]:
    def check(state: Any, event: Any, etype: str, *rest: Any, **options: Any) -> None:
        if event.get("sourceEventSeqs") == [] and etype != "assistant/message":
            event = {k: v for k, v in event.items() if k != "sourceEventSeqs"}
        check_sources(state, event, etype, *rest, **options)

    return check


@mutant("surf9-provenance-misses-shadowed", "SURF-9",
        "accepts a replace whose sourceEventSeqs cite the start node but miss another shadowed node",
        "check_sources", session=("append", "compaction", "append_invalid:replace-coverage"))
def _surf9(check_sources: Callable[..., None]) -> Callable[..., None]:
    def check(state: Any, event: Any, etype: str, seq: int, shadowed: Any, *rest: Any, **options: Any) -> None:
        cited = shadowed[:1] if "sourceEventSeqs" in event else shadowed
        check_sources(state, event, etype, seq, cited, *rest, **options)

    return check


@mutant("surf10-rewrite-checks-call-id-only", "SURF-10",
        "accepts a tool/result rewrite that changes more than content, as long as the callId matches",
        "rewrite_key_for", session=("append", "append_invalid:tool-result-rewrite"))
def _surf10(rewrite_key_for: Callable[[Any], Callable[[Any], Any]]) -> Callable[[Any], Callable[[Any], Any]]:
    def key_for(shape: Any) -> Callable[[Any], Any]:
        key = rewrite_key_for(shape)
        return lambda data: {"callId": data.get("callId")} if isinstance(data, dict) else key(data)

    return key_for


@mutant("surf13-generation-counts-shadowed", "SURF-13",
        "increases replaceGeneration by the number of shadowed nodes instead of by one",
        "next_replace_generation", session=("compaction",))
def _surf13(next_generation: Callable[[int, Any], int]) -> Callable[[int, Any], int]:
    return lambda generation, plan: next_generation(generation, plan) + len(plan.shadowed) - 1


def _changed_messages(change: Callable[[Mapping[str, Any], Any], Any]) -> Callable[[Any], Any]:
    """A `message_deriver` build: each derived message passes through ``change(event, message)``."""

    def build(message_deriver: Callable[[Any], Callable[[Any], Any]]) -> Callable[[Any], Callable[[Any], Any]]:
        def deriver(shape: Any) -> Callable[[Any], Any]:
            derive = message_deriver(shape)
            return lambda event: change(event, derive(event))

        return deriver

    return build


def _derive4_change(event: Mapping[str, Any], message: Any) -> Any:
    from sessionspec.reference.json_value import FrozenDict, FrozenList

    data = event.get("data")
    if message is None and event.get("type") == "assistant/message" and isinstance(data, dict) \
            and data.get("content") == []:
        return FrozenDict({"role": "assistant", "content": FrozenList(), "provenance": data.get("provenance")})
    return message


def _derive5_change(event: Mapping[str, Any], message: Any) -> Any:
    from sessionspec.reference.json_value import FrozenDict, FrozenList

    if event.get("type") != "tool/result" or message is None:
        return message
    part = message["content"][0]
    if part.get("isError") is False:
        part = FrozenDict({k: v for k, v in part.items() if k != "isError"})
        return FrozenDict({**message, "content": FrozenList([part])})
    return message


mutant("derive4-empty-assistant-message", "DERIVE-4", "derives a message from an assistant/message with empty content",
       "message_deriver", session=("append",))(_changed_messages(_derive4_change))
mutant("derive5-tool-result-drops-false-is-error", "DERIVE-5",
       "leaves isError out of a derived tool result when it is false",
       "message_deriver", session=("append",))(_changed_messages(_derive5_change))


@mutant("req1-keeps-empty-system", "REQ-1", "keeps an empty system prompt in the canonical header",
        "canonical_header", session=("header_views", "request_header"))
def _req1(canonical_header: Callable[..., Any]) -> Callable[..., Any]:
    def canonical(header: Any, *rest: Any) -> Any:
        out = canonical_header(header, *rest)
        if isinstance(header, Mapping) and header.get("system") == "":
            out["system"] = ""
        return out

    return canonical


@mutant("req3-header-skips-first-event", "REQ-3",
        "the live session's header in force ignores a request/header that is the log's first event (the published revision)",
        "header_fold_start", revision="b150a551b8", session=("request_header",))
def _req3(start: int) -> int:
    return start + 1


@mutant("req4-equality-ignores-system", "REQ-4", "calls two request headers equal when only their system prompts differ",
        "header_equals", session=("header_views",))
def _req4(header_equals: Callable[..., bool]) -> Callable[..., bool]:
    def equals(a: Mapping[str, Any], b: Mapping[str, Any], *rest: Any) -> bool:
        return header_equals({k: v for k, v in a.items() if k != "system"},
                             {k: v for k, v in b.items() if k != "system"}, *rest)

    return equals


@mutant("store9-disposes-unannounced", "STORE-9", "emits session/disposed for an entry that was never announced",
        "disposal_announced", store=("listen", "prepare", "detach"))
def _store9(announced: Callable[[Any], bool]) -> Callable[[Any], bool]:
    return lambda entry: True


@mutant("store13-flush-stops-at-sync-raise", "STORE-13",
        "stops starting session/flush listeners at the first one that raises synchronously",
        "sync_flush_failure", store=("listen", "create", "act"))
def _store13(keep_failure: Callable[[list[Any], Exception], None]) -> Callable[[list[Any], Exception], None]:
    def stop(outcomes: list[Any], error: Exception) -> None:
        raise error

    return stop


@mutant("oob4-wraps-open-turn", "OOB-4", "wraps an out-of-band event in a new turn even while a turn is open",
        "turn_is_open", store=("out_of_band",))
def _oob4(turn_is_open: Callable[[Any], bool]) -> Callable[[Any], bool]:
    return lambda last_boundary: False


@mutant("oob8-swallows-flush-failure", "OOB-8", "returns the event when only the closing flush of an out-of-band turn fails",
        "out_of_band_flush", store=("out_of_band",))
def _oob8(flush: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    async def swallowed(store: Any, session: Any) -> None:
        try:
            await flush(store, session)
        except Exception:  # noqa: BLE001, S110 - the mutation: a failed flush is forgotten
            pass

    return swallowed


@mutant("fork5-boundary-true-is-one", "FORK-5", "accepts the boolean true as fork boundary 1", "fork_seed",
        fork=("fork_invalid:not-safe-int",))
def _fork5(fork_seed: Callable[[Any, Any, Any], Any]) -> Callable[[Any, Any, Any], Any]:
    return lambda store, session, requested: fork_seed(
        store, session, int(requested) if type(requested) is bool else requested)


@mutant("fork8-forks-at-step-end", "FORK-8", "forks at a step/end boundary as if it closed a turn", "fork_seed",
        fork=("fork_invalid:not-turn-end",))
def _fork8(fork_seed: Callable[[Any, Any, Any], Any]) -> Callable[[Any, Any, Any], Any]:
    from sessionspec.spec.errors import SessionForkError

    def seed(store: Any, session: Any, requested: Any) -> Any:
        try:
            return fork_seed(store, session, requested)
        except SessionForkError as error:
            log = session.events
            boundary = log[-1]["seq"] if requested is None else requested
            if error.code == "OPEN_TURN" and log[boundary]["type"] == "step/end":
                return list(log[: boundary + 1])
            raise

    return seed


@mutant("fork9-seed-length-off-by-one", "FORK-9", "records seedLength one short in the child's header", "seed_length",
        fork=("fork_valid",))
def _fork9(seed_length: Callable[[Any], int]) -> Callable[[Any], int]:
    return lambda seed: max(seed_length(seed) - 1, 0)


@mutant("find2-ignores-trigger-kind", "FIND-2", "answers with the last turn end of any trigger kind, not only message turns",
        "message_turn_start", storage=("find",))
def _find2(message_turn_start: Callable[[Any], bool]) -> Callable[[Any], bool]:
    return lambda event: isinstance(event.get("data"), dict)


@mutant("chunk3-run-ignores-name", "CHUNK-3",
        "continues a tool-call run across a delta whose tool name differs, or that adds or drops it", "run_fields",
        storage=("pack", "stream"))
def _chunk3(run_fields: Mapping[str, Sequence[str]]) -> Mapping[str, Sequence[str]]:
    return {tag: tuple(f for f in fields if f != "name") for tag, fields in run_fields.items()}


@mutant("chunk4-packs-runs-of-two", "CHUNK-4", "packs runs of two deltas into a row (the minimum run is three)",
        "min_run", storage=("pack", "stream"))
def _chunk4(min_run: int) -> int:
    return min_run - 1


@mutant("chunk6-dt-off-by-one", "CHUNK-6", "writes every time gap of a row one millisecond too large", "build_row",
        storage=("pack", "stream"))
def _chunk6(build_row: Callable[[Any, Any, Any, Any], dict[str, Any]]) -> Callable[[Any, Any, Any, Any], dict[str, Any]]:
    def build(row: Any, first: Any, times: Any, members: Any) -> dict[str, Any]:
        out = build_row(row, first, times, members)
        out["data"]["dt"] = [gap + 1 for gap in out["data"]["dt"]]
        return out

    return build


@mutant("chunk9-decodes-stray-key", "CHUNK-9", "decodes a chunk row that carries a key outside its layout",
        "row_shape", storage=("pack", "stream"))
def _chunk9(row_shape: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    from sessionspec.reference.chunk_rows import ROW_ENVELOPE_KEYS

    def validate(value: Mapping[str, Any], row: Any) -> Any:
        value = {k: v for k, v in value.items() if k in ROW_ENVELOPE_KEYS}
        if isinstance(value.get("data"), dict):
            value["data"] = {k: v for k, v in value["data"].items() if k in row.data_keys}
        return row_shape(value, row)

    return validate


@mutant("chunk9-running-time-unbounded", "CHUNK-9", "decodes a chunk row whose members' running time passes the safe integers",
        "member_bounds", storage=("pack", "stream"))
def _chunk9_times(member_bounds: Callable[[Any, range, int, list[int]], Any]) -> Callable[[Any, range, int, list[int]], Any]:
    def bounds(row: Any, seqs: range, time0: int, dt: list[int]) -> Any:
        return member_bounds(row, seqs, time0, [0] * len(dt))  # the gaps' count still checked, not their sum

    return bounds


@mutant("chunk11-members-numbered-late", "CHUNK-11", "numbers a chunk row's members from one past its seq0",
        "member_seqs", storage=("pack", "stream"))
def _chunk11_numbering(member_seqs: Callable[[int, int], range]) -> Callable[[int, int], range]:
    def seqs(seq0: int, count: int) -> range:
        return member_seqs(seq0 + 1, count)

    return seqs


@mutant("repair6-step-end-first", "REPAIR-6", "closes the open step before answering the pending calls",
        "interrupted_turn_closers", steps=20, storage=("repair", "grow"))
def _repair6(closers_of: Callable[..., list[dict[str, Any]]]) -> Callable[..., list[dict[str, Any]]]:
    def interrupted_turn_closers(events: Any, *rest: Any) -> list[dict[str, Any]]:
        closers = closers_of(events, *rest)
        if not closers:
            return closers
        ordered = [c for c in closers if c["type"] == "step/end"] + [c for c in closers if c["type"] != "step/end"]
        first = closers[0]["seq"]
        return [{**c, "seq": first + i} for i, c in enumerate(ordered)]

    return interrupted_turn_closers


@mutant("repair7-closer-time-late", "REPAIR-7", "stamps every crash-repair closer one millisecond after the last event",
        "interrupted_turn_closers", storage=("repair", "grow"))
def _repair7(closers_of: Callable[..., list[dict[str, Any]]]) -> Callable[..., list[dict[str, Any]]]:
    def interrupted_turn_closers(events: Any, *rest: Any) -> list[dict[str, Any]]:
        return [{**c, "time": c["time"] + 1} for c in closers_of(events, *rest)]

    return interrupted_turn_closers


@mutant("repair9-swapped-texts", "REPAIR-9", "uses the not-started text for a started call and vice versa",
        "repair_texts", steps=20, storage=("repair", "grow"))
def _repair9(texts: Mapping[str, Any]) -> Mapping[str, Any]:
    return {
        **texts,
        "notStarted": {**texts["notStarted"], "text": texts["outcomeUnknown"]["text"]},
        "outcomeUnknown": {**texts["outcomeUnknown"], "text": texts["notStarted"]["text"]},
    }


@mutant("jsonl1-omits-delegation-depth", "JSONL-1", "leaves delegationDepth out of the header line when the header has none",
        "header_line", storage=("jsonl",))
def _jsonl1(header_line: Callable[[Mapping[str, Any]], dict[str, Any]]) -> Callable[[Mapping[str, Any]], dict[str, Any]]:
    def line_of(header: Mapping[str, Any]) -> dict[str, Any]:
        line = header_line(header)
        if "delegationDepth" not in header:
            del line["delegationDepth"]
        return line

    return line_of


@mutant("jsonl7-skips-holes", "JSONL-7", "skips an unparsable line, even inside the committed region, and reads on",
        "decode_line", storage=("jsonl_damaged:hole-in-committed", "close"))
def _jsonl7(decode_line: Callable[[bytes], Any]) -> Callable[[bytes], Any]:
    from sessionspec.reference.jsonl import UNREADABLE_LINE

    return lambda raw: [] if (found := decode_line(raw)) is UNREADABLE_LINE else found


@mutant("jsonl10-keeps-tilde", "JSONL-10", "keeps '~' unescaped in a path segment (the encoding is no longer injective)",
        "path_safe_units", storage=("paths",))
def _jsonl10(safe_units: frozenset[int]) -> frozenset[int]:
    return safe_units | {ord("~")}


@mutant("jsonl12-loads-mode-set", "JSONL-12", "loads an artifact holding a legacy mode/set event",
        "load_rejected_types", storage=("jsonl_damaged:legacy",))
def _jsonl12(rejected: Sequence[str]) -> list[str]:
    return [t for t in rejected if t != "mode/set"]


@mutant("persist3-accepts-restated-seqs", "PERSIST-3", "lets an append batch start anywhere instead of at the stored length",
        "check_appendable")
def _persist3(check_appendable: Callable[[Any, int], None]) -> Callable[[Any, int], None]:
    def check(events: Sequence[Mapping[str, Any]], next_seq: int) -> None:
        first = events[0].get("seq") if events else None
        check_appendable(events, first if type(first) is int else next_seq)

    return check


@mutant("persist5-skips-data-check", "PERSIST-5", "appends event data without checking it is lossless JSON",
        "batch_lossless")
def _persist5(batch_lossless: Callable[[Any], None]) -> Callable[[Any], None]:
    return lambda events: None


@mutant("persist9-stores-retired-shapes", "PERSIST-9",
        "stores an append batch holding a retired shape (mode/set, header-delta, fallback) instead of refusing it",
        "batch_retired")
def _persist9(batch_retired: Callable[[Any], None]) -> Callable[[Any], None]:
    return lambda events: None


@mutant("persist10-create-accepts-negative-created-at", "PERSIST-10",
        "accepts a creation header whose createdAt is negative", "created_at_ok")
def _persist10(created_at_ok: Callable[[Any], bool]) -> Callable[[Any], bool]:
    return lambda value: created_at_ok(value) or (type(value) is int and value < 0)


@mutant("persist11-nothing-stored-is-a-seq-mismatch", "PERSIST-11",
        "reports a step on a session with nothing stored as a batch that does not continue the log", "no_session")
def _persist11(no_session: Callable[[Any, str], Any]) -> Callable[[Any, str], Any]:
    from sessionspec.spec.errors import PersistenceError

    def refuse(session_id: Any, where: str) -> Any:
        no_session(session_id, where)  # the reference's own refusal, then the wrong code in its place
        return PersistenceError(f"append batch does not continue the stored log of {session_id!r}",
                                "PERSIST_SEQ_CONTINUE", requirement="PERSIST-3", path=where)

    return refuse


@mutant("zstd3-tolerates-bad-checksums", "ZSTD-3", "treats a complete frame that fails its checksum like a torn one",
        "frame_decoder")
def _zstd3(decoder: Callable[[Any, int], bytes]) -> Callable[[Any, int], bytes]:
    from sessionspec.reference.zstd_frames import decompress

    return lambda frame, budget: decompress(frame, budget, tolerate_errors=True)


@mutant("zstd7-drops-torn-frame-records", "ZSTD-7", "drops the complete records of a torn final frame",
        "keep_torn_frame_records")
def _zstd7(keep: bool) -> bool:
    return False


@mutant("sqlite1-accepts-foreign-databases", "SQLITE-1", "opens a database whatever its application id",
        "application_id_ok")
def _sqlite1(application_id_ok: Callable[[int], bool]) -> Callable[[int], bool]:
    return lambda app: True


@mutant("sqlite5-tolerates-committed-holes", "SQLITE-5", "ends the preserved prefix at a committed hole instead of rejecting",
        "in_committed_region")
def _sqlite5(in_committed_region: Callable[[int, int], bool]) -> Callable[[int, int], bool]:
    return lambda index, last_turn_end: False


@mutant("inv2-turn-number-unchecked", "INV-2", "lets a turn/start carry any turn number", "turn_number_ok",
        session=("invariants",))
def _inv2(turn_number_ok: Callable[[Any, Any], bool]) -> Callable[[Any, Any], bool]:
    return lambda turn, expected: True


@mutant("inv7-waives-without-is-error", "INV-7",
        "waives the pending-call check for a TOOL_NOT_STARTED code whatever isError says (the published revision)",
        "not_started_waiver", revision="b150a551b8", session=("invariants",))
def _inv7(waiver: Callable[[Any, Any], bool]) -> Callable[[Any, Any], bool]:
    return lambda is_error, code: waiver(True, code)


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

    MUTANTS[name].apply()

    def start(args: Mapping[str, Any]) -> Any:
        info = adapter.op_start(args)
        info["implementation"] = {**info["implementation"], "name": f"sessionspec-mutant-{name}"}
        return info

    handlers = {**adapter.HANDLERS, "start": start}
    return serve(sys.stdin.buffer, sys.stdout.buffer, adapter.ReferenceAdapter(handlers, revision=MUTANTS[name].revision))


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
                # only the vectors of the revision the mutant serves: another revision's case would "catch"
                # the unmutated reference too
                selected = cases_mod.select(cases_mod.for_revision(list(_corpus()), mutant_.revision), [mutant_.family])
            except ValueError:  # no vector of this family yet
                selected = []
            for case in selected:
                result = run_case(impl, case)
                if result.outcome in ("failed", "crashed", "errored"):
                    catch.catchers.append((f"vector {case.id}", tuple(case.requirements)))
        if machines and mutant_.probe:
            with tempfile.TemporaryDirectory(prefix="sessionspec-mutant-") as tmp:
                failures = machines_mod.run(
                    connect=lambda: impl, examples=examples, steps=mutant_.steps or steps, trace_dir=trace_dir or Path(tmp),
                    out=io.StringIO(), machines=dict(mutant_.probe), shrink=False, derandomize=True,
                    stop_at_first=True, content=trace_dir is not None,  # a catch needs no small trace
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
