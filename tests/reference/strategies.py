"""Hypothesis strategies for JSON values, events and whole session logs.

Shared by the reference tests (and reusable by the store/session/JSONL tests):

* :func:`json_values` - lossless JSON values (incl. big ints, unicode, lone surrogates).
* :func:`session_logs` - valid, balanced logs a seed accepts: turns, steps,
  request headers, chunk runs, assistant messages with tool calls, tool
  calls/results, user and steering messages, tool-result prunes and
  compaction replaces (including ranges whose start seq is numerically
  larger than the end seq).
* :func:`crash_logs` - a valid log cut at an arbitrary point (open turn tails).
* :func:`chunk_batches` - assistant/chunk deltas with times over the whole
  safe range, plus near-miss shapes the packer must store verbatim.

:class:`LogBuilder` is the plain (non-Hypothesis) helper behind them; tests use
it directly to write small scenario logs.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

MAX_SAFE = 2**53 - 1
PROVENANCE = {"provider": "mock", "model": "mock-1"}
CONFIG = {"provider": "mock", "model": "mock-1"}


# ---------------------------------------------------------------- JSON values
def json_scalars(big_ints: bool = True) -> st.SearchStrategy[Any]:
    ints = st.integers() if big_ints else st.integers(-MAX_SAFE, MAX_SAFE)
    floats = st.floats(allow_nan=False, allow_infinity=False).filter(lambda f: not (f == 0.0 and str(f)[0] == "-"))
    return st.one_of(
        st.none(),
        st.booleans(),
        ints,
        floats,
        st.text(),
        # lone surrogates (never a high one directly before a low one: see json_text's known limit)
        st.lists(
            st.sampled_from(["\ud800", "\udbff", "\udc00", "\udfff", "a"]), max_size=4
        ).map("".join).filter(lambda s: not any("\ud800" <= a <= "\udbff" and "\udc00" <= b <= "\udfff" for a, b in zip(s, s[1:]))),
    )


def json_values(big_ints: bool = True, max_leaves: int = 30) -> st.SearchStrategy[Any]:
    return st.recursive(
        json_scalars(big_ints),
        lambda children: st.one_of(
            st.lists(children, max_size=5),
            st.dictionaries(st.text(max_size=8), children, max_size=5),
        ),
        max_leaves=max_leaves,
    )


def deep_value(depth: int, leaf: Any = "leaf") -> Any:
    """A value nested ``depth`` levels (alternating list and dict), built iteratively."""
    value = leaf
    for i in range(depth):
        value = [value] if i % 2 else {"k": value}
    return value


# ------------------------------------------------------------------- builder
class LogBuilder:
    """Builds a contiguous event list while tracking the surface (naively)."""

    def __init__(self, time0: int = 1_700_000_000_000) -> None:
        self.events: list[dict[str, Any]] = []
        self.nodes: list[int] = []
        self.time = time0
        self.turn = 0
        self.step = 0

    @property
    def seq(self) -> int:
        return len(self.events)

    def add(
        self,
        type_: str,
        data: Any,
        surface_op: Any = None,
        sources: list[int] | None = None,
        dt: int = 1,
    ) -> dict[str, Any]:
        seq = self.seq
        self.time += dt
        event: dict[str, Any] = {"type": type_, "seq": seq, "time": self.time, "data": data}
        if sources is not None:
            event["sourceEventSeqs"] = sources
        if surface_op is not None:
            event["surfaceOp"] = surface_op
            if surface_op == "append":
                self.nodes.append(seq)
            else:
                a = self.nodes.index(surface_op["start"])
                b = self.nodes.index(surface_op["end"])
                self.nodes[a : b + 1] = [seq]
        self.events.append(event)
        return event

    # convenience writers
    def turn_start(self, kind: str = "message") -> None:
        self.turn += 1
        self.step = 0
        trigger: dict[str, Any] = {"kind": kind}
        if kind == "message":
            trigger["source"] = {"kind": "user"}
        self.add("turn/start", {"turn": self.turn, "trigger": trigger})

    def turn_end(self, kind: str = "completed") -> None:
        self.add("turn/end", {"turn": self.turn, "reason": {"kind": kind}})

    def step_start(self) -> None:
        self.step += 1
        self.add("step/start", {"turn": self.turn, "step": self.step})

    def step_end(self) -> None:
        self.add("step/end", {"turn": self.turn, "step": self.step})

    def user(self, text: str = "hi", surface_op: Any = "append", sources: list[int] | None = None) -> dict[str, Any]:
        return self.add(
            "user/message",
            {"content": [{"type": "text", "text": text}], "source": {"kind": "user"}},
            surface_op,
            sources,
        )

    def header(self, system: str = "sys", tools: list[Any] | None = None) -> None:
        header: dict[str, Any] = {"config": dict(CONFIG), "system": system}
        if tools is not None:
            header["tools"] = tools
        self.add("request/header", {"header": header, "reason": "initial"})

    def chunk(self, kind: str, text: str, index: int = 0, call_id: str = "c", name: str | None = None, dt: int = 1) -> None:
        if kind == "tool-call-delta":
            chunk: dict[str, Any] = {"type": kind, "index": index, "id": call_id}
            if name is not None:
                chunk["name"] = name
            chunk["argumentsDelta"] = text
        else:
            chunk = {"type": kind, "index": index, "text": text}
        self.add("assistant/chunk", {"turn": self.turn, "step": self.step, "chunk": chunk}, dt=dt)

    def assistant(self, text: str = "ok", calls: list[str] = (), sources: list[int] | None = None) -> dict[str, Any]:  # type: ignore[assignment]
        content: list[Any] = [{"type": "text", "text": text}] if text else []
        for call_id in calls:
            content.append({"type": "tool-call", "id": call_id, "name": "read", "arguments": "{}"})
        data = {"turn": self.turn, "step": self.step, "content": content, "provenance": dict(PROVENANCE)}
        return self.add("assistant/message", data, "append", sources)

    def tool_call(self, call_id: str) -> dict[str, Any]:
        return self.add(
            "tool/call", {"turn": self.turn, "step": self.step, "callId": call_id, "name": "read", "arguments": "{}"}
        )

    def tool_result(self, call_id: str, text: str = "result", sources: list[int] | None = None) -> dict[str, Any]:
        data = {
            "turn": self.turn,
            "step": self.step,
            "callId": call_id,
            "content": [{"type": "text", "text": text}],
            "isError": False,
        }
        return self.add("tool/result", data, "append", sources)

    def prune(self, original: dict[str, Any], text: str = "[pruned]") -> dict[str, Any]:
        """A content-only tool/result replacement of ``original`` (SURF-10)."""
        data = dict(original["data"])
        data["content"] = [{"type": "text", "text": text}]
        op = {"op": "replace", "start": original["seq"], "end": original["seq"]}
        return self.add("tool/result", data, op, [original["seq"]])

    def compact(self, a: int, b: int, text: str = "summary") -> dict[str, Any]:
        """Replace surface positions a..b (inclusive) by a summary user/message."""
        start, end = self.nodes[a], self.nodes[b]
        shadowed = self.nodes[a : b + 1]
        op = {"op": "replace", "start": start, "end": end}
        return self.user(text, op, sorted(shadowed))


# ---------------------------------------------------------------- whole logs
_CHUNK_KINDS = ("text-delta", "reasoning-delta", "tool-call-delta")


@st.composite
def session_logs(draw: st.DrawFn, max_turns: int = 4, replaces: bool = True) -> list[dict[str, Any]]:
    """A valid, balanced log (every turn closed) that seeding accepts."""
    b = LogBuilder(time0=draw(st.integers(0, 2**41)))
    call_counter = 0
    results: list[dict[str, Any]] = []
    if draw(st.booleans()):
        b.user("idle injection")
    for _ in range(draw(st.integers(0, max_turns))):
        b.turn_start(draw(st.sampled_from(["message", "message", "injection", "retry"])))
        if draw(st.booleans()):
            b.header(system=draw(st.sampled_from(["", "sys", "other"])))
        if draw(st.booleans()):
            b.user(draw(st.text(max_size=10)))
        for _ in range(draw(st.integers(0, 3))):
            b.step_start()
            chunk_seqs = []
            for _ in range(draw(st.integers(0, 6))):
                kind = draw(st.sampled_from(_CHUNK_KINDS))
                b.chunk(kind, draw(st.text(max_size=4)), index=draw(st.integers(0, 1)), name=draw(st.sampled_from([None, "read"])))
                chunk_seqs.append(b.seq - 1)
            calls = []
            for _ in range(draw(st.integers(0, 2))):
                call_counter += 1
                calls.append(f"call-{call_counter}")
            text = draw(st.sampled_from(["", "answer", "thinking"]))
            sources = chunk_seqs if chunk_seqs and draw(st.booleans()) else None
            b.assistant(text, calls, sources)
            for call_id in calls:
                call = b.tool_call(call_id)
                if draw(st.booleans()):
                    results.append(b.tool_result(call_id, draw(st.text(max_size=10)), [call["seq"]]))
            if draw(st.booleans()):
                b.add("steering/message", {"content": [{"type": "text", "text": "steer"}], "source": {"kind": "user"}, "turn": b.turn}, "append")
            b.step_end()
        if replaces and results and draw(st.booleans()):
            live = [r for r in results if r["seq"] in b.nodes]
            if live:
                b.prune(draw(st.sampled_from(live)))
        if replaces and len(b.nodes) >= 2 and draw(st.booleans()):
            a = draw(st.integers(0, len(b.nodes) - 1))
            c = draw(st.integers(a, len(b.nodes) - 1))
            b.compact(a, c)
        if draw(st.booleans()):
            b.add("todo/write", {"todos": []})
        b.turn_end(draw(st.sampled_from(["completed", "completed", "aborted", "interrupted"])))
    return b.events


@st.composite
def crash_logs(draw: st.DrawFn, max_turns: int = 3) -> list[dict[str, Any]]:
    """A valid log cut after an arbitrary event: it may end inside a turn or step."""
    events = draw(session_logs(max_turns=max_turns))
    cut = draw(st.integers(0, len(events)))
    return events[:cut]


# ------------------------------------------------------------- chunk batches
@st.composite
def chunk_batches(draw: st.DrawFn, max_size: int = 25) -> list[Any]:
    """assistant/chunk runs (and near misses) with times across the full safe range."""
    events: list[Any] = []
    seq = draw(st.integers(0, 50))
    time = draw(st.integers(-MAX_SAFE, MAX_SAFE))
    for _ in range(draw(st.integers(0, max_size))):
        kind = draw(st.sampled_from(["text-delta", "reasoning-delta", "tool-call-delta", "usage", "odd"]))
        gap = draw(
            st.one_of(
                st.integers(-3, 5),
                st.integers(-MAX_SAFE, MAX_SAFE),
                st.sampled_from([MAX_SAFE, -MAX_SAFE, 2 * MAX_SAFE, -2 * MAX_SAFE]),
            )
        )
        time = max(-MAX_SAFE, min(MAX_SAFE, time + gap))
        if draw(st.integers(0, 9)) == 0:
            seq += draw(st.integers(1, 3))  # a seq gap splits runs
        turn = draw(st.sampled_from([1, 1, 1, 2]))
        index = draw(st.sampled_from([0, 0, 0, 1]))
        if kind == "tool-call-delta":
            chunk: dict[str, Any] = {"type": kind, "index": index, "id": draw(st.sampled_from(["a", "a", "b"]))}
            if draw(st.booleans()):
                chunk["name"] = draw(st.sampled_from(["read", "read", "write"]))
            chunk["argumentsDelta"] = draw(st.text(max_size=3))
        elif kind == "usage":
            chunk = {"type": "usage", "usage": {"inputTokens": 1, "outputTokens": 2}}
        elif kind == "odd":
            chunk = draw(
                st.sampled_from(
                    [
                        {"type": "text-delta", "index": 0, "text": 5},
                        {"type": "text-delta", "index": 0.5, "text": "x"},
                        {"type": "text-delta", "index": True, "text": "x"},
                        {"type": "text-delta", "index": 0, "text": "x", "extra": 1},
                        {"type": "tool-call-delta", "index": 0, "id": "a", "name": 3, "argumentsDelta": "x"},
                        {"type": "block-start", "index": 0, "blockType": "text"},
                    ]
                )
            )
        else:
            chunk = {"type": kind, "index": index, "text": draw(st.text(max_size=3))}
        event: dict[str, Any] = {"type": "assistant/chunk", "seq": seq, "time": time, "data": {"turn": turn, "step": 1, "chunk": chunk}}
        shape = draw(st.integers(0, 19))
        if shape == 0:
            event["surfaceOp"] = "append"  # stray envelope key
        elif shape == 1:
            event["time"] = time + 0.5 if abs(time) < 2**50 else 0.5  # fractional time
        elif shape == 2:
            event["data"] = {"turn": 1.0, "step": 1, "chunk": chunk}  # float turn (DEC-13)
        elif shape == 3:
            event["data"] = {"turn": True, "step": 1, "chunk": chunk}  # bool turn (DEC-13)
        events.append(event)
        seq += 1
    return events
