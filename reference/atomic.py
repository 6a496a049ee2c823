"""Atomic file replacement, the one way every sessionspec writer touches disk.

A reader (or a crash) sees either the old file or the complete new one: the
bytes go to a synced temp file in the same directory, which then replaces the
target with ``os.replace``; the directory entry is synced too. An existing
file keeps its permission bits; a new one gets 0644 (not mkstemp's 0600).

Only regular files are ever replaced: a target that exists and is anything
else (a directory, a device such as ``/dev/null``, a FIFO, a socket) is
refused, because replacing it would destroy it. A symbolic link is followed
and the file it names is replaced, so the link survives. Every failure (an
empty path, a refused target, a read-only or full disk, ``/proc``) raises
:class:`OutputError` with a message naming the path, after removing the temp
file: the target is then exactly as it was.

A ``kill -9`` runs no exit path, so it can leave the temp file behind. Its name says whose it is, for which
target and which process wrote it (``.OUT.sessionspec-tmp.PID.RANDOM.tmp``), and the writer holds an exclusive
``flock`` on it while it lives. The next write to the same target removes the temp files of that target (and a
SQLite temp's ``-journal``/``-wal``/``-shm``) that are ours beyond doubt: regular files we own, named for that
target in that folder, whose writer is gone (no process with their pid here, and their lock free). Nothing else
is ever removed: not another target's temp files, not a living writer's, not a file of that name we do not own.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

__all__ = ["OutputError", "atomic_writer", "check_new_output", "check_target", "fsync_dir", "locked_temp",
           "remove_stale_temps", "temp_prefix", "write_atomic"]


class OutputError(OSError):
    """An output cannot be written where asked; nothing was touched."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a regular file"  # pragma: no cover - door, port, whiteout


def check_target(path: str | os.PathLike[str]) -> Path:
    """The regular file ``path`` names (symlinks followed), or :class:`OutputError` saying why not."""
    name = os.fspath(path)
    if not name:
        raise OutputError("the output path is empty")
    try:
        info = os.stat(name)
    except FileNotFoundError:
        info = None
    except OSError as exc:  # a symlink loop, a file used as a folder, no permission to look
        raise OutputError(f"cannot write {name}: {exc.strerror or exc}") from None
    if info is not None and not stat.S_ISREG(info.st_mode):
        raise OutputError(
            f"refusing to write {name}: it is {_kind(info.st_mode)}, not a regular file, and writing "
            "replaces the target (use '-' for standard output where the command offers it)"
        )
    return Path(os.path.realpath(name))


def check_new_output(path: str, *, force: bool = False) -> None:
    """The one target check of every command that writes a file the user names (``-o OUT``): a new path in an
    existing writable folder, or, with ``force``, a regular file to replace. A symbolic link, a device, a FIFO,
    a socket or a folder is refused (replacing it would destroy it or write elsewhere), and so is an existing
    file without ``force``; nothing is created here, not even a missing folder. Raises :class:`OutputError`."""
    if not path:
        raise OutputError("the output path is empty")
    try:
        info: os.stat_result | None = os.lstat(path)
    except FileNotFoundError:
        info = None
    except OSError as exc:  # a file used as a folder, no permission to look
        raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from None
    if info is not None:
        if stat.S_ISLNK(info.st_mode):
            raise OutputError(f"refusing to write {path}: it is a symbolic link; name the file itself")
        if not stat.S_ISREG(info.st_mode):
            raise OutputError(f"refusing to write {path}: it is {_kind(info.st_mode)}, not a regular file, and "
                              "writing replaces the target (use '-' for standard output where the command offers it)")
        if not force:
            raise OutputError(f"refusing to write {path}: the file exists (pass --force to replace it)")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise OutputError(f"cannot write {path}: the folder {folder} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise OutputError(f"cannot write {path}: the folder {folder} is not writable")


def output_folder(path: str, *, create: bool = False) -> None:
    """The output policy for a folder the suite names files in (``--trace-dir``): an existing real folder
    (not a symbolic link, a file, a device or a FIFO) that is writable, or a missing one whose nearest existing
    ancestor is such a folder (``create``: made then, with the missing parents, like ``mkdir -p``). The files in
    it get names of the suite's own, unique per run, and are written as new files (`check_new_output`), so
    none is ever replaced. Raises :class:`OutputError`."""
    if not path:
        raise OutputError("the output folder path is empty")
    probe = os.path.abspath(path)
    while True:
        try:
            info = os.lstat(probe)
        except FileNotFoundError:
            parent = os.path.dirname(probe)
            if parent == probe:
                raise OutputError(f"cannot write into {path}: no existing folder above it") from None
            probe = parent
            continue
        except OSError as exc:
            raise OutputError(f"cannot write into {path}: {exc.strerror or exc}") from None
        break
    if stat.S_ISLNK(info.st_mode) and probe == os.path.abspath(path):
        raise OutputError(f"refusing to write into {path}: it is a symbolic link; name the folder itself")
    if not os.path.isdir(probe):
        kind = "a file" if stat.S_ISREG(info.st_mode) else _kind(info.st_mode)
        raise OutputError(f"refusing to write into {path}: {probe} is {kind}, not a folder")
    if not os.access(probe, os.W_OK | os.X_OK):
        raise OutputError(f"cannot write into {path}: the folder {probe} is not writable")
    if create and probe != os.path.abspath(path):
        try:
            os.makedirs(path, exist_ok=True)
        except OSError as exc:
            raise OutputError(f"cannot write into {path}: {exc.strerror or exc}") from None


def temp_prefix(name: str) -> str:
    """The start of a temp file's name for target ``name``: hidden, and saying whose it is and for what, so that
    one a ``kill -9`` leaves behind (no exit path runs then) can be told and removed."""
    return f".{name}.sessionspec-tmp."


#: what SQLite puts beside a database file while it writes one (a temp file's own, removed with it)
_SIDECARS = ("-journal", "-wal", "-shm")


def locked_temp(folder: str | os.PathLike[str], name: str, suffix: str) -> tuple[int, str]:
    """A new temp file for target ``name`` in ``folder``, after removing that target's stale ones
    (`remove_stale_temps`): its descriptor, holding an exclusive ``flock`` for as long as it stays open (so no
    later writer takes it for a killed one's), and its path, ``.NAME.sessionspec-tmp.PID.RANDOM{suffix}``."""
    remove_stale_temps(folder, name)
    import tempfile  # (only a write needs it: a process that checks never imports it)

    fd, path = tempfile.mkstemp(prefix=f"{temp_prefix(name)}{os.getpid()}.", suffix=suffix, dir=folder)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:  # a file system without flock: the pid in the name still protects a living writer
        pass
    return fd, path


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # EPERM: a process of another user has that pid
        return True
    return True


def _unlocked(path: str) -> bool:
    """True when nobody holds a lock on ``path`` (its writer is gone: a killed process's locks are released)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:  # held by a living writer, or no flock here: not provably stale
        return False
    finally:
        os.close(fd)  # (releases the probe's lock)
    return True


def remove_stale_temps(folder: str | os.PathLike[str], name: str) -> list[str]:
    """Remove the temp files a killed writer left for target ``name`` in ``folder`` and return their paths.

    Only files that are ours beyond doubt go: regular files (not symlinks) owned by this user, named
    ``.NAME.sessionspec-tmp.PID.RANDOM.tmp`` or ``.db`` for exactly this target, whose process ``PID`` is not
    running and whose ``flock`` nobody holds, with the SQLite journal, WAL and shared-memory files beside such a
    temp (or beside a temp already gone, when its pid is not running). Anything that cannot be proved stale
    stays; a failure to look or to remove is not an error of the write that asked."""
    pattern = re.compile(re.escape(temp_prefix(name)) + r"(\d+)\.[A-Za-z0-9_]+\.(?:tmp|db)("
                         + "|".join(map(re.escape, _SIDECARS)) + ")?")
    removed: list[str] = []
    try:
        entries = os.listdir(folder)
    except OSError:
        return removed
    matches = [match for match in map(pattern.fullmatch, entries) if match is not None]  # only ours, then sorted
    for match in sorted(matches, key=lambda m: (m[2] is not None, m[0])):  # temps before their sidecars
        if _alive(int(match[1])):
            continue
        path = os.path.join(folder, match[0])
        try:
            info = os.lstat(path)
        except OSError:
            continue
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid():
            continue
        if match[2] is None:
            if not _unlocked(path):
                continue
        elif os.path.lexists(path.removesuffix(match[2])):  # a sidecar of a temp that stays
            continue
        try:
            os.unlink(path)
        except OSError:
            continue
        removed.append(path)
    return removed


def write_atomic(path: str | os.PathLike[str], data: bytes, *, force: bool | None = None) -> None:
    """Replace the contents of ``path`` with ``data`` atomically; ``force`` as for :func:`atomic_writer`."""
    with atomic_writer(path, force=force) as handle:
        handle.write(data)


@contextlib.contextmanager
def atomic_writer(path: str | os.PathLike[str], *, force: bool | None = None) -> Iterator[BinaryIO]:
    """A binary handle on a temp file that replaces ``path`` when the block ends without an exception.

    For writers that stream (memory bounded by what they hold, not by the file): an exception in the
    block removes the temp file and leaves the target exactly as it was. The block may read back what
    it wrote (``handle.flush()``, then ``os.pread(handle.fileno(), ...)``) before deciding.

    ``force`` not None: the target a user named, under the one output policy (:func:`check_new_output`, also
    right before the rename, so nothing raced in); None: the project's own files (parent folders created).
    """
    if force is not None:
        check_new_output(os.fspath(path), force=force)
    target = check_target(path)
    name = os.fspath(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            mode = target.stat().st_mode & 0o777
        except FileNotFoundError:
            mode = 0o644
        fd, tmp = locked_temp(target.parent, target.name, ".tmp")
    except OSError as exc:
        raise OutputError(f"cannot write {name}: {exc.strerror or exc}") from None
    lock = os.dup(fd)  # the lock lives until the temp is renamed or removed, past the handle's close
    try:
        with os.fdopen(fd, "wb") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        check_target(path)  # still not something else (raced in since the first look)
        if force is not None:
            check_new_output(os.fspath(path), force=force)
        os.replace(tmp, target)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        if isinstance(exc, OSError) and not isinstance(exc, OutputError):
            raise OutputError(f"cannot write {name}: {exc.strerror or exc}") from None
        raise
    finally:
        os.close(lock)
    fsync_dir(target.parent)


def fsync_dir(directory: str | os.PathLike[str]) -> None:
    """Make a rename or truncation in ``directory`` durable (best effort where unsupported)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory handles
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(fd)
