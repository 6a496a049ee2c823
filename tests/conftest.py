"""Shared test configuration: Hypothesis profiles and the requirement marker."""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "fuzz",
    max_examples=5000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def pytest_configure(config):
    config.addinivalue_line("markers", "req(*ids): the requirement ids a test checks")
    config.addinivalue_line("markers", "slow: builds wheels or runs external tools")
    _refuse_parallel_snapshot_update(config)


def _refuse_parallel_snapshot_update(config):
    """syrupy under several xdist workers deletes snapshots other workers used: refuse before any worker starts."""
    import pytest

    if not config.getoption("--snapshot-update", default=False) or hasattr(config, "workerinput"):
        return
    workers = config.getoption("numprocesses", default=None)
    if workers in ("auto", "logical"):
        workers = os.cpu_count() or 1
    if workers and int(workers) > 1:
        raise pytest.UsageError(
            f"refusing --snapshot-update with {workers} xdist workers; rerun with -n 0 (or -n 1)"
        )


NODE_ADAPTER_DIR = Path(__file__).resolve().parents[1] / "conformance" / "adapters" / "node-dsh-session"


def _node_adapter_installed() -> bool:
    return (NODE_ADAPTER_DIR / "node_modules" / "@deepseek-ai" / "dsh-session" / "package.json").is_file()


@pytest.fixture(scope="session")
def node_adapter_dir() -> Path:
    """The Node adapter folder with its pinned packages installed (`npm ci`), or a skip without node/npm.

    xdist workers may get here at the same time and `npm ci` starts by deleting
    node_modules, so the install runs under an exclusive file lock.
    """
    npm = shutil.which("npm")
    if shutil.which("node") is None or npm is None:
        pytest.skip("node and npm are not on PATH: the published TypeScript package cannot be run here")
    if not _node_adapter_installed():
        digest = hashlib.sha256(bytes(NODE_ADAPTER_DIR)).hexdigest()[:12]
        lock_path = Path(tempfile.gettempdir()) / f"sessionspec-npm-ci-{digest}.lock"
        with open(lock_path, "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not _node_adapter_installed():
                done = subprocess.run(
                    [npm, "ci", "--prefix", str(NODE_ADAPTER_DIR), "--no-audit", "--no-fund"],
                    capture_output=True, text=True, timeout=300, check=False,
                )
                assert done.returncode == 0, f"npm ci failed:\n{done.stdout}\n{done.stderr}"
    return NODE_ADAPTER_DIR
