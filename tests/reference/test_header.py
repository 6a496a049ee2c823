"""HDR-1 … HDR-12: the session header."""

from __future__ import annotations

import math
from typing import Any

import pytest
from sessionspec.reference.json_value import FrozenDict
from sessionspec.reference.session import Session, now_ms, validate_header
from sessionspec.reference.store import SessionStore
from sessionspec.spec.errors import HeaderError

req = pytest.mark.req


def header(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"version": 0, "id": "s", "createdAt": 5}
    base.update(fields)
    return {k: v for k, v in base.items() if v is not DROP}


DROP = object()


def header_error(value: Any) -> HeaderError:
    with pytest.raises(HeaderError) as info:
        Session("s", None, value)
    return info.value


@req("HDR-1")
def test_hdr1_synthesised_header() -> None:
    low = now_ms()
    session = Session("s")
    high = now_ms()
    assert list(session.header) == ["version", "id", "createdAt"]
    assert session.header["version"] == 0 and session.header["id"] == "s"
    assert low <= session.header["createdAt"] <= high


@req("HDR-2")
@pytest.mark.parametrize("value", [{"version": 0, "id": "s", "createdAt": 1, "x": math.nan}, {"id": {1}}])
def test_hdr2_non_json_header_rejected(value: Any) -> None:
    assert header_error(value).code == "HEADER_NOT_JSON"


@req("HDR-2")
@pytest.mark.parametrize("value", [[], "s", 0, False, None])
def test_hdr2_non_object_header_rejected(value: Any) -> None:
    assert header_error(value).code == "HEADER_NOT_OBJECT"


@req("HDR-3")
@pytest.mark.parametrize("version", [1, 0.0, False, "0", None, DROP])
def test_hdr3_version_must_be_integer_zero(version: Any) -> None:
    assert header_error(header(version=version)).code == "HEADER_VERSION"


@req("HDR-4")
@pytest.mark.parametrize("value", ["other", None, DROP, 1])
def test_hdr4_id_must_match(value: Any) -> None:
    error = header_error(header(id=value))
    assert error.code == "HEADER_ID_MISMATCH"
    assert "does not match session id" in str(error)


@req("HDR-5")
@pytest.mark.parametrize("created", ["123", 1.5, -1, 2**53, True, None, DROP, 5.0])
def test_hdr5_created_at_must_be_nonneg_safe_int(created: Any) -> None:
    assert header_error(header(createdAt=created)).code == "HEADER_CREATED_AT"


@req("HDR-5")
def test_hdr5_bounds_accepted() -> None:
    assert Session("s", None, header(createdAt=0)).header["createdAt"] == 0
    assert Session("s", None, header(createdAt=2**53 - 1)).header["createdAt"] == 2**53 - 1


@req("HDR-6")
@pytest.mark.parametrize("cwd", ["relative/path", "", 3, None, ["/x"]])
def test_hdr6_cwd_must_be_absolute_string(cwd: Any) -> None:
    assert header_error(header(cwd=cwd)).code == "HEADER_CWD"


@req("HDR-6")
def test_hdr6_absolute_cwd_accepted() -> None:
    assert Session("s", None, header(cwd="/work/project")).header["cwd"] == "/work/project"


@req("HDR-7")
@pytest.mark.parametrize("parent", [1, None, {"id": "p"}])
def test_hdr7_parent_session_must_be_string(parent: Any) -> None:
    assert header_error(header(parentSession=parent)).code == "HEADER_PARENT_SESSION"


@req("HDR-8")
@pytest.mark.parametrize("value", ["1", 0.5, -1, None, True, 2**53])
def test_hdr8_seed_length_and_delegation_depth(value: Any) -> None:
    assert header_error(header(seedLength=value)).code == "HEADER_SEED_LENGTH"
    assert header_error(header(delegationDepth=value)).code == "HEADER_DELEGATION_DEPTH"


@req("HDR-8")
def test_hdr8_valid_values_accepted() -> None:
    session = Session("s", None, header(seedLength=0, delegationDepth=3, parentSession="p"))
    assert session.header["seedLength"] == 0 and session.header["delegationDepth"] == 3


@req("HDR-9")
def test_hdr9_unknown_keys_kept() -> None:
    session = Session("s", None, header(custom={"a": [1]}))
    assert session.header["custom"] == {"a": [1]}


@req("HDR-10")
def test_hdr10_header_is_detached_and_frozen() -> None:
    value = header(custom={"a": [1]})
    session = Session("s", None, value)
    value["custom"]["a"].append(2)
    value["id"] = "changed"
    assert session.header["custom"] == {"a": [1]} and session.id == "s"
    assert isinstance(session.header, FrozenDict)
    with pytest.raises(TypeError):
        session.header["id"] = "x"  # type: ignore[index]
    with pytest.raises(TypeError):
        session.header["custom"]["a"].append(3)
    assert session.id == session.header["id"]


@req("HDR-11")
def test_hdr11_prepare_builds_header_from_meta() -> None:
    store = SessionStore()
    low = now_ms()
    bare = store.prepare("a")
    assert list(bare.header) == ["version", "id", "createdAt"]
    assert bare.header["createdAt"] >= low
    assert store.prepare("b", meta={"createdAt": None}).header["createdAt"] >= low
    full = store.prepare(
        "c", meta={"createdAt": 7, "cwd": "/p", "parentSession": "a", "seedLength": 2, "delegationDepth": 1}
    )
    assert full.header == {
        "version": 0, "id": "c", "createdAt": 7, "cwd": "/p", "parentSession": "a", "seedLength": 2,
        "delegationDepth": 1,
    }


@req("HDR-11")
@pytest.mark.parametrize(
    ("key", "code"),
    [("cwd", "HEADER_CWD"), ("parentSession", "HEADER_PARENT_SESSION"), ("seedLength", "HEADER_SEED_LENGTH"),
     ("delegationDepth", "HEADER_DELEGATION_DEPTH")],
)
def test_hdr11_present_none_is_copied_then_rejected(key: str, code: str) -> None:
    store = SessionStore()
    with pytest.raises(HeaderError) as info:
        store.create("x", meta={key: None})
    assert info.value.code == code
    assert store.get("x") is None


@req("HDR-11")
def test_hdr11_meta_cwd_must_be_absolute_and_unknown_meta_keys_refused() -> None:
    store = SessionStore()
    with pytest.raises(HeaderError):
        store.create("x", meta={"cwd": "rel"})
    with pytest.raises(TypeError):
        store.create("x", meta={"cwdd": "/p"})


@req("HDR-12")
def test_hdr12_absent_delegation_depth_means_top_level() -> None:
    from sessionspec.reference.jsonl import header_line

    session = Session("s")
    assert "delegationDepth" not in session.header
    assert header_line(session.header)["delegationDepth"] == 0


def test_validate_header_standalone() -> None:
    assert validate_header("s", header()) == header()
    with pytest.raises(HeaderError):
        validate_header("t", header())
