"""A minimal progress bar for long CLI runs, shown only on an interactive terminal.

Never in pipes, files or CI (``CI`` set), never with ``--quiet``: scripts and
logs must see exactly the report.
"""

from __future__ import annotations

import os
import time
from typing import TextIO

from sessionspec.reference.json_text import display


class Progress:
    """Redraws one stderr line at most ~10 times a second; a no-op when disabled."""

    def __init__(self, stream: TextIO, enabled: bool) -> None:
        self.stream = stream
        self.enabled = enabled
        self.label = ""
        self.total = 0
        self._last = 0.0
        self._drawn = False

    @classmethod
    def for_stream(cls, stream: TextIO, quiet: bool = False) -> Progress:
        isatty = getattr(stream, "isatty", None)
        enabled = bool(isatty and isatty()) and not quiet and not os.environ.get("CI")
        return cls(stream, enabled)

    def start(self, label: str, total: int) -> None:
        self.label, self.total = label, max(total, 1)

    def update(self, done: int) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self._last < 0.1:
            return
        self._last = now
        width = 30
        filled = int(width * min(done, self.total) / self.total)
        label = display(self.label if len(self.label) <= 40 else "…" + self.label[-39:])
        write = getattr(self.stream, "write_control", self.stream.write)  # the CLI's escaping stream
        write(f"\r{label} [{'#' * filled}{'.' * (width - filled)}] {100 * done // self.total:3d}%")
        self.stream.flush()
        self._drawn = True

    def clear(self) -> None:
        if self.enabled and self._drawn:
            getattr(self.stream, "write_control", self.stream.write)("\r\x1b[K")
            self.stream.flush()
            self._drawn = False
