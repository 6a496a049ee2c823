"""Registry patterns the validators may run (issue 25): `regex_safety.pattern_hazard` on a table of patterns,
and the loader's refusal of an untrusted registry that holds one, located and with its stable code."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest
from sessionspec.spec import load_spec
from sessionspec.spec.errors import SessionSpecError
from sessionspec.spec.regex_safety import pattern_hazard


def _core_patterns() -> set[str]:
    """Every `pattern` and `patternProperties` key of the core's schema files, read from the data."""
    found: set[str] = set()

    def walk(node: object) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key in ("const", "enum", "examples", "default"):
                    continue
                if key == "pattern" and isinstance(value, str):
                    found.add(value)
                if key == "patternProperties" and isinstance(value, dict):
                    found.update(value)
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    import sessionspec.spec as spec_pkg

    for path in Path(spec_pkg.__file__).parent.rglob("*.json"):
        walk(json.loads(path.read_text(encoding="utf-8")))
    return found


def test_the_core_patterns_are_accepted() -> None:
    core = _core_patterns()
    assert len(core) >= 14  # the two with a repeat nested in a repeat, unambiguously, among them
    assert "^(/[^/]*)*$" in core
    assert {p: pattern_hazard(p) for p in core} == dict.fromkeys(core)


ACCEPTED = ["^(a|b)*$", "^[a-z]+(?:-[a-z]+)*$", "^[a-z]+(?:-[a-z]+)*-x$", "^(ab|a)c$", "\\Aa+", "abc",
            "^\\d+\\.\\d+$", "^.{0,300}x$", "^([a-z]+)?\\.json$", "^(?:[0-9]{3})*$", "^(a[^a]*)*$", "\\.json$",
            "^[A-Z][A-Za-z0-9]*Error$", "^x(?=y)", "^(?:a++)+$"]

REFUSED = {
    "(a+)+": "inside a repeat", "(a+)+$": "inside a repeat", "^(a+)+$": "inside a repeat",
    "(a|a)*": "inside a repeat", "^(a|aa)+$": "inside a repeat", "(.*a){10}": "inside a repeat",
    "(\\w+\\s?)*$": "inside a repeat", "^(a?){30}a{30}$": "inside a repeat", "^(x+x+)+y$": "inside a repeat",
    "^(a[^b]*)*$": "inside a repeat", "^(?i:(A+a)+)$": "inside a repeat",
    "(a)\\1": "backreference", "^(a)(?(1)a|b)$": "backreference",
    "^.*a.*b$": "ambiguous choice points", "^a*a*$": "another long repeat", "^(?i:A+a+)$": "another long repeat",
    "[a-z]+X": "not anchored", "a.*b": "not anchored", "(?m)^a+$": "not anchored",
    "^(?=.*a)": "lookaround", "(": "not a regular expression", "(" * 5000 + ")" * 5000: "",
    "a" * 20_000: "longer than",
}


@pytest.mark.parametrize("pattern", ACCEPTED)
def test_linear_patterns_are_accepted(pattern: str) -> None:
    assert pattern_hazard(pattern) is None


@pytest.mark.parametrize("pattern", sorted(REFUSED), ids=lambda p: p[:30])
def test_backtracking_patterns_are_refused(pattern: str) -> None:
    hazard = pattern_hazard(pattern)
    assert hazard is not None and REFUSED[pattern] in hazard


@pytest.mark.parametrize("pattern", [*ACCEPTED, *sorted(_core_patterns())])
def test_an_accepted_pattern_is_fast_on_long_hostile_text(pattern: str) -> None:
    """Measured, not assumed: each accepted pattern on 20,000-character texts built from its own characters."""
    text = "".join(ch for ch in pattern if ch.isalnum() or ch in "-_./ §@") or "a"
    compiled = re.compile(pattern)
    start = time.process_time()
    for value in (text * (20_000 // len(text) + 1), "a" * 20_000 + "!", "A" * 20_000 + "!", "/" * 20_000 + "\n!"):
        compiled.search(value)
    assert time.process_time() - start < 2.0


def _registry(root: Path, schema: dict[str, object]) -> Path:
    (root / "schemas").mkdir(parents=True)
    (root / "events").mkdir()
    (root / "events" / "none.json").write_text('{"events": []}', "utf-8")
    (root / "schemas" / "x.json").write_text(json.dumps({"$id": "https://gen.example/x.json", **schema}), "utf-8")
    return root


@pytest.mark.parametrize(("schema", "pointer"), [
    ({"properties": {"s": {"pattern": "(a+)+$"}}}, "/properties/s/pattern"),
    ({"patternProperties": {"^(a|aa)+$": {}}}, "/patternProperties/^(a|aa)+$"),
    ({"prefixItems": [{"allOf": [{"pattern": "(.*a){10}"}]}]}, "/prefixItems/0/allOf/0/pattern"),
])
def test_an_untrusted_registry_with_one_is_refused_located(schema: dict[str, object], pointer: str, tmp_path: Path) -> None:
    with pytest.raises(SessionSpecError) as info:
        load_spec([str(_registry(tmp_path / "reg", schema))])
    assert info.value.code == "SPEC_REGISTRY_PATTERN_UNSAFE"
    assert f"x.json#{pointer}:" in info.value.message


def test_data_named_pattern_is_not_a_regular_expression(tmp_path: Path) -> None:
    import shutil

    root = tmp_path / "reg"
    shutil.copytree(Path(__file__).parent / "plugin_registry", root)
    schema = {"$id": "https://gen.example/x.json",
              "properties": {"s": {"const": {"pattern": "(a+)+$"}, "examples": [{"pattern": "(a+)+"}]}}}
    (root / "schemas" / "x.json").write_text(json.dumps(schema), "utf-8")
    assert "https://gen.example/x.json" in load_spec([str(root)]).schemas
