"""A fake adapter that misbehaves on request (see conformance_fakes.py).

Flags: --no-start (exit before the handshake), --bad-version (claim protocol 99),
--wrong (answer every json-value with the opposite), --no-caps (claim no capability),
--hang-all (hang on every json-value), --skip-all (claim everything, skip every request),
--pids FILE (write "adapter-pid grandchild-pid" after starting a grandchild that holds stdout).
Per request (``{"misbehave": MODE}``): crash, hang, garbage, not-object, wrong-seq,
bad-schema, errored, no-newline (stdout without end), stderr-flood (50 MB of stderr, then
the reply), huge-reply (a 2 MB reply), grandchild (crash leaving a grandchild that keeps
stdout open), big-int (a 5,000-digit integer in the reply), hostile-text (a lone surrogate,
newlines and a forged annotation in the message).
--wrong-find (every find-last-message-turn-end finds nothing), --wrong-paths (every
jsonl-path is "x"): two independent faults of one state machine (storage).
Wiring faults (for `sessionspec smoke`): --banner (prints a log line on stdout before the first
reply), --errored-op OP (claims OP's capability but answers every OP request errored), --exit-on-op OP
(exits when asked OP), --crash-op OP (the implementation throws on every OP request).
--crash-null-seed (the implementation crashes with a TypeError on a `null` seed entry, as
upstream 0.1.1-rc.2 did, instead of rejecting it with SEED_ENVELOPE).
--crash-rewrite-shape (a tool/result rewrite whose `message` is not an object holding a content list
crashes with a TypeError instead of SURFACE_TOOL_RESULT_REWRITE, as upstream 0.1.1-rc.2 does).
--seconds-clock (every clock reading of a live result is in seconds, not milliseconds: an
implementation stamping `Date.now() / 1000`).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

from sessionspec.conformance import protocol, wire
from sessionspec.conformance.adapter import ReferenceAdapter


def _grandchild() -> int:
    """A process that inherits stdout and outlives the adapter."""
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"]).pid


def _bad_shape(args: dict, reply: dict) -> bool:
    """Whether the refused append step's message is not an object holding a content list."""
    appends, index = args.get("appends") or [], reply.get("index")
    step = appends[index] if isinstance(index, int) and 0 <= index < len(appends) else None
    message = (step.get("data") or {}).get("message") if isinstance(step, dict) and isinstance(step.get("data"), dict) else None
    return not (isinstance(message, dict) and isinstance(message.get("content"), list))


def _in_seconds(result: dict) -> dict:
    """A live trace whose stored event times and header createdAt are in seconds (not deep: payloads may be)."""
    def sec(v: object) -> object:
        return v // 1000 if type(v) is int else v

    trace = []
    for entry in result.get("trace") or []:
        ok = entry.get("ok") if isinstance(entry, dict) else None
        if isinstance(ok, dict) and isinstance(ok.get("sessions"), dict):
            sessions = {}
            for key, stored in ok["sessions"].items():
                if isinstance(stored, dict):
                    header = stored.get("header")
                    if isinstance(header, dict) and "createdAt" in header:
                        header = {**header, "createdAt": sec(header["createdAt"])}
                    events = [{**e, "time": sec(e.get("time"))} if isinstance(e, dict) else e
                              for e in stored.get("events") or []]
                    stored = {**stored, "header": header, "events": events}
                sessions[key] = stored
            entry = {**entry, "ok": {**ok, "sessions": sessions}}
        trace.append(entry)
    return {**result, "trace": trace}


def main() -> int:
    flags = set(sys.argv[1:])
    if "--pids" in sys.argv:
        pid_file = sys.argv[sys.argv.index("--pids") + 1]
        with open(pid_file + ".tmp", "w") as handle:
            handle.write(f"{os.getpid()} {_grandchild()}")
        os.replace(pid_file + ".tmp", pid_file)
    if "--no-start" in flags:
        sys.stderr.write("cannot start: missing library\n")
        return 3
    adapter = ReferenceAdapter()
    out = sys.stdout.buffer
    named = {flag: sys.argv[sys.argv.index(flag) + 1] for flag in ("--errored-op", "--exit-on-op", "--crash-op")
             if flag in sys.argv}
    if "--banner" in flags:
        out.write(b"adapter listening on stdin\n")
        out.flush()
    for raw in sys.stdin.buffer:
        message = wire.loads(raw)
        if ("--serde-limits" in flags or "--serde-undeclared" in flags) and message.get("op") != "start" \
                and protocol.beyond_limits(message, {"maxDepth": 128, "loneSurrogates": False}):
            return 4  # serde_json refuses the line: the adapter dies, as a real one would without declaring it
        reply = adapter.handle(message)
        op, args = message.get("op"), message.get("args", {})
        if op == "start":
            if "--bad-version" in flags:
                reply["result"]["protocolVersion"] = 99
            if "--no-caps" in flags:
                reply["result"]["capabilities"] = []
            if "--serde-limits" in flags:  # serde_json: 128 levels, no lone surrogate; declared
                reply["result"]["limits"] = {"maxDepth": 128, "loneSurrogates": False}
            if "--no-validator" in flags:  # a store or backend: the validator's policies do not bind it
                reply["result"]["capabilities"].remove("validator-policy")
        value = args.get("value") if op == "json-value" else None
        mode = value.get("misbehave") if isinstance(value, dict) else None
        if "--wrong" in flags and op == "json-value":
            reply = {"seq": message["seq"], "kind": "result", "result": {"isJsonValue": not reply["result"]["isJsonValue"]}}
        if "--hang-all" in flags and op == "json-value":
            time.sleep(600)
        if "--skip-all" in flags and op not in ("start", "stop"):
            reply = {"seq": message["seq"], "kind": "skipped", "reason": "not today"}
        if mode == "grandchild":
            _grandchild()
            return 9
        if mode == "no-newline":
            while True:
                out.write(b"x" * 65536)
                out.flush()
        if mode == "stderr-flood":
            for _ in range(800):
                sys.stderr.write("e" * 65536)
            sys.stderr.write("\nlast words\n")
            sys.stderr.flush()
        if mode == "huge-reply":
            reply = {"seq": message["seq"], "kind": "errored", "message": "m" * (2 << 20)}
        if mode == "big-int":
            out.write(b'{"seq":%d,"kind":"result","result":{"isJsonValue":%s}}\n' % (message["seq"], b"9" * 5000))
            out.flush()
            continue
        if mode == "hostile-text":
            reply = {"seq": message["seq"], "kind": "errored",
                     "message": "bad\ud800 text\n::error file=x::forged\r\x1b[31mred"}
        if "--wrong-find" in flags and op == "find-last-message-turn-end" and reply.get("kind") == "result":
            reply = {"seq": message["seq"], "kind": "result", "result": {"index": None}}
        if "--wrong-paths" in flags and op == "jsonl-path" and reply.get("kind") == "result":
            reply = {"seq": message["seq"], "kind": "result", "result": {"path": "x"}}
        if "--crash-null-seed" in flags and op == "load" and None in (args.get("seed") or ()):
            reply = {"seq": message["seq"], "kind": "crashed", "class": "TypeError",
                     "message": "Cannot read properties of null (reading 'type')", "detail": "at validateSeed"}
        if op == named.get("--errored-op"):
            reply = {"seq": message["seq"], "kind": "errored", "message": f"unknown op {op}"}
        if op == named.get("--crash-op"):
            reply = {"seq": message["seq"], "kind": "crashed", "class": "TypeError",
                     "message": "args.events is not iterable", "detail": "at adapter.js:12"}
        if op == named.get("--exit-on-op"):
            sys.stderr.write(f"adapter: cannot handle {op}\n")
            return 5
        if "--crash-rewrite-shape" in flags and op == "append" and reply.get("kind") == "rejected" \
                and reply.get("code") == "SURFACE_TOOL_RESULT_REWRITE" and _bad_shape(args, reply):
            reply = {"seq": message["seq"], "kind": "crashed", "class": "TypeError",
                     "message": "Cannot read properties of undefined (reading '0')", "detail": "at assertToolResultRewrite"}
        if "--seconds-clock" in flags and op == "live" and reply.get("kind") == "result":
            reply = {**reply, "result": _in_seconds(reply["result"])}
        if mode == "crash":
            sys.stderr.write("adapter: simulated crash\n")
            return 7
        if mode == "hang":
            time.sleep(60)
        if mode == "garbage":
            out.write(b"this is not json\n")
        elif mode == "not-object":
            out.write(b"[1,2,3]\n")
        elif mode == "wrong-seq":
            reply["seq"] = message["seq"] + 100
            out.write(wire.dumps(reply).encode() + b"\n")
        elif mode == "bad-schema":
            out.write(wire.dumps({"seq": message["seq"], "kind": "result", "result": {"valid?": 1}}).encode() + b"\n")
        elif mode == "errored":
            out.write(wire.dumps({"seq": message["seq"], "kind": "errored", "message": "adapter bug"}).encode() + b"\n")
        else:
            out.write(wire.dumps(reply).encode() + b"\n")
        out.flush()
        if op == "stop":
            break
    return 0


if __name__ == "__main__":
    sys.exit(main())
