"""Check a plugin registry before publishing it: `sessionspec registry check DIR...`.

A registry is a folder with events/*.json (entries in the format of
spec/schemas/meta/event-registry.json) and schemas/**/*.json. The check loads it onto the core
spec (what `validate --registry` and `catalog --registry` do) and then checks that every schema
compiles and every `$ref` resolves offline, every example validates or fails exactly as labelled
(an invalid one at its stated path), schema `$id`s are absolute and outside the core's space, type
namespaces are not the core's, and named requirements exist. It ends with a preview of what the
catalog gains (the types with their class, owner and payload schema). Every problem names the
file and JSON pointer. `sessionspec catalog --registry DIR` refuses a registry that fails this
check. Exit status: 0 no error (warnings are printed), 1 errors found, 2 usage error.

example:
  sessionspec registry check tests/spec/plugin_registry
"""

from __future__ import annotations

import argparse
from typing import TextIO

from sessionspec.reference.json_text import display


def configure(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    check = sub.add_parser("check", help="check plugin registry folders (examples, schemas, ids) with a catalog preview")
    check.add_argument("directories", metavar="DIR", nargs="+", help="plugin registry folder (events/, schemas/)")
    check.add_argument("--revision", metavar="R", help="format revision to check against (default: the pinned one)")


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from sessionspec.reference.finding import ERROR
    from sessionspec.registry_check import check_registries, render
    from sessionspec.spec.revisions import UnknownRevision

    try:
        spec, problems = check_registries(args.directories, args.revision)
    except UnknownRevision as exc:
        err.write(f"sessionspec registry: --revision: {exc.message}\n")
        return 2
    out.writelines(display(render(p)) + "\n" for p in problems)
    errors = sum(p.severity == ERROR for p in problems)
    if spec is not None:
        plugin = set(spec.plugin_labels)
        types = [(t, e) for t, e in spec.events.items() if spec.event_sources.get(t) in plugin]
        schemas = [s for s in spec.schemas if spec.schema_sources.get(s) in plugin]
        out.write(f"catalog preview: {len(types)} event type(s), {len(schemas)} schema(s) from "
                  f"{display(', '.join(spec.plugin_labels))}\n")
        out.writelines(display(f"  {t}  {e['class']}, owner {e['owner']}, out of band: {'yes' if e['outOfBand'] else 'no'}, "
                               f"payload {e['payloadSchema']}") + "\n" for t, e in types)
        out.write("  (the whole catalogs: sessionspec catalog --registry DIR --out PREVIEW_DIR)\n")
    warnings = len(problems) - errors
    if errors:
        out.write(f"FAILED: {errors} error(s), {warnings} warning(s); fix them before publishing the registry\n")
        return 1
    out.write(f"OK: the registry passes the check ({warnings} warning(s))\n")
    return 0
