"""`sessionspec registry check DIR` and `catalog --registry` refusing a registry that fails it."""

from __future__ import annotations

import io
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sessionspec import cli

PLUGIN = Path(__file__).parent / "plugin_registry"
EVENTS = "events/acme.json"
PING = "schemas/payload/acme/ping.json"


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = cli.run(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def edit(path: Path, change: Callable[[Any], None]) -> None:
    doc = json.loads(path.read_text(encoding="utf-8"))
    change(doc)
    path.write_text(json.dumps(doc), encoding="utf-8")


@pytest.fixture
def plugin(tmp_path: Path) -> Path:
    copy = tmp_path / "reg"
    shutil.copytree(PLUGIN, copy)
    return copy


def _entry(doc: Any) -> Any:
    return doc["events"][0]


def test_the_sample_registry_passes_with_a_catalog_preview() -> None:
    code, out, err = run("registry", "check", str(PLUGIN))
    assert code == 0, out + err
    assert "catalog preview: 1 event type(s), 2 schema(s)" in out and "acme/ping  log-only, owner @acme/dsh-ping" in out


BREAKS: dict[str, tuple[Callable[[Path], None], str]] = {
    "valid-example-fails": (
        lambda d: edit(d / EVENTS, lambda doc: _entry(doc)["examples"]["valid"][0]["event"]["data"].update(latencyMs="x")),
        "#/events/0/examples/valid/0: error: acme/ping: labelled valid, but it fails: /data/latencyMs: 'x' is not of type 'number'"),
    "invalid-example-validates": (
        lambda d: edit(d / EVENTS, lambda doc: _entry(doc)["examples"]["invalid"][0]["event"]["data"]["target"].update(port=443)),
        "#/events/0/examples/invalid/0: error: acme/ping: labelled invalid (A port is at most 65535.), but it validates"),
    "invalid-example-fails-elsewhere": (
        lambda d: edit(d / EVENTS, lambda doc: _entry(doc)["examples"]["invalid"][0].update(path="/data/ok")),
        "#/events/0/examples/invalid/0: error: acme/ping: labelled invalid at /data/ok, but it fails elsewhere: /data/target/port"),
    "unresolvable-ref": (
        lambda d: edit(d / PING, lambda doc: doc["properties"]["ok"].update({"$ref": "https://acme.example/nope.json"})),
        "#/properties/ok/$ref: error: $ref 'https://acme.example/nope.json' resolves to nothing loaded"),
    "core-id-space": (
        lambda d: edit(d / "schemas/type/ping-target.json",
                       lambda doc: doc.update({"$id": "https://sessionspec.dev/schema/type/ping-target.json"})),
        "is in the core's space"),
    "unknown-requirement": (
        lambda d: edit(d / EVENTS, lambda doc: _entry(doc).update(requirements=["INV-10", "NOPE-99"])),
        "events/acme.json#/events/0/requirements: error: acme/ping: requirement 'NOPE-99' is not in this revision"),
    "not-json": (lambda d: (d / EVENTS).write_text("{nope", encoding="utf-8"), "events/acme.json: error: not JSON"),
    "bad-format": (lambda d: edit(d / EVENTS, lambda doc: _entry(doc).pop("owner")),
                   "events/acme.json#/events/0: error: 'owner' is a required property"),
}


@pytest.mark.parametrize("name", sorted(BREAKS))
def test_each_broken_registry_fails_with_a_located_error_and_catalog_refuses_it(plugin: Path, tmp_path: Path,
                                                                                 name: str) -> None:
    breaking, expected = BREAKS[name]
    breaking(plugin)
    code, out, err = run("registry", "check", str(plugin))
    assert code == 1, out + err
    assert expected in out and "FAILED:" in out and "Traceback" not in out + err
    _each_problem_has_a_listed_code(out)
    target = tmp_path / "catalogs"
    code, out, err = run("catalog", "--registry", str(plugin), "--out", str(target))
    assert code == 2 and expected in err and "registry check" in err
    assert not target.exists()  # nothing published


def test_a_core_namespace_is_refused(plugin: Path) -> None:
    doc = json.loads((plugin / EVENTS).read_text(encoding="utf-8"))
    entry = _entry(doc)
    entry["type"] = "todo/ping"
    for example in entry["examples"]["valid"] + entry["examples"]["invalid"]:
        example["event"]["type"] = "todo/ping"
    (plugin / "events/todo.json").write_text(json.dumps(doc), encoding="utf-8")
    (plugin / EVENTS).unlink()
    code, out, _ = run("registry", "check", str(plugin))
    assert code == 1 and "events/todo.json#/events/0/type: error: todo/ping: namespace 'todo' is the core's" in out
    assert "[REGISTRY_CORE_NAMESPACE]" in out


def _each_problem_has_a_listed_code(out: str) -> None:
    """Each problem line is a `Finding` rendered: it ends with its code, listed in spec/errors.json."""
    from sessionspec.spec.error_codes import ERROR_CODES

    problems = [line for line in out.splitlines() if ": error: " in line or ": warning: " in line]
    assert problems
    for line in problems:
        code = line.rpartition(" [")[2].removesuffix("]")
        assert line.endswith("]") and code in ERROR_CODES, line


def test_hostile_text_is_escaped_and_a_missing_folder_is_an_error(plugin: Path, tmp_path: Path) -> None:
    edit(plugin / EVENTS, lambda doc: _entry(doc).update(owner="evil\x1b[31m\n::error::forged"))
    code, out, _ = run("registry", "check", str(plugin))
    assert code == 0 and "\x1b" not in out and "\n::error" not in out and "\\u001b" in out
    code, out, _ = run("registry", "check", str(tmp_path / "missing"))
    assert code == 1 and "not a folder" in out and "[REGISTRY_NOT_A_FOLDER]" in out
    (tmp_path / "empty").mkdir()
    code, out, _ = run("registry", "check", str(tmp_path / "empty"))
    assert code == 1 and "neither events/ nor schemas/" in out
