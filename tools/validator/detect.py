"""Which format revision wrote a log: evidence read from its content, judged by the spec data.

Two kinds of evidence, both derived from the revisions' resolved registries
(nothing here names a type or a field):

* an event whose type is registered in some revisions but not in others
  (``steering/message`` only at the pinned revision, ``session/end-seed`` only
  at the published one, ...);
* an event of a type registered everywhere whose payload is valid against the
  payload schema of some revisions only (a ``user/message`` holding an
  identified message, an ``assistant/message`` with top-level ``provenance``).

A log with evidence for exactly one revision is that revision; a log with no
evidence, or with evidence for several, is read at the default (pinned)
revision and the detection says why. Detection stops after ``LOOK_AT``
pieces of evidence or ``MAX_SCAN`` events, so it costs O(1) per log.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from sessionspec.spec import load_spec
from sessionspec.spec.revisions import DEFAULT_REVISION, known_revisions

__all__ = ["Detection", "detect_revision"]

LOOK_AT = 16
"""Pieces of evidence gathered per log before deciding."""
MAX_SCAN = 4096
"""Events looked at per log, at most."""


@dataclass(frozen=True)
class Detection:
    """The revision a log is read at, and why."""

    revision: str
    evidence: tuple[str, ...] = ()
    ambiguous: bool = False
    note: str = ""
    scores: dict[str, int] = field(default_factory=dict)

    @property
    def reason(self) -> str:
        """Why this revision: the evidence, or the note saying why the default was taken."""
        return self.note or f"detected: {'; '.join(self.evidence)}"

    def describe(self) -> str:
        """One line for a report."""
        return f"revision {self.revision} ({self.reason})"

    def in_store(self, layout: int | None, owner: str | None) -> Detection:
        """This detection for a session stored in SQLite ``layout``: a log without revision-specific content
        is read at ``owner``, the one revision whose layouts include it (None: several or none do)."""
        if owner is None or owner == self.revision or any(self.scores.values()):
            return self
        return Detection(owner, (), False,
                         f"no revision-specific content; SQLite layout {layout} is a layout of revision {owner} only",
                         self.scores)

    def contradiction(self, given: str) -> str | None:
        """What to tell a user who named revision ``given`` for a log whose content shows another one
        (None when it does not: no evidence, mixed evidence, or evidence for ``given``)."""
        if self.ambiguous or not self.evidence or self.revision == given:
            return None
        return f"its content shows revision {self.revision}, not {given} ({self.reason})"


def reads_upgraded(reader: str, earlier: str) -> bool:
    """Whether revision ``reader``'s load path reads records of revision ``earlier`` upgraded: ``earlier`` is
    an ancestor of ``reader`` and ``reader`` upgrades earlier-format records on load (JSONL-13)."""
    from sessionspec.reference.revision import rules_for
    from sessionspec.spec.revisions import revision_chain

    return earlier in {r.id for r in revision_chain(reader)[:-1]} and rules_for(reader).load_upgrade is not None


@functools.cache
def _tables() -> tuple[dict[str, frozenset[str]], dict[str, dict[str, Any]]]:
    """Type -> revisions registering it; type -> {revision: payload validator} for shared types."""
    specs = {r: load_spec(revision=r) for r in known_revisions()}
    registered: dict[str, set[str]] = {}
    for rid, spec in specs.items():
        for event_type in spec.events:
            registered.setdefault(event_type, set()).add(rid)
    from sessionspec.validator.pregen import evidence_payloads, generated_payload_checks

    payloads = generated_payload_checks(specs)  # generated ahead of time for the installed revisions
    if payloads is None:
        payloads = {event_type: {rid: specs[rid].validator(schema_id) for rid, schema_id in ids.items()}
                    for event_type, ids in evidence_payloads(specs).items()}
    return {t: frozenset(r) for t, r in registered.items()}, payloads


def detect_revision(events: Iterable[Any], lines: Sequence[int | None] | None = None) -> Detection:
    """The revision of a log from its events (``lines`` labels evidence with file lines: its entry for an
    event is read once the event has been taken, so it may grow alongside a lazy `events`)."""
    registered, payloads = _tables()
    all_revisions = frozenset(known_revisions())
    votes: dict[str, list[str]] = {r: [] for r in all_revisions}
    found = 0
    for index, event in enumerate(events):
        if found >= LOOK_AT or index >= MAX_SCAN:
            break
        if type(event) is not dict or type(event.get("type")) is not str:
            continue
        etype = event["type"]
        where = f"line {lines[index]}" if lines is not None and lines[index] is not None else f"event {index}"
        revs = registered.get(etype)
        if revs is not None and revs != all_revisions:
            found += 1
            for rid in revs:
                votes[rid].append(f"{etype} at {where}")
            continue
        checks = payloads.get(etype)
        if checks is None:
            continue
        fits = [rid for rid, validator in checks.items() if validator.is_valid(event.get("data"))]
        if 0 < len(fits) < len(checks):
            found += 1
            for rid in fits:
                votes[rid].append(f"{etype} payload of this revision at {where}")
    scores = {r: len(v) for r, v in votes.items()}
    supported = [r for r in known_revisions() if scores[r]]
    if len(supported) == 1:
        rid = supported[0]
        return Detection(rid, tuple(votes[rid][:3]) + ((f"... {scores[rid] - 3} more",) if scores[rid] > 3 else ()),
                         scores=scores)
    if not supported:
        return Detection(DEFAULT_REVISION, (), True, "no revision-specific content; read at the default revision",
                         scores)
    detail = ", ".join(f"{r}: {votes[r][0]}" for r in supported)
    readers = [r for r in supported if all(reads_upgraded(r, o) for o in supported if o != r)]
    hint = (f"; a log of the earlier format resumed by {readers[0]}'s software holds both: name it with "
            f"--revision {readers[0]}, whose load path upgrades earlier-format records") if len(readers) == 1 else ""
    return Detection(DEFAULT_REVISION, (), True,
                     f"ambiguous, content of several revisions ({detail}); read at the default revision{hint}", scores)


def detect_in_bytes(data: bytes) -> Detection:
    """`detect_revision` on the raw bytes of a log (a JSONL artifact or a JSON array), parsing only what it needs."""
    import orjson

    stripped = data.lstrip()
    events: list[Any] = []
    lines: list[int | None] = []
    if stripped.startswith(b"["):
        try:
            parsed = orjson.loads(data)
        except orjson.JSONDecodeError:
            parsed = None
        if isinstance(parsed, list):
            events = parsed[:MAX_SCAN]
            lines = [None] * len(events)
    else:
        def parsed_lines() -> Iterator[Any]:
            """Each line's value, parsed only when detection asks for it (it stops after LOOK_AT pieces of evidence)."""
            for number, raw in enumerate(data.split(b"\n", MAX_SCAN + 1)[: MAX_SCAN + 1], start=1):
                try:
                    value = orjson.loads(raw)
                except orjson.JSONDecodeError:
                    continue
                lines.append(number)
                yield value

        return detect_revision(parsed_lines(), lines)
    return detect_revision(events, lines)
