"""CONTRIBUTING.md's recipe "add a core event type", performed on a temporary copy of the repository.

The recipe's claim (issue 26): a new core type is its registry entry, its payload schema, a vector and a
CHANGELOG line; everything else is regenerated (catalogs, catalog snapshots, `tools/validator/core_fast.py`,
whose diff stays local), and no hand-kept list (openness subjects, a revision's known types, counts) needs
an edit. This test copies the tracked files, performs exactly those steps with the copy's own code, and
checks which files changed, that every generated file's diff is local, and that the copy's consistency
tests and checks pass.
"""

from __future__ import annotations

import difflib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NEW_TYPE = "session/note"
SCHEMA_ID = "https://sessionspec.dev/schema/payload/session/note.json"
HAND_EDITED = {"spec/events/session.json", "spec/schemas/payload/session/note.json", "conformance/vectors/append.json",
               "CHANGELOG.md"}
GENERATED_PREFIXES = ("catalogs/", "tests/catalog/__snapshots__/", "tools/validator/core_fast.py",
                      "conformance/schema-witnesses.json", "spec/schema_types.py", "spec/error_codes.py")
LOCAL = 120  # changed lines a generated file may show for one small type: its own part and the lists naming it

pytestmark = pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(),
                                reason="needs the repository's git checkout to copy its tracked files")


def _copy(into: Path) -> Path:
    listed = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True, check=True).stdout
    for rel in filter(None, listed.decode("utf-8").split("\0")):
        source = ROOT / rel
        if source.is_file() and not source.is_symlink():
            (into / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, into / rel)
    return into


def _import_tree(source: Path, into: Path) -> Path:
    """An import root where ``sessionspec`` is the copy's ``tools/`` with spec/reference/conformance inside
    (the benchmark's `_tree`: the mapping pyproject.toml states, for a tree that is not installed)."""
    spec = importlib.util.spec_from_file_location("sessionspec_bench_versus", ROOT / "bench" / "bench_versus.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    tree: Path = module._tree(source, into)
    return tree


_CLI = "import sys; from sessionspec.cli import main; main()"
# Facts once: with no edit of spec/openness.json or a revision's changes.json, the new payload is an openness
# subject and the new type is known to every revision (its registry, less `events.removed`).
_FACTS = f"""
from sessionspec.spec.loader import load_spec
from sessionspec.spec.revisions import known_revisions
from sessionspec.reference.revision import rules_for
for rid in known_revisions():
    spec = load_spec(revision=rid)
    assert {NEW_TYPE!r} in spec.events, rid
    assert any({SCHEMA_ID!r} in s.get("schemas", ()) for s in spec.openness if s.get("schemasOf")), rid
    known = rules_for(rid).load_known_types
    assert known is None or {NEW_TYPE!r} in known, rid
"""


def _python(tree: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, check=False)


_ADD_VECTOR = """
import json, sys
from sessionspec.conformance.authoring import draft_case, format_case_file
path = "conformance/vectors/append.json"
doc = json.load(open(path, encoding="utf-8"))
case = draft_case("a session/note is a log-only append: committed with its note", ["APPEND-6", "APPEND-7"], "append",
                  {"appends": [{"type": "session/note", "data": {"note": "kept"}}]})
open(path, "w", encoding="utf-8").write(format_case_file(doc["area"], doc["description"], [*doc["cases"], case]))
"""


def _perform_recipe(copy: Path) -> None:
    """Steps 1, 2 and 4 of the recipe by hand (entry, schema, CHANGELOG); the vector as CONTRIBUTING drafts it."""
    events = copy / "spec/events/session.json"
    doc = json.loads(events.read_text(encoding="utf-8"))
    event = {"type": NEW_TYPE, "seq": 3, "time": 1767225600000, "data": {"note": "kept for operators"}}
    doc["events"].append({
        "type": NEW_TYPE, "owner": "@deepseek-ai/dsh-session", "class": "log-only", "outOfBand": False,
        "enclosure": "turn", "description": "A note kept in the log for operators.", "payloadSchema": SCHEMA_ID,
        "provenance": "Log-only: carries neither surfaceOp nor sourceEventSeqs (SURF-3, APPEND-6).",
        "requirements": ["APPEND-6"],
        "examples": {"valid": [{"description": "A note.", "event": event}],
                     "invalid": [{"event": {**event, "data": {"note": 7}}, "reason": "A note is text.", "path": "/data/note"}]},
    })
    events.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": SCHEMA_ID, "title": "session/note payload",
              "type": "object", "required": ["note"], "properties": {"note": {"type": "string", "minLength": 1}},
              "additionalProperties": False}
    (copy / "spec/schemas/payload/session/note.json").write_text(json.dumps(schema, indent=2) + "\n", encoding="utf-8")
    changelog = copy / "CHANGELOG.md"
    text = changelog.read_text(encoding="utf-8")
    changelog.write_text(text.replace("## Unreleased\n", "## Unreleased\n\n### Added\n- `session/note`.\n", 1), encoding="utf-8")


def _changed(original: Path, copy: Path) -> set[str]:
    out = set()
    for path in copy.rglob("*"):
        if path.is_file() and "__pycache__" not in path.parts and ".pytest_cache" not in path.parts:
            rel = path.relative_to(copy).as_posix()
            before = original / rel
            if not before.is_file() or before.read_bytes() != path.read_bytes():
                out.add(rel)
    return out


def _changed_lines(before: Path, after: Path) -> int:
    """Lines added or removed between two versions of a text file (a new file: all its lines)."""
    old = before.read_text(encoding="utf-8").splitlines() if before.is_file() else []
    new = after.read_text(encoding="utf-8").splitlines()
    return sum(1 for line in difflib.unified_diff(old, new, lineterm="", n=0)
               if line[:1] in "+-" and line[:3] not in ("+++", "---"))


def test_adding_a_core_event_type_touches_only_the_recipes_files(tmp_path: Path) -> None:
    copy = _copy(tmp_path / "repo")
    tree = _import_tree(copy, tmp_path / "import")
    _perform_recipe(copy)
    drafted = _python(tree, copy, "-c", _ADD_VECTOR)
    assert drafted.returncode == 0, drafted.stderr
    # Step 3: regenerate, as CONTRIBUTING says.
    for command in (["-c", _CLI, "catalog", "--force"], ["-m", "sessionspec.validator.pregen"],
                    ["-m", "sessionspec.conformance.schema_bounds", "--write"],
                    ["-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", "tests/catalog",
                     "--snapshot-update"]):
        done = _python(tree, copy, *command)
        assert done.returncode == 0, (command, done.stdout[-2000:], done.stderr[-2000:])

    changed = _changed(ROOT, copy)
    assert changed >= HAND_EDITED
    assert {rel for rel in changed - HAND_EDITED if not rel.startswith(GENERATED_PREFIXES)} == set()
    # Every generated file's diff is local: the new type's definitions and the lists naming it, never a rewrite.
    sizes = {rel: _changed_lines(ROOT / rel, copy / rel) for rel in sorted(changed - HAND_EDITED)}
    print("generated diffs:", sizes)
    assert sizes["tools/validator/core_fast.py"] > 0
    # core_fast.py holds each installed revision's tables (pregen: keyed by fingerprint): a core type is local in each
    from sessionspec.spec.revisions import known_revisions

    limit = {"tools/validator/core_fast.py": LOCAL * len(known_revisions())}
    assert {rel: n for rel, n in sizes.items() if n > limit.get(rel, LOCAL)} == {}

    # The copy is consistent: its checks and the tests that tie the vocabulary together pass (the vector file
    # was written by `format_case_file`, which refuses a file the vector loader would reject).
    checks = [["-c", _FACTS], ["-c", _CLI, "catalog", "--check"], ["-m", "sessionspec.validator.pregen", "--check"],
              ["-m", "sessionspec.conformance.schema_bounds"],
              ["-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "-p", "no:randomly", "tests/spec/test_schemas.py",
               "tests/spec/test_revisions.py", "tests/spec/test_registry.py", "tests/spec/test_add_event_type.py"]]
    for command in checks:
        done = _python(tree, copy, *command)
        assert done.returncode == 0, (command, done.stdout[-3000:], done.stderr[-2000:])
    log = copy / "note.jsonl"
    lines = [
        {"type": "session", "version": 0, "id": "s", "createdAt": 1767225600000, "delegationDepth": 0},
        {"type": NEW_TYPE, "seq": 0, "time": 1767225600000, "data": {"note": "kept"}},
    ]
    log.write_text("".join(json.dumps(v) + "\n" for v in lines), encoding="utf-8")
    for revision in ("2f74ac98ba", "b150a551b8"):  # known to the published revision too: its registry, derived
        done = _python(tree, copy, "-c", _CLI, "validate", "--level", "load", "--revision", revision, str(log))
        assert done.returncode == 0, (revision, done.stdout, done.stderr)
