"""Comparing an adapter's reply with a case's expectation.

Values are compared as JSON, the way every language can read them: object
key order never matters, list order always does, ``true`` is never a number,
and numbers compare by value (JSON has one number type, so ``1`` and ``1.0``
are equal here even though Python keeps them apart). Rejections compare by
"rejected or not", then by ``code`` (after the adapter's declared code map),
``index``, ``phase`` and ``state`` where the expectation names them.

Some results carry values no two runs share (``time`` of a live append,
``createdAt`` of a header the implementation stamped with the clock, not one
copied from a supplied ``meta.createdAt``). Each op's *normaliser* replaces
exactly those with the placeholder ``"<now>"`` (only when they are
well-formed non-negative safe integers, so a wrong type still shows), on
both sides, before comparing. Case files may add further ``compare.ignore``
pointers. Every walk is iterative: payloads may be 10,000 levels deep.
"""

from __future__ import annotations

import base64
import binascii
import difflib
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from sessionspec.spec import FORMAT
from sessionspec.spec.loader import json_pointer

from . import wire

__all__ = [
    "NOW",
    "Difference",
    "Verdict",
    "diff",
    "judge",
    "normalise_reply",
    "normalise_result",
    "render_value",
]

NOW = "<now>"
"""Placeholder for a clock reading that is well-formed but not reproducible."""

_MAX_SAFE: int = FORMAT.max_safe_integer
_MAX_DIFFS = 20
_ALIGN_LIMIT = 400  # longer lists compare position by position


# -- normalisation ---------------------------------------------------------------------


def _is_clock(value: Any) -> bool:
    return type(value) is int and 0 <= value <= _MAX_SAFE


def _event_with_now(event: Any) -> Any:
    if isinstance(event, dict) and _is_clock(event.get("time")):
        return {**event, "time": NOW}
    return event


def _events_from(events: Any, start: int) -> Any:
    if not isinstance(events, list):
        return events
    return [e if i < start else _event_with_now(e) for i, e in enumerate(events)]


def _seed_length(session_input: Any) -> int:
    if isinstance(session_input, dict) and isinstance(session_input.get("seed"), list):
        return len(session_input["seed"])
    return 0


def _header_with_now(header: Any) -> Any:
    if isinstance(header, dict) and _is_clock(header.get("createdAt")):
        return {**header, "createdAt": NOW}
    return header


def _session_state(state: Any, session_input: Any, *, synthesised_header: bool, start: int | None = None) -> Any:
    if not isinstance(state, dict):
        return state
    out = dict(state)
    if "events" in out:
        out["events"] = _events_from(out["events"], _seed_length(session_input) if start is None else start)
    if synthesised_header and "header" in out:
        out["header"] = _header_with_now(out["header"])
    return out


def _norm_session(args: Mapping[str, Any], value: Any) -> Any:
    return _session_state(value, args, synthesised_header="header" not in args)


def _norm_fork(args: Mapping[str, Any], value: Any) -> Any:
    if not isinstance(value, dict) or not isinstance(value.get("child"), dict):
        return value
    # Events past the copied prefix (a revision's seed-end marker) were stamped by the clock too.
    start = _seed_length(args.get("source"))
    header = value["child"].get("header")
    copied = header.get("seedLength") if isinstance(header, dict) else None
    if type(copied) is int and 0 <= copied < start:
        start = copied
    child = _session_state(value["child"], args.get("source"), synthesised_header=True, start=start)
    return {**value, "child": child}


def _norm_oob(args: Mapping[str, Any], value: Any) -> Any:
    if not isinstance(value, dict):
        return value
    out = dict(value)
    if "event" in out:
        out["event"] = _event_with_now(out["event"])
    if "events" in out:
        out["events"] = _events_from(out["events"], _seed_length(args.get("session")))
    return out


def _all_events_now(value: Any) -> Any:
    if isinstance(value, list):
        return [_all_events_now(v) for v in value]
    if isinstance(value, dict) and {"type", "seq", "time", "data"} <= value.keys():
        return _event_with_now(value)
    return value


def _stamped_handles(args: Mapping[str, Any]) -> frozenset[str]:
    """Handles whose every ``create``/``prepare`` step supplies ``meta.createdAt``.

    Their header's ``createdAt`` is a copy of that value (HDR-11), so it is
    compared as it is; every other store header was stamped with the clock.
    """
    script = args.get("script")
    stack = list(script) if isinstance(script, list) else []
    explicit: dict[str, bool] = {}
    while stack:
        step = stack.pop()
        if not isinstance(step, dict):
            continue
        actions = step.get("actions")
        if isinstance(actions, list):
            stack.extend(actions)
        if step.get("do") in ("create", "prepare") and isinstance(step.get("as"), str):
            meta = step.get("meta")
            given = isinstance(meta, dict) and meta.get("createdAt") is not None
            explicit[step["as"]] = explicit.get(step["as"], True) and given
    return frozenset(name for name, given in explicit.items() if given)


def _norm_store(args: Mapping[str, Any], value: Any) -> Any:
    if not isinstance(value, dict):
        return value
    stamped = _stamped_handles(args)
    out = dict(value)
    if isinstance(out.get("trace"), list):
        out["trace"] = [
            {**t, "ok": _all_events_now(t["ok"])} if isinstance(t, dict) and "ok" in t else t for t in out["trace"]
        ]
    if isinstance(out.get("sessions"), dict):
        sessions = {}
        for name, s in out["sessions"].items():
            if isinstance(s, dict):
                s = dict(s)
                if "header" in s and name not in stamped:
                    s["header"] = _header_with_now(s["header"])
                if "events" in s:
                    s["events"] = _all_events_now(s["events"])
            sessions[name] = s
        out["sessions"] = sessions
    return out


def _bytes_of(data: Any) -> bytes | None:
    if isinstance(data, dict) and isinstance(data.get("text"), str) and len(data) == 1:
        return cast("bytes | None", data["text"].encode("utf-8", "surrogatepass"))
    if isinstance(data, dict) and isinstance(data.get("base64"), str) and len(data) == 1:
        try:
            return base64.b64decode(data["base64"], validate=True)
        except (binascii.Error, ValueError):
            return None
    return None


def _jsonl_records(data: Any) -> Any:
    """Artifact bytes as parsed lines: byte-identical output across languages is not
    a goal (DEC-11: key order), so artifacts compare record by record."""
    raw = _bytes_of(data)
    if raw is None:
        return data
    parts = raw.split(b"\n")
    lines: list[Any] = []
    for part in parts[:-1]:
        try:
            lines.append(wire.loads(part))
        except wire.WireError:
            lines.append({"unparsable": part.decode("utf-8", "replace")})
    return {"records": lines, "unterminated": parts[-1].decode("utf-8", "replace")}


def _norm_jsonl_data(args: Mapping[str, Any], value: Any) -> Any:
    if isinstance(value, dict) and "data" in value:
        return {**value, "data": _jsonl_records(value["data"])}
    return value


def _norm_jsonl_load(args: Mapping[str, Any], value: Any) -> Any:
    return _norm_jsonl_data(args, value)


def _norm_persistence(args: Mapping[str, Any], value: Any) -> Any:
    """Revision tokens become ``r0``, ``r1``… by first appearance (only their equality is
    specified, PERSIST-8); a missing ``delegationDepth`` reads as 0 (HDR-12); rejection
    messages are dropped, except that a ``PERSIST_DATA_NOT_JSON`` one is reduced to
    whether it names the type of an event in the rejected batch (PERSIST-5)."""
    if not isinstance(value, dict) or not isinstance(value.get("trace"), list):
        return value
    raw_steps = args.get("steps")
    steps: list[Any] = raw_steps if isinstance(raw_steps, list) else []
    tokens: dict[str, str] = {}
    trace = []
    for entry in value["trace"]:
        if not isinstance(entry, dict):
            trace.append(entry)
            continue
        entry = dict(entry)
        ok = entry.get("ok")
        if isinstance(ok, dict) and isinstance(ok.get("revision"), str):
            entry["ok"] = {"revision": tokens.setdefault(ok["revision"], f"r{len(tokens)}")}
        elif isinstance(ok, dict) and isinstance(ok.get("header"), dict) and "delegationDepth" not in ok["header"]:
            entry["ok"] = {**ok, "header": {**ok["header"], "delegationDepth": 0}}
        rejected = entry.get("rejected")
        if isinstance(rejected, dict):
            kept = {k: v for k, v in rejected.items() if k != "message"}
            if rejected.get("code") == "PERSIST_DATA_NOT_JSON" and "namesType" not in rejected:
                at = entry.get("at")
                step = steps[int(at)] if isinstance(at, str) and at.isdigit() and int(at) < len(steps) else {}
                events = step.get("events") if isinstance(step, dict) else None
                types = {str(e["type"]) for e in events or [] if isinstance(e, dict) and isinstance(e.get("type"), str)}
                message = rejected.get("message")
                kept["namesType"] = isinstance(message, str) and any(t in message for t in types)
            entry["rejected"] = kept
        trace.append(entry)
    return {**value, "trace": trace}


def _norm_live(args: Mapping[str, Any], value: Any) -> Any:
    """In ``stored`` entries the store-made ``createdAt`` and every event ``time`` become ``"<now>"``
    and a missing ``delegationDepth`` reads as 0 (HDR-12), as in store and persistence traces."""
    if not isinstance(value, dict) or not isinstance(value.get("trace"), list):
        return value
    trace = []
    for entry in value["trace"]:
        ok = entry.get("ok") if isinstance(entry, dict) else None
        if isinstance(ok, dict) and isinstance(ok.get("sessions"), dict):
            sessions = {}
            for key, stored in ok["sessions"].items():
                if isinstance(stored, dict):
                    header = _header_with_now(stored.get("header"))
                    if isinstance(header, dict) and "delegationDepth" not in header:
                        header = {**header, "delegationDepth": 0}
                    stored = {**stored, "header": header, "events": _events_from(stored.get("events"), 0)}
                sessions[key] = stored
            entry = {**entry, "ok": {**ok, "sessions": sessions}}
        trace.append(entry)
    return {**value, "trace": trace}


Normaliser = Callable[[Mapping[str, Any], Any], Any]

NORMALISERS: Mapping[str, Normaliser] = {
    "load": _norm_session,
    "append": _norm_session,
    "fork": _norm_fork,
    "oob": _norm_oob,
    "store": _norm_store,
    "jsonl-write": _norm_jsonl_data,
    "jsonl-load": _norm_jsonl_load,
    "persistence": _norm_persistence,
    "live": _norm_live,
}
"""Op -> normaliser, applied to results and to rejection ``state`` alike."""

_STATE_NORMALISERS: Mapping[str, Normaliser] = {"append": _norm_session, "oob": _norm_oob}


def normalise_result(op: str, args: Mapping[str, Any], value: Any) -> Any:
    """The op's result with irreproducible fields replaced by ``"<now>"``."""
    fn = NORMALISERS.get(op)
    return fn(args, value) if fn else value


def normalise_reply(op: str, args: Mapping[str, Any], reply: Mapping[str, Any]) -> dict[str, Any]:
    """A reply with its result (or rejection state) normalised for comparison or storage."""
    out = dict(reply)
    if out.get("kind") == "result" and "result" in out:
        out["result"] = normalise_result(op, args, out["result"])
    elif out.get("kind") == "rejected" and "state" in out and op in _STATE_NORMALISERS:
        out["state"] = _STATE_NORMALISERS[op](args, out["state"])
    return out


# -- clock plausibility -----------------------------------------------------------------

CLOCK_SLACK_MS = 86_400_000
"""How far from the judging moment a clock reading may be (a day: slow runs, skewed clocks)."""


CLOCK_CHECKED = frozenset({"live"})
"""Ops whose every ``"<now>"`` is a clock reading of the run (a live store stamps each event and
header). The store op's normaliser also blanks seeded times (``1000``), so its placeholders are not."""


def _now_paths(expected: Any) -> list[tuple[str | int, ...]]:
    """Paths of every ``"<now>"`` placeholder of an expectation (iterative: values may be deep)."""
    paths: list[tuple[str | int, ...]] = []
    stack: list[tuple[tuple[str | int, ...], Any]] = [((), expected)]
    while stack:
        path, value = stack.pop()
        if value == NOW and isinstance(value, str):
            paths.append(path)
        elif isinstance(value, dict):
            stack.extend(((*path, k), v) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend(((*path, i), v) for i, v in enumerate(value))
    return sorted(paths, key=lambda p: [str(x).zfill(12) for x in p])


def _at_path(value: Any, path: tuple[str | int, ...]) -> tuple[bool, Any]:
    for step in path:
        if isinstance(step, int) and isinstance(value, list) and step < len(value):
            value = value[step]
            continue
        if isinstance(step, str) and isinstance(value, dict) and step in value:
            value = value[step]
            continue
        return False, None
    return True, value


def clock_problems(expected: Any, actual: Any, *, now_ms: int | None = None) -> list[str]:
    """Clock readings that normalisation would hide but that cannot be this run's wall clock.

    An expectation's ``"<now>"`` stands for "the implementation's clock, in integer
    milliseconds since the epoch" (EVENT time, HDR createdAt). A well-formed integer
    there still has to be a reading taken during the run: one more than a day away
    from now (seconds instead of milliseconds, a constant, a counter) is reported.
    """
    now = time.time_ns() // 1_000_000 if now_ms is None else now_ms
    low, high = now - CLOCK_SLACK_MS, now + CLOCK_SLACK_MS
    problems = []
    for path in _now_paths(expected):
        found, value = _at_path(actual, path)
        if not found or not _is_clock(value) or low <= value <= high:
            continue  # absent or ill-typed values show in the structural diff
        where = "/" + "/".join(str(p).replace("~", "~0").replace("/", "~1") for p in path)
        if low // 1000 <= value <= high // 1000:
            why = "it reads as seconds since the epoch; times are integer milliseconds"
        elif value < low:
            why = "it is more than a day before this run; times are the wall clock in integer milliseconds"
        else:
            why = "it is more than a day after this run; times are the wall clock in integer milliseconds"
        problems.append(f"{where}: {value} is not a clock reading of this run ({why})")
        if len(problems) >= _MAX_DIFFS:
            break
    return problems


# -- structural diff ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Difference:
    """One place where the actual value departs from the expected one."""

    pointer: str
    kind: str  # "value" | "missing" | "unexpected" | "type"
    expected: Any = None
    actual: Any = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"pointer": self.pointer, "kind": self.kind}
        if self.kind != "unexpected":
            out["expected"] = self.expected
        if self.kind != "missing":
            out["actual"] = self.actual
        return out

    def render(self) -> str:
        where = self.pointer or "(root)"
        plain = _plain(where.rsplit("/", 1)[-1], self.expected, self.actual) if self.kind == "value" else None
        if plain:  # a field the harness computes from the reply: say what it means, not only the pointer
            return f"{where}: {plain} (expected {render_value(self.expected)}, got {render_value(self.actual)})"
        if self.kind == "missing":
            return f"{where}: missing, expected {render_value(self.expected)}"
        if self.kind == "unexpected":
            return f"{where}: unexpected {render_value(self.actual)}"
        return f"{where}: expected {render_value(self.expected)}, got {render_value(self.actual)}"


_PLAIN: dict[tuple[str, Any, Any], str] = {
    ("namesType", True, False): "the rejection's message does not name the event type (PERSIST-5: it must)",
    ("namesType", False, True): "the rejection's message names an event type where none was expected",
}
"""Plain words for the fields the harness computes from a reply (PROTOCOL.md §6a), keyed by field and values."""

_TOKEN = re.compile(r"^r[0-9]+$")


def _plain(field: str, expected: Any, actual: Any) -> str | None:
    """Plain words for a difference in a value the harness rewrote before comparing: the computed
    ``namesType``, and the revision tokens renamed ``r0``, ``r1``… by first appearance (PERSIST-8:
    only their equality is specified, so the number says which earlier token a token equals)."""
    words = _PLAIN.get((field, expected, actual))
    if words is None and field == "revision" and all(isinstance(v, str) and _TOKEN.match(v) for v in (expected, actual)):
        words = (f"the store's revision token should be {_token_words(expected)}, but it is {_token_words(actual)} "
                 "(tokens are renamed r0, r1, ... by first appearance: only their equality is compared, PERSIST-8)")
    return words


def _token_words(token: str) -> str:
    n = int(token[1:])
    return f"equal to distinct token number {n + 1} of the trace" if n else "equal to the trace's first token"


def render_value(value: Any, limit: int = 100) -> str:
    """Short one-line JSON text of a value for messages."""
    try:
        text = wire.dumps(value)
    except wire.WireError:
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


class _Path:
    """A parent-linked path: deep walks never copy whole paths."""

    __slots__ = ("depth", "parent", "token")

    def __init__(self, parent: _Path | None, token: str | int) -> None:
        self.parent = parent
        self.token = token
        self.depth: int = 0 if parent is None else parent.depth + 1

    def tokens(self) -> list[str]:
        out: list[str] = []
        node: _Path | None = self
        while node is not None and node.parent is not None:
            out.append(str(node.token))
            node = node.parent
        out.reverse()
        return out

    def pointer(self) -> str:
        return json_pointer(self.tokens())


def _parse_patterns(patterns: Iterable[str]) -> list[list[str]]:
    out: list[Any] = []
    for pattern in patterns:
        if pattern == "":
            out.append([])
            continue
        out.append([t.replace("~1", "/").replace("~0", "~") for t in pattern.split("/")[1:]])
    return out


def _ignored(path: _Path, patterns: list[list[str]]) -> bool:
    candidates = [p for p in patterns if len(p) == path.depth]
    if not candidates:
        return False
    tokens = path.tokens()
    return any(all(p == "*" or p == t for p, t in zip(pat, tokens, strict=True)) for pat in candidates)


def _is_number(value: Any) -> bool:
    return type(value) in (int, float)


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if _is_number(value):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _align(exp: list[Any], act: list[Any]) -> tuple[list[tuple[int, int]], list[int], list[int]]:
    """Pair up list items to compare; the rest are missing (expected index) or
    unexpected (actual index). Short lists of several items are aligned like a
    text diff, so one inserted trace entry reads as one insertion, not as every
    later entry differing."""
    if len(exp) < 2 or len(act) < 2 or max(len(exp), len(act)) > _ALIGN_LIMIT:
        common = min(len(exp), len(act))
        return ([(i, i) for i in range(common)], list(range(common, len(exp))), list(range(common, len(act))))
    ek = [render_value(v, 10_000) for v in exp]
    ak = [render_value(v, 10_000) for v in act]
    pairs: list[tuple[int, int]] = []
    missing: list[int] = []
    unexpected: list[int] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, ek, ak, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        common = min(i2 - i1, j2 - j1) if tag == "replace" else 0
        pairs.extend((i1 + k, j1 + k) for k in range(common))
        missing.extend(range(i1 + common, i2))
        unexpected.extend(range(j1 + common, j2))
    return pairs, missing, unexpected


def diff(expected: Any, actual: Any, ignore: Sequence[str] = (), limit: int = _MAX_DIFFS) -> list[Difference]:
    """The differences between two JSON values (at most ``limit``), in document order."""
    patterns = _parse_patterns(ignore)
    max_depth = max((len(p) for p in patterns), default=-1)
    found: list[Difference] = []
    root = _Path(None, "")
    stack: list[tuple[Any, Any, _Path]] = [(expected, actual, root)]
    while stack and len(found) < limit:
        exp, act, path = stack.pop()
        if path.depth <= max_depth and _ignored(path, patterns):
            continue
        if exp is act:
            continue
        ke, ka = _kind(exp), _kind(act)
        if ke != ka:
            structural = ke in ("object", "array") or ka in ("object", "array")
            found.append(Difference(path.pointer(), "type" if structural else "value", exp, act))
            continue
        if ke == "object":
            children: list[tuple[Any, Any, _Path]] = []
            for key in exp:  # presence is compared even where values are ignored
                if key not in act:
                    found.append(Difference(_Path(path, key).pointer(), "missing", exp[key]))
                else:
                    children.append((exp[key], act[key], _Path(path, key)))
            for key in act:
                if key not in exp:
                    found.append(Difference(_Path(path, key).pointer(), "unexpected", None, act[key]))
            stack.extend(reversed(children))
        elif ke == "array":
            pairs, missing, unexpected = _align(exp, act)
            found.extend(Difference(_Path(path, i).pointer(), "missing", exp[i]) for i in missing)
            found.extend(Difference(_Path(path, j).pointer(), "unexpected", None, act[j]) for j in unexpected)
            stack.extend((exp[i], act[j], _Path(path, j)) for i, j in reversed(pairs))
        elif exp != act:
            found.append(Difference(path.pointer(), "value", exp, act))
    found.sort(key=lambda d: d.pointer)
    return found[:limit]


# -- verdicts ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Verdict:
    """How one reply measured up: ``outcome`` is passed/failed/crashed/errored/skipped."""

    outcome: str
    message: str = ""
    differences: tuple[Difference, ...] = ()
    crash: Mapping[str, str] | None = None
    """``{"class", "message"}`` of an implementation crash (outcome ``crashed``)."""


def _describe_rejection(expected: Mapping[str, Any]) -> str:
    parts = []
    if "code" in expected:
        parts.append(expected["code"])
    if "index" in expected:
        parts.append(f"at index {expected['index']}")
    return "a rejection" + (f" ({', '.join(parts)})" if parts else "")


_TRACE_OPS = frozenset({"store", "oob", "persistence", "live"})


def _map_trace_codes(op: str, result: Any, code_map: Mapping[str, str] | None) -> Any:
    """Map the implementation's codes inside store/oob traces through ``codeMap`` (PROTOCOL.md §3).

    Every string value under a ``code`` key of the trace is a rejection code the
    implementation reported for one step; nothing else in a trace is named ``code``.
    """
    if not code_map or op not in _TRACE_OPS:
        return result
    root = [result]
    stack: list[Any] = [root]
    while stack:
        node = stack.pop()
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for key, value in list(items):
            if key == "code" and isinstance(value, str) and isinstance(node, dict):
                node[key] = code_map.get(value, value)
            elif isinstance(value, (dict, list)):
                copy = dict(value) if isinstance(value, dict) else list(value)
                node[key] = copy
                stack.append(copy)
    return root[0]


def judge(
    op: str,
    args: Mapping[str, Any],
    expect: Mapping[str, Any],
    reply: Mapping[str, Any],
    *,
    ignore: Sequence[str] = (),
    code_map: Mapping[str, str] | None = None,
) -> Verdict:
    """Compare one reply with one expectation (``{"result": ...}`` or ``{"rejected": {...}}``)."""
    kind = reply.get("kind")
    if kind == "errored":
        return Verdict("errored", str(reply.get("message", "errored")))
    if kind == "crashed":
        crash = {"class": str(reply.get("class", "")), "message": str(reply.get("message", ""))}
        wanted = "a result" if "result" in expect else _describe_rejection(expect.get("rejected") or {})
        return Verdict("crashed", f"expected {wanted}, the implementation crashed: {crash['class']}: {crash['message']}",
                       crash=crash)
    if kind == "skipped":
        return Verdict("skipped", str(reply.get("reason", "skipped by the adapter")))
    code = reply.get("code")
    if code_map and isinstance(code, str):
        code = code_map.get(code, code)
    if "result" in expect:
        if kind == "rejected":
            where = f" at index {reply['index']}" if "index" in reply else ""
            phase = " while setting up" if reply.get("phase") == "setup" else ""
            return Verdict("failed", f"expected a result, got a rejection{phase}{where}: {code}: {reply.get('message', '')}")
        want = normalise_result(op, args, expect["result"])
        got = normalise_result(op, args, _map_trace_codes(op, reply.get("result"), code_map))
        found = diff(want, got, ignore)
        clocks = clock_problems(expect["result"], reply.get("result")) if op in CLOCK_CHECKED else []
        if clocks:
            more = f"; the result also differs in {len(found)} place(s)" if found else ""
            return Verdict("failed", "implausible clock reading: " + "; ".join(clocks) + more, tuple(found))
        if found:
            return Verdict("failed", f"result differs in {len(found)} place(s)", tuple(found))
        return Verdict("passed")
    want_rej: Mapping[str, Any] = expect.get("rejected", {})
    if kind == "result":
        return Verdict("failed", f"expected {_describe_rejection(want_rej)}, got a result")
    problems: list[str] = []
    if reply.get("phase") != want_rej.get("phase"):
        if reply.get("phase") == "setup":
            problems.append(f"rejected while setting up, not in the operation under test: {code}: {reply.get('message', '')}")
        else:
            problems.append(f"expected a rejection in phase {want_rej.get('phase')}, got one in the operation itself")
    if "code" in want_rej and code != want_rej["code"]:
        problems.append(f"expected code {want_rej['code']}, got {code}")
    if "index" in want_rej and reply.get("index") != want_rej["index"]:
        problems.append(f"expected index {want_rej['index']}, got {reply.get('index')}")
    found: list[Difference] = []  # type: ignore[no-redef]
    if "state" in want_rej:
        normalise = _STATE_NORMALISERS.get(op)
        want_state = normalise(args, want_rej["state"]) if normalise else want_rej["state"]
        if "state" not in reply:
            problems.append("expected the state after the rejection, the reply has none")
        else:
            got_state = normalise(args, reply["state"]) if normalise else reply["state"]
            found = [
                Difference("/state" + d.pointer, d.kind, d.expected, d.actual) for d in diff(want_state, got_state, ignore)
            ]
            if found:
                problems.append(f"state after the rejection differs in {len(found)} place(s)")
    if problems:
        return Verdict("failed", "; ".join(problems) + f" (message: {reply.get('message', '')})", tuple(found))
    return Verdict("passed")
