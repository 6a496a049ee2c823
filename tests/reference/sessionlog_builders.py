"""Builders for realistic session logs used by the session/store/jsonl tests."""

from __future__ import annotations

from typing import Any

from sessionspec.reference.session import Session

PROVENANCE = {"provider": "acme", "model": "m-1"}
CONFIG = {"provider": "acme", "model": "m-1"}
USER_SOURCE = {"kind": "user"}
APPEND = {"surfaceOp": "append"}


def text(value: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": value}]


def turn_start(turn: int, kind: str = "message") -> dict[str, Any]:
    trigger: dict[str, Any] = {"kind": kind}
    if kind in ("message", "injection"):
        trigger["source"] = dict(USER_SOURCE)
    return {"turn": turn, "trigger": trigger}


def completed(turn: int) -> dict[str, Any]:
    return {"turn": turn, "reason": {"kind": "completed"}}


def append_turn(session: Session, turn: int, *, prompt: str = "hello", tool: bool = True, chunks: int = 3) -> None:
    """Append one balanced turn: prompt, one step with chunks, message, optional tool round."""
    session.append("turn/start", turn_start(turn))
    session.append("user/message", {"content": text(prompt), "source": USER_SOURCE}, APPEND)
    session.append("step/start", {"turn": turn, "step": 1})
    session.append("request/header", {"header": {"config": CONFIG, "system": "sys"}, "reason": "initial"})
    chunk_seqs = []
    for i in range(chunks):
        event = session.append(
            "assistant/chunk", {"turn": turn, "step": 1, "chunk": {"type": "text-delta", "index": 0, "text": f"t{i}"}}
        )
        chunk_seqs.append(event["seq"])
    content: list[dict[str, Any]] = text("answer")
    call_id = f"call-{turn}"
    if tool:
        content = content + [{"type": "tool-call", "id": call_id, "name": "read", "arguments": "{}"}]
    session.append(
        "assistant/message",
        {"turn": turn, "step": 1, "content": content, "provenance": PROVENANCE},
        {"surfaceOp": "append", "sourceEventSeqs": chunk_seqs},
    )
    if tool:
        call = session.append("tool/call", {"turn": turn, "step": 1, "callId": call_id, "name": "read", "arguments": "{}"})
        session.append(
            "tool/result",
            {"turn": turn, "step": 1, "callId": call_id, "content": text("file body"), "isError": False},
            {"surfaceOp": "append", "sourceEventSeqs": [call["seq"]]},
        )
    session.append("step/end", {"turn": turn, "step": 1})
    session.append("turn/end", completed(turn))


def balanced_session(turns: int = 2, session_id: str = "s", **kwargs: Any) -> Session:
    session = Session(session_id)
    for turn in range(1, turns + 1):
        append_turn(session, turn, **kwargs)
    return session


def plain(events: Any) -> list[dict[str, Any]]:
    """Plain (mutable) deep copies of events, e.g. to edit into a bad seed."""
    from sessionspec.reference.json_value import thaw_json_value

    return [thaw_json_value(e) for e in events]
