"""The reference package imports its modules on first use (PEP 562 ``__getattr__``, issue 13: start-up) and
keeps one public surface: every name of ``__all__`` resolves to the object its home module defines, and the
three places that list the names (the ``TYPE_CHECKING`` imports that type checkers read, ``__all__`` and the
run-time ``_HOMES`` table) agree.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import sessionspec.reference as reference

INIT = Path(reference.__file__)


def _type_checking_imports() -> dict[str, set[str]]:
    """Module -> names, as imported under ``if TYPE_CHECKING:`` in the package's ``__init__``."""
    tree = ast.parse(INIT.read_text(encoding="utf-8"))
    block = next(node for node in tree.body if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING")
    found: dict[str, set[str]] = {}
    for node in block.body:
        assert isinstance(node, ast.ImportFrom)
        found.setdefault("." * node.level + (node.module or ""), set()).update(a.name for a in node.names)
    return found


def test_the_names_are_listed_alike_in_all_three_places() -> None:
    homes = {module: set(names) for module, names in reference._HOMES.items()}
    assert homes == _type_checking_imports()
    assert set(reference.__all__) == {name for names in homes.values() for name in names}
    assert len(reference.__all__) == len(set(reference.__all__))


def test_every_public_name_is_its_home_modules_object() -> None:
    for module, names in reference._HOMES.items():
        home = importlib.import_module(module, "sessionspec.reference")
        for name in names:
            assert getattr(reference, name) is getattr(home, name), name
    assert set(reference.__all__) <= set(dir(reference))
    assert hasattr(reference, "json_text")  # submodules stay importable by attribute and `from ... import`
    try:
        reference.no_such_name  # noqa: B018
    except AttributeError as error:
        assert "no_such_name" in str(error)
    else:
        raise AssertionError("an unknown name must raise AttributeError")
