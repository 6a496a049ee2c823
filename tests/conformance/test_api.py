"""The documented Python API (docs/compatibility.md): exactly `load_cases` and `compare`, as shown there."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from sessionspec.conformance.adapter import ReferenceAdapter
from sessionspec.conformance.api import compare, load_cases

ROOT = Path(__file__).resolve().parents[2]


def _reference():
    adapter = ReferenceAdapter()
    adapter.handle({"seq": 0, "op": "start", "args": {"protocolVersion": 1}})
    seq = iter(range(1, 1 << 30))
    return lambda op, args: adapter.handle({"seq": next(seq), "op": op, "args": args})


def test_the_documented_example_passes_on_the_reference():
    doc = (ROOT / "docs" / "compatibility.md").read_text(encoding="utf-8")
    example = re.search(r"```python\n(.*?)```", doc, re.DOTALL)
    assert example is not None and "load_cases" in example.group(1) and "compare(case, reply)" in example.group(1)
    code = "\n".join(line.removeprefix("  ") for line in example.group(1).splitlines())
    exec(compile(code, "docs/compatibility.md", "exec"), {"my_adapter": _reference()})  # noqa: S102 - our own doc


def test_compare_fails_a_wrong_reply_and_load_cases_selects_by_revision():
    cases = load_cases()
    assert cases and {c.id for c in load_cases("0.1.1-rc.2")} != {c.id for c in cases}
    case = next(c for c in cases if c.op == "json-value")
    wrong = {"seq": 1, "kind": "result", "result": {"isJsonValue": not case.expect["result"]["isJsonValue"]}}
    verdict = compare(case, wrong)
    assert verdict.outcome == "failed" and [d.pointer for d in verdict.differences] == ["/isJsonValue"]
    assert compare(case, {"seq": 1, "kind": "errored", "message": "boom"}).outcome == "errored"
    with pytest.raises(ValueError, match="no SQLite layout"):
        load_cases(sqlite_layout=-1)
