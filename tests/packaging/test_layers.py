"""The layout is the architecture: each package imports only from its own layer or below,
and no module imports itself back through another (docs/architecture.md, "Layers").

Every import counts, also those inside functions: a lazy import is still a dependency.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# Folder -> import name, as in pyproject.toml `[tool.setuptools] package-dir`.
FOLDERS = {
    "tools": "sessionspec",
    "tools/validator": "sessionspec.validator",
    "spec": "sessionspec.spec",
    "reference": "sessionspec.reference",
    "conformance": "sessionspec.conformance",
}
# Lowest first. A module's layer is the one of its longest matching prefix.
LAYERS = {
    "sessionspec.__init__": 0,
    "sessionspec.spec": 0,
    "sessionspec.reference": 1,
    "sessionspec.validator": 2,
    "sessionspec.conformance": 2,
    "sessionspec": 3,  # the CLI command modules
}


def _modules() -> dict[str, Path]:
    found = {}
    for folder, package in FOLDERS.items():
        for path in sorted((ROOT / folder).glob("*.py")):
            name = package if path.stem == "__init__" else f"{package}.{path.stem}"
            found[name] = path
    return found


MODULES = _modules()
PACKAGES = set(FOLDERS.values())


def layer(module: str) -> int:
    if module == "sessionspec":
        return LAYERS["sessionspec.__init__"]
    best = max((p for p in LAYERS if module == p or module.startswith(p + ".")), key=len)
    return LAYERS[best]


def _imports(module: str, path: Path) -> Iterator[tuple[str, int]]:
    """The project modules `module` imports, with line numbers."""
    package = module if module in PACKAGES else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                anchor = ".".join(parts[: len(parts) - node.level + 1])
                base = f"{anchor}.{base}" if base else anchor
            # `from package import submodule` depends on the submodule only.
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names]
        else:
            continue
        for target in targets:
            if target in MODULES:
                yield target, node.lineno


GRAPH = {module: sorted(set(_imports(module, path))) for module, path in MODULES.items()}


def test_the_layout_lists_every_package_folder() -> None:
    on_disk = {str(p.parent.relative_to(ROOT)) for p in ROOT.glob("*/**/__init__.py")}
    assert {f for f in on_disk if f.split("/")[0] in {"tools", "spec", "reference", "conformance"}} == set(FOLDERS)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_module_imports_from_a_higher_layer(module: str) -> None:
    upward = [f"{target} (line {line})" for target, line in GRAPH[module] if layer(target) > layer(module)]
    assert not upward, f"{module} (layer {layer(module)}) imports upward: {upward}"


def test_there_are_no_import_cycles() -> None:
    edges = {m: {t for t, _ in targets if t != m} for m, targets in GRAPH.items()}
    # A package's __init__ re-exporting its own modules is not a cycle of dependence:
    # `from sessionspec.reference import X` inside reference/ would be, and is caught.
    cycles = []
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(edges[node]):
            if state.get(nxt) == 1:
                cycles.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for module in sorted(edges):
        if module not in state:
            visit(module)
    assert not cycles, "import cycles: " + "; ".join(" -> ".join(c) for c in cycles)
