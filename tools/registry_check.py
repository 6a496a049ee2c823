"""What a plugin registry must hold before anything publishes it: the checks behind `registry check`.

Loading a registry (`load_spec`) already refuses what cannot be merged at all (a file that is not
JSON or not in the registry format, a schema that is not Draft 2020-12, a duplicate type or `$id`, a
surface type, a type in the wrong file) and stops at the first such error. A registry that loads can
still be wrong in ways only its author can fix: an example labelled valid that its schema rejects, one
labelled invalid that validates (or fails elsewhere than its stated path), a `$ref` no loaded schema
resolves, a `$id` or namespace that claims the core's, a requirement id the spec does not have. Each
is a `Finding` (the one type of a reported problem) with a listed code, located by file and JSON pointer.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from typing import Any

from sessionspec.reference.finding import ERROR, WARNING, Finding
from sessionspec.spec.error_codes import ErrorCode

__all__ = ["check_registries", "located", "render"]


def located(code: ErrorCode, where: str, message: str, severity: str = ERROR) -> Finding:
    """A finding of the check at ``where``: a file, or ``FILE#POINTER`` (an ``error`` means the registry must not be
    published; a ``warning`` does not stop it)."""
    file, _, pointer = where.partition("#")
    return Finding(code, None, message, pointer=pointer or None, severity=severity, file=file)


def render(finding: Finding) -> str:
    """One line of `registry check`'s output: where, severity, message and code."""
    where = finding.file + (f"#{finding.pointer}" if finding.pointer is not None else "")
    return f"{where}: {finding.severity}: {finding.message} [{finding.code}]"


def _error_summary(errors: Sequence[Any]) -> str:
    from sessionspec.spec.loader import json_pointer

    shown = [f"{json_pointer(e.absolute_path) or '/'}: {e.message[:200]}" for e in errors[:3]]
    return "; ".join(shown) + (f" (and {len(errors) - 3} more)" if len(errors) > 3 else "")


def _errors(validator: Any, event: Any) -> list[Any] | str:
    """The schema errors of an example, path-sorted, or why it cannot be validated (an unresolvable ``$ref``)."""
    try:
        return sorted(validator.iter_errors(event), key=lambda e: list(map(str, e.absolute_path)))
    except Exception as exc:  # noqa: BLE001 - referencing and jsonschema raise several kinds for a broken schema
        return f"cannot be validated: {type(exc).__name__}: {str(exc)[:200]}"


def check_registries(directories: Sequence[str], revision: str | None = None) -> tuple[Any, list[Finding]]:
    """Check plugin registry folders merged onto the core spec; returns the loaded spec (None when it does
    not load) and the problems, errors first."""
    from sessionspec.spec.errors import SessionSpecError
    from sessionspec.spec.loader import load_spec

    for directory in directories:
        if not os.path.isdir(directory):
            return None, [located("REGISTRY_NOT_A_FOLDER", directory,
                                  "not a folder (a registry is a folder with events/ and schemas/)")]
        if not os.path.isdir(os.path.join(directory, "events")) and not os.path.isdir(os.path.join(directory, "schemas")):
            return None, [located("REGISTRY_NOT_A_FOLDER", directory, "holds neither events/ nor schemas/: not a registry folder")]
    try:
        spec = load_spec(list(directories), revision=revision)
    except SessionSpecError as exc:
        where, _, message = exc.message.partition(": ")
        return None, [located(exc.code, where if message else "registry", message or exc.message)]
    plugin = set(spec.plugin_labels)
    problems = [*_schema_problems(spec, plugin), *_entry_problems(spec, plugin, load_spec(revision=revision))]
    problems.sort(key=lambda p: (p.severity != ERROR, p.file, p.pointer or ""))
    return spec, problems


def _schema_problems(spec: Any, plugin: set[str]) -> Iterator[Finding]:
    """A plugin schema nothing uses is a warning (the loader has refused an ``$id`` that is not absolute or is in
    the core's space, and a ``$ref`` that does not resolve offline)."""
    from sessionspec.spec.loader import schema_refs

    used = {entry["payloadSchema"] for entry in spec.events.values()}
    used |= {target.split("#")[0] for other_id, other in spec.schemas.items() for _, _, target in schema_refs(other, other_id)}
    for schema_id in spec.schemas:
        if spec.schema_sources.get(schema_id) in plugin and schema_id not in used:
            yield located("REGISTRY_SCHEMA_UNUSED", spec.schema_files[schema_id],
                          f"schema {schema_id!r} is neither a payload schema nor referenced by one", WARNING)


def _entry_problems(spec: Any, plugin: set[str], core: Any) -> Iterator[Finding]:
    """A plugin entry's namespace (not the core's), requirements (known) and examples (as labelled)."""
    core_namespaces = {t.split("/", 1)[0] for t in core.events}
    validator = spec.event_validator()
    for event_type, entry in spec.events.items():
        source = spec.event_sources.get(event_type)
        if source not in plugin:
            continue
        namespace = event_type.split("/", 1)[0]
        where = spec.event_places[event_type]
        if namespace in core_namespaces:
            yield located("REGISTRY_CORE_NAMESPACE", f"{where}/type", f"{event_type}: namespace {namespace!r} is the "
                          "core's: a plugin's types need a namespace of their own")
        for req in entry.get("requirements", ()):
            if req not in spec.requirements:
                yield located("REGISTRY_UNKNOWN_REQUIREMENT", f"{where}/requirements",
                              f"{event_type}: requirement {req!r} is not in this revision")
        for label in ("valid", "invalid"):
            for index, example in enumerate(entry["examples"][label]):
                problem = _example_problem(validator, event_type, label, example)
                if problem:
                    yield located("REGISTRY_EXAMPLE_MISLABELLED", f"{where}/examples/{label}/{index}",
                                  f"{event_type}: {problem}")


def _example_problem(validator: Any, event_type: str, label: str, example: Any) -> str | None:
    """Why an example is not what its label says, or None."""
    from sessionspec.spec.loader import json_pointer

    event = example["event"]
    if event.get("type") != event_type:
        return f"the example's type {event.get('type')!r} is not {event_type!r}"
    errors = _errors(validator, event)
    if isinstance(errors, str):
        return errors
    if label == "valid":
        return f"labelled valid, but it fails: {_error_summary(errors)}" if errors else None
    if not errors:
        return f"labelled invalid ({example['reason']}), but it validates"
    if example["path"] not in {json_pointer(e.absolute_path) for e in errors}:
        return f"labelled invalid at {example['path'] or '/'}, but it fails elsewhere: {_error_summary(errors)}"
    return None
