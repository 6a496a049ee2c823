"""Public signatures say what they take: no `Any` in them, anywhere, however spelled (issue 26).

Scans every name in `sessionspec.reference.__all__` and the public names of each `sessionspec.validator` module
(its `__all__`, or the public functions and classes it defines): functions, and the public methods of classes
(with `__init__`; properties by their getter), by their annotations, parameters, ``*args``/``**kwargs`` and
return alike. An annotation is resolved, not only read: a name it uses is looked up in its module (imports made
for mypy only, under ``if TYPE_CHECKING:``, included), and a type alias, a generic's arguments, a ``TypeVar``'s
bound and the members of a `TypedDict` or a ``Protocol`` of the package are walked in turn, so `Any` nested in
``Mapping[str, Any]``, an alias that resolves to `Any` (``Row = Any``, ``Lookup = Callable[[int], Any]``) and
``**kwargs: Any`` are all found. A name that cannot be resolved fails the test too (it could hide one). Every
module of the reference is held to the same by its own `__all__`, found by walking the package (so a new module
is held from the day it is added); there is no list of modules let off (the last, `jsonl`, was typed in issue 26).
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import re
import sys
import typing
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
import sessionspec.validator

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
_QUOTED = re.compile(r"\"[^\"]*\"|'[^']*'")
_BUILTINS = vars(__import__("builtins"))


def _modules() -> Iterator[ModuleType]:
    yield importlib.import_module("sessionspec.reference")
    for info in pkgutil.iter_modules(sessionspec.validator.__path__):
        yield importlib.import_module(f"sessionspec.validator.{info.name}")


def _public_names(module: ModuleType) -> list[str]:
    if hasattr(module, "__all__"):
        return list(module.__all__)
    return [name for name, obj in vars(module).items() if not name.startswith("_")
            and (inspect.isfunction(obj) or inspect.isclass(obj)) and obj.__module__ == module.__name__]


def _functions(module: ModuleType) -> Iterator[tuple[str, object]]:
    for name in _public_names(module):
        obj = getattr(module, name)
        if inspect.isclass(obj):
            for attr, value in vars(obj).items():
                if attr.startswith("_") and attr != "__init__":
                    continue
                func = value.__func__ if isinstance(value, (staticmethod, classmethod)) else value
                func = func.fget if isinstance(func, property) else func
                if inspect.isfunction(func):
                    yield f"{name}.{attr}", func
        elif inspect.isfunction(obj):
            yield name, obj


def _type_checking_imports(module: ModuleType) -> dict[str, object]:
    """The names a module imports under ``if TYPE_CHECKING:`` (absent at run time, read by mypy)."""
    try:
        source = inspect.getsource(module)
    except (OSError, TypeError):
        return {}
    names: dict[str, object] = {}
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)):
            continue
        for stmt in ast.walk(node):
            if isinstance(stmt, ast.ImportFrom):
                target = "." * stmt.level + (stmt.module or "")
                source_module = importlib.import_module(target, module.__package__)
                for alias in stmt.names:
                    names[alias.asname or alias.name] = getattr(source_module, alias.name)
            elif isinstance(stmt, ast.Import):
                for alias in stmt.names:
                    names[alias.asname or alias.name.split(".")[0]] = importlib.import_module(alias.name)
    return names


_NAMESPACES: dict[str, dict[str, object]] = {}


def _namespace(module_name: str) -> dict[str, object]:
    if module_name not in _NAMESPACES:
        module = sys.modules[module_name]
        _NAMESPACES[module_name] = {**_BUILTINS, **_type_checking_imports(module), **vars(module)}
    return _NAMESPACES[module_name]


def _any_module_namespace() -> dict[str, object]:
    """The globals of every loaded module of the package (where a forward reference inside an alias is found)."""
    merged: dict[str, object] = {}
    for name, module in sorted(sys.modules.items()):
        if name.startswith("sessionspec") and module is not None:
            merged.update({k: v for k, v in vars(module).items() if not k.startswith("_")})
    return merged


class _Scan:
    """Walks annotations for `Any`; ``found`` holds how each was reached, ``unresolved`` the names it could not
    look up."""

    def __init__(self) -> None:
        self.seen: set[int] = set()
        self.unresolved: set[str] = set()
        self.package = _any_module_namespace()

    def text(self, text: str, namespace: dict[str, object], trail: str) -> str | None:
        for name in _NAME.findall(_QUOTED.sub("", text)):
            head, *rest = name.split(".")
            if head in namespace:
                value = namespace[head]
            elif head in self.package:  # a forward reference inside an alias another module defines
                value = self.package[head]
            else:
                self.unresolved.add(f"{trail}: {name}")
                continue
            for part in rest:
                value = getattr(value, part, None)
            hit = self.value(value, namespace, f"{trail} -> {name}")
            if hit:
                return hit
        return None

    def value(self, value: object, namespace: dict[str, object], trail: str) -> str | None:
        if value is typing.Any:
            return trail
        if isinstance(value, str):
            return self.text(value, namespace, trail)
        if isinstance(value, typing.ForwardRef):
            return self.text(value.__forward_arg__, namespace, trail)
        if id(value) in self.seen or isinstance(value, ModuleType) or value is None:
            return None
        self.seen.add(id(value))
        if isinstance(value, typing.TypeVar):
            for part in (value.__bound__, *value.__constraints__):
                hit = self.value(part, namespace, f"{trail} (bound)")
                if hit:
                    return hit
            return None
        if typing.get_origin(value) is typing.Literal:
            return None
        args = typing.get_args(value)
        if args or typing.get_origin(value) is not None:
            for arg in (typing.get_origin(value), *args):
                if isinstance(arg, list):  # Callable[[...], ...]'s parameters
                    hits = [self.value(a, namespace, trail) for a in arg]
                    hit = next(filter(None, hits), None)
                else:
                    hit = self.value(arg, namespace, trail)
                if hit:
                    return hit
            return None
        if inspect.isclass(value) and value.__module__.startswith("sessionspec"):
            own = _namespace(value.__module__)
            if typing.is_typeddict(value):
                for key, annotation in value.__annotations__.items():
                    hit = self.value(annotation, own, f"{trail}.{key}")
                    if hit:
                        return hit
            elif getattr(value, "_is_protocol", False):
                for attr, member in vars(value).items():
                    if attr.startswith("_") and attr not in {"__call__", "__init__"}:
                        continue
                    for key, annotation in getattr(member, "__annotations__", {}).items():
                        hit = self.value(annotation, own, f"{trail}.{attr}({key})")
                        if hit:
                            return hit
                for key, annotation in vars(value).get("__annotations__", {}).items():
                    hit = self.value(annotation, own, f"{trail}.{key}")
                    if hit:
                        return hit
        return None


def scan(modules: Iterator[ModuleType] | list[ModuleType]) -> tuple[list[str], list[str]]:
    """(``module:function(parameter) -> how`` for every public annotation that reaches `Any`, unresolved names)."""
    found: list[str] = []
    walker = _Scan()
    for module in modules:
        for qualname, func in _functions(module):
            namespace = _namespace(getattr(func, "__module__", module.__name__))
            for param, annotation in getattr(func, "__annotations__", {}).items():
                walker.seen = set()
                where = f"{module.__name__}:{qualname}({param})"
                hit = walker.value(annotation, namespace, where)
                if hit:
                    found.append(hit)
    return sorted(found), sorted(walker.unresolved)


def test_no_any_in_public_signatures() -> None:
    found, unresolved = scan(list(_modules()))
    assert found == [], (f"{len(found)} public annotations reach Any (type them: JsonValue, JsonObject, a "
                         f"TypedDict, RevisionLike, a Protocol, `object` for a value checked inside): {found}")
    assert unresolved == [], f"annotation names the scan cannot look up: {unresolved}"


def untyped_modules(package: ModuleType) -> dict[str, list[str]]:
    """Every module of ``package`` (walked, not listed) whose own public signatures reach `Any` or name what the
    scan cannot look up, with what the scan found."""
    untyped: dict[str, list[str]] = {}
    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        found, unresolved = scan([module])
        if found or unresolved:
            untyped[info.name] = found + unresolved
    return untyped


def test_the_reference_modules_own_public_names_have_no_any() -> None:
    import sessionspec.reference

    assert untyped_modules(sessionspec.reference) == {}


def test_the_allow_list_is_gone() -> None:
    assert not Path(__file__).with_name("public_any.txt").exists()


_PROBE = '''
from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypedDict, TypeVar

if TYPE_CHECKING:
    from typing import Any as Hidden

__all__ = ["Fine", "Shape", "Watcher", "aliased", "callable_alias", "clean", "hidden", "kwargs", "nested", "plain",
           "returned", "shaped", "var", "watched"]

Row = Any
Lookup = Callable[[int], Mapping[str, Any]]
T = TypeVar("T", bound=Mapping[str, Any])


class Shape(TypedDict):
    name: str
    extra: dict[str, Any]


class Watcher:
    def watch(self, event: Mapping[str, object]) -> None: ...
    def __init__(self, **options: Any) -> None: ...


class Fine:
    def method(self, value: object) -> int: return 0


def plain(value: Any) -> None: ...
def nested(events: list[Mapping[str, Any]]) -> None: ...
def aliased(row: Row) -> None: ...
def callable_alias(lookup: Lookup) -> None: ...
def kwargs(**extra: Any) -> None: ...
def returned() -> dict[str, Any]: ...
def shaped(shape: Shape) -> None: ...
def var(value: T) -> T: ...
def hidden(value: Hidden) -> None: ...
def watched(watcher: Watcher) -> None: ...
def clean(value: object, count: int = 0) -> list[str]: ...
'''


def test_the_scan_finds_every_spelling_of_any(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The scan fails the spellings the issue names and passes a clean signature (so it cannot pass vacuously)."""
    package = tmp_path / "sessionspec_probe"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "probe.py").write_text(_PROBE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("sessionspec_probe.probe")
    found, unresolved = scan([module])
    assert unresolved == []
    hits = {entry.split(" ")[0] for entry in found}
    assert hits == {f"sessionspec_probe.probe:{name}" for name in (
        "plain(value)", "nested(events)", "aliased(row)", "callable_alias(lookup)", "kwargs(extra)",
        "returned(return)", "shaped(shape)", "var(value)", "var(return)", "hidden(value)", "Watcher.__init__(options)",
    )}, found


def test_a_module_added_to_the_package_is_held_to_the_rule(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The reference test walks its package: a module nobody named, added next to typed ones, is found with its
    `Any` (and one whose name the scan cannot resolve is found too); the typed ones are not."""
    package = tmp_path / "sessionspec_probe_package"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "typed.py").write_text(
        "from __future__ import annotations\n__all__ = ['fine']\n"
        "def fine(value: object) -> list[str]: return []\n", encoding="utf-8")
    (package / "added.py").write_text(
        "from __future__ import annotations\nfrom typing import Any\n__all__ = ['loose']\n"
        "def loose(event: dict[str, Any]) -> None: ...\n", encoding="utf-8")
    (package / "unknown.py").write_text(
        "from __future__ import annotations\n__all__ = ['vague']\n"
        "def vague(event: Missing) -> None: ...\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        found = untyped_modules(importlib.import_module("sessionspec_probe_package"))
    finally:  # (the probe's names stay out of the package namespace other scans look forward references up in)
        for name in [name for name in sys.modules if name.startswith("sessionspec_probe_package")]:
            del sys.modules[name]
    assert sorted(found) == ["added", "unknown"], found
    assert found["added"] == ["sessionspec_probe_package.added:loose(event) -> Any"], found
    assert [entry.split(": ")[-1] for entry in found["unknown"]] == ["Missing"], found
