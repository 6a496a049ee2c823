"""Every file the tools read besides a log goes through the bounded reader (`sessionspec.spec.inputs`):
an expectation file, a trace, a report, a vector directory and a plugin registry that is /dev/zero, a
FIFO with no writer, a file over the size limit or not UTF-8 is a clean error (exit 2, a message
naming the file), never a hang, a memory blow-up or a traceback."""

from __future__ import annotations

import os
import shutil
import stat
import time
from pathlib import Path

import pytest
from cli_helpers import cli, jsonl, turn_events
from sessionspec.spec import inputs

HOSTILE = ("zero", "fifo", "huge", "not-utf8")


def _hostile(kind: str, path: Path) -> None:
    """Make ``path`` the hostile file ``kind``."""
    if kind == "zero":
        path.symlink_to("/dev/zero")
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "huge":
        path.write_bytes(b" " * 5000 + b"{}")  # over the limit the test sets (1000 bytes)
    else:
        path.write_bytes(b'{"kind": "trace", "x": "\xff\xfe"}\n')


def _registry(root: Path, kind: str) -> Path:
    (root / "reg" / "events").mkdir(parents=True)
    (root / "reg" / "schemas").mkdir()
    _hostile(kind, root / "reg" / "events" / "bad.json")
    return root / "reg"


def _vectors(root: Path, kind: str) -> Path:
    (root / "vec").mkdir()
    _hostile(kind, root / "vec" / "bad.json")
    return root / "vec"


def _file(root: Path, kind: str) -> Path:
    _hostile(kind, root / "side.jsonl")
    return root / "side.jsonl"


COMMANDS = {
    "replay": lambda t, k: ["replay", str(_file(t, k))],
    "conformance --expect": lambda t, k: ["conformance", "--expect", str(_file(t, k)), "--only", "json"],
    "conformance --vectors": lambda t, k: ["conformance", "--vectors", str(_vectors(t, k))],
    "report": lambda t, k: ["report", str(_file(t, k)), "--html", str(t / "page.html")],
    "catalog --registry": lambda t, k: ["catalog", "--registry", str(_registry(t, k)), "--out", str(t / "cat")],
    "validate --registry": lambda t, k: ["validate", "--registry", str(_registry(t, k)), str(t / "log.jsonl")],
}


@pytest.mark.parametrize("kind", HOSTILE)
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_hostile_side_inputs_are_clean_errors(tmp_path, monkeypatch, command, kind):
    monkeypatch.setattr(inputs, "MAX_INPUT_BYTES", 1000)
    monkeypatch.setattr(inputs, "FIFO_WAIT", 0.05)
    (tmp_path / "log.jsonl").write_bytes(jsonl(turn_events()))
    argv = COMMANDS[command](tmp_path, kind)
    started = time.monotonic()
    result = cli(*argv)
    assert time.monotonic() - started < 30
    assert result.code == 2, (argv, result.out, result.err)
    message = result.err + result.out
    assert "Traceback" not in message
    assert "bad.json" in message or "side.jsonl" in message, message
    assert {"zero": "device", "fifo": "FIFO", "huge": "input limit", "not-utf8": "not UTF-8"}[kind] in message, message
    assert not (tmp_path / "page.html").exists() and not (tmp_path / "cat").exists()


def test_a_symlinked_folder_in_a_registry_is_not_entered(tmp_path):
    """A registry folder linking to itself (a loop) is listed once, not walked for ever."""
    registry = tmp_path / "reg"
    shutil.copytree(Path(__file__).resolve().parents[1] / "spec" / "plugin_registry", registry)
    (registry / "events" / "loop").symlink_to(registry / "events")
    result = cli("catalog", "--registry", str(registry), "--out", str(tmp_path / "cat"))
    assert result.code == 0, result.err


def test_catalog_check_does_not_wait_on_a_fifo_in_place_of_a_catalog(tmp_path, monkeypatch):
    monkeypatch.setattr(inputs, "FIFO_WAIT", 0.05)
    target = tmp_path / "cat"
    assert cli("catalog", "--out", str(target)).code == 0
    first = min(target.iterdir())
    first.unlink()
    os.mkfifo(first)
    started = time.monotonic()
    result = cli("catalog", "--out", str(target), "--check")
    assert result.code == 1 and first.name in result.err and time.monotonic() - started < 30
    assert stat.S_ISFIFO(first.lstat().st_mode)  # --check writes nothing
