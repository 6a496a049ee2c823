"""JSON text of the adapter protocol: one compact JSON object per line.

Protocol messages carry event logs whose payloads may be nested 10,000 levels
deep (DEC-16) and may hold ``-0.0`` or lone surrogates that a case exists to
test. The standard library codec recurses and stops near the interpreter's
recursion limit, so the wire uses the reference's iterative codec
(``sessionspec.reference.json_text``): any depth, ``NaN``/``Infinity``
rejected on read and never written, lone surrogates escaped, ``-0.0`` kept.
"""

from __future__ import annotations

from typing import Any

from sessionspec.reference import json_text

__all__ = ["WireError", "dumps", "loads"]


class WireError(ValueError):
    """A protocol line is not strict JSON text (or a value cannot be written as such)."""


def dumps(value: Any) -> str:
    """Compact, single-line JSON text of ``value`` (no trailing newline)."""
    try:
        text: str = json_text.dumps(value)
    except (ValueError, TypeError, RecursionError) as exc:
        raise WireError(f"cannot write protocol message as JSON: {exc}") from exc
    return text


def loads(text: str | bytes) -> Any:
    """Parse one protocol line strictly (any nesting depth)."""
    if isinstance(text, bytes | bytearray):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise WireError(f"protocol line is not UTF-8: {exc}") from exc
    try:
        return json_text.loads(text)
    except (ValueError, TypeError, RecursionError) as exc:
        raise WireError(f"protocol line is not JSON: {exc}") from exc
