"""Summaries of saved runs (JSONL reports): terminal text, Markdown, GitHub Actions annotations.

`sessionspec summary` renders reports written by `sessionspec conformance --report`; the Markdown form
is for ``$GITHUB_STEP_SUMMARY`` (a job's summary page), the GitHub form prints one ``::error`` workflow
command per problem case, which the runner shows as an annotation. Everything taken from a report
(descriptions, adapter messages, implementation names) is escaped for the form it is written in, and
the listing per run is capped, so a run of ten thousand failures still gives a page GitHub accepts
(a step summary is limited to 1 MiB).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from sessionspec.reference.json_text import display, markdown_text, workflow_value

from . import wire
from .results import OUTCOMES, PROBLEM_OUTCOMES

__all__ = ["MAX_LISTED", "SavedRun", "annotation", "render_github", "render_markdown", "render_text", "run_failed"]

MAX_LISTED = 50
"""Problem cases listed per run (the rest are counted): the whole list is in the report itself."""
_MESSAGE_CHARS = 300
_VALUE_CHARS = 80


class SavedRun:
    """One reloaded report and the name it was given on the command line."""

    def __init__(self, name: str, header: Mapping[str, Any], cases: Sequence[Mapping[str, Any]],
                 footer: Mapping[str, Any]) -> None:
        self.name = name
        self.header = header
        self.cases = cases
        self.footer = footer

    @property
    def implementation(self) -> str:
        info = self.header.get("implementation") or {}
        impl = info.get("implementation") if isinstance(info, Mapping) else None
        impl = impl if isinstance(impl, Mapping) else {}
        name, version = impl.get("name"), impl.get("version")
        language = impl.get("language")
        text = " ".join(str(part) for part in (name or "unnamed implementation", version) if part)
        return f"{text} ({language})" if language else text

    @property
    def revision(self) -> str:
        return str(self.header.get("revision") or self.header.get("specRevision") or "?")

    def counts(self) -> Counter[str]:
        return Counter(str(c.get("outcome")) for c in self.cases)

    def problems(self) -> list[Mapping[str, Any]]:
        return [c for c in self.cases if c.get("outcome") in PROBLEM_OUTCOMES]

    def notes(self) -> list[str]:
        """What the footer says beyond the cases: harness problems, stale expectations, fuzz failures."""
        notes = [f"problem: {p}" for p in self.footer.get("problems") or ()]
        notes.extend(f"expectation entry naming no case (remove it): {s}" for s in self.footer.get("staleExpectations") or ())
        for f in self.footer.get("fuzz") or ():
            if isinstance(f, Mapping):
                notes.append(f"fuzz failure: {f.get('machine', '?')} {f.get('rule') or ''} ({f.get('op') or '?'}): "
                             f"{str(f.get('message') or '').partition(chr(10))[0]}")
        return notes


def run_failed(run: SavedRun) -> bool:
    """The run's own verdict (its footer's exit code), else what its cases say."""
    code = run.footer.get("exitCode")
    if isinstance(code, int):
        return code != 0
    return bool(run.problems())


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _value(value: Any) -> str:
    try:
        return _short(wire.dumps(value), _VALUE_CHARS)
    except (wire.WireError, TypeError, ValueError):
        return _short(repr(value), _VALUE_CHARS)


def case_message(case: Mapping[str, Any], *, whole: bool = False) -> str:
    """What went wrong: the adapter's or harness's message (its first line, or ``whole`` up to a few
    thousand characters), then the first differences."""
    message = str(case.get("message") or case.get("outcome") or "")
    message = _short(message, 10 * _MESSAGE_CHARS) if whole else _short(message.partition("\n")[0], _MESSAGE_CHARS)
    parts = [message] if message else []
    diffs = [d for d in case.get("diff") or () if isinstance(d, Mapping)]
    for d in diffs[:3]:
        where = str(d.get("pointer") or "(root)")
        if "expected" in d and "actual" in d:
            parts.append(f"{where}: expected {_value(d['expected'])}, got {_value(d['actual'])}")
        elif "expected" in d:
            parts.append(f"{where}: missing, expected {_value(d['expected'])}")
        else:
            parts.append(f"{where}: unexpected {_value(d.get('actual'))}")
    if len(diffs) > 3:
        parts.append(f"… {len(diffs) - 3} more difference(s)")
    if case.get("outcome") == "xpass":
        parts.append(f"listed as a known failure: {case.get('reason') or ''}".rstrip(": "))
    return "; ".join(parts)


def _count_line(counts: Mapping[str, int]) -> str:
    return ", ".join(f"{counts[o]} {o}" for o in OUTCOMES if counts.get(o)) or "no case"


def _seconds(run: SavedRun) -> str:
    ms = run.footer.get("durationMs")
    return f"{ms / 1000:.1f} s" if isinstance(ms, int | float) else "? s"


# -- text ---------------------------------------------------------------------------------------------


def render_text(runs: Sequence[SavedRun]) -> str:
    """The terminal summary: per run its verdict, counts per area and the problem cases."""
    lines: list[str] = []
    for run in runs:
        verdict = "FAILED" if run_failed(run) else "OK"
        lines.append(display(f"{verdict}: {run.name}: {run.implementation}, revision {run.revision}, "
                             f"started {run.header.get('started', '?')}"))
        lines.append(f"  {_count_line(run.counts())} in {_seconds(run)}")
        by_area: dict[str, Counter[str]] = defaultdict(Counter)
        for c in run.cases:
            by_area[str(c.get("area"))][str(c.get("outcome"))] += 1
        width = max([4, *(len(a) for a in by_area)])
        lines.append("  " + f"{'area':<{width}}" + "".join(f" {o:>8}" for o in OUTCOMES))
        lines.extend(display("  " + f"{area:<{width}}" + "".join(f" {counts.get(o, 0):>8}" for o in OUTCOMES))
                     for area, counts in sorted(by_area.items()))
        problems = run.problems()
        if problems:
            lines.append(f"  problem cases ({len(problems)})")
            for c in problems[:MAX_LISTED]:
                lines.append(display(f"    {str(c.get('outcome')).upper()} [{c.get('id')}] {c.get('description')} "
                                     f"({', '.join(map(str, c.get('requirements') or ()))})"))
                lines.append(display(f"      {case_message(c)}"))
            if len(problems) > MAX_LISTED:
                lines.append(f"    … and {len(problems) - MAX_LISTED} more (every case is in {display(run.name)})")
        lines.extend(display(f"  {note}") for note in run.notes())
        lines.append("")
    return "\n".join(lines)


# -- Markdown -----------------------------------------------------------------------------------------


def _cell(text: str) -> str:
    return markdown_text(text) or " "


def render_markdown(runs: Sequence[SavedRun]) -> str:
    """GitHub-flavoured Markdown for a job summary: a table of the runs, then each run's problem cases."""
    shown = [o for o in OUTCOMES if any(run.counts().get(o) for run in runs)] or ["passed"]
    lines = ["## sessionspec conformance", "",
             "| run | implementation | revision | " + " | ".join(shown) + " | verdict |",
             "|---|---|---|" + "---:|" * len(shown) + "---|"]
    for run in runs:
        counts = run.counts()
        lines.append(f"| {_cell(run.name)} | {_cell(run.implementation)} | {_cell(run.revision)} | "
                     + " | ".join(str(counts.get(o, 0)) for o in shown)
                     + f" | {'❌ failed' if run_failed(run) else '✅ ok'} |")
    for run in runs:
        problems, notes = run.problems(), run.notes()
        if not problems and not notes:
            continue
        lines += ["", f"### {_cell(run.name)}: {len(problems)} problem case(s)", ""]
        if problems:
            lines += ["| case | area | requirements | outcome | what went wrong |", "|---|---|---|---|---|"]
            for c in problems[:MAX_LISTED]:
                lines.append(f"| {_cell(str(c.get('id')))} {_cell(str(c.get('description')))} | {_cell(str(c.get('area')))} | "
                             f"{_cell(', '.join(map(str, c.get('requirements') or ())))} | {_cell(str(c.get('outcome')))} | "
                             f"{_cell(case_message(c))} |")
            if len(problems) > MAX_LISTED:
                lines += ["", f"… and {len(problems) - MAX_LISTED} more; every case is in the report."]
        lines.extend(["", *(f"- {markdown_text(note)}" for note in notes)] if notes else [])
    return "\n".join(lines) + "\n"


# -- GitHub annotations -------------------------------------------------------------------------------

_LEVEL = {"failed": "error", "crashed": "error", "errored": "error", "xpass": "warning"}


def annotation(case: Mapping[str, Any], run_name: str | None = None) -> str:
    """One workflow command for a problem case: ``::error title=…::…`` (``::warning`` for an unexpected pass)."""
    level = _LEVEL.get(str(case.get("outcome")), "error")
    requirements = ", ".join(map(str, case.get("requirements") or ()))
    title = f"{case.get('outcome')} [{case.get('id')}] {requirements}".rstrip()
    text = f"{case.get('description')}: {case_message(case, whole=True)}"
    if run_name:
        text = f"{run_name}: {text}"
    return f"::{level} title={workflow_value(title, prop=True)}::{workflow_value(text)}"


def render_github(runs: Sequence[SavedRun]) -> str:
    """One annotation per problem case (capped per run), one per footer note, and a plain verdict line per run."""
    lines: list[str] = []
    for run in runs:
        name = run.name if len(runs) > 1 else None
        problems = run.problems()
        lines.extend(annotation(c, name) for c in problems[:MAX_LISTED])
        if len(problems) > MAX_LISTED:
            lines.append(f"::warning::{workflow_value(f'{run.name}: {len(problems) - MAX_LISTED} more problem case(s) in the report')}")
        lines.extend(f"::error::{workflow_value(f'{run.name}: {note}')}" for note in run.notes())
        verdict = "FAILED" if run_failed(run) else "OK"
        lines.append(display(f"{verdict}: {run.name}: {_count_line(run.counts())}"))
    return "\n".join(lines) + "\n"


def github_lines(cases: Iterable[Mapping[str, Any]]) -> list[str]:
    """The annotations of a live run's problem cases (``conformance --format github``), capped."""
    problems = [c for c in cases if c.get("outcome") in PROBLEM_OUTCOMES]
    lines = [annotation(c) for c in problems[:MAX_LISTED]]
    if len(problems) > MAX_LISTED:
        lines.append(f"::warning::{len(problems) - MAX_LISTED} more problem case(s); write them all with --report")
    return lines
