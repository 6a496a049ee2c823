"""The format revision (and SQLite layout) the reference adapter serves while it handles one request.

`ReferenceAdapter` sets them around each request; the handlers and the store
scripts read them, so one adapter object serves one revision without threading
it through every builder.
"""

from __future__ import annotations

import contextvars

__all__ = ["REVISION", "SQLITE_LAYOUT", "current_revision", "current_sqlite_layout"]

REVISION: contextvars.ContextVar[str | None] = contextvars.ContextVar("sessionspec_revision", default=None)
SQLITE_LAYOUT: contextvars.ContextVar[int | None] = contextvars.ContextVar("sessionspec_sqlite_layout", default=None)


def current_revision() -> str | None:
    """The revision of the request being handled (``None``: the pinned default)."""
    return REVISION.get()


def current_sqlite_layout() -> int | None:
    """The SQLite layout (``user_version``) the served backend has (``None``: the revision's own)."""
    return SQLITE_LAYOUT.get()
