"""Start-up (issue 13): `sessionspec validate` of a JSONL log loads neither the store, the storage backends nor
their codecs, nor `importlib.resources` and what it imports (the package's files are plain paths) or OpenSSL (#24);
`sessionspec.storage` asks the reference's sniffing only for files that do not start like text.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from sessionspec.reference.sqlite_store import is_sqlite
from sessionspec.reference.zstd_frames import MAGIC, is_zstd
from sessionspec.storage import _TEXT_STARTS, SQLITE, ZSTD, _binary_form

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from gen_logs import artifact_bytes, generate_events

_PROBE = """
import sys
from sessionspec.cli import main
sys.argv[1:] = ["validate", "--level", "schema", "--quiet", sys.argv[1]]
try:
    main()
except SystemExit as exit:
    assert exit.code in (0, None), exit.code
heavy = ["sqlite3", "zstandard", "sessionspec.reference.store", "sessionspec.reference.sqlite_store",
         "sessionspec.reference.jsonl_zstd", "sessionspec.reference.zstd_frames", "sessionspec.reference.persistence",
         "importlib.resources", "tempfile", "zipfile", "_hashlib", "sessionspec.spec.regex_safety"]
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
