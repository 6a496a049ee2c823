"""In-process parts of `validate --level schema` on one file (#24): the whole pass, the generated types' decode and
re-encode of its groups alone (the lossless proof of every line), and orjson's parse of its lines.

    python bench/validate_parts.py FILE
"""

from __future__ import annotations

import gc
import io
import sys
import time
from collections.abc import Callable
from typing import Any

import orjson
from sessionspec.cli import run
from sessionspec.validator import fastlog


def _best(body: Callable[[], object], runs: int = 5) -> float:
    """The least CPU time of ``runs`` calls, a full collection before each."""
    times = []
    for _ in range(runs):
        gc.collect()
        start = time.process_time()
        body()
        times.append(time.process_time() - start)
    return min(times)


def main(path: str) -> None:
    argv = ["validate", "--level", "schema", "--quiet", path]
    run(argv, io.StringIO(), io.StringIO())  # warm-up: compiled schemas and generated types
    whole = _best(lambda: run(argv, io.StringIO(), io.StringIO()))
    lines = open(path, "rb").read().split(b"\n")  # noqa: SIM115

    def parse() -> None:
        for line in lines:
            if line:
                orjson.loads(line)

    groups: list[tuple[Any, Any, bytes]] = []  # the groups as the pass cuts them, with its revision's codec
    original = fastlog._Pass.group

    def spy(self: Any, text: bytes, index: int) -> int:
        groups.append((self.decode_lines, self.encode_lines, text))
        return original(self, text, index)

    fastlog._Pass.group = spy  # type: ignore[method-assign]
    try:
        run(argv, io.StringIO(), io.StringIO())
    finally:
        fastlog._Pass.group = original  # type: ignore[method-assign]

    def codec() -> None:
        for decode, encode, text in groups:
            encode(decode(text))

    both = _best(codec)
    print(f"{path.rsplit('/', 1)[-1]}: pass {whole * 1000:.0f} ms; decode+encode of its {len(groups)} groups "
          f"{both * 1000:.0f} ms; orjson per line {_best(parse) * 1000:.0f} ms; rest {(whole - both) * 1000:.0f} ms")


if __name__ == "__main__":
    main(sys.argv[1])
