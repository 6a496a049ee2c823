"""Live clock readings are checked, not only normalised away (issue #28).

A live store stamps event ``time`` and header ``createdAt`` with the wall clock
in integer milliseconds; the comparison blanks them to ``"<now>"`` because no two
runs share them, so before this check an implementation stamping seconds
passed. Now a reading more than a day from the judging moment fails the case
with a message that says what is wrong.
"""

from __future__ import annotations

import io
import time

from conformance_fakes import broken_cmd
from sessionspec import cli
from sessionspec.conformance.compare import NOW, clock_problems, judge


def _run(*argv: str) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    code = cli.run(list(argv), out, err)
    return code, out.getvalue() + err.getvalue()


def _live(time_value: object, created: object) -> dict:
    return {"trace": [{"at": "0", "do": "stored", "ok": {"sessions": {"s": {
        "header": {"version": 0, "id": "s", "createdAt": created},
        "events": [{"type": "plugin/x", "seq": 0, "time": time_value, "data": 1}]}}}}]}


def test_an_implementation_stamping_seconds_fails_a_live_case_and_the_reference_passes():
    code, text = _run("conformance", "--only", "live", "--impl", broken_cmd("--seconds-clock"))
    assert code == 1
    assert "reads as seconds since the epoch; times are integer milliseconds" in text
    assert "/events/0/time" in text and "/header/createdAt" in text
    code, text = _run("conformance", "--only", "live")
    assert code == 0, text


def test_only_readings_far_from_now_are_reported_and_each_says_why():
    now = time.time_ns() // 1_000_000
    expected = _live(NOW, NOW)
    assert clock_problems(expected, _live(now - 5_000, now)) == []
    assert clock_problems(expected, _live(now - 86_000_000, now + 86_000_000)) == []  # within a day either way
    (seconds,) = clock_problems(expected, _live(now // 1000, now))
    assert seconds.startswith("/trace/0/ok/sessions/s/events/0/time: ") and "reads as seconds" in seconds
    (early,) = clock_problems(expected, _live(now, 1000))
    assert early.startswith("/trace/0/ok/sessions/s/header/createdAt: 1000 ") and "more than a day before" in early
    (late,) = clock_problems(expected, _live(now * 1000, now))
    assert "more than a day after" in late
    # an ill-typed reading is left to the structural diff, which shows it as it is
    assert clock_problems(expected, _live("soon", -1)) == []


def test_the_verdict_of_a_live_case_names_the_clock_and_other_differences():
    now = time.time_ns() // 1_000_000
    args: dict = {"script": []}
    good = judge("live", args, {"result": _live(NOW, NOW)}, {"kind": "result", "result": _live(now, now)})
    assert good.outcome == "passed"
    bad = judge("live", args, {"result": _live(NOW, NOW)}, {"kind": "result", "result": _live(now // 1000, now)})
    assert bad.outcome == "failed" and bad.message.startswith("implausible clock reading: ")
    assert bad.differences == ()
