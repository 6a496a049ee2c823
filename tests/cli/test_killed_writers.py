"""A writing command killed mid-write (issue 25): SIGTERM runs every exit path, so no temp file is left and
the target is as it was or complete; `kill -9` runs none, so a temp file named for sessionspec and its target
may stay, but the target is still old or new, never half-written, in every storage form."""

from __future__ import annotations

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


def _repair(source: Path, target: Path, signum: int, delay: float) -> int:
    proc = subprocess.Popen([sys.executable, "-c", "from sessionspec.cli import main; main()", "repair", str(source),
                             "-o", str(target), "--force"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
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
            os.unlink(tmp_path / stray)
