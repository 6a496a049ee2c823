"""Content shrinking: the payload of a failing request made as small as the defect.

Hypothesis shrinks a failing run to its fewest steps and its simplest draws, but a request built
from those draws still carries everything the draws produced: a seed of fourteen events where the
one ``null`` entry is the defect, a ``find`` over sixteen events where two suffice. This pass takes
the failing request and greedily tries smaller ones: a list without a run of its entries, an
object without a key, a container replaced by one of its members, a scalar replaced by a simpler
one. A candidate is kept only while ``holds`` says the same difference still shows (the caller
re-asks both sides and compares the failure's key), and only when it is strictly smaller, so
the pass ends. Deterministic: the same failing request shrinks to the same trace on every run.

Dropping an event from a log (a ``seed`` or ``events`` list, then ``appends``, of one object)
also renumbers the log: the later entries' ``seq``, and every ``surfaceOp`` start and end and
``sourceEventSeqs`` entry that cites a later event, move down, so a request whose replace cites
seqs still means the same after the drop (a rewrite over nine seeded events shrinks to the
events it replaces). Plain drops without renumbering are tried too, after these.

Candidates are tried coarse first (whole halves of a list before single entries, outer nodes
before inner ones); a candidate already refused is not tried again. A budget of tries and of
seconds bounds the pass, so a slow or hanging implementation cannot make it run away.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

from . import wire

__all__ = ["ShrinkBudget", "shrink_args", "size"]

Path = tuple[str | int, ...]


class ShrinkBudget:
    """How many candidates and seconds the pass may spend."""

    def __init__(self, tries: int = 400, seconds: float = 20.0) -> None:
        self.tries = tries
        self.deadline = time.monotonic() + seconds

    @property
    def exhausted(self) -> bool:
        return self.tries <= 0 or time.monotonic() > self.deadline

    def spend(self) -> bool:
        """Whether one more candidate may be tried (and count it)."""
        if self.exhausted:
            return False
        self.tries -= 1
        return True


def size(value: Any) -> tuple[int, int]:
    """What shrinking decreases: the number of JSON nodes, then the encoded length."""
    nodes, stack = 0, [value]
    while stack:
        item = stack.pop()
        nodes += 1
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    try:
        length = len(wire.dumps(value))
    except wire.WireError:  # a value the wire cannot carry is never smaller than one it can
        length = 1 << 62
    return nodes, length


def _paths(value: Any, limit: int = 5000) -> list[Path]:
    """Every node's path, breadth first (outer nodes first), at most ``limit`` of them."""
    out: list[Path] = []
    queue: list[tuple[Path, Any]] = [((), value)]
    head = 0
    while head < len(queue) and len(out) < limit:
        path, node = queue[head]
        head += 1
        out.append(path)
        if isinstance(node, dict):
            queue.extend(((*path, k), v) for k, v in node.items())
        elif isinstance(node, list):
            queue.extend(((*path, i), v) for i, v in enumerate(node))
    return out


def _get(value: Any, path: Path) -> Any:
    for part in path:
        value = value[part]
    return value


def _put(value: Any, path: Path, new: Any) -> Any:
    """``value`` with the node at ``path`` replaced (copies along the path only)."""
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {**value, head: _put(value[head], rest, new)}
    copy = list(value)
    copy[head] = _put(value[head], rest, new)  # type: ignore[index]
    return copy


def _simpler_scalars(node: Any) -> list[Any]:
    if node is None:
        return []
    if isinstance(node, bool):
        return [None, False] if node else [None]
    if isinstance(node, int):
        return [None, 0, node // 2 if node > 0 else -((-node) // 2)] if node else [None]
    if isinstance(node, float):
        return [None, 0, int(node)] if node == node and abs(node) != float("inf") else [None, 0]
    if isinstance(node, str):
        return [None, "", node[: len(node) // 2], node[:1]] if node else [None]
    return []


#: The lists of an object that hold a log, in log order: a seed (or events) numbered from 0, then appends.
_NUMBERED, _APPENDS = ("seed", "events"), "appends"


def _log_of(node: dict[str, Any]) -> tuple[str | None, int, int]:
    """The numbered list's key (or None), its length and the appends' length of an object holding a log."""
    numbered = next((k for k in _NUMBERED if isinstance(node.get(k), list)), None)
    appends = node.get(_APPENDS)
    return numbered, len(node[numbered]) if numbered else 0, len(appends) if isinstance(appends, list) else 0


def _moved(value: Any, start: int, count: int, inside: int | None = None) -> Any:
    """A seq reference after dropping log positions ``start .. start+count-1``: a later one moves down,
    one into the dropped run becomes ``inside`` (None: unchanged)."""
    if type(value) is not int:
        return value
    if value >= start + count:
        return value - count
    if value >= start and inside is not None:
        return inside
    return value


def _renumbered(entry: Any, start: int, count: int, own_seq: bool) -> Any:
    """One remaining log entry with its seq references (and, for a numbered entry, its ``seq``) moved."""
    if not isinstance(entry, dict):
        return entry
    out = dict(entry)
    if own_seq and "seq" in out:
        out["seq"] = _moved(out["seq"], start, count)
    op = out.get("surfaceOp")
    if isinstance(op, dict):
        # a range end in the dropped run narrows to the survivors: start to the next one, end to the previous
        inside = {"start": start, "end": start - 1}
        out["surfaceOp"] = {k: _moved(v, start, count, inside[k]) if k in inside else v for k, v in op.items()}
    sources = out.get("sourceEventSeqs")
    if isinstance(sources, list):  # a cited event that is gone is no longer cited
        out["sourceEventSeqs"] = [_moved(v, start, count) for v in sources
                                  if not (type(v) is int and start <= v < start + count)]
    return out


def _seq_drops(node: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """``node`` without runs of its log's events, the rest renumbered (coarse runs first)."""
    numbered, n_numbered, n_appends = _log_of(node)
    total = n_numbered + n_appends
    chunk = total
    while chunk >= 1:
        for start in range(0, total, chunk):
            count = min(chunk, total - start)
            out = dict(node)
            if numbered:
                out[numbered] = [_renumbered(e, start, count, True)
                                 for i, e in enumerate(node[numbered]) if not start <= i < start + count]
            if n_appends:
                out[_APPENDS] = [_renumbered(e, start, count, False)
                                 for i, e in enumerate(node[_APPENDS], n_numbered) if not start <= i < start + count]
            yield out
        chunk //= 2


def _anchored_drops(node: dict[str, Any], limit: int = 64) -> Iterator[dict[str, Any]]:
    """``node`` with one or two lists of its tree one entry shorter and one integer of its tree one larger:
    a run whose last position is what matters keeps that position while it loses an entry (a chunk row's
    last member seq is ``seq0`` plus its length; its ``dt`` list is one shorter than its members)."""
    paths = _paths(node, limit)
    if len(paths) >= limit:
        return
    lists = [p for p in paths if p and isinstance(_get(node, p), list) and _get(node, p)]
    for i, first in enumerate(lists):
        for second in (None, *lists[i + 1:]):
            shorter = _put(node, first, _get(node, first)[:-1])
            if second is not None:
                if second[: len(first)] == first or first[: len(second)] == second:
                    continue
                shorter = _put(shorter, second, _get(shorter, second)[:-1])
            for anchor in _paths(shorter, limit):
                if anchor and type(_get(shorter, anchor)) is int:
                    yield _put(shorter, anchor, _get(shorter, anchor) + 1)


def _candidates(node: Any, top: bool, phase: int) -> Iterator[Any]:
    """Smaller replacements of one node, coarse first. Phase 0 drops runs of a log's events with the log
    renumbered, then runs of list entries (events, seed entries, batches), phase 1 drops object keys and
    replaces a container by a member, phase 2 simplifies scalars: what makes a trace long goes first,
    while the budget is fresh."""
    if phase == 0 and isinstance(node, dict):
        yield from _seq_drops(node)
    elif phase == 0 and isinstance(node, list):
        n = len(node)
        chunk = n
        while chunk >= 1:
            for start in range(0, n, chunk):
                yield node[:start] + node[start + chunk:]
            chunk //= 2
    elif phase == 1 and isinstance(node, dict):
        if not top:
            yield from _anchored_drops(node)
        for key in node:
            yield {k: v for k, v in node.items() if k != key}
        if not top:
            yield from node.values()
    elif phase == 1 and isinstance(node, list) and not top:
        yield from node
    elif phase == 2 and not isinstance(node, (dict, list)):
        yield from _simpler_scalars(node)


def shrink_args(args: dict[str, Any], holds: Callable[[dict[str, Any]], bool], *,
                budget: ShrinkBudget | None = None, keep: frozenset[str] = frozenset()) -> dict[str, Any]:
    """The smallest request arguments reached from ``args`` for which ``holds`` stays true.

    ``args`` itself must hold. Top-level keys named in ``keep`` are never dropped or changed (the
    caller's fixed fields); the arguments stay an object. The three phases of :func:`_candidates`
    run in turn, and again while one of them kept something."""
    budget = budget or ShrinkBudget()
    current = args
    current_size = size(current)
    refused: set[str] = set()
    progress = True
    while progress:
        progress = False
        for phase in range(3):
            current, current_size, kept_any = _pass(current, current_size, holds, budget, keep, refused, phase)
            progress = progress or kept_any
            if budget.exhausted:
                return current
    return current


def _pass(current: dict[str, Any], current_size: tuple[int, int], holds: Callable[[dict[str, Any]], bool],
          budget: ShrinkBudget, keep: frozenset[str], refused: set[str],
          phase: int) -> tuple[dict[str, Any], tuple[int, int], bool]:
    """One walk over the nodes, outer first, with the candidates of ``phase``; after a kept candidate
    the node now at the same place is tried again."""
    progress = False
    paths = _paths(current)
    i = 0
    while i < len(paths):
        path = paths[i]
        kept = False
        if not (path and path[0] in keep):
            for replacement in _candidates(_get(current, path), not path, phase):
                if not path and (not isinstance(replacement, dict) or any(k not in replacement for k in keep)):
                    continue
                candidate = _put(current, path, replacement)
                candidate_size = size(candidate)
                if candidate_size >= current_size:
                    continue
                try:
                    fingerprint = wire.dumps(candidate)
                except wire.WireError:
                    continue
                if fingerprint in refused:
                    continue
                if not budget.spend():
                    return current, current_size, progress
                if holds(candidate):
                    current, current_size, kept = candidate, candidate_size, True
                    break
                refused.add(fingerprint)
        if kept:
            progress = True
            paths = _paths(current)  # the same index is the replaced node (or its next sibling)
        else:
            i += 1
    return current, current_size, progress
