"""Deliberately broken adapters and small corpora for the harness tests.

``broken_adapter.py`` (run as a script) serves the reference, except for a
``json-value`` request whose ``value`` is ``{"misbehave": MODE}``: then it
crashes, hangs, writes garbage, answers with the wrong ``seq``, or breaks
the reply schema, on demand (Bowtie's envsonschema idea).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from sessionspec.conformance.authoring import format_case_file
from sessionspec.conformance.cases import case_id

HERE = Path(__file__).parent
BROKEN = HERE / "broken_adapter.py"
REFERENCE_CMD = f"{sys.executable} -m sessionspec.conformance.reference_adapter"


def broken_cmd(*flags: str) -> str:
    return " ".join([sys.executable, str(BROKEN), *flags])


def case(description: str, op: str, args: dict[str, Any], expect: dict[str, Any], *,
         requirements: tuple[str, ...] = ("JSON-1",), capability: str | None = None) -> dict[str, Any]:
    from sessionspec.conformance.protocol import OPS

    c = {
        "description": description,
        "requirements": list(requirements),
        "level": "MUST",
        "capability": capability or OPS[op].capability,
        "input": {"op": op, "args": args},
        "expect": expect,
    }
    return {"id": case_id(c), **c}


def json_case(value: Any, valid: bool = True, description: str | None = None) -> dict[str, Any]:
    return case(description or f"json-value of {value!r}", "json-value", {"value": value},
                {"result": {"isJsonValue": valid}})


def misbehave(mode: str) -> dict[str, Any]:
    return json_case({"misbehave": mode}, True, f"adapter misbehaves: {mode}")


def write_corpus(directory: Path, area: str, cases: list[dict[str, Any]]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{area}.json"
    path.write_text(format_case_file(area, f"test corpus {area}", cases), encoding="utf-8")
    return directory
