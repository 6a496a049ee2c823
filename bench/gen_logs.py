"""Deterministic, realistic session logs for the benchmarks (one generator shared by all of them).

Why one module: the validate benchmark, the reference benchmarks (seed-load,
append, derive, fold) and the Node comparison must measure the *same kind* of
log, so their numbers can be put side by side. The mix follows issue 3:

* about 70% of the events are assistant chunk deltas (reasoning, text and
  tool-call argument fragments), streamed in runs that the writer packs into
  chunk rows;
* step and turn boundaries, block-start/block-end, usage and finish chunks;
* assistant messages with provenance, usage, ``sourceEventSeqs`` and tool-call
  blocks (1-4 parallel calls on every step but a turn's last), each followed by ``tool/call`` and a
  ``tool/result`` of 200-2,000 characters;
* user messages, ``request/header`` snapshots (initial, then on change and
  resume), and a compaction every few turns (``compact/*`` plus a
  ``user/message`` surface replace of the older surface nodes).

The log is valid at every level of ``sessionspec validate`` (load, schema,
strict) and balanced: generation stops at the first ``turn/end`` at or after
the requested count, so the result has a few events more than asked.

API::

    events = generate_events(200_000, seed=7)          # list of plain event dicts
    info = write_artifact(path, events, packed=True)  # JSONL artifact (header line + records), atomically
    data = artifact_bytes(events, packed=False)        # the same bytes, in memory
    mix_stats(events)                                  # counts per type, delta share

CLI::

    python bench/gen_logs.py --events 200000 --out /tmp/logs   # writes packed and unpacked artifacts
"""

from __future__ import annotations

import argparse
import os
import random
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["DELTA_CHUNKS", "MIXES", "Artifact", "Mix", "artifact_bytes", "generate_events", "iter_events", "mix_stats", "write_artifact"]

#: Chunk types that count as "chunk deltas" (the packable stream fragments).
DELTA_CHUNKS = frozenset({"text-delta", "reasoning-delta", "tool-call-delta"})

_WORDS = ["the", "session", "log", "keeps", "every", "event", "in", "order", "and", "the", "surface", "is", "derived", "from", "it", "so", "that", "replay", "is", "exact", "a", "tool", "call", "returns", "a", "result", "which", "the", "model", "reads", "before", "it", "writes", "the", "next", "step", "of", "its", "answer", "compaction", "replaces", "a", "range", "of", "older", "messages", "by", "one", "summary", "message", "and", "keeps", "the", "log", "append", "only", "def", "main", "return", "import", "class", "self", "value", "error", "file", "path", "line", "test", "build", "run", "check", "read", "write", "open", "close", "json", "schema", "validate", "parse", "token", "stream", "chunk", "delta", "block", "index", "provider", "model", "usage", "finish", "reason", "über", "naïve", "café", "日本語", "✓", "→", "λ"]


@dataclass(frozen=True)
class Mix:
    """Shape parameters of a generated log (defaults: ~70% chunk deltas, ~250 bytes per event packed)."""

    steps_per_turn: tuple[int, int] = (1, 5)
    reasoning_deltas: tuple[int, int] = (6, 30)
    text_deltas: tuple[int, int] = (3, 18)
    delta_chars: tuple[int, int] = (8, 140)
    calls_per_tool_step: tuple[int, int] = (1, 4)
    arg_deltas: tuple[int, int] = (2, 8)
    tool_result_chars: tuple[int, int] = (200, 2000)
    user_chars: tuple[int, int] = (40, 4000)
    system_prompt_chars: int = 6000
    compaction_every: int = 8  # turns
    header_change_every: int = 15  # turns: a "change" request/header
    resume_every: int = 25  # turns: a "resume" request/header
    summary_chars: tuple[int, int] = (1500, 4000)


#: The generators of the benchmarks: the same machinery with different shapes, because how an
#: implementation compares depends on the mix (issue 13: append was 0.75x the package on `mix` and
#: 1.4x on a tool-heavy log). `mix` is the issue-3 mix (about 70% chunk deltas); `tools` is an
#: agentic coding session (many steps, 2-6 parallel tool calls with long argument streams, results of
#: up to 8 KB, little reasoning); `chat` is a conversation (one step per turn, no tools, long user
#: messages and short streamed answers, a compaction every 4 turns).
MIXES: dict[str, Mix] = {
    "mix": Mix(),
    "tools": Mix(steps_per_turn=(3, 10), reasoning_deltas=(0, 4), text_deltas=(1, 5), delta_chars=(4, 60),
                 calls_per_tool_step=(2, 6), arg_deltas=(4, 20), tool_result_chars=(500, 8000),
                 user_chars=(40, 600), compaction_every=6),
    "chat": Mix(steps_per_turn=(1, 1), reasoning_deltas=(0, 3), text_deltas=(2, 10), delta_chars=(20, 200),
                user_chars=(200, 6000), compaction_every=4, summary_chars=(800, 2000)),
}


def _text(rng: random.Random, n_chars: int) -> str:
    out: list[str] = []
    size = 0
    choice = rng.choice
    while size < n_chars:
        word = choice(_WORDS)
        out.append(word)
        size += len(word) + 1
    return " ".join(out)[:n_chars]


def _tools(rng: random.Random) -> list[dict[str, Any]]:
    names = ["bash", "read_file", "write_file", "edit_file", "search", "list_dir"]
    return [
        {
            "name": name,
            "description": _text(rng, 300),
            "parameters": {
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": _text(rng, 80)},
                    "command": {"type": "string", "description": _text(rng, 80)},
                    "timeout": {"type": "integer", "minimum": 0},
                },
                "required": ["path"] if name != "bash" else ["command"],
            },
        }
        for name in names
    ]


def iter_events(n_events: int, seed: int = 7, mix: Mix | None = None) -> Iterator[dict[str, Any]]:
    """Yield the events of `generate_events` one by one (same output, less memory)."""
    mix = mix or Mix()
    rng = random.Random(seed)
    randint = rng.randint
    seq = 0
    time_ms = 1_780_000_000_000
    turn = 0
    surface: list[int] = []  # current surface node seqs, for compaction
    provider, models = "deepseek", ("deepseek-v4-flash", "deepseek-v4-pro")
    system = _text(rng, mix.system_prompt_chars)
    tools = _tools(rng)

    def ev(etype: str, data: Any, **extra: Any) -> dict[str, Any]:
        nonlocal seq, time_ms
        time_ms += randint(0, 40)
        event = {"type": etype, "seq": seq, "time": time_ms, "data": data, **extra}
        seq += 1
        return event

    def chunk(step: int, body: dict[str, Any], seqs: list[int]) -> dict[str, Any]:
        record = ev("assistant/chunk", {"turn": turn, "step": step, "chunk": body})
        seqs.append(record["seq"])
        return record

    model = models[0]
    while seq < n_events:
        turn += 1
        yield ev("turn/start", {"turn": turn, "trigger": {"kind": "message", "source": {"kind": "user"}}})
        user = ev("user/message", {"content": [{"type": "text", "text": _text(rng, randint(*mix.user_chars))}],
                                   "source": {"kind": "user"}}, surfaceOp="append")
        surface.append(user["seq"])
        yield user
        reason = None
        if turn == 1:
            reason = "initial"
        elif turn % mix.resume_every == 0:
            reason = "resume"
        elif turn % mix.header_change_every == 0:
            reason = "change"
            model = models[(turn // mix.header_change_every) % 2]
        steps = randint(*mix.steps_per_turn)
        for step in range(1, steps + 1):
            yield ev("step/start", {"turn": turn, "step": step})
            if step == 1 and reason is not None:
                yield ev("request/header", {
                    "header": {"config": {"provider": provider, "model": model, "maxTokens": 8192},
                               "system": system, "tools": tools},
                    "reason": reason})
            seqs: list[int] = []
            content: list[dict[str, Any]] = []
            index = 0
            for kind, counts in (("reasoning", mix.reasoning_deltas), ("text", mix.text_deltas)):
                yield chunk(step, {"type": "block-start", "index": index, "blockType": kind}, seqs)
                pieces = [_text(rng, randint(*mix.delta_chars)) for _ in range(randint(*counts))]
                delta_type = f"{kind}-delta"
                for piece in pieces:
                    yield chunk(step, {"type": delta_type, "index": index, "text": piece}, seqs)
                block = {"type": kind, "text": "".join(pieces)}
                content.append(block)
                yield chunk(step, {"type": "block-end", "index": index, "block": block}, seqs)
                index += 1
            calls: list[dict[str, Any]] = []
            if step < steps:
                for _ in range(randint(*mix.calls_per_tool_step)):
                    call_id = f"call_{turn}_{step}_{rng.randrange(10**8):08d}"
                    name = rng.choice(("bash", "read_file", "search", "edit_file"))
                    pieces = ['{"path": "', *(_text(rng, randint(2, 12)) for _ in range(randint(*mix.arg_deltas))), '"}']
                    yield chunk(step, {"type": "block-start", "index": index, "blockType": "tool-call"}, seqs)
                    for p, piece in enumerate(pieces):
                        body = {"type": "tool-call-delta", "index": index, "id": call_id}
                        if p == 0:
                            body["name"] = name  # providers name the tool on the first fragment only
                        body["argumentsDelta"] = piece
                        yield chunk(step, body, seqs)
                    block = {"type": "tool-call", "id": call_id, "name": name, "arguments": "".join(pieces)}
                    yield chunk(step, {"type": "block-end", "index": index, "block": block}, seqs)
                    content.append(block)
                    calls.append(block)
                    index += 1
            usage = {"inputTokens": randint(1000, 90000), "outputTokens": randint(10, 2000),
                     "cacheReadTokens": randint(0, 80000), "reasoningTokens": randint(0, 900)}
            yield chunk(step, {"type": "usage", "usage": usage}, seqs)
            yield chunk(step, {"type": "finish", "reason": {"kind": "tool-calls" if calls else "stop"}}, seqs)
            message = ev("assistant/message", {"turn": turn, "step": step, "content": content,
                                               "provenance": {"provider": provider, "model": model}, "usage": usage},
                         sourceEventSeqs=seqs, surfaceOp="append")
            surface.append(message["seq"])
            yield message
            call_seqs = []
            for block in calls:
                call = ev("tool/call", {"turn": turn, "step": step, "callId": block["id"], "name": block["name"],
                                        "arguments": block["arguments"]})
                call_seqs.append(call["seq"])
                yield call
            for block, call_seq in zip(calls, call_seqs):
                result = ev("tool/result", {"turn": turn, "step": step, "callId": block["id"],
                                            "content": [{"type": "text", "text": _text(rng, randint(*mix.tool_result_chars))}],
                                            "isError": False}, sourceEventSeqs=[call_seq], surfaceOp="append")
                surface.append(result["seq"])
                yield result
            yield ev("step/end", {"turn": turn, "step": step})
        if mix.compaction_every and turn % mix.compaction_every == 0 and len(surface) > 6:
            # Compaction: one summary user/message replaces the older surface nodes (SURF-5, SURF-9).
            shadowed = surface[: len(surface) - 3]
            yield ev("compact/start", {"turn": turn})
            summary = [{"type": "text", "text": _text(rng, randint(*mix.summary_chars))}]
            yield ev("compact/summary", {"summary": summary, "shadowedRange": {"start": shadowed[0], "end": shadowed[-1]},
                                         "shadowedSeqs": shadowed, "shadowedTokenCount": randint(20000, 90000),
                                         "provider": provider, "model": model})
            replace = ev("user/message", {"content": summary, "source": {"kind": "plugin", "plugin": "compact"}},
                         sourceEventSeqs=list(shadowed),
                         surfaceOp={"op": "replace", "start": shadowed[0], "end": shadowed[-1]})
            surface = [replace["seq"]] + surface[len(shadowed):]
            yield replace
            yield ev("compact/end", {"turn": turn})
        yield ev("turn/end", {"turn": turn, "reason": {"kind": "completed"}})


def generate_events(n_events: int, seed: int = 7, mix: Mix | None = None) -> list[dict[str, Any]]:
    """A balanced, valid log of at least `n_events` events (it ends at the first turn/end at or after that)."""
    return list(iter_events(n_events, seed, mix))


def mix_stats(events: list[dict[str, Any]]) -> dict[str, Any]:
    """Counts per event type and chunk type, and the share of chunk deltas."""
    types = Counter(e["type"] for e in events)
    chunks = Counter(e["data"]["chunk"]["type"] for e in events if e["type"] == "assistant/chunk")
    deltas = sum(n for t, n in chunks.items() if t in DELTA_CHUNKS)
    return {"events": len(events), "types": dict(types), "chunks": dict(chunks),
            "deltaShare": deltas / len(events) if events else 0.0,
            "turns": types.get("turn/start", 0), "replaces": sum(isinstance(e.get("surfaceOp"), dict) for e in events)}


@dataclass(frozen=True)
class Artifact:
    path: Path
    events: int
    lines: int
    bytes: int
    packed: bool


def artifact_bytes(events: list[dict[str, Any]], *, packed: bool = True, session_id: str | None = None) -> bytes:
    """The bytes of a JSONL artifact of `events` as the reference writer lays it out (header line, records)."""
    from sessionspec.reference import json_text, jsonl

    header = {"version": 0, "id": session_id or f"bench-{len(events)}", "createdAt": 1_780_000_000_000,
              "cwd": "/work/bench", "delegationDepth": 0}
    return json_text.dumps_bytes(jsonl.header_line(header)) + b"\n" + jsonl.encode_records(events, pack=packed)


def write_artifact(path: str | os.PathLike[str], events: list[dict[str, Any]], *, packed: bool = True,
                   session_id: str | None = None) -> Artifact:
    """Write `events` as a JSONL artifact with the reference writer (header line, then records), atomically."""
    data = artifact_bytes(events, packed=packed, session_id=session_id)
    from sessionspec.reference.atomic import write_atomic

    target = Path(path)
    write_atomic(target, data)
    return Artifact(target, len(events), data.count(b"\n"), len(data), packed)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=200_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", default=".", help="directory for bench-<n>-packed.jsonl and bench-<n>-unpacked.jsonl")
    parser.add_argument("--layout", choices=("both", "packed", "unpacked"), default="both")
    args = parser.parse_args(argv)
    events = generate_events(args.events, args.seed)
    stats = mix_stats(events)
    print(f"{stats['events']:,} events, {stats['turns']:,} turns, {stats['replaces']} replaces, "
          f"chunk deltas {stats['deltaShare']:.1%}")
    for layout in ("packed", "unpacked"):
        if args.layout in (layout, "both"):
            info = write_artifact(Path(args.out) / f"bench-{args.events}-{layout}.jsonl", events, packed=layout == "packed")
            print(f"{info.path}: {info.bytes / 1e6:.1f} MB, {info.lines:,} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main())
