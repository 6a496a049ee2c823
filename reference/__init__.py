"""The dsh-session reference implementation; every public name is re-exported here."""

from __future__ import annotations

from sessionspec.spec.errors import (  # noqa: F401
    AppendError,
    ChunkRowError,
    HeaderError,
    InvariantError,
    JsonlError,
    JsonTextError,
    JsonValueError,
    OutOfBandError,
    SeedError,
    SessionForkError,
    SessionSpecError,
    StoreError,
    SurfaceError,
)
from .json_value import (  # noqa: F401
    MAX_SAFE_INTEGER,
    FrozenDict,
    FrozenList,
    freeze_json_value,
    gc_paused,
    is_json_value,
    is_nonneg_safe_int,
    is_safe_int,
    json_equal,
    snapshot_json_value,
    thaw_json_value,
)
from .surface import (  # noqa: F401
    SurfacePlan,
    SurfaceState,
    SurfaceView,
    fold_surface,
    is_surface_eligible_type,
    is_surface_event,
)
from .json_text import dumps, dumps_bytes, loads, loads_with_duplicates  # noqa: F401
from .derive import MessageLog, derive_event_message, derive_messages  # noqa: F401
from .request_header import (  # noqa: F401
    RequestHeaderFold,
    call_config_equals,
    canonical_header,
    fold_request_header,
    header_equals,
)
from .find import find_last_message_turn_end  # noqa: F401
from .chunk_rows import MIN_RUN, ROW_TYPES, decode_storage_record, decode_storage_records, pack_chunk_runs  # noqa: F401
from .repair import interrupted_turn_closers  # noqa: F401
from .session import NO_HEADER, SESSION_FORMAT_VERSION, Session, validate_header, validate_seed  # noqa: F401
from .store import Scope, SessionStore  # noqa: F401
from .invariants import InvariantChecker, InvariantFold, InvariantTrace, check_invariants  # noqa: F401
from .jsonl import (  # noqa: F401
    Artifact,
    LoadedArtifact,
    append_batch,
    encode_path_segment,
    encode_records,
    header_line,
    load_artifact,
    project_dir_key,
    read_artifact,
    session_log_path,
    write_artifact,
)
