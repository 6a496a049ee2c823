"""Every code `sessionspec validate` can report is listed in spec/errors.json (validator findings: LOG)."""

from __future__ import annotations

import json
import re
from importlib import resources
from pathlib import Path

from sessionspec import validator
from sessionspec.reference import jsonl_read

TOOLS = Path(validator.__file__).resolve().parent
READER = Path(jsonl_read.__file__).resolve()  # the one reader: its every-defect mode's findings
CODE = re.compile(r'Finding\(\s*"([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)"')


def _errors() -> dict[str, dict]:
    doc = json.loads(resources.files("sessionspec.spec").joinpath("errors.json").read_text(encoding="utf-8"))
    return {e["code"]: e for e in doc["errors"]}


def _emitted() -> set[str]:
    codes: set[str] = set()
    for path in [*TOOLS.glob("*.py"), READER]:
        codes |= set(CODE.findall(path.read_text(encoding="utf-8")))
    codes |= {code for code, _req, _sev in jsonl_read.ANOMALY_FINDINGS.values()}
    return codes


def test_every_emitted_code_is_listed():
    errors = _errors()
    emitted = _emitted()
    assert {"SCHEMA_VIOLATION", "JSONL_TORN_TAIL", "REPAIR_NEEDED", "JSON_DUPLICATE_KEY"} <= emitted
    assert emitted - set(errors) == set()


def test_validator_findings_cite_existing_rules():
    doc = json.loads(resources.files("sessionspec.spec").joinpath("requirements.json").read_text(encoding="utf-8"))
    ids = {r["id"] for r in doc["requirements"]} | {d["id"] for d in doc.get("decisions", [])}
    findings = [e for e in _errors().values() if e.get("emitter") == "validator"]
    assert findings and all(e["family"] == "LOG" for e in findings)
    for entry in findings:
        assert set(entry.get("cites", [])) <= ids, entry["code"]
    # The requirement an anomaly finding names is one its entry cites.
    for code, requirement, _severity in jsonl_read.ANOMALY_FINDINGS.values():
        entry = _errors()[code]
        if entry.get("emitter") == "validator":
            assert requirement in entry["cites"], code
