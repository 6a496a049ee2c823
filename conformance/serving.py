"""The format revision (SQLite layout, clock) the reference adapter serves while it handles one request.

`ReferenceAdapter` sets them (and its clock) around each request; the handlers and the store
scripts read them, so one adapter object serves one revision without threading
it through every builder.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable

__all__ = ["CLOCK", "REVISION", "SQLITE_LAYOUT", "current_clock", "current_revision", "current_sqlite_layout"]

REVISION: contextvars.ContextVar[str | None] = contextvars.ContextVar("sessionspec_revision", default=None)
SQLITE_LAYOUT: contextvars.ContextVar[int | None] = contextvars.ContextVar("sessionspec_sqlite_layout", default=None)
CLOCK: contextvars.ContextVar[Callable[[], int] | None] = contextvars.ContextVar("sessionspec_clock", default=None)


def current_revision() -> str | None:
    """The revision of the request being handled (``None``: the pinned default)."""
    return REVISION.get()


def current_sqlite_layout() -> int | None:
    """The SQLite layout (``user_version``) the served backend has (``None``: the revision's own)."""
    return SQLITE_LAYOUT.get()


def current_clock() -> Callable[[], int] | None:
    """The clock the served sessions and stores stamp events with (``None``: the wall clock)."""
    return CLOCK.get()
