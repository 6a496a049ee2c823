"""One output policy for every writing command and storage form (issue 25, issue 23 operators): a new path in
an existing writable folder, or a regular file with --force; links, devices, FIFOs and folders refused;
nothing left behind; a store repaired onto a full disk exits 2 naming the output."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from cli_helpers import cli
from hostile_limits import run_full_disk
from sessionspec.reference.jsonl_zstd import write_compressed_artifact
from storage_fixtures import HEADER, one_turn, open_turn, write_db, write_raw

FORMS = ("jsonl", "zstd", "sqlite")


def _crashed(form: str, folder: Path) -> Path:
    events = [*one_turn(), *open_turn(6)]
    if form == "sqlite":
        return write_db(folder / "in.db", [events])
    if form == "zstd":
        path = folder / "in.jsonl.zstd"
        write_compressed_artifact(path, HEADER, events)
        return path
    return write_raw(folder / "in.jsonl", [events])


def _target(kind: str, folder: Path) -> tuple[str, str]:
    """A target of ``kind`` and the words its refusal holds."""
    if kind == "existing":
        (folder / "old.out").write_bytes(b"old\n")
        return str(folder / "old.out"), "--force"
    if kind == "symlink":
        (folder / "real.out").write_bytes(b"old\n")
        (folder / "link.out").symlink_to(folder / "real.out")
        return str(folder / "link.out"), "symbolic link"
    if kind == "folder":
        (folder / "adir").mkdir()
        return str(folder / "adir"), "directory"
    if kind == "fifo":
        os.mkfifo(folder / "fifo")
        return str(folder / "fifo"), "FIFO"
    if kind == "device":
        return "/dev/null", "character device"
    if kind == "missing-folder":
        return str(folder / "sub" / "missing" / "out"), "does not exist"
    assert kind == "empty"
    return "", "empty"


@pytest.mark.parametrize("kind", ["existing", "symlink", "folder", "fifo", "device", "missing-folder", "empty"])
@pytest.mark.parametrize("form", FORMS)
def test_repair_refuses_the_same_targets_in_every_form(form: str, kind: str, tmp_path: Path) -> None:
    source = _crashed(form, tmp_path)
    target, words = _target(kind, tmp_path)
    before = {p.name: (p.is_symlink(), p.is_file() and p.read_bytes()) for p in tmp_path.iterdir()}
    result = cli("repair", str(source), "-o", target, *(["--force"] if kind == "symlink" else []))
    assert result.code == 2 and words in result.err and "Traceback" not in result.err, result.err
    assert {p.name: (p.is_symlink(), p.is_file() and p.read_bytes()) for p in tmp_path.iterdir()} == before


@pytest.mark.parametrize("form", FORMS)
def test_force_replaces_an_existing_regular_file(form: str, tmp_path: Path) -> None:
    source = _crashed(form, tmp_path)
    target = tmp_path / "old.out"
    target.write_bytes(b"old\n")
    result = cli("repair", str(source), "-o", str(target), "--force")
    assert result.code == 0, result.err
    assert target.read_bytes() != b"old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([source.name, "old.out"])


@pytest.mark.parametrize("command", ["pack", "unpack"])
def test_rewriting_commands_share_the_policy(command: str, tmp_path: Path) -> None:
    source = write_raw(tmp_path / "in.jsonl", [one_turn()])
    target, words = _target("existing", tmp_path)
    result = cli(command, str(source), "-o", target)
    assert result.code == 2 and words in result.err
    assert cli(command, str(source), "-o", target, "--force").code == 0


def test_store_repair_on_a_full_disk_names_the_output_and_leaves_nothing(tmp_path: Path) -> None:
    source = _crashed("sqlite", tmp_path)
    target = tmp_path / "out.db"
    result = run_full_disk(["repair", str(source), "-o", str(target)], file_bytes=4096)
    assert result.returncode == 2, result.stderr
    assert f"cannot write {target}" in result.stderr and "Traceback" not in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == [source.name]
