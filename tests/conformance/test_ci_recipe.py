"""docs/ci.md: the workflow's `run:` steps, executed in order against the reference adapter."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from sessionspec import __version__

ROOT = Path(__file__).resolve().parents[2]
RECIPE = ROOT / "docs" / "ci.md"


def workflow() -> str:
    text = RECIPE.read_text(encoding="utf-8")
    blocks = re.findall(r"```yaml\n(.*?)```", text, re.DOTALL)
    assert len(blocks) == 1, "docs/ci.md holds one workflow"
    return blocks[0]


def run_steps(yaml_text: str) -> list[str]:
    """Every ``run:`` value: a one-line command, or a ``|`` block (the lines indented under it)."""
    lines = yaml_text.splitlines()
    steps: list[str] = []
    for i, line in enumerate(lines):
        m = re.match(r"^(\s*)(?:- )?run: (.*)$", line)
        if not m:
            continue
        if m.group(2).strip() != "|":
            steps.append(m.group(2))
            continue
        indent = len(m.group(1))
        body = []
        for follow in lines[i + 1:]:
            if follow.strip() and len(follow) - len(follow.lstrip()) <= indent:
                break
            body.append(follow)
        width = min(len(b) - len(b.lstrip()) for b in body if b.strip())
        steps.append("\n".join(b[width:] for b in body).strip())
    return steps


def test_the_recipe_pins_this_release_and_its_run_steps_pass(tmp_path):
    text = workflow()
    assert f'"sessionspec=={__version__}"' in text  # the install step names the release these docs describe
    steps = run_steps(text)
    assert len(steps) == 4 and steps[0].startswith("python -m pip install")
    (tmp_path / "sessionspec-expect.json").write_text('{"implementation": "sessionspec-reference", "failures": []}\n',
                                                      encoding="utf-8")
    summary = tmp_path / "step-summary.md"
    env = {**os.environ, "ADAPTER": f"{sys.executable} -m sessionspec.conformance.reference_adapter",
           "GITHUB_STEP_SUMMARY": str(summary), "PIP_NO_INDEX": "1",  # installed already: never the network
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    for step in steps:
        done = subprocess.run(["bash", "-eo", "pipefail", "-c", step], cwd=tmp_path, env=env, capture_output=True,
                              text=True, timeout=600, check=False)
        assert done.returncode == 0, f"{step}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    for name in ("conformance.jsonl", "conformance.xml", "conformance.html"):  # what the upload step names
        assert (tmp_path / name).stat().st_size > 0 and name in text
    page = summary.read_text(encoding="utf-8")
    assert page.startswith("## sessionspec conformance\n") and "✅ ok" in page
