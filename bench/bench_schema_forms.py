"""Why the msgspec types stay beside the compiled predicates: the two evaluations of the event schemas, timed.

On one log (from `bench/gen_logs.py`), interleaved in one process, CPU time, median of ``--runs``:

* ``structs``: the generated msgspec types decode and check the lines, one ``decode_lines`` call per
  64 KiB group (what the accept-fast pass does);
* ``predicates``: ``orjson.loads`` per line, then the compiled predicate of the event or row schema
  (what a line the structs refuse costs);
* ``parse-only``: ``orjson.loads`` per line, nothing checked.

    python bench/gen_logs.py --events 100000 --out /tmp/b && python bench/bench_schema_forms.py /tmp/b/bench-100000-unpacked.jsonl
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import orjson
from sessionspec.validator.lint import schema_set

GROUP = 65536


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("log", type=Path)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    body = args.log.read_bytes().partition(b"\n")[2]  # the header line is not an event
    lines = body.split(b"\n")[:-1]
    groups, current, size = [], [], 0
    for line in lines:
        current.append(line)
        size += len(line) + 1
        if size >= GROUP:
            groups.append(b"\n".join(current) + b"\n")
            current, size = [], 0
    if current:
        groups.append(b"\n".join(current) + b"\n")
    schemas = schema_set()
    fast, event, row = schemas.fast_types, schemas.event, schemas.row
    rows = frozenset(fast.rows)

    def structs() -> None:
        for group in groups:
            fast.decoder.decode_lines(group)

    def predicates() -> None:
        for line in lines:
            value = orjson.loads(line)
            (row if value.get("type") in rows else event).is_valid(value)

    def parse_only() -> None:
        for line in lines:
            orjson.loads(line)

    forms: dict[str, Callable[[], None]] = {"structs": structs, "predicates": predicates, "parse-only": parse_only}
    times: dict[str, list[float]] = {name: [] for name in forms}
    for _ in range(args.runs):
        for name, form in forms.items():
            start = time.process_time()
            form()
            times[name].append(time.process_time() - start)
    medians = {name: statistics.median(values) for name, values in times.items()}
    print(f"{args.log.name}: {len(lines):,} lines; " + ", ".join(f"{n} {m:.3f} s" for n, m in medians.items())
          + f"; predicates/structs {medians['predicates'] / medians['structs']:.2f}x")


if __name__ == "__main__":
    main()
