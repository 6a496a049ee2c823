"""Strict JSON text: the reader and writer every artifact and fixture goes through.

Rules (JSON-12..14, DEC-11, DEC-16):

* :func:`loads` rejects ``NaN`` / ``Infinity`` / ``-Infinity``, numbers that
  overflow a double, a byte-order mark, trailing commas and any other
  non-JSON text; the last duplicate key wins (at the position of the first,
  as in JavaScript); nesting depth is unlimited; integers of any size are
  read exactly (DEC-3). ``-0`` reads as the int ``0`` and ``-0.0`` as
  negative zero, which the lossless-value check then rejects (JSON-14).
* :func:`dumps` writes compact text (``,`` and ``:`` without spaces), never
  writes ``NaN``/``Infinity`` (it raises), escapes lone surrogates as
  ``\\uXXXX`` so they round-trip, and handles any depth and integer size.

Known limit: a Python ``str`` holding a high surrogate immediately followed
by a low one (two code points) is written as that escaped pair, which every
JSON reader (this one, JavaScript) reads back as the ONE astral character the
pair encodes. In UTF-16 (the format's native string model) the two are the
same string; only Python distinguishes them. Lone surrogates round-trip.

msgspec is the fast reader and orjson the fast writer. Neither is used where
it would be wrong: msgspec declines lone surrogates, integers beyond CPython's
conversion limit and deep nesting; orjson refuses depth > 254, lone surrogates
and integers outside 64 bits on write (and would read integer literals beyond
64 bits as floats, so it is not the reader). Those cases go to the iterative
implementation below, which also produces the located error messages (line,
column, JSON pointer).
"""

from __future__ import annotations

import functools
import re
import sys
from collections.abc import Callable
from json.decoder import scanstring  # type: ignore[attr-defined]  # the C scanner, absent from typeshed
from json.encoder import encode_basestring
from typing import Any, Literal, NamedTuple, cast

import msgspec
import orjson
from sessionspec.spec.errors import JsonTextError
from sessionspec.spec.schema_types import JsonValue

from .json_value import MAX_SAFE_INTEGER, FrozenDict, FrozenList, is_json_value, json_pointer

__all__ = [
    "ANOMALY_CAP",
    "ANOMALY_KINDS",
    "FAST_DECLINED",
    "Anomaly",
    "AnomalyHook",
    "JsonSyntaxError",
    "display",
    "dumps",
    "dumps_bytes",
    "escape_surrogates",
    "fast_loads",
    "first_lossy_line",
    "laid_out",
    "loads",
    "loads_with_duplicates",
    "lossless",
    "markdown_text",
    "may_hold_negative_zero",
    "parse",
    "workflow_value",
]

# The fast reader: msgspec reads integers of any length up to CPython's conversion limit
# exactly (orjson reads those beyond 64 bits as floats, which needed a digit-run scan of the
# whole text first) and agrees with the exact parser on every text it accepts
# (tests/reference/test_json_text.py); it declines lone surrogates, longer integers and
# deep nesting, which the exact parser then reads.
fast_loads = msgspec.json.Decoder().decode
"""The fast reader alone: :func:`loads` for every text it accepts; raises one of
``FAST_DECLINED`` where :func:`loads` must decide (bulk readers fall back to it then)."""
FAST_DECLINED = (msgspec.DecodeError, RecursionError)
_STRICT_INTEGER = orjson.OPT_STRICT_INTEGER

_WS = re.compile(r"[ \t\n\r]*")
_WS_AT = cast("Callable[[str, int], re.Match[str]]", _WS.match)  # always matches (possibly empty)
_NUMBER = re.compile(r"(-?(?:0|[1-9][0-9]*))(\.[0-9]+)?([eE][-+]?[0-9]+)?")
_SURROGATE = re.compile("[\ud800-\udfff]")
_INT_DIGITS_LIMIT = 4000  # below CPython's default int<->str conversion limit (4300)
#: the longest integer the exact reader holds exactly (DEC-3); past it, reading and writing it back cost time
#: quadratic in its digits (a 32 M-digit integer from 1.5 KB of zstd ran past 20 s of CPU; 32 MiB of 100,000-digit
#: integers take 31 s, of 4,000-digit ones 2.1 s: issue 25), and a JavaScript loader reads an integer past 309
#: digits as Infinity anyway (JSON-2: the validators report it so)
MAX_INT_DIGITS = 4000


# ------------------------------------------------------------------- reading
class Anomaly(NamedTuple):
    """Something the exact reader accepts but a careful operator wants to know (for validators)."""

    kind: str  # one of ANOMALY_KINDS
    pointer: str
    detail: str
    #: for ``invalid-utf8``: the 0-based byte offset of the first byte that is not UTF-8
    offset: int | None = None


ANOMALY_KINDS = ("duplicate-key", "lone-surrogate", "unsafe-integer", "negative-zero", "infinite-number", "invalid-utf8")

#: anomalies of one kind reported one by one per text; the rest are one anomaly that counts them (a line of a million
#: repeated keys was two million findings, each with its JSON pointer: 20 s of CPU, issue 25)
ANOMALY_CAP = 100

AnomalyHook = Callable[[Anomaly], None]
"""Called by :func:`parse` for each anomaly, in document order (a key's at the key)."""


class JsonSyntaxError(JsonTextError):
    """The text is not JSON: where (``offset``, ``line``, ``column``), why (``reason``) and what ``kind``.

    ``kind`` is ``"syntax"``, ``"empty"`` (only whitespace), ``"nan-literal"``,
    ``"control-char"`` (a raw control character in a string), ``"number-range"``
    (a number beyond a double, when overflow is an error) or ``"encoding"`` (not UTF-8).
    """

    def __init__(self, text: str, offset: int, reason: str, kind: str = "syntax") -> None:
        line = text.count("\n", 0, offset) + 1
        column = offset - (text.rfind("\n", 0, offset) + 1) + 1
        super().__init__(f"invalid JSON text at line {line} column {column}: {reason}", requirement="JSON-12")
        self.offset = offset
        self.line = line
        self.column = column
        self.reason = reason
        self.kind = kind
        self._text_args = (text, offset, reason, kind)

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), self._text_args)


def _parse_int(digits: str) -> int:
    """int() without CPython's 4300-digit conversion limit (DEC-3: any size)."""
    if len(digits) <= _INT_DIGITS_LIMIT:
        return int(digits)
    negative = digits.startswith("-")
    body = digits[1:] if negative else digits
    value = 0
    step = _INT_DIGITS_LIMIT
    for i in range(0, len(body), step):
        chunk = body[i : i + step]
        value = value * 10 ** len(chunk) + int(chunk)
    return -value if negative else value


def _short(token: str) -> str:
    return token if len(token) <= 40 else token[:20] + "…" + token[-10:]


_BAD_LITERALS = ("NaN", "Infinity", "-Infinity")
_INF = float("inf")
_NINF = float("-inf")


class _Parser:
    """Iterative recursive-descent JSON parser (explicit stack, any depth).

    Without a hook it is the reference's strict reader. With one (validators)
    it also reports every :class:`Anomaly` with its JSON pointer; with
    ``infinity=True`` a number beyond a double (``1e400``, an integer of
    thousands of digits) reads as JavaScript reads it, ``±Infinity``, and is
    reported instead of refused.
    """

    def __init__(self, text: str, hook: AnomalyHook | None = None, infinity: bool = False,
                 duplicates: list[str] | None = None) -> None:
        self.text = text
        self.hook = hook
        self.infinity = infinity
        #: report every anomaly kind (validators, through ``hook``)
        self.diagnose = hook is not None
        #: or only collect the pointers of repeated keys (`loads_with_duplicates`)
        self.duplicates = duplicates
        #: anomalies reported so far, per kind; past ``ANOMALY_CAP`` of a kind they are only counted
        self.reported: dict[str, int] = {}

    def parse(self) -> JsonValue:
        try:
            return self._parse()
        finally:
            if self.hook is not None:
                for kind, count in self.reported.items():
                    if count > ANOMALY_CAP:  # the rest in one anomaly: each with its pointer cost 10 us (issue 25)
                        self.hook(Anomaly(kind, "", f"{count - ANOMALY_CAP} more of this kind in this text, not listed "
                                                    f"one by one (the first {ANOMALY_CAP} are)"))

    def _parse(self) -> JsonValue:  # noqa: C901 - an iterative JSON parser is one state machine
        text = self.text
        end = len(text)
        ws = _WS_AT
        diagnose = self.diagnose
        pos = ws(text, 0).end()
        if pos >= end:
            raise JsonSyntaxError(text, pos, "empty JSON text", "empty")
        # A frame is [container, is_object, pending_key, path_token].
        stack: list[list[Any]] = []
        while True:
            # ---- parse one value at pos
            if pos >= end:
                raise JsonSyntaxError(text, pos, "unexpected end of text, expected a value")
            ch = text[pos]
            value: Any
            if ch == '"':
                value, pos = self._string(pos)
                if diagnose and _SURROGATE.search(value) is not None:
                    self._report(stack, "lone-surrogate", "string contains a lone UTF-16 surrogate escape")
            elif ch == "{":
                pos = ws(text, pos + 1).end()
                if pos < end and text[pos] == "}":
                    value = {}
                    pos += 1
                else:
                    stack.append([{}, True, None, None])
                    pos = self._key(stack, pos)
                    continue
            elif ch == "[":
                pos = ws(text, pos + 1).end()
                if pos < end and text[pos] == "]":
                    value = []
                    pos += 1
                else:
                    stack.append([[], False, None, 0])
                    continue
            elif ch == "t" and text.startswith("true", pos):
                value, pos = True, pos + 4
            elif ch == "f" and text.startswith("false", pos):
                value, pos = False, pos + 5
            elif ch == "n" and text.startswith("null", pos):
                value, pos = None, pos + 4
            else:
                m = _NUMBER.match(text, pos)
                if m is None:
                    raise self._not_a_value(pos)
                integer, frac, exp = m.groups()
                if frac is None and exp is None and (
                    len(integer) < 16 or (not diagnose and len(integer) <= _INT_DIGITS_LIMIT)
                ):  # exact, and safe or not looked at: nothing to report
                    value = int(integer)
                else:
                    value = self._number(stack, pos, m)
                pos = m.end()
            # ---- attach the finished value to its parent, closing containers
            while True:
                if not stack:
                    pos = ws(text, pos).end()
                    if pos != end:
                        raise JsonSyntaxError(text, pos, "extra data after the JSON value")
                    done: JsonValue = value
                    return done
                frame = stack[-1]
                container = frame[0]
                if frame[1]:
                    container[frame[2]] = value
                else:
                    container.append(value)
                pos = ws(text, pos).end()
                if pos >= end:
                    raise JsonSyntaxError(text, pos, "unexpected end of text inside a container")
                ch = text[pos]
                if ch == ",":
                    pos = ws(text, pos + 1).end()
                    if frame[1]:
                        pos = self._key(stack, pos)
                    else:
                        frame[3] = len(container)
                    break
                if ch == ("}" if frame[1] else "]"):
                    pos += 1
                    stack.pop()
                    value = container
                    continue
                expected = "',' or '}'" if frame[1] else "',' or ']'"
                raise JsonSyntaxError(text, pos, f"expected {expected}, found {ch!r}")

    def _report(self, stack: list[list[Any]], kind: str, detail: str) -> None:
        count = self.reported[kind] = self.reported.get(kind, 0) + 1
        if count > ANOMALY_CAP:
            return
        tokens: list[str | int] = [frame[2] if frame[1] else frame[3] for frame in stack]
        self.hook(Anomaly(kind, json_pointer(tokens), detail))  # type: ignore[misc]  # only called with a hook

    def _key(self, stack: list[list[Any]], pos: int) -> int:
        text = self.text
        if pos >= len(text) or text[pos] != '"':
            raise JsonSyntaxError(text, pos, "expected a string key")
        key, pos = self._string(pos)
        frame = stack[-1]
        frame[2] = key
        if self.hook is not None:
            if _SURROGATE.search(key) is not None:
                self._report(stack, "lone-surrogate", "an object key contains a lone UTF-16 surrogate escape")
            if key in frame[0]:
                self._report(stack, "duplicate-key", f"duplicate key {key!r}; the last one wins")
        elif self.duplicates is not None and key in frame[0]:
            self.duplicates.append(json_pointer([f[2] if f[1] else f[3] for f in stack]))
        pos = _WS_AT(text, pos).end()
        if pos >= len(text) or text[pos] != ":":
            raise JsonSyntaxError(text, pos, "expected ':' after an object key")
        return _WS_AT(text, pos + 1).end()

    def _string(self, pos: int) -> tuple[str, int]:
        try:
            found: tuple[str, int] = scanstring(self.text, pos + 1, True)
            return found
        except ValueError as exc:  # json.JSONDecodeError
            at = getattr(exc, "pos", pos)
            msg = getattr(exc, "msg", str(exc))
            kind = "control-char" if "control" in msg.lower() else "syntax"
            raise JsonSyntaxError(self.text, at, f"invalid string: {msg}", kind) from None

    def _not_a_value(self, pos: int) -> JsonSyntaxError:
        text = self.text
        for literal in _BAD_LITERALS:
            if text.startswith(literal, pos):
                return JsonSyntaxError(text, pos, f"{literal} is not a JSON value (JSON-12)", "nan-literal")
        return JsonSyntaxError(text, pos, f"unexpected character {text[pos]!r}, expected a value")

    def _number(self, stack: list[list[Any]], pos: int, m: re.Match[str]) -> Any:
        """A number other than a short integer: big, fractional or with an exponent."""
        text = self.text
        integer, frac, exp = m.groups()
        value: Any
        if frac is None and exp is None:
            if len(integer) > _INT_DIGITS_LIMIT and self.infinity:
                # Far beyond a double: JavaScript's JSON.parse reads Infinity, so the number is not lossless (JSON-2).
                value = _NINF if integer.startswith("-") else _INF
                self._report(stack, "infinite-number",
                             f"integer of {len(integer.lstrip('-'))} digits overflows to infinity")
            elif len(integer) - (integer[0] == "-") > MAX_INT_DIGITS:
                raise JsonSyntaxError(text, pos, f"an integer of {len(integer.lstrip('-'))} digits is past the "
                                      f"{MAX_INT_DIGITS} this reader holds exactly (a loader reads it as infinity)",
                                      "number-range")
            else:
                value = _parse_int(integer)
                if self.diagnose and not -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:
                    self._report(stack, "unsafe-integer", f"integer {_short(integer)} is beyond ±(2^53-1)")
        else:
            token = m.group()
            value = float(token)
            if value in (_INF, _NINF):
                if not self.infinity:
                    raise JsonSyntaxError(text, pos, "number is out of the range of a double", "number-range")
                self._report(stack, "infinite-number", f"number {_short(token)} overflows to infinity")
            elif self.diagnose and value == 0.0 and token.startswith("-"):
                self._report(stack, "negative-zero", f"number {_short(token)} is negative zero")
        return value


def _decode(text: str | bytes | bytearray | memoryview) -> str:
    if isinstance(text, str):
        return text
    raw = bytes(text)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        err = JsonTextError(
            f"invalid JSON text: not UTF-8 at byte {exc.start} ({exc.reason})", requirement="JSON-12"
        )
        err.offset = exc.start  # type: ignore[attr-defined]
        raise err from None


def loads(text: str | bytes | bytearray | memoryview, *, on_anomaly: AnomalyHook | None = None,
          infinity: bool = False, invalid_utf8: Literal["error", "replace"] = "error") -> JsonValue:
    """Parse strict JSON text (JSON-12) into plain dicts/lists; raises :class:`JsonTextError`.

    The one parsing path of log text: every reader (the load path of every storage form, the
    validator, detection) reads a line with this function. A fast reader's value is taken where it
    is provably the exact parser's (:func:`parse`): without ``on_anomaly``, msgspec's whenever it
    accepts the text (it declines lone surrogates, numbers beyond a double, longer integers and deep
    nesting); with ``on_anomaly`` (bytes), orjson's only when its canonical text (integers held to
    ±(2^53-1)) is the input byte for byte and it holds no ``-0.0`` (so no key repeats, no integer
    is unsafe or read as a float, nothing is negative zero: the exact parser would report nothing), or msgspec's when
    :func:`laid_out` proves the text lossless in another writer's layout. Everything else
    is read by the exact parser, which reports each anomaly to the hook and locates syntax errors.
    ``infinity`` as in :func:`parse`; ``invalid_utf8="replace"`` reads bytes that are not UTF-8 with
    U+FFFD, as a loader's Buffer decoding does, reporting an ``invalid-utf8`` anomaly (its byte
    ``offset``) to the hook.
    """
    if text.__class__ is bytes and on_anomaly is not None:  # every line a validator reads
        try:
            value: JsonValue = orjson.loads(text)
            if lossless(text, orjson.dumps(value, option=_STRICT_INTEGER)):
                return value
        except (orjson.JSONDecodeError, orjson.JSONEncodeError):  # not JSON, or not its canonical text
            pass
        laid_out = _read_laid_out(text)  # (white space between tokens, escapes another writer writes)
        if laid_out is not _NOT_PROVED:
            return laid_out  # type: ignore[return-value]
    elif on_anomaly is None:
        try:
            fast: JsonValue = fast_loads(text)
            return fast
        except FAST_DECLINED:
            pass  # not JSON, or JSON msgspec declines: the exact parser decides and locates
        except TypeError:
            raise JsonTextError(
                f"JSON text must be str or bytes, not {type(text).__name__}", requirement="JSON-12"
            ) from None
    elif not isinstance(text, (str, bytes, bytearray, memoryview)):
        raise JsonTextError(f"JSON text must be str or bytes, not {type(text).__name__}", requirement="JSON-12")
    if isinstance(text, str):
        decoded = text
    elif invalid_utf8 == "replace":
        raw = bytes(text)
        try:
            decoded = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            if on_anomaly is not None:
                on_anomaly(Anomaly("invalid-utf8", "", f"invalid UTF-8 at byte {exc.start + 1} of the text",
                                   exc.start))
            decoded = raw.decode("utf-8", errors="replace")
    else:
        decoded = _decode(text)
    return _Parser(decoded, on_anomaly, infinity).parse()


# ------------------------------------------------------------------- lossless text
#: the bytes of a negative zero (JSON-2); a regular expression finds them twice as fast as ``bytes.find``
_NEGATIVE_ZERO = re.compile(rb"-0\.0")


def lossless(text: bytes, encoded: bytes, *, negative_zero: bool = True) -> bool:
    """Whether ``text`` is lossless JSON text (JSON-2, JSON-12, DEC-3), proved by ``encoded``: the compact
    re-encoding of the value a JSON reader read from it (orjson's with integers held to ±(2^53-1), or a generated
    msgspec type's). The one statement of it: the text is that encoding byte for byte and holds no ``-0.0``.

    Equal bytes mean no byte-order mark, no CR or other white space, no escape the writer would not write, no
    repeated key (the value holds one member per key), every number canonical and every integer one the writer
    holds exactly; a ``-0.0`` writes back as itself, yet it is not lossless. Such a text :func:`loads` reads with no
    anomaly, to the same value with the same types (`tests/reference/test_json_text.py` holds it).
    ``negative_zero=False``: the values ``encoded`` was written from cannot hold a float ``-0.0`` (a reader whose
    types refuse it), so the text needs no scan for it.
    """
    return encoded == text and not (negative_zero and _NEGATIVE_ZERO.search(text) is not None)


#: a quote within a string written as an escape other than ``\\"`` (`laid_out` does not count such a text's quotes)
_QUOTE_AS_HEX = b"\\u0022"
_NOT_PROVED = object()


def laid_out(text: bytes, canonical: bytes, *, negative_zero: bool = True) -> bool:
    """Whether ``text`` is lossless JSON in another writer's layout (JSON-2, JSON-12, DEC-3), proved by ``canonical``:
    the compact encoding of the value (or the values, a line each) that msgspec read from ``text`` (a line each),
    with integers held to ±(2^53-1) by the encoder (orjson's) or by the reader's generated types. The statement
    :func:`lossless` makes of a text equal to its encoding, for a text that is not (False for one that is: whether
    that one is lossless is `lossless`'s to say): white space between tokens and
    escapes within strings (``\\u00e9``, ``\\u003c``: Python's ``json.dumps`` and Go's encoder write them) change no value.

    msgspec declines invalid UTF-8, lone surrogates, numbers beyond a double and deep nesting. What is left to prove
    is that no key repeats (the value would hold one member fewer), which the quotes tell: each string of a text holds
    two quote bytes, and one more for each quote within it, written ``\\"`` as the encoding writes it when the text
    holds no ``\\u0022``; so a text that holds a member its value lost holds more quote bytes than ``canonical``.
    And ``canonical`` holds no ``-0.0`` (``negative_zero=False``: the reader's types cannot hold one). Such a text
    :func:`loads` reads with no anomaly, to the same value (`tests/reference/test_json_text.py` holds it)."""
    return (text != canonical and _QUOTE_AS_HEX not in text and text.count(b'"') == canonical.count(b'"')
            and not (negative_zero and _NEGATIVE_ZERO.search(canonical) is not None))


def _read_laid_out(text: bytes) -> object:
    """`loads`'s value of a text that is not its value's canonical text, when `laid_out` proves it lossless; else
    ``_NOT_PROVED`` (the exact parser then reads it, reporting each anomaly)."""
    try:
        value = fast_loads(text)
        canonical = orjson.dumps(value, option=_STRICT_INTEGER)
    except (*FAST_DECLINED, orjson.JSONEncodeError):
        return _NOT_PROVED
    return value if laid_out(text, canonical) else _NOT_PROVED


def may_hold_negative_zero(text: bytes, start: int = 0, end: int | None = None) -> bool:
    """Whether ``text[start:end]`` holds the bytes of a ``-0.0`` anywhere (a number or inside a string): where it
    does not, :func:`lossless` needs no scan of its texts there (``negative_zero=False``)."""
    return _NEGATIVE_ZERO.search(text, start, len(text) if end is None else end) is not None


def first_lossy_line(text: bytes, pos: int, encoded: bytes, at: int, *, negative_zero: bool = True) -> int | None:
    """:func:`lossless` of many lines at once: the start of the first line of ``text[pos:]`` (``pos`` starts a line)
    that is not lossless by its re-encoding in ``encoded[at:]`` (the values of those lines re-encoded in turn, each
    followed by ``\n``), None when every line is. No copy of either tail."""
    differ = _first_difference(encoded, at, text, pos)
    if differ is None:
        zero = _NEGATIVE_ZERO.search(text, pos) if negative_zero else None
        if zero is None:
            return None
        differ = zero.start()
    return max(pos, text.rfind(b"\n", pos, differ) + 1)


def _first_difference(one: bytes, start_one: int, two: bytes, start_two: int) -> int | None:
    """The offset in `two` of the first byte where ``one[start_one:]`` and ``two[start_two:]`` differ (a text that ends
    first differs where it ends), None when they are equal; no copy of either tail. Windows that double from the
    start (a difference is usually near: the next doubtful line), then bisection within the first unequal one
    (memcmp of slices), then a scan."""
    left, right = len(one) - start_one, len(two) - start_two
    low, width = 0, 256  # invariant: the tails agree on [0, low)
    while True:
        high = low + width
        if one[start_one + low:start_one + high] == two[start_two + low:start_two + high]:
            if high >= left:  # (then high >= right too: equal windows have equal lengths)
                return None
            low, width = high, width * 2
            continue
        break
    high = min(high, left, right)  # they differ within [low, high], `high` itself when one of them ends there
    while high - low > 64:
        mid = (low + high) // 2
        if one[start_one + low:start_one + mid] == two[start_two + low:start_two + mid]:
            low = mid
        else:
            high = mid
    found = next((i for i in range(low, high) if one[start_one + i] != two[start_two + i]), high)
    return start_two + found


def parse(text: str, *, on_anomaly: AnomalyHook | None = None, infinity: bool = False) -> JsonValue:
    """The exact reader of :func:`loads` (no orjson), with the validators' diagnostics hook.

    ``on_anomaly`` receives each :class:`Anomaly` (duplicate key, lone
    surrogate, unsafe integer, negative zero, infinite number) with its JSON
    pointer. ``infinity=True`` reads a number beyond a double as ``±inf`` (as
    JavaScript does) and reports it, instead of raising. A syntax error raises
    :class:`JsonSyntaxError` (offset, line, column, reason, kind).
    """
    return _Parser(text, on_anomaly, infinity).parse()


def loads_with_duplicates(text: str | bytes | bytearray | memoryview) -> tuple[JsonValue, list[str]]:
    """Like :func:`loads`, also returning the JSON pointers of repeated object keys.

    The last occurrence wins (as in :func:`loads`); validators report the
    pointers as findings.
    """
    found: list[str] = []
    value = _Parser(_decode(text), duplicates=found).parse()
    return value, found


# ------------------------------------------------------------------- writing
def _int_text(value: int) -> str:
    """str(int) without CPython's 4300-digit conversion limit."""
    try:
        return str(value)
    except ValueError:
        pass
    negative = value < 0
    n = -value if negative else value
    base = 10**_INT_DIGITS_LIMIT
    chunks: list[str] = []
    while n:
        n, rem = divmod(n, base)
        chunks.append(str(rem))
    out = chunks[-1] + "".join(c.rjust(_INT_DIGITS_LIMIT, "0") for c in reversed(chunks[:-1]))
    return "-" + out if negative else out


def _string_text(value: str) -> str:
    out = encode_basestring(value)
    if _SURROGATE.search(value) is not None:
        out = _escape_lone_surrogates(out)
    return out


def _escape_lone_surrogates(text: str) -> str:
    """``\\uXXXX`` for each lone surrogate of ``text``, at C speed: the only characters UTF-8 cannot encode are the
    surrogates, and the ``backslashreplace`` handler writes each as ``\\u`` and 4 lowercase hex digits (a regular
    expression calling back for each was 1.3 us a surrogate: 10 s for 32 MiB of them, issue 25)."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _encode_error(tokens: list[str | int], what: str) -> JsonTextError:
    pointer = json_pointer(tokens)
    return JsonTextError(
        f"cannot write JSON text: {what}" + ("" if pointer else " at the root"),
        requirement="JSON-13",
        path=pointer,
    )


def _scalar_text(value: Any, tokens: list[str | int]) -> str:
    t = type(value)
    if t is str:
        return _string_text(value)
    if value is None:
        return "null"
    if t is bool:
        return "true" if value else "false"
    if t is int:
        return _int_text(value)
    if t is float:
        if value != value or value in (float("inf"), float("-inf")):
            raise _encode_error(tokens, "NaN and Infinity cannot be written")
        return repr(value)
    raise _encode_error(tokens, f"{t.__name__} is not a JSON type")


_OBJECTS = (dict, FrozenDict)
_ARRAYS = (list, FrozenList)


def _encode(value: Any) -> str:
    """Iterative compact encoder (any depth, lone surrogates, big ints)."""
    parts: list[str] = []
    push = parts.append
    # Frame: [iterator, is_object, index_or_key, container id]
    stack: list[list[Any]] = []
    ancestors: set[int] = set()

    def tokens() -> list[str | int]:
        return [frame[2] for frame in stack]

    current = value
    while True:
        t = type(current)
        if t in _OBJECTS or t in _ARRAYS:
            if id(current) in ancestors:
                raise _encode_error(tokens(), "a container contains itself (cycle)")
            if t in _OBJECTS:
                push("{")
                stack.append([iter(current.items()), True, None, id(current)])
            else:
                push("[")
                stack.append([iter(current), False, -1, id(current)])
            ancestors.add(id(current))
        else:
            push(_scalar_text(current, tokens()))
        # find the next value to write
        while stack:
            frame = stack[-1]
            if frame[1]:
                item = next(frame[0], None)
                if item is not None:
                    key, current = item
                    if type(key) is not str:
                        raise _encode_error(tokens()[:-1], f"object key {key!r} is not a str")
                    if frame[2] is not None:
                        push(",")
                    frame[2] = key
                    push(_string_text(key))
                    push(":")
                    break
                push("}")
            else:
                sentinel = _END
                current = next(frame[0], sentinel)
                if current is not sentinel:
                    if frame[2] >= 0:
                        push(",")
                    frame[2] += 1
                    break
                push("]")
            stack.pop()
            ancestors.discard(frame[3])
        else:
            return "".join(parts)


_END: Any = object()


def dumps(value: JsonValue) -> str:
    """Compact JSON text of a JSON value (JSON-13); raises :class:`JsonTextError`.

    NaN/Infinity, non-JSON types, non-str keys and cycles are refused, never
    written. ``-0.0`` is written as ``-0.0`` (the text itself is valid JSON).
    """
    if is_json_value(value):
        try:
            return orjson.dumps(value).decode("utf-8")
        except (TypeError, orjson.JSONEncodeError):
            pass  # depth > 254, lone surrogates, ints beyond 64 bits
    return _encode(value)


def dumps_bytes(value: JsonValue) -> bytes:
    """:func:`dumps` as UTF-8 bytes (lone surrogates are escaped, so always valid UTF-8)."""
    if is_json_value(value):
        try:
            return orjson.dumps(value)
        except (TypeError, orjson.JSONEncodeError):
            pass
    return _encode(value).encode("utf-8")


# CPython may be configured with a lower int/str limit; ours must stay below it.
if hasattr(sys, "get_int_max_str_digits"):
    _limit = sys.get_int_max_str_digits()
    if _limit and _limit <= _INT_DIGITS_LIMIT:
        _INT_DIGITS_LIMIT = max(_limit - 1, 1)


# ------------------------------------------------------------------- display
# Control characters (C0, DEL, C1), Unicode line and paragraph separators, bidirectional embeddings,
# overrides and isolates (which reorder what a reader sees: "Trojan Source"), and lone surrogates. The one
# class every escaper of output uses (`display`, the catalog's `printable`).
UNPRINTABLE_CLASS = "\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff"
_UNPRINTABLE = re.compile(f"[{UNPRINTABLE_CLASS}]")
_SHORT_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    return _SHORT_ESCAPES.get(char) or "\\u%04x" % ord(char)


def display(text: str) -> str:
    """``text`` safe to print as part of one line of a terminal, a CI log or a report.

    Text from a log or an adapter can hold newlines (which could forge report
    lines or ``::error`` annotations), terminal escapes, and lone surrogates
    (which no UTF-8 stream can write). Those become JSON-style escapes
    (``\\n``, ``\\u001b``, ``\\ud800``); all other characters are kept.
    """
    if _UNPRINTABLE.search(text) is None:
        return text
    if len(text) > _LONG_TEXT:  # one C pass over the text, not a call back per character (issue 25)
        return text.translate(_display_table())
    return _UNPRINTABLE.sub(_escape, text)


#: past this many characters `display` translates the whole text: 30 ns a character, where a call back per
#: unprintable character costs 200 ns (2.2 s for `derive` writing 5 M bidirectional overrides)
_LONG_TEXT = 256


@functools.cache
def _display_table() -> dict[int, str]:
    """`display`'s escapes as a `str.translate` table (every character of the class is in the BMP)."""
    return {code: _SHORT_ESCAPES.get(chr(code)) or "\\u%04x" % code for code in range(0x10000)
            if _UNPRINTABLE.match(chr(code))}


def escape_surrogates(text: str) -> str:
    """JSON text with its lone surrogates written as ``\\uXXXX`` escapes (writable as UTF-8)."""
    return _escape_lone_surrogates(text) if _SURROGATE.search(text) else text


def workflow_value(text: str, *, prop: bool = False) -> str:
    """``text`` as the value of a GitHub Actions workflow command (``::error title=PROP::MESSAGE``).

    ``%``, CR and LF are percent-encoded (the runner decodes them, so no text can end the annotation
    and start a command of its own); in a property (``prop``) also ``:`` and ``,``, which would end
    the property list; other control characters and lone surrogates are escaped as :func:`display` does.
    """
    text = display(text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))
    if prop:
        text = text.replace(":", "%3A").replace(",", "%2C")
    return text


_MARKDOWN_SPECIAL = re.compile(r"[!-/:-@\[-`{-~]")


def markdown_text(text: str) -> str:
    """``text`` as literal inline Markdown (CommonMark, GitHub): every ASCII punctuation character is
    backslash-escaped (so no emphasis, link, HTML tag, entity, table cell end or code span can start),
    line ends become spaces and other control characters are escaped as :func:`display` does."""
    one_line = display(text.replace("\r\n", " ").replace("\n", " ").replace("\r", " "))
    return _MARKDOWN_SPECIAL.sub(lambda m: "\\" + m.group(), one_line)
