"""`Finding`, the one type of a reported problem: what a rule finds, located.

Every rule that reports rather than raises yields these: the reader's defects (`jsonl_read`), SEED-3's envelope
findings (`session.envelope_findings`), the message shape's seed check (`revision.MessageShape.seed_problem`), the
header-line shape check (`jsonl_read.header_line_problem`), the walk of the load rules (`seed_walk.LoadWalk`) and
everything the validator reports. The reference raises the first one as its error class (`Finding.error`, where the
rule raised one); the validator collects them all. Its code is an `ErrorCode` (generated
from ``spec/errors.json``), so mypy refuses a code the data does not list.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

from sessionspec.spec.error_codes import ErrorCode
from sessionspec.spec.errors import SessionSpecError
from sessionspec.spec.schema_types import JsonValue

__all__ = ["ERROR", "MAX_MESSAGE_CHARS", "WARNING", "Finding", "bounded"]

ERROR: Final = "error"
WARNING: Final = "warning"


@dataclass(slots=True)
class Finding:
    """One located problem: file, line, event seq, JSON pointer, requirement id, code, explanation."""

    code: ErrorCode
    requirement: str | None
    message: str
    line: int | None = None
    seq: int | None = None
    pointer: str | None = None
    column: int | None = None
    severity: str = ERROR
    file: str = ""
    #: for a compressed artifact: the 0-based zstd frame holding ``line`` (a logical line)
    frame: int | None = None
    #: the exception the rule raised, where the reference raises this finding (the load path raises the first)
    error: SessionSpecError | None = field(default=None, repr=False, compare=False)

    @classmethod
    def from_error(cls, error: SessionSpecError, message: str | None = None, *, line: int | None = None,
                   seq: int | None = None, pointer: str | None = None, severity: str = ERROR, file: str = "",
                   frame: int | None = None, raises: SessionSpecError | None = None) -> Finding:
        """The finding a raised rule error reports where reading goes on: its code, requirement and message (or
        ``message``, the error's own with context), located by the caller. The reference raises the first
        finding of a rule (``raises``: the exception it raises for it, kept as `error`); the validator and the storage
        reader collect them."""
        return cls(error.code, error.requirement, error.message if message is None else message, line=line, seq=seq,
                   pointer=pointer, severity=severity, file=file, frame=frame, error=raises)

    def to_json(self) -> dict[str, JsonValue]:
        """The report's form of the finding (`sessionspec validate --format json`): set members only, text bounded."""
        out: dict[str, JsonValue] = {"file": self.file, "severity": self.severity, "code": self.code}
        for key in ("requirement", "frame", "line", "column", "seq", "pointer"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        out["message"] = bounded(self.message)
        if self.pointer is not None:
            out["pointer"] = bounded(self.pointer)
        return out


#: characters of a finding's message (or pointer) a report shows: a message may quote the log (a seq, a key),
#: and a crafted log may put 16 MiB there
MAX_MESSAGE_CHARS = 2000


def bounded(text: str) -> str:
    """``text``, cut to `MAX_MESSAGE_CHARS` with a note of how much was left out."""
    if len(text) <= MAX_MESSAGE_CHARS:
        return text
    return f"{text[:MAX_MESSAGE_CHARS]}… ({len(text) - MAX_MESSAGE_CHARS} more characters not shown)"
