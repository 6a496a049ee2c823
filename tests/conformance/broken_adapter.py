"""A fake adapter that misbehaves on request (see conformance_fakes.py).

Flags: --no-start (exit before the handshake), --bad-version (claim protocol 99),
--wrong (answer every json-value with the opposite), --no-caps (claim no capability).
"""

from __future__ import annotations

import sys
import time

from sessionspec.conformance import wire
from sessionspec.conformance.adapter import ReferenceAdapter


def main() -> int:
    flags = set(sys.argv[1:])
    if "--no-start" in flags:
        sys.stderr.write("cannot start: missing library\n")
        return 3
    adapter = ReferenceAdapter()
    out = sys.stdout.buffer
    for raw in sys.stdin.buffer:
        message = wire.loads(raw)
        reply = adapter.handle(message)
        op, args = message.get("op"), message.get("args", {})
        if op == "start":
            if "--bad-version" in flags:
                reply["result"]["protocolVersion"] = 99
            if "--no-caps" in flags:
                reply["result"]["capabilities"] = []
        value = args.get("value") if op == "json-value" else None
        mode = value.get("misbehave") if isinstance(value, dict) else None
        if "--wrong" in flags and op == "json-value":
            reply = {"seq": message["seq"], "kind": "result", "result": {"isJsonValue": not reply["result"]["isJsonValue"]}}
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
