"""The reference implementation as a protocol adapter process.

Run ``python -m sessionspec.conformance.reference_adapter``: it reads one JSON
request per line on stdin and writes one JSON reply per line on stdout until
``stop`` or end of input. ``sessionspec conformance --impl "python -m
sessionspec.conformance.reference_adapter"`` checks the protocol end to end.
"""

from __future__ import annotations

import logging
import sys
from typing import BinaryIO

from . import protocol, wire
from .adapter import ReferenceAdapter

__all__ = ["main", "serve"]


def serve(stdin: BinaryIO, stdout: BinaryIO, adapter: ReferenceAdapter | None = None) -> int:
    """The adapter loop: read a line, handle it, write one reply line, flush.

    ``adapter`` lets a variant of the reference (a mutant with some handlers
    replaced) reuse the loop.
    """
    adapter = adapter or ReferenceAdapter()
    for raw in stdin:
        if not raw.strip():
            continue
        message = None
        try:
            message = wire.loads(raw)
        except wire.WireError as exc:
            reply = protocol.errored(None, str(exc))
        else:
            reply = adapter.handle(message)
        stdout.write(wire.dumps(reply).encode("utf-8") + b"\n")
        stdout.flush()
        if isinstance(message, dict) and message.get("op") == "stop":
            break
    return 0


def main(argv: list[str] | None = None) -> int:
    """``--revision R`` serves that format revision (default: the pinned one); ``--sqlite-layout N`` gives its SQLite
    backend that layout of the revision (default: the revision's own)."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m sessionspec.conformance.reference_adapter")
    parser.add_argument("--revision", default=None, help="format revision to serve (id or npm release)")
    parser.add_argument("--sqlite-layout", type=int, default=None,
                        help="SQLite layout (user_version) of the revision its backend has (default: the revision's own)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.ERROR, stream=sys.stderr)
    try:
        adapter = ReferenceAdapter(revision=args.revision, sqlite_layout=args.sqlite_layout)
    except KeyError as exc:
        parser.error(str(exc.args[0]))
    return serve(sys.stdin.buffer, sys.stdout.buffer, adapter)


if __name__ == "__main__":
    sys.exit(main())
