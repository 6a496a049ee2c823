"""The format constants of `spec/constants.json` as one typed, read-once object.

Every module that needs a constant reads it from `FORMAT` (never from the JSON
again), so a constant has one name and one type everywhere.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from types import MappingProxyType
from typing import Any

__all__ = ["FORMAT", "FormatConstants", "RowLayout"]


def _frozen(value: Any) -> Any:
    """A read-only deep view of JSON data (objects become mapping proxies, arrays tuples)."""
    if isinstance(value, dict):
        return MappingProxyType({k: _frozen(v) for k, v in value.items()})
    if isinstance(value, list):
        return tuple(_frozen(v) for v in value)
    return value


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
    repair: Mapping[str, Any]
    minted_session_id_prefix: str
    fork_error_codes: tuple[str, ...]
    jsonl: Mapping[str, Any]
    jsonl_header_line_type: str

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> FormatConstants:
        rows = raw["chunkRows"]["rows"]
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
            repair=_frozen(raw["repair"]),
            minted_session_id_prefix=raw["mintedSessionIdPrefix"],
            fork_error_codes=tuple(raw["forkErrorCodes"]),
            jsonl=_frozen(raw["jsonl"]),
            jsonl_header_line_type=raw["jsonl"]["headerLineType"],
        )


FORMAT: FormatConstants = FormatConstants.from_json(
    json.loads(resources.files("sessionspec.spec").joinpath("constants.json").read_text(encoding="utf-8"))
)
