"""Format revisions: resolution of a child onto its parent, nothing stated twice, per-revision facts."""

from __future__ import annotations

import json
from typing import Any

import pytest
from sessionspec.spec import load_spec
from sessionspec.spec import revisions as rv
from sessionspec.spec.loader import REGISTRY_META_ID, SCHEMA_BASE, json_pointer
from spec_data import load_spec_json

PINNED, PUBLISHED = "2f74ac98ba", "b150a551b8"
CHILDREN = [r for r in rv.known_revisions() if rv.resolve_revision(r).parent is not None]


def test_the_pinned_revision_is_the_default_and_releases_resolve_to_theirs() -> None:
    assert rv.DEFAULT_REVISION == PINNED
    assert load_spec() is load_spec(revision=PINNED)
    assert load_spec().revision.id == PINNED
    for release in ("0.1.0-rc.6", "0.1.0-rc.7", "0.1.0-rc.8", "0.1.1-rc.2", "@deepseek-ai/dsh-session@0.1.1-rc.2"):
        assert rv.resolve_revision(release).id == PUBLISHED
    assert rv.resolve_revision("b150a551b8d465e31e418e1b2eaf5e79bbb7d28e").id == PUBLISHED
    assert rv.resolve_revision("B150A551").id == PUBLISHED  # a commit name, any case


@pytest.mark.parametrize("name", ["0.0.1-rc.1", "deadbeef00", "", "b15", "b150a551b8-evil", "2f74ac98ba/../x",
                                  "b150a551b8 ; rm", "b150a551b8" + "0" * 31, "0.1.1-rc.2x"])
def test_an_unknown_revision_names_every_known_one(name: str) -> None:
    with pytest.raises(rv.UnknownRevision) as info:
        load_spec(revision=name)
    message = str(info.value)
    assert PINNED in message and PUBLISHED in message and "0.1.1-rc.2" in message


def test_revision_files_match_their_meta_schemas() -> None:
    spec = load_spec()
    assert list(spec.validator(SCHEMA_BASE + "meta/revisions.json").iter_errors(load_spec_json("revisions.json"))) == []
    for rid in CHILDREN:
        doc = load_spec_json("revisions", rid, "changes.json")
        assert list(spec.validator(SCHEMA_BASE + "meta/revision-changes.json").iter_errors(doc)) == [], rid
        for name, events in _added_registry_files(rid):
            assert list(spec.validator(REGISTRY_META_ID).iter_errors(events)) == [], name


def _added_registry_files(rid: str) -> list[tuple[str, Any]]:
    root = rv.resolve_revision(rid).root()
    assert root is not None
    events = root.joinpath("events")
    if not events.is_dir():
        return []  # a revision that adds no event type has no events/ folder
    return [(f.name, json.loads(f.read_text(encoding="utf-8"))) for f in events.iterdir() if f.name.endswith(".json")]


# ------------------------------------------------------------------ nothing stated twice


def _changed_keys(parent: Any, patch: Any, path: tuple[str, ...] = ()) -> list[str]:
    """Pointers of patch members that restate the parent's value (an empty list = every member changes something)."""
    same: list[str] = []
    if not isinstance(patch, dict) or not isinstance(parent, dict):
        return [json_pointer(path)] if patch == parent else []
    for key, value in patch.items():
        if value is None:
            if key not in parent:
                same.append(json_pointer((*path, key)) + " (removes an absent key)")
            continue
        same += _changed_keys(parent.get(key), value, (*path, key)) if key in parent else []
    return same


@pytest.mark.parametrize("rid", CHILDREN)
def test_a_child_revision_restates_nothing_its_parent_already_says(rid: str) -> None:
    rev = rv.resolve_revision(rid)
    parent = load_spec(revision=rev.parent)
    child = load_spec(revision=rid)
    changes = rev.changes
    restated: list[str] = []
    restated += [f"constants{p}" for p in _changed_keys(dict(parent.constants), changes.get("constants", {}))]
    for schema_id, patch in changes.get("schemas", {}).items():
        restated += [f"{schema_id}#{p}" for p in _changed_keys(parent.schemas[schema_id], patch)]
    for event_type, patch in changes.get("events", {}).get("changed", {}).items():
        restated += [f"event {event_type}{p}" for p in _changed_keys(parent.events[event_type], patch)]
    for event_type, rename in changes.get("events", {}).get("renamed", {}).items():
        restated += [f"event {event_type}{p}" for p in _changed_keys(parent.events[event_type], rename.get("patch", {}))]
    for section, table in (("requirements", parent.requirements), ("decisions", parent.decisions),
                           ("errors", parent.error_codes)):
        for key, patch in changes.get(section, {}).get("changed", {}).items():
            restated += [f"{section} {key}{p}" for p in _changed_keys(table[key], patch)]
    assert restated == []
    # Files the revision adds hold only what the parent lacks, and none is a renamed copy of a parent schema.
    parent_bodies = {json.dumps({k: v for k, v in d.items() if k != "$id"}, sort_keys=True) for d in parent.schemas.values()}
    for schema_id, where in child.schema_files.items():
        if where.startswith(f"revision {rid}/"):
            assert schema_id not in parent.schemas, schema_id
            body = {k: v for k, v in child.schemas[schema_id].items() if k != "$id"}
            assert json.dumps(body, sort_keys=True) not in parent_bodies, schema_id
    for _name, doc in _added_registry_files(rid):
        for entry in doc["events"]:
            assert entry["type"] not in parent.events


# ------------------------------------------------------------------ one change, every consumer


def test_a_declared_change_reaches_schemas_registry_requirements_and_constants() -> None:
    pinned, published = load_spec(), load_spec(revision=PUBLISHED)
    steering = {"type": "steering/message", "seq": 0, "time": 0, "surfaceOp": "append",
                "data": {"content": [], "source": {"kind": "user"}, "turn": 1}}
    assert list(pinned.event_validator().iter_errors(steering)) == []
    assert [e.message for e in published.event_validator().iter_errors(steering)] != []  # no longer a surface type
    assert "steering/message" not in published.events and "steering/message" in pinned.events
    assert published.surface_types == {"user/message", "assistant/message", "tool/result"}
    assert list(published.constants["surfaceTypes"]) == sorted(published.surface_types, key=list(published.constants["surfaceTypes"]).index)
    assert "compaction/start" in published.events and "compact/start" not in published.events
    assert published.events["compaction/start"]["renamedFrom"] == "compact/start"
    assert "OOB-1" not in published.requirements and "OOB-1" in pinned.requirements
    assert all("OOB-1" not in e["requirements"] for e in published.events.values())
    descendants = [r for r in rv.known_revisions() if PUBLISHED in [c.id for c in rv.revision_chain(r)]]
    assert published.requirements["SEED-17"]["revisions"] == descendants  # added by PUBLISHED, kept by its children
    assert pinned.requirements["SEED-3"]["revisions"] == list(rv.known_revisions())
    assert published.requirements["SEED-3"]["text"] != pinned.requirements["SEED-3"]["text"]
    negative_time = {"type": "x/y", "seq": 0, "time": -5, "data": None, "ignorable": True}
    assert list(published.event_validator().iter_errors(negative_time)) == []
    assert len(list(pinned.event_validator().iter_errors(negative_time))) == 2


@pytest.mark.parametrize("rid", rv.known_revisions())
def test_every_example_of_every_revision_is_judged_by_that_revisions_schemas(rid: str) -> None:
    spec = load_spec(revision=rid)
    validator = spec.event_validator()
    wrong: list[str] = []
    for event_type, entry in spec.events.items():
        for example in entry["examples"]["valid"]:
            if example["event"]["type"] != event_type or list(validator.iter_errors(example["event"])):
                wrong.append(f"{event_type}: valid example {example['description']!r} is rejected")
        for example in entry["examples"]["invalid"]:
            paths = [json_pointer(e.absolute_path) for e in validator.iter_errors(example["event"])]
            if example["event"]["type"] != event_type or example["path"] not in paths:
                wrong.append(f"{event_type}: invalid example {example['reason']!r} not rejected at {example['path']} ({paths})")
    assert wrong == []


@pytest.mark.parametrize("rid", rv.known_revisions())
def test_requirement_order_and_references_hold_per_revision(rid: str) -> None:
    spec = load_spec(revision=rid)
    ids = list(spec.requirements)
    assert len(ids) == len(set(ids))
    for entry in spec.events.values():
        assert set(entry["requirements"]) <= set(ids), entry["type"]
    for code in spec.error_codes.values():
        assert set(code["requirements"]) <= set(ids), code["code"]
    for req in spec.requirements.values():
        assert rid in req["revisions"]
        assert set(req.get("codes") or ()) <= set(spec.error_codes), req["id"]


def test_merge_patch_follows_rfc_7396() -> None:
    target = {"a": "b", "c": {"d": "e", "f": "g"}, "l": [1, 2]}
    assert rv.merge_patch(target, {"a": "z", "c": {"f": None}, "l": [3]}) == {"a": "z", "c": {"d": "e"}, "l": [3]}
    assert target == {"a": "b", "c": {"d": "e", "f": "g"}, "l": [1, 2]}
    assert rv.merge_patch({"a": 1}, ["x"]) == ["x"]


def test_merge_patch_keeps_the_target_order_and_shares_nothing_with_its_arguments() -> None:
    """Each member is copied once (#24): the result still lists the target's members in its order, the patch's new
    ones after them, and changing the result changes neither argument."""
    target = {"z": {"k": [1]}, "a": {"x": 1, "y": {"deep": [2]}}, "m": 3}
    patch = {"n": {"new": [4], "gone": None}, "a": {"y": {"more": [5]}, "x": None}, "m": None}
    result = rv.merge_patch(target, patch)
    assert list(result) == ["z", "a", "n"] and list(result["a"]) == ["y"] and list(result["a"]["y"]) == ["deep", "more"]
    assert result == {"z": {"k": [1]}, "a": {"y": {"deep": [2], "more": [5]}}, "n": {"new": [4]}}
    result["z"]["k"].append(9)
    result["a"]["y"]["deep"].append(9)
    result["a"]["y"]["more"].append(9)
    result["n"]["new"].append(9)
    assert target == {"z": {"k": [1]}, "a": {"x": 1, "y": {"deep": [2]}}, "m": 3}
    assert patch == {"n": {"new": [4], "gone": None}, "a": {"y": {"more": [5]}, "x": None}, "m": None}


def test_merge_patch_owned_gives_merge_patch_and_copies_what_comes_from_the_patch() -> None:
    """The loader patches the schema documents it just read where they are (#24): the same value and member order
    as `merge_patch`, and nothing of the patch (a revision's changes, shared by every load) in the result."""
    patch = {"n": {"new": [4], "gone": None}, "a": {"y": {"more": [5]}, "x": None}, "m": None, "z": [1]}
    for target in ({"z": {"k": [1]}, "a": {"x": 1, "y": {"deep": [2]}}, "m": 3}, {"a": [1]}, {}, [1], "s"):
        expected = rv.merge_patch(target, patch)
        result = rv.merge_patch_owned(json.loads(json.dumps(target)), patch)
        assert json.dumps(result) == json.dumps(expected)
        result["n"]["new"].append(9)
        result["z"].append(9)
        assert patch == {"n": {"new": [4], "gone": None}, "a": {"y": {"more": [5]}, "x": None}, "m": None, "z": [1]}
    assert rv.merge_patch_owned({"a": 1}, ["x"]) == ["x"]


class _Opaque:
    """An object no JSON value holds: `copy.deepcopy` copies it (with its state)."""

    def __init__(self, state: Any) -> None:
        self.state = state

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Opaque) and other.state == self.state

    __hash__ = None  # type: ignore[assignment]


def _same_copy(ours: Any, theirs: Any, original: Any, pairs: dict[int, int], sources: dict[int, int]) -> None:
    """``ours`` is the copy `copy.deepcopy` made as ``theirs`` of ``original``: the same types and values, a new
    object wherever deepcopy made one (the same object where it kept one), and a member shared in the original
    shared alike in both copies (``pairs``: our copy's id -> deepcopy's, ``sources``: our copy's id -> the original's)."""
    assert type(ours) is type(theirs)
    if theirs is original:
        assert ours is original
        return
    assert ours is not original
    if id(ours) in pairs or id(theirs) in pairs.values():
        assert pairs.get(id(ours)) == id(theirs) and sources[id(ours)] == id(original)
        return
    pairs[id(ours)], sources[id(ours)] = id(theirs), id(original)
    if isinstance(theirs, dict):
        assert list(ours) == list(theirs)
        for key in theirs:
            _same_copy(ours[key], theirs[key], original[key], pairs, sources)
    elif isinstance(theirs, (list, tuple)):
        assert len(ours) == len(theirs)
        for a, b, c in zip(ours, theirs, original):
            _same_copy(a, b, c, pairs, sources)
    elif isinstance(theirs, _Opaque):
        _same_copy(ours.state, theirs.state, original.state, pairs, sources)
    else:
        assert ours == theirs


def test_the_loaders_copy_is_deepcopys() -> None:
    """`merge_patch` copies JSON data without `copy`'s dispatch (#24); the copy is the one `copy.deepcopy` makes: a
    member shared within the value is shared in the copy, scalars kept, any other object copied by deepcopy."""
    import copy
    import random

    shared_list: list[Any] = [1, {"x": None}]
    shared_dict: dict[str, Any] = {"s": shared_list}
    opaque = _Opaque([shared_list, 2.5])
    values: list[Any] = [
        {"a": shared_list, "b": shared_list, "c": {"d": shared_dict, "e": [shared_dict, shared_list]}},
        [shared_list, (shared_list, shared_dict), opaque, opaque, {"o": opaque}],
        {"t": (1, [2]), "f": frozenset({1}), "n": None, "b": True, "i": 2**70, "z": -0.0, "u": "\ud800"},
        {1: [1], (2, 3): {"k": [4]}, "s": {5}},
        "text", 3, None, [], {},
    ]
    rng = random.Random(24)

    def json_value(depth: int) -> Any:
        if depth == 0 or rng.random() < 0.3:
            return rng.choice([None, True, False, 0, -1, 2**60, 1.5, float("inf"), "", "a", "é"])
        if rng.random() < 0.5:
            return [json_value(depth - 1) for _ in range(rng.randrange(4))]
        return {rng.choice("abcdef"): json_value(depth - 1) for _ in range(rng.randrange(4))}

    values += [json_value(5) for _ in range(300)]
    for value in values:
        ours, theirs = rv._copied(value), copy.deepcopy(value)
        assert ours == theirs
        _same_copy(ours, theirs, value, {}, {})
    target = {"a": shared_list, "b": shared_list}
    result = rv.merge_patch(target, {"c": [1]})
    assert result["a"] is result["b"] and result["a"] is not shared_list  # as deepcopy shares it


@pytest.mark.parametrize("rid", rv.known_revisions())
def test_every_type_a_revision_knows_has_a_registry_entry_with_a_constraining_payload_schema(rid: str) -> None:
    """No payload of a type a revision knows (its registry, `Rules.known_types`) is left open."""
    spec = load_spec(revision=rid)
    assert "knownEventTypes" not in spec.constants  # derived from the registry, never a second list
    for event_type, entry in spec.events.items():
        validator = spec.validator(entry["payloadSchema"])
        assert not (validator.is_valid("x") and validator.is_valid([]) and validator.is_valid({"x": 1})), event_type


def test_published_plugin_types_are_checked_at_the_published_revision_only() -> None:
    """A payload schema declared once in the revision data reaches the event validator of that revision alone."""
    pinned, published = load_spec(), load_spec(revision=PUBLISHED)
    run = {"type": "command/run", "seq": 3, "time": 0, "data": {"commandId": "c1", "name": "compact", "source": {"kind": "user"}}}
    assert "command/run" in published.events and "command/run" not in pinned.events
    assert list(published.event_validator().iter_errors(run)) == []
    bad = {**run, "data": {"commandId": "c1", "name": "compact", "source": "user"}}
    assert [json_pointer(e.absolute_path) for e in published.event_validator().iter_errors(bad)] == ["/data/source"]
    assert list(pinned.event_validator().iter_errors(bad)) == []  # an unregistered type: envelope only
    retry = published.events["llm/retry"]["examples"]["valid"][0]["event"]
    assert list(published.event_validator().iter_errors(retry)) == []
    assert list(pinned.event_validator().iter_errors(retry)) != []  # retryId, provider, mode, policyKey are new


def test_published_message_sources_headers_and_dialects_follow_the_release_commit() -> None:
    """What the release commit's own logs carry: context forms on plugin sources, header origin and preset, ..."""
    pinned, published = load_spec(), load_spec(revision=PUBLISHED)
    source = SCHEMA_BASE + "type/message-source.json"
    snapshot = {"kind": "plugin", "plugin": "@deepseek-ai/dsh-system-prompt", "form": "snapshot",
                "sections": [{"name": "sandbox:policy", "text": "Current DSH file policy: read-only."}]}
    checkpoint = {"kind": "plugin", "plugin": "compact", "compactionId": "cmp-1"}
    for value in (snapshot, checkpoint, {"kind": "plugin", "plugin": "p", "form": "notice", "summary": "done"},
                  {"kind": "user", "rpcId": "r1", "clientTimeZone": "Europe/Paris"}):
        assert published.validator(source).is_valid(value) and not pinned.validator(source).is_valid(value), value
    for value in ({**snapshot, "sections": None} | {"form": "catalog"}, {"kind": "plugin", "plugin": "p", "form": "notice"},
                  {"kind": "plugin", "plugin": "p", "form": "slides"}):
        assert not published.validator(source).is_valid(value), value
    goal = {"kind": "goal", "goalId": "g1", "revision": 1, "round": 2}
    change = {"kind": "goal/change", "version": 1, "operation": "clear", "cleared": {"id": "g1", "revision": 1}, "clearedAt": 0}
    assert published.validator(source).is_valid(goal) and not published.validator(source).is_valid({**goal, "change": change})
    assert pinned.validator(source).is_valid({**goal, "change": change})
    header = {"type": "session", "version": 0, "id": "s", "createdAt": 0, "delegationDepth": 1, "origin": "subagent",
              "agentPreset": "reviewer"}
    jsonl_header = SCHEMA_BASE + "storage/jsonl-header.json"
    assert published.validator(jsonl_header).is_valid(header) and not pinned.validator(jsonl_header).is_valid(header)
    config = SCHEMA_BASE + "type/llm-call-config.json"
    effort = {"provider": "deepseek", "model": "deepseek-reasoner", "reasoningEffort": "high"}
    assert published.validator(config).is_valid(effort) and not pinned.validator(config).is_valid(effort)
    assert not published.validator(config).is_valid({**effort, "reasoningEffort": ""})
    dialect = SCHEMA_BASE + "type/hook-dialect.json"
    assert published.validator(dialect).is_valid("claude-code") and not published.validator(dialect).is_valid("claude")


@pytest.mark.parametrize("rid", rv.known_revisions())
def test_the_jsonl_texts_state_the_revisions_header_keys_and_version_rule(rid: str) -> None:
    """JSONL-1/-2/-12 say what `jsonl.headerKeyOrder` and `jsonl.versionRefusedOnRead` say, and the reference does it."""
    from sessionspec.reference import jsonl
    from sessionspec.spec.errors import JsonlError

    spec = load_spec(revision=rid)
    constants, texts = spec.constants["jsonl"], {r: spec.requirements[r]["text"] for r in ("JSONL-1", "JSONL-2", "JSONL-12")}
    keys = constants["headerKeyOrder"]
    assert ", ".join(f"`{k}`" for k in keys) in texts["JSONL-1"]
    assert ", ".join(f"`{k}`" for k in keys[1:]) in texts["JSONL-2"]
    refused = constants["versionRefusedOnRead"]
    for rule in ("JSONL-2", "JSONL-12"):
        assert f"`jsonl.versionRefusedOnRead` is {'true' if refused else 'false'}" in texts[rule], rule
    full = {"version": 0, "id": "s", "createdAt": 1, "cwd": "/w", "parentSession": "p", "seedLength": 0,
            "origin": "subagent", "delegationDepth": 1, "agentPreset": "a", "extra": True}
    assert list(jsonl.header_line(full, rid)) == [k for k in keys if k == "type" or k in full]
    newer = b'{"type":"session","version":1,"id":"s","createdAt":1}\n'  # no delegationDepth: a bad shape too
    with pytest.raises(JsonlError) as info:
        jsonl.read_artifact(newer, rid)
    assert info.value.code == ("JSONL_VERSION" if refused else "JSONL_BAD_HEADER")
