"""Run sessionspec commands on a hostile input in a child process under CPU and memory limits (issue 25).

A regression that hangs or balloons then fails one test within the limit instead of stalling CI; the
child reports each command's exit code and output, or the exception that escaped (a traceback).
"""

from __future__ import annotations

import ctypes
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

#: what every command on a hostile input must stay within (issue 25: 20 s CPU, 1 GB resident)
CPU_SECONDS = 20
MEMORY_BYTES = 1 << 30
#: the child's address-space limit (a runaway stops here; see `_limits`)
ADDRESS_SPACE = 6 * MEMORY_BYTES

_DRIVER = r"""
import io, json, sys, traceback
from sessionspec.cli import run
results = []
for argv in json.loads(sys.argv[1]):
    out, err = io.StringIO(), io.StringIO()
    try:
        code = run(argv, out, err)
        crash = None
    except BaseException as error:  # SystemExit included: run() must return, not exit
        code, crash = None, "".join(traceback.format_exception(error))
    results.append({"argv": argv, "code": code, "out": out.getvalue(), "err": err.getvalue(), "crash": crash})
print(json.dumps(results))
"""


#: prctl(PR_CAPBSET_DROP) and the capabilities that let root ignore a file's mode bits
_PR_CAPBSET_DROP = 24
_CAP_DAC_OVERRIDE, _CAP_DAC_READ_SEARCH = 1, 2


def respect_modes() -> None:
    """In a child before exec: make mode bits bind, as for any user. Not root: they do already. Root: drop the
    capabilities that override them from the bounding set, so the program exec'd has them in no set (dropping to
    uid 65534 instead cannot work here: the interpreter lives under /root, mode 0700). Raises OSError when the
    kernel refuses (no CAP_SETPCAP)."""
    if os.geteuid() != 0:
        return
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (_CAP_DAC_OVERRIDE, _CAP_DAC_READ_SEARCH):
        if libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def modes_can_bind() -> str | None:
    """None when `respect_modes` works here, else why not (the reason a read-only-folder test skips with)."""
    probe = tempfile.mkdtemp()
    os.chmod(probe, 0o500)
    try:
        done = subprocess.run([sys.executable, "-c", "import os, sys; print(os.access(sys.argv[1], os.W_OK))", probe],
                              preexec_fn=respect_modes, capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"cannot make mode bits bind for a child: {exc}"
    finally:
        os.rmdir(probe)
    if done.stdout.strip() != "False":
        return f"mode bits do not bind even without CAP_DAC_OVERRIDE ({done.stdout.strip()} {done.stderr[-200:]})"
    return None


def _limits() -> None:
    resource.setrlimit(resource.RLIMIT_CPU, (CPU_SECONDS, CPU_SECONDS))
    # address space > resident: orjson reserves (not touches) about 16 bytes of address space per character of a
    # string it writes (1 GB for one 64 MiB string, measured with VmPeak), and crashes when the reservation fails,
    # so the bound that matters, 1 GB resident, is checked after the child ends (ru_maxrss)
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


def run_limited(commands: Sequence[Sequence[str]], cwd: str | None = None) -> list[dict[str, Any]]:
    """Each command's result, run in one child under the limits; fails when the child dies or overspends."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run([sys.executable, "-c", _DRIVER, json.dumps([list(c) for c in commands])], cwd=cwd,
                          capture_output=True, text=True, preexec_fn=_limits, timeout=4 * CPU_SECONDS, check=False)
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert proc.returncode == 0, f"child died ({proc.returncode}): {proc.stderr[-2000:]}"
    cpu = (usage.ru_utime + usage.ru_stime) - (before.ru_utime + before.ru_stime)
    assert cpu < CPU_SECONDS, f"{cpu:.1f} s CPU"
    assert usage.ru_maxrss * 1024 < MEMORY_BYTES, f"{usage.ru_maxrss} KiB resident"
    results: list[dict[str, Any]] = json.loads(proc.stdout)
    for result in results:
        assert result["crash"] is None, f"{result['argv']}: {result['crash']}"
        assert "Traceback" not in result["out"] + result["err"], result
    return results


_EACH_DRIVER = r"""
import io, json, resource, sys, traceback
from sessionspec.cli import run
results = []
for argv in json.loads(sys.argv[1]):
    out, err = io.StringIO(), io.StringIO()
    before = resource.getrusage(resource.RUSAGE_SELF)
    try:
        code = run(argv, out, err)
        crash = None
    except BaseException as error:  # SystemExit included: run() must return, not exit
        code, crash = None, "".join(traceback.format_exception(error))
    after = resource.getrusage(resource.RUSAGE_SELF)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    results.append({"argv": argv, "code": code, "out": out.getvalue()[-20000:], "err": err.getvalue()[-20000:],
                    "crash": crash, "cpu": cpu})
print(json.dumps(results))
"""


def run_each(commands: Sequence[Sequence[str]], cwd: str | None = None, *,
             modes_bind: bool = False) -> list[dict[str, Any]]:
    """Like `run_limited`, for many commands in one child (imports paid once): each command within
    ``CPU_SECONDS`` of CPU (measured in the child around it), the child within 1 GB resident throughout.
    ``modes_bind``: the child obeys mode bits even as root (`respect_modes`: a read-only folder is read-only)."""
    budget = CPU_SECONDS * max(1, len(commands))

    def limits() -> None:
        if modes_bind:
            respect_modes()
        resource.setrlimit(resource.RLIMIT_CPU, (budget, budget))
        resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run([sys.executable, "-c", _EACH_DRIVER, json.dumps([list(c) for c in commands])], cwd=cwd,
                          capture_output=True, text=True, preexec_fn=limits, timeout=4 * budget, check=False)
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert proc.returncode == 0, f"child died ({proc.returncode}): {proc.stderr[-2000:]}"
    assert usage.ru_maxrss * 1024 < MEMORY_BYTES, f"{usage.ru_maxrss} KiB resident"
    del before
    results: list[dict[str, Any]] = json.loads(proc.stdout)
    for result in results:
        assert result["crash"] is None, f"{result['argv']}: {result['crash']}"
        assert "Traceback" not in result["out"] + result["err"], result
        assert result["cpu"] < CPU_SECONDS, f"{result['argv']}: {result['cpu']:.1f} s CPU"
    return results


def run_full_disk(argv: Sequence[str], file_bytes: int) -> subprocess.CompletedProcess[str]:
    """``sessionspec ARGV`` in a child that can write no file past ``file_bytes`` (a full disk: EFBIG)."""
    def limits() -> None:
        _limits()
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails instead of killing
        resource.setrlimit(resource.RLIMIT_FSIZE, (file_bytes, file_bytes))

    return subprocess.run([sys.executable, "-c", "from sessionspec.cli import main; main()", *argv], capture_output=True, text=True,
                          preexec_fn=limits, timeout=4 * CPU_SECONDS, check=False)


#: the child between the caller and the command: it forks the command from its own small image, so that the
#: command's peak resident set (``wait4``) is its own. A process exec'd straight from the caller starts its count at
#: the caller's peak (Linux keeps the ``ru_maxrss`` of the image exec replaced): a test process holding a few
#: hundred MB measured every command at least that.
_MEASURE_DRIVER = r"""
import json, os, sys
argv, report = json.loads(sys.argv[1]), sys.argv[2]
pid = os.fork()
if pid == 0:
    os.execv(sys.executable, [sys.executable, "-c", "from sessionspec.cli import main; main()", *argv])
_, status, usage = os.wait4(pid, 0)
with open(report, "w") as handle:
    json.dump({"status": status, "rss_kb": usage.ru_maxrss, "cpu": usage.ru_utime + usage.ru_stime}, handle)
"""


def measure(argv: Sequence[str], cwd: str | None = None, *, modes_bind: bool = False) -> dict[str, Any]:
    """``sessionspec ARGV`` in a child of its own under the hostile limits: its exit code, stdout, stderr, peak
    resident set size (``rss_kb``, KiB, from ``wait4``: this child alone, forked from a small driver) and CPU
    seconds (user + system). The exit code is 128 + the signal when a limit killed it (SIGXCPU, SIGKILL), so a
    runaway is a result here."""
    def limits() -> None:
        if modes_bind:
            respect_modes()
        _limits()

    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            tempfile.NamedTemporaryFile(suffix=".json") as report:
        child = subprocess.Popen([sys.executable, "-c", _MEASURE_DRIVER, json.dumps(list(argv)), report.name], cwd=cwd,
                                 stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                 preexec_fn=limits)  # noqa: PLW1509  (the test process starts no threads)
        assert child.wait() == 0, f"the measuring driver failed: {err.read()[-2000:]!r}"
        usage = json.loads(Path(report.name).read_text())
        out.seek(0)
        err.seek(0)
        returncode = os.waitstatus_to_exitcode(usage["status"])
        code = returncode if returncode >= 0 else 128 - returncode
        return {"argv": list(argv), "code": code, "out": out.read().decode("utf-8", "replace"),
                "err": err.read().decode("utf-8", "replace"), "rss_kb": usage["rss_kb"], "cpu": usage["cpu"]}
