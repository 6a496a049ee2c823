"""The request header in force: canonical form, equality and folds (REQ-1..8).

A ``request/header`` event logs a full snapshot ``{header: {config, system?,
tools?}, reason}``; the header in force after a log prefix is the canonical
form of the last snapshot. There is no delta vocabulary (REQ-7): the legacy
``request/header-delta`` type and the ``fallback`` reason are rejected by the
append, seed and load paths, not here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from sessionspec.spec import FORMAT
from sessionspec.spec.schema_types import JsonObject, JsonValue

from .json_text import dumps
from .json_value import FrozenDict, freeze_json_value, json_equal
from .revision import rules_for
from .rule_table import TABLE, define

if TYPE_CHECKING:
    from sessionspec.reference.revision import RevisionLike

__all__ = [
    "REQUEST_HEADER_TYPE",
    "RequestHeaderFold",
    "call_config_equals",
    "canonical_header",
    "fold_request_header",
    "header_equals",
    "is_rejected_reason",
]

REQUEST_HEADER_TYPE = "request/header"
_REJECTED_REASONS = FORMAT.rejected_request_header_reasons
_MISSING: Any = object()


def is_rejected_reason(reason: object) -> bool:
    """True for a removed request/header reason (``fallback``); any non-string is not one (REQ-6)."""
    return isinstance(reason, str) and reason in _REJECTED_REASONS
def canonical_header(header: JsonObject, revision: RevisionLike = None) -> dict[str, JsonValue]:
    """``{config}`` plus ``system`` if a non-empty string, plus ``tools`` if a non-empty list (REQ-1).

    Other keys (e.g. a legacy ``messagePrefix``) are dropped; values are passed
    through as the same objects and ``header`` is not modified. A missing
    ``config`` stays missing; a non-object header canonicalises to ``{}``.
    At a revision with adapter-default markers, ``adapterDefaults`` is kept
    unchanged when one of its markers is ``true``.
    """
    return TABLE.canonical_header(header, revision)  # type: ignore[no-any-return]


def _canonical_header(header: Mapping[str, Any], revision: RevisionLike = None) -> dict[str, Any]:
    if not isinstance(header, Mapping):
        return {}
    out: dict[str, Any] = {}
    config = header.get("config", _MISSING)
    if config is not _MISSING:
        out["config"] = config
    system = header.get("system")
    if isinstance(system, str) and system:
        out["system"] = system
    tools = header.get("tools")
    if isinstance(tools, list) and tools:
        out["tools"] = tools
    markers = rules_for(revision).adapter_default_markers
    if markers:
        defaults = header.get("adapterDefaults")
        if isinstance(defaults, Mapping) and any(defaults.get(m) is True for m in markers):
            out["adapterDefaults"] = defaults
    return out


define("canonical_header", _canonical_header)  # REQ-1


def _header_of(event: Mapping[str, Any]) -> Any:
    data = event.get("data")
    return data.get("header") if isinstance(data, Mapping) else None


def fold_request_header(
    events: Iterable[JsonObject], start: JsonObject | None = None, revision: RevisionLike = None
) -> JsonObject | None:
    """Canonical header of the last ``request/header`` in ``events``, else ``start`` itself (REQ-2)."""
    state = start
    for event in events:
        if event.get("type") == REQUEST_HEADER_TYPE:
            state = canonical_header(_header_of(event), revision)
    return state


def _field_equal(a: Mapping[str, Any], b: Mapping[str, Any], key: str) -> bool:
    x = a.get(key, _MISSING)
    y = b.get(key, _MISSING)
    if x is _MISSING or y is _MISSING:
        return x is y
    return json_equal(x, y)


def call_config_equals(a: JsonObject | None, b: JsonObject | None, revision: RevisionLike = None) -> bool:
    """Field-wise equality of two call configs (REQ-5).

    ``provider``, ``model``, ``temperature``, ``maxTokens`` must be equal with
    absent != present; ``stop`` absent in both, or two lists of equal length
    with equal strings in order. Values compare with DEC-4 equality (so
    ``1 != 1.0``: they are logged differently).
    """
    a = a if isinstance(a, Mapping) else {}
    b = b if isinstance(b, Mapping) else {}
    for key in rules_for(revision).call_config_fields:
        if not _field_equal(a, b, key):
            return False
    return _field_equal(a, b, "stop")


def header_equals(a: JsonObject, b: JsonObject, revision: RevisionLike = None) -> bool:
    """Equality of canonical headers (REQ-4).

    Configs per :func:`call_config_equals`; ``system`` raw (absent != ``''``);
    tool lists (absent = ``[]``) pairwise identical as compact JSON text, so the
    order of tools and of keys inside a schema both matter.
    """
    return TABLE.header_equals(a, b, revision)  # type: ignore[no-any-return]


def _header_equals(a: Mapping[str, Any], b: Mapping[str, Any], revision: RevisionLike = None) -> bool:
    rules = rules_for(revision)
    if not call_config_equals(a.get("config"), b.get("config"), rules):
        return False
    if rules.adapter_default_markers and not _markers_equal(a, b, rules.adapter_default_markers):
        return False
    sa = a.get("system", _MISSING)
    sb = b.get("system", _MISSING)
    if (sa is _MISSING) != (sb is _MISSING) or (sa is not _MISSING and not json_equal(sa, sb)):
        return False
    ta: Sequence[Any] = a.get("tools") or []
    tb: Sequence[Any] = b.get("tools") or []
    if len(ta) != len(tb):
        return False
    return all(x is y or dumps(x) == dumps(y) for x, y in zip(ta, tb))


define("header_equals", _header_equals)  # REQ-4
define("header_fold_start", 0)  # REQ-3: the first log position the live fold reads (the header in force at seq 0 counts)


def _markers_equal(a: Mapping[str, Any], b: Mapping[str, Any], markers: Sequence[str]) -> bool:
    """Each adapter-default marker is set (``true``) in both headers or in neither (REQ-4)."""
    da = a.get("adapterDefaults")
    db = b.get("adapterDefaults")
    da = da if isinstance(da, Mapping) else {}
    db = db if isinstance(db, Mapping) else {}
    return all(_same_marker(da.get(m, _MISSING), db.get(m, _MISSING)) for m in markers)


def _same_marker(x: Any, y: Any) -> bool:
    if x is _MISSING or y is _MISSING:
        return x is y
    return json_equal(x, y)


class RequestHeaderFold:
    """Incremental :func:`fold_request_header` for a live log (REQ-3).

    Each event is looked at once; the result is frozen (deeply read-only) and
    the same object until a later ``request/header`` changes it.
    """

    __slots__ = ("_consumed", "_rules", "_state")

    def __init__(self, revision: RevisionLike = None) -> None:
        self._state: FrozenDict | None = None
        self._consumed = 0
        self._rules = rules_for(revision)

    @property
    def consumed(self) -> int:
        """Number of log events folded so far."""
        return self._consumed

    def push(self, event: JsonObject) -> None:
        """Fold one more event (the next one of the log)."""
        self._consumed += 1
        if event.get("type") == REQUEST_HEADER_TYPE:
            self._state = freeze_json_value(canonical_header(_header_of(event), self._rules))

    def fold(self, events: Sequence[JsonObject]) -> FrozenDict | None:
        """Fold the events of ``events`` not seen yet and return the header in force."""
        last = None
        for i in range(max(self._consumed, TABLE.header_fold_start), len(events)):
            if events[i].get("type") == REQUEST_HEADER_TYPE:
                last = events[i]
        if last is not None:
            self._state = freeze_json_value(canonical_header(_header_of(last), self._rules))
        if len(events) > self._consumed:
            self._consumed = len(events)
        return self._state

    @property
    def value(self) -> FrozenDict | None:
        """The header in force after the events folded so far (``None`` before any)."""
        return self._state
