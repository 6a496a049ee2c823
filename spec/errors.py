"""One exception hierarchy for every rejection the format defines.

Every error carries a stable ``code`` (upper snake case, listed in
``spec/errors.json``), the ``requirement`` id of the rule it enforces and,
where it applies, the zero-based ``index`` / ``seq`` of the offending event.
Message wording is not API; codes and fields are.
"""

from __future__ import annotations

from typing import ClassVar

from sessionspec.spec.error_codes import ErrorCode
from sessionspec.spec.schema_types import JsonValue


class SessionSpecError(Exception):
    """Root of every error the reference raises on purpose."""

    #: the code of a family whose every error has one (a listed code), or None: then each raise names its code
    default_code: ClassVar[ErrorCode | None] = None

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
        resolved = code or self.default_code
        if resolved is None:
            raise TypeError(f"{type(self).__name__} needs a code listed in spec/errors.json (its family has no default)")
        self.code: ErrorCode = resolved
        self.requirement = requirement
        self.index = index
        self.seq = seq
        self.path = path
        if cause is not None:
            self.__cause__ = cause

    def __reduce__(self) -> tuple[object, ...]:
        """Pickled (``validate -j``'s workers, Dask) as its state: made again without ``__init__``, so a family
        without a default code and a subclass with its own arguments come back as they were."""
        return _rebuild, (type(self), self.args, self.__dict__.copy())

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
        out: dict[str, JsonValue] = {"code": self.code, "message": self.message}
        for key in ("requirement", "index", "seq", "path"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        return out


def _rebuild(cls: type[SessionSpecError], args: tuple[object, ...], state: dict[str, object]) -> SessionSpecError:
    """An unpickled error: its class, ``args`` and attributes as they were pickled."""
    error = cls.__new__(cls, *args)
    error.args = args
    error.__dict__.update(state)
    return error


class JsonValueError(SessionSpecError, ValueError):
    """A value is not a lossless JSON value (JSON-*)."""

    default_code: ClassVar[ErrorCode | None] = "JSON_NOT_LOSSLESS"


class JsonTextError(SessionSpecError, ValueError):
    """JSON text could not be parsed or written under the strict rules (JSON-12, JSON-13)."""

    default_code: ClassVar[ErrorCode | None] = "JSON_TEXT_INVALID"


class AppendError(SessionSpecError, ValueError):
    """`Session.append` rejected a candidate before any surface check (APPEND-*)."""


class SurfaceError(SessionSpecError, ValueError):
    """A candidate violates the surface fold rules (SURF-*)."""


class SeedError(SessionSpecError, ValueError):
    """A seed entry is rejected (SEED-*); ``index`` names the entry."""


class HeaderError(SessionSpecError, ValueError):
    """A session header is rejected (HDR-*)."""


class StoreError(SessionSpecError, RuntimeError):
    """A store lifecycle operation is rejected (STORE-*)."""


class OutOfBandError(SessionSpecError, RuntimeError):
    """An out-of-band append is rejected (OOB-*)."""


class SessionForkError(SessionSpecError, RuntimeError):
    """A fork is rejected; ``code`` is one of the five fork codes (FORK-*)."""

    default_code: ClassVar[ErrorCode | None] = "INVALID_BOUNDARY"


class ChunkRowError(SessionSpecError, ValueError):
    """A packed chunk row is malformed (CHUNK-9)."""

    default_code: ClassVar[ErrorCode | None] = "CHUNK_ROW_MALFORMED"


class JsonlError(SessionSpecError, ValueError):
    """A JSONL artifact cannot be read or loaded (JSONL-*)."""

    default_code: ClassVar[ErrorCode | None] = "JSONL_CORRUPT"


class InvariantError(SessionSpecError, ValueError):
    """The optional relational checker rejects an event (INV-*)."""


class CompressedArtifactError(JsonlError):
    """A zstd-framed JSONL artifact cannot be read (ZSTD-*): invalid framing, a corrupt or oversized frame."""

    default_code: ClassVar[ErrorCode | None] = "ZSTD_FRAME_CORRUPT"


class SqliteStoreError(SessionSpecError, ValueError):
    """A SQLite session store cannot be opened, read or written (SQLITE-*)."""

    default_code: ClassVar[ErrorCode | None] = "SQLITE_CORRUPT"


class PersistenceError(SessionSpecError, ValueError):
    """A persistence backend rejects an operation of the backend contract (PERSIST-*)."""

    default_code: ClassVar[ErrorCode | None] = "PERSIST_SEQ_GAP"
