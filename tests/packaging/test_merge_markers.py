"""No tracked text file holds a merge-conflict marker: a conflict resolved by hand that left one in CHANGELOG.md or a
doc passes every other check."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MARKER = re.compile(rb"^(<{7} |>{7} |={7}$)", re.MULTILINE)


@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(), reason="needs the git checkout")
def test_no_tracked_file_holds_a_conflict_marker() -> None:
    listed = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True, check=True).stdout
    marked = []
    for rel in filter(None, listed.decode("utf-8").split("\0")):
        path = ROOT / rel
        if "node_modules" in rel or not path.is_file() or path.is_symlink() or path.stat().st_size > 4 << 20:
            continue
        data = path.read_bytes()
        if b"\0" not in data[:8192] and MARKER.search(data):
            marked.append(rel)
    assert marked == []


def test_the_marker_pattern_finds_a_marker() -> None:
    assert MARKER.search(b"text\n<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> abc\n")
    assert not MARKER.search(b"a heading\n=========\n")
