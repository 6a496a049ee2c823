"""The machine-readable dsh-session specification, loaded from package data.

`load_spec()` returns the default (core) specification; plugin registries are
added with `load_spec(extra_dirs=[...])`. Everything here is read from JSON
files shipped inside the package, so it works from an installed wheel.
"""

from __future__ import annotations

import functools
import json
from typing import Any, cast


def _read_json(name: str) -> Any:
    from sessionspec.spec.package_files import spec_root

    return json.loads(spec_root().joinpath(name).read_text(encoding="utf-8"))


@functools.cache
def constants() -> dict[str, Any]:
    """The raw JSON of `spec/constants.json`; code reads the typed `FORMAT` instead."""
    return cast("dict[str, Any]", _read_json("constants.json"))


from sessionspec.spec.format import FORMAT, FormatConstants, RowLayout  # noqa: E402  (typed, read once)

SURFACE_TYPES: frozenset[str] = FORMAT.surface_types

from sessionspec.spec.loader import (  # noqa: E402  (re-exported; the loader is its own module)
    ENTRY_POINT_GROUP,
    ENVELOPE_ID,
    REGISTRY_ERROR_CODE,
    SCHEMA_BASE,
    Spec,
    load_spec,
)

__all__ = [
    "ENTRY_POINT_GROUP",
    "ENVELOPE_ID",
    "FORMAT",
    "REGISTRY_ERROR_CODE",
    "SCHEMA_BASE",
    "SURFACE_TYPES",
    "FormatConstants",
    "RowLayout",
    "Spec",
    "constants",
    "load_spec",
]
