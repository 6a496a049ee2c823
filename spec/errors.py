"""One exception hierarchy for every rejection the format defines.

Every error carries a stable ``code`` (upper snake case, listed in
``spec/errors.json``), the ``requirement`` id of the rule it enforces and,
where it applies, the zero-based ``index`` / ``seq`` of the offending event.
Message wording is not API; codes and fields are.
"""

from __future__ import annotations

from typing import Any

from sessionspec.spec.error_codes import ErrorCode
from sessionspec.spec.schema_types import JsonValue


class SessionSpecError(Exception):
    """Root of every error the reference raises on purpose."""

    default_code: str = "SESSION_SPEC_ERROR"  # a family's fallback when no stable code is given

    def __init__(
        self,
        message: str,
        code: ErrorCode | None = None,
        *,
        requirement: str | None = None,
        index: int | None = None,
        seq: int | None = None,
        path: str | None = None,
        cause: BaseException | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code: str = code or self.default_code
        self.requirement = requirement
        self.index = index
        self.seq = seq
        self.path = path
        if cause is not None:
            self.__cause__ = cause

    def __str__(self) -> str:
        where = []
        if self.index is not None:
            where.append(f"index {self.index}")
        if self.seq is not None and self.seq != self.index:
            where.append(f"seq {self.seq}")
        if self.path:
            where.append(self.path)
        suffix = f" [{self.code}" + (f", {self.requirement}" if self.requirement else "") + "]"
        prefix = f"{', '.join(where)}: " if where else ""
        return f"{prefix}{self.message}{suffix}"

    def to_json(self) -> dict[str, JsonValue]:
        """The language-neutral form used by reports and the adapter protocol."""
        out: dict[str, Any] = {"code": self.code, "message": self.message}
        for key in ("requirement", "index", "seq", "path"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        return out


class JsonValueError(SessionSpecError, ValueError):
    """A value is not a lossless JSON value (JSON-*)."""

    default_code = "JSON_NOT_LOSSLESS"


class JsonTextError(SessionSpecError, ValueError):
    """JSON text could not be parsed or written under the strict rules (JSON-12, JSON-13)."""

    default_code = "JSON_TEXT_INVALID"


class AppendError(SessionSpecError, ValueError):
    """`Session.append` rejected a candidate before any surface check (APPEND-*)."""

    default_code = "APPEND_REJECTED"


class SurfaceError(SessionSpecError, ValueError):
    """A candidate violates the surface fold rules (SURF-*)."""

    default_code = "SURFACE_INVALID"


class SeedError(SessionSpecError, ValueError):
    """A seed entry is rejected (SEED-*); ``index`` names the entry."""

    default_code = "SEED_INVALID"


class HeaderError(SessionSpecError, ValueError):
    """A session header is rejected (HDR-*)."""

    default_code = "HEADER_INVALID"


class StoreError(SessionSpecError, RuntimeError):
    """A store lifecycle operation is rejected (STORE-*)."""

    default_code = "STORE_REJECTED"


class OutOfBandError(SessionSpecError, RuntimeError):
    """An out-of-band append is rejected (OOB-*)."""

    default_code = "OOB_REJECTED"


class SessionForkError(SessionSpecError, RuntimeError):
    """A fork is rejected; ``code`` is one of the five fork codes (FORK-*)."""

    default_code = "INVALID_BOUNDARY"


class ChunkRowError(SessionSpecError, ValueError):
    """A packed chunk row is malformed (CHUNK-9)."""

    default_code = "CHUNK_ROW_MALFORMED"


class JsonlError(SessionSpecError, ValueError):
    """A JSONL artifact cannot be read or loaded (JSONL-*)."""

    default_code = "JSONL_CORRUPT"


class InvariantError(SessionSpecError, ValueError):
    """The optional relational checker rejects an event (INV-*)."""

    default_code = "INVARIANT_VIOLATION"


class CompressedArtifactError(JsonlError):
    """A zstd-framed JSONL artifact cannot be read (ZSTD-*): invalid framing, a corrupt or oversized frame."""

    default_code = "ZSTD_FRAME_CORRUPT"


class SqliteStoreError(SessionSpecError, ValueError):
    """A SQLite session store cannot be opened, read or written (SQLITE-*)."""

    default_code = "SQLITE_CORRUPT"


class PersistenceError(SessionSpecError, ValueError):
    """A persistence backend rejects an operation of the backend contract (PERSIST-*)."""

    default_code = "PERSIST_SEQ_GAP"
