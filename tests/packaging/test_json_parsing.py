"""One JSON parsing path for log text (issue 26): every JSON parser the package calls is listed here.

Log text (a JSONL line, a store row's JSON columns, the lines of a zstd artifact, a protocol message that carries a
log) is parsed by `sessionspec.reference.json_text` (`loads`, its anomaly hook, its `fast_loads` half), and a stored
log is read by the one reader, `reference/jsonl_read.py`. The only other parser of log text is the named
accelerator: the msgspec decoders `mstypes`/`generated` build for `fastlog`, whose verdict on a line is taken only where
`json_text` would agree (tests/cli/test_fastlog*.py check it against the reference). Everything else a module parses
is a file of the project (spec data, vector files, evidence, recorded runs, lock files), never a log.

A new parser call fails `test_no_new_json_parser`: route log text through `json_text.loads`, or, for a project file,
add the call to `ALLOWED` with the file it reads.
"""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

from test_layers import MODULES

#: The JSON parsers of the standard library, orjson and msgspec, by dotted name as a module calls them.
PARSERS = frozenset({"json.loads", "json.load", "json.JSONDecoder", "json.decoder.JSONDecoder", "json.decoder.scanstring",
                     "orjson.loads", "msgspec.json.decode", "msgspec.json.Decoder"})
#: A parser imported by name (`from json import loads`) counts as a call of it.
_FROM = {"json": {"loads", "load", "JSONDecoder"}, "json.decoder": {"JSONDecoder", "scanstring"},
         "orjson": {"loads"}, "msgspec.json": {"decode", "Decoder"}}

#: module -> the parser calls it may make, each with what it parses.
ALLOWED: dict[str, dict[str, tuple[int, str]]] = {
    # The one parsing path of log text itself: orjson and msgspec as its fast half, the C string scanner in its
    # exact half.
    "sessionspec.reference.json_text": {"orjson.loads": (1, "the fast half of loads"),
                                        "msgspec.json.Decoder": (1, "fast_loads"),
                                        "json.decoder.scanstring": (1, "the exact half's string scanner")},
    # The accelerator: decoders generated from the compiled schemas, for fastlog.
    "sessionspec.validator.mstypes": {"msgspec.json.Decoder": (5, "fastlog's typed decoders, in a line's member order too")},
    "sessionspec.validator.generated": {"msgspec.json.Decoder": (1, "fastlog's typed decoders, pregenerated")},
    # Project files, not logs.
    "sessionspec.validator.pregen_types": {"json.loads": (1, "the op schemas of conformance/")},
    "sessionspec.spec": {"json.loads": (1, "spec data files")},
    "sessionspec.spec.loader": {"json.loads": (4, "schema documents and the registry (the package's own files read "
                                                  "as plain files too: `Source._package_files`)"),
                                "orjson.loads": (1, "the package's own files, where orjson gives json's value "
                                                    "(`_loads_package_file`)")},
    "sessionspec.spec.revisions": {"json.loads": (3, "revisions.json, a revision's changes.json, requirements.json")},
    "sessionspec.spec.format": {"json.loads": (1, "constants.json")},
    "sessionspec.conformance.protocol": {"json.loads": (1, "vector files")},
    "sessionspec.conformance.schema_bounds": {"json.loads": (1, "schema-witnesses.json")},
    "sessionspec.conformance.fuzz": {"json.loads": (1, "evidence.json")},
    "sessionspec.conformance.docfacts": {"json.loads": (2, "the recorded node run (a results file)")},
    "sessionspec.conformance.compat": {"json.loads": (3, "package-lock.json files, a recorded results file")},
    "sessionspec.conformance.html_report": {"json.loads": (1, "requirements.json")},
}


def _dotted(node: ast.expr) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id, *reversed(parts)])


def parser_calls(path: Path) -> list[tuple[str, int]]:
    """The JSON parser calls (and by-name parser imports) of one source file, with line numbers."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call):
            name = _dotted(node.func)
            if name in PARSERS:
                found.append((name, node.lineno))
            elif isinstance(node.func, ast.Attribute) and node.func.attr == "raw_decode":
                found.append(("raw_decode", node.lineno))
        elif isinstance(node, ast.ImportFrom) and node.module in _FROM:
            found.extend((f"{node.module}.{a.name}", node.lineno) for a in node.names if a.name in _FROM[node.module])
        elif isinstance(node, ast.ImportFrom) and node.module == "msgspec" and any(a.name == "json" for a in node.names):
            found.append(("msgspec.json", node.lineno))
    return found


def _offences() -> list[str]:
    out = []
    for module, path in sorted(MODULES.items()):
        if module == "sessionspec.validator.core_fast":
            continue  # generated by pregen; it parses nothing (checked below)
        calls = parser_calls(path)
        have = Counter(name for name, _ in calls)
        allowed = {name: count for name, (count, _) in ALLOWED.get(module, {}).items()}
        if dict(have) != allowed:
            where = ", ".join(f"{name} at line {line}" for name, line in calls) or "none"
            out.append(f"{module}: parser calls {dict(have)} (allowed {allowed}): {where}")
    return out


def test_no_new_json_parser() -> None:
    assert _offences() == [], "parse log text with sessionspec.reference.json_text.loads"


def test_the_generated_module_parses_nothing() -> None:
    path = MODULES["sessionspec.validator.core_fast"]
    assert parser_calls(path) == []


def test_every_allowed_module_exists() -> None:
    assert set(ALLOWED) <= set(MODULES)


def test_the_scan_sees_every_form(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("import json, orjson, msgspec\nfrom json import loads as l\nfrom msgspec import json as mj\n"
                      "def f(t):\n    json.loads(t); orjson.loads(t); msgspec.json.decode(t)\n"
                      "    json.JSONDecoder().raw_decode(t); l(t)\n")
    assert sorted(parser_calls(module)) == sorted([
        ("json.loads", 2), ("msgspec.json", 3), ("json.loads", 5), ("orjson.loads", 5), ("msgspec.json.decode", 5),
        ("json.JSONDecoder", 6), ("raw_decode", 6)])
