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

import os
import queue
import shlex
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from . import protocol, wire

__all__ = [
    "AdapterFailure",
    "Connection",
    "Implementation",
    "InProcessConnection",
    "StartupFailed",
    "SubprocessConnection",
    "connector_for",
]


class AdapterFailure(Exception):
    """The adapter broke the protocol while serving one request."""


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

    def __init__(self, handler: Callable[[Any], Any] | None = None) -> None:
        if handler is None:
            from .adapter import ReferenceAdapter

            handler = ReferenceAdapter().handle
        self._handler = handler

    def exchange(self, line: str, timeout: float) -> str:
        return wire.dumps(self._handler(wire.loads(line)))

    def close(self) -> None:
        return None


class SubprocessConnection:
    """An adapter program speaking the protocol on stdin/stdout."""

    def __init__(self, argv: list[str], *, env: Mapping[str, str] | None = None, cwd: str | None = None) -> None:
        self.argv = argv
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
        self._lines: queue.Queue[bytes | None] = queue.Queue()
        self._stderr: deque[str] = deque(maxlen=20)
        threading.Thread(target=self._pump_stdout, daemon=True).start()
        threading.Thread(target=self._pump_stderr, daemon=True).start()

    def _pump_stdout(self) -> None:
        assert self._proc.stdout is not None
        for raw in self._proc.stdout:
            self._lines.put(raw)
        self._lines.put(None)

    def _pump_stderr(self) -> None:
        assert self._proc.stderr is not None
        for raw in self._proc.stderr:
            self._stderr.append(raw.decode("utf-8", "replace").rstrip("\n"))

    def stderr_tail(self) -> str:
        """The last lines the adapter wrote to stderr (for diagnostics)."""
        return "\n".join(self._stderr)

    def _died(self, what: str) -> AdapterFailure:
        try:
            code = self._proc.wait(timeout=1)
        except subprocess.TimeoutExpired:
            code = None
        tail = self.stderr_tail()
        status = f"exit code {code}" if code is not None else "still running"
        return AdapterFailure(f"{what} ({status})" + (f"; stderr:\n{tail}" if tail else ""))

    def exchange(self, line: str, timeout: float) -> str:
        assert self._proc.stdin is not None
        try:
            self._proc.stdin.write(line.encode("utf-8", "surrogatepass") + b"\n")
            self._proc.stdin.flush()
        except (BrokenPipeError, OSError):
            raise self._died("adapter closed its stdin / exited before the request was sent") from None
        try:
            raw = self._lines.get(timeout=timeout)
        except queue.Empty:
            self.close()
            raise AdapterFailure(f"no reply within {timeout:g} s (hang); adapter killed") from None
        if raw is None:
            raise self._died("adapter exited without replying (crash)")
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise AdapterFailure(f"reply is not UTF-8: {exc}") from None

    def close(self) -> None:
        if self._proc.poll() is None:
            try:
                if os.name == "posix":
                    os.killpg(self._proc.pid, signal.SIGKILL)
                else:  # pragma: no cover
                    self._proc.kill()
            except (ProcessLookupError, PermissionError):
                self._proc.kill()
        try:
            self._proc.wait(timeout=5)
        except subprocess.TimeoutExpired:  # pragma: no cover
            pass
        for stream in (self._proc.stdin, self._proc.stdout, self._proc.stderr):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass


def connector_for(impl: str | None) -> Callable[[], Connection]:
    """A factory of fresh connections: in-process reference for ``None``, else a
    subprocess running the shlex-split command."""
    if impl is None:
        return InProcessConnection
    argv = shlex.split(impl)
    if not argv:
        raise ValueError("--impl: empty command")
    return lambda: SubprocessConnection(argv)


def _reply_problem(reply: Any, seq: int, op: str, check_schema: bool) -> str | None:
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
    last_duration: float = 0.0
    _conn: Connection | None = None
    _seq: int = 0
    _failed_restarts: int = 0

    @property
    def capabilities(self) -> frozenset[str]:
        return frozenset(self.info.get("capabilities", ()))

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
        return info

    def _exchange(self, op: str, args: Mapping[str, Any]) -> dict[str, Any]:
        assert self._conn is not None
        self._seq += 1
        seq = self._seq
        message = protocol.request(seq, op, args)
        try:
            line = self._conn.exchange(wire.dumps(message), self.timeout)
        except AdapterFailure as exc:
            self._drop()
            return protocol.errored(seq, str(exc))
        except wire.WireError as exc:
            return protocol.errored(seq, f"request cannot be encoded: {exc}")
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
        return reply

    def _drop(self) -> None:
        """Forget a connection that misbehaved; the next request restarts the adapter."""
        if self._conn is not None:
            self._conn.close()
        self._conn = None

    def request(self, op: str, args: Mapping[str, Any]) -> dict[str, Any]:
        """One request; any adapter failure comes back as an ``errored`` reply."""
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
        reply = self._exchange(op, args)
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

