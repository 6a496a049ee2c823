"""`compat.installed`: a Node install counts as present only when it holds what its lockfile pins here.

The fixtures and the release matrix run `npm ci` only when this says the install is missing or stale,
so a lockfile that gains a package (the pinned Node runtime, the SQLite backend) reinstalls an old
node_modules instead of running without it.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from sessionspec.conformance import compat

LOCK = {"packages": {
    "": {"name": "x"},
    "node_modules/a": {"version": "1.0.0"},
    "node_modules/runtime-elsewhere": {"version": "2.0.0", "optional": True, "os": "no-such-os", "cpu": "x64"},
}}


def _folder(tmp_path: Path, lock: dict, hidden: dict | None) -> Path:
    (tmp_path / "package-lock.json").write_text(json.dumps(lock), encoding="utf-8")
    if hidden is not None:
        (tmp_path / "node_modules").mkdir()
        (tmp_path / "node_modules" / ".package-lock.json").write_text(json.dumps(hidden), encoding="utf-8")
    return tmp_path


def test_an_install_matching_the_lockfile_is_installed_and_other_platforms_optionals_are_not_expected(tmp_path):
    assert compat.installed(_folder(tmp_path, LOCK, {"packages": {"node_modules/a": {"version": "1.0.0"}}}))


def test_no_node_modules_or_a_garbled_record_is_not_installed(tmp_path):
    assert not compat.installed(_folder(tmp_path, LOCK, None))
    (tmp_path / "node_modules").mkdir()
    (tmp_path / "node_modules" / ".package-lock.json").write_text("{not json", encoding="utf-8")
    assert not compat.installed(tmp_path)


def test_a_package_the_lockfile_gained_or_moved_makes_the_install_stale(tmp_path):
    gained = {"packages": {**LOCK["packages"], "node_modules/b": {"version": "3.0.0"}}}
    assert not compat.installed(_folder(tmp_path, gained, {"packages": {"node_modules/a": {"version": "1.0.0"}}}))
    bumped = {"packages": {**LOCK["packages"], "node_modules/a": {"version": "1.0.1"}}}
    (tmp_path / "package-lock.json").write_text(json.dumps(bumped), encoding="utf-8")
    assert not compat.installed(tmp_path)


def test_an_optional_package_for_this_machine_is_expected(tmp_path):
    entry = {"version": "22.0.0", "optional": True, **compat.npm_platform()}
    lock = {"packages": {**LOCK["packages"], "node_modules/runtime-here": entry}}
    assert not compat.installed(_folder(tmp_path, lock, {"packages": {"node_modules/a": {"version": "1.0.0"}}}))
    excluded = {"packages": {**LOCK["packages"], "node_modules/runtime-here": {**entry, "os": ["!" + entry["os"]]}}}
    (tmp_path / "package-lock.json").write_text(json.dumps(excluded), encoding="utf-8")
    assert compat.installed(tmp_path)


def test_the_mark_of_an_npm_ci_of_this_lockfile_counts_and_a_changed_lockfile_voids_it(tmp_path):
    """An optional package npm left out (omit=optional, a failed download) must not reinstall on every run."""
    folder = _folder(tmp_path, {"packages": {**LOCK["packages"], "node_modules/left-out": {
        "version": "1.0.0", "optional": True, **compat.npm_platform()}}}, {"packages": {"node_modules/a": {"version": "1.0.0"}}})
    assert not compat.installed(folder)
    (folder / compat.INSTALLED_MARK).write_text(hashlib.sha256((folder / "package-lock.json").read_bytes()).hexdigest(),
                                                encoding="utf-8")
    assert compat.installed(folder)
    (folder / "package-lock.json").write_text(json.dumps({"packages": {"node_modules/b": {"version": "1.0.0"}}}),
                                              encoding="utf-8")
    assert not compat.installed(folder)
