"""The format revision the reference adapter serves while it handles one request.

`ReferenceAdapter` sets it around each request; the handlers and the store
scripts read it, so one adapter object serves one revision without threading
it through every builder.
"""

from __future__ import annotations

import contextvars

__all__ = ["REVISION", "current_revision"]

REVISION: contextvars.ContextVar[str | None] = contextvars.ContextVar("sessionspec_revision", default=None)


def current_revision() -> str | None:
    """The revision of the request being handled (``None``: the pinned default)."""
    return REVISION.get()
