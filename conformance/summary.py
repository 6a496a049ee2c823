"""The human summary of a run: per area, per requirement, first failures with diffs."""

from __future__ import annotations

import shlex
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from typing import Any, TextIO

from sessionspec.reference.json_text import display

from .grouping import failure_groups
from .results import FAILING_OUTCOMES, PROBLEM_OUTCOMES, CaseResult, Tally, skip_reasons

__all__ = ["broken_adapter_hint", "render_summary", "requirement_scope"]

_COLUMNS = ("passed", "failed", "crashed", "errored", "skipped", "xfail", "xpass")
"""Table columns: ``failed`` counts every failing case, crashes included; ``crashed`` says how many of them crashed."""
_HEADINGS = {"crashed": "(crashed)"}


def _count(t: Tally, column: str) -> int:
    if column == "failed":
        return sum(t.counts.get(o, 0) for o in FAILING_OUTCOMES)
    return t.counts.get(column, 0)


def _impl_line(info: Mapping[str, Any]) -> str:
    impl = info.get("implementation") or {}
    caps = info.get("capabilities") or []
    return display(f"{impl.get('name', '?')} {impl.get('version', '')} ({impl.get('language', '?')}), "
                   f"spec revision {info.get('specRevision', '?')}"
                   + (f", SQLite layout {info['sqliteLayout']}" if "sqliteLayout" in info else "")
                   + f", {len(caps)} capabilities")


def _table(rows: Sequence[tuple[str, Tally]], label: str) -> list[str]:
    width = max([len(label), *(len(name) for name, _ in rows)])
    head = f"  {label:<{width}}  " + "  ".join(f"{_HEADINGS.get(c, c):>9}" for c in _COLUMNS)
    out = [head]
    for name, t in rows:
        out.append(f"  {name:<{width}}  " + "  ".join(f"{_count(t, c):>9}" for c in _COLUMNS))
    return out


_SOURCE_WORDS = {"ref": "upstream 2f74ac98ba", "project": "a project decision"}


def _source_text(source: str) -> str:
    """A ``source`` entry of a requirement in words: ``S003 §5`` is a seed, ``ref F`` upstream's file F."""
    head, _, rest = source.partition(" ")
    if head in _SOURCE_WORDS:
        return f"{_SOURCE_WORDS[head]} {rest}".rstrip()
    return f"seed {source}" if head.startswith("S0") else source


def requirement_scope(req_id: str, revision: str | None = None) -> str:
    """``REQ-1 (MUST) binds store; source: S003 §4, upstream 2f74ac98ba schema.ts; decisions DEC-20``: who the
    rule binds and where it comes from (spec data), so a failure line says whether it is a seed, upstream or a
    project decision; empty for an unknown id."""
    from sessionspec.spec import load_spec

    entry = load_spec(revision=revision).requirements.get(req_id)
    if entry is None:
        return ""
    sources = [_source_text(str(src)) for src in entry["source"]]
    decisions = entry.get("decisions") or ()
    return (f"{req_id} ({entry['level']}) binds {', '.join(entry['binds'])}; source: {', '.join(sources)}"
            + (f"; decisions {', '.join(decisions)}" if decisions else ""))


def broken_adapter_hint(results: Sequence[CaseResult]) -> str | None:
    """A short diagnosis when every attempted case failed, crashed or errored."""
    attempted = [r for r in results if r.outcome not in ("skipped",)]  # noqa: FURB171 - the set of kinds may grow; kept as a membership test
    if len(attempted) < 2 or any(r.outcome in ("passed", "xpass") for r in attempted):
        return None
    if not all(r.outcome in ("failed", "crashed", "errored", "xfail") for r in attempted):
        return None
    if all(r.outcome == "xfail" for r in attempted):  # only listed known failures: the run is OK
        return None
    first = attempted[0]
    return (
        f"Every one of the {len(attempted)} attempted cases failed or errored. That is almost always a broken "
        "adapter, not a non-conformant implementation: run the adapter by hand, feed it one request line, and "
        "compare with conformance/PROTOCOL.md.\n"
        f"  first problem ({display(first.case.description)} [{first.case.id}]): {display(first.message)}"
    )


def _render_case(r: CaseResult, indent: str = "    ") -> list[str]:
    c = r.case
    lines = [f"{indent}{r.outcome.upper()}: {display(c.description)} [{c.id}]",
             f"{indent}  {c.source}  requirements: {', '.join(c.requirements)}  op: {c.op}"]
    lines.extend(f"{indent}  {display(scope)}" for scope in map(requirement_scope, c.requirements) if scope)
    if r.reason:
        lines.append(f"{indent}  known failure: {display(r.reason)}")
    if r.message:  # an adapter's message (with its stderr tail) may span lines: each continues behind "| "
        first, *rest = r.message.split("\n")
        lines.append(f"{indent}  {display(first)}")
        lines.extend(f"{indent}  | {display(part)}" for part in rest)
    for d in r.differences:
        lines.append(f"{indent}    {display(d.render())}")
    return lines


def render_summary(run: Any, out: TextIO, *, failures_only: bool = False, verbose: bool = False,
                   revision: str | None = None, command: str | None = None) -> None:
    """Write the summary of a :class:`~sessionspec.conformance.runner.RunResult` to ``out``.

    ``revision`` is the format revision whose vectors ran (default: the pinned one); ``command`` the adapter
    command line (``--impl``; None: the in-process reference), which replay hints repeat.
    """
    results: list[CaseResult] = run.results
    from sessionspec.spec.revisions import UnknownRevision, resolve_revision

    out.write(f"sessionspec conformance: {_impl_line(run.implementation)}\n")
    checked = resolve_revision(revision)
    declared = run.implementation.get("specRevision")
    try:
        follows = resolve_revision(declared).id if declared else None
    except UnknownRevision:
        follows = None
    if declared and follows != checked.id:
        out.write(f"  note: the implementation follows spec revision {display(str(declared))}; "
                  f"the suite checks {checked.id}\n")
    else:
        out.write(f"  revision {checked.id} ({checked.title})\n")

    by_area: dict[str, Tally] = defaultdict(Tally)
    by_req: dict[str, Tally] = defaultdict(Tally)
    level: dict[str, str] = {}
    first_problem: dict[str, CaseResult] = {}
    for r in results:
        by_area[r.case.area].add(r.outcome)
        for req in r.case.requirements:
            by_req[req].add(r.outcome)
            level.setdefault(req, r.case.level)
        if r.problem and r.case.area not in first_problem:
            first_problem[r.case.area] = r
    total = Tally()
    for r in results:
        total.add(r.outcome)

    area_rows = [(a, t) for a, t in sorted(by_area.items())
                 if not failures_only or any(t.counts.get(o) for o in PROBLEM_OUTCOMES)]
    out.write("\nby area\n")
    out.write("\n".join(_table([*area_rows, ("total", total)], "area")) + "\n")

    def clean(t: Tally) -> bool:
        return all(t.counts.get(o, 0) == 0 for o in (*PROBLEM_OUTCOMES, "xfail"))

    req_rows = [(f"{r} {level[r]}", t) for r, t in sorted(by_req.items(), key=lambda kv: _req_key(kv[0]))
                if verbose or not clean(t)]
    out.write(f"\nby requirement ({len(by_req)} requirements have cases)\n")
    if req_rows:
        out.write("\n".join(_table(req_rows, "requirement")) + "\n")
    if not failures_only:
        out.write(_requirement_split(by_req) + ("  (list them with --verbose)" if not verbose else "") + "\n")
    reasons = skip_reasons(results)
    if reasons and not failures_only:
        out.write(f"\ntop skip reasons ({sum(n for _, n in reasons)} skipped)\n")
        out.writelines(f"  {n:>5}  {display(m)}\n" for m, n in reasons[:5])
        if len(reasons) > 5:
            out.write(f"  ({len(reasons) - 5} more reasons in the JSONL report, --report)\n")

    _render_groups(results, out, every=failures_only)
    problems = [r for r in results if r.problem]
    if problems:
        if failures_only:
            out.write(f"\nfailures ({len(problems)})\n")
            shown = problems
        else:
            out.write("\nfirst failure per area (all of them with --failures-only)\n")
            shown = list(first_problem.values())
        for r in shown:
            out.write("\n".join(_render_case(r)) + "\n")
    if getattr(run, "stale_expectations", None):
        out.write("\nexpectation entries naming no case of the corpus (remove them):\n")
        out.writelines(f"  {case_id}\n" for case_id in run.stale_expectations)
    out.writelines(f"\nproblem: {display(problem)}\n" for problem in getattr(run, "problems", ()))
    _render_fuzz(run, out, command)
    hint = broken_adapter_hint(results)
    if hint:
        out.write("\n" + hint + "\n")
    parts = [f"{_count(total, c)} {c}" for c in _COLUMNS if c != "crashed" and _count(total, c)]
    crashed = total.counts.get("crashed", 0)
    if crashed:
        parts = [f"{p} (of which {crashed} crashed)" if p.endswith(" failed") else p for p in parts]
    counts = ", ".join(parts)
    verdict = "FAILED" if run.exit_code else "OK"
    out.write(f"\n{verdict}: {len(results)} cases in {run.duration:.1f} s ({counts or 'nothing ran'})\n")


_GROUP_CASES_SHOWN = 10


def _render_groups(results: Sequence[CaseResult], out: TextIO, *, every: bool) -> None:
    """Failures by cause, largest first: one planted bug reads as one finding with its cases."""
    groups = failure_groups(results)
    if not groups:
        return
    count = sum(len(g.results) for g in groups)
    out.write(f"\nfailures by cause ({len(groups)} cause(s), {count} case(s))\n")
    for n, g in enumerate(groups, 1):
        out.write(display(f"  {n}. {g.cause}: {len(g.results)} case(s); requirements {', '.join(g.requirements)}; "
                          f"op(s) {', '.join(g.ops)}") + "\n")
        shown = g.results if every else g.results[:_GROUP_CASES_SHOWN]
        out.writelines(display(f"     - {r.case.id} {r.outcome}: {r.case.description}") + "\n" for r in shown)
        if len(shown) < len(g.results):
            out.write(f"     ... and {len(g.results) - len(shown)} more (all of them with --failures-only)\n")


def _requirement_split(by_req: Mapping[str, Tally]) -> str:
    """Requirements by what their cases say: passed (some case passed, none failed), failed, known-failing
    only, never tried (every case skipped): a requirement whose cases were all skipped was not checked."""
    split = Counter[str]()
    for t in by_req.values():
        if any(t.counts.get(o) for o in PROBLEM_OUTCOMES):
            split["failed"] += 1
        elif t.counts.get("xfail"):
            split["known"] += 1
        elif t.counts.get("passed"):
            split["passed"] += 1
        else:
            split["skipped"] += 1
    return (f"  requirements: {split['passed']} passed, {split['failed']} failed, {split['known']} known failures "
            f"only, {split['skipped']} skipped (never tried: every case skipped)")


def _render_fuzz(run: Any, out: TextIO, command: str | None = None) -> None:
    """Distinct fuzz failures grouped by requirement, then each with its trace; known differences."""
    failures = list(getattr(run, "fuzz_failures", ()))
    if failures:
        by_req: dict[str, int] = defaultdict(int)
        for f in failures:
            for req in f.get("requirements") or ("(no requirement)",):
                by_req[req] += 1
        out.write(f"\nfuzz: {len(failures)} distinct failure(s); by requirement the rule checks: "
                  + ", ".join(f"{r} {n}" for r, n in sorted(by_req.items(), key=lambda kv: _req_key(kv[0]))) + "\n")
        for f in failures:
            expected, actual = f.get("expectedCode"), f.get("actualCode")
            where = f" at {f['pointer']}" if f.get("pointer") else ""
            what = (f"the result differs{where}" if expected is None and actual is None
                    else f"expected {expected or 'a result'}, got {actual or 'a result'}{where}")
            out.write(display(f"  {f.get('machine', '?')} {f.get('rule') or ''} ({f.get('op') or '?'}): {what}") + "\n")
            first = str(f.get("message") or "").splitlines()
            if first:
                out.write(f"    {display(first[0][:300])}\n")
            if f.get("trace"):
                impl = f" --impl {shlex.quote(command)}" if command else ""
                out.write(display(f"    replay with: sessionspec replay {shlex.quote(str(f['trace']))}{impl}") + "\n")
    out.writelines(f"\nfuzz known difference, matched {known['matches']} time(s): {display(known['entry'])}\n" for known in getattr(run, "fuzz_known", ()))
    held = set(getattr(run, "fuzz_held", ()))
    unmatched = [u for u in getattr(run, "fuzz_unmatched", ()) if u not in held]
    if unmatched:
        out.write(f"\nfuzz expectation entries no difference matched in this run ({len(unmatched)}); a deep run "
                  "(--fuzz 100 or more) fails on them:\n")
        out.writelines(f"  {display(entry)}\n" for entry in unmatched)
    if held:
        out.write(f"\nfuzz expectation entries this run did not reach, each held by the test it names ({len(held)}):\n")
        out.writelines(f"  {display(entry)}\n" for entry in sorted(held))


def _req_key(label: str) -> tuple[str, int]:
    family, _, number = label.split()[0].partition("-")
    return (family, int(number) if number.isdigit() else 0)

