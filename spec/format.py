"""The format constants of `spec/constants.json` as one typed, read-once object.

Every module that needs a constant reads it from `FORMAT` (never from the JSON
again), so a constant has one name and one type everywhere.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, TypedDict, TypeVar, cast

from sessionspec.spec.error_codes import ERROR_CODES, ErrorCode
from sessionspec.spec.package_files import spec_root
from sessionspec.spec.schema_types import JsonObject, JsonValue

if TYPE_CHECKING:  # (read by mypy only: a member of these views cannot be assigned)
    from typing_extensions import ReadOnly

__all__ = ["FORMAT", "FormatConstants", "JsonlConstants", "RepairConstants", "RepairText", "RowLayout"]


class RepairText(TypedDict):
    """`constants.json#/repair/notStarted` and `/outcomeUnknown`: a synthetic tool result's error (REPAIR-9)."""

    code: ReadOnly[str]
    name: ReadOnly[str]
    text: ReadOnly[str]


class RepairConstants(TypedDict):
    """`constants.json#/repair` (REPAIR-*), as a read-only view."""

    turnEndReason: ReadOnly[Mapping[str, str]]
    notStarted: ReadOnly[RepairText]
    outcomeUnknown: ReadOnly[RepairText]


class JsonlConstants(TypedDict):
    """`constants.json#/jsonl` (JSONL-*), as a read-only view (arrays as tuples)."""

    headerLineType: ReadOnly[str]
    headerKeyOrder: ReadOnly[tuple[str, ...]]
    plainFileName: ReadOnly[str]
    compressedFileName: ReadOnly[str]
    noCwdDirectory: ReadOnly[str]
    projectKeyMaxLength: ReadOnly[int]
    versionRefusedOnRead: ReadOnly[bool]
    headerLineOptionalFields: ReadOnly[JsonObject]
    unknownTypesOnLoad: ReadOnly[str]


_Shape = TypeVar("_Shape")


def _frozen(value: JsonValue) -> JsonValue:
    """A read-only deep view of JSON data (objects become mapping proxies, arrays tuples)."""
    if isinstance(value, dict):
        return MappingProxyType({k: _frozen(v) for k, v in value.items()})
    if isinstance(value, list):
        return tuple(_frozen(v) for v in value)
    return value


def _view(value: JsonValue, shape: type[_Shape], where: str) -> _Shape:
    """``value`` frozen, as ``shape`` (a TypedDict) once its keys are those the shape names."""
    keys = set(shape.__annotations__)
    if not isinstance(value, dict) or set(value) != keys:
        raise ValueError(f"spec/constants.json#/{where}: expected the keys {sorted(keys)}, "
                         f"got {sorted(value) if isinstance(value, dict) else type(value).__name__}")
    return cast("_Shape", _frozen(value))


@dataclass(frozen=True)
class RowLayout:
    """One chunk-row tag's storage layout (CHUNK-*), as `constants.json#/chunkRows/rows` gives it."""

    tag: str
    chunk_type: str
    data_keys: tuple[str, ...]
    optional_data_keys: tuple[str, ...]
    member_key: str
    list_key: str


@dataclass(frozen=True)
class FormatConstants:
    """The constants readers and writers depend on byte for byte (`spec/constants.json`)."""

    session_format_version: int
    max_safe_integer: int
    surface_types: frozenset[str]
    legacy_rejected_types: tuple[str, ...]
    """Ordered as in the spec: the removed delta vocabulary first (REQ-7), then `mode/set` (JSONL-12)."""
    rejected_request_header_reasons: frozenset[str]
    request_header_reasons: tuple[str, ...]
    envelope_keys: frozenset[str]
    """Every key a stored event may carry (SEED-3)."""
    chunk_min_run: int
    chunk_rows: Mapping[str, RowLayout]
    repair: RepairConstants
    minted_session_id_prefix: str
    fork_error_codes: tuple[ErrorCode, ...]
    jsonl: JsonlConstants
    jsonl_header_line_type: str

    @classmethod
    def from_json(cls, document: JsonObject) -> FormatConstants:
        """The constants of ``spec/constants.json``'s document (its shape is the spec's own, so read as such)."""
        raw: Any = document  # read member by member: a missing or mistyped member fails the import, not later
        rows = raw["chunkRows"]["rows"]
        fork_codes = tuple(raw["forkErrorCodes"])
        unlisted = [code for code in fork_codes if code not in ERROR_CODES]
        if unlisted:
            raise ValueError(f"spec/constants.json#/forkErrorCodes: {unlisted} are not in spec/errors.json")
        return cls(
            session_format_version=raw["sessionFormatVersion"],
            max_safe_integer=raw["maxSafeInteger"],
            surface_types=frozenset(raw["surfaceTypes"]),
            legacy_rejected_types=tuple(raw["legacyRejectedTypes"]),
            rejected_request_header_reasons=frozenset(raw["rejectedRequestHeaderReasons"]),
            request_header_reasons=tuple(raw["requestHeaderReasons"]),
            envelope_keys=frozenset(raw["envelopeKeys"]),
            chunk_min_run=raw["chunkRows"]["minRun"],
            chunk_rows=MappingProxyType({
                tag: RowLayout(tag, row["chunkType"], tuple(row["dataKeys"]), tuple(row.get("optionalDataKeys", ())),
                               row["memberKey"], row["listKey"])
                for tag, row in rows.items()
            }),
            repair=_view(raw["repair"], RepairConstants, "repair"),
            minted_session_id_prefix=raw["mintedSessionIdPrefix"],
            fork_error_codes=fork_codes,
            jsonl=_view(raw["jsonl"], JsonlConstants, "jsonl"),
            jsonl_header_line_type=raw["jsonl"]["headerLineType"],
        )


FORMAT: FormatConstants = FormatConstants.from_json(
    json.loads(spec_root().joinpath("constants.json").read_text(encoding="utf-8"))
)
