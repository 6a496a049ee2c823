"""The validator's names for the one reader of stored logs (`sessionspec.reference.jsonl_read`).

`load_log` is the reader's every-defect mode: every bad line located, the events that survive it
with their file lines, reading on past a defect up to where a loader stops. The reader itself, its
decisions and its first-defect mode (the load path) live in the reference, stated once.
"""

from __future__ import annotations

from sessionspec.reference import (
    ERROR,
    WARNING,
    Explainer,
    Finding,
    FindingList,
    LoadedLog,
    fragment_finding,
    is_negative_zero,
    load_log,
    parse_line,
)

__all__ = ["ERROR", "WARNING", "Explainer", "Finding", "FindingList", "LoadedLog", "fragment_finding",
           "is_negative_zero", "load_log", "parse_line"]
