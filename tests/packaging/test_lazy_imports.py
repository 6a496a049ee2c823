"""Start-up: the reference package imports its modules on first use, and `sessionspec validate` of a JSONL log
loads neither the store, the storage backends nor their codecs (issue 13: whole-process validate).

The package keeps one public surface: every name of ``__all__`` resolves to the object its home module
defines, and the three places that list the names (the ``TYPE_CHECKING`` imports that type checkers read,
``__all__`` and the run-time ``_HOMES`` table) agree.
"""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import sessionspec.reference as reference
from sessionspec.reference.sqlite_store import is_sqlite
from sessionspec.reference.zstd_frames import MAGIC, is_zstd
from sessionspec.storage import _TEXT_STARTS, SQLITE, ZSTD, _binary_form

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from gen_logs import artifact_bytes, generate_events

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


_PROBE = """
import sys
from sessionspec.cli import main
sys.argv[1:] = ["validate", "--level", "schema", "--quiet", sys.argv[1]]
try:
    main()
except SystemExit as exit:
    assert exit.code in (0, None), exit.code
heavy = ["sqlite3", "zstandard", "sessionspec.reference.store", "sessionspec.reference.sqlite_store",
         "sessionspec.reference.jsonl_zstd", "sessionspec.reference.zstd_frames", "sessionspec.reference.persistence"]
print(" ".join(m for m in heavy if m in sys.modules))
"""


def test_validating_a_jsonl_log_loads_no_store_backend_or_codec(tmp_path: Path) -> None:
    log = tmp_path / "one.jsonl"
    log.write_bytes(artifact_bytes(generate_events(300, seed=1), packed=False, session_id="s1"))
    done = subprocess.run([sys.executable, "-c", _PROBE, str(log)], capture_output=True, text=True, check=True)
    assert done.stdout.split() == []


def test_no_binary_form_starts_like_jsonl_text() -> None:
    """`sessionspec.storage` asks the reference's sniffing only for prefixes that do not start like text."""
    for magic in (MAGIC, b"SQLite format 3\x00"):
        assert magic[0] not in _TEXT_STARTS
    assert is_zstd(MAGIC) and _binary_form(MAGIC + b"\x00" * 12) == ZSTD
    assert is_sqlite(b"SQLite format 3\x00") and _binary_form(b"SQLite format 3\x00") == SQLITE
    for text in (b'{"type":"session"}', b"[", b" {", b"\n", b""):
        assert _binary_form(text) is None
