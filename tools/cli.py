"""The `sessionspec` command line: a thin dispatcher over one module per command.

Each command module exposes ``configure(parser)`` and ``run(args, out, err) -> int``
and is imported only when its command runs, so `sessionspec --help` stays fast.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import signal
import sys
from typing import Any, TextIO

from sessionspec import SPEC_REVISION, __version__

# name -> (module under `sessionspec.` [":Object" for one of several commands in a module], one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "catalog": ("catalog", "write (or --check) the Markdown catalogs generated from spec/"),
    "conformance": ("conformance_cmd", "check an implementation against the conformance vectors"),
    "smoke": ("smoke_cmd", "a ten-second check that an adapter is wired right (handshake, one case per claimed op)"),
    "summary": ("summary_cmd", "summarise saved conformance runs for a terminal, a GitHub job summary or annotations"),
    "registry": ("registry_cmd", "check a plugin registry (examples as labelled, schemas, ids) before publishing it"),
    "report": ("report_cmd", "render JSONL conformance reports as one self-contained HTML page"),
    "replay": ("replay_cmd", "re-run a saved conformance trace against an implementation"),
    "requirements": ("requirements_cmd", "list requirements with the vectors and properties covering them"),
    "validate": ("validate", "check stored session logs and report every finding (levels load, schema, strict)"),
    "derive": ("inspect_cmds:Derive", "print the messages a log derives (its model-visible history) as JSON"),
    "fold": ("inspect_cmds:Fold", "print the surface fold of a log: nodes and replacements"),
    "repair": ("inspect_cmds:Repair", "write a copy of a crashed log with the crash-repair closers appended"),
    "pack": ("inspect_cmds:Pack", "rewrite a log with delta chunk runs packed into storage rows"),
    "unpack": ("inspect_cmds:Unpack", "rewrite a log with every event on its own line"),
    "stats": ("inspect_cmds:Stats", "count a log's events per type, turns, steps, surface size, replaces, packing"),
    "header": ("inspect_cmds:Header", "print a log's session header"),
}


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser; a command's own options are configured only when it runs."""
    parser = argparse.ArgumentParser(
        prog="sessionspec",
        description="Specification, reference implementation and conformance suite for dsh-session logs.",
        epilog="Run `sessionspec COMMAND --help` for a command's options and an example.",
    )
    parser.add_argument(
        "--version", action="version", version=f"sessionspec {__version__} (spec revision {SPEC_REVISION})"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (_module, help_text) in COMMANDS.items():
        sub.add_parser(name, help=help_text, add_help=False)
    return parser


def command_parser(name: str) -> tuple[argparse.ArgumentParser, object]:
    """Import one command's module and build its parser."""
    module_name, help_text = COMMANDS[name]
    module_path, _, attr = module_name.partition(":")  # "module:Object" = one of several commands in a module
    module = importlib.import_module(f"sessionspec.{module_path}")
    if attr:
        module = getattr(module, attr)
    parser = argparse.ArgumentParser(
        prog=f"sessionspec {name}",
        description=(module.__doc__ or help_text).strip(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    module.configure(parser)
    return parser, module


class EscapingStream:
    """A text stream that escapes what no report line may carry, whatever a command writes.

    Every command prints text that comes from input (event types, keys, file names, adapter
    messages). Written through this stream, lone surrogates (which no UTF-8 stream can encode)
    and control characters other than the line end (terminal escapes, CR) come out as JSON-style
    escapes (`sessionspec.reference.json_text.display`); JSON output stays valid JSON, because an
    escape is what JSON itself would write. Text that could hold a line end of its own is escaped
    where it is formatted, so it cannot forge a line. ``write_control`` is for the progress bar.
    """

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        if not text.isprintable():
            from sessionspec.reference.json_text import display  # not at import: `--help` stays fast

            text = "\n".join(display(part) for part in text.split("\n"))
        return self._stream.write(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def write_control(self, text: str) -> int:
        return self._stream.write(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def run(argv: list[str] | None = None, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Run the CLI in-process; returns the exit code (0 ok, 1 findings, 2 usage or input error)."""
    out = EscapingStream(out or sys.stdout)  # type: ignore[assignment]
    err = EscapingStream(err or sys.stderr)  # type: ignore[assignment]
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if not argv or argv[0] not in COMMANDS:
            top = build_parser()
            top.parse_args(argv)  # handles --help, --version and unknown commands (exit 2)
            top.print_help(out)
            return 2
        parser, module = command_parser(argv[0])
        args = parser.parse_args(argv[1:])
    except SystemExit as exc:  # argparse has already printed usage or help
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    try:
        return int(module.run(args, out, err))  # type: ignore[attr-defined]
    except MemoryError:  # (the budgets keep every hostile input found far from this: defence in depth, issue 25)
        from sessionspec.reference.json_text import display

        what = getattr(args, "file", None)
        where = f" reading {display(what)}" if isinstance(what, str) else ""
        assert err is not None
        err.write(f"sessionspec {argv[0]}: error: out of memory{where}; the input is past what this machine can hold\n")
        return 2


class _Terminated(BaseException):
    """A caught termination signal, raised where the process was so that cleanup runs on the way out."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


#: the termination signal received, if any: an exception raised inside a callback from C (SQLite's progress
#: handler) is turned into that library's own error, so the exit status comes from here, not from the error
_received: list[int] = []


def _interrupted(signum: int, _frame: object) -> None:
    _received.append(signum)
    raise _Terminated(signum)


def _import_untraversed(module: str) -> None:
    """Import `module` (and all it imports: the spec, the reference, the generated module) with the cyclic
    collector off, then move what it made to the oldest generation untraversed (``freeze`` then ``unfreeze``, as
    `gc_paused(long_lived=True)` does): it lives as long as the process, so the young collections the import
    would set off (a few ms of validate's start-up) would only traverse it. The collector is back on, with nothing
    frozen, before the command runs (#24)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        importlib.import_module(module)
    finally:
        gc.freeze()
        gc.unfreeze()
        if enabled:
            gc.enable()


def main() -> None:
    # A standard stream closed by the caller (`>&-`, `<&-`) is None in Python: output to it is
    # discarded (the exit status still tells), and reading '-' from a closed stdin is an input error.
    if sys.stdout is None:
        sys.stdout = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 - lives as long as the process
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115
    # SIGTERM (and SIGHUP) end the run through the same exit path as Ctrl-C, so that every `finally` runs: a
    # writer's temp file is removed and the target left as it was (only SIGKILL skips this: docs/security.md)
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, _interrupted)
    try:
        if sys.argv[1:2] == ["validate"]:
            _import_untraversed("sessionspec.validate")
        code = run()
        if sys.argv[1:2] == ["validate"]:
            # What remains is the interpreter's exit: its collections of every object the run made (the specs, the
            # generated module: about 12 ms, an eighth of a one-line log's process) find nothing to free, as this
            # process ends now. Frozen objects are skipped; validate leaves no file of its own open (its output went
            # to the standard streams, which the exit flushes), so nothing a collection would finish is lost (#24).
            gc.freeze()
        sys.exit(128 + _received[0] if _received else code)
    except KeyboardInterrupt:
        sys.exit(130)
    except _Terminated as stop:
        sys.exit(128 + stop.signum)
    except BrokenPipeError:
        sys.exit(1)
