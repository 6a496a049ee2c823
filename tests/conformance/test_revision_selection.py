"""The harness runs the vectors of the revision an adapter declares; an unknown one is a clear usage error."""

from __future__ import annotations

import io
import shlex
import sys

from sessionspec import cli
from sessionspec.conformance.cases import for_revision, load_corpus
from sessionspec.conformance.report import load_report

ADAPTER = [sys.executable, "-m", "sessionspec.conformance.reference_adapter"]


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
    fake = tmp_path / "adapter.py"
    fake.write_text(
        "import json, sys\n"
        "for line in sys.stdin:\n"
        "    msg = json.loads(line)\n"
        "    if msg['op'] == 'start':\n"
        "        print(json.dumps({'seq': msg['seq'], 'kind': 'result', 'result': {'protocolVersion': 1,\n"
        "            'implementation': {'name': 'x', 'version': '0', 'language': 'py'}, 'specRevision': '0.0.1-rc.1',\n"
        "            'capabilities': ['load']}}), flush=True)\n"
        "    else:\n"
        "        print(json.dumps({'seq': msg['seq'], 'kind': 'result', 'result': {}}), flush=True)\n"
        "        if msg['op'] == 'stop': break\n"
    )
    code, _, err = _run("conformance", "--impl", shlex.join([sys.executable, str(fake)]))
    assert code == 2
    assert "'0.0.1-rc.1'" in err and "2f74ac98ba" in err and "b150a551b8" in err and "0.1.1-rc.2" in err
