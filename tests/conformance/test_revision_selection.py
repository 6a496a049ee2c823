"""The harness runs the vectors of the revision an adapter declares; an unknown one is a clear usage error."""

from __future__ import annotations

import io
import shlex
import sys

from sessionspec import cli
from sessionspec.conformance.cases import for_revision, load_corpus
from sessionspec.conformance.report import load_report

ADAPTER = [sys.executable, "-m", "sessionspec.conformance.reference_adapter"]


def _fake_adapter(tmp_path, revision: str):
    """An adapter declaring spec revision ``revision`` (no SQLite layout) and answering every case with ``{}``."""
    fake = tmp_path / "adapter.py"
    fake.write_text(
        "import json, sys\n"
        "for line in sys.stdin:\n"
        "    msg = json.loads(line)\n"
        "    if msg['op'] == 'start':\n"
        "        print(json.dumps({'seq': msg['seq'], 'kind': 'result', 'result': {'protocolVersion': 1,\n"
        "            'implementation': {'name': 'x', 'version': '0', 'language': 'py'}, "
        f"'specRevision': {revision!r},\n"
        "            'capabilities': ['load']}}), flush=True)\n"
        "    else:\n"
        "        print(json.dumps({'seq': msg['seq'], 'kind': 'result', 'result': {}}), flush=True)\n"
        "        if msg['op'] == 'stop': break\n"
    )
    return fake


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    return cli.run(list(argv), out, err), out.getvalue(), err.getvalue()


def test_the_declared_revision_picks_the_vectors_and_lands_in_the_report_header(tmp_path):
    report = tmp_path / "r.jsonl"
    code, out, _ = _run("conformance", "--impl", shlex.join([*ADAPTER, "--revision", "0.1.1-rc.2"]),
                        "--only", "fork", "--report", str(report))
    assert code == 0, out
    loaded = load_report(report)
    assert loaded.header["revision"] == "b150a551b8"
    assert loaded.header["implementation"]["specRevision"] == "b150a551b8"
    expected = {c.id for c in for_revision(load_corpus(), "b150a551b8") if c.area == "fork"}
    assert {c["id"] for c in loaded.cases} == expected
    pinned_only = {c.id for c in load_corpus() if c.revisions == ("2f74ac98ba",) and c.area == "fork"}
    assert pinned_only and not pinned_only & expected


def test_an_adapter_declaring_an_unknown_revision_gets_exit_2_listing_the_known_ones(tmp_path):
    fake = _fake_adapter(tmp_path, "0.0.1-rc.1")
    code, _, err = _run("conformance", "--impl", shlex.join([sys.executable, str(fake)]))
    assert code == 2
    assert "'0.0.1-rc.1'" in err and "2f74ac98ba" in err and "b150a551b8" in err and "0.1.1-rc.2" in err


def _sqlite_ids(layout: int) -> set[str]:
    return {c.id for c in for_revision(load_corpus(), "b150a551b8")
            if c.op == "sqlite-read" and (c.sqlite_layouts is None or layout in c.sqlite_layouts)}


def test_the_declared_sqlite_layout_picks_the_sqlite_read_vectors(tmp_path):
    """An adapter whose SQLite backend has layout 14 (the published package's) runs the layout-14 vectors, not 17's."""
    runs = {}
    for layout in (14, 17):
        report = tmp_path / f"r{layout}.jsonl"
        code, out, _ = _run("conformance", "--impl", shlex.join([*ADAPTER, "--revision", "0.1.1-rc.2",
                                                                 "--sqlite-layout", str(layout)]),
                            "--only", "SQLITE", "--report", str(report))
        assert code == 0, out
        assert f"SQLite layout {layout}," in out
        loaded = load_report(report)
        assert loaded.header["implementation"]["sqliteLayout"] == layout
        runs[layout] = {c["id"] for c in loaded.cases if c["id"] in _sqlite_ids(14) | _sqlite_ids(17)}
    assert runs[14] == _sqlite_ids(14) and runs[17] == _sqlite_ids(17)
    only14, only17 = runs[14] - runs[17], runs[17] - runs[14]
    assert len(only14) >= 11 and len(only17) >= 12
    assert "2ed30eba31bd74b7" in runs[14] & runs[17]  # a layout-10 database is refused by both


def test_without_a_declaration_the_revisions_own_layout_runs(tmp_path):
    fake = _fake_adapter(tmp_path, "b150a551b8")
    report = tmp_path / "r.jsonl"
    code, out, _ = _run("conformance", "--impl", shlex.join([sys.executable, str(fake)]), "--only", "SQLITE",
                        "--report", str(report))
    # the fake claims no SQLite capability: every selected case is recorded as skipped, and a run
    # that attempts nothing exits 1 (issue 28); the selection is what this test checks
    assert code == 1 and "no case was attempted" in out, out
    ran = {c["id"] for c in load_report(report).cases}
    assert ran & (_sqlite_ids(14) | _sqlite_ids(17)) == _sqlite_ids(17)


def test_an_sqlite_layout_the_revision_lacks_is_exit_2_listing_its_layouts(tmp_path):
    code, _, err = _run("conformance", "--impl", shlex.join(ADAPTER), "--sqlite-layout", "14")
    assert code == 2 and "SQLite layout 14, which revision 2f74ac98ba does not have; its layouts: 10" in err
    code, _, err = _run("conformance", "--revision", "b150a551b8", "--sqlite-layout", "15")
    assert code == 2 and "its layouts: 17, 14" in err


def test_a_case_naming_a_layout_its_revisions_lack_is_a_located_error():
    import json

    import pytest
    from sessionspec.conformance.cases import CaseFileError, load_case_file, with_id

    case = with_id({"description": "d", "requirements": ["SQLITE-1"], "level": "MUST", "capability": "persistence-sqlite",
                    "revisions": ["2f74ac98ba"], "sqliteLayouts": [14],
                    "input": {"op": "sqlite-read", "args": {"sql": []}}, "expect": {"result": {"sessions": []}}})
    text = json.dumps({"area": "x", "description": "d", "cases": [case]})
    with pytest.raises(CaseFileError, match=r"/cases/0/sqliteLayouts/0.*layout 14 is not a layout of the case's revisions "
                                            r"\(they have 10\)"):
        load_case_file(text, "x.json")
    case = with_id({**case, "revisions": ["b150a551b8"]})
    assert load_case_file(json.dumps({"area": "x", "description": "d", "cases": [case]}), "x.json")[0].sqlite_layouts == (14,)
