"""Small hostile artifacts and layout-17 stores whose plaintext is shaped to cost memory or CPU (issue 25).

Each shape is a few kilobytes of zstd that inflate, within the plaintext budget's old floor (256 MiB), to one
record whose value is expensive to hold or to parse: one huge string, a string of escapes the fast parsers refuse,
a long number, deep nesting, repeated keys, white space. ``make_artifact`` writes a ``*.jsonl.zstd`` artifact
(header frame, then one frame with a closed turn whose user message carries the shape), ``make_store`` a
published-layout (17) SQLite store whose user-message row holds the same data as one zstd blob.

    python tests/cli/budget_bombs.py OUT_DIR [SHAPE ...]   # writes both forms of each shape, prints sizes
"""

from __future__ import annotations

import json
import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path

sys.path[:0] = [str(Path(__file__).parent), str(Path(__file__).parent.parent)]

import zstandard  # noqa: E402
from sessionspec.reference.jsonl import encode_records  # noqa: E402
from sessionspec.reference.sqlite_store import SqliteStore  # noqa: E402
from sessionspec.reference.zstd_frames import compress_frame  # noqa: E402
from storage_fixtures import HEADER, header_bytes, one_turn  # noqa: E402

#: the old floor of the plaintext budget: every shape inflates to just under it
OLD_FLOOR = 256 << 20
_MARK = "SENTINEL-25"


def _text(size: int, unit: bytes, head: bytes = b"") -> bytes:
    """A JSON string of about ``size`` bytes of text: ``head``, then ``unit`` repeated."""
    return b'"' + head + unit * ((size - len(head)) // len(unit)) + b'"'


#: shape -> the JSON text of the value that replaces the user message's text (the content part's ``text``), or of
#: an extra member of its ``data`` when the value is not a string
SHAPES: dict[str, Callable[[int], tuple[str, bytes]]] = {
    # one string of ASCII letters (the session-8 finding: 1.5 GB in validate)
    "string": lambda size: ("text", _text(size, b"a")),
    # one non-BMP character first: the string is 4 bytes a character in memory, not 1
    "wide-string": lambda size: ("text", _text(size, b"a", "😀".encode())),
    # escapes: `\u0000` is 6 bytes of text for one character
    "nul-escapes": lambda size: ("text", _text(size, b"\\u0000")),
    # lone surrogate escapes: orjson and msgspec refuse them, so the exact parser reads the line
    "lone-surrogates": lambda size: ("text", _text(size, b"\\udc00")),
    # a lone surrogate, then plain text: the whole line goes to the exact parser, its string to the C scanner
    "surrogate-then-text": lambda size: ("text", _text(size, b"a", b"\\udc00")),
    # one integer of millions of digits (past every fast parser; the exact parser reads it as a number)
    "long-integer": lambda size: ("x", b"1" * size),
    # one number of millions of fraction digits
    "long-fraction": lambda size: ("x", b"0." + b"1" * size),
    # white space between two values of an array
    "white-space": lambda size: ("x", b"[0" + b" " * size + b",0]"),
}



def _many(item: bytes, count: int, open_: bytes = b"[", close: bytes = b"0]") -> bytes:
    return open_ + item * count + close


#: shape -> the JSON text of a member of the user message's ``data``, made of about ``marks`` value marks: each
#: costs the exact parser (which reads what orjson refuses or writes differently) an anomaly, or is a container
MARK_SHAPES: dict[str, Callable[[int], tuple[str, bytes]]] = {
    # a million lone-surrogate keys, each also a repeated key (20 s CPU in validate before the anomaly cap)
    "surrogate-keys": lambda marks: ("x", _many(b'"\\udc00":0,', marks, b"{", b'"a":0}')),
    "repeated-keys": lambda marks: ("x", _many(b'"a":0,', marks, b"{", b'"a":0}')),
    "surrogate-strings": lambda marks: ("x", _many(b'"\\udc00",', marks)),
    "negative-zeros": lambda marks: ("x", _many(b"-0.0,", marks)),
    "unsafe-integers": lambda marks: ("x", _many(b"9007199254740993,", marks)),
    # nesting a million deep: every fast parser declines it (orjson at 1024)
    "deep-nesting": lambda marks: ("x", b"[" * marks + b"]" * marks),
    "empty-objects": lambda marks: ("x", _many(b"{},", marks // 2)),
}


def shape_value(shape: str, size: int = OLD_FLOOR - 4096, marks: int | None = None) -> tuple[str, bytes]:
    if shape in MARK_SHAPES:
        from sessionspec.reference.zstd_frames import VALUE_FLOOR

        return MARK_SHAPES[shape](VALUE_FLOOR - 1000 if marks is None else marks)
    return SHAPES[shape](size)


def _user_data(where: str, value: bytes) -> bytes:
    data = {"content": [{"type": "text", "text": _MARK}], "source": {"kind": "user"}}
    text = json.dumps(data, separators=(",", ":")).encode()
    if where == "text":
        return text.replace(f'"{_MARK}"'.encode(), value)
    return text.replace(b'"source"', b'"' + where.encode() + b'":' + value + b',"source"')


def _pad(data: bytes, pad: int) -> bytes:
    """``data`` with a member ``pad`` of ``pad`` bytes of incompressible text (no value marks) before ``source``."""
    if not pad:
        return data
    import base64
    import random

    noise = base64.b64encode(random.Random(25).randbytes(pad * 3 // 4 + 3))[:pad]
    return data.replace(b'"source"', b'"pad":"' + noise + b'","source"')


def padded(make: Callable[..., Path], folder: Path, shape: str, file_size: int, **options: int) -> Path:
    """``make(folder, shape, ...)`` padded with incompressible text to just under ``file_size`` bytes."""
    path = make(folder, shape, **options)
    pad = 0
    for _ in range(6):  # base64 of random bytes compresses to 3/4: aim there, then correct (a store: by pages)
        short = file_size - 256 - path.stat().st_size
        if 0 <= short < 12 << 10:
            return path
        pad = max(0, pad + short * 4 // 3 - (0 if short > 0 else 6 << 10))
        path = make(folder, shape, pad=pad, **options)
    assert path.stat().st_size <= file_size, path.stat().st_size
    return path


def make_artifact(folder: Path, shape: str, size: int = OLD_FLOOR - 4096, *, marks: int | None = None,
                  pad: int = 0) -> Path:
    """A closed turn whose user message (line 3, frame 1) carries ``shape``; a few KB of zstd, or about ``pad``
    bytes more (incompressible text: a file big enough for a budget past the floor)."""
    events = one_turn()
    body = encode_records(events)
    data = json.dumps(events[1]["data"], separators=(",", ":")).encode()
    assert data in body
    body = body.replace(data, _pad(_user_data(*shape_value(shape, size, marks)), pad))
    path = folder / f"{shape}.jsonl.zstd"
    path.write_bytes(compress_frame(header_bytes()) + zstandard.ZstdCompressor(write_checksum=True).compress(body))
    return path


def make_store(folder: Path, shape: str, size: int = OLD_FLOOR - 4096, *, marks: int | None = None,
               pad: int = 0) -> Path:
    """A layout-17 store of a closed turn whose user message row (seq 1) holds ``shape`` as zstd ``data``."""
    path = folder / f"{shape}17.db"
    path.unlink(missing_ok=True)
    with SqliteStore.create(path, revision="b150a551b8") as store:
        store.append(HEADER, one_turn())
    blob = zstandard.ZstdCompressor(write_content_size=True).compress(
        _pad(_user_data(*shape_value(shape, size, marks)), pad))
    db = sqlite3.connect(path)
    db.execute("UPDATE events SET data = ? WHERE seq = 1", (blob,))
    db.commit()
    db.execute("VACUUM")
    db.close()
    return path


#: every command that reads a log, as run on a bomb (OUT: a new path in the scratch folder)
COMMANDS: dict[str, Callable[[Path, Path], list[str]]] = {
    "validate": lambda path, out: ["validate", str(path)],
    "header": lambda path, out: ["header", str(path)],
    "stats": lambda path, out: ["stats", str(path)],
    "derive": lambda path, out: ["derive", str(path)],
    "fold": lambda path, out: ["fold", str(path)],
    "repair": lambda path, out: ["repair", str(path), "-o", str(out / ("repaired" + "".join(path.suffixes)))],
    "pack": lambda path, out: ["pack", str(path), "-o", str(out / "packed.jsonl")],
    "unpack": lambda path, out: ["unpack", str(path), "-o", str(out / "unpacked.jsonl")],
    "validate -j 2": lambda path, out: ["validate", "-j", "2", str(path.parent)],
}


def measure_all(folder: Path, shapes: list[str], size: int, *, marks: int | None = None, file_size: int = 0,
                jobs: int = 2) -> list[dict[str, object]]:
    """Every command on both forms of each shape, each in a child of its own under the hostile limits."""
    from concurrent.futures import ThreadPoolExecutor

    from hostile_limits import measure

    runs = []
    for shape in shapes:
        for make, form in ((make_artifact, "zstd"), (make_store, "sqlite")):
            (folder / shape / form).mkdir(parents=True)
            path = (padded(make, folder / shape / form, shape, file_size, size=size, **({"marks": marks} if marks else {}))
                    if file_size else make(folder / shape / form, shape, size, marks=marks))
            for name, argv in COMMANDS.items():
                scratch = path.parent.parent / f"out-{path.parent.name}-{name.replace(' ', '')}"
                scratch.mkdir()
                runs.append((shape, path, name, argv(path, scratch)))
    with ThreadPoolExecutor(jobs) as pool:
        results = list(pool.map(lambda run: measure(run[3]), runs))
    return [{"shape": shape, "file": path, "command": name, **result}
            for (shape, path, name, _), result in zip(runs, results, strict=True)]


def margins() -> list[tuple[str, int, float, float]]:
    """The real logs' plaintext ratio and value marks per compressed byte: the package-written artifacts of
    tests/real_logs as written, its JSONL logs and the bench generator's logs (every mix, 2,000 to 200,000 events,
    packed and not) compressed by the project's writer (`write_compressed_artifact`: a header frame, one frame of
    records, the best ratio a writer gets). Rows: (log, compressed bytes, plaintext / compressed, marks / byte)."""
    import glob
    import tempfile

    sys.path.insert(0, str(Path(__file__).parent.parent.parent / "bench"))
    import gen_logs  # type: ignore[import-not-found]
    from sessionspec.reference.jsonl import read_artifact
    from sessionspec.reference.jsonl_zstd import write_compressed_artifact
    from sessionspec.reference.zstd_frames import decompress, scan_frames, value_marks

    root = Path(__file__).parent.parent / "real_logs"
    rows: list[tuple[str, int, float, float]] = []

    def add(name: str, data: bytes) -> None:
        plain = b"".join(decompress(memoryview(data)[a:b], 1 << 31) for a, b in scan_frames(data).frames)
        rows.append((name, len(data), len(plain) / len(data), value_marks(plain) / len(data)))

    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "log.jsonl.zstd"
        for path in sorted(glob.glob(str(root / "**" / "*.jsonl.zstd"), recursive=True)):
            add(Path(path).name + " (as written)", Path(path).read_bytes())
        for path in sorted(glob.glob(str(root / "**" / "*.jsonl"), recursive=True)):
            try:
                artifact = read_artifact(Path(path).read_bytes())
            except Exception:  # noqa: BLE001, S112  (a corpus log made to be refused)
                continue
            write_compressed_artifact(out, artifact.header, artifact.events)
            add(Path(path).name + " (compressed)", out.read_bytes())
        header = {"version": 0, "id": "bench", "createdAt": 1, "cwd": "/w", "delegationDepth": 0}
        for mix, shape in gen_logs.MIXES.items():
            for count in (2_000, 20_000, 200_000):
                events = gen_logs.generate_events(count, seed=7, mix=shape)
                for packed in (True, False):
                    write_compressed_artifact(out, header, events, pack=packed)
                    add(f"bench {mix} {count} {'packed' if packed else 'unpacked'}", out.read_bytes())
    return rows


def main(argv: list[str]) -> int:
    import argparse
    import re
    import tempfile

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", nargs="?", type=Path, help="write both forms of each shape here (no measuring)")
    parser.add_argument("--shape", action="append", choices=sorted({*SHAPES, *MARK_SHAPES}), help="these shapes only (default all)")
    parser.add_argument("--size", type=int, default=OLD_FLOOR - 4096, help="plaintext bytes of the shaped value")
    parser.add_argument("--marks", type=int, help="value marks of a mark shape (default: the value budget's floor)")
    parser.add_argument("--file-size", type=int, default=0,
                        help="pad each file with incompressible text to just under this many bytes")
    parser.add_argument("--measure", action="store_true",
                        help="run every command on each file under the hostile limits and print a Markdown table")
    parser.add_argument("--margins", action="store_true",
                        help="print the real logs' plaintext ratio and value marks a compressed byte")
    args = parser.parse_args(argv)
    if args.margins:
        rows = margins()
        for name, size, ratio, marks in rows:
            print(f"{name:48} {size:10} B  plaintext {ratio:5.1f}x  marks {marks:4.2f}/B")
        print(f"largest: plaintext {max(r[2] for r in rows):.1f}x, marks {max(r[3] for r in rows):.2f}/B "
              f"({len(rows)} logs)")
        return 0
    shapes = args.shape or [*SHAPES, *MARK_SHAPES]
    if not args.measure:
        if args.out is None:
            parser.error("name OUT, or --measure")
        args.out.mkdir(parents=True, exist_ok=True)
        for shape in shapes:
            for path in (make_artifact(args.out, shape, args.size, marks=args.marks),
                         make_store(args.out, shape, args.size, marks=args.marks)):
                print(f"{path} {path.stat().st_size} bytes")
        return 0
    with tempfile.TemporaryDirectory(prefix="budget-bombs-") as root:
        results = measure_all(Path(root), shapes, args.size, marks=args.marks, file_size=args.file_size)
        names = list(COMMANDS)
        print("| shape (form, file size) | " + " | ".join(names) + " |")
        print("|---|" + "---|" * len(names))
        worst = 0
        for shape in shapes:
            for form in ("zstd", "sqlite"):
                cells = [r for r in results if r["shape"] == shape and Path(str(r["file"])).parent.name == form]
                size = Path(str(cells[0]["file"])).stat().st_size
                row = []
                for r in cells:
                    codes = sorted(set(re.findall(r"ZSTD_[A-Z_]+|JSON[A-Z_]*_[A-Z_]+|Traceback", str(r["out"]) + str(r["err"]))))
                    row.append(f"{r['code']} {int(r['rss_kb']) // 1024} MB {float(r['cpu']):.1f} s {' '.join(codes[:2])}")
                    worst = max(worst, int(r["rss_kb"]))
                print(f"| {shape} ({form}, {size / 1024:.1f} KB) | " + " | ".join(row) + " |")
        print(f"\nlargest peak RSS {worst // 1024} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
