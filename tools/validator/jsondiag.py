"""A diagnostic, iterative JSON parser for the slow path of `sessionspec validate`.

The fast path parses lines with orjson. orjson cannot tell us *where* a line is
wrong, silently keeps the last of two duplicate keys, turns integers beyond
64 bits into floats and refuses nesting deeper than 1,024 levels. Whenever the
fast path has a doubt, the line is re-read here: this parser never recurses
(any depth, DEC-16), keeps integers exact (DEC-3), lets the last duplicate key
win (JSON-12) and reports every anomaly with a JSON pointer, so the validator
can explain the problem instead of failing.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from json.decoder import scanstring  # type: ignore[attr-defined]  # the C scanner, absent from typeshed
from typing import Any, cast

from sessionspec.spec import FORMAT
from sessionspec.spec.loader import json_pointer as pointer

MAX_SAFE_INTEGER: int = FORMAT.max_safe_integer

_WS = re.compile(r"[ \t\n\r]*")
_WS_AT = cast("Callable[[str, int], re.Match[str]]", _WS.match)  # always matches (possibly empty)
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?")
_SURROGATE = re.compile("[\ud800-\udfff]")
_BAD_LITERALS = ("NaN", "Infinity", "-Infinity")


@dataclass(frozen=True, slots=True)
class Anomaly:
    """Something a strict reader accepts but a careful operator wants to know."""

    kind: str  # "duplicate-key" | "lone-surrogate" | "unsafe-integer" | "negative-zero" | "infinite-number"
    pointer: str
    detail: str


class JsonSyntaxError(ValueError):
    """The text is not JSON; ``offset`` is the character index of the problem."""

    def __init__(self, message: str, offset: int, kind: str = "syntax") -> None:
        super().__init__(message)
        self.message = message
        self.offset = offset
        self.kind = kind  # "syntax" | "nan-literal" | "empty" | "control-char"


class _Frame:
    __slots__ = ("container", "index", "is_object", "key")

    def __init__(self, container: Any, is_object: bool) -> None:
        self.container = container
        self.is_object = is_object
        self.key: str = ""
        self.index = 0


def _path(stack: list[_Frame]) -> list[str | int]:
    return [f.key if f.is_object else f.index for f in stack]


def parse(text: str) -> tuple[Any, list[Anomaly], int]:  # noqa: C901 - an iterative JSON scanner is one state machine
    """Parse one JSON text; return ``(value, anomalies, max_depth)`` or raise `JsonSyntaxError`."""
    n = len(text)
    anomalies: list[Anomaly] = []
    stack: list[_Frame] = []
    max_depth = 0
    ws = _WS_AT
    i = ws(text, 0).end()
    if i >= n:
        raise JsonSyntaxError("empty JSON text", i, "empty")

    def read_key(pos: int) -> int:
        if pos >= n or text[pos] != '"':
            raise JsonSyntaxError("expected a string key", pos)
        frame = stack[-1]
        key, pos = _string(pos, is_key=True)
        frame.key = key
        if _SURROGATE.search(key):  # located at the key itself, not at the member before it
            anomalies.append(Anomaly("lone-surrogate", pointer(_path(stack)),
                                     "an object key contains a lone UTF-16 surrogate escape"))
        if key in frame.container:
            anomalies.append(Anomaly("duplicate-key", pointer(_path(stack)), f"duplicate key {key!r}; the last one wins"))
        pos = ws(text, pos).end()
        if pos >= n or text[pos] != ":":
            raise JsonSyntaxError("expected ':' after an object key", pos)
        return ws(text, pos + 1).end()

    def _string(pos: int, is_key: bool = False) -> tuple[str, int]:
        try:
            value, end = scanstring(text, pos + 1, True)
        except ValueError as exc:  # json.JSONDecodeError
            offset = getattr(exc, "pos", pos)
            msg = getattr(exc, "msg", str(exc))
            kind = "control-char" if "control" in msg.lower() else "syntax"
            raise JsonSyntaxError(f"invalid string: {msg}", offset, kind) from None
        if not is_key and _SURROGATE.search(value):
            anomalies.append(
                Anomaly("lone-surrogate", pointer(_path(stack)), "string contains a lone UTF-16 surrogate escape")
            )
        return value, end

    while True:
        # Parse one value starting at i.
        if i >= n:
            raise JsonSyntaxError("unexpected end of JSON text", i)
        c = text[i]
        value: Any
        if c == "{" or c == "[":
            is_object = c == "{"
            container: Any = {} if is_object else []
            i = ws(text, i + 1).end()
            closer = "}" if is_object else "]"
            if i < n and text[i] == closer:
                value = container
                i += 1
                if len(stack) + 1 > max_depth:
                    max_depth = len(stack) + 1
            else:
                stack.append(_Frame(container, is_object))
                if len(stack) > max_depth:
                    max_depth = len(stack)
                if is_object:
                    i = read_key(i)
                continue
        elif c == '"':
            value, i = _string(i)
        elif c == "t" and text.startswith("true", i):
            value, i = True, i + 4
        elif c == "f" and text.startswith("false", i):
            value, i = False, i + 5
        elif c == "n" and text.startswith("null", i):
            value, i = None, i + 4
        else:
            m = _NUMBER.match(text, i)
            if m is None:
                for literal in _BAD_LITERALS:
                    if text.startswith(literal, i):
                        raise JsonSyntaxError(f"{literal} is not a JSON value (JSON-12)", i, "nan-literal")
                raise JsonSyntaxError(f"unexpected character {text[i]!r}", i)
            token = m.group(0)
            i = m.end()
            if m.group(1) is None and m.group(2) is None and len(token) > _MAX_INT_DIGITS:
                # Beyond what Python converts (4,300 digits) and far beyond a double: JavaScript's
                # JSON.parse reads Infinity, so the number is not lossless (JSON-2), like 1e400.
                value = float("-inf") if token.startswith("-") else float("inf")
                anomalies.append(Anomaly("infinite-number", pointer(_path(stack)),
                                         f"integer of {len(token.lstrip('-'))} digits overflows to infinity"))
            elif m.group(1) is None and m.group(2) is None:
                value = int(token)
                if not -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:
                    anomalies.append(
                        Anomaly("unsafe-integer", pointer(_path(stack)), f"integer {_short(token)} is beyond ±(2^53-1)")
                    )
            else:
                value = float(token)
                if value in (float("inf"), float("-inf")):
                    anomalies.append(
                        Anomaly("infinite-number", pointer(_path(stack)), f"number {_short(token)} overflows to infinity")
                    )
                elif value == 0.0 and token.startswith("-"):
                    anomalies.append(Anomaly("negative-zero", pointer(_path(stack)), f"number {_short(token)} is negative zero"))
        # A value is complete: attach it to its parent, closing containers as needed.
        while True:
            if not stack:
                i = ws(text, i).end()
                if i != n:
                    raise JsonSyntaxError("extra data after the JSON value", i)
                return value, anomalies, max_depth
            frame = stack[-1]
            if frame.is_object:
                frame.container[frame.key] = value
            else:
                frame.container.append(value)
            i = ws(text, i).end()
            if i >= n:
                raise JsonSyntaxError("unexpected end of JSON text", i)
            c = text[i]
            if c == ",":
                i = ws(text, i + 1).end()
                if frame.is_object:
                    i = read_key(i)
                else:
                    frame.index += 1
                break
            if c == ("}" if frame.is_object else "]"):
                stack.pop()
                value = frame.container
                i += 1
                continue
            raise JsonSyntaxError(f"expected ',' or {'}' if frame.is_object else ']'!r}", i)


_MAX_INT_DIGITS = 4000  # below CPython's int<->str conversion limit (4,300 digits)


def _short(token: str) -> str:
    return token if len(token) <= 40 else token[:20] + "…" + token[-10:]
