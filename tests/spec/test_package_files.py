"""The package's own files read as plain files (#24): the same folder `importlib.resources` names, the same values
and errors as the loader's general walk, for every kind of number and string stdlib json reads."""

from __future__ import annotations

import json
import os
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from sessionspec.spec.errors import SessionSpecError
from sessionspec.spec.loader import Source
from sessionspec.spec.package_files import spec_root

FILES = {  # one case a file (what another JSON parser might read otherwise: integers past 64 bits, NaN, ...)
    "a.json": '{"z": 1, "a": [1.5, -0, -0.0, 1e5, 0.1, 5e-324, "\\u00e9"], "dup": 1, "dup": 2}',
    "deep/b.json": '{"n": NaN}',
    "deep/deeper/c.json": '{"big": 123456789012345678901234567890}',
    "deep/deeper/c2.json": '[9223372036854775807, 9223372036854775808, -9223372036854775809, 18446744073709551616]',
    "deep/deeper/c3.json": '{"huge": 1E400}',
    "deep/deeper/c4.json": '[-9223372036854775808, -9223372036854775809, -12345678901234567890123]',  # (alone: no u64 overflow)
    "deep/d.json": '"\\ud800 lone"',
    "deep/e.json": "  [ ]  \n",
    "notes.txt": "not read",
}


class _Folder:
    """A `Traversable` that is not a `pathlib.Path`: the loader's general walk (as for a zipped package)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.name = path.name

    def joinpath(self, *parts: str) -> _Folder:
        return _Folder(self.path.joinpath(*parts))

    def is_dir(self) -> bool:
        return self.path.is_dir()

    def iterdir(self) -> Any:
        return (_Folder(child) for child in self.path.iterdir())

    def read_text(self, encoding: str | None = None) -> str:
        return self.path.read_text(encoding=encoding)


def _tree(root: Path, files: dict[str, str | bytes]) -> Path:
    for rel, text in files.items():
        target = root / "schemas" / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    return root


def test_the_spec_folder_is_the_one_importlib_resources_names() -> None:
    assert spec_root() == Path(os.fspath(resources.files("sessionspec.spec")))
    assert isinstance(spec_root(), Path) and (spec_root() / "constants.json").is_file()


def test_package_files_read_as_the_general_walk_reads_them(tmp_path: Path) -> None:
    root = _tree(tmp_path, dict(FILES))
    plain = list(Source("core", root, trusted=True).json_files("schemas"))
    general = list(Source("core", _Folder(root), trusted=True).json_files("schemas"))  # type: ignore[arg-type]
    assert repr(plain) == repr(general)  # values, member order and float spelling alike
    values = {rel.removeprefix("schemas/"): value for rel, value in plain}
    assert list(values) == ["a.json", "deep/b.json", "deep/d.json", "deep/deeper/c.json", "deep/deeper/c2.json",
                            "deep/deeper/c3.json", "deep/deeper/c4.json", "deep/e.json"]
    assert values["a.json"] == json.loads(FILES["a.json"]) and list(values["a.json"]) == ["z", "a", "dup"]
    assert type(values["deep/deeper/c.json"]["big"]) is int and values["deep/deeper/c.json"]["big"] == 123456789012345678901234567890
    assert values["deep/deeper/c2.json"] == [2**63 - 1, 2**63, -(2**63) - 1, 2**64]
    assert all(type(v) is int for v in values["deep/deeper/c2.json"])
    assert values["deep/deeper/c4.json"] == [-(2**63), -(2**63) - 1, -12345678901234567890123]
    assert all(type(v) is int for v in values["deep/deeper/c4.json"])
    assert values["deep/deeper/c3.json"] == {"huge": float("inf")} and values["deep/d.json"] == "\ud800 lone"
    assert repr(values["a.json"]["a"]) == repr(json.loads(FILES["a.json"])["a"])


def test_a_symlinked_folder_is_not_entered(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"a.json": "{}"})
    (root / "schemas" / "loop").symlink_to(root / "schemas", target_is_directory=True)
    assert [rel for rel, _ in Source("core", root, trusted=True).json_files("schemas")] == ["schemas/a.json"]


@pytest.mark.parametrize("bad", [b'{"a": \xff}', b'{"a": ', b"\xef\xbb\xbf{}"])
def test_a_bad_package_file_fails_as_the_general_walk_fails(tmp_path: Path, bad: bytes) -> None:
    root = _tree(tmp_path, {"x.json": bad})
    errors = []
    for walked in (root, _Folder(root)):
        with pytest.raises(SessionSpecError) as caught:
            list(Source("core", walked, trusted=True).json_files("schemas"))  # type: ignore[arg-type]
        errors.append(caught.value.message)
    assert errors[0] == errors[1] and errors[0].startswith("core/schemas/x.json: ")


def test_every_package_file_reads_as_stdlib_json_reads_it() -> None:
    """The package's own files (read with orjson where it gives json's value): every value, type and member order
    as `json.loads` gives them."""
    source = Source("core", spec_root(), trusted=True)
    read = 0
    for sub in ("schemas", "events", "revisions", "protocol"):
        for rel, value in source.json_files(sub):
            assert repr(value) == repr(json.loads((spec_root() / rel).read_text(encoding="utf-8"))), rel
            read += 1
    assert read > 150
