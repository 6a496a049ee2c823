"""Talking to an implementation under test through its adapter.

A :class:`Connection` moves one request line out and one reply line back.
:class:`Implementation` sits on top: it performs the ``start`` handshake,
numbers requests, and turns every way an adapter can break (a crash, a hang
past the per-request timeout, a line that is not JSON, a reply for another
``seq``, a reply that does not fit the protocol schema) into an ``errored``
reply for *that* request. After such a failure the adapter process is
restarted (and handshaken again) before the next request, so one broken case
never takes the rest of the run down with it.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import select
import shlex
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, cast

from . import protocol, wire

__all__ = [
    "AdapterFailure",
    "Connection",
    "Implementation",
    "InProcessConnection",
    "StartupFailed",
    "SubprocessConnection",
    "adapters_end_on_signals",
    "connector_for",
    "end_all_adapters",
]


class AdapterFailure(Exception):
    """The adapter broke the protocol while serving one request (``hang``: it did not answer in time)."""

    def __init__(self, message: str, *, hang: bool = False) -> None:
        super().__init__(message)
        self.hang = hang


class StartupFailed(Exception):
    """The adapter could not be started or failed its handshake."""


class Connection(Protocol):
    """One live adapter: send a request line, wait for one reply line."""

    def exchange(self, line: str, timeout: float) -> str:
        """Send ``line`` (no newline) and return the next reply line, or raise :class:`AdapterFailure`."""
        ...

    def close(self) -> None:
        """Release the adapter (kill it if it is a process)."""
        ...


class InProcessConnection:
    """The reference adapter called in this process.

    Requests and replies still travel as JSON text, exactly as over a pipe, so
    the fast path cannot rely on Python objects the protocol cannot carry.
    A per-request timeout cannot interrupt in-process code and is ignored.
    """

    def __init__(self, handler: Callable[[Any], Any] | None = None, revision: str | None = None,
                 sqlite_layout: int | None = None, clock: Callable[[], int] | None = None) -> None:
        if handler is None:
            from .adapter import ReferenceAdapter

            handler = ReferenceAdapter(revision=revision, sqlite_layout=sqlite_layout, clock=clock).handle
        self._handler = handler

    def exchange(self, line: str, timeout: float) -> str:
        return wire.dumps(self._handler(wire.loads(line)))

    def close(self) -> None:
        return None


#: The longest reply line read from an adapter (bytes); a longer one is a protocol violation.
MAX_REPLY_BYTES = 16 << 20
#: How much of an adapter's stderr is kept for diagnostics (the last bytes written).
STDERR_TAIL_BYTES = 8 << 10
_CHUNK = 1 << 16


def _read_ready(fd: int) -> bytes | None:
    """What a non-blocking pipe holds now: None when nothing is ready, b"" at its end or on an error."""
    try:
        return os.read(fd, _CHUNK)
    except BlockingIOError:
        return None
    except OSError:
        return b""


_EXIT_CHECK = 0.1  # seconds between looks at whether a silent adapter has exited

# Every live adapter process group, so a signal or an exit of the harness can end them all.
_LIVE: set[SubprocessConnection] = set()
_LIVE_LOCK = threading.Lock()
_SHUTTING_DOWN = threading.Event()


def end_all_adapters() -> None:
    """Kill every adapter process group still running and refuse to start new ones."""
    _SHUTTING_DOWN.set()
    with _LIVE_LOCK:
        live = list(_LIVE)
    for conn in live:
        conn.kill()


atexit.register(end_all_adapters)


@contextlib.contextmanager
def adapters_end_on_signals() -> Iterator[None]:
    """SIGTERM or SIGHUP to the harness ends every adapter group, then exits with 128 + the signal.

    Adapters run in sessions of their own, so a signal to the harness does not reach them; without
    this they would outlive it. A no-op outside the main thread (signals are delivered there only).
    """
    if threading.current_thread() is not threading.main_thread() or os.name != "posix":
        yield
        return

    def ended(signum: int, _frame: object) -> None:
        end_all_adapters()
        raise SystemExit(128 + signum)

    previous = {sig: signal.signal(sig, ended) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


class SubprocessConnection:
    """An adapter program speaking the protocol on stdin/stdout.

    The adapter runs in a process group of its own; closing the connection
    kills the whole group, so a grandchild holding the pipes open cannot keep
    the harness waiting. There are no reader threads: one ``poll`` loop
    writes the request, reads the reply and drains stderr, always against the
    request's deadline, and keeps at most ``max_reply`` bytes of a reply line
    and the last ``STDERR_TAIL_BYTES`` of stderr.
    """

    def __init__(self, argv: list[str], *, env: Mapping[str, str] | None = None, cwd: str | None = None,
                 max_reply: int | None = None) -> None:
        self.argv = argv
        self.max_reply = MAX_REPLY_BYTES if max_reply is None else max_reply
        if _SHUTTING_DOWN.is_set():
            raise StartupFailed("the harness is shutting down")
        try:
            self._proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=dict(env) if env is not None else None,
                cwd=cwd,
                start_new_session=(os.name == "posix"),
            )
        except OSError as exc:
            raise StartupFailed(f"cannot run {shlex.join(argv)}: {exc.strerror or exc}") from exc
        with _LIVE_LOCK:
            _LIVE.add(self)
        assert self._proc.stdin is not None and self._proc.stdout is not None and self._proc.stderr is not None  # noqa: PT018 - one invariant of the reply reader
        self._in, self._out, self._err = self._proc.stdin.fileno(), self._proc.stdout.fileno(), self._proc.stderr.fileno()
        for fd in (self._in, self._out, self._err):
            os.set_blocking(fd, False)
        self._pending = bytearray()  # stdout read past the last reply line
        self._stderr = bytearray()
        self._stdout_open = True
        self._stderr_open = True

    def stderr_tail(self) -> str:
        """The last lines the adapter wrote to stderr (for diagnostics)."""
        text = bytes(self._stderr).decode("utf-8", "replace").rstrip("\n")
        lines = text.split("\n")
        return "\n".join(lines[1:] if len(self._stderr) >= STDERR_TAIL_BYTES and len(lines) > 1 else lines)

    def _drain_stderr(self) -> None:
        chunk = _read_ready(self._err)
        if chunk is None:
            return
        if not chunk:
            self._stderr_open = False
            return
        self._stderr += chunk
        del self._stderr[:-STDERR_TAIL_BYTES]

    def _died(self, what: str) -> AdapterFailure:
        try:
            code = self._proc.wait(timeout=1)
        except subprocess.TimeoutExpired:
            code = None
        self._drain_stderr()
        tail = self.stderr_tail()
        status = f"exit code {code}" if code is not None else "still running"
        return AdapterFailure(f"{what} ({status})" + (f"; stderr:\n{tail}" if tail else ""))

    def _fail(self, message: str, *, hang: bool = False) -> AdapterFailure:
        self.close()
        return AdapterFailure(message, hang=hang)

    def exchange(self, line: str, timeout: float) -> str:
        """One deadline loop: send the request, collect output, return the first reply line after it."""
        data = memoryview(line.encode("utf-8", "surrogatepass") + b"\n")
        deadline = time.monotonic() + timeout
        poller = select.poll()
        poller.register(self._in, select.POLLOUT)
        if self._stdout_open:
            poller.register(self._out, select.POLLIN)
        if self._stderr_open:
            poller.register(self._err, select.POLLIN)
        while True:
            reply = self._reply(sent=not data)
            if reply is not None:
                return reply
            left = deadline - time.monotonic()
            if left <= 0:
                raise self._fail(f"no reply within {timeout:g} s (hang); adapter killed", hang=True)
            ready = poller.poll(max(1, int(min(left, _EXIT_CHECK) * 1000)))
            if not ready and self._proc.poll() is not None:
                # The adapter is gone; what it wrote is read, and a grandchild holding the pipe
                # open must not make the harness wait for an end of file that never comes.
                self._stdout_open = False
                self._read_rest()
                continue
            for fd, events in ready:
                if fd == self._in:
                    data = self._send(poller, data, events)
                elif fd == self._out:
                    self._receive(poller)
                elif fd == self._err:
                    self._drain_stderr()
                    if not self._stderr_open:
                        poller.unregister(self._err)

    def _reply(self, sent: bool) -> str | None:
        """The next complete reply line (once the request is sent), None to wait, or the failure that ends the wait."""
        end = self._pending.find(b"\n") if sent else -1  # a reply counts once the request is sent
        if end >= 0:
            raw = bytes(self._pending[:end])
            del self._pending[: end + 1]
            try:
                return raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise AdapterFailure(f"reply is not UTF-8: {exc}") from None
        if len(self._pending) > self.max_reply:
            raise self._fail(f"reply longer than {self.max_reply} bytes without a line end (the limit); "
                             "adapter killed")
        if not self._stdout_open:
            raise self._died("adapter exited without replying (crash)" if sent
                             else "adapter closed its stdout / exited before the request was sent")
        return None

    def _send(self, poller: select.poll, data: memoryview, events: int) -> memoryview:
        """Write what the adapter's stdin takes of the request; returns the rest."""
        if events & (select.POLLERR | select.POLLHUP):
            raise self._died("adapter closed its stdin / exited before the request was sent")
        try:
            sent = os.write(self._in, data[:_CHUNK])
        except BlockingIOError:
            return data
        except OSError:
            raise self._died("adapter closed its stdin / exited before the request was sent") from None
        data = data[sent:]
        if not data:
            poller.unregister(self._in)
        return data

    def _receive(self, poller: select.poll) -> None:
        """Append what stdout has to the pending reply bytes; at end of file stop polling it."""
        chunk = _read_ready(self._out)
        if chunk is None:
            return
        if chunk:
            self._pending += chunk
        else:
            self._stdout_open = False
            poller.unregister(self._out)

    def _read_rest(self) -> None:
        while len(self._pending) <= self.max_reply:
            chunk = _read_ready(self._out)
            if not chunk:  # nothing ready, the end, or an error
                return
            self._pending += chunk

    def kill(self) -> None:
        """End the adapter's whole process group (the adapter and anything it started)."""
        try:
            if os.name == "posix":
                os.killpg(self._proc.pid, signal.SIGKILL)
            else:  # pragma: no cover
                self._proc.kill()
        except (ProcessLookupError, PermissionError):
            try:
                self._proc.kill()
            except OSError:
                pass

    def close(self) -> None:
        self.kill()  # even when the adapter has exited: a grandchild may live on in its group
        try:
            self._proc.wait(timeout=5)
        except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL is not ignorable
            pass
        for stream in (self._proc.stdin, self._proc.stdout, self._proc.stderr):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass
        with _LIVE_LOCK:
            _LIVE.discard(self)


def connector_for(impl: str | None, revision: str | None = None, sqlite_layout: int | None = None
                  ) -> Callable[[], Connection]:
    """A factory of fresh connections: in-process reference for ``None`` (serving ``revision``, its
    SQLite backend at ``sqlite_layout``), else a subprocess running the shlex-split command."""
    if impl is None:
        return lambda: InProcessConnection(revision=revision, sqlite_layout=sqlite_layout)
    argv = shlex.split(impl)
    if not argv:
        raise ValueError("--impl: empty command")
    return lambda: SubprocessConnection(argv)


#: Python refuses to print integers of more than 4,300 digits; a reply holding one cannot be judged.
_MAX_INT_BITS = 14_000


def _oversized_int(value: Any) -> bool:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, int) and not isinstance(item, bool):
            if item.bit_length() > _MAX_INT_BITS:
                return True
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def _reply_problem(reply: Any, seq: int, op: str, check_schema: bool) -> str | None:
    if _oversized_int(reply):
        return "reply holds an integer of more than 4,000 digits (beyond what the harness can compare)"
    if not isinstance(reply, dict):
        return f"reply is not a JSON object: {wire.dumps(reply)[:100]}"
    if reply.get("seq") != seq and not (reply.get("kind") == "errored" and reply.get("seq") is None):
        return f"reply seq {reply.get('seq')!r} does not match request seq {seq}"
    if reply.get("kind") not in protocol.REPLY_KINDS:
        return f"reply kind {reply.get('kind')!r} is not one of {', '.join(protocol.REPLY_KINDS)}"
    if check_schema:
        try:
            protocol.validate_reply(reply, op)
        except protocol.ProtocolViolation as exc:
            return f"reply does not fit the protocol schema: {exc}"
    return None


@dataclass
class Implementation:
    """A restartable adapter with its handshake facts.

    ``request`` never raises for adapter misbehaviour; it returns an
    ``errored`` reply and restarts the adapter lazily. Call :meth:`start`
    first; it raises :class:`StartupFailed` when the adapter cannot start.
    """

    connect: Callable[[], Connection]
    timeout: float = 30.0
    check_schema: bool = True
    info: dict[str, Any] = field(default_factory=dict)
    restarts: int = 0
    max_failed_restarts: int = 3
    #: Consecutive requests that time out before the rest are answered ``errored`` unsent (circuit breaker):
    #: an adapter that hangs on everything would otherwise cost ``timeout`` per case, for hours.
    max_consecutive_hangs: int = 3
    last_duration: float = 0.0
    last_reply_bytes: int = 0
    _hangs: int = 0
    _hung: bool = False
    _conn: Connection | None = None
    _seq: int = 0
    _failed_restarts: int = 0
    _argv: list[str] | None = None

    @property
    def command(self) -> str | None:
        """The adapter's command line, shell-quoted, for replay hints (None: the in-process reference)."""
        return shlex.join(self._argv) if self._argv else None

    @property
    def capabilities(self) -> frozenset[str]:
        return frozenset(self.info.get("capabilities", ()))

    @property
    def limits(self) -> Mapping[str, Any]:
        """The JSON limits the adapter declares (``limits`` of ``start``)."""
        return self.info.get("limits") or {}

    @property
    def code_map(self) -> Mapping[str, str]:
        return self.info.get("codeMap") or {}

    @property
    def name(self) -> str:
        impl = self.info.get("implementation") or {}
        return f"{impl.get('name', '?')} {impl.get('version', '')}".strip()

    def start(self) -> dict[str, Any]:
        """Spawn the adapter and perform the handshake; returns the ``start`` result."""
        self._conn = self.connect()
        self._argv = getattr(self._conn, "argv", None)
        self._seq = 0
        reply = self._exchange("start", {"protocolVersion": protocol.PROTOCOL_VERSION})
        if reply.get("kind") != "result":
            self.close()
            detail = reply.get("message") or reply.get("reason") or reply.get("code")
            raise StartupFailed(f"the adapter did not complete the start handshake: {reply.get('kind')}: {detail}")
        info = reply["result"]
        if info.get("protocolVersion") != protocol.PROTOCOL_VERSION:
            self.close()
            raise StartupFailed(
                f"the adapter speaks protocol version {info.get('protocolVersion')!r}; "
                f"this harness speaks {protocol.PROTOCOL_VERSION}"
            )
        unknown = sorted(set(info.get("capabilities", ())) - set(protocol.CAPABILITIES))
        if unknown:  # pragma: no cover - the schema check already refuses these
            raise StartupFailed(f"unknown capabilities: {', '.join(unknown)}")
        self.info = info
        return cast("dict[str, Any]", info)

    def _exchange(self, op: str, args: Mapping[str, Any]) -> dict[str, Any]:
        assert self._conn is not None
        self._seq += 1
        seq = self._seq
        message = protocol.request(seq, op, args)
        try:
            line = self._conn.exchange(wire.dumps(message), self.timeout)
        except AdapterFailure as exc:
            self._hung = exc.hang
            self._drop()
            return protocol.errored(seq, str(exc))
        except wire.WireError as exc:
            return protocol.errored(seq, f"request cannot be encoded: {exc}")
        self.last_reply_bytes = len(line)
        try:
            reply = wire.loads(line)
        except wire.WireError as exc:
            self._drop()
            return protocol.errored(seq, f"malformed reply (not JSON): {exc}: {line[:200]!r}")
        problem = _reply_problem(reply, seq, op, self.check_schema)
        if problem is not None:
            self._drop()
            return protocol.errored(seq, problem)
        if reply.get("kind") == "errored":
            reply["seq"] = seq
        return cast("dict[str, Any]", reply)

    def _drop(self) -> None:
        """Forget a connection that misbehaved; the next request restarts the adapter."""
        if self._conn is not None:
            self._conn.close()
        self._conn = None

    def request(self, op: str, args: Mapping[str, Any]) -> dict[str, Any]:
        """One request; any adapter failure comes back as an ``errored`` reply."""
        if self._hangs >= self.max_consecutive_hangs:
            return protocol.errored(None, f"not sent: the adapter hung on {self._hangs} requests in a row "
                                          f"(timeout {self.timeout:g} s each); circuit breaker open")
        if self._conn is None:
            if self._failed_restarts >= self.max_failed_restarts:
                return protocol.errored(
                    None, f"adapter failed to restart {self._failed_restarts} times in a row; not trying again"
                )
            try:
                self.restarts += 1
                self.start()
            except StartupFailed as exc:
                self._failed_restarts += 1
                return protocol.errored(None, f"adapter restart failed: {exc}")
            self._failed_restarts = 0
        started = time.perf_counter()
        self._hung = False
        reply = self._exchange(op, args)
        self._hangs = self._hangs + 1 if self._hung else 0
        reply.setdefault("seq", None)
        self.last_duration = time.perf_counter() - started
        return reply

    def close(self) -> None:
        """Send ``stop`` (best effort) and release the adapter."""
        conn, self._conn = self._conn, None
        if conn is None:
            return
        try:
            self._seq += 1
            conn.exchange(wire.dumps(protocol.request(self._seq, "stop")), min(self.timeout, 5.0))
        except (AdapterFailure, wire.WireError, OSError):
            pass
        finally:
            conn.close()

    def __enter__(self) -> Implementation:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

