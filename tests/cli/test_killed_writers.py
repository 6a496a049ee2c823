"""A writing command killed mid-write (issue 25): SIGTERM runs every exit path, so no temp file is left and
the target is as it was or complete; `kill -9` runs none, so a temp file named for sessionspec, its target and its pid
may stay, but the target is still old or new, never half-written, in every storage form, and the next write to
that target removes it (`reference.atomic.remove_stale_temps`)."""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from storage_fixtures import FORMS, crashed

#: seconds after start at which the writer is killed: at start-up, while reading, around the write
DELAYS = (0.3, 0.8, 1.4)


def _repair(source: Path, target: Path, signum: int, delay: float | None) -> int:
    """Repair SOURCE into TARGET in a child; ``delay`` seconds later, send ``signum`` (None: let it finish)."""
    proc = subprocess.Popen([sys.executable, "-c", "from sessionspec.cli import main; main()", "repair", str(source),
                             "-o", str(target), "--force"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if delay is None:
        return proc.wait(timeout=60)
    time.sleep(delay)
    proc.send_signal(signum)
    return proc.wait(timeout=60)


def _valid(path: Path) -> bool:
    from cli_helpers import cli

    return cli("validate", "--level", "load", str(path)).code == 0


@pytest.mark.parametrize("form", FORMS)
def test_sigterm_leaves_no_temp_and_the_target_old_or_new(form: str, tmp_path: Path) -> None:
    source = crashed(form, tmp_path, turns=300)
    target = tmp_path / f"out{source.suffix}"
    old = b"old\n"
    for delay in DELAYS:
        target.write_bytes(old)
        code = _repair(source, target, signal.SIGTERM, delay)
        # (-SIGTERM: it came before the handler was set, at start-up, or after Python reset it at shutdown, when
        # the replace is done; a signal after the replace but before exit leaves the new target with 128 + 15)
        assert code in (0, 128 + signal.SIGTERM, -signal.SIGTERM), code
        assert sorted(p.name for p in tmp_path.iterdir()) == sorted([source.name, target.name]), delay
        assert (code != 0 and target.read_bytes() == old) or _valid(target), (delay, code)


@pytest.mark.parametrize("form", FORMS)
def test_kill_9_leaves_the_target_old_or_new_and_names_its_temp(form: str, tmp_path: Path) -> None:
    source = crashed(form, tmp_path, turns=300)
    target = tmp_path / f"out{source.suffix}"
    old = b"old\n"
    for delay in DELAYS:
        target.write_bytes(old)
        _repair(source, target, signal.SIGKILL, delay)
        assert target.read_bytes() == old or _valid(target), delay
        for stray in set(os.listdir(tmp_path)) - {source.name, target.name}:
            assert stray.startswith(f".{target.name}.sessionspec-tmp."), stray  # says whose and for what
    # the next write to the target removes what the killed writers left for it
    assert _repair(source, target, signal.SIGKILL, None) == 0
    assert sorted(os.listdir(tmp_path)) == sorted([source.name, target.name])


def _dead_pid() -> int:
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


@pytest.mark.parametrize("form", FORMS)
def test_the_next_write_removes_a_killed_writers_temps_and_only_those(form: str, tmp_path: Path) -> None:
    """Stale: a regular file of ours named for this target, its pid not running, its lock free (with a SQLite
    temp's journal). Everything else stays: a living writer's temp, a temp whose lock is held (a writer in
    another pid namespace), another target's, a name without a pid, a symlink, a file of another user."""
    source = crashed(form, tmp_path, turns=3)
    target = tmp_path / f"out{source.suffix}"
    dead, prefix = _dead_pid(), f".{target.name}.sessionspec-tmp."
    stale = [f"{prefix}{dead}.a1b2c3d4.tmp", f"{prefix}{dead}.e5f6g7h8.db", f"{prefix}{dead}.e5f6g7h8.db-journal",
             f"{prefix}{dead}.gone_123.db-wal"]
    kept = [f"{prefix}{os.getpid()}.livewrit.tmp", f"{prefix}{dead}.lockheld.tmp", f".other.jsonl.sessionspec-tmp.{dead}.a1b2c3d4.tmp",
            f"{prefix}a1b2c3d4.tmp", f"{prefix}{dead}.a1b2c3d4.tmp.bak"]
    for name in stale + kept:
        (tmp_path / name).write_bytes(b"partial")
    (tmp_path / "elsewhere").write_bytes(b"not ours")
    (tmp_path / f"{prefix}{dead}.symlink1.tmp").symlink_to(tmp_path / "elsewhere")
    kept += [f"{prefix}{dead}.symlink1.tmp", "elsewhere"]
    if os.geteuid() == 0:  # a file of that name another user owns
        (tmp_path / f"{prefix}{dead}.otheruid.tmp").write_bytes(b"theirs")
        os.chown(tmp_path / f"{prefix}{dead}.otheruid.tmp", 65534, 65534)
        kept.append(f"{prefix}{dead}.otheruid.tmp")
    held = os.open(tmp_path / f"{prefix}{dead}.lockheld.tmp", os.O_RDONLY)
    try:
        fcntl.flock(held, fcntl.LOCK_EX)
        assert _repair(source, target, signal.SIGKILL, None) == 0
    finally:
        os.close(held)
    assert sorted(os.listdir(tmp_path)) == sorted([source.name, target.name, *kept])
    assert _valid(target)
