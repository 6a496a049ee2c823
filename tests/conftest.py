"""Shared test configuration: Hypothesis profiles and the requirement marker."""

from __future__ import annotations

import os
import shutil
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


@pytest.fixture(scope="session")
def node_adapter_dir() -> Path:
    """The Node adapter folder with its pinned packages (and Node runtime) installed (`npm ci`), or a skip without node/npm.

    `npm_ci` serialises the xdist workers that get here together.
    """
    from sessionspec.conformance.compat import npm_ci

    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("node and npm are not on PATH: the published TypeScript package cannot be run here")
    npm_ci(NODE_ADAPTER_DIR)
    return NODE_ADAPTER_DIR


@pytest.fixture(scope="module")
def source_command(node_adapter_dir: Path) -> str:
    """The Node adapter's command for upstream's source at 2f74ac98ba (its build by
    conformance/adapters/upstream-source/build.mjs), or a skip where no such build is present."""
    import json
    import shlex

    build = NODE_ADAPTER_DIR.parent / "upstream-source" / "build" / "BUILD.json"
    try:
        built = json.loads(build.read_text(encoding="utf-8")).get("commit", "")
    except (OSError, ValueError):
        built = ""
    if not built.startswith("2f74ac98ba"):
        pytest.skip("no build of upstream's source at 2f74ac98ba here (conformance/adapters/upstream-source/build.mjs)")
    return shlex.join(["node", str(node_adapter_dir / "adapter.mjs"), "--target", "upstream-2f74ac98ba"])
