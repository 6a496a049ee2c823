"""Which registry `pattern`s the validators may run: those whose backtracking stays linear (issue 25).

A plugin registry is untrusted input, and Python's `re` (what the validators use for JSON Schema
`pattern` and `patternProperties`) backtracks: `(a+)+$` on 40 ``a`` and a ``!`` never ends. This module
decides from the parsed pattern (`re._parser`) alone, before any value is matched. A *choice point* is a
repeat whose count may vary or an alternation; it is *ambiguous* when the characters that continue one
way can also continue another (the repeat's first characters meet what may follow it, or two branches
can begin alike). A pattern is refused when

- it holds a backreference or a conditional group (no linear matcher exists for them);
- an ambiguous choice point sits inside a repeat of more than one iteration (exponential: `(a+)+`,
  `(a|aa)+`, `(\\w+\\s?)*`, `(.*a){10}`);
- it holds more than one ambiguous choice point, or one ambiguous unbounded repeat is followed by
  another long repeat (polynomial: `a*a*a*`, `.*a.*b`);
- a lookaround holds a long repeat (it runs again at every position);
- it has a long repeat but is not anchored at its start (`re.search` retries every start: quadratic).

Character sets are over-approximated (any non-ASCII member stands for all of them), so the answer errs
towards refusal. The core's own 14 patterns pass; tests/spec/test_regex_safety.py holds the table.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

try:  # Python 3.11+
    from re import _parser as _p  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - older interpreters
    import sre_parse as _p

__all__ = ["LONG_REPEAT", "pattern_hazard"]

LONG_REPEAT = 255
"""A repeat of more iterations than this is *long*: backtracking over it costs time in the input's size."""

_ASCII = (1 << 128) - 1
_MAX_PATTERN = 10_000
"""Longer patterns are refused outright (parsing one is itself recursive)."""


@dataclass(frozen=True)
class _Chars:
    """An over-approximated character set: ASCII members as bits, and whether any non-ASCII may belong."""

    ascii: int = 0
    other: bool = False

    def __or__(self, o: _Chars) -> _Chars:
        return _Chars(self.ascii | o.ascii, self.other or o.other)

    def meets(self, o: _Chars) -> bool:
        return bool(self.ascii & o.ascii) or (self.other and o.other)


_NONE = _Chars()
_ALL = _Chars(_ASCII, True)


def _bits(chars: str) -> int:
    return sum(1 << ord(ch) for ch in set(chars))


_DIGIT = _bits("0123456789")
_WORD = _DIGIT | _bits("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_")
_SPACE = _bits(" \t\n\r\f\v\x1c\x1d\x1e\x1f")
_CATEGORIES = {"DIGIT": _DIGIT, "WORD": _WORD, "SPACE": _SPACE, "LINEBREAK": _bits("\n")}


def _literal(code: int) -> _Chars:
    return _Chars(1 << code) if code < 128 else _Chars(0, True)


def _category(name: str) -> _Chars:
    """`\\d`, `\\w`, `\\s` and their negations; the Unicode members of each are all 'other'."""
    negated = "NOT_" in name
    base = next((bits for key, bits in _CATEGORIES.items() if name.endswith(key)), 0)
    return _Chars(_ASCII & ~base if negated else base, True)


def _charset(items: Any) -> _Chars:
    chars, negate = _NONE, False
    for op, av in items:
        name = str(op)
        if name == "NEGATE":
            negate = True
        elif name == "LITERAL":
            chars |= _literal(av)
        elif name.startswith("RANGE"):
            lo, hi = av
            bits = sum(1 << c for c in range(lo, min(hi, 127) + 1)) if lo < 128 else 0
            chars |= _Chars(bits, hi >= 128)
        elif name == "CATEGORY":
            chars |= _category(str(av))
        else:
            chars = _ALL  # an item this walk does not model: assume it matches anything
    return _Chars(_ASCII & ~chars.ascii, True) if negate else chars


def _fold(chars: _Chars) -> _Chars:
    """Case-insensitive matching: every ASCII letter stands for both cases."""
    bits = chars.ascii
    for lo in range(ord("a"), ord("z") + 1):
        up = lo - 32
        if bits >> lo & 1 or bits >> up & 1:
            bits |= 1 << lo | 1 << up
    return _Chars(bits, chars.other)


@dataclass
class _Walk:
    ignorecase: bool
    ambiguous: list[tuple[str, bool, bool]] = field(default_factory=list)
    """(what, inside a repeat, unbounded repeat followed by a long one) per ambiguous choice point."""
    hazard: str | None = None
    long_repeat: bool = False

    def chars(self, c: _Chars) -> _Chars:
        return _fold(c) if self.ignorecase else c

    def first(self, seq: Any) -> tuple[_Chars, bool]:
        """The characters `seq` can begin with, and whether it can match the empty string."""
        out = _NONE
        for op, av in seq:
            f, nullable = self.item_first(str(op), av)
            out |= f
            if not nullable:
                return out, False
        return out, True

    def item_first(self, op: str, av: Any) -> tuple[_Chars, bool]:
        if op == "LITERAL":
            return self.chars(_literal(av)), False
        if op == "NOT_LITERAL":
            one = self.chars(_literal(av))
            return _Chars(_ASCII & ~one.ascii, True), False
        if op == "ANY":
            return _ALL, False
        if op == "IN":
            return self.chars(_charset(av)), False
        if op in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            f, nullable = self.first(av[2])
            return f, nullable or av[0] == 0
        if op == "SUBPATTERN":
            return self.first(av[3])
        if op == "ATOMIC_GROUP":
            return self.first(av)
        if op == "BRANCH":
            out, nullable = _NONE, False
            for alt in av[1]:
                f, n = self.first(alt)
                out, nullable = out | f, nullable or n
            return out, nullable
        if op == "GROUPREF_EXISTS":
            return _ALL, True
        return _NONE, True  # AT, ASSERT, ASSERT_NOT, GROUPREF (refused anyway): zero-width here

    def seq(self, seq: Any, follow: _Chars, follow_long: bool, in_repeat: bool) -> None:
        """Walk `seq` right to left; `follow` is what may come after it, `follow_long` if a long repeat may."""
        after, after_long = follow, follow_long
        for op, av in reversed(list(seq)):
            name = str(op)
            self.item(name, av, after, after_long, in_repeat)
            f, nullable = self.item_first(name, av)
            after = f | after if nullable else f
            after_long = after_long or self.holds_long(name, av)
            if self.hazard:
                return

    def holds_long(self, op: str, av: Any) -> bool:
        if op in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            return av[1] > LONG_REPEAT or self.holds_long_seq(av[2])
        if op == "SUBPATTERN":
            return self.holds_long_seq(av[3])
        if op == "ATOMIC_GROUP":
            return self.holds_long_seq(av)
        if op == "BRANCH":
            return any(self.holds_long_seq(alt) for alt in av[1])
        if op in ("ASSERT", "ASSERT_NOT"):
            return self.holds_long_seq(av[1])
        return False

    def holds_long_seq(self, seq: Any) -> bool:
        return any(self.holds_long(str(op), av) for op, av in seq)

    def item(self, op: str, av: Any, after: _Chars, after_long: bool, in_repeat: bool) -> None:
        if op in ("GROUPREF", "GROUPREF_EXISTS", "GROUPREF_IGNORE", "GROUPREF_LOC_IGNORE", "GROUPREF_UNI_IGNORE"):
            self.hazard = "a backreference or conditional group (no linear-time matcher exists for it)"
        elif op in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            lo, hi, body = av
            long = hi > LONG_REPEAT
            self.long_repeat = self.long_repeat or long
            head, _ = self.first(body)
            if op != "POSSESSIVE_REPEAT" and lo != hi and head.meets(after):
                self.ambiguous.append(("a repeat whose next character may also follow it", in_repeat, long and after_long))
            many = hi > 1
            self.seq(body, head | after if many else after, after_long or long, in_repeat or many)
        elif op == "BRANCH":
            starts = []
            for alt in av[1]:
                f, nullable = self.first(alt)
                starts.append(f | after if nullable else f)
            if any(a.meets(b) for i, a in enumerate(starts) for b in starts[i + 1:]):
                self.ambiguous.append(("alternatives that can begin with the same character", in_repeat, False))
            for alt in av[1]:
                self.seq(alt, after, after_long, in_repeat)
        elif op == "SUBPATTERN":
            self.seq(av[3], after, after_long, in_repeat)
        elif op == "ATOMIC_GROUP":
            self.seq(av, after, after_long, in_repeat)
        elif op in ("ASSERT", "ASSERT_NOT"):
            if self.holds_long_seq(av[1]):
                self.hazard = "a long repeat inside a lookaround (it is retried at every position)"
            else:
                self.seq(av[1], _ALL, False, in_repeat)


def _anchored(seq: Any, multiline: bool) -> bool:
    """Whether every match must start at the start of the string (`\\A`, or `^` without MULTILINE)."""
    for op, av in seq:
        name = str(op)
        if name == "AT":
            return str(av) == "AT_BEGINNING_STRING" or (str(av) == "AT_BEGINNING" and not multiline)
        if name == "SUBPATTERN":
            return _anchored(av[3], multiline)
        if name == "BRANCH":
            return all(_anchored(alt, multiline) for alt in av[1])
        return False
    return False


def pattern_hazard(pattern: str) -> str | None:
    """Why matching `pattern` may take more than linear time (or cannot be decided), or None if it cannot."""
    if len(pattern) > _MAX_PATTERN:
        return f"longer than {_MAX_PATTERN} characters"
    try:
        parsed = _p.parse(pattern)
    except re.error as exc:
        return f"not a regular expression: {exc}"
    except (RecursionError, OverflowError, MemoryError):
        return "nested too deeply to analyse"
    flags = parsed.state.flags
    ignorecase = bool(flags & re.IGNORECASE) or "(?" in pattern  # a local (?i:...) may fold case: assume it does
    walk = _Walk(ignorecase=ignorecase)
    try:
        walk.seq(parsed, _NONE, False, False)  # past the end nothing is read: the match is over
    except RecursionError:
        return "nested too deeply to analyse"
    if walk.hazard:
        return walk.hazard
    nested = [what for what, inside, _ in walk.ambiguous if inside]
    if nested:
        return f"{nested[0]}, inside a repeat (backtracking grows exponentially)"
    if len(walk.ambiguous) > 1:
        return f"{len(walk.ambiguous)} ambiguous choice points (backtracking grows as a power of the input)"
    if any(long_after for _, _, long_after in walk.ambiguous):
        return "an ambiguous unbounded repeat followed by another long repeat (backtracking grows quadratically)"
    if walk.long_repeat and not _anchored(parsed, bool(flags & re.MULTILINE)):
        return "a long repeat in a pattern not anchored with ^ or \\A (search retries every start: quadratic)"
    return None
