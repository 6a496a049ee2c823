"""Plugin registries: merged into events, schemas, validation and catalogs; broken ones fail with a located error."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from sessionspec.cli import run
from sessionspec.spec import REGISTRY_ERROR_CODE, load_spec
from sessionspec.spec.errors import SessionSpecError
from sessionspec.spec.loader import json_pointer

PLUGIN = Path(__file__).parent / "plugin_registry"
PING = "acme/ping"
PING_SCHEMA = "https://acme.example/sessionspec/payload/acme/ping.json"


@pytest.fixture
def plugin_copy(tmp_path: Path) -> Path:
    target = tmp_path / "registry"
    shutil.copytree(PLUGIN, target)
    return target


def edit_json(path: Path, change: Any) -> None:
    doc = json.loads(path.read_text(encoding="utf-8"))
    change(doc)
    path.write_text(json.dumps(doc), encoding="utf-8")


def load_error(*dirs: Path) -> SessionSpecError:
    with pytest.raises(SessionSpecError) as info:
        load_spec(dirs)
    assert info.value.code == REGISTRY_ERROR_CODE
    return info.value


def test_plugin_type_is_merged_into_events_schemas_and_admission() -> None:
    spec = load_spec([PLUGIN])
    assert PING in spec.events
    assert len(spec.events) == len(load_spec().events) + 1
    assert spec.event_sources[PING] == str(PLUGIN)
    assert spec.event_sources["turn/start"] == "core"
    assert PING in spec.out_of_band_types
    assert PING_SCHEMA in spec.schemas
    assert "https://acme.example/sessionspec/type/ping-target.json" in spec.schemas
    assert spec.plugin_labels == (str(PLUGIN),)
    assert PING not in load_spec().events  # the cached core spec is untouched
    assert PING in load_spec(str(PLUGIN)).events  # a single directory need not be wrapped in a list


def test_plugin_examples_validate_through_the_merged_event_validator() -> None:
    spec = load_spec([PLUGIN])
    validator = spec.event_validator()
    entry = spec.events[PING]
    for example in entry["examples"]["valid"]:
        assert list(validator.iter_errors(example["event"])) == []
    for example in entry["examples"]["invalid"]:
        found = [json_pointer(e.absolute_path) for e in validator.iter_errors(example["event"])]
        assert example["path"] in found
    # Without the plugin the same invalid event is an unknown type: envelope only.
    assert load_spec().event_validator().is_valid(entry["examples"]["invalid"][0]["event"])


def test_entry_points_add_registries(monkeypatch: pytest.MonkeyPatch) -> None:
    class FakeEntryPoint:
        name = "acme"

        def load(self) -> Any:
            return lambda: str(PLUGIN)

    import importlib.metadata

    monkeypatch.setattr(importlib.metadata, "entry_points", lambda group: [FakeEntryPoint()] if group == "sessionspec.registries" else [])
    spec = load_spec(entry_points=True)
    assert PING in spec.events
    assert spec.event_sources[PING] == "entry point acme"


def test_catalog_cli_picks_up_the_plugin(tmp_path: Path) -> None:
    out, err = io.StringIO(), io.StringIO()
    assert run(["catalog", "--registry", str(PLUGIN), "--out", str(tmp_path)], out, err) == 0, err.getvalue()
    text = (tmp_path / "persistence-catalog.md").read_text(encoding="utf-8")
    assert "#### `acme/ping` — log-only" in text
    assert "| `target` | [PingTarget](#pingtarget) | yes |" in text
    assert "## Plugin types" in text
    core = len(load_spec().events)
    assert f"Registered types: {core + 1} ({core} from the core registry, 1 from plugin registries)." in text


def test_duplicate_type_is_a_clear_error(plugin_copy: Path) -> None:
    edit_json(plugin_copy / "events/acme.json", lambda d: d["events"].append({**d["events"][0]}))
    error = load_error(plugin_copy)
    assert "duplicate event type 'acme/ping'" in str(error)


def test_duplicate_of_a_core_type_names_the_core(plugin_copy: Path) -> None:
    core_entry = dict(load_spec().events["plan/mode"])
    (plugin_copy / "events/plan.json").write_text(json.dumps({"events": [core_entry]}), encoding="utf-8")
    error = load_error(plugin_copy)
    assert "duplicate event type 'plan/mode' (already registered by core)" in str(error)


def test_two_plugin_dirs_with_the_same_type_conflict(plugin_copy: Path) -> None:
    error = load_error(PLUGIN, plugin_copy)
    assert "duplicate schema $id" in str(error)


def test_duplicate_schema_id_is_an_error(plugin_copy: Path) -> None:
    shutil.copy(plugin_copy / "schemas/type/ping-target.json", plugin_copy / "schemas/type/ping-target-copy.json")
    assert "duplicate schema $id" in str(load_error(plugin_copy))


def test_entry_violating_the_registry_format_is_located(plugin_copy: Path) -> None:
    edit_json(plugin_copy / "events/acme.json", lambda d: d["events"][0].pop("owner"))
    error = load_error(plugin_copy)
    assert "events/acme.json#/events/0" in str(error)
    assert "'owner' is a required property" in str(error)


def test_invalid_example_path_pointer_is_rejected(plugin_copy: Path) -> None:
    edit_json(plugin_copy / "events/acme.json", lambda d: d["events"][0]["examples"]["invalid"][0].update(path="data/x"))
    assert error_at(plugin_copy) == "/events/0/examples/invalid/0/path"


def error_at(directory: Path) -> str | None:
    return load_error(directory).path


@pytest.mark.req("SURF-1")
def test_surf1_plugin_cannot_add_a_surface_type(plugin_copy: Path) -> None:
    edit_json(plugin_copy / "events/acme.json", lambda d: d["events"][0].update({"class": "surface", "outOfBand": False}))
    assert "cannot be a surface type" in str(load_error(plugin_copy))


@pytest.mark.req("OOB-1")
def test_oob1_turn_types_can_never_be_out_of_band(plugin_copy: Path) -> None:
    entry = json.loads((plugin_copy / "events/acme.json").read_text(encoding="utf-8"))["events"][0]
    entry["type"] = "turn/pause"
    (plugin_copy / "events/turn.json").write_text(json.dumps({"events": [entry]}), encoding="utf-8")
    assert "can never be admitted out of band" in str(load_error(plugin_copy))


def test_entry_in_the_wrong_namespace_file(plugin_copy: Path) -> None:
    (plugin_copy / "events/acme.json").rename(plugin_copy / "events/other.json")
    assert "belongs in events/acme.json" in str(load_error(plugin_copy))


def test_unknown_payload_schema_is_an_error(plugin_copy: Path) -> None:
    (plugin_copy / "schemas/payload/acme/ping.json").unlink()
    assert "is not the $id of any loaded schema" in str(load_error(plugin_copy))


def test_invalid_schema_is_located(plugin_copy: Path) -> None:
    edit_json(plugin_copy / "schemas/type/ping-target.json", lambda d: d["properties"]["port"].update(type="port-number"))
    error = load_error(plugin_copy)
    assert "schemas/type/ping-target.json#/properties/port/type" in str(error)
    assert "not a valid Draft 2020-12 schema" in str(error)


def test_schema_without_id_is_an_error(plugin_copy: Path) -> None:
    edit_json(plugin_copy / "schemas/type/ping-target.json", lambda d: d.pop("$id"))
    assert "must be an object with a string $id" in str(load_error(plugin_copy))


def test_broken_json_names_file_and_line(plugin_copy: Path) -> None:
    (plugin_copy / "events/acme.json").write_text('{"events": [\n  {,\n]}', encoding="utf-8")
    error = str(load_error(plugin_copy))
    assert "events/acme.json: not JSON" in error
    assert "line 2" in error


def test_missing_directory_and_missing_events_folder(tmp_path: Path) -> None:
    assert "does not exist" in str(load_error(tmp_path / "nowhere"))
    (tmp_path / "empty").mkdir()
    assert "needs an events/ folder" in str(load_error(tmp_path / "empty"))


def test_catalog_cli_reports_a_broken_registry(plugin_copy: Path, tmp_path: Path) -> None:
    edit_json(plugin_copy / "events/acme.json", lambda d: d["events"][0].pop("owner"))
    out, err = io.StringIO(), io.StringIO()
    assert run(["catalog", "--registry", str(plugin_copy), "--out", str(tmp_path / "c")], out, err) == 2
    assert "SPEC_REGISTRY_INVALID" in err.getvalue()
    assert not (tmp_path / "c").exists()
