"""Counts and tables in the prose, generated from the data they describe (facts once).

A document holds a generated block between two markers::

    <!-- generated: NAME (python -m sessionspec.conformance.docfacts) -->
    ...
    <!-- end generated: NAME -->

and this module renders each block from its source: ``node-run`` from the recorded Node run
(``docs/results/3-node-*.jsonl``, the report ``docs/results/regenerate.sh --record`` writes), ``node-run-vectors``
(that run by op and backend) and ``node-run-skipped`` (its skipped cases, by reason) from the same run,
``mutant-catalogue`` from the hand-written mutants (``conformance/mutants.py``), and
``error-codes`` from every revision's ``spec/errors.json``. Prose elsewhere links to a block or a
generated page instead of restating its numbers (``tests/docs/test_docfacts.py`` refuses restated run
counts in README, CONTRIBUTING and the architecture page).

Run ``python -m sessionspec.conformance.docfacts [--check] [--root DIR]``: it rewrites every stale
block (atomically), or with ``--check`` names each stale block and exits 1.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path

__all__ = ["BLOCKS", "DOCUMENTS", "NODE_RUN", "main", "refresh", "render_error_codes", "render_mutant_catalogue",
           "render_node_run", "render_node_run_skipped", "render_node_run_vectors", "stale_blocks"]

ROOT = Path(__file__).resolve().parent.parent
NODE_RUN = Path("docs") / "results" / "3-node-0.1.1-rc.2.jsonl"
"""The recorded run of the newest release (``docs/results/regenerate.sh --record`` writes it)."""
DOCUMENTS = ("README.md", "CONTRIBUTING.md", "docs/architecture.md", "docs/node-results.md", "docs/suite-strength.md")
"""The documents that may hold generated blocks."""

_BLOCK = re.compile(r"(<!-- generated: (?P<name>[a-z-]+) \(python -m sessionspec\.conformance\.docfacts\) -->\n)"
                    r"(?P<body>.*?)(<!-- end generated: (?P=name) -->)", re.DOTALL)
_CLASSES = {"(a)": "revision difference", "(b)": "defect", "(c)": "suite assumption"}


def _plural(count: int, word: str, many: str | None = None) -> str:
    return f"{count} {word if count == 1 else (many or word + 's')}"


def render_node_run(root: Path) -> str:
    """The headline of the recorded Node run: vectors, outcomes, known failures by class, the run's Node."""
    lines = [json.loads(line) for line in (root / NODE_RUN).read_text(encoding="utf-8").splitlines() if line.strip()]
    header = next(line for line in lines if line["kind"] == "header")
    footer = next(line for line in lines if line["kind"] == "footer")
    cases = [line for line in lines if line["kind"] == "case"]
    counts = footer["counts"]
    classes = Counter(str(case.get("reason") or "")[:3] for case in cases if case["outcome"] == "xfail")
    handshake = header["implementation"]
    release = handshake["implementation"]["version"]
    language = handshake["implementation"].get("language", "")
    node = re.search(r"node (v[0-9.]+)", language)
    layout = handshake.get("sqliteLayout")
    others = {k: v for k, v in counts.items() if k not in ("passed", "xfail", "skipped") and v}
    known = counts.get("xfail", 0)
    parts = [
        f"Recorded run ([{NODE_RUN.name}](results/{NODE_RUN.name}), started {header.get('started', '?')}): "
        f"{release} runs {_plural(len(cases), 'vector')} of `{header['revision']}`"
        + (f" on Node {node[1][1:]}" if node else "")
        + (f", with the SQLite vectors of layout {layout}" if layout is not None else "") + ": ",
        f"**{counts.get('passed', 0)} pass, {_plural(known, 'known failure')} "
        f"({_plural(classes.get('(b)', 0), 'defect')}, {_plural(classes.get('(c)', 0), 'suite assumption')}), "
        f"{counts.get('skipped', 0)} skipped**"
        + "".join(f", {v} {k}" for k, v in sorted(others.items())) + "; "
        f"{_plural(classes.get('(a)', 0), 'known failure')} classed \"revision difference\"",
    ]
    unclassified = known - sum(classes[c] for c in _CLASSES)
    if unclassified:
        parts.append(f"; {unclassified} without a class")
    return "".join(parts) + ".\n"


def _recorded_cases(root: Path) -> list[dict[str, object]]:
    lines = [json.loads(line) for line in (root / NODE_RUN).read_text(encoding="utf-8").splitlines() if line.strip()]
    return [line for line in lines if line["kind"] == "case"]


def _op_group(case: Mapping[str, object], corpus: Mapping[str, object]) -> str:
    """What a recorded case runs: its protocol op, with the backend a storage scenario names."""
    found = corpus.get(str(case["id"]))
    if found is None:  # a case the corpus no longer has: its area (the recording is stale; compat --check says so)
        return f"area `{case.get('area', '?')}` (not in the corpus)"
    args = getattr(found, "args", None)
    backend = args.get("backend") if isinstance(args, Mapping) else None
    return f"`{getattr(found, 'op', '?')}`" + (f" ({backend})" if isinstance(backend, str) else "")


def _vector_file(case: Mapping[str, object], corpus: Mapping[str, object]) -> str:
    found = corpus.get(str(case["id"]))
    return str(getattr(found, "source", "?")).split("#", 1)[0].rsplit("/", 1)[-1]


def render_node_run_vectors(root: Path) -> str:
    """The recorded Node run by op (and the backend a storage scenario names): cases, passes, known failures,
    skipped, and the vector files they come from."""
    from .cases import load_corpus

    corpus = {case.id: case for case in load_corpus()}
    table: dict[str, Counter[str]] = {}
    files: dict[str, set[str]] = {}
    for case in _recorded_cases(root):
        group = _op_group(case, corpus)
        table.setdefault(group, Counter())[str(case["outcome"])] += 1
        files.setdefault(group, set()).add(_vector_file(case, corpus))
    rows = ["| op | cases | pass | known failures | skipped | other | vector files |", "|---|---|---|---|---|---|---|"]
    for group, counts in sorted(table.items()):
        other = sum(v for k, v in counts.items() if k not in ("passed", "xfail", "skipped"))
        rows.append(f"| {group} | {sum(counts.values())} | {counts['passed']} | {counts['xfail']} | "
                    f"{counts['skipped']} | {other or ''} | {', '.join(f'`{f}`' for f in sorted(files[group]))} |")
    return "\n".join(rows) + "\n"


def render_node_run_skipped(root: Path) -> str:
    """Every skipped case of the recorded Node run, by the reason the run gives."""
    from .cases import load_corpus

    corpus = {case.id: case for case in load_corpus()}
    by_reason: dict[str, list[Mapping[str, object]]] = {}
    for case in _recorded_cases(root):
        if case["outcome"] == "skipped":
            by_reason.setdefault(str(case.get("message") or case.get("reason") or "no reason given"), []).append(case)
    total = sum(map(len, by_reason.values()))
    lines = [f"* **{total} skipped**, each with its reason:"]
    for reason, cases in by_reason.items():
        lines.append(f"  * {_plural(len(cases), 'case')}: {reason}:")
        for one in cases:
            named = one.get("requirements")
            requirements = ", ".join(map(str, named)) if isinstance(named, list) and named else "no requirement"
            lines.append(f"    * `{one['id']}` ({_op_group(one, corpus)} in `{_vector_file(one, corpus)}`, {requirements}): "
                         f"{one.get('description', '')}")
    return "\n".join(lines) + "\n"


def render_mutant_catalogue(root: Path) -> str:
    """The hand-written mutant catalogue as it is now: how many, how many a machine probes, by family (``root`` is
    unused: the catalogue is ``conformance/mutants.py``)."""
    from .mutants import MUTANTS

    families = Counter(m.family for m in MUTANTS.values())
    probed = [m for m in MUTANTS.values() if m.probe]
    published = sum(1 for m in MUTANTS.values() if m.revision is not None)
    unprobed = sorted({m.family for m in MUTANTS.values() if not m.probe})
    return (f"The catalogue holds **{_plural(len(MUTANTS), 'mutant')}** ({published} of them at a later revision than the "
            f"pinned one), {len(probed)} with a state-machine probe (the other {len(MUTANTS) - len(probed)}, of "
            f"{', '.join(unprobed) or 'no family'}, are caught by vectors only); by family: "
            + ", ".join(f"{family} {count}" for family, count in sorted(families.items())) + ".\n")


def render_error_codes(root: Path) -> str:
    """Every stable error code of every revision by family, with the exception class that carries it (``root`` is
    unused: every block renderer takes it)."""
    from sessionspec.spec import load_spec
    from sessionspec.spec.revisions import known_revisions

    families: dict[str, dict[str, tuple[str, list[str]]]] = {}
    for rid in known_revisions():
        for code, entry in load_spec(revision=rid).error_codes.items():
            by_code = families.setdefault(str(entry.get("family", "?")), {})
            carrier = str(entry.get("exception") or f"emitter {entry.get('emitter', '?')}")
            revisions = by_code.setdefault(code, (carrier, []))[1]
            revisions.append(rid)
    every = set(known_revisions())
    rows = ["| family | codes, by the class that carries them (or the emitter); a code of some revisions only names them |",
            "|---|---|"]
    for family, codes in families.items():
        carriers: dict[str, list[str]] = {}
        for code, (carried_by, revisions) in sorted(codes.items()):
            only = "" if set(revisions) == every else " (" + ", ".join(f"`{r}`" for r in revisions) + ")"
            carriers.setdefault(carried_by, []).append(f"`{code}`{only}")
        rows.append(f"| {family} | " + "; ".join(f"{c}: {', '.join(v)}" for c, v in carriers.items()) + " |")
    return "\n".join(rows) + "\n"


BLOCKS: Mapping[str, Callable[[Path], str]] = {
    "node-run": render_node_run, "node-run-vectors": render_node_run_vectors, "node-run-skipped": render_node_run_skipped,
    "error-codes": render_error_codes, "mutant-catalogue": render_mutant_catalogue}


def _rendered(root: Path, text: str) -> str:
    def one(match: re.Match[str]) -> str:
        name = match["name"]
        if name not in BLOCKS:
            raise ValueError(f"unknown generated block {name!r} (known: {', '.join(BLOCKS)})")
        return match[1] + BLOCKS[name](root) + match[4]

    return _BLOCK.sub(one, text)


def _documents(root: Path) -> Iterator[tuple[str, Path, str, str]]:
    """``(name, path, text, rendered text)`` of every document with generated blocks that exists."""
    for rel in DOCUMENTS:
        path = root / rel
        if path.is_file():
            text = path.read_text(encoding="utf-8")
            yield rel, path, text, _rendered(root, text)


def stale_blocks(root: Path = ROOT) -> list[str]:
    """``document: block`` for every generated block whose text is not what its source renders."""
    stale = []
    for rel, _, text, fresh in _documents(root):
        for old, new in zip(_BLOCK.finditer(text), _BLOCK.finditer(fresh), strict=True):
            if old[0] != new[0]:
                stale.append(f"{rel}: {old['name']}")
    return stale


def refresh(root: Path = ROOT) -> list[str]:
    """Rewrite every stale block in place (atomic per document); the documents rewritten."""
    from .report import atomic_write_text

    written = []
    for rel, path, text, fresh in _documents(root):
        if fresh != text:
            atomic_write_text(path, fresh)
            written.append(rel)
    return written


def main(argv: Sequence[str] | None = None) -> int:
    """``--check``: exit 1 naming the stale blocks; else rewrite them."""
    parser = argparse.ArgumentParser(prog="python -m sessionspec.conformance.docfacts", description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only report stale blocks (exit 1 if any)")
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout whose documents to render (default: this one)")
    args = parser.parse_args(argv)
    if args.check:
        stale = stale_blocks(args.root)
        for item in stale:
            print(f"stale generated block: {item} (run python -m sessionspec.conformance.docfacts)", file=sys.stderr)
        return 1 if stale else 0
    for rel in refresh(args.root):
        print(f"wrote {rel}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
