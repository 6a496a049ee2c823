"""The core spec's fast-path predicates and msgspec types, generated ahead of time.

Compiling the schemas (`sessionspec.validator.fastschema`) and translating them
into msgspec types (`sessionspec.validator.mstypes`) takes a fraction of a
second per process: more than validating a small log. For the core spec (no
plugin registry) this module writes both once, as ordinary Python source, into
`sessionspec.validator.core_fast` (a generated file, like the catalogs: never
edited by hand, checked fresh by `tests/cli/test_pregen.py` and by
``python -m sessionspec.validator.pregen --check``). Python caches its bytecode,
so a process imports the result instead of building it.

It also writes revision detection's payload checks (each payload schema that differs between the installed
revisions, compiled at each revision, keyed by `generated.revisions_fingerprint`), so `validate` never imports
python-jsonschema to detect a log's revision. A run reads the module through `sessionspec.validator.generated`,
never through this module: the generator imports the validator (`fastlog`'s row analysis), not the reverse.

Nothing in the module is new logic: the predicate source is the compiler's own
output with its constants written as literals, and each struct is the class
`mstypes` builds, written as a ``class`` statement. Names are stable: a predicate,
constant or table is named by a digest of its own definition (`_stable_names`) and a
struct by its schema path, so a new or changed type is a local diff of this file
(tests/spec/test_recipes.py measures it), and equal definitions are written once.
Schema content enters the module only as values (`_literal`: reprs of checked
data), never as names or code.

    python -m sessionspec.validator.pregen          # rewrite tools/validator/core_fast.py
    python -m sessionspec.validator.pregen --check  # exit 1 when it is stale
"""

from __future__ import annotations

import hashlib
import math
import re
import sys
import typing
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from sessionspec.validator.fastschema import CompiledSchema
from sessionspec.validator.generated import (
    compiled_parts,
    evidence_payloads,
    fingerprint,
    revision_specs,
    revisions_fingerprint,
)

if TYPE_CHECKING:
    from sessionspec.spec.loader import Spec

__all__ = ["TARGET", "main", "render"]

#: The generated module (inside the package, so it ships in the wheel).
TARGET = Path(__file__).with_name("core_fast.py")


# -- rendering -----------------------------------------------------------------------------


def _literal(value: Any) -> str:
    """Python source for a compiler constant (deterministic: sets are written sorted)."""
    if isinstance(value, frozenset):
        items = sorted(_literal(v) for v in value)
        return f"frozenset(({''.join(i + ', ' for i in items)}))"
    if isinstance(value, tuple):
        return f"({''.join(_literal(v) + ', ' for v in value)})"
    if isinstance(value, list):
        return f"[{', '.join(_literal(v) for v in value)}]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_literal(k)}: {_literal(v)}" for k, v in value.items()) + "}"
    if isinstance(value, re.Pattern):
        return f"_re.compile({value.pattern!r})"
    if isinstance(value, float) and not math.isfinite(value):  # the repr (`inf`, `nan`) is no Python literal
        return f"float({str(value)!r})"
    if value is None or isinstance(value, (bool, int, float, str)):
        return repr(value)
    raise ValueError(f"cannot write a constant of type {type(value).__name__}")


def _renamed(source: str, prefix: str) -> str:
    """`source` with every generated name (``_v12``, ``_c3`` ...) prefixed, so three schemas share a module.

    Only NAME tokens are touched (never text inside string literals).
    """
    import io
    import tokenize  # rendering only: a process that loads the generated module never needs it

    pattern = re.compile(r"_(?:v|s|c|tab|free|re|fb)\d+")
    out = []
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.NAME and pattern.fullmatch(tok.string):
            tok = tok._replace(string=f"_{prefix}{tok.string}")
        out.append(tok)
    return tokenize.untokenize(out)


_PREDICATE_NAME = re.compile(r"_[a-z0-9]+_(?:v|s|c|tab|free|re|fb)\d+")  # as `_renamed` writes them
_LOCAL_NAME = re.compile(r"x\d+")


def _name_tokens(lines: list[str]) -> list[tuple[int, int, str]]:
    """(line index, column, name) of every NAME token in `lines` (one top-level statement; never inside a string)."""
    import io
    import tokenize

    tokens = tokenize.generate_tokens(io.StringIO("\n".join(lines) + "\n").readline)
    return [(t.start[0] - 1, t.start[1], t.string) for t in tokens if t.type == tokenize.NAME]


def _rewritten(lines: list[str], tokens: list[tuple[int, int, str]], new: Any) -> list[str]:
    """`lines` with each NAME token replaced by ``new(name)`` (None keeps it)."""
    out = list(lines)
    for row, col, name in reversed(tokens):  # right to left: earlier columns stay valid
        replacement = new(name)
        if replacement is not None:
            out[row] = out[row][:col] + replacement + out[row][col + len(name):]
    return out


def _renamer(names: Callable[[str], str | None], own: str | None, *, locals_: bool) -> Callable[[str], str | None]:
    """A token map for `_rewritten`: `own` as ``@``, other names through `names`, and (in a function)
    its locals ``x<n>`` renumbered in order of first use, so the compiler's global counter leaves no trace."""
    local: dict[str, str] = {}

    def new(token: str) -> str | None:
        if token == own:
            return "@"
        found = names(token)
        if found is not None:
            return found
        if locals_ and _LOCAL_NAME.fullmatch(token):
            return local.setdefault(token, f"x{len(local)}")
        return None

    return new


def _stable_names(text: str) -> str:
    """`text` with every generated predicate, constant and table named by a digest of its definition.

    The compiler numbers its definitions in traversal order, so one more type renumbers everything
    after it (8,000 lines of churn). Here a definition's name comes from its own text (other
    generated names and locals abstracted), refined by what it refers to only where two
    definitions read the same: a changed schema changes the names of its own definitions and of
    those that read the same as another. Definitions equal after refinement are the same function
    or value (their texts are equal and refer to equal definitions) and are written once.
    """
    import ast

    lines = text.split("\n")
    statements = [(node.lineno - 1, node.end_lineno or node.lineno) for node in ast.parse(text).body]
    defined: dict[str, tuple[int, int]] = {}
    for node, span in zip(ast.parse(text).body, statements):
        name = node.name if isinstance(node, ast.FunctionDef) else (
            node.targets[0].id if isinstance(node, ast.Assign) and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name) else None)
        if name is not None and _PREDICATE_NAME.fullmatch(name):
            defined[name] = span
    tokens = {span: _name_tokens(lines[span[0]:span[1]]) for span in statements}

    def abstract(name: str, colour: dict[str, str] | None) -> str:
        span = defined[name]
        new = _renamer(lambda token: None if token not in defined else "#" if colour is None else colour[token],
                       name, locals_=True)
        return "\n".join(_rewritten(lines[span[0]:span[1]], tokens[span], new))

    def digest(value: str) -> str:
        return hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()

    first = {name: digest(abstract(name, None)) for name in defined}
    colour = first
    for _ in range(len(defined)):  # refine until no class splits (each round at least one split, or done)
        refined = {name: digest(first[name] + abstract(name, colour)) for name in defined}
        if len(set(refined.values())) == len(set(colour.values())):
            break
        colour = refined
    kinds = {name: re.sub(r"\d+$", "", name.split("_", 2)[2]) for name in defined}
    shared: dict[tuple[str, str], set[str]] = {}  # (kind, first digest) -> the final colours with it
    for name in defined:
        shared.setdefault((kinds[name], first[name]), set()).add(colour[name])
    keep: dict[str, str] = {}  # final colour -> the name written
    rename: dict[str, str] = {}
    for name in defined:
        key = (kinds[name], first[name])
        stem = f"_{kinds[name]}{first[name][:10]}"
        rename[name] = keep.setdefault(colour[name], stem if len(shared[key]) == 1 else f"{stem}_{colour[name][:6]}")
    name_at = {span: name for name, span in defined.items()}
    out: list[str] = []
    position = 0
    written: set[str] = set()
    for span in statements:
        out += lines[position:span[0]]
        position = span[1]
        name = name_at.get(span)
        # only a generated predicate's locals are renumbered (a struct builder's names are schema keys)
        new = _renamer(rename.get, None, locals_=name is not None and lines[span[0]].startswith("def "))
        if name is not None:
            if rename[name] in written:  # an equal definition is already written
                if position < len(lines) and lines[position] == "":
                    position += 1
                continue
            written.add(rename[name])
        out += _rewritten(lines[span[0]:span[1]], tokens[span], new)
    out += lines[position:]
    return "\n".join(out)


def _predicates(compiled: CompiledSchema, prefix: str) -> tuple[list[str], str, dict[str, str]]:
    """(module lines, root predicate name, tag -> specialised predicate name) for one compiled schema."""
    if compiled.fallbacks:
        raise ValueError(f"{prefix}: keywords delegated to the oracle cannot be generated: {compiled.fallbacks}")
    env = compiled.compiler.env
    names = {id(fn): name for name, fn in env.items() if re.fullmatch(r"_[vs]\d+", name)}
    lines = []
    for name, value in env.items():
        if re.fullmatch(r"_fb\d+", name):
            raise ValueError(f"{prefix}: a subschema delegated to the oracle cannot be generated")
        if re.fullmatch(r"_(?:c|re)\d+", name):
            lines.append(f"_{prefix}{name} = {_literal(value)}")
    body = _renamed(compiled.source, prefix)
    by_tag = {tag: f"_{prefix}{names[id(fn)]}" for tag, fn in compiled.by_tag.items()}
    return [*lines, "", body], f"_{prefix}{names[id(compiled._predicate)]}", by_tag


class _TypeWriter:
    """Writes the msgspec types of a `FastTypes` as class statements and type expressions."""

    def __init__(self) -> None:
        self.classes: dict[type, str] = {}
        self.lines: list[str] = []

    def expr(self, kind: Any) -> str:
        import msgspec

        if kind is Any:
            return "Any"
        if kind is None or kind is type(None):
            return "None"
        if kind in (int, str, bool, float):
            return cast("str", kind.__name__)
        if kind is msgspec.UnsetType:
            return "UnsetType"
        if isinstance(kind, type) and issubclass(kind, msgspec.Struct):
            return self.struct(kind)
        origin = typing.get_origin(kind)
        args = typing.get_args(kind)
        if origin is typing.Annotated:
            marks = [self.mark(m) for m in kind.__metadata__]
            return f"Annotated[{self.expr(args[0])}, {', '.join(marks)}]"
        if origin is typing.Union:
            return f"Union[{', '.join(self.expr(a) for a in args)}]"
        if origin is typing.Literal:
            return f"Literal[{', '.join(_literal(a) for a in args)}]"
        if origin is list:
            return f"list[{self.expr(args[0])}]"
        if origin is dict:
            return f"dict[{self.expr(args[0])}, {self.expr(args[1])}]"
        raise ValueError(f"cannot write the type {kind!r}")

    @staticmethod
    def mark(meta: Any) -> str:
        import msgspec
        from sessionspec.validator import mstypes

        if meta is mstypes._UNIQUE:
            return "_UNIQUE"
        if isinstance(meta, msgspec.Meta):
            words = ("gt", "ge", "lt", "le", "min_length", "max_length", "pattern")
            given = {w: getattr(meta, w) for w in words if getattr(meta, w) is not None}
            return f"Meta({', '.join(f'{w}={_literal(v)}' for w, v in given.items())})"
        raise ValueError(f"cannot write the type annotation {meta!r}")

    def struct(self, cls: type) -> str:
        import msgspec

        if cls in self.classes:
            return self.classes[cls]
        name = cls.__name__
        if name in self.classes.values() or not name.isidentifier():
            raise ValueError(f"two generated structs named {name!r}")
        config = cls.__struct_config__  # type: ignore[attr-defined]
        fields = msgspec.structs.fields(cls)
        written = [(f, self.expr(f.type)) for f in fields]  # nested structs are written first
        options = ["kw_only=True"]
        if not config.gc:
            options.append("gc=False")
        if config.forbid_unknown_fields:
            options.append("forbid_unknown_fields=True")
        if config.tag_field is not None:
            options.append(f"tag_field={_literal(config.tag_field)}, tag={_literal(config.tag)}")
        rename = {f.name: f.encode_name for f in fields if f.name != f.encode_name}
        if rename:
            options.append(f"rename={_literal(rename)}")
        self.lines.append(f"class {name}(Struct, {', '.join(options)}):")
        for f, kind in written:
            default = "" if f.required else " = UNSET"
            if f.default is not msgspec.UNSET and not f.required:
                raise ValueError(f"{name}.{f.name}: a default other than UNSET")
            self.lines.append(f"    {f.name}: {kind}{default}")
        post = getattr(cls, "__post_init__", None)
        if post is not None:
            unique, universal = post.checks
            self.lines.append(f"    __post_init__ = _post_init({_literal(list(unique))}, {_literal(list(universal))})")
        if not written and post is None:
            self.lines.append("    pass")
        self.lines.append("")
        self.classes[cls] = name
        return name


def _payload_predicates(specs: dict[str, Any]) -> tuple[list[str], dict[str, dict[str, str]]]:
    """(module lines, type -> {revision: predicate name}) for revision detection's payload checks
    (`evidence_payloads`): each payload schema at each revision, compiled."""
    lines: list[str] = []
    table: dict[str, dict[str, str]] = {}
    for number, (event_type, ids) in enumerate(evidence_payloads(specs).items()):
        for rid, schema_id in sorted(ids.items()):
            spec = specs[rid]
            compiled = CompiledSchema(spec.schemas[schema_id], spec.validator(schema_id), registry=spec.registry)
            body, root, _ = _predicates(compiled, f"p{number}r{rid}")
            lines += body
            table.setdefault(event_type, {})[rid] = root
    return lines, table


def render(spec: Spec) -> str:
    """The source of the generated module for `spec` and for every installed revision's core spec, compiled now.

    Each is keyed by its `fingerprint` (`PARTS`), so `generated_parts` serves every revision without compiling;
    the structs of each are built by a function of their own, called the first time that spec asks for them
    (a pinned run never builds the published revision's classes)."""
    specs = revision_specs()
    rendered = [spec, *(other for rid, other in sorted(specs.items()) if fingerprint(other) != fingerprint(spec))]
    parts = [
        '"""GENERATED by `python -m sessionspec.validator.pregen` from spec/: do not edit by hand.',
        "",
        "The fast-path predicates (sessionspec.validator.fastschema) and msgspec types (sessionspec.validator.mstypes)",
        "of the core spec at every installed revision, built ahead of time; see sessionspec.validator.pregen.",
        '"""',
        "# ruff: noqa",
        "# mypy: ignore-errors",
        "# fmt: off",
        "import re as _re",
        "from typing import Annotated, Any, Literal, Union",
        "",
        "from msgspec import UNSET, Meta, Struct, UnsetType",
        "",
        "from sessionspec.validator.fastschema import _MISSING as _M, _equal, _is_integer, _is_number, _unique as _uniq",
        "from sessionspec.validator.mstypes import _UNIQUE, _post_init",
        "",
        "_len = len",
        "_INT = frozenset((int,))",
        "_NUM = frozenset((int, float))",
        "_STR = frozenset((str,))",
        "",
    ]
    from sessionspec.validator.fastlog import row_bounds_table

    entries: list[str] = []
    row_bounds: list[str] = []
    for number, one in enumerate(rendered):
        schemas = compiled_parts(one)
        row_bounds.append(f"    {fingerprint(one)!r}: {_literal(row_bounds_table(schemas.event))},")
        fast = schemas.fast_types
        compiled = {"event": schemas.event, "header": schemas.header, "row": schemas.row}
        roots: list[str] = []
        for prefix, schema in compiled.items():
            lines, root, by_tag = _predicates(schema, f"{prefix}{number}")
            parts.extend(lines)
            table = ", ".join(f"{_literal(tag)}: {fn}" for tag, fn in by_tag.items())
            roots.append(f"({root}, {{{table}}}, {_literal(schema.tag_key)})")
        writer = _TypeWriter()
        members = [writer.struct(cls) for cls in fast.tags]
        parts += ["", f"def _structs{number}():", *(f"    {line}" if line else "" for line in writer.lines),
                  f"    return ({''.join(m + ', ' for m in members)})", ""]
        entries.append(f"    {fingerprint(one)!r}: ({', '.join(roots)}, _structs{number}, {_literal(fast.events)}, "
                       f"{_literal(fast.rows)}, {_literal(dict(sorted(fast.skipped.items())))}),")
    parts += ["", "# fingerprint -> (EVENT, HEADER, ROW, structs, event types with a struct, row tags with one, skipped)",
              "PARTS = {", *entries, "}"]
    parts += ["", "# fingerprint -> row layout (tag, optional keys present) -> (template, paths, bounds): the packed rows'",
              "# schema analysis (`fastlog.RowPlan`), done here so that a run never builds the oracle for it",
              "ROW_BOUNDS = {", *row_bounds, "}"]
    payload_lines, payloads = _payload_predicates(specs)
    parts += ["", "# Revision detection: each payload schema that differs between revisions, at each revision.",
              f"REVISIONS_FINGERPRINT = {revisions_fingerprint(specs)!r}", *payload_lines]
    table = ", ".join(f"{_literal(t)}: {{{', '.join(f'{_literal(rid)}: {fn}' for rid, fn in by_rev.items())}}}"
                      for t, by_rev in payloads.items())
    parts.append(f"PAYLOADS = {{{table}}}")
    return _reachable_only(_stable_names("\n".join(parts) + "\n"))


_GENERATED_NAME = re.compile(r"_(?:v|s|c|tab|free|re|fb)[0-9a-f]{10}(?:_[0-9a-f]{6})?")  # as `_stable_names` writes them


def _reachable_only(text: str) -> str:
    """`text` without the generated definitions that nothing reaches (the compiler emits a predicate for every
    subschema it visits, also where a specialised one took its place): a definition stays when a statement that is
    not a generated definition (a table, a struct builder) names it, or a definition that stays does."""
    import ast

    body = ast.parse(text).body
    lines = text.split("\n")

    def named(node: ast.AST) -> set[str]:
        return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}

    defined: dict[str, ast.stmt] = {}
    for node in body:
        name = node.name if isinstance(node, ast.FunctionDef) else (
            node.targets[0].id if isinstance(node, ast.Assign) and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name) else None)
        if name is not None and _GENERATED_NAME.fullmatch(name):
            defined[name] = node
    reached: set[str] = set()
    todo = [name for node in body if node not in defined.values() for name in named(node) if name in defined]
    while todo:
        name = todo.pop()
        if name not in reached:
            reached.add(name)
            todo += [other for other in named(defined[name]) if other in defined]
    drop: set[int] = set()
    for name, node in defined.items():
        if name not in reached:
            end = node.end_lineno or node.lineno
            drop.update(range(node.lineno - 1, end))
            if end < len(lines) and lines[end] == "" and (node.lineno < 2 or lines[node.lineno - 2] == ""):
                drop.add(end)  # the blank line that separated it
    return "\n".join(line for number, line in enumerate(lines) if number not in drop)


def render_error_codes() -> str:
    """The source of `sessionspec.spec.error_codes`: every stable code of every revision (``spec/errors.json``
    plus each revision's added codes) as a ``Literal`` type, so mypy checks each code the reference raises."""
    from sessionspec.spec.loader import load_spec
    from sessionspec.spec.revisions import known_revisions

    codes = sorted({code for rid in known_revisions() for code in load_spec(revision=rid).error_codes})
    lines = [
        '"""GENERATED by `python -m sessionspec.validator.pregen` from spec/errors.json and the revisions\' changes:',
        "do not edit by hand. Every stable error code of every revision, as a type and as a set.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "from typing import Literal",
        "",
        '__all__ = ["ERROR_CODES", "ErrorCode"]',
        "",
        "ErrorCode = Literal[",
        *(f"    {_literal(code)}," for code in codes),
        "]",
        "ERROR_CODES: frozenset[str] = frozenset(ErrorCode.__args__)  # type: ignore[attr-defined]",
        "",
    ]
    return "\n".join(lines)


def _targets() -> dict[Path, str]:
    from sessionspec.spec import errors
    from sessionspec.spec.loader import load_spec
    from sessionspec.validator.pregen_types import render_schema_types

    spec = load_spec()
    return {TARGET: render(spec), Path(errors.__file__).with_name("error_codes.py"): render_error_codes(),
            Path(errors.__file__).with_name("schema_types.py"): render_schema_types(spec.schemas)}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    targets = _targets()
    if "--check" in argv:
        stale = [path for path, text in targets.items()
                 if (path.read_text(encoding="utf-8") if path.exists() else "") != text]
        for path in stale:
            sys.stderr.write(f"{path}: stale; regenerate with `python -m sessionspec.validator.pregen`\n")
        return 1 if stale else 0
    from sessionspec.reference.atomic import write_atomic

    for path, text in targets.items():
        write_atomic(path, text.encode("utf-8"))
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
