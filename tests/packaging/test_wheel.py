"""The spec data must load from an installed wheel, not only from the checkout."""

from __future__ import annotations

import os
import site
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_wheel_installs_and_runs_from_its_own_data(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "--wheel-dir", str(dist), str(ROOT)],
        check=True,
        capture_output=True,
        cwd=tmp_path,
    )
    (wheel,) = dist.glob("sessionspec-*.whl")

    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--no-deps", "--no-index", str(wheel)],
        check=True,
        capture_output=True,
    )
    # Dependencies come from this test environment's site-packages, added as plain
    # paths: .pth files there (the editable install's finder) are not processed, so
    # `sessionspec` itself can only be imported from the wheel.
    new_site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True, capture_output=True, text=True,
        ).stdout.strip()
    )
    (new_site / "_test_deps.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}

    probe = subprocess.run(
        [str(python), "-c", "import sessionspec.spec as s; print(s.__file__)"],
        check=True, capture_output=True, text=True, cwd=tmp_path, env=env,
    )
    assert str(env_dir) in probe.stdout, probe.stdout

    script = env_dir / "bin" / "sessionspec"
    version = subprocess.run([str(script), "--version"], capture_output=True, text=True, cwd=ROOT, env=env)
    assert version.returncode == 0, version.stderr
    assert version.stdout.startswith("sessionspec ")
    check = subprocess.run([str(script), "catalog", "--check"], capture_output=True, text=True, cwd=ROOT, env=env)
    assert check.returncode == 0, check.stdout + check.stderr
