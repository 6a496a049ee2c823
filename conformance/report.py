"""Reports: a JSONL stream (header, one line per case, footer) and JUnit XML.

The JSONL report is the durable record of a run (Bowtie's report model): it
validates line by line against ``spec/protocol/report.json``, reloads with
:func:`load_report`, and renderers (JUnit, the human summary) can work from
a reloaded report as well as from a live run. Files are written atomically
(temp file + ``os.replace``).
"""

from __future__ import annotations

import datetime as _dt
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sessionspec import SPEC_REVISION, __version__
from sessionspec.reference.atomic import write_atomic
from sessionspec.spec.inputs import read_text

from . import protocol, wire
from .grouping import failure_groups
from .results import OUTCOMES

__all__ = [
    "DuplicateCase",
    "EmptyReport",
    "InvalidReport",
    "LoadedReport",
    "MissingFooter",
    "MissingHeader",
    "atomic_write_text",
    "junit_xml",
    "load_report",
    "report_lines",
]

FORMAT = "sessionspec-conformance-report/1"
_KINDS = ("header", "case", "footer")


def atomic_write_text(path: str | Path, text: str, *, force: bool | None = None) -> None:
    """Write a report, trace or case file atomically (UTF-8, LF line ends); ``force`` not None: a target the user
    named, under the one output policy (`reference.atomic.check_new_output`)."""
    write_atomic(path, text.encode("utf-8"), force=force)


def _now_iso() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")


def report_lines(run: Any, *, command: Sequence[str] | None, selection: Sequence[str] | None,
                 expectations: str | None, started: str | None = None,
                 revision: str | None = None) -> list[dict[str, Any]]:
    """The report of a :class:`~sessionspec.conformance.runner.RunResult` as JSON lines.

    ``revision`` is the format revision whose vectors ran (default: the pinned one).
    """
    header = {
        "kind": "header",
        "format": FORMAT,
        "implementation": run.implementation,
        "command": list(command) if command is not None else None,
        "sessionspec": __version__,
        "specRevision": SPEC_REVISION,
        "revision": revision or SPEC_REVISION,
        "started": started or _now_iso(),
        "selection": list(selection) if selection else None,
        "expectations": expectations,
    }
    counts = dict.fromkeys(OUTCOMES, 0)
    for r in run.results:
        counts[r.outcome] += 1
    footer: dict[str, Any] = {
        "kind": "footer",
        "counts": counts,
        "durationMs": round(run.duration * 1000, 3),
        "exitCode": run.exit_code,
    }
    if run.stale_expectations:
        footer["staleExpectations"] = list(run.stale_expectations)
    if run.problems:
        footer["problems"] = list(run.problems)
    if run.fuzz_failures:
        footer["fuzz"] = list(run.fuzz_failures)
    if getattr(run, "fuzz_known", None):
        footer["fuzzKnown"] = list(run.fuzz_known)
    groups = failure_groups(run.results)
    if groups:
        footer["groups"] = [g.to_json() for g in groups]
    return [header, *(r.to_json() for r in run.results), footer]


def write_report(path: str | Path, lines: Iterable[Mapping[str, Any]], *, force: bool | None = None) -> None:
    """Write report lines as JSONL, atomically (``force``: as for :func:`atomic_write_text`)."""
    atomic_write_text(path, "".join(wire.dumps(line) + "\n" for line in lines), force=force)


# -- reloading ------------------------------------------------------------------------------


class InvalidReport(ValueError):
    """A JSONL report cannot be reloaded; the message names the line."""


class EmptyReport(InvalidReport):
    """The file holds no lines."""


class MissingHeader(InvalidReport):
    """The first line is not a header."""


class MissingFooter(InvalidReport):
    """The last line is not a footer (the run was cut short)."""


class DuplicateCase(InvalidReport):
    """Two lines report the same case."""


@dataclass
class LoadedReport:
    """A reloaded report: its header, case lines in order, and footer."""

    header: dict[str, Any]
    cases: list[dict[str, Any]]
    footer: dict[str, Any]
    by_id: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def counts(self) -> dict[str, int]:
        counts = dict.fromkeys(OUTCOMES, 0)
        for c in self.cases:
            counts[c["outcome"]] += 1
        return counts


def load_report(path: str | Path) -> LoadedReport:
    """Reload and check a JSONL report (every line against ``report.json``)."""
    text, problem = read_text(path)
    if text is None:
        raise InvalidReport(str(problem))
    numbered = [(number, line) for number, line in enumerate(text.split("\n"), 1) if line.strip()]
    if not numbered:
        raise EmptyReport(f"{path}: the report is empty")
    parsed = []
    for number, raw in numbered:
        try:
            value = wire.loads(raw)
            kind = value.get("kind") if isinstance(value, dict) else None
            # Check a line against its own kind's schema: the error then names the field at fault.
            if not protocol.is_valid(value, "report.json"):  # the fast check is the hot path
                # the located error, against the line's own kind: it then names the field at fault
                protocol.validate(value, f"report.json#/$defs/{kind}" if kind in _KINDS else "report.json")
        except (wire.WireError, protocol.ProtocolViolation) as exc:
            raise InvalidReport(f"{path}:{number}: {exc}") from None
        parsed.append(value)
    if parsed[0]["kind"] != "header":
        raise MissingHeader(f"{path}:{numbered[0][0]}: the first line is not a report header")
    if parsed[-1]["kind"] != "footer" or len(parsed) < 2:
        raise MissingFooter(f"{path}:{numbered[-1][0]}: the last line is not a footer (was the run interrupted?)")
    cases = parsed[1:-1]
    by_id: dict[str, dict[str, Any]] = {}
    for (number, _raw), case in zip(numbered[1:-1], cases, strict=True):
        if case["kind"] != "case":
            raise InvalidReport(f"{path}:{number}: expected a case line, got {case['kind']}")
        if case["id"] in by_id:
            raise DuplicateCase(f"{path}:{number}: case {case['id']} is reported twice")
        by_id[case["id"]] = case
    return LoadedReport(parsed[0], cases, parsed[-1], by_id)


# -- JUnit --------------------------------------------------------------------------------------


_XML_INVALID = re.compile("[^\u0009\u000a\u000d\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]"
                          "|[\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]")  # (shown, not reordering)


def _xml_safe(text: str) -> str:
    """XML 1.0 cannot hold control characters or lone surrogates; show them escaped."""
    return _XML_INVALID.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _case_text(case: Mapping[str, Any]) -> str:
    lines = [case.get("message", "")]
    for d in case.get("diff", ()):
        lines.append(f"  {d.get('pointer') or '(root)'}: {d.get('kind')}"
                     + (f" expected {wire.dumps(d['expected'])[:200]}" if "expected" in d else "")
                     + (f" got {wire.dumps(d['actual'])[:200]}" if "actual" in d else ""))
    return _xml_safe("\n".join(lines))


def junit_xml(lines: Sequence[Mapping[str, Any]]) -> str:
    """JUnit XML (one ``testsuite`` per area) from report lines."""
    header, *cases, footer = lines
    impl = header.get("implementation") or {}
    name = (impl.get("implementation") or {}).get("name", "implementation")
    suites: dict[str, list[Mapping[str, Any]]] = {}
    for case in cases:
        suites.setdefault(case["area"], []).append(case)
    root = ET.Element("testsuites", name=_xml_safe(f"sessionspec conformance: {name}"))
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for area, members in suites.items():
        suite = ET.SubElement(root, "testsuite", name=_xml_safe(str(area)))
        counts = {"tests": len(members), "failures": 0, "errors": 0, "skipped": 0}
        seconds = 0.0
        for case in members:
            seconds += case.get("durationMs", 0) / 1000
            tc = ET.SubElement(
                suite, "testcase", classname=_xml_safe(f"sessionspec.conformance.{area}"),
                name=_xml_safe(f"{case['description']} [{case['id']}]"), time=f"{case.get('durationMs', 0) / 1000:.4f}",
            )
            ET.SubElement(tc, "properties").extend(
                [ET.Element("property", name="requirement", value=_xml_safe(str(r))) for r in case["requirements"]]
            )
            outcome = case["outcome"]
            if outcome == "failed":
                counts["failures"] += 1
                ET.SubElement(tc, "failure", message=_xml_safe(case.get("message", "failed")[:500])).text = _case_text(case)
            elif outcome == "crashed":  # a failure of the case, not a harness error
                counts["failures"] += 1
                crash = case.get("crash") or {}
                ET.SubElement(tc, "failure", message=_xml_safe(case.get("message", "crashed")[:500]),
                              type=_xml_safe(f"crash: {crash.get('class', '')}")).text = _case_text(case)
            elif outcome == "xpass":
                counts["failures"] += 1
                failure = ET.SubElement(tc, "failure", message=_xml_safe("unexpected pass: " + case.get("reason", "")))
                failure.text = _xml_safe(case.get("message", ""))
            elif outcome == "errored":
                counts["errors"] += 1
                ET.SubElement(tc, "error", message=_xml_safe(case.get("message", "errored")[:500])).text = _case_text(case)
            elif outcome == "skipped":
                counts["skipped"] += 1
                ET.SubElement(tc, "skipped", message=_xml_safe(case.get("message", "skipped")))
            elif outcome == "xfail":
                counts["skipped"] += 1
                known = ET.SubElement(tc, "skipped", message=_xml_safe(f"expected failure: {case.get('reason', '')}"))
                known.text = _case_text(case)
        for key, value in counts.items():
            suite.set(key, str(value))
            totals[key] += value
        suite.set("time", f"{seconds:.4f}")
    for key, value in totals.items():
        root.set(key, str(value))
    root.set("time", f"{footer.get('durationMs', 0) / 1000:.4f}")
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
