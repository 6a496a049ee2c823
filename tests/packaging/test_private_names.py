"""Consumers of the reference use its public names only (issue: one rule in one place).

A module outside `reference/` may neither import a `_`-prefixed name from `sessionspec.reference`
(or one of its modules) nor read or write a `_`-prefixed attribute of a reference module, and no
attribute name that only the reference defines as private (`SurfaceState._length`, ...) may be
touched from outside. The reference's public seams exist so that this holds.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "reference"
CONSUMERS = sorted(
    p for folder in ("tools", "spec", "conformance", "tests", "bench") for p in (ROOT / folder).rglob("*.py")
    if "reference" not in p.relative_to(ROOT).parts[1:2]  # tests/reference tests the reference from inside
)
# No exception: the mutants swap entries of the reference's rule table (`reference/rule_table.py`).
ALLOWED: dict[str, set[str]] = {}


def _private_attributes_of_reference() -> set[str]:
    """`_names` the reference defines: module globals, class members, `self._x` attributes."""
    names: set[str] = set()
    for path in REFERENCE.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
                names.add(node.attr)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.isidentifier():
                names.add(node.value)  # __slots__ entries
    return {n for n in names if n.startswith("_") and not n.startswith("__")}


PRIVATE = _private_attributes_of_reference()


def _violations(path: Path) -> Iterator[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    reference_aliases: set[str] = set()
    defined_here = {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    defined_here |= {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)
                     and isinstance(n.value, ast.Name) and n.value.id == "self" and isinstance(n.ctx, ast.Store)}
    defined_here |= {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("sessionspec.reference"):
            for alias in node.names:
                if alias.name.startswith("_"):
                    yield f"line {node.lineno}: imports {alias.name} from {node.module}"
                elif node.module == "sessionspec.reference":
                    reference_aliases.add(alias.asname or alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("sessionspec.reference"):
                    reference_aliases.add(alias.asname or alias.name)
        elif isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
            if isinstance(node.value, ast.Name) and node.value.id in reference_aliases:
                yield f"line {node.lineno}: uses {node.value.id}.{node.attr}"
            elif node.attr in PRIVATE and node.attr not in defined_here:
                yield f"line {node.lineno}: uses .{node.attr}, a private name of the reference"


@pytest.mark.parametrize("path", CONSUMERS, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_private_reference_name_outside_the_reference(path: Path) -> None:
    rel = str(path.relative_to(ROOT))
    found = [v for v in _violations(path) if v.split(": ", 1)[1] not in ALLOWED.get(rel, set())]
    assert not found, f"{rel} uses private names of sessionspec.reference: {found}"


def test_the_exceptions_are_not_stale() -> None:
    for rel, allowed in ALLOWED.items():
        seen = {v.split(": ", 1)[1] for v in _violations(ROOT / rel)}
        assert allowed <= seen, f"{rel}: no longer uses {sorted(allowed - seen)}; remove them from ALLOWED"


def test_the_check_sees_a_private_use(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text("from sessionspec.reference.session import _DELTA_TYPE\n"
                      "from sessionspec.reference import surface\n"
                      "def f(state):\n    state._length = 1\n    return surface._MISSING\n")
    assert len(list(_violations(sample))) == 3
