"""Registry content is only ever data to generated code (issue 25, "generated code from data only").

A plugin registry's schemas are compiled into Python predicates (`fastschema`), msgspec types
(`mstypes`) and, for the core spec, a written module (`pregen`). These tests push hostile schemas
through each generator: non-finite and huge bounds, empty and all-accepting schemas, quotes,
backslashes, newlines, control characters and lone surrogates in property names, patterns, enum
and const strings, and in a type's name. Each registry must validate exactly as python-jsonschema
(the oracle) says, fast and `--exact`, or be refused with a located error; never a traceback.
"""

from __future__ import annotations

import ast
import io
import json
import math
import re
import sys
import types
from pathlib import Path
from typing import Any

import pytest
from sessionspec.catalog import code, printable
from sessionspec.cli import run
from sessionspec.spec import load_spec
from sessionspec.validator import pregen
from sessionspec.validator.fastschema import GeneratedCodeError, checked_code
from sessionspec.validator.generated import generated_parts
from sessionspec.validator.lint import SchemaSet

NASTY = "q'\"\\\n\r\t\x00\x07\x1b[31m\udfff\ud800\u2028é}{)(#:`|"  # lone surrogates: low before high
HEADER = {"type": "session", "version": 0, "id": "s", "createdAt": 1767225600000, "delegationDepth": 0}
T0 = 1767225600000

#: (payload schema without $schema/$id, payloads to validate)
CASES: list[tuple[dict[str, Any], list[Any]]] = [
    ({}, [{}, 1, None, "x", [1], {"a": {"b": []}}]),
    ({"type": "object", "properties": {"a": {}, "b": True}}, [{}, {"a": 1}, {"b": [2]}, 3]),
    ({"type": "array", "items": {}}, [[], [1, "x"], {}]),
    ({"properties": {"a": {"type": "array", "items": {}}}}, [{"a": []}, {"a": 1}, "s"]),
    ({"type": "number", "maximum": math.inf}, [5, 1e308, -1, "x"]),
    ({"type": "number", "minimum": -math.inf, "exclusiveMaximum": math.inf}, [0, -1e308, 2.5]),
    ({"type": "integer", "exclusiveMinimum": -math.inf, "maximum": 3}, [3, 4, -(10**20)]),
    ({"type": "array", "items": {"type": "number", "maximum": math.inf, "minimum": -math.inf}}, [[1, 2.5], [1, "x"]]),
    ({"type": "integer", "maximum": 10**30, "minimum": -(10**40)}, [10**20, 10**31, -(10**41), 0]),
    ({"type": "array", "items": {"type": "integer", "maximum": 10**30}}, [[1, 10**29], [10**31]]),
    ({"type": "string", "minLength": 2.0, "maxLength": 10**20}, ["ab", "a", ""]),
    ({"type": "array", "minItems": 1.0, "maxItems": 10**19}, [[1], []]),
    ({"type": "object", "required": [NASTY], "properties": {NASTY: {"type": "string", "const": NASTY}}},
     [{NASTY: NASTY}, {NASTY: "other"}, {}, {"q": NASTY}]),
    ({"type": "object", "properties": {NASTY: {"enum": [NASTY, "b", 1]}}, "additionalProperties": False},
     [{NASTY: NASTY}, {NASTY: 1}, {NASTY: "c"}, {"other": 1}]),
    ({"type": "object", "dependentRequired": {NASTY: ["x'\n"]}, "minProperties": 1.0},
     [{NASTY: 1, "x'\n": 2}, {NASTY: 1}, {}]),
    ({"type": "object", "patternProperties": {"^q'\"\\\\\\n": {"type": "integer"}},
      "propertyNames": {"pattern": "^[^\\u0000]*$"}},
     [{"q'\"\\\n": 1}, {"q'\"\\\n": "x"}, {"a\x00": 1}, {"z": "y"}]),
    ({"type": "string", "pattern": "^['\"\\\\]\\n?$"}, ["'", "\"\n", "\\", "x"]),
    ({"oneOf": [{"type": "object", "required": ["k"], "properties": {"k": {"const": NASTY}}},
                {"type": "object", "required": ["k"], "properties": {"k": {"const": "b\\'"}}}]},
     [{"k": NASTY}, {"k": "b\\'"}, {"k": "c"}]),
    ({"if": {"type": "object", "properties": {"k": {"const": NASTY}}, "required": ["k"]},
      "then": {"required": ["v"]}, "else": {}}, [{"k": NASTY}, {"k": NASTY, "v": 1}, {"k": "z"}]),
    ({"not": {"type": "object", "required": [NASTY]}}, [{NASTY: 1}, {}, 1]),
]
NASTY_TYPE = "gen/" + "".join(c for c in NASTY if not c.isspace())  # a type name holds no white space


def _entry(event_type: str, schema_id: str, valid: Any) -> dict[str, Any]:
    return {
        "type": event_type, "owner": "@gen/hostile", "class": "log-only", "outOfBand": False, "enclosure": "turn",
        "description": "A hostile schema.", "payloadSchema": schema_id, "provenance": "Log-only.",
        "requirements": ["APPEND-6"],
        "examples": {"valid": [{"description": "valid", "event": {"type": event_type, "seq": 3, "time": T0, "data": valid}}],
                     "invalid": [{"event": {"type": event_type, "seq": -1, "time": T0, "data": valid},
                                  "reason": "a negative seq", "path": "/seq"}]},
    }


def _write_registry(root: Path, schemas: list[tuple[str, dict[str, Any], Any]]) -> Path:
    """A registry directory with one type per (type, payload schema, a valid payload)."""
    (root / "events").mkdir(parents=True)
    (root / "schemas").mkdir()
    entries = []
    for n, (event_type, schema, valid) in enumerate(schemas):
        schema_id = f"https://gen.example/payload/{n}.json"
        doc = {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": schema_id, **schema}
        # json.dumps writes inf as Infinity; the registry says 1e400 (a JSON number that reads as inf)
        text = json.dumps(doc).replace("-Infinity", "-1e400").replace("Infinity", "1e400")
        (root / "schemas" / f"{n}.json").write_text(text, encoding="utf-8")
        entries.append(_entry(event_type, schema_id, valid))
    (root / "events" / "gen.json").write_text(json.dumps({"events": entries}), encoding="utf-8")
    return root


def _events() -> list[tuple[str, Any]]:
    out = [(f"gen/c{n}", data) for n, (_, payloads) in enumerate(CASES) for data in payloads]
    return [*out, (NASTY_TYPE, {NASTY: NASTY}), (NASTY_TYPE, {NASTY: 1})]


def _event(event_type: str, data: Any) -> dict[str, Any]:
    return {"type": event_type, "seq": 3, "time": T0, "data": data}


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Path:
    oracle_valid = {}  # a valid payload per case for the registry's own example
    for n, (schema, payloads) in enumerate(CASES):
        from jsonschema import Draft202012Validator

        oracle_valid[n] = next(p for p in payloads if Draft202012Validator(schema).is_valid(p))
    types = [(f"gen/c{n}", schema, oracle_valid[n]) for n, (schema, _) in enumerate(CASES)]
    nasty = {"type": "object", "properties": {NASTY: {"type": "string"}}}
    return _write_registry(tmp_path_factory.mktemp("hostile") / "reg", [*types, (NASTY_TYPE, nasty, {NASTY: "x"})])


@pytest.fixture(scope="module")
def spec(registry: Path) -> Any:
    return load_spec([registry])


def _log(path: Path, event: dict[str, Any]) -> Path:
    events = [
        {"type": "turn/start", "seq": 0, "time": T0, "data": {"turn": 1, "trigger": {"kind": "message", "source": {"kind": "user"}}}},
        {"type": "user/message", "seq": 1, "time": T0, "data": {"content": [{"type": "text", "text": "hi"}], "source": {"kind": "user"}},
         "surfaceOp": "append"},
        {"type": "step/start", "seq": 2, "time": T0, "data": {"turn": 1, "step": 1}},
        event,
        {"type": "step/end", "seq": 4, "time": T0, "data": {"turn": 1, "step": 1}},
        {"type": "turn/end", "seq": 5, "time": T0, "data": {"turn": 1, "reason": {"kind": "completed"}}},
    ]
    path.write_bytes(b"".join(json.dumps(v).encode() + b"\n" for v in [HEADER, *events]))
    return path


def test_the_hostile_registry_loads_and_every_case_is_judged(spec: Any) -> None:
    oracle = spec.event_validator()
    verdicts = [oracle.is_valid(_event(t, d)) for t, d in _events()]
    assert any(verdicts) and not all(verdicts)  # the cases exercise both verdicts


def test_compiled_predicates_agree_with_the_oracle(spec: Any) -> None:
    schemas, oracle = SchemaSet(spec), spec.event_validator()
    for event_type, data in _events():
        event = _event(event_type, data)
        assert schemas.event.is_valid(event) == oracle.is_valid(event), (event_type, data)


@pytest.mark.parametrize("exact", [False, True], ids=["fast", "exact"])
def test_validate_judges_each_hostile_case_as_the_oracle_does(spec: Any, registry: Path, tmp_path: Path, exact: bool) -> None:
    oracle = spec.event_validator()
    logs = {_log(tmp_path / f"{n}.jsonl", _event(t, d)): oracle.is_valid(_event(t, d)) for n, (t, d) in enumerate(_events())}
    out, err = io.StringIO(), io.StringIO()
    args = ["validate", "--registry", str(registry), "--format", "json", "-j", "1", *(["--exact"] if exact else []),
            *map(str, logs)]
    code = run(args, out, err)
    assert "Traceback" not in err.getvalue() and code in (0, 1), err.getvalue()
    files = {Path(f["file"]).name: f for f in json.loads(out.getvalue())["files"]}
    for path, valid in logs.items():
        found = files[path.name]
        # a schema finding exactly when the oracle rejects the event; a valid file only if the oracle accepts it
        assert any(f["code"] == "SCHEMA_VIOLATION" for f in found["findings"]) is not valid, (path.name, found)
        assert valid or not found["valid"], path.name


def test_the_module_writer_holds_schema_content_as_values_only(spec: Any) -> None:
    """`pregen.render` of the hostile spec: literals only of checked values, importable, and as exact."""
    text = pregen.render(spec)
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Constant):
            assert type(node.value) in (str, int, float, bool, type(None)), node.value
            assert not isinstance(node.value, float) or math.isfinite(node.value)
        if isinstance(node, ast.Name):
            assert node.id.isascii(), node.id
    module = types.ModuleType("hostile_core_fast")
    sys.modules[module.__name__] = module  # msgspec reads a struct's annotations in its module
    try:
        # dont_inherit: compiled as an import compiles it, without this file's `from __future__ import annotations`
        # (each revision's structs are classes of a builder function: their annotations must be objects)
        exec(compile(text, "<rendered>", "exec", dont_inherit=True), module.__dict__)  # noqa: S102 - the module pregen writes, under test
        parts = generated_parts(spec, module)
    finally:
        del sys.modules[module.__name__]
    assert parts is not None
    generated, oracle = SchemaSet(spec, parts), spec.event_validator()
    for event_type, data in _events():
        event = _event(event_type, data)
        assert generated.event.is_valid(event) == oracle.is_valid(event), (event_type, data)


def test_a_number_python_cannot_read_is_a_located_registry_error(tmp_path: Path) -> None:
    root = _write_registry(tmp_path / "reg", [("gen/big", {"type": "integer", "maximum": 7}, 1)])
    schema = root / "schemas" / "0.json"
    schema.write_text(schema.read_text(encoding="utf-8").replace('"maximum": 7', '"maximum": ' + "9" * 5000), encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    code = run(["validate", "--registry", str(root), str(_log(tmp_path / "a.jsonl", _event("gen/big", 1)))], out, err)
    assert code == 2
    assert "schemas/0.json" in err.getvalue() and "Traceback" not in err.getvalue(), err.getvalue()


@pytest.mark.parametrize("source", [
    "def _v1(x):\n    if x > inf: return False\n    return True\n",       # a value's text used as a name
    "def _v1(x):\n    import os\n    return True\n",                      # a statement outside the vocabulary
    "def _v1(x):\n    return x.__class__\n",                                # an attribute outside the vocabulary
    "def run(x):\n    return True\n",                                       # a definition not generated
    "_c1 = 1e400\n",                                                        # a non-finite literal
])
def test_code_outside_the_compilers_vocabulary_is_refused(source: str) -> None:
    with pytest.raises(GeneratedCodeError):
        checked_code(source, {})


def test_the_catalog_escapes_what_markdown_cannot_carry(registry: Path, tmp_path: Path) -> None:
    out, err = io.StringIO(), io.StringIO()
    assert run(["catalog", "--registry", str(registry), "--out", str(tmp_path / "cat")], out, err) == 0, err.getvalue()
    for path in (tmp_path / "cat").iterdir():
        text = path.read_bytes().decode("utf-8")  # strict: a lone surrogate cannot have been written
        assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]", text), path.name
    text = (tmp_path / "cat" / "persistence-catalog.md").read_text(encoding="utf-8")
    assert "\\u0007\\u001b[31m\\udfff\\ud800" in text
    assert f"#### {code(printable(NASTY_TYPE))} — log-only" in text  # a backtick in the name keeps its code span


def test_a_code_span_is_fenced_past_the_backticks_it_holds() -> None:
    assert code("a") == "`a`"
    assert code("a`b") == "`` a`b ``"
    assert code("``x`") == "``` ``x` ```"


def test_the_row_template_holds_values_it_cannot_state_as_constants() -> None:
    """`fastlog`'s member builder (the other code generated from spec data) writes only checked literals."""
    from sessionspec.validator.fastlog import _template_source

    consts: list[Any] = []
    value = {"type": NASTY, "n": 10**30, "f": math.inf, "x": [1.5, None, True]}
    source = _template_source(value, {}, (), {}, consts)
    assert consts == [10**30, math.inf, 1.5]
    rebuilt = eval("lambda c: " + source, {"__builtins__": {}})(tuple(consts))  # noqa: S307 - the template under test
    assert rebuilt == value
