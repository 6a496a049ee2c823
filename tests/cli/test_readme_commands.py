"""The README's "Before, during and after a run" commands, run as written (the reference adapter, a temp folder)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_readme_run_commands_work_as_written(tmp_path):
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("### Before, during and after a run", 1)[1]
    block = re.search(r"```sh\n(.*?)```", section, re.DOTALL)
    assert block is not None
    commands = [line for line in block.group(1).splitlines() if line.strip()]
    assert {c.split()[1] for c in commands} == {"smoke", "conformance", "summary", "registry"}
    (tmp_path / "tests").symlink_to(ROOT / "tests")  # the command names paths of a checkout
    summary = tmp_path / "summary.md"
    env = {**os.environ, "GITHUB_STEP_SUMMARY": str(summary),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    for command in commands:
        done = subprocess.run(["bash", "-eo", "pipefail", "-c", command], cwd=tmp_path, env=env, capture_output=True,
                              text=True, timeout=300, check=False)
        assert done.returncode == 0, f"{command}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
    assert summary.read_text(encoding="utf-8").startswith("## sessionspec conformance")
