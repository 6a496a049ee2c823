"""Reading an input file that nobody vouches for: bounded in size, never blocking, never a traceback.

Logs, vector directories, expectation files, traces, reports and plugin registries are named by a
user and may be anything: a device that never ends (`/dev/zero`), a FIFO without a writer, a
socket, a directory, a file of gigabytes, bytes that are not UTF-8. Every command and the
conformance side read such a file through `read_input` (bytes) or `read_text` (UTF-8 text), which
return the content or one line saying why it cannot be read. It lives at the bottom layer so that
the spec loader (registries), the conformance suite and the CLI share one set of limits.
"""

from __future__ import annotations

import os
import select
import stat
import sys
from typing import Any

#: The largest input read whole (bytes): a stream without end (``-`` from /dev/zero) stops here, not at
#: the memory limit. Stored session logs are far smaller; docs/security.md lists every such bound. A
#: regular file that `validate`'s streaming pass proves clean is read in blocks and never held whole.
MAX_INPUT_BYTES = 1 << 30
#: How long a FIFO named as an input may go without a writer before it is reported (seconds).
FIFO_WAIT = 10.0
_CHUNK = 1 << 20


class _TooLarge(Exception):
    pass


def _read_bounded(fd: int, name: str, limit: int) -> bytes:
    chunks: list[Any] = []
    size = 0
    while True:
        chunk = os.read(fd, _CHUNK)
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        if size > limit:
            raise _TooLarge(f"{name}: larger than the input limit of {limit} bytes; not read")
        chunks.append(chunk)


def read_input(path: str | os.PathLike[str], limit: int | None = None) -> tuple[bytes | None, str | None]:
    """(bytes, None) or (None, why it cannot be read), never blocking or growing without bound.

    Regular files, FIFOs and stdin (``-``) are read up to ``MAX_INPUT_BYTES`` (or ``limit``); a FIFO
    with no writer for ``FIFO_WAIT`` seconds, a device, a socket and a directory are refused.
    """
    limit = MAX_INPUT_BYTES if limit is None else limit
    path = os.fspath(path)
    if path == "-":
        if sys.stdin is None:
            return None, "<stdin>: standard input is closed"
        try:
            return _read_bounded(sys.stdin.fileno(), "<stdin>", limit), None
        except _TooLarge as exc:
            return None, str(exc)
        except (OSError, ValueError, AttributeError):  # no real descriptor (embedded use, tests)
            data = sys.stdin.buffer.read(limit + 1)
            if len(data) > limit:
                return None, f"<stdin>: larger than the input limit of {limit} bytes; not read"
            return data, None
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        if isinstance(exc, IsADirectoryError):
            return None, f"{path}: is a directory, not a file"
        return None, f"{path}: cannot read: {exc.strerror or exc}"
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            return None, f"{path}: is a directory, not a file"
        if stat.S_ISFIFO(mode):
            poller = select.poll()
            poller.register(fd, select.POLLIN)
            if not poller.poll(int(FIFO_WAIT * 1000)):
                return None, f"{path}: a FIFO with no writer for {FIFO_WAIT:g} s; not read"
        elif not stat.S_ISREG(mode):
            return None, f"{path}: is a device or socket, not a file (pipe it to '-' to read a stream)"
        os.set_blocking(fd, True)
        return _read_bounded(fd, path, limit), None
    except _TooLarge as exc:
        return None, str(exc)
    except OSError as exc:
        return None, f"{path}: cannot read: {exc.strerror or exc}"
    finally:
        os.close(fd)


def read_text(path: str | os.PathLike[str], limit: int | None = None) -> tuple[str | None, str | None]:
    """`read_input`, decoded as UTF-8: (text, None) or (None, why), naming the line of a bad byte."""
    data, problem = read_input(path, limit)
    if data is None:
        return None, problem
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        return None, f"{os.fspath(path)}:{line}: not UTF-8 text (byte {exc.start + 1})"
