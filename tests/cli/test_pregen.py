"""The generated fast-path module (`sessionspec.validator.core_fast`): fresh, used, and equal to run-time compiling."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest
from sessionspec.spec.loader import load_spec
from sessionspec.spec.revisions import known_revisions
from sessionspec.validator import generated, pregen
from sessionspec.validator.generated import generated_parts
from sessionspec.validator.lint import SchemaSet, schema_set

PLUGIN_REGISTRY = Path(__file__).parents[1] / "spec" / "plugin_registry"


REVISIONS = known_revisions()


@pytest.fixture(scope="module", params=REVISIONS)
def revision(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="module")
def runtime(revision: str) -> SchemaSet:
    return SchemaSet(load_spec(revision=revision))


def test_generated_module_is_fresh() -> None:
    assert pregen.TARGET.read_text(encoding="utf-8") == pregen.render(load_spec()), (
        "tools/validator/core_fast.py is stale: run `python -m sessionspec.validator.pregen`"
    )
    assert pregen.main(["--check"]) == 0


def test_the_digests_are_sha256_of_the_canonical_text() -> None:
    """`content_digest` hashes without OpenSSL (#24) and still gives `hashlib`'s SHA-256 of the canonical text: orjson's
    (sorted keys), marked, where it tells the value apart (#24), else stdlib json's: a value holding a null, an infinite
    or NaN float (which orjson writes as null), an integer beyond 64 bits, a lone surrogate or a key that is no string."""
    import hashlib
    import json

    import orjson

    for value in ({"b": [1, 2.5, None], "a": "x"}, {"a": "\ud800 x"}, float("inf"), None, [2**64], {1: "a"}):
        text = json.dumps(value, sort_keys=True, ensure_ascii=True, allow_nan=True, separators=(",", ":"))
        assert generated.content_digest(value) == hashlib.sha256(text.encode("ascii")).hexdigest(), value
    for value in ([], "é", {"b": [1, 2.5, "null"], "a": {"z": -0.0, "y": True}}, 2**63):
        text = b"orjson:" + orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
        assert generated.content_digest(value) == hashlib.sha256(text).hexdigest(), value


def test_the_digest_tells_apart_what_orjson_writes_alike() -> None:
    """Two JSON values have two digests, also where orjson's text of them is the same (a non-finite float is its null)
    or where one of them takes orjson's text and the other stdlib json's."""
    values = [None, float("inf"), float("-inf"), float("nan"), [None], [float("inf")], [float("nan")], {"a": None},
              {"a": float("inf")}, {"a": float("-inf")}, 1, 1.0, -0.0, 0, 0.0, True, 2**63, 2**64, -(2**63) - 1, "null",
              ["null"], "\ud800", "\udfff", {"\ud800": 1}, {"a": 1, "b": 2}, {"b": 2}, [], {}, "", [[]], [{}], "é",
              "\\u00e9", 1e16, 1e+300, 5e-324, [1, 2], [2, 1]]
    digests = [generated.content_digest(value) for value in values]
    assert len(set(digests)) == len(values)
    assert generated.content_digest({"b": 2, "a": 1}) == generated.content_digest({"a": 1, "b": 2})  # (keys sorted)


def test_the_generated_module_holds_only_definitions_some_table_reaches() -> None:
    """`pregen` drops a generated definition nothing reaches (#24): one a table names stays, so do those it names
    in turn, an unnamed one goes; the written module has none left that nothing reaches."""
    text = "\n".join([
        "_c0123456789 = 1", "", "def _v0123456789(x1):", "    return x1 == _c0123456789", "",
        "def _vabcdefabcd_abcdef(x1):", "    return _c9876543210", "", "_c9876543210 = 2", "",
        "def _structs0():", "    return ()", "", "TABLE = {'a': _v0123456789}", "",
    ])
    kept = pregen._reachable_only(text)
    assert "_v0123456789" in kept and "_c0123456789 = 1" in kept and "_structs0" in kept
    assert "_vabcdefabcd_abcdef" not in kept and "_c9876543210" not in kept
    source = pregen.TARGET.read_text(encoding="utf-8")
    assert pregen._reachable_only(source) == source
    assert "def _vcaba63b7b2(" not in source  # one of the 41 that nothing named before


@pytest.mark.parametrize("rid", REVISIONS)
def test_core_schema_set_comes_from_the_generated_module(rid: str) -> None:
    """Every installed revision's core schemas are generated ahead of time (the published one compiles in ~1.5 s)."""
    schemas = schema_set((), rid)
    assert isinstance(schemas.event, generated.Pregenerated)
    assert isinstance(schemas.row, generated.Pregenerated)
    assert schemas.fast_types.events, rid  # the generated structs cover the revision's types


def test_a_different_spec_is_never_given_the_generated_module() -> None:
    spec = load_spec([PLUGIN_REGISTRY])
    assert generated.fingerprint(spec) != generated.fingerprint(load_spec())
    assert generated_parts(spec) is None


def test_generated_predicates_and_types_agree_with_run_time_compiling(runtime: SchemaSet, revision: str) -> None:
    spec = load_spec(revision=revision)
    parts = generated_parts(spec)
    assert parts is not None
    generated = SchemaSet(spec, parts)
    assert set(generated.event.by_tag) == set(runtime.event.by_tag)
    assert generated.event.tag_key == runtime.event.tag_key
    fast, slow = generated.fast_types, runtime.fast_types
    assert sorted(fast.tags.values()) == sorted(slow.tags.values())
    assert (fast.events, fast.rows, fast.skipped) == (slow.events, slow.rows, slow.skipped)
    for cls, tag in fast.tags.items():
        other = next(c for c, t in slow.tags.items() if t == tag)
        # Same fields, names, types, bounds and options (msgspec's own description of each struct) ...
        assert msgspec.json.schema(cls) == msgspec.json.schema(other), tag
        # ... and the same checks after decoding (uniqueItems, safe integers inside JsonValue parts).
        assert _post_checks(cls) == _post_checks(other), tag


def _post_checks(cls: type) -> list[tuple[str, tuple[tuple[str, ...], tuple[str, ...]]]]:
    seen, out, todo = set(), [], [cls]
    while todo:
        struct = todo.pop()
        if struct in seen:
            continue
        seen.add(struct)
        post = getattr(struct, "__post_init__", None)
        out.append((struct.__name__, post.checks if post else ((), ())))
        for field in msgspec.structs.fields(struct):
            todo.extend(_structs_in(field.type))
    return sorted(out)


def _structs_in(kind: object) -> list[type]:
    if isinstance(kind, type) and issubclass(kind, msgspec.Struct):
        return [kind]
    return [s for arg in getattr(kind, "__args__", ()) for s in _structs_in(arg)]
