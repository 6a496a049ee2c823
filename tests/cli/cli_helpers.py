"""Helpers for the CLI tests: build small logs, run the CLI in-process, read its JSON report."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from typing import Any

from sessionspec.cli import run

HEADER = {"type": "session", "version": 0, "id": "s1", "createdAt": 1767225600000, "cwd": "/work", "delegationDepth": 0}


def turn_events(turn: int = 1, start_seq: int = 0, close: bool = True) -> list[dict[str, Any]]:
    """A balanced turn: user message, one step with streamed text, tool call and result."""
    s = start_seq
    t = 1767225600000 + s
    ev: list[dict[str, Any]] = [
        {"type": "turn/start", "seq": s, "time": t, "data": {"turn": turn, "trigger": {"kind": "message", "source": {"kind": "user"}}}},
        {"type": "user/message", "seq": s + 1, "time": t, "data": {"content": [{"type": "text", "text": "hi"}], "source": {"kind": "user"}}, "surfaceOp": "append"},
        {"type": "step/start", "seq": s + 2, "time": t, "data": {"turn": turn, "step": 1}},
    ]
    for k in range(4):
        ev.append({"type": "assistant/chunk", "seq": s + 3 + k, "time": t + k,
                   "data": {"turn": turn, "step": 1, "chunk": {"type": "text-delta", "index": 0, "text": f"w{k}"}}})
    ev += [
        {"type": "assistant/message", "seq": s + 7, "time": t, "data": {"turn": turn, "step": 1,
         "content": [{"type": "text", "text": "w0w1w2w3"}, {"type": "tool-call", "id": "c1", "name": "bash", "arguments": "{}"}],
         "provenance": {"provider": "p", "model": "m"}}, "sourceEventSeqs": [s + 3, s + 4, s + 5, s + 6], "surfaceOp": "append"},
        {"type": "tool/call", "seq": s + 8, "time": t, "data": {"turn": turn, "step": 1, "callId": "c1", "name": "bash", "arguments": "{}"}},
        {"type": "tool/result", "seq": s + 9, "time": t, "data": {"turn": turn, "step": 1, "callId": "c1",
         "content": [{"type": "text", "text": "ok"}], "isError": False}, "sourceEventSeqs": [s + 8], "surfaceOp": "append"},
        {"type": "step/end", "seq": s + 10, "time": t, "data": {"turn": turn, "step": 1}},
    ]
    if close:
        ev.append({"type": "turn/end", "seq": s + 11, "time": t, "data": {"turn": turn, "reason": {"kind": "completed"}}})
    return ev


def published_events(session_id: str = "s1", answer: list[dict[str, Any]] | None = None,
                     close: bool = False) -> list[dict[str, Any]]:
    """A published-revision turn written by the reference at ``b150a551b8``: a user message and one step
    whose answer is ``answer`` (default: a tool call, so the turn is open); ``close`` ends the step and turn."""
    from sessionspec.reference.session import Session

    s = Session(session_id, [], revision="b150a551b8")
    s.append("turn/start", {"turn": 1})
    s.append("user/message", {"id": "u1", "role": "user", "source": {"kind": "user"},
                              "content": [{"type": "text", "text": "hi"}]}, {"surfaceOp": "append"})
    s.append("step/start", {"turn": 1, "step": 1})
    s.append("assistant/message", {"turn": 1, "step": 1, "message": {
        "id": "a1", "role": "assistant", "source": {"kind": "model", "provider": "p", "model": "m"},
        "content": answer or [{"type": "tool-call", "id": "c1", "name": "bash", "arguments": "{}"}]}},
        {"surfaceOp": "append"})
    if close:
        s.append("step/end", {"turn": 1, "step": 1})
        s.append("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
    return [dict(e) for e in s.events]


def jsonl(events: list[Any], header: Any = HEADER) -> bytes:
    lines = ([json.dumps(header, separators=(",", ":"))] if header is not None else [])
    lines += [json.dumps(e, separators=(",", ":")) for e in events]
    return ("\n".join(lines) + "\n").encode()


class Result:
    def __init__(self, code: int, out: str, err: str) -> None:
        self.code, self.out, self.err = code, out, err

    @property
    def json(self) -> Any:
        return json.loads(self.out)


def cli(*argv: str) -> Result:
    out, err = io.StringIO(), io.StringIO()
    code = run(list(argv), out, err)
    return Result(code, out.getvalue(), err.getvalue())


#: A child's own peak resident set, in KiB: /proc's ``VmHWM``, the high-water mark of the process's own memory image,
#: which exec starts afresh. ``getrusage``'s ``ru_maxrss`` (and ``wait4``'s) is not own: Linux carries into it the
#: peak of the image exec replaced, so a child started from an xdist worker that has grown to 700 MB measures at least
#: that, and a bound on it (or on the difference of two such runs) can fail, or pass, for the worker's sake.
_PEAK_PROBE = (
    "import io, sys\n"
    "from sessionspec.cli import run\n"
    "out = io.StringIO()\n"
    "code = run(sys.argv[1:], out, io.StringIO())\n"
    "peak = next(int(line.split()[1]) for line in open('/proc/self/status') if line.startswith('VmHWM:'))\n"
    "sys.stdout.write(out.getvalue())\n"
    "sys.stderr.write(f'\\n{code} {peak}\\n')\n"
)


def peak_run(*argv: str, timeout: float = 600) -> tuple[int, int, str]:
    """Run the CLI with ``argv`` in a fresh child: its exit status, its own peak resident set (KiB) and its stdout."""
    done = subprocess.run([sys.executable, "-c", _PEAK_PROBE, *argv], capture_output=True, text=True, timeout=timeout,
                          check=False)
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    code, peak = done.stderr.rstrip("\n").rsplit("\n", 1)[-1].split()
    return int(code), int(peak), done.stdout


def findings(result: Result) -> list[dict[str, Any]]:
    return [f for file in result.json["files"] for f in file["findings"]]


def codes(result: Result) -> list[str]:
    return [f["code"] for f in findings(result)]
