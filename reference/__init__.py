"""The dsh-session reference implementation; every public name is re-exported here.

The names are imported on first use (PEP 562 ``__getattr__``): a command pays only for the modules
it touches (``sessionspec validate`` never loads the store, SQLite or zstd). ``_HOMES`` says where
each name lives; the imports under ``TYPE_CHECKING`` say the same to type checkers and readers
(``tests/reference/test_lazy_package.py`` keeps the two and ``__all__`` equal).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sessionspec.spec import (
        FORMAT,
        FormatConstants,
    )
    from sessionspec.spec.errors import (
        AppendError,
        ChunkRowError,
        CompressedArtifactError,
        HeaderError,
        InvariantError,
        JsonlError,
        JsonTextError,
        JsonValueError,
        OutOfBandError,
        PersistenceError,
        SeedError,
        SessionForkError,
        SessionSpecError,
        SqliteStoreError,
        StoreError,
        SurfaceError,
    )

    from .chunk_rows import (
        MIN_RUN,
        NUMBER_KEYS,
        ROW_ENVELOPE_KEYS,
        ROW_SPECS,
        ROW_TYPES,
        RowSpec,
        decode_storage_record,
        decode_storage_records,
        pack_chunk_runs,
    )
    from .derive import (
        MessageLog,
        derive_event_message,
        derive_messages,
    )
    from .find import (
        find_last_message_turn_end,
    )
    from .finding import (
        ERROR,
        WARNING,
        Finding,
    )
    from .invariants import (
        InvariantChecker,
        InvariantFold,
        InvariantTrace,
        check_invariants,
    )
    from .json_text import (
        dumps,
        dumps_bytes,
        loads,
        loads_with_duplicates,
    )
    from .json_value import (
        MAX_SAFE_INTEGER,
        FrozenDict,
        FrozenList,
        JsonObject,
        JsonValue,
        freeze_json_value,
        gc_paused,
        is_json_value,
        is_nonneg_safe_int,
        is_safe_int,
        json_equal,
        snapshot_json_value,
        thaw_json_value,
    )
    from .jsonl import (
        Artifact,
        LoadedArtifact,
        append_batch,
        encode_path_segment,
        encode_records,
        header_bytes,
        header_line,
        load_artifact,
        project_dir_key,
        read_artifact,
        session_log_path,
        write_artifact,
    )
    from .jsonl_read import (
        Explainer,
        FindingList,
        LoadedLog,
        fragment_finding,
        header_line_problem,
        is_negative_zero,
        load_log,
        parse_line,
    )
    from .jsonl_zstd import (
        CompressedArtifact,
        append_compressed_batch,
        load_compressed_artifact,
        read_compressed_artifact,
        write_compressed_artifact,
    )
    from .repair import (
        interrupted_turn_closers,
    )
    from .request_header import (
        RequestHeaderFold,
        call_config_equals,
        canonical_header,
        fold_request_header,
        header_equals,
    )
    from .revision import (
        RevisionLike,
    )
    from .session import (
        NO_HEADER,
        SEED_DATA_RULE_TYPES,
        SESSION_FORMAT_VERSION,
        Clock,
        Session,
        SteppingClock,
        check_seed_entry,
        envelope_defects,
        envelope_findings,
        has_provider_model,
        is_event_envelope,
        validate_header,
        validate_seed,
    )
    from .sqlite_store import (
        SqliteStore,
        StoredSession,
    )
    from .store import (
        Scope,
        SessionStore,
    )
    from .surface import (
        SurfacePlan,
        SurfaceState,
        SurfaceView,
        fold_surface,
        is_surface_eligible_type,
        is_surface_event,
        plain_append_sources,
    )

__all__ = [
    "ERROR",
    "FORMAT",
    "MAX_SAFE_INTEGER",
    "MIN_RUN",
    "NO_HEADER",
    "NUMBER_KEYS",
    "ROW_ENVELOPE_KEYS",
    "ROW_SPECS",
    "ROW_TYPES",
    "SEED_DATA_RULE_TYPES",
    "SESSION_FORMAT_VERSION",
    "WARNING",
    "AppendError",
    "Artifact",
    "ChunkRowError",
    "Clock",
    "CompressedArtifact",
    "CompressedArtifactError",
    "Explainer",
    "Finding",
    "FindingList",
    "FormatConstants",
    "FrozenDict",
    "FrozenList",
    "HeaderError",
    "InvariantChecker",
    "InvariantError",
    "InvariantFold",
    "InvariantTrace",
    "JsonObject",
    "JsonTextError",
    "JsonValue",
    "JsonValueError",
    "JsonlError",
    "LoadedArtifact",
    "LoadedLog",
    "MessageLog",
    "OutOfBandError",
    "PersistenceError",
    "RequestHeaderFold",
    "RevisionLike",
    "RowSpec",
    "Scope",
    "SeedError",
    "Session",
    "SessionForkError",
    "SessionSpecError",
    "SessionStore",
    "SqliteStore",
    "SqliteStoreError",
    "SteppingClock",
    "StoreError",
    "StoredSession",
    "SurfaceError",
    "SurfacePlan",
    "SurfaceState",
    "SurfaceView",
    "append_batch",
    "append_compressed_batch",
    "call_config_equals",
    "canonical_header",
    "check_invariants",
    "check_seed_entry",
    "decode_storage_record",
    "decode_storage_records",
    "derive_event_message",
    "derive_messages",
    "dumps",
    "dumps_bytes",
    "encode_path_segment",
    "encode_records",
    "envelope_defects",
    "envelope_findings",
    "find_last_message_turn_end",
    "fold_request_header",
    "fold_surface",
    "fragment_finding",
    "freeze_json_value",
    "gc_paused",
    "has_provider_model",
    "header_bytes",
    "header_equals",
    "header_line",
    "header_line_problem",
    "interrupted_turn_closers",
    "is_event_envelope",
    "is_json_value",
    "is_negative_zero",
    "is_nonneg_safe_int",
    "is_safe_int",
    "is_surface_eligible_type",
    "is_surface_event",
    "json_equal",
    "load_artifact",
    "load_compressed_artifact",
    "load_log",
    "loads",
    "loads_with_duplicates",
    "pack_chunk_runs",
    "parse_line",
    "plain_append_sources",
    "project_dir_key",
    "read_artifact",
    "read_compressed_artifact",
    "session_log_path",
    "snapshot_json_value",
    "thaw_json_value",
    "validate_header",
    "validate_seed",
    "write_artifact",
    "write_compressed_artifact",
]

#: module (relative to this package, or absolute) -> the public names it defines
_HOMES: dict[str, tuple[str, ...]] = {
    "sessionspec.spec": ("FORMAT", "FormatConstants"),
    "sessionspec.spec.errors": (
        "AppendError", "ChunkRowError", "CompressedArtifactError", "HeaderError", "InvariantError", "JsonlError",
        "JsonTextError", "JsonValueError", "OutOfBandError", "PersistenceError", "SeedError", "SessionForkError",
        "SessionSpecError", "SqliteStoreError", "StoreError", "SurfaceError"
    ),
    ".chunk_rows": (
        "MIN_RUN", "NUMBER_KEYS", "ROW_ENVELOPE_KEYS", "ROW_SPECS", "ROW_TYPES", "RowSpec", "decode_storage_record",
        "decode_storage_records", "pack_chunk_runs"
    ),
    ".derive": ("MessageLog", "derive_event_message", "derive_messages"),
    ".find": ("find_last_message_turn_end",),
    ".invariants": ("InvariantChecker", "InvariantFold", "InvariantTrace", "check_invariants"),
    ".json_text": ("dumps", "dumps_bytes", "loads", "loads_with_duplicates"),
    ".json_value": (
        "MAX_SAFE_INTEGER", "FrozenDict", "FrozenList", "JsonObject", "JsonValue", "freeze_json_value", "gc_paused", "is_json_value",
        "is_nonneg_safe_int", "is_safe_int", "json_equal", "snapshot_json_value", "thaw_json_value"
    ),
    ".jsonl": (
        "Artifact", "LoadedArtifact", "append_batch", "encode_path_segment", "encode_records", "header_bytes",
        "header_line", "load_artifact", "project_dir_key", "read_artifact", "session_log_path", "write_artifact"
    ),
    ".finding": ("ERROR", "WARNING", "Finding"),
    ".jsonl_read": (
        "Explainer", "FindingList", "LoadedLog", "fragment_finding",
        "header_line_problem", "is_negative_zero", "load_log", "parse_line"
    ),
    ".jsonl_zstd": (
        "CompressedArtifact", "append_compressed_batch", "load_compressed_artifact", "read_compressed_artifact",
        "write_compressed_artifact"
    ),
    ".repair": ("interrupted_turn_closers",),
    ".revision": ("RevisionLike",),
    ".request_header": (
        "RequestHeaderFold", "call_config_equals", "canonical_header", "fold_request_header", "header_equals"
    ),
    ".session": (
        "NO_HEADER", "SEED_DATA_RULE_TYPES", "SESSION_FORMAT_VERSION", "Clock", "Session", "SteppingClock",
        "check_seed_entry",
        "envelope_defects", "envelope_findings", "has_provider_model", "is_event_envelope", "validate_header", "validate_seed"
    ),
    ".sqlite_store": ("SqliteStore", "StoredSession"),
    ".store": ("Scope", "SessionStore"),
    ".surface": (
        "SurfacePlan", "SurfaceState", "SurfaceView", "fold_surface",
        "is_surface_eligible_type", "is_surface_event", "plain_append_sources"
    ),
}
_HOME_OF = {name: module for module, names in _HOMES.items() for name in names}


def __getattr__(name: str) -> object:
    module = _HOME_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOME_OF})
