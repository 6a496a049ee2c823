"""CONTRIBUTING.md's recipes "change a rule", "add an error code" and "add a revision", performed on a copy.

Like `test_recipes.py` (add an event type): each test copies the tracked files, performs exactly the recipe's
steps with the copy's own code, regenerates what the recipe says to regenerate, and checks which files
changed (the recipe's files, plus generated ones) and that the copy's own checks pass. The rule is the one
the issue tried (HDR-8: `delegationDepth` at most 16), so the schema-bound check must see the new `maximum`
witnessed by the recipe's vector.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from test_recipes import _CLI, ROOT, _changed, _copy, _import_tree, _python

pytestmark = pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(),
                                reason="needs the repository's git checkout to copy its tracked files")

DEPTH_LIMIT = 16


def _edit_json(path: Path, change) -> None:  # type: ignore[no-untyped-def]
    doc = json.loads(path.read_text(encoding="utf-8"))
    change(doc)
    path.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def _requirement(doc: dict, rid: str) -> dict:  # type: ignore[type-arg]
    return next(r for r in doc["requirements"] if r["id"] == rid)


def _tighten_hdr8_check(copy: Path, code: str) -> str:
    """Step "the rule's function": the reference module that raises HDR-8's depth code gains the limit."""
    holder = next(p for p in sorted((copy / "reference").glob("*.py"))
                  if '"HEADER_DELEGATION_DEPTH", requirement="HDR-8"' in p.read_text(encoding="utf-8"))
    text = holder.read_text(encoding="utf-8")
    anchor = re.search(r'\n( *)if "agentPreset" in keys', text)
    assert anchor, "recipe step: the HDR-8 depth check of the reference moved; update this test with it"
    indent = anchor[1]
    check = (f'\n{indent}if "delegationDepth" in record and _nonneg_safe(record["delegationDepth"]) '
             f'and record["delegationDepth"] > {DEPTH_LIMIT}:\n'
             f'{indent}    raise HeaderError("session header delegationDepth must be at most {DEPTH_LIMIT}", '
             f'"{code}", requirement="HDR-8")')
    holder.write_text(text[:anchor.start()] + check + text[anchor.start():], encoding="utf-8")
    return holder.relative_to(copy).as_posix()


def _limit_in_schema_and_text(copy: Path, code: str) -> None:
    _edit_json(copy / "spec/schemas/session/session-header.json",
               lambda d: d["properties"]["delegationDepth"].__setitem__("maximum", DEPTH_LIMIT))

    def text(doc: dict) -> None:  # type: ignore[type-arg]
        requirement = _requirement(doc, "HDR-8")
        requirement["text"] += f" A `delegationDepth` above {DEPTH_LIMIT} is rejected (`{code}`)."
        if code not in requirement["codes"]:
            requirement["codes"].append(code)
    _edit_json(copy / "spec/requirements.json", text)


_ADD_VECTOR = """
import json, sys
from sessionspec.conformance.authoring import draft_case, format_case_file
path = "conformance/vectors/hdr.json"
doc = json.load(open(path, encoding="utf-8"))
case = draft_case("a header whose delegationDepth is above 16 is rejected", ["HDR-8"], "load",
                  {"header": {"version": 0, "id": "s", "createdAt": 5, "delegationDepth": 17}})
assert case["expect"] == {"rejected": {"code": sys.argv[1]}}, case["expect"]
open(path, "w", encoding="utf-8").write(format_case_file(doc["area"], doc["description"], [*doc["cases"], case]))
"""


def _changelog(copy: Path, line: str) -> None:
    path = copy / "CHANGELOG.md"
    path.write_text(path.read_text(encoding="utf-8").replace("## Unreleased\n", f"## Unreleased\n\n- {line}\n", 1),
                    encoding="utf-8")


def _run(tree: Path, copy: Path, *commands: list[str]) -> None:
    for command in commands:
        done = _python(tree, copy, *command)
        assert done.returncode == 0, (command, done.stdout[-3000:], done.stderr[-2000:])


def _extra(changed: set[str], hand: set[str], generated: tuple[str, ...]) -> set[str]:
    return {rel for rel in changed - hand if not rel.startswith(generated)}


def test_changing_a_rule_touches_its_function_text_schema_vector_and_changelog(tmp_path: Path) -> None:
    copy = _copy(tmp_path / "repo")
    tree = _import_tree(copy, tmp_path / "import")
    _limit_in_schema_and_text(copy, "HEADER_DELEGATION_DEPTH")
    holder = _tighten_hdr8_check(copy, "HEADER_DELEGATION_DEPTH")
    _run(tree, copy, ["-c", _ADD_VECTOR, "HEADER_DELEGATION_DEPTH"])
    _changelog(copy, "HDR-8: a delegationDepth above 16 is rejected.")
    _run(tree, copy, ["-c", _CLI, "catalog", "--force"], ["-m", "sessionspec.validator.pregen"])

    hand = {"spec/requirements.json", "spec/schemas/session/session-header.json", holder,
            "conformance/vectors/hdr.json", "CHANGELOG.md"}
    changed = _changed(ROOT, copy)
    assert changed >= hand
    assert _extra(changed, hand, ("catalogs/", "tools/validator/core_fast.py")) == set()
    # The copy agrees with itself: the new bound has a witness (the vector), the vector passes on the copy's
    # reference, the generated artefacts are fresh.
    _run(tree, copy, ["-m", "sessionspec.conformance.schema_bounds"], ["-c", _CLI, "catalog", "--check"],
         ["-m", "sessionspec.validator.pregen", "--check"], ["-c", _CLI, "conformance", "--only", "HDR-8"])


def test_adding_an_error_code_touches_the_code_table_its_raiser_and_a_vector(tmp_path: Path) -> None:
    code = "HEADER_DELEGATION_TOO_DEEP"
    copy = _copy(tmp_path / "repo")
    tree = _import_tree(copy, tmp_path / "import")

    def add(doc: dict) -> None:  # type: ignore[type-arg]
        errors = doc["errors"]
        at = next(i for i, e in enumerate(errors) if e["code"] == "HEADER_DELEGATION_DEPTH") + 1
        errors.insert(at, {"code": code, "family": "HDR", "exception": "HeaderError", "requirements": ["HDR-8"],
                           "description": f"The header's `delegationDepth` is above {DEPTH_LIMIT}."})
    _edit_json(copy / "spec/errors.json", add)
    _limit_in_schema_and_text(copy, code)
    holder = _tighten_hdr8_check(copy, code)
    _run(tree, copy, ["-c", _ADD_VECTOR, code])
    _changelog(copy, f"`{code}` (HDR-8).")
    _run(tree, copy, ["-c", _CLI, "catalog", "--force"], ["-m", "sessionspec.validator.pregen"],
         ["-m", "sessionspec.conformance.docfacts"])

    hand = {"spec/errors.json", "spec/requirements.json", "spec/schemas/session/session-header.json", holder,
            "conformance/vectors/hdr.json", "CHANGELOG.md"}
    generated = ("catalogs/", "tools/validator/core_fast.py", "spec/error_codes.py", "docs/architecture.md")
    changed = _changed(ROOT, copy)
    assert changed >= hand | {"spec/error_codes.py", "docs/architecture.md"}  # the Literal and the code table
    assert _extra(changed, hand, generated) == set()
    assert f"'{code}'" in (copy / "spec/error_codes.py").read_text(encoding="utf-8")
    _run(tree, copy, ["-m", "sessionspec.conformance.docfacts", "--check"],
         ["-m", "sessionspec.validator.pregen", "--check"], ["-c", _CLI, "conformance", "--only", "HDR-8"],
         ["-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "-p", "no:randomly", "tests/spec/test_error_codes.py"])


NEW_REVISION = "c0ffee0001"


def test_adding_a_revision_touches_the_revision_list_and_its_changes(tmp_path: Path) -> None:
    copy = _copy(tmp_path / "repo")
    tree = _import_tree(copy, tmp_path / "import")

    def add(doc: dict) -> None:  # type: ignore[type-arg]
        doc["revisions"][NEW_REVISION] = {
            "parent": "b150a551b8", "title": "A later format", "date": "2026-12-01",
            "source": "a later commit of the session package", "releases": [],
            "notes": "HDR-8 caps delegationDepth at 16."}
    _edit_json(copy / "spec/revisions.json", add)
    folder = copy / "spec/revisions" / NEW_REVISION
    folder.mkdir()
    changes = {"$schema": "https://sessionspec.dev/schema/meta/revision-changes.json",
               "summary": "delegationDepth is at most 16.",
               "schemas": {"https://sessionspec.dev/schema/session/session-header.json":
                           {"properties": {"delegationDepth": {"maximum": DEPTH_LIMIT}}}}}
    (folder / "changes.json").write_text(json.dumps(changes, indent=2) + "\n", encoding="utf-8")
    _changelog(copy, f"Revision `{NEW_REVISION}`.")
    _run(tree, copy, ["-c", _CLI, "catalog", "--force"], ["-m", "sessionspec.validator.pregen"],
         ["-m", "sessionspec.conformance.docfacts"])

    hand = {"spec/revisions.json", f"spec/revisions/{NEW_REVISION}/changes.json", "CHANGELOG.md"}
    generated = ("catalogs/", "tools/validator/core_fast.py", "spec/error_codes.py", "docs/architecture.md")
    changed = _changed(ROOT, copy)
    assert changed >= hand
    assert _extra(changed, hand, generated) == set()
    done = _python(tree, copy, "-c", "from sessionspec.spec import load_spec; import sys; "
                   f"s = load_spec(revision={NEW_REVISION!r}); print(s.schemas['https://sessionspec.dev/schema/session/"
                   "session-header.json']['properties']['delegationDepth']['maximum'], len(s.events))")
    assert done.returncode == 0 and done.stdout.split()[0] == str(DEPTH_LIMIT), done.stderr[-2000:]
    _run(tree, copy, ["-c", _CLI, "catalog", "--check"], ["-m", "sessionspec.validator.pregen", "--check"],
         ["-c", _CLI, "conformance", "--revision", NEW_REVISION, "--only", "hdr"],
         ["-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "-p", "no:randomly", "tests/spec/test_revisions.py"])


def test_the_recipes_are_in_contributing() -> None:
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    for title in ("## Recipe: change a rule", "## Recipe: add an error code", "## Recipe: add a revision",
                  "## Recipe: add an event type"):
        assert title in text, title
    assert "tests/spec/test_recipes_more.py" in text

