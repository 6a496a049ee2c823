"""The `sessionspec` command line: a thin dispatcher over one module per command.

Each command module exposes ``configure(parser)`` and ``run(args, out, err) -> int``
and is imported only when its command runs, so `sessionspec --help` stays fast.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import TextIO

from sessionspec import SPEC_REVISION, __version__

# name -> (module under `sessionspec.`, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "catalog": ("catalog", "write (or --check) the Markdown catalogs generated from spec/"),
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sessionspec",
        description="Specification, reference implementation and conformance suite for dsh-session logs.",
    )
    parser.add_argument(
        "--version", action="version", version=f"sessionspec {__version__} (spec revision {SPEC_REVISION})"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module_name, help_text) in COMMANDS.items():
        module = importlib.import_module(f"sessionspec.{module_name}")
        command_parser = sub.add_parser(
            name,
            help=help_text,
            description=(module.__doc__ or help_text).strip(),
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        module.configure(command_parser)
        command_parser.set_defaults(_module=module)
    return parser


def run(argv: list[str] | None = None, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Run the CLI in-process; returns the exit code (0 ok, 1 findings, 2 usage or input error)."""
    out = out or sys.stdout
    err = err or sys.stderr
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse reports usage errors itself
        return int(exc.code or 0)
    if args.command is None:
        parser.print_help(out)
        return 2
    return int(args._module.run(args, out, err))


def main() -> None:
    try:
        sys.exit(run())
    except KeyboardInterrupt:
        sys.exit(130)
    except BrokenPipeError:
        sys.exit(1)
