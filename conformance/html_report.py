"""One self-contained HTML page for one or many conformance runs.

The page is rendered from JSONL report lines (``spec/protocol/report.json``),
never from live objects, so a run recorded months ago and the run at hand
look the same: a header per run, a matrix of runs x rule families (expandable
to requirements), the failing cases with requirement text, input, expected vs
actual and a replay command, and the fuzz failures with their shrunk traces.

Reports come from untrusted adapters: every string taken from one goes
through :func:`esc` (HTML escaping plus visible escapes for characters HTML
cannot carry: lone surrogates, controls, noncharacters), every value shown is
capped, and nothing from a report reaches a ``<script>``, a selector or a URL.
The page uses no network and no external asset; without JavaScript it still
shows everything (the filters and expanders are the only scripted parts).
"""

from __future__ import annotations

import difflib
import html
import json
import math
import re
import shlex
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson
from sessionspec import __version__

from .compare import normalise_reply

if TYPE_CHECKING:
    from sessionspec.reference import RevisionLike

__all__ = [
    "MAX_FULL_PER_REQUIREMENT",
    "MAX_LISTED_PER_REQUIREMENT",
    "MAX_PAGE_CASES",
    "MAX_PAGE_LINES",
    "OUTCOME_ORDER",
    "PROBLEM_VIEW",
    "RunView",
    "esc",
    "render_html",
    "run_from_lines",
]

OUTCOME_ORDER: tuple[str, ...] = ("passed", "failed", "crashed", "errored", "xpass", "xfail", "skipped")
"""Display order; an outcome not listed here (a newer report) is shown after these."""

LABELS: dict[str, str] = {
    "passed": "passed",
    "failed": "failed",
    "crashed": "crashed",
    "errored": "errored",
    "xpass": "unexpected pass",
    "xfail": "known failure",
    "skipped": "skipped",
}

PROBLEM_VIEW = frozenset({"failed", "crashed", "errored", "xpass", "xfail"})
"""Outcomes listed among the failing cases (known failures included, filterable)."""

# Caps: what a page shows of one value. The full JSON is one click away, itself capped.
_MAX_TEXT = 10_000  # a message, description or requirement text
_MAX_SHORT = 300  # a label, an id, a summary line
_MAX_FULL_JSON = 20_000  # the "full JSON" of one value
_MAX_DIFF_LINES = 1_000  # per side, for the line diff
_MAX_DIFF_SHOWN = 400  # lines of one line diff
_MAX_LINE = 2_000  # characters of one diff line
_MAX_ELIDED = 8_000  # characters of one elided value
_ELIDE_DEPTH = 4
_ELIDE_ITEMS = 25
_ELIDE_STRING = 160
# What one page shows of its failing cases (issue 25: 10,000 failures made a 93 MB page that took Chromium 30 s to
# open). Per requirement (a case's first one) the first MAX_FULL_PER_REQUIREMENT failing cases are shown in full and
# the next MAX_LISTED_PER_REQUIREMENT as one line each, taken a rank at a time across the requirements so that each
# has its first case shown before any has its second; the page holds at most MAX_PAGE_CASES cases in full (their
# items at most MAX_FULL_CHARS characters together, one item at most MAX_CASE_CHARS) and MAX_PAGE_LINES listed ones
# (at most MAX_LISTED_CHARS). The rest are counted, per requirement, and left to the JSONL report.
MAX_FULL_PER_REQUIREMENT = 5
MAX_LISTED_PER_REQUIREMENT = 50
MAX_PAGE_CASES = 300
MAX_PAGE_LINES = 2_000
MAX_FULL_CHARS = 2_500_000
MAX_LISTED_CHARS = 1_000_000
MAX_CASE_CHARS = 100_000
MAX_PASSED_ROWS = 1_000  # passed cases listed per run
_MAX_COUNT_ROWS = 300  # rows of the per-requirement table of what is not shown
_MAX_MATRIX_FAMILIES = 200  # rule families in the matrix (the rest counted in one row)
_MAX_MATRIX_REQUIREMENTS = 1_000  # requirement rows in the matrix
_MAX_GROUPS, _MAX_GROUP_CASES = 100, 50  # groups by cause, and case ids named per group
_MAX_FUZZ_CHARS = 1_500_000  # the fuzz failures' items together
_MAX_TRACE_BYTES = 5_000_000
_MAX_TRACE_STEPS = 50

# Characters an HTML document cannot carry as text: C0/C1 controls (except tab, LF, CR),
# lone surrogates and noncharacters, and those that would reorder or break what a reader sees (bidirectional
# embeddings, overrides and isolates, line and paragraph separators: json_text.UNPRINTABLE_CLASS). They are shown as visible \uXXXX escapes.
_BAD = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff\ufdd0-\ufdef\ufffe\uffff"
    "\U0001fffe\U0001ffff\U0002fffe\U0002ffff\U0003fffe\U0003ffff\U0004fffe\U0004ffff"
    "\U0005fffe\U0005ffff\U0006fffe\U0006ffff\U0007fffe\U0007ffff\U0008fffe\U0008ffff"
    "\U0009fffe\U0009ffff\U000afffe\U000affff\U000bfffe\U000bffff\U000cfffe\U000cffff"
    "\U000dfffe\U000dffff\U000efffe\U000effff\U000ffffe\U000fffff\U0010fffe\U0010ffff]"
)


def _code_point(match: re.Match[str]) -> str:
    c = ord(match.group())
    return f"\\u{c:04x}" if c <= 0xFFFF else f"\\U{c:08x}"


def _marked_code_point(match: re.Match[str]) -> str:
    return f'<span class="cp" title="not a valid character here">{_code_point(match)}</span>'


_BAD_ASCII = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def esc(value: Any) -> str:
    """HTML text for element content: escaped, invalid characters shown as marked escapes."""
    text = html.escape(value if isinstance(value, str) else _scalar_text(value), quote=True)
    return (_BAD_ASCII if text.isascii() else _BAD).sub(_marked_code_point, text)


def attr(value: Any) -> str:
    """An attribute value (inside double quotes), or text where no markup may go (``title``, ``option``)."""
    text = html.escape(value if isinstance(value, str) else _scalar_text(value), quote=True)
    return (_BAD_ASCII if text.isascii() else _BAD).sub(_code_point, text)


def _scalar_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(int(value))
    if isinstance(value, float):
        return json.dumps(value)
    return _short_json(value)


def _cap(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text) - limit:,} more characters)"


# -- values ----------------------------------------------------------------------------------


class _TooDeep(ValueError):
    """A value nested beyond what the page prints in full (orjson's limit, 254 levels)."""


def _full_json(value: Any, *, compact: bool = False) -> str:
    """JSON text of a value (any int, lone surrogates kept: escaped later); :class:`_TooDeep` past 254 levels.

    Payloads may be 10,000 levels deep (DEC-16). Printing one costs a walk of every level for a
    text nobody reads, so the page shows such a value elided and points to the report file.
    """
    try:
        return orjson.dumps(value, option=0 if compact else orjson.OPT_INDENT_2).decode("utf-8")
    except orjson.JSONEncodeError as exc:
        if "ecursion" in str(exc):
            raise _TooDeep from None
    except TypeError:
        pass
    try:  # lone surrogates, ints beyond 64 bits: the standard library, within its recursion limit
        if compact:
            return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        return json.dumps(value, ensure_ascii=False, indent=2)
    except RecursionError:
        raise _TooDeep from None
    except (ValueError, TypeError):
        return repr(value)


def _short_json(value: Any) -> str:
    """One line of JSON text, capped for a table cell or a label."""
    try:
        return _cap(_full_json(value, compact=True), _MAX_SHORT)
    except _TooDeep:
        return _cap(_elided(value).replace("\n", " "), _MAX_SHORT)


_TOO_DEEP_NOTE = ('<p class="note">This value is nested more than 254 levels deep; the page shows it elided. '
                  "The report file holds it in full.</p>")


_encode_str: Callable[[str], str] = json.encoder.encode_basestring


def _elided(value: Any) -> str:
    """Indented JSON with deep containers, long lists and long strings elided, at most about ``_MAX_ELIDED``
    characters in all (past that, a container's remaining members are counted, not shown)."""
    return _elide(value, 0, "", [_MAX_ELIDED])


def _elide(value: Any, depth: int, indent: str, budget: list[int]) -> str:
    if isinstance(value, str):
        if len(value) > _ELIDE_STRING:
            text = _encode_str(value[:_ELIDE_STRING])[:-1] + f'…" (+{len(value) - _ELIDE_STRING:,} chars)'
        else:
            text = _encode_str(value)
        budget[0] -= len(text)
        return text
    if isinstance(value, dict | list):
        if not value:
            return "{}" if isinstance(value, dict) else "[]"
        what, ends = ("key", "{}") if isinstance(value, dict) else ("item", "[]")
        if depth >= _ELIDE_DEPTH:
            return f"{ends[0]}… {len(value)} {what}{'s' if len(value) != 1 else ''}{ends[1]}"
        inner = indent + "  "
        parts = []
        members = list(value.items())[:_ELIDE_ITEMS] if isinstance(value, dict) else value[:_ELIDE_ITEMS]
        for member in members:
            if budget[0] <= 0:
                break
            if isinstance(value, dict):
                key, item = member
                parts.append(f"{inner}{_elide(str(key), depth, inner, budget)}: {_elide(item, depth + 1, inner, budget)}")
            else:
                parts.append(f"{inner}{_elide(member, depth + 1, inner, budget)}")
            budget[0] -= len(inner) + 2
        budget[0] -= len(indent) + 2
        if len(value) > len(parts):
            parts.append(f"{inner}… {len(value) - len(parts)} more {what}s")
        return ends[0] + "\n" + ",\n".join(parts) + f"\n{indent}{ends[1]}"
    text = _scalar_text(value) if value is not None else "null"
    budget[0] -= len(text)
    return text


def _value_block(value: Any, what: str) -> str:
    """The elided value, with its full JSON one click away when the elided view hides anything."""
    short = _elided(value)
    out = f'<pre class="json">{esc(short)}</pre>'
    try:
        full = _full_json(value)
    except _TooDeep:
        return out + _TOO_DEEP_NOTE
    if full != short:
        note = ""
        if len(full) > _MAX_FULL_JSON:
            note = (f'<p class="note">Shown: the first {_MAX_FULL_JSON:,} of {len(full):,} characters; '
                    "the report file holds the rest.</p>")
            full = full[:_MAX_FULL_JSON]
        out += (f'<details class="full"><summary>Full JSON of {esc(what)}</summary>{note}'
                f'<pre class="json">{esc(full)}</pre></details>')
    return out


# -- runs ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RunView:
    """One run as the page sees it: report lines plus where it came from."""

    source: str
    header: Mapping[str, Any]
    cases: Sequence[Mapping[str, Any]]
    footer: Mapping[str, Any]
    base: Path | None = None  # the report's folder, for finding fuzz traces

    @property
    def impl(self) -> Mapping[str, Any]:
        info = self.header.get("implementation")
        inner = info.get("implementation") if isinstance(info, dict) else None
        return inner if isinstance(inner, dict) else {}

    @property
    def info(self) -> Mapping[str, Any]:
        info = self.header.get("implementation")
        return info if isinstance(info, dict) else {}

    @property
    def name(self) -> str:
        name = self.impl.get("name")
        return _cap(name, 80) if isinstance(name, str) and name else "implementation"

    @property
    def version(self) -> str:
        version = self.impl.get("version")
        return _cap(_scalar_text(version), 60) if version is not None else ""

    def counts(self) -> Counter[str]:
        return Counter(str(c.get("outcome")) for c in self.cases)

    def replay_prefix(self) -> list[str]:
        command = self.header.get("command")
        if isinstance(command, list) and command and all(isinstance(p, str) for p in command):
            return ["--impl", shlex.join(command)]
        return []


def run_from_lines(lines: Sequence[Mapping[str, Any]], source: str, base: Path | None = None) -> RunView:
    """A run from report lines (header, cases, footer), e.g. those of a run at hand."""
    header, *cases, footer = lines
    return RunView(source, header, cases, footer, base)


# -- requirements and families ----------------------------------------------------------------

_REQ_ID = re.compile(r"^([A-Z][A-Z0-9]*)-(\d+)$")


def _family_of(req_id: str, requirements: Mapping[str, Mapping[str, Any]]) -> str:
    entry = requirements.get(req_id)
    if entry and isinstance(entry.get("family"), str):
        return str(entry["family"])
    match = _REQ_ID.match(req_id)
    return match.group(1) if match else "other"


def _req_sort_key(req_id: str) -> tuple[str, int, str]:
    match = _REQ_ID.match(req_id)
    return (match.group(1), int(match.group(2)), "") if match else ("~", 0, req_id)


def _case_requirements(case: Mapping[str, Any]) -> list[str]:
    reqs = case.get("requirements")
    if not isinstance(reqs, list):
        return []
    return [_cap(r, 60) for r in reqs if isinstance(r, str)][:50]


# -- status cells -----------------------------------------------------------------------------


def _status(counts: Mapping[str, int]) -> tuple[str, str]:
    """(css class, text label) of a tally: the worst outcome decides; colour is never alone."""
    if any(counts.get(o, 0) for o in ("failed", "crashed", "xpass")):
        return "fail", "FAIL"
    if counts.get("errored", 0):
        return "error", "ERROR"
    if counts.get("xfail", 0):
        return "known", "KNOWN"
    if counts.get("passed", 0):
        return "pass", "PASS"
    if counts.get("skipped", 0):
        return "skip", "SKIP"
    if sum(counts.values()):
        return "other", "OTHER"
    return "none", "NO CASES"


def _ordered(counts: Mapping[str, int]) -> list[tuple[str, int]]:
    known = [(o, counts.get(o, 0)) for o in OUTCOME_ORDER if counts.get(o, 0)]
    extra = sorted((o, n) for o, n in counts.items() if o not in OUTCOME_ORDER and n)
    return known + extra


_PLURALS = {"known failure": "known failures", "unexpected pass": "unexpected passes"}


def _label(outcome: str, n: int = 1) -> str:
    label = LABELS.get(outcome, _cap(outcome, 30))
    return _PLURALS.get(label, label) if n != 1 else label


def _count_text(counts: Mapping[str, int]) -> str:
    return ", ".join(f"{n:,} {_label(o, n)}" for o, n in _ordered(counts))


def _cell(counts: Mapping[str, int], link: str | None = None) -> str:
    css, label = _status(counts)
    text = _count_text(counts) or "no cases"
    counts_html = esc(text)
    if link and css in ("fail", "error", "known"):
        counts_html = f'<a href="#failures" {link}>{counts_html}</a>'
    return f'<td class="st-{css}"><span class="badge">{label}</span> <span class="counts">{counts_html}</span></td>'


def _badges(counts: Mapping[str, int]) -> str:
    return " ".join(f'<span class="pill o-{attr(o) if o in LABELS else "other"}">{n:,} {esc(_label(o, n))}</span>'
                    for o, n in _ordered(counts)) or '<span class="pill">no cases</span>'


# -- page parts -------------------------------------------------------------------------------


def _dl(rows: Iterable[tuple[str, str]]) -> str:
    return "<dl>" + "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in rows if v) + "</dl>"


_HEADER_KNOWN = {"kind", "format", "implementation", "command", "sessionspec", "specRevision", "revision",
                 "started", "selection", "expectations"}
_FOOTER_KNOWN = {"kind", "counts", "durationMs", "exitCode", "staleExpectations", "problems", "fuzz", "fuzzKnown"}
_IMPL_KNOWN = {"implementation", "specRevision", "sqliteLayout", "capabilities", "protocolVersion", "codeMap", "revision"}


def _run_header(index: int, run: RunView, tag: str) -> str:
    h, f, info, impl = run.header, run.footer, run.info, run.impl
    caps = info.get("capabilities")
    caps_html = (" ".join(f"<code>{esc(_cap(_scalar_text(c), 60))}</code>" for c in caps[:100])
                 if isinstance(caps, list) and caps else "none claimed")
    suite_rev = h.get("revision") if h.get("revision") is not None else h.get("specRevision")
    impl_rev = info.get("revision") if info.get("revision") is not None else info.get("specRevision")
    revision = esc(_cap(_scalar_text(suite_rev), 80)) if suite_rev is not None else "not recorded"
    if impl_rev is not None and impl_rev != suite_rev:
        revision += f" (the implementation follows {esc(_cap(_scalar_text(impl_rev), 80))})"
    duration = f.get("durationMs")
    exit_code = f.get("exitCode")
    rows: list[tuple[str, str]] = [
        ("implementation", esc(run.name) + (f' (<span class="url">{esc(_cap(impl["homepage"], 200))}</span>)'
                                            if isinstance(impl.get("homepage"), str) else "")),
        ("version", esc(run.version) or "not given"),
        ("language", esc(_cap(_scalar_text(impl.get("language")), 120)) or "not given"),
        ("revision", revision),
        ("capabilities", caps_html),
        ("date", esc(_cap(_scalar_text(h.get("started")), 60))),
        ("counts", _badges(run.counts())),
        ("duration", f"{duration / 1000:.1f} s" if isinstance(duration, int | float) else ""),
        ("exit status", esc(_scalar_text(exit_code)) + (" (failed)" if exit_code else " (ok)")
         if isinstance(exit_code, int) else ""),
        ("adapter command", f"<code>{esc(_cap(shlex.join(h['command']), _MAX_SHORT))}</code>"
         if isinstance(h.get("command"), list) and all(isinstance(p, str) for p in h["command"])
         else "the reference implementation, in-process"),
        ("expectation file", f"<code>{esc(_cap(h['expectations'], _MAX_SHORT))}</code>"
         if isinstance(h.get("expectations"), str) else ""),
        ("selection", esc(_cap(", ".join(_scalar_text(s) for s in h["selection"]), _MAX_SHORT))
         if isinstance(h.get("selection"), list) and h["selection"] else ""),
        ("suite", f"sessionspec {esc(_cap(_scalar_text(h.get('sessionspec')), 60))}"),
        ("report", f"<code>{esc(_cap(run.source, _MAX_SHORT))}</code>"),
    ]
    if not impl and info:
        rows.append(("start", _value_block(info, "the start reply")))
    for key in sorted(k for k in h if k not in _HEADER_KNOWN)[:20]:
        rows.append((esc(_cap(key, 60)), _value_block(h[key], key)))
    for key in sorted(k for k in info if k not in _IMPL_KNOWN)[:20]:
        if key != "implementation":
            rows.append((esc(_cap(key, 60)), esc(_cap(_scalar_text(info[key]), _MAX_SHORT))))
    for key in sorted(k for k in f if k not in _FOOTER_KNOWN)[:20]:
        rows.append((esc(_cap(key, 60)), _value_block(f[key], key)))
    extra = ""
    problems = f.get("problems")
    if isinstance(problems, list) and problems:
        extra += ("<h4>Problems</h4><ul>" + "".join(f"<li>{esc(_cap(_scalar_text(p), _MAX_TEXT))}</li>"
                                                     for p in problems[:200]) + "</ul>")
    stale = f.get("staleExpectations")
    if isinstance(stale, list) and stale:
        extra += ("<h4>Expectation entries naming no case (remove them)</h4><ul>"
                  + "".join(f"<li><code>{esc(_cap(_scalar_text(s), _MAX_SHORT))}</code></li>" for s in stale[:500])
                  + "</ul>")
    known = f.get("fuzzKnown")
    if isinstance(known, list) and known:
        items = []
        for entry in known[:200]:
            if not isinstance(entry, dict):
                entry = {"entry": entry}
            matches = entry.get("matches")
            items.append(f"<li><code>{esc(_short_json(entry.get('entry')))}</code>"
                         + (f" — {esc(_cap(entry['reason'], _MAX_TEXT))}" if isinstance(entry.get("reason"), str) else "")
                         + (f" ({matches:,} match{'es' if matches != 1 else ''})" if isinstance(matches, int) else "")
                         + "</li>")
        extra += "<h4>Known fuzz differences (expectation file)</h4><ul>" + "".join(items) + "</ul>"
    title = f"{index}. {esc(run.name)} {esc(run.version)}".rstrip() + (f' <span class="ver">({esc(tag)})</span>' if tag else "")
    return f'<article class="run" id="run-{index}" aria-labelledby="run-{index}-h"><h3 id="run-{index}-h">{title}</h3>{_dl(rows)}{extra}</article>'


def _matrix(runs: Sequence[RunView], tags: Sequence[str], requirements: Mapping[str, Mapping[str, Any]],
            families: Mapping[str, Mapping[str, Any]]) -> tuple[str, dict[str, int]]:
    """The runs x families table (requirement rows hidden until expanded); family -> index."""
    per_family: list[dict[str, Counter[str]]] = []
    per_req: list[dict[str, Counter[str]]] = []
    seen_families: set[str] = set()
    seen_reqs: set[str] = set()
    for run in runs:
        fam_counts: dict[str, Counter[str]] = {}
        req_counts: dict[str, Counter[str]] = {}
        for case in run.cases:
            outcome = str(case.get("outcome"))
            reqs = _case_requirements(case)
            for fam in {_family_of(r, requirements) for r in reqs} or {"other"}:
                fam_counts.setdefault(fam, Counter())[outcome] += 1
            for r in dict.fromkeys(reqs):
                req_counts.setdefault(r, Counter())[outcome] += 1
        per_family.append(fam_counts)
        per_req.append(req_counts)
        seen_families.update(fam_counts)
        seen_reqs.update(req_counts)
    order = [f for f in families if f in seen_families] + sorted(seen_families - set(families))
    index = {fam: i for i, fam in enumerate(order)}
    reqs_by_family: dict[str, list[str]] = {}
    for r in sorted(seen_reqs, key=_req_sort_key):
        reqs_by_family.setdefault(_family_of(r, requirements), []).append(r)

    head = "".join(f'<th scope="col"><a href="#run-{i}">{i}. {esc(run.name)}</a> <span class="ver">{esc(run.version)}'
                   + (f" ({esc(tag)})" if tag else "") + "</span>"
                   + f' <span class="rev">revision {esc(_cap(_scalar_text(_run_revision(run)), 80))}</span></th>'
                   for i, (run, tag) in enumerate(zip(runs, tags, strict=True), 1))
    body = []
    req_rows = 0
    for fam in order[:_MAX_MATRIX_FAMILIES]:
        i = index[fam]
        title = families.get(fam, {}).get("title")
        title_html = f' <span class="title">{esc(_cap(title, 120))}</span>' if isinstance(title, str) else ""
        n_reqs = len(reqs_by_family.get(fam, ()))
        cells = "".join(_cell(per_family[k].get(fam, Counter()), f'data-run="{k + 1}" data-family="{i}"')
                        for k in range(len(runs)))
        rows = [f'<tr class="fam"><th scope="row"><button type="button" class="expand" aria-expanded="false" '
                f'aria-controls="fam-{i}-reqs" data-fam="{i}"><span class="sign" aria-hidden="true">+</span> '
                f'<span class="fid">{esc(fam)}</span>{title_html} <span class="nreq">({n_reqs} requirement'
                f'{"s" if n_reqs != 1 else ""})</span></button></th>{cells}</tr>']
        fam_reqs = reqs_by_family.get(fam, [])
        room = max(0, _MAX_MATRIX_REQUIREMENTS - req_rows)
        req_rows += min(room, len(fam_reqs))
        for r in fam_reqs[:room]:
            entry = requirements.get(r, {})
            level = entry.get("level")
            r_title = entry.get("title")
            label = (f'<span class="rid">{esc(r)}</span>'
                     + (f' <span class="level">{esc(level)}</span>' if isinstance(level, str) else "")
                     + (f' <span class="title">{esc(_cap(r_title, 120))}</span>' if isinstance(r_title, str)
                        else ' <span class="title">(not in this spec)</span>'))
            cells = "".join(_cell(per_req[k].get(r, Counter())) for k in range(len(runs)))
            rows.append(f'<tr class="req" hidden><th scope="row">{label}</th>{cells}</tr>')
        if len(fam_reqs) > room:
            rows.append(f'<tr class="req" hidden><th scope="row" colspan="{len(runs) + 1}">{len(fam_reqs) - room:,} more '
                        f'requirement(s) not shown (a page shows {_MAX_MATRIX_REQUIREMENTS:,} requirement rows)</th></tr>')
        body.append(f'<tbody id="fam-{i}-reqs">' + "\n".join(rows) + "</tbody>\n")
    if len(order) > _MAX_MATRIX_FAMILIES:
        body.append(f'<tbody><tr><th scope="row" colspan="{len(runs) + 1}">{len(order) - _MAX_MATRIX_FAMILIES:,} more rule '
                    f'families not shown (a page shows {_MAX_MATRIX_FAMILIES:,}); their cases count in "all cases"</th></tr></tbody>')
    totals = "".join(_cell(run.counts()) for run in runs)
    table = (
        '<div class="scroll" role="region" aria-label="results matrix" tabindex="0"><table class="matrix">'
        f'<caption>Cases per rule family and run; a case counts once in each family its requirements belong to.</caption>'
        f'<thead><tr><th scope="col">rule family</th>{head}</tr></thead>'
        + "".join(body)
        + f'<tfoot><tr><th scope="row">all cases</th>{totals}</tr></tfoot></table></div>'
    )
    return table, index


def _actual_view(reply: Any) -> Any:
    """A reply in the shape of an expectation: ``{"result": …}`` or ``{"rejected": {…}}``."""
    if not isinstance(reply, dict):
        return reply
    kind = reply.get("kind")
    if kind == "result" and "result" in reply:
        return {"result": reply["result"]}
    if kind == "rejected":
        return {"rejected": {k: v for k, v in reply.items() if k not in ("seq", "kind")}}
    return {k: v for k, v in reply.items() if k != "seq"}


def _line_diff(expected: Any, actual: Any) -> str:
    """Expected vs actual as a unified diff of their indented JSON (``-`` expected, ``+`` actual)."""
    try:
        left = _full_json(expected).splitlines()
        right = _full_json(actual).splitlines()
    except _TooDeep:
        return (_value_block(expected, "the expected reply") + _value_block(actual, "the actual reply"))
    if len(left) > _MAX_DIFF_LINES or len(right) > _MAX_DIFF_LINES:
        return (f'<p class="note">The values are too long for a line diff ({len(left):,} and {len(right):,} lines).</p>'
                + _value_block(expected, "the expected reply") + _value_block(actual, "the actual reply"))
    if max(map(len, left), default=0) <= _MAX_LINE and max(map(len, right), default=0) <= _MAX_LINE:
        # escape each side once (escaping maps equal lines to equal lines and adds no line breaks)
        left, right = esc("\n".join(left)).split("\n"), esc("\n".join(right)).split("\n")
        escaped = True
    else:
        escaped = False
    lines = list(difflib.unified_diff(left, right, "expected", "actual", n=3, lineterm=""))
    if not lines:
        return '<p class="note">The two values print the same (the comparison may ignore or normalise fields).</p>'
    out = []
    for number, line in enumerate(lines):
        if not escaped:
            line = esc(_cap(line, _MAX_LINE))
        if number < 2:  # "--- expected", "+++ actual"
            css = "hd"
        elif line.startswith("@@"):
            css = "hunk"
        elif line.startswith("-"):
            css = "del"
        elif line.startswith("+"):
            css = "add"
        else:
            css = "ctx"
        out.append(f'<span class="{css}">{line}</span>')
        if len(out) >= _MAX_DIFF_SHOWN and number + 1 < len(lines):
            out.append(f'<span class="hunk">… {len(lines) - number - 1:,} more diff lines not shown; '
                       'the report file holds both values in full</span>')
            break
    return '<pre class="diff" aria-label="line diff: lines starting with - are expected, + actual">' + "\n".join(out) + "</pre>"


def _differences(diff: Any) -> str:
    if not isinstance(diff, list) or not diff:
        return ""
    rows = []
    for d in diff[:100]:
        if not isinstance(d, dict):
            rows.append(f'<tr><td colspan="4">{esc(_cap(_scalar_text(d), _MAX_SHORT))}</td></tr>')
            continue
        pointer = d.get("pointer") or "(root)"
        cells = [f"<code>{esc(_cap(_scalar_text(pointer), _MAX_SHORT))}</code>",
                 esc(_cap(_scalar_text(d.get("kind")), 40))]
        for key in ("expected", "actual"):
            cells.append(f"<code>{esc(_short_json(d[key]))}</code>" if key in d else "—")
        rows.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    more = f'<p class="note">… {len(diff) - 100} more differences</p>' if len(diff) > 100 else ""
    return ('<div class="scroll"><table class="diffs"><thead><tr><th scope="col">where</th><th scope="col">kind</th>'
            '<th scope="col">expected</th><th scope="col">actual</th></tr></thead><tbody>'
            + "".join(rows) + "</tbody></table></div>" + more)


def _comparison(op: Any, args: Any, expected: Any, reply: Any, diff: Any) -> str:
    parts = []
    table = _differences(diff)
    if table:
        parts.append("<h5>Differences found</h5>" + table)
    if expected is not None and reply is not None:
        actual = reply
        if isinstance(op, str) and isinstance(args, dict) and isinstance(reply, dict):
            try:
                actual = normalise_reply(op, args, reply)
            except Exception:  # noqa: BLE001 - a hostile reply shape: show it as it came
                actual = reply
        parts.append("<h5>Expected vs actual</h5>" + _line_diff(expected, _actual_view(actual)))
    elif expected is not None:
        parts.append("<h5>Expected</h5>" + _value_block(expected, "the expected reply")
                     + '<p class="note">No reply was recorded.</p>')
    return "".join(parts)


_CODE_SPAN = re.compile(r"`([^`\n]+)`")


def _inline_code(text: Any) -> str:
    """A requirement's Markdown text as HTML: each `code` span a <code> element, everything escaped
    (the spans' content too), nothing else of Markdown interpreted."""
    raw = _scalar_text(text)
    out, pos = [], 0
    for m in _CODE_SPAN.finditer(raw):
        out.append(esc(raw[pos:m.start()]))
        out.append(f"<code>{esc(m.group(1))}</code>")
        pos = m.end()
    out.append(esc(raw[pos:]))
    return "".join(out)


def _requirement_text(reqs: Sequence[str], requirements: Mapping[str, Mapping[str, Any]]) -> str:
    if not reqs:
        return ""
    items = []
    for r in reqs:
        entry = requirements.get(r)
        if entry is None:
            items.append(f"<dt>{esc(r)}</dt><dd>not a requirement of this spec</dd>")
            continue
        level = entry.get("level", "")
        items.append(f'<dt>{esc(r)} <span class="level">{esc(level)}</span> {_inline_code(entry.get("title", ""))}</dt>'
                     f"<dd>{_inline_code(_cap(_scalar_text(entry.get('text', '')), _MAX_TEXT))}</dd>")
    return '<h5>Requirements</h5><dl class="reqs">' + "".join(items) + "</dl>"


def _replay(parts: Sequence[str]) -> str:
    return f'<h5>Replay</h5><pre class="cmd"><code>{esc(shlex.join(parts))}</code></pre>'


_GENERIC_DIFF = re.compile(r"result differs in [0-9]+ place\(s\)")


def _case_head(run_index: int, case: Mapping[str, Any], family_index: Mapping[str, int],
               requirements: Mapping[str, Mapping[str, Any]], css_class: str) -> tuple[str, str]:
    """A failing case's ``<li>`` start tag (what the filters read) and its one-line summary."""
    outcome = str(case.get("outcome"))
    label = LABELS.get(outcome, _cap(outcome, 30))
    case_id = _cap(_scalar_text(case.get("id")), 80)
    description = _scalar_text(case.get("description"))
    reqs = _case_requirements(case)
    fams = sorted({family_index.get(_family_of(r, requirements), -1) for r in reqs} or {family_index.get("other", -1)})
    message = _scalar_text(case.get("message"))
    search = " ".join([case_id, _cap(description, 500), " ".join(reqs), _scalar_text(case.get("area")),
                       _cap(message, 500), label]).lower()
    css, _ = _status({outcome: 1})
    meta = [f'<span class="area">{esc(_cap(_scalar_text(case.get("area")), 40))}</span>',
            f'<span class="reqs">{esc(", ".join(reqs))}</span>' if reqs else ""]
    start = (f'<li class="{css_class}" data-run="{run_index}" data-outcome="{attr(outcome)}" '
             f'data-fams=" {" ".join(str(i) for i in fams)} " data-text="{attr(search)}">')
    summary = (f'<span class="badge st-{css}">{esc(label.upper())}</span> '
               f'<span class="runref">run {run_index}</span> <code class="cid">{esc(case_id)}</code> '
               f'<span class="desc">{esc(_cap(description, _MAX_SHORT))}</span> {" ".join(m for m in meta if m)}')
    return start, summary


def _listed_item(run_index: int, case: Mapping[str, Any], family_index: Mapping[str, int],
                 requirements: Mapping[str, Mapping[str, Any]], why: str) -> str:
    """A failing case past the page's cap for showing cases in full: its summary line, and why that is all."""
    start, summary = _case_head(run_index, case, family_index, requirements, "case listed")
    message = _scalar_text(case.get("message")).strip().split("\n", 1)[0]
    said = f' <span class="msg1">{esc(_cap(message, 160))}</span>' if message else ""
    return f'{start}<p class="line">{summary}{said} <span class="note">({why})</span></p></li>'


def _case_item(run_index: int, run: RunView, case: Mapping[str, Any], family_index: Mapping[str, int],
               requirements: Mapping[str, Mapping[str, Any]]) -> str:
    start, summary = _case_head(run_index, case, family_index, requirements, "case")
    case_id = _cap(_scalar_text(case.get("id")), 80)
    reqs = _case_requirements(case)
    message = _scalar_text(case.get("message"))
    body = []
    reply = case.get("reply")
    own = _scalar_text(reply.get("message")) if isinstance(reply, dict) and reply.get("message") is not None else ""
    if own:  # what the adapter itself said (a rejection's or an error's message)
        body.append(f'<h5>Adapter\'s message</h5><pre class="msg">{esc(_cap(own, _MAX_TEXT))}</pre>')
    if message and message != own and not (_GENERIC_DIFF.fullmatch(message) and case.get("diff")):
        # the harness's verdict; "result differs in N place(s)" adds nothing to the differences table below
        body.append(f'<h5>Harness\'s verdict</h5><pre class="msg">{esc(_cap(message, _MAX_TEXT))}</pre>')
    crash = case.get("crash")
    if isinstance(crash, dict):
        body.append(f'<h5>Implementation crash</h5><p class="crash"><code>{esc(_cap(_scalar_text(crash.get("class")), 200))}</code>: '
                    f'{esc(_cap(_scalar_text(crash.get("message")), _MAX_TEXT))}</p>')
    elif crash is not None:
        body.append(f'<h5>Implementation crash</h5>{_value_block(crash, "the crash")}')
    if isinstance(case.get("reason"), str):
        body.append(f'<h5>Known-failure reason</h5><p>{esc(_cap(case["reason"], _MAX_TEXT))}</p>')
    body.append(_requirement_text(reqs, requirements))
    request = case.get("request")
    op = request.get("op") if isinstance(request, dict) else None
    args = request.get("args") if isinstance(request, dict) else None
    body.append(_comparison(op, args, case.get("expected"), case.get("reply"), case.get("diff")))
    if request is not None:
        body.append(f"<h5>Input (op <code>{esc(_cap(_scalar_text(op), 60))}</code>)</h5>"
                    + _value_block(args if args is not None else request, "the input"))
    if isinstance(case.get("source"), str):
        body.append(f'<p class="note">Stored in <code>{esc(_cap(case["source"], _MAX_SHORT))}</code> '
                    "(the full input, where the report elides deep values).</p>")
    body.append(_replay(["sessionspec", "conformance", *run.replay_prefix(), "--only", case_id]))
    return f'{start}<details><summary>{summary}</summary><div class="body">{"".join(body)}</div></details></li>'


# -- fuzz ------------------------------------------------------------------------------------


def _find_trace(path_text: str, base: Path | None) -> Path | None:
    """A trace path as recorded (absolute, or relative to the current folder, the report's folder or one of its
    parents), read only when it lies inside the report's own folder: a report is untrusted input, and a path it
    names elsewhere (``/etc/shadow``, ``../../x``, a symlink out) is never opened."""
    if base is None:
        return None
    path = Path(path_text)
    candidates = [path] if path.is_absolute() else [Path.cwd() / path, *(folder / path for folder in (base, *base.parents))]
    try:
        home = base.resolve()
    except OSError:
        return None
    for candidate in candidates:
        try:
            real = candidate.resolve()
            if real.is_relative_to(home) and real.is_file():
                return real
        except (OSError, ValueError):
            continue
    return None


def _trace_block(path_text: str, base: Path | None) -> str:
    from .trace import read_trace  # trace imports the report writer; keep the page importable alone

    found = _find_trace(path_text, base)
    if found is None:
        return '<p class="note">The trace file is not available here, so its steps cannot be shown.</p>'
    try:
        if found.stat().st_size > _MAX_TRACE_BYTES:
            return f'<p class="note">The trace file is larger than {_MAX_TRACE_BYTES:,} bytes; open it directly.</p>'
        header, steps = read_trace(found)
    except (OSError, ValueError) as exc:  # TraceError, and text that is not UTF-8
        return f'<p class="note">The trace file cannot be read: {esc(_cap(str(exc), _MAX_SHORT))}</p>'
    items = []
    for number, step in enumerate(steps[:_MAX_TRACE_STEPS], 1):
        note = f" — {esc(_cap(step.note, _MAX_SHORT))}" if step.note else ""
        items.append(
            f"<li><h5>Step {number}: op <code>{esc(_cap(step.op, 60))}</code>{note}</h5>"
            + _comparison(step.op, step.args, step.expected, step.actual, None)
            + "<h5>Input</h5>" + _value_block(step.args, f"the input of step {number}") + "</li>"
        )
    more = f'<p class="note">… {len(steps) - _MAX_TRACE_STEPS} more steps in the file</p>' if len(steps) > _MAX_TRACE_STEPS else ""
    described = header.get("description")
    intro = f"<p>{esc(_cap(described, _MAX_TEXT))}</p>" if isinstance(described, str) else ""
    return f'<div class="trace"><h5>Shrunk trace ({len(steps)} step{"s" if len(steps) != 1 else ""})</h5>{intro}<ol>{"".join(items)}</ol>{more}</div>'


def _fuzz_section(runs: Sequence[RunView], trace_base: Callable[[RunView], Path | None]) -> str:
    items = []
    size = hidden = 0
    for i, run in enumerate(runs, 1):
        failures = run.footer.get("fuzz")
        if not isinstance(failures, list):
            continue
        hidden += max(0, len(failures) - 200)
        for failure in failures[:200]:
            if size >= _MAX_FUZZ_CHARS:
                hidden += 1
                continue
            if not isinstance(failure, dict):
                failure = {"message": _scalar_text(failure)}
            machine = _cap(_scalar_text(failure.get("machine", "?")), 60)
            rule = failure.get("rule")
            reqs = failure.get("requirements")
            rows: list[tuple[str, str]] = [
                ("rule", f"<code>{esc(_cap(_scalar_text(rule), 120))}</code>" if rule else ""),
                ("requirements", esc(_cap(", ".join(_scalar_text(r) for r in reqs), _MAX_SHORT))
                 if isinstance(reqs, list) and reqs else ""),
                ("requests in the failing run", esc(_scalar_text(failure.get("steps")))
                 if isinstance(failure.get("steps"), int) else ""),
            ]
            for key in sorted(k for k in failure if k not in {"machine", "message", "trace", "rule", "requirements", "steps"})[:20]:
                rows.append((esc(_cap(key, 60)), esc(_cap(_scalar_text(failure[key]), _MAX_SHORT))))
            trace = failure.get("trace")
            body = [_dl(rows), f'<pre class="msg">{esc(_cap(_scalar_text(failure.get("message")), _MAX_TEXT))}</pre>']
            if isinstance(trace, str) and trace:
                body.append(f"<p>Trace file: <code>{esc(_cap(trace, _MAX_SHORT))}</code></p>")
                body.append(_replay(["sessionspec", "replay", trace, *run.replay_prefix()]))
                body.append(_trace_block(trace, trace_base(run)))
            first_line = _scalar_text(failure.get("message")).splitlines()[0] if failure.get("message") else ""
            items.append(f'<li><details><summary><span class="badge st-fail">FUZZ</span> <span class="runref">run {i}</span> '
                         f'machine <code>{esc(machine)}</code>: {esc(_cap(first_line, _MAX_SHORT))}'
                         f'</summary><div class="body">{"".join(body)}</div></details></li>')
            size += len(items[-1])
    if not items:
        return ""
    more = (f'<p class="note">{hidden:,} more fuzz failure(s) not shown (a page shows at most 200 a run, '
            f'{_MAX_FUZZ_CHARS:,} characters in all); the JSONL report\'s footer holds them.</p>' if hidden else "")
    return (f'<section id="fuzz" aria-labelledby="fuzz-h"><h2 id="fuzz-h">Fuzz failures ({len(items) + hidden:,})</h2>'
            f'<p>Failures found by the differential state machines (<code>--fuzz</code>), each shrunk to a replayable trace.</p>'
            '<ol class="cases">' + "\n".join(items) + "</ol>" + more + "</section>\n")


# -- the page ---------------------------------------------------------------------------------


def _groups_section(runs: Sequence[RunView]) -> str:
    """The failures grouped by cause, as the console and the JSONL footer group them
    (``conformance/grouping.py``): one bug reads as one finding, with its cases."""
    items = []
    for i, run in enumerate(runs, 1):
        groups = run.footer.get("groups")
        for group in groups if isinstance(groups, list) else ():
            if not isinstance(group, dict):
                continue
            cases = [c for c in group.get("cases") or () if isinstance(c, str)]
            reqs = ", ".join(_cap(r, 40) for r in group.get("requirements") or () if isinstance(r, str))
            ops = ", ".join(_cap(o, 40) for o in group.get("ops") or () if isinstance(o, str))
            shown = " ".join(f"<code>{esc(_cap(c, 80))}</code>" for c in cases[:_MAX_GROUP_CASES])
            more = f" and {len(cases) - _MAX_GROUP_CASES:,} more" if len(cases) > _MAX_GROUP_CASES else ""
            run_note = f" (run {i})" if len(runs) > 1 else ""
            items.append(f'<li class="group"><p><strong>{esc(_cap(_scalar_text(group.get("cause")), 300))}</strong>'
                         f"{esc(run_note)}: {len(cases):,} case{'s' if len(cases) != 1 else ''}</p>"
                         f"<p>requirements {esc(reqs or '-')}; ops {esc(ops or '-')}</p><p>{shown}{esc(more)}</p></li>")
    if not items:
        return ""
    return (f'<section id="groups" aria-labelledby="groups-h"><h2 id="groups-h">Failures by cause ({len(items):,})</h2>'
            '<p>Failing cases that differ from the spec in the same way, largest group first: usually one bug each.</p>'
            f'<ol class="groups">{"".join(items[:_MAX_GROUPS])}</ol>'
            + (f'<p class="note">{len(items) - _MAX_GROUPS:,} more groups not shown; the JSONL report\'s footer lists them.</p>'
               if len(items) > _MAX_GROUPS else "") + "</section>")


def _ms(value: Any) -> float | None:
    """A case's ``durationMs`` when it is a finite number."""
    return float(value) if type(value) in (int, float) and math.isfinite(value) else None


def _duration(value: Any) -> str:
    ms = _ms(value)
    return "" if ms is None else f"{ms:,.1f}"


def _passed_section(runs: Sequence[RunView]) -> str:
    """Each run's passed cases with their durations, slowest first, folded away (a page is about failures;
    the slow cases are what an implementer looks for here). Capped like the failing cases."""
    blocks = []
    for i, run in enumerate(runs, 1):
        passed = [c for c in run.cases if c.get("outcome") == "passed"]
        if not passed:
            continue
        passed.sort(key=lambda c: -ms if (ms := _ms(c.get("durationMs"))) is not None else 1.0)  # unmeasured last
        rows = "".join(
            f'<tr><td><code>{esc(_cap(_scalar_text(c.get("id")), 80))}</code></td>'
            f'<td>{esc(_cap(_scalar_text(c.get("area")), 40))}</td>'
            f'<td>{esc(_cap(_scalar_text(c.get("description")), _MAX_SHORT))}</td>'
            f'<td class="num">{esc(_duration(c.get("durationMs")))}</td></tr>'
            for c in passed[:MAX_PASSED_ROWS])
        more = (f'<p class="note">{len(passed) - MAX_PASSED_ROWS:,} more passed case(s) not shown; see the JSONL report.</p>'
                if len(passed) > MAX_PASSED_ROWS else "")
        blocks.append(
            f'<details class="passed" data-run="{i}"><summary>Run {i}: {len(passed):,} passed case(s), slowest first</summary>'
            '<table><thead><tr><th scope="col">case</th><th scope="col">area</th><th scope="col">description</th>'
            f'<th scope="col">ms</th></tr></thead><tbody>{rows}</tbody></table>{more}</details>')
    if not blocks:
        return ""
    return ('<section id="passed" aria-labelledby="passed-h"><h2 id="passed-h">Passed cases and durations</h2>'
            + "".join(blocks) + "</section>")


def _tags(runs: Sequence[RunView]) -> list[str]:
    """The report's file name for runs whose implementation and version are the same as another's."""
    labels = Counter((run.name, run.version) for run in runs)
    return [_cap(Path(run.source).name, 80) if labels[(run.name, run.version)] > 1 else "" for run in runs]


def _asset(name: str) -> str:
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")


def _run_revision(run: RunView) -> Any:
    """The format revision a run checked (its header's ``revision``, else ``specRevision``), or "not recorded"."""
    h = run.header
    value = h.get("revision") if h.get("revision") is not None else h.get("specRevision")
    return value if value is not None else "not recorded"


def _revision_requirements(revision: RevisionLike) -> Mapping[str, Mapping[str, Any]] | None:
    """The requirements of a run's format revision, or ``None`` when the spec does not know it."""
    from sessionspec.spec import load_spec
    from sessionspec.spec.errors import SessionSpecError

    if not isinstance(revision, str):
        return None
    try:
        return load_spec(revision=revision).requirements
    except SessionSpecError:
        return None


@dataclass
class _RequirementCount:
    """A requirement's failing cases on the page: how many, and how many shown in full or listed."""

    failing: int = 0
    full: int = 0
    listed: int = 0


def _select_cases(runs: Sequence[RunView], family_index: Mapping[str, int],
                  per_run: Sequence[Mapping[str, Mapping[str, Any]]]) -> tuple[list[str], dict[str, _RequirementCount], int]:
    """The failing cases' items in report order (each in full, or listed by one line, or left out: see
    ``MAX_FULL_PER_REQUIREMENT``), what each requirement has on the page, and the number of failing cases."""
    by_requirement: dict[str, list[tuple[int, int, Mapping[str, Any]]]] = {}
    total = 0
    for i, run in enumerate(runs, 1):
        for position, case in enumerate(run.cases):
            if case.get("outcome") in PROBLEM_VIEW:
                reqs = _case_requirements(case)
                by_requirement.setdefault(reqs[0] if reqs else "(none)", []).append((i, position, case))
                total += 1
    counts = {r: _RequirementCount(len(found)) for r, found in by_requirement.items()}
    items: dict[tuple[int, int], str] = {}
    full_chars = listed_chars = listed = 0
    demoted: set[tuple[int, int]] = set()
    # a page with room for every failing case shows each in full (as its character budget allows); past that, the
    # first cases of each requirement: each one's first, then each one's second, ...
    per_requirement = MAX_FULL_PER_REQUIREMENT if total > MAX_PAGE_CASES else MAX_PAGE_CASES
    for rank in range(per_requirement):
        for r, found in by_requirement.items():
            if rank >= len(found) or len(items) >= MAX_PAGE_CASES or full_chars >= MAX_FULL_CHARS:
                continue
            i, position, case = found[rank]
            item = _case_item(i, runs[i - 1], case, family_index, per_run[i - 1])
            if len(item) > MAX_CASE_CHARS:  # one case's details past what a page gives one case: listed instead
                demoted.add((i, position))
                continue
            items[(i, position)] = item
            full_chars += len(item)
            counts[r].full += 1
    too_long = f"its details take more than {MAX_CASE_CHARS:,} characters; the JSONL report holds them"
    past_cap = "listed only; the JSONL report holds its details"
    # then by one line, in the same order: the cases the page had no room for in full, and each requirement's next
    for rank in range(per_requirement + MAX_LISTED_PER_REQUIREMENT):
        for r, found in by_requirement.items():
            if rank >= len(found) or (found[rank][0], found[rank][1]) in items:
                continue
            if listed >= MAX_PAGE_LINES or listed_chars >= MAX_LISTED_CHARS:
                break
            i, position, case = found[rank]
            item = _listed_item(i, case, family_index, per_run[i - 1], too_long if (i, position) in demoted else past_cap)
            items[(i, position)] = item
            listed_chars += len(item)
            listed += 1
            counts[r].listed += 1
    return [items[key] for key in sorted(items)], counts, total


def _cap_note(runs: Sequence[RunView], total: int, full: int, listed: int, hidden: int) -> str:
    """What the page leaves out of its failing cases, and where they are."""
    reports = esc(_cap(", ".join(run.source for run in runs), _MAX_SHORT))
    not_shown = f"; {hidden:,} failing case(s) not shown" if hidden else ""
    return (f'<p class="note" id="not-shown">This page shows {full:,} of the {total:,} failing cases in full (at most '
            f"{MAX_PAGE_CASES:,} and {MAX_FULL_CHARS:,} characters of them; of a page with more, at most "
            f"{MAX_FULL_PER_REQUIREMENT} per requirement) and lists {listed:,} more by one line (those, then each "
            f"requirement's next {MAX_LISTED_PER_REQUIREMENT}; at most {MAX_PAGE_LINES:,} a page){not_shown}. "
            f'The JSONL report{"s" if len(runs) > 1 else ""} {reports} hold{"" if len(runs) > 1 else "s"} every case; '
            "the table below counts them per requirement.</p>")


def _count_table(counts: Mapping[str, _RequirementCount]) -> str:
    """Per requirement (a case's first): its failing cases, and how many the page shows in full, lists, leaves out."""
    ordered = sorted(counts.items(), key=lambda kv: (-(kv[1].failing - kv[1].full), _req_sort_key(kv[0])))
    rows = [f'<tr><th scope="row"><code>{esc(r)}</code></th><td class="num">{c.failing:,}</td><td class="num">{c.full:,}</td>'
            f'<td class="num">{c.listed:,}</td><td class="num">{c.failing - c.full - c.listed:,}</td></tr>'
            for r, c in ordered[:_MAX_COUNT_ROWS]]
    rest = ordered[_MAX_COUNT_ROWS:]
    if rest:
        rows.append(f'<tr><th scope="row">{len(rest):,} more requirements</th>'
                    + "".join(f'<td class="num">{sum(getattr(c, k) for _, c in rest):,}</td>' for k in ("failing", "full", "listed"))
                    + f'<td class="num">{sum(c.failing - c.full - c.listed for _, c in rest):,}</td></tr>')
    return ('<div class="scroll" role="region" aria-label="failing cases per requirement" tabindex="0">'
            '<table class="counts"><caption>Failing cases per requirement (a case counts under its first requirement), '
            'most left out first</caption><thead><tr><th scope="col">requirement</th><th scope="col">failing</th>'
            '<th scope="col">in full</th><th scope="col">listed</th><th scope="col">not shown</th></tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table></div>')


def render_html(runs: Sequence[RunView], *, requirements: Mapping[str, Mapping[str, Any]] | None = None,
                families: Sequence[Mapping[str, Any]] | None = None) -> str:
    """The page for ``runs`` (in order), as one HTML document.

    A case shows the requirement text of its run's format revision (the header's ``revision``,
    else ``specRevision``) when the spec describes that revision, else of the pinned one;
    ``requirements`` overrides both.
    """
    doc = json.loads(resources.files("sessionspec.spec").joinpath("requirements.json").read_text(encoding="utf-8"))
    pinned = {r["id"]: r for r in doc.get("requirements", ())}
    families = families if families is not None else doc.get("families", ())
    per_run: list[Mapping[str, Mapping[str, Any]]] = []
    for run in runs:
        own = None if requirements is not None else _revision_requirements(
            run.header.get("revision") if run.header.get("revision") is not None else run.header.get("specRevision"))
        per_run.append(requirements if requirements is not None else own if own is not None else pinned)
    merged: dict[str, Mapping[str, Any]] = {}
    for table in reversed(per_run):
        merged.update(table)
    merged.update(requirements if requirements is not None else pinned)
    fam_entries = {str(f["id"]): f for f in families if isinstance(f, dict) and "id" in f}
    tags = _tags(runs)
    matrix, family_index = _matrix(runs, tags, merged, fam_entries)

    cases, counts, total = _select_cases(runs, family_index, per_run)
    shown_full = sum(c.full for c in counts.values())
    listed = sum(c.listed for c in counts.values())
    hidden = total - shown_full - listed
    present = Counter(str(c.get("outcome")) for run in runs for c in run.cases if c.get("outcome") in PROBLEM_VIEW)
    run_options = "".join(f'<option value="{i}">{i}. {attr(run.name)} {attr(run.version)}{f" ({attr(tag)})" if tag else ""}</option>'
                          for i, (run, tag) in enumerate(zip(runs, tags, strict=True), 1))
    outcome_options = "".join(f'<option value="{o}">{esc(LABELS[o])} ({present[o]:,})</option>'
                              for o in OUTCOME_ORDER if present.get(o))
    family_options = "".join(f'<option value="{i}">{attr(fam)}</option>' for fam, i in family_index.items())
    if cases:
        failures = (
            '<form class="filters" role="search" aria-label="filter the failing cases" hidden>'
            '<label>Search <input type="search" id="f-text" placeholder="case id, requirement, text"></label>'
            f'<label>Run <select id="f-run"><option value="">all runs</option>{run_options}</select></label>'
            f'<label>Outcome <select id="f-outcome"><option value="">all</option>{outcome_options}</select></label>'
            f'<label>Rule family <select id="f-family"><option value="">all</option>{family_options}</select></label>'
            '<button type="button" id="f-clear">Clear</button></form>'
            f'<p id="f-count" aria-live="polite">{len(cases):,} cases</p>'
            '<ol class="cases" id="case-list">' + "\n".join(cases) + "</ol>"
        )
        if shown_full < total:
            failures = _cap_note(runs, total, shown_full, listed, hidden) + failures + _count_table(counts)
    else:
        failures = "<p>No case failed, crashed, errored or is a known failure in any run.</p>"
    names = ", ".join(f"{run.name} {run.version}".strip() for run in runs)
    title = _cap(f"sessionspec conformance: {names}", 200)
    legend = " ".join(f'<span class="badge st-{css}">{label}</span> {esc(text)}' for css, label, text in (
        ("pass", "PASS", "every attempted case passed;"),
        ("fail", "FAIL", "a case failed, crashed or passed unexpectedly;"),
        ("error", "ERROR", "the adapter broke on a case;"),
        ("known", "KNOWN", "only listed known failures;"),
        ("skip", "SKIP", "every case skipped (capability not claimed)."),
    ))
    return (
        "<!DOCTYPE html>\n"
        f'<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<meta name="generator" content="sessionspec {esc(__version__)}">'
        f"<title>{attr(title)}</title><style>{_asset('html_report.css')}</style></head>\n<body>"
        '<a class="skip" href="#failures">Skip to the failing cases</a>'
        f'<header><h1>sessionspec conformance</h1><p>{len(runs)} run{"s" if len(runs) != 1 else ""}: {esc(_cap(names, 2_000))}.</p></header>'
        '<main>'
        f'<section id="matrix" aria-labelledby="matrix-h"><h2 id="matrix-h">Results by rule family</h2>'
        f'<p class="legend">{legend}</p>'
        '<p class="tools" hidden><button type="button" id="expand-all" aria-pressed="false">Show every requirement</button></p>'
        f"{matrix}</section>"
        f'<section id="runs" aria-labelledby="runs-h"><h2 id="runs-h">Runs</h2><div class="runs">'
        + "".join(_run_header(i, run, tag) for i, (run, tag) in enumerate(zip(runs, tags, strict=True), 1))
        + "</div></section>"
        + _groups_section(runs)
        + f'<section id="failures" aria-labelledby="failures-h"><h2 id="failures-h">Failing cases ({total:,})</h2>{failures}</section>'
        + _fuzz_section(runs, lambda run: run.base)
        + _passed_section(runs)
        + f'</main><footer><p>Generated by sessionspec {esc(__version__)} from {len(runs)} JSONL report'
        f'{"s" if len(runs) != 1 else ""}.</p></footer>'
        f"<script>{_asset('html_report.js')}</script></body></html>\n"
    )
