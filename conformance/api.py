"""The stable Python API for the cases: load them, judge a reply, in any test runner.

``load_cases`` gives the vectors of one format revision (the deep values expanded, as the harness
runs them); ``compare`` judges one reply of an implementation against a case with the op-specific
normalisation of PROTOCOL.md §7 (``"<now>"`` times, ignored pointers, trace codes mapped through
the adapter's ``codeMap``). Both are documented in docs/compatibility.md; everything else in
``sessionspec.conformance`` is the harness's own and may change.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .cases import Case, for_revision, for_sqlite_layout, load_corpus, sqlite_layouts
from .compare import Verdict, judge

__all__ = ["Case", "Verdict", "compare", "load_cases"]


def load_cases(revision: str | None = None, *, vectors: str | Path | None = None,
               sqlite_layout: int | None = None) -> list[Case]:
    """The cases of ``revision`` (an id or npm release; default: the pinned one), from the packaged corpus
    or the ``vectors`` folder; of the ``sqlite-read`` cases, those of ``sqlite_layout`` (default: the
    revision's own). Raises ``ValueError`` (an unusable vector file, named with its JSON pointer) or
    ``UnknownRevision``."""
    from sessionspec.spec.revisions import resolve_revision

    rid = resolve_revision(revision).id
    layouts = sqlite_layouts([rid])
    layout = layouts[0] if sqlite_layout is None else sqlite_layout
    if layout not in layouts:
        raise ValueError(f"revision {rid} has no SQLite layout {layout} (its layouts: {', '.join(map(str, layouts))})")
    return for_sqlite_layout(for_revision(load_corpus(Path(vectors) if vectors is not None else None), rid), layout)


def compare(case: Case, reply: Mapping[str, Any], *, code_map: Mapping[str, str] | None = None) -> Verdict:
    """The verdict on ``reply`` (a protocol reply: ``{"kind": "result", "result": ...}``, ``{"kind":
    "rejected", "code": ...}``, ``crashed``, ``errored`` or ``skipped``) for ``case``: ``outcome`` passed,
    failed, crashed, errored or skipped, a ``message`` and the ``differences`` (JSON pointers)."""
    return judge(case.op, case.args, case.expect, reply, ignore=case.ignore, code_map=code_map)
