"""Deep values in vector files, written so any language's default JSON parser loads the file.

A 10,000-level payload (DEC-16) breaks Python's ``json`` (RecursionError), serde_json
(recursion limit 128) and many other parsers. A vector file therefore writes a value that
repeats one shape many levels deep as a *nest form*, and the harness expands it before
anything else reads the case (ids hash the expanded value, so they do not depend on the form):

``{"$nest": {"depth": N, "wrap": T, "leaf": V}}``
    ``V`` wrapped ``N`` times in the template ``T``: ``T`` is any JSON value holding exactly one
    hole ``{"$hole": true}``, which each level replaces with the level below. ``[{"$hole": true}]``
    gives ``[[...[V]...]]``; ``{"a": {"$hole": true}}`` gives ``{"a": {"a": ... V}}``.
``{"$literal": O}``
    the object ``O`` itself (its members still expanded): how a file writes an object whose
    only key is ``$nest``, ``$hole`` or ``$literal``.

``V`` may itself hold nest forms. Any other value stands for itself. A vector file nests at
most :data:`MAX_FILE_DEPTH` levels (checked by the corpus tests).
"""

from __future__ import annotations

from typing import Any

from . import wire

__all__ = ["MAX_FILE_DEPTH", "MIN_REPEAT", "NestFormError", "describe", "expand", "expand_text_needed", "nesting_depth"]

MAX_FILE_DEPTH = 100
"""The deepest a vector file may nest: below every common parser's default limit."""

MIN_REPEAT = 32
"""A shape repeated at least this many levels is written as a nest form by :func:`describe`."""

_NEST = "$nest"
_LITERAL = "$literal"
_HOLE = "$hole"
_MARKERS = (_NEST, _LITERAL, _HOLE)


class NestFormError(ValueError):
    """A malformed nest form; ``pointer`` is its JSON pointer in the file."""

    def __init__(self, pointer: str, message: str) -> None:
        super().__init__(f"{pointer or '/'}: {message}")
        self.pointer = pointer
        self.message = message


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def _is_hole(value: Any) -> bool:
    return isinstance(value, dict) and len(value) == 1 and value.get(_HOLE) is True


def _holes(template: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Where the holes of a template are; never inside a nest or literal form (those hold data)."""
    if _is_hole(template):
        return [path]
    if isinstance(template, dict) and len(template) == 1 and next(iter(template)) in _MARKERS:
        return []
    if isinstance(template, list):
        return [h for i, v in enumerate(template) for h in _holes(v, (*path, i))]
    if isinstance(template, dict):
        return [h for k, v in template.items() for h in _holes(v, (*path, k))]
    return []


def _fill(template: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(template, list):
        return [_fill(v, rest, value) if i == head else v for i, v in enumerate(template)]
    return {k: _fill(v, rest, value) if k == head else v for k, v in template.items()}


def _chain(value: Any) -> tuple[int, str | None, Any]:
    """The run of one-element lists (key ``None``) or same-key one-key objects at ``value``, and its tail."""
    depth, key, node = 0, None, value
    if isinstance(value, dict) and len(value) == 1:
        key = next(iter(value))
    while True:
        if key is None and isinstance(node, list) and len(node) == 1:
            node = node[0]
        elif key is not None and isinstance(node, dict) and len(node) == 1 and key in node:
            node = node[key]
        else:
            return depth, key, node
        depth += 1


def expand_text_needed(text: str) -> bool:
    """Whether a file's text may hold forms at all (a fast path: most files hold none)."""
    return any(f'"{marker}"' in text for marker in _MARKERS)


def expand(value: Any, pointer: str = "") -> Any:
    """The value a file's text stands for (nest forms expanded).

    Plain chains are walked in a loop, so an already expanded 10,000-level value comes back unchanged.
    """
    depth, key, tail = _chain(value)
    if depth and key not in _MARKERS:
        step = "/0" if key is None else "/" + _escape(key)
        tail = expand(tail, pointer + step * depth)
        for _ in range(depth):
            tail = [tail] if key is None else {key: tail}
        return tail
    if isinstance(value, list):
        return [expand(v, f"{pointer}/{i}") for i, v in enumerate(value)]
    if not isinstance(value, dict):
        return value
    if len(value) == 1 and _LITERAL in value:
        inner = value[_LITERAL]
        if not isinstance(inner, dict):
            raise NestFormError(pointer + "/$literal", "a $literal form holds an object")
        return {k: expand(v, f"{pointer}/$literal/{_escape(k)}") for k, v in inner.items()}
    if len(value) == 1 and _NEST in value:
        return _expand_nest(value[_NEST], pointer + "/$nest")
    return {k: expand(v, f"{pointer}/{_escape(k)}") for k, v in value.items()}


def _expand_nest(form: Any, where: str) -> Any:
    if not isinstance(form, dict) or form.keys() != {"depth", "wrap", "leaf"}:
        raise NestFormError(where, 'a $nest form is {"depth": N, "wrap": T, "leaf": V}')
    depth = form["depth"]
    if not isinstance(depth, int) or isinstance(depth, bool) or not 1 <= depth <= 1_000_000:
        raise NestFormError(where + "/depth", "depth is an integer from 1 to 1000000")
    holes = _holes(form["wrap"])
    if len(holes) != 1:
        raise NestFormError(where + "/wrap", f'the template holds exactly one {{"$hole": true}} (it holds {len(holes)})')
    template = expand(form["wrap"], where + "/wrap")  # the path to the hole crosses no form, so it stays valid
    value = expand(form["leaf"], where + "/leaf")
    for _ in range(depth):
        value = _fill(template, holes[0], value)
    return value


def _children(value: Any) -> list[Any]:
    if isinstance(value, list):
        return [i for i, v in enumerate(value) if isinstance(v, dict | list)]
    if isinstance(value, dict):
        return [k for k, v in value.items() if isinstance(v, dict | list)]
    return []


def _deepest(value: Any) -> Any:
    """The position of the deepest container child (only a run through it can be long), or ``None``."""
    children = _children(value)
    return max(children, key=lambda c: nesting_depth(value[c])) if children else None


def _at(value: Any, path: tuple[Any, ...]) -> Any:
    """The value at ``path``, or ``None`` when the path does not exist in it."""
    for step in path:
        listed = isinstance(value, list) and isinstance(step, int) and 0 <= step < len(value)
        if not (listed or (isinstance(value, dict) and isinstance(step, str) and step in value)):
            return None
        value = value[step]
    return value


def _repeat(value: Any) -> tuple[int, tuple[Any, ...], Any]:
    """The longest run of one shape at ``value`` (a period of one or two levels): (levels, hole path, tail)."""
    best: tuple[int, tuple[Any, ...], Any] = (0, (), value)
    child = _deepest(value)
    if child is None:
        return best
    grandchild = _deepest(value[child])
    paths = [(child,)] if grandchild is None else [(child,), (child, grandchild)]
    for path in paths:
        shape = wire.dumps(_fill(value, path, {_HOLE: True}))
        levels, node = 0, value
        while _at(node, path) is not None and wire.dumps(_fill(node, path, {_HOLE: True})) == shape:
            node, levels = _at(node, path), levels + 1
        if levels > best[0]:
            best = (levels, path, node)
    return best


def describe(value: Any) -> Any:
    """The file form of a value: every shape repeated :data:`MIN_REPEAT` or more levels as a nest form.

    ``expand(describe(v)) == v`` for every JSON value ``v``.
    """
    if nesting_depth(value) <= MIN_REPEAT:
        return _escaped(value)
    levels, path, tail = _repeat(value)
    if levels >= MIN_REPEAT and not any(
            isinstance(node, dict) and len(node) == 1 and step in _MARKERS for node, step in _steps(value, path)):
        wrap = describe(_fill(value, path, None))
        wrap = _fill(wrap, path, {_HOLE: True})
        return {_NEST: {"depth": levels, "wrap": wrap, "leaf": describe(tail)}}
    if isinstance(value, list):
        return [describe(v) for v in value]
    if isinstance(value, dict):
        out = {k: describe(v) for k, v in value.items()}
        return {_LITERAL: out} if len(out) == 1 and next(iter(out)) in _MARKERS else out
    return value


def _steps(value: Any, path: tuple[Any, ...]) -> list[tuple[Any, Any]]:
    out = []
    for step in path:
        out.append((value, step))
        value = value[step]
    return out


def _escaped(value: Any) -> Any:
    """A shallow value in file form: only objects that look like forms need escaping."""
    if isinstance(value, list):
        return [_escaped(v) for v in value]
    if isinstance(value, dict):
        out = {k: _escaped(v) for k, v in value.items()}
        return {_LITERAL: out} if len(out) == 1 and next(iter(out)) in _MARKERS else out
    return value


def nesting_depth(value: Any) -> int:
    """The container nesting depth of a JSON value, computed without recursion."""
    deepest = 0
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            deepest = max(deepest, depth)
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            deepest = max(deepest, depth)
            stack.extend((v, depth + 1) for v in item)
    return deepest
