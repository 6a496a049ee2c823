"""Error codes are `ErrorCode`, the `Literal` generated from ``spec/errors.json`` (issue 26): a free string fails.

Two cheap checks. mypy (``--strict``, on a copy of the few modules the error types live in) refuses a code the
data does not list wherever one is given: to an error class, to a `Finding`, in a comparison with an error's
``code``, or as a plain ``str``. And every code literal in ``reference/`` and ``tools/`` (an upper snake case
string that names no Python object of the package) is a listed code, so a code mypy cannot see (one passed
through ``Any``) is still checked.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
from pathlib import Path

import pytest
from mypy import api as mypy_api  # (the test extra installs it: `.ci/typecheck`)
from sessionspec.spec.error_codes import ERROR_CODES
from sessionspec.spec.errors import SessionSpecError

ROOT = Path(__file__).resolve().parents[2]
CODE = re.compile(r"^[A-Z][A-Z0-9]*(_[A-Z0-9]+)+$")
#: the modules the probe imports, as the package lays them out (`.ci/typecheck` builds the same tree)
_MODULES = {"spec/errors.py": "spec", "spec/error_codes.py": "spec", "spec/schema_types.py": "spec",
            "reference/finding.py": "reference"}

_PROBE = '''
from sessionspec.reference.finding import Finding
from sessionspec.spec.errors import SeedError, SessionSpecError


def listed(error: SessionSpecError) -> bool:
    SeedError("bad seed", "SEED_NOT_JSON", requirement="SEED-2")
    Finding("SEED_NOT_JSON", "SEED-2", "bad seed")
    return error.code == "SEED_NOT_JSON"


def free(error: SessionSpecError, text: str) -> bool:
    SeedError("bad seed", "SEED_NOT_JASON", requirement="SEED-2")  # line 13
    Finding("NOT_A_CODE", None, "a finding")  # line 14
    SeedError("bad seed", text)  # line 15
    return error.code == "SEED_NOT_JASON"  # line 16
'''


def _mypy(tmp_path: Path, source: str, monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, str]]:
    tree = tmp_path / "sessionspec"
    for folder in ("spec", "reference"):
        (tree / folder).mkdir(parents=True)
        (tree / folder / "__init__.py").write_text("", encoding="utf-8")
    (tree / "__init__.py").write_text("", encoding="utf-8")
    for path, folder in _MODULES.items():
        shutil.copy(ROOT / path, tree / folder / Path(path).name)
    probe = tmp_path / "probe.py"
    probe.write_text(source, encoding="utf-8")
    (tmp_path / "mypy.ini").write_text("[mypy]\n", encoding="utf-8")  # (not the project's: its files are the tree's)
    monkeypatch.chdir(tmp_path)  # (mypy finds `sessionspec` beside the probe, not the installed package)
    out, err, _ = mypy_api.run(["--strict", "--no-incremental", "--cache-dir", os.devnull,
                                "--config-file", "mypy.ini", "--python-version", "3.11", "probe.py"])
    assert err == "", err
    found = []
    for line in out.splitlines():
        match = re.match(r"probe\.py:(\d+): error: (.*)", line)
        if match:
            found.append((int(match.group(1)), match.group(2)))
        else:
            assert line.startswith(("Found ", "Success")) or ": note:" in line, line
    return found


def test_mypy_refuses_a_code_errors_json_does_not_list(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    errors = _mypy(tmp_path, _PROBE, monkeypatch)
    assert sorted({line for line, _ in errors}) == [13, 14, 15, 16], errors
    assert all("ErrorCode" in text or "Literal[" in text or "overlapping" in text for _, text in errors), errors


def _package_names() -> set[str]:
    """Every name assigned or defined in the package's modules, and every `os` attribute: an upper snake case
    string naming one (a lazy import table's entry, ``getattr(os, "O_CLOEXEC")``) is no code."""
    names = set(dir(os))
    for path in (p for folder in ("reference", "tools", "spec", "conformance") for p in (ROOT / folder).rglob("*.py")
                 if "node_modules" not in p.parts):  # (the adapters' installed packages are not ours)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                names.add(node.name)
    return names


def _sources() -> list[Path]:
    return sorted(p for folder in ("reference", "tools") for p in (ROOT / folder).rglob("*.py")
                  if p.name != "core_fast.py")  # (generated from the schemas: no codes)


def code_literals(source: str, names: set[str]) -> list[tuple[int, str]]:
    """(line, text) of every upper snake case string constant of ``source`` that is no name in ``names``."""
    return [(node.lineno, node.value) for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and CODE.match(node.value)
            and node.value not in names]


def test_every_code_literal_in_reference_and_tools_is_listed() -> None:
    names = _package_names()
    literals = [(path.relative_to(ROOT), line, code) for path in _sources()
                for line, code in code_literals(path.read_text(encoding="utf-8"), names)]
    assert len(literals) > 150  # the codes the reference and the validator raise and report
    assert [entry for entry in literals if entry[2] not in ERROR_CODES] == []


def test_the_literal_scan_finds_an_unlisted_code() -> None:
    source = 'raise SeedError("bad", "SEED_NOT_JASON")\nNAME = "NAME"\ncheck(code="SEED_NOT_JSON")\n'
    assert code_literals(source, {"NAME"}) == [(1, "SEED_NOT_JASON"), (3, "SEED_NOT_JSON")]


def test_every_family_default_is_listed_and_a_family_without_one_needs_a_code() -> None:
    """A family's fallback code is a listed one; a family without one refuses an error without a code."""
    from sessionspec.spec import errors

    families = [cls for cls in vars(errors).values() if isinstance(cls, type) and issubclass(cls, SessionSpecError)]
    defaults = {cls.__name__: cls.default_code for cls in families if cls.default_code is not None}
    assert set(defaults.values()) <= ERROR_CODES
    assert "SeedError" not in defaults
    with pytest.raises(TypeError, match="SeedError needs a code"):
        errors.SeedError("a seed entry is rejected")
    assert errors.JsonlError("a torn line").code == "JSONL_CORRUPT"
    assert errors.SeedError("bad seed", "SEED_NOT_JSON").code == "SEED_NOT_JSON"


def test_an_error_pickles_as_it_was() -> None:
    """An error crosses a process boundary (``validate -j``, Dask) whole: a family without a default code too,
    and a subclass with its own arguments (made again from its state, not by calling it with its message)."""
    import pickle

    from sessionspec.reference import json_text
    from sessionspec.spec import errors
    from sessionspec.spec.revisions import UnknownRevision

    try:
        json_text.loads("{x")
    except errors.JsonTextError as raised:
        syntax: SessionSpecError = raised
    made = [errors.SeedError("bad seed", "SEED_NOT_JSON", requirement="SEED-2", index=3, seq=3),
            errors.SurfaceError("a gap", "SURFACE_NOT_CONTIGUOUS", path="/seq"), errors.JsonlError("torn"),
            UnknownRevision("nope"), syntax]
    for error in made:
        back = pickle.loads(pickle.dumps(error))
        assert type(back) is type(error)
        assert (back.args, back.__dict__, str(back)) == (error.args, error.__dict__, str(error))
