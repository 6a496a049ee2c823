"""One reading of a stored log per command: each inspecting command reads the log's text once (`jsonl_read.load_log`)
and its records once, in the load path's one pass (`jsonl.load_records`: the walk of the load rules with one
`jsonl.StoredReader`), which gives the records, the first defect and the crash-repair closers together; `pack`
rewrites the records that reading read. A second
reader creeping back (a `read_artifact` of the same bytes, a `StoredReader.read_all` pass before the walk, a
second stored reader) changes these counts; `repair` reads its output once more, to refuse writing what a loader
would refuse (`validate --level load` of the result).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cli_helpers import cli, jsonl, turn_events
from sessionspec import inspect_cmds
from sessionspec.reference import jsonl as jsonl_module
from sessionspec.reference import jsonl_read


class _Counts(dict[str, int]):
    def wrap(self, monkeypatch: pytest.MonkeyPatch, owner: Any, name: str, key: str) -> None:
        original = getattr(owner, name)

        def counted(*args: Any, **kwargs: Any) -> Any:
            self[key] = self.get(key, 0) + 1
            return original(*args, **kwargs)

        monkeypatch.setattr(owner, name, counted)


@pytest.fixture
def counts(monkeypatch: pytest.MonkeyPatch) -> _Counts:
    found = _Counts()
    found.wrap(monkeypatch, jsonl_module.StoredReader, "__init__", "stored readers")
    found.wrap(monkeypatch, jsonl_module.StoredReader, "read_all", "reading passes")
    found.wrap(monkeypatch, jsonl_module, "_read", "artifact parses")
    for module in (inspect_cmds, jsonl_read):
        found.wrap(monkeypatch, module, "load_log", "text reads")
    return found


#: a log that ends inside its second turn (a crash): every load appends closers (REPAIR-*)
_EVENTS = [*turn_events(1), *turn_events(2, start_seq=len(turn_events(1)), close=False)]


@pytest.mark.parametrize("revision", ["2f74ac98ba", "b150a551b8"])
@pytest.mark.parametrize(("command", "readers", "reads"), [
    ("derive", 1, 1), ("fold", 1, 1), ("stats", 1, 1),
    ("repair", 2, 2),  # the input's load view, then the written result's load check
    ("pack", 1, 2),  # the records as read, rewritten; the written result's load check
])
def test_each_command_reads_the_log_once(tmp_path: Path, counts: _Counts, revision: str, command: str,
                                         readers: int, reads: int) -> None:
    path = tmp_path / "in.jsonl"
    path.write_bytes(jsonl(_EVENTS))
    extra = ["-o", str(tmp_path / "out.jsonl")] if command in ("repair", "pack") else []
    result = cli(command, str(path), *(["--revision", revision] if command != "pack" else []), *extra)
    assert result.code == 0, result.err
    if command != "pack":
        assert "closer(s)" in result.err + result.out  # the crash repair's closers, from the same pass
    assert counts.get("reading passes", 0) == 0  # no reading pass of its own before the walk
    assert counts.get("artifact parses", 0) == 0  # the log's text is not parsed again by the first-defect reader
    assert counts.get("stored readers", 0) == readers
    assert counts.get("text reads", 0) == reads
