"""A writing command killed mid-write (issue 25): SIGTERM runs every exit path, so no temp file is left and
the target is as it was or complete; `kill -9` runs none, so a temp file named for sessionspec, its target and its pid
may stay, but the target is still old or new, never half-written, in every storage form, and the next write to
that target removes it (`reference.atomic.remove_stale_temps`). `kill_plan` and `kill_once` kill a repair to OUT or
in place at chosen points and judge what it left; `hostile_campaign.py`'s kill group runs them at more points."""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from storage_fixtures import FORMS, crashed

#: seconds after start at which the writer is killed: at start-up, while reading, around the write
DELAYS = (0.3, 0.8, 1.4)


def _repair(source: Path, target: Path, signum: int, delay: float | None) -> int:
    """Repair SOURCE into TARGET in a child; ``delay`` seconds later, send ``signum`` (None: let it finish). (A
    signal that runs no exit path, `kill -9`, is `kill_once`'s: it judges the target and the next repair.)"""
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


# -- kill -9 at chosen points of a repair, in every form, to OUT and in place -------------------------------------

MODES = ("output", "in-place")
#: where a kill lands: a fraction of an unkilled repair's wall time (start-up, reading, writing, the rename), or
#: "temp" (as soon as a new file appears beside the target: its temp file, or a store's rollback journal) and
#: "temp+S" (S seconds after that: while it is written, synced, renamed, or just after)
KILL_POINTS: tuple[float | str, ...] = (0.4, 0.9, "temp", "temp+0.02")
_REPAIR = [sys.executable, "-c", "from sessionspec.cli import main; main()", "repair"]


def store_rows(path: Path, scratch: Path) -> list[tuple[str, list[str]]]:
    """A store's rows, table by table, as a reader sees them: on a copy, with its hot journal (if a killed writer
    left one) rolled back there by SQLite, never in place."""
    scratch.mkdir(parents=True, exist_ok=True)
    copy = scratch / "copy.db"
    for suffix in ("", "-journal", "-wal"):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(f"{copy}{suffix}")
        if os.path.exists(f"{path}{suffix}"):
            shutil.copyfile(f"{path}{suffix}", f"{copy}{suffix}")
    with contextlib.closing(sqlite3.connect(copy)) as db:
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name")]
        return [(t, sorted(repr(row) for row in db.execute(_STORE_TABLES[t]))) for t in tables]


#: the tables of a store the fixtures write, and how to read each whole (an unknown table is a KeyError)
_STORE_TABLES = {"events": "SELECT * FROM events", "sessions": "SELECT * FROM sessions",
                 "persistence_state": "SELECT * FROM persistence_state"}


@dataclass
class KillPlan:
    """One form and mode of repair: its input, its target, the target's old and new content, how long it takes."""

    form: str
    mode: str
    folder: Path  # holds the input (and OUT): nothing else may stay there after a repair that finished
    source: Path
    target: Path
    old_bytes: bytes  # the target before: OUT's old bytes, or the crashed input itself
    old: Any  # the target's content before (a store: its rows), and after a complete repair
    new: Any
    seconds: float  # an unkilled repair's wall time here
    scratch: Path

    def argv(self) -> list[str]:
        out = ["-o", str(self.target), "--force"] if self.mode == "output" else ["--in-place"]
        return [*_REPAIR, str(self.source), *out]

    def content(self) -> Any:
        return store_rows(self.target, self.scratch) if self.form == "sqlite" else self.target.read_bytes()

    def reset(self) -> None:
        self.target.write_bytes(self.old_bytes)


def kill_plan(form: str, mode: str, root: Path, turns: int = 300) -> KillPlan:
    """Build FORM's crashed input of ``turns`` turns in ``root``/work, and learn what a complete repair writes (an
    unkilled run on a copy in ``root``/reference, whose output must validate) and how long it takes."""
    folder, reference, scratch = root / "work", root / "reference", root / "scratch"
    folder.mkdir(parents=True)
    reference.mkdir()
    source = crashed(form, folder, turns=turns)
    target = folder / f"out{source.suffix}" if mode == "output" else source
    old_bytes = b"old\n" if mode == "output" else source.read_bytes()
    ref_source = reference / source.name  # a copy: a store's rows hold ids drawn when it was made
    shutil.copyfile(source, ref_source)
    ref_target = reference / target.name
    argv = [*_REPAIR, str(ref_source), *(["-o", str(ref_target)] if mode == "output" else ["--in-place"])]
    start = time.monotonic()
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
    seconds = time.monotonic() - start
    assert done.returncode == 0, done.stderr
    assert _valid(ref_target), f"the complete repair of {form} ({mode}) does not validate"
    plan = KillPlan(form, mode, folder, source, target, old_bytes, None, None, seconds, scratch)
    plan.new = store_rows(ref_target, scratch) if form == "sqlite" else ref_target.read_bytes()
    plan.reset()
    plan.old = plan.content() if mode == "in-place" else old_bytes
    return plan


@dataclass
class KillOutcome:
    """What one `kill -9` of a repair left, and what the next repair to the same target did."""

    point: float | str
    status: int  # the killed process's (-9: it was killed mid-run; 0: it had finished first)
    rusage: Any
    state: str  # "old", "new" or "neither"
    strays: list[str] = field(default_factory=list)  # files the kill left beside the target
    next_code: int = 0
    next_output: str = ""
    next_leftovers: list[str] = field(default_factory=list)  # files the next repair left (none may stay)
    next_state: str = ""

    def problems(self, plan: KillPlan) -> list[str]:
        found = []
        if self.state == "neither":
            found.append("the target is neither old nor new")
        temp = f".{plan.target.name}.sessionspec-tmp."
        journal = f"{plan.target.name}-journal"
        odd = [s for s in self.strays if not (s.startswith(temp) or (plan.mode == "in-place" and s == journal))]
        if odd:
            found.append(f"the kill left {', '.join(odd)}")
        if self.next_code != 0:
            found.append(f"the next repair exits {self.next_code}")
        if self.next_leftovers:
            found.append(f"the next repair leaves {', '.join(self.next_leftovers)}")
        if self.next_state != "new":
            found.append(f"after the next repair the target is {self.next_state}")
        return found


def _state(plan: KillPlan) -> str:
    try:
        if plan.target.read_bytes() == plan.old_bytes:
            return "old"
        content = plan.content()
    except (OSError, sqlite3.Error):
        return "neither"
    return "new" if content == plan.new else "old" if content == plan.old else "neither"


def kill_once(plan: KillPlan, point: float | str) -> KillOutcome:
    """Reset the target, start a repair, `kill -9` it at ``point``, judge the target, then repair once more."""
    plan.reset()
    before = set(os.listdir(plan.folder))
    proc = subprocess.Popen(plan.argv(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    after_temp = float(point.partition("+")[2] or 0) if isinstance(point, str) else None
    deadline = None if after_temp is not None else time.monotonic() + float(point) * plan.seconds
    # the child is reaped here only (wait4, for its resources), so the pid that is killed is still the child's
    while not (ended := os.wait4(proc.pid, os.WNOHANG))[0]:
        if deadline is None and set(os.listdir(plan.folder)) > before:
            deadline = time.monotonic() + (after_temp or 0.0)
        if deadline is not None and time.monotonic() >= deadline:
            os.kill(proc.pid, signal.SIGKILL)
            ended = os.wait4(proc.pid, 0)
            break
        time.sleep(0.0005)
    _, wait_status, rusage = ended
    proc.returncode = os.waitstatus_to_exitcode(wait_status)
    outcome = KillOutcome(point, proc.returncode, rusage, _state(plan), sorted(set(os.listdir(plan.folder)) - before))
    done = subprocess.run(plan.argv(), capture_output=True, text=True, timeout=120, check=False)
    outcome.next_code, outcome.next_output = done.returncode, done.stdout + done.stderr
    outcome.next_leftovers = sorted(set(os.listdir(plan.folder)) - before)
    outcome.next_state = _state(plan)
    return outcome


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("form", FORMS)
def test_kill_9_at_any_point_of_a_repair_leaves_old_or_new_and_the_next_repair_leaves_no_temp(
        form: str, mode: str, tmp_path: Path) -> None:
    """Issue 25's campaign killed repair 550 times and found the target always old or new. Here, per form (raw
    JSONL, zstd artifact, SQLite store) and mode (-o OUT, --in-place), a handful of `kill -9` points: after each
    the target is its old bytes (a store in place: its old rows, once SQLite rolls back the journal the kill
    left) or the complete repaired output, which validates; what the kill left is only the target's own temp
    file (or a store's journal); and the next repair to the same target ends 0 with the folder as before."""
    plan = kill_plan(form, mode, tmp_path)
    outcomes = [kill_once(plan, point) for point in KILL_POINTS]
    for outcome in outcomes:
        assert outcome.problems(plan) == [], (outcome.point, outcome.status, outcome.next_output[-2000:])
    # the kills landed while a repair ran (a repair that finished before its kill proves nothing)
    assert any(o.status == -signal.SIGKILL for o in outcomes), [(o.point, o.status) for o in outcomes]


def test_a_signal_inside_sqlites_progress_handler_still_ends_with_its_status(tmp_path: Path) -> None:
    """SIGTERM handled while SQLite runs the progress handler: the exception the handler raises becomes SQLite's
    "interrupted" error (a finding, exit 1) inside the library, so the exit status is the signal's all the same,
    and the target is left as it was."""
    source = crashed("sqlite", tmp_path, turns=30)
    target = tmp_path / f"out{source.suffix}"
    target.write_bytes(b"old\n")
    code = ("import os, signal, sqlite3, sys\n"
            "real = sqlite3.Connection.set_progress_handler\n"
            "def patched(self, handler, n):\n"
            "    calls = [0]\n"
            "    def wrapped():\n"
            "        calls[0] += 1\n"
            "        if calls[0] == 3: os.kill(os.getpid(), signal.SIGTERM)\n"
            "        return handler()\n"
            "    return real(self, wrapped, n)\n"
            "class Conn(sqlite3.Connection):\n"
            "    set_progress_handler = patched\n"
            "connect = sqlite3.connect\n"
            "sqlite3.connect = lambda *a, **k: connect(*a, factory=Conn, **k)\n"
            "import sessionspec.reference.sqlite_store as s\n"
            "s._PROGRESS_STEP = 1\n"
            "from sessionspec.cli import main\n"
            "sys.argv = ['sessionspec', 'repair', sys.argv[1], '-o', sys.argv[2], '--force']\n"
            "main()\n")
    result = subprocess.run([sys.executable, "-c", code, str(source), str(target)], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 128 + signal.SIGTERM, (result.returncode, result.stderr[-2000:])
    assert target.read_bytes() == b"old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([source.name, target.name])
