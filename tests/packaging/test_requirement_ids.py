"""Requirement ids in code name a requirement the spec has (issue 26, "facts once"; the twin of the code-literal check
in `test_error_code_type.py`).

A finding, an error or a rule table cites its requirement as a string (``requirement="SEED-3"``, a
`Finding`'s second field, a table row). Every such literal of the package (a string constant of the form
``FAMILY-N``) is an id of ``spec/requirements.json`` at some revision, or a decision's id (``DEC-N``): a renamed
or retired requirement cited by code fails here, not in a report that links to nothing.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from sessionspec.spec.loader import load_spec
from sessionspec.spec.revisions import known_revisions
from test_layers import MODULES

REQUIREMENT = re.compile(r"^[A-Z]{2,8}-[0-9]+$")


def _known() -> set[str]:
    ids: set[str] = set()
    for revision in known_revisions():
        spec = load_spec(revision=revision)
        ids |= set(spec.requirements) | set(spec.decisions)
    return ids


def cited(path: Path) -> list[tuple[str, int]]:
    """The requirement-id-shaped string constants of one source file, with line numbers."""
    return [(node.value, node.lineno) for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and REQUIREMENT.match(node.value)]


def test_every_requirement_id_in_code_is_the_specs() -> None:
    known = _known()
    unknown = [f"{path.relative_to(path.parents[1])}:{line}: {value}"
               for module, path in sorted(MODULES.items()) if module != "sessionspec.validator.core_fast"
               for value, line in cited(path) if value not in known]
    assert unknown == []


def test_the_scan_sees_ids_in_every_position(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text('f(requirement="SEED-3")\nFinding("X_Y", "JSONL-99", "m")\nROWS = {"HDR-8": 1}\nNOT = "UTF-8x"\n')
    assert sorted(cited(module)) == [("HDR-8", 3), ("JSONL-99", 2), ("SEED-3", 1)]
    assert "JSONL-99" not in _known() and "SEED-3" in _known()
