"""Reading the shipped spec files the way an installed wheel would (package data)."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any


def load_spec_json(*parts: str) -> Any:
    """Parse ``spec/<parts...>`` through importlib.resources, so the test also proves it ships."""
    node = resources.files("sessionspec.spec")
    for part in parts:
        node = node.joinpath(part)
    return json.loads(node.read_text(encoding="utf-8"))
