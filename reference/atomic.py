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
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

__all__ = ["OutputError", "atomic_writer", "check_new_output", "check_target", "fsync_dir", "temp_prefix",
           "write_atomic"]


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
        fd, tmp = tempfile.mkstemp(prefix=temp_prefix(target.name), suffix=".tmp", dir=target.parent)
    except OSError as exc:
        raise OutputError(f"cannot write {name}: {exc.strerror or exc}") from None
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
