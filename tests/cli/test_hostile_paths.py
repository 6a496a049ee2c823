"""Hostile paths: outputs onto special files, failing disks and empty names; inputs that never end,
never arrive, loop or cannot be listed. Each is a clean, located error (exit 2); nothing is replaced."""

from __future__ import annotations

import errno
import os
import socket
import stat
import subprocess
import sys
import threading

import pytest
from cli_helpers import cli, jsonl, turn_events
from sessionspec.reference import atomic
from sessionspec.reference.atomic import OutputError, write_atomic
from sessionspec.spec import inputs

WRITERS = [("repair",), ("pack",), ("unpack",)]


@pytest.fixture
def log(tmp_path):
    path = tmp_path / "in.jsonl"
    path.write_bytes(jsonl(turn_events()))
    return path


@pytest.mark.parametrize("command", WRITERS)
def test_an_existing_fifo_or_folder_as_output_is_refused_and_kept(tmp_path, log, command):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    folder = tmp_path / "folder"
    folder.mkdir()
    for target, kind in ((fifo, "FIFO"), (folder, "directory")):
        result = cli(*command, str(log), "-o", str(target))
        assert result.code == 2 and "refusing to write" in result.err and kind in result.err, result.err
        assert "Traceback" not in result.err
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and folder.is_dir() and not any(folder.iterdir())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["folder", "in.jsonl", "pipe"]  # no temp file left


def test_a_character_device_is_never_replaced(log):
    before = os.stat("/dev/null")
    result = cli("pack", str(log), "-o", "/dev/null")
    assert result.code == 2 and "character device" in result.err
    after = os.stat("/dev/null")
    assert stat.S_ISCHR(after.st_mode) and after.st_ino == before.st_ino


def test_dash_writes_the_log_to_stdout_and_the_summary_to_stderr(log):
    result = cli("unpack", str(log), "-o", "-")
    assert result.code == 0 and result.out.encode() == log.read_bytes()
    assert result.err.startswith("wrote <stdout>: 12 events")


def test_a_symlinked_output_is_refused_even_with_force(tmp_path, log):
    real = tmp_path / "real.jsonl"
    real.write_bytes(b"old\n")
    link = tmp_path / "link.jsonl"
    link.symlink_to(real)
    result = cli("unpack", str(log), "-o", str(link), "--force")
    assert result.code == 2 and "symbolic link" in result.err
    assert link.is_symlink() and real.read_bytes() == b"old\n"


@pytest.mark.parametrize("target", ["", "/proc/self/status", "/proc/sessionspec-nope/x.jsonl", "{log}/below-a-file.jsonl"])
def test_unwritable_outputs_are_clean_errors(log, target):
    result = cli("pack", str(log), "-o", target.format(log=log))
    assert result.code == 2 and result.err.startswith("sessionspec pack: error: ") and "Traceback" not in result.err


def test_a_full_disk_leaves_the_target_and_no_temp_file(tmp_path, monkeypatch, log):
    target = tmp_path / "out.jsonl"
    target.write_bytes(b"previous\n")

    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(atomic.os, "fsync", full)
    result = cli("pack", str(log), "-o", str(target), "--force")
    assert result.code == 2 and "No space left on device" in result.err
    assert target.read_bytes() == b"previous\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl", "out.jsonl"]


def test_write_atomic_refuses_a_socket(tmp_path):
    path = tmp_path / "sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    try:
        with pytest.raises(OutputError, match="socket"):
            write_atomic(path, b"x")
    finally:
        server.close()


def test_catalog_into_a_file_or_onto_special_files_is_an_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    result = cli("catalog", "--out", str(blocker))
    assert result.code == 2 and "cannot write" in result.err and blocker.read_text() == "x"


# -- inputs --------------------------------------------------------------------------------------


def test_devices_are_refused_without_reading(tmp_path):
    for device in ("/dev/zero", "/dev/urandom"):
        for command in (["validate"], ["stats"], ["pack", "-o", str(tmp_path / "o.jsonl")]):
            result = cli(*command, device)
            assert result.code == 2 and "device" in result.out + result.err, (command, device)


def test_stdin_and_files_are_read_up_to_the_limit(tmp_path, monkeypatch):
    monkeypatch.setattr(inputs, "MAX_INPUT_BYTES", 1000)
    with open("/dev/zero", "rb") as zero:
        monkeypatch.setattr(sys, "stdin", zero)
        result = cli("validate", "-")
    assert result.code == 2 and "<stdin>: larger than the input limit of 1000 bytes" in result.out
    big = tmp_path / "big.jsonl"
    big.write_bytes(b"x" * 5000)
    result = cli("stats", str(big))
    assert result.code == 2 and "input limit of 1000 bytes" in result.err


def test_a_fifo_without_writer_is_reported_and_one_with_a_writer_is_read(tmp_path, monkeypatch):
    monkeypatch.setattr(inputs, "FIFO_WAIT", 0.2)
    fifo = tmp_path / "log.jsonl"
    os.mkfifo(fifo)
    result = cli("validate", str(fifo))
    assert result.code == 2 and "FIFO with no writer" in result.out
    payload = jsonl(turn_events())

    def feed():
        with open(fifo, "wb") as handle:
            handle.write(payload)

    monkeypatch.setattr(inputs, "FIFO_WAIT", 10.0)
    writer = threading.Thread(target=feed)
    writer.start()
    result = cli("validate", str(fifo))
    writer.join(10)
    assert result.code == 0, result.out


def test_directory_scans_do_not_follow_symlink_loops_or_repeat_files(tmp_path):
    root = tmp_path / "logs"
    root.mkdir()
    (root / "a.jsonl").write_bytes(jsonl(turn_events()))
    (root / "loop1").symlink_to(root)
    (root / "loop2").symlink_to(".")
    (root / "same.jsonl").symlink_to(root / "a.jsonl")
    result = cli("validate", "--format", "json", str(root))
    assert result.code == 0 and [f["file"] for f in result.json["files"]] == [str(root / "a.jsonl")]


def test_an_unlistable_directory_is_reported_as_unreadable_not_missing(tmp_path, monkeypatch):
    root = tmp_path / "logs"
    (root / "sub").mkdir(parents=True)
    (root / "a.jsonl").write_bytes(jsonl(turn_events()))
    real_scandir = os.scandir

    def deny(path="."):
        if os.fspath(path).endswith("sub"):
            raise PermissionError(errno.EACCES, "Permission denied", os.fspath(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", deny)  # root lists chmod-000 folders, so deny it here
    result = cli("validate", "--format", "json", str(root))
    assert result.code == 2 and any("sub: cannot read the directory: Permission denied" in p
                                    for p in result.json["inputErrors"])

    def stat_denied(path, *args, **kwargs):
        raise PermissionError(errno.EACCES, "Permission denied", os.fspath(path))

    monkeypatch.setattr(os, "stat", stat_denied)
    result = cli("validate", "--format", "json", str(root / "hidden"))
    assert "cannot read: Permission denied" in result.json["inputErrors"][0]


def test_closed_standard_streams_are_not_a_traceback(log):
    for command in (["validate", "-"], ["stats", "-"], ["header", "-"], ["derive", "-"]):
        proc = subprocess.run([sys.executable, "-c", "from sessionspec.cli import main; main()", *command],
                              stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60,
                              preexec_fn=lambda: os.close(0))
        assert proc.returncode == 2 and "standard input is closed" in proc.stdout + proc.stderr, proc.stderr
        assert "Traceback" not in proc.stderr
    proc = subprocess.run([sys.executable, "-c", "from sessionspec.cli import main; main()", "validate", str(log)],
                          stderr=subprocess.PIPE, text=True, timeout=60, preexec_fn=lambda: os.close(1))
    assert proc.returncode == 0 and "Traceback" not in proc.stderr
