"""Choosing cases the way pytest users expect: ``-k`` expressions, deselection, the last run's failures.

A ``-k`` expression is pytest's: names joined by ``and``, ``or``, ``not`` and parentheses. A name
matches a case when it is, ignoring case, part of the case's id, area, op or description, or is one
of its requirement ids (``SURF-5``, whole: ``SURF-1`` does not match ``SURF-12``) or families
(``SURF``). A name with spaces is quoted (``-k '"empty log" and not repair'``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence

from .cases import Case

__all__ = ["MAX_EXPRESSION", "SelectionError", "keyword_matcher", "matches_keyword"]

MAX_EXPRESSION = 4_096
"""Longest ``-k`` expression (characters); the parser's nesting is bounded as well."""
_MAX_NESTING = 64
_TOKEN = re.compile(r"""\s*(?:(?P<paren>[()])|"(?P<dq>[^"]*)"|'(?P<sq>[^']*)'|(?P<word>[^\s()"']+))""")
_OPERATORS = {"and", "or", "not"}


class SelectionError(ValueError):
    """A ``-k`` expression cannot be parsed; the message names the column."""


def matches_keyword(case: Case, name: str) -> bool:
    """Whether one ``-k`` name selects ``case``."""
    low = name.lower()
    if any(low == r.lower() or low == r.split("-")[0].lower() for r in case.requirements):
        return True
    return any(low in field.lower() for field in (case.id, case.area, case.op, case.description))


def _tokens(expression: str) -> list[tuple[str, str, int]]:
    """``(kind, text, column)``: kind ``(``, ``)``, ``op`` or ``name``."""
    out: list[tuple[str, str, int]] = []
    pos = 0
    while pos < len(expression):
        if expression[pos:].strip() == "":
            break
        m = _TOKEN.match(expression, pos)
        if m is None or m.end() == pos:
            raise SelectionError(f"-k {expression!r}: unexpected character at column {pos + 1} (an unclosed quote?)")
        column = m.start(m.lastgroup or 0) + 1
        if m.group("paren"):
            out.append((m.group("paren"), m.group("paren"), column))
        elif m.group("word") is not None and m.group("word") in _OPERATORS:
            out.append(("op", m.group("word"), column))
        else:
            text = next(g for g in (m.group("word"), m.group("dq"), m.group("sq")) if g is not None)
            if not text:
                raise SelectionError(f"-k {expression!r}: empty name at column {column}")
            out.append(("name", text, column))
        pos = m.end()
    return out


Matcher = Callable[[Case], bool]


def keyword_matcher(expression: str) -> Matcher:
    """Compile a ``-k`` expression; raises :class:`SelectionError` naming the column at fault."""
    if len(expression) > MAX_EXPRESSION:
        raise SelectionError(f"-k: the expression is longer than {MAX_EXPRESSION} characters")
    tokens = _tokens(expression)
    if not tokens:
        raise SelectionError("-k: the expression is empty")
    pos = 0

    def fail(what: str) -> SelectionError:
        where = f"column {tokens[pos][2]}" if pos < len(tokens) else "the end"
        return SelectionError(f"-k {expression!r}: {what} at {where}")

    def parse_or(depth: int) -> Matcher:
        parts = [parse_and(depth)]
        nonlocal pos
        while pos < len(tokens) and tokens[pos][:2] == ("op", "or"):
            pos += 1
            parts.append(parse_and(depth))
        return parts[0] if len(parts) == 1 else (lambda c: any(p(c) for p in parts))

    def parse_and(depth: int) -> Matcher:
        parts = [parse_not(depth)]
        nonlocal pos
        while pos < len(tokens) and tokens[pos][:2] == ("op", "and"):
            pos += 1
            parts.append(parse_not(depth))
        return parts[0] if len(parts) == 1 else (lambda c: all(p(c) for p in parts))

    def parse_not(depth: int) -> Matcher:
        nonlocal pos
        if depth > _MAX_NESTING:
            raise fail(f"more than {_MAX_NESTING} levels of 'not' and parentheses")
        if pos >= len(tokens):
            raise fail("expected a name, 'not' or '('")
        kind, text, _ = tokens[pos]
        if kind == "op" and text == "not":
            pos += 1
            inner = parse_not(depth + 1)
            return lambda c: not inner(c)
        if kind == "(":
            pos += 1
            inner = parse_or(depth + 1)
            if pos >= len(tokens) or tokens[pos][0] != ")":
                raise fail("expected ')'")
            pos += 1
            return inner
        if kind == "name":
            pos += 1
            return lambda c: matches_keyword(c, text)
        raise fail(f"expected a name, 'not' or '(', got {text!r}")

    matcher = parse_or(0)
    if pos < len(tokens):
        raise fail(f"unexpected {tokens[pos][1]!r}")
    return matcher


def by_keywords(cases: Sequence[Case], expressions: Iterable[str]) -> list[Case]:
    """The cases every expression selects (``-k`` given twice: both must hold)."""
    matchers = [keyword_matcher(e) for e in expressions]
    return [c for c in cases if all(m(c) for m in matchers)]
