"""`RevisionLike`: every ``revision=`` parameter takes an id, a release, a `Revision`, its `Rules` or None.

Typing the parameters (instead of ``Any``) found readers that passed a `Rules` on to the spec loader,
which knows only ids and `Revision` objects: `header_line(..., revision=rules)` raised UnknownRevision.
"""

from __future__ import annotations

import pytest
from sessionspec.reference import jsonl
from sessionspec.reference.revision import revision_of, rules_for
from sessionspec.reference.sqlite_store import layouts_for
from sessionspec.spec.revisions import known_revisions, resolve_revision

HEADER = {"version": 0, "id": "s", "createdAt": 1767225600000, "delegationDepth": 0}


@pytest.mark.parametrize("rid", known_revisions())
def test_each_form_of_a_revision_names_the_same_one(rid: str) -> None:
    forms = [rid, resolve_revision(rid), rules_for(rid)]
    assert {revision_of(form).id for form in forms} == {rid}
    assert len({tuple(jsonl.header_line(HEADER, revision=form)) for form in forms}) == 1
    line = jsonl.header_line(HEADER, revision=rid)
    assert all(jsonl.header_from_line(line, revision=form) == jsonl.header_from_line(line, revision=rid) for form in forms)
    assert all(layouts_for(form) == layouts_for(rid) for form in forms)
