"""One output policy for every writing command and storage form (issue 25, issue 23 operators): a new path in
an existing writable folder, or a regular file with --force; links, devices, FIFOs and folders refused;
nothing left behind; a store repaired onto a full disk exits 2 naming the output."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from cli_helpers import cli
from hostile_limits import modes_can_bind, run_each, run_full_disk
from storage_fixtures import FORMS, crashed, one_turn, write_db, write_raw


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
    source = crashed(form, tmp_path)
    target, words = _target(kind, tmp_path)
    before = {p.name: (p.is_symlink(), p.is_file() and p.read_bytes()) for p in tmp_path.iterdir()}
    result = cli("repair", str(source), "-o", target, *(["--force"] if kind == "symlink" else []))
    assert result.code == 2 and words in result.err and "Traceback" not in result.err, result.err
    assert {p.name: (p.is_symlink(), p.is_file() and p.read_bytes()) for p in tmp_path.iterdir()} == before


@pytest.mark.parametrize("form", FORMS)
def test_force_replaces_an_existing_regular_file(form: str, tmp_path: Path) -> None:
    source = crashed(form, tmp_path)
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
    source = crashed("sqlite", tmp_path)
    target = tmp_path / "out.db"
    result = run_full_disk(["repair", str(source), "-o", str(target)], file_bytes=4096)
    assert result.returncode == 2, result.stderr
    assert f"cannot write {target}" in result.stderr and "Traceback" not in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == [source.name]


def test_a_folder_scan_reads_stores_and_says_what_it_skipped(tmp_path: Path) -> None:
    """issue 23 operators, issue 25 side inputs: `validate DIR` includes SQLite stores, never reads a symlink
    leading out of the folder, and says what it passed over."""
    root = tmp_path / "logs"
    root.mkdir()
    write_db(root / "store.db", [one_turn()])
    write_raw(root / "a.jsonl", [one_turn()])
    (root / "fake.db").write_bytes(b"not a database")
    (root / "notes.txt").write_bytes(b"x")
    secret = tmp_path / "secret.txt"
    secret.write_bytes(b"TOPSECRET\n")
    (root / "evil.jsonl").symlink_to(secret)
    result = cli("validate", "--format", "json", str(root))
    assert result.code == 0, result.out + result.err
    assert [f["file"] for f in result.json["files"]] == [str(root / "a.jsonl"), f"{root / 'store.db'}#s1"]
    assert "TOPSECRET" not in result.out + result.err
    assert f"skipped 1 symlink(s) leading out of the folder: {root / 'evil.jsonl'}" in result.err
    assert "skipped 2 file(s)" in result.err


@pytest.mark.parametrize("command", ["header", "stats", "derive", "validate"])
def test_session_on_a_single_session_form_is_an_error(command: str, tmp_path: Path) -> None:
    source = write_raw(tmp_path / "in.jsonl", [one_turn()])
    result = cli(command, "--session", "s1", str(source))
    assert result.code == 2 and "drop --session" in result.out + result.err, result.out + result.err


@pytest.mark.parametrize("kind", ["existing", "symlink", "folder", "fifo"])
def test_catalog_files_follow_the_policy(kind: str, tmp_path: Path) -> None:
    """`catalog --out DIR` writes files of its own naming into DIR, each under the one policy: a catalog's name
    held by a link, a folder or a FIFO is refused even with --force, an existing file without it; nothing is
    written (every name is checked before the first write)."""
    out = tmp_path / "cat"
    out.mkdir()
    name = out / "event-catalog.md"
    if kind == "existing":
        name.write_text("old\n")
    elif kind == "symlink":
        (tmp_path / "real.md").write_text("old\n")
        name.symlink_to(tmp_path / "real.md")
    elif kind == "folder":
        name.mkdir()
    else:
        os.mkfifo(name)
    result = cli("catalog", "--out", str(out), *(["--force"] if kind != "existing" else []))
    assert result.code == 2 and str(name) in result.err and "Traceback" not in result.err, result.err
    assert [p.name for p in out.iterdir()] == ["event-catalog.md"]
    if kind == "existing":
        assert cli("catalog", "--out", str(out), "--force").code == 0 and name.read_text() != "old\n"


def test_catalog_creates_its_folder_only_in_an_existing_one(tmp_path: Path) -> None:
    assert cli("catalog", "--out", str(tmp_path / "new")).code == 0
    result = cli("catalog", "--out", str(tmp_path / "sub" / "missing"))
    assert result.code == 2 and "does not exist" in result.err and not (tmp_path / "sub").exists()


@pytest.mark.parametrize("form", FORMS)
def test_repair_into_a_read_only_folder_names_the_output(form: str, tmp_path: Path) -> None:
    """A folder of mode 0555 owned by whoever runs the tests (root in CI): the child obeys mode bits
    (`hostile_limits.respect_modes`), and repair exits 2 naming OUT in every form, writing nothing."""
    why_not = modes_can_bind()
    if why_not:
        pytest.skip(why_not)
    source = crashed(form, tmp_path)
    readonly = tmp_path / "readonly"
    readonly.mkdir()
    readonly.chmod(0o555)
    target = readonly / "out"
    [result] = run_each([["repair", str(source), "-o", str(target)]], modes_bind=True)
    assert result["code"] == 2 and str(target) in result["err"] and "not writable" in result["err"], result
    assert not list(readonly.iterdir())


@pytest.mark.parametrize("command", ["pack", "unpack"])
@pytest.mark.parametrize("form", FORMS)
def test_pack_and_unpack_write_the_form_outs_name_says(command: str, form: str, tmp_path: Path) -> None:
    """One output-form policy (issue 25): OUT holds what its name says. `pack X -o Y.jsonl.zstd` wrote raw JSONL
    into a file named .zstd; now it writes the zstd-framed form (a header frame, then one frame of records) that
    every reader takes for the same log as the raw output, from every input form."""
    from sessionspec.reference.jsonl import read_artifact
    from sessionspec.reference.jsonl_zstd import read_compressed_artifact
    from sessionspec.reference.zstd_frames import is_zstd, scan_frames

    source = crashed(form, tmp_path)
    raw, packed = tmp_path / "out.jsonl", tmp_path / "out.jsonl.zstd"
    assert cli(command, str(source), "-o", str(raw)).code == 0
    result = cli(command, str(source), "-o", str(packed))
    assert result.code == 0 and "zstd-framed" in result.out, result.err
    data = packed.read_bytes()
    assert is_zstd(data[:4]) and len(scan_frames(data).frames) == 2
    assert read_compressed_artifact(data).events == read_artifact(raw.read_bytes()).events
    assert cli("validate", "--level", "load", str(packed)).code == 0
    plain = tmp_path / "plain"  # a name that says no form: raw JSONL, as before
    assert cli(command, str(source), "-o", str(plain)).code == 0 and plain.read_bytes() == raw.read_bytes()


@pytest.mark.parametrize("command", ["pack", "unpack"])
def test_pack_and_unpack_refuse_a_store_name(command: str, tmp_path: Path) -> None:
    source = write_raw(tmp_path / "in.jsonl", [one_turn()])
    result = cli(command, str(source), "-o", str(tmp_path / "out.db"))
    assert result.code == 2 and "named for a SQLite store" in result.err and "Traceback" not in result.err
    assert not (tmp_path / "out.db").exists()


@pytest.mark.parametrize(("form", "name"), [("jsonl", "out.jsonl.zstd"), ("jsonl", "out.db"), ("zstd", "out.jsonl"),
                                            ("zstd", "out.db"), ("sqlite", "out.jsonl"), ("sqlite", "out.jsonl.zstd")])
def test_repair_refuses_an_out_named_for_another_form(form: str, name: str, tmp_path: Path) -> None:
    """Repair keeps FILE's form, so an OUT named for another one is refused before any work (exit 2, naming both);
    a name of FILE's form, or of none, is written in FILE's form."""
    source = crashed(form, tmp_path)
    result = cli("repair", str(source), "-o", str(tmp_path / name))
    assert result.code == 2 and "repair keeps the storage form" in result.err and name in result.err, result.err
    assert not (tmp_path / name).exists()
    same = {"jsonl": "ok.jsonl", "zstd": "ok.jsonl.zstd", "sqlite": "ok.db"}[form]
    for target in (same, "ok.out"):
        assert cli("repair", str(source), "-o", str(tmp_path / target)).code == 0
        assert cli("validate", "--level", "load", str(tmp_path / target)).code == 0
