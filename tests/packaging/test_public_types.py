"""Public signatures say what they take: no `Any` for a revision, and no new `Any` anywhere public (issue 26).

Scans every name in `sessionspec.reference.__all__` and in the `__all__` of each `sessionspec.validator` module:
functions, and the public methods of classes (with `__init__`), by their annotations' text. A parameter named
`revision` must be typed (`RevisionLike`). The other `Any` still in public signatures (JSON values, events
as `Mapping[str, Any]`) are listed in `public_any.txt` (where they were when it was written); their number may
only fall: a net new `Any` fails. When typing some, delete their lines (the test names the listed entries that
are gone, as a hint, without failing on them, so a rename elsewhere does not break it).
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from collections.abc import Iterator
from pathlib import Path

import sessionspec.validator

BASELINE = Path(__file__).with_name("public_any.txt")
_ANY = re.compile(r"\bAny\b")


def _modules() -> Iterator[object]:
    yield importlib.import_module("sessionspec.reference")
    for info in pkgutil.iter_modules(sessionspec.validator.__path__):
        module = importlib.import_module(f"sessionspec.validator.{info.name}")
        if hasattr(module, "__all__"):
            yield module


def _functions(module: object) -> Iterator[tuple[str, object]]:
    for name in getattr(module, "__all__", ()):
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


def public_any() -> set[str]:
    """``module:function(parameter)`` for every public annotation that mentions `Any`."""
    out = set()
    for module in _modules():
        for qualname, func in _functions(module):
            for param, annotation in getattr(func, "__annotations__", {}).items():
                text = annotation if isinstance(annotation, str) else repr(annotation)
                if _ANY.search(text):
                    out.add(f"{getattr(module, '__name__', '?')}:{qualname}({param})")
    return out


def test_no_revision_parameter_is_any() -> None:
    assert sorted(entry for entry in public_any() if entry.endswith("(revision)")) == []


def test_the_number_of_any_in_public_signatures_only_falls() -> None:
    listed = {line for line in BASELINE.read_text(encoding="utf-8").splitlines() if line and not line.startswith("#")}
    current = public_any()
    assert len(current) <= len(listed), (
        f"{len(current)} Any in public signatures, more than the {len(listed)} listed; new ones: "
        f"{sorted(current - listed)[:20]} (type them: JSON values, events, RevisionLike); "
        f"listed but gone (delete those lines): {sorted(listed - current)[:20]}")
