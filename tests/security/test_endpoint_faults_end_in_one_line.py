"""The endpoint misbehaves every way a broken server or proxy can: each run ends in one line, never a
traceback or a hang; transient faults are retried and the fix still lands."""

from __future__ import annotations

import pytest
from fault_server import FAULTS, FaultServer
from hostile import FIX, TARGET, Attempt, RunRecord, Watch, failures, fixloop_cli, record, run_engine

FIX_TURNS = [
    {"tool_calls": [{"name": "edit_file", "arguments": FIX}]},
    {"tool_calls": [{"name": "submit", "arguments": {"summary": "add adds"}}]},
]
# Faults a retry gets past; the rest end the run.
TRANSIENT = ("html_502", "html_500", "cut_mid_stream", "stall_mid_stream", "stall_before_headers")
# Every fault, repeated until the client gives up (one 5xx kind stands for all: each takes the whole
# retry backoff).
FOREVER = sorted(set(FAULTS) - {"html_500", "cut_mid_stream"})


def _judge(attempt: Attempt, run: RunRecord, want_fixed: bool) -> None:
    from fixloop.errors import FixloopError

    error = run.error
    if run.timed_out:
        attempt.outcome, attempt.detail = "hang", f"still running after {run.seconds:.0f} s"
    elif error is not None and not isinstance(error, FixloopError):
        attempt.outcome, attempt.detail = "traceback", repr(error)
    elif error is not None:
        one = "\n" not in error.message and len(error.message) < 400 and not want_fixed
        attempt.outcome = "one line" if one else "traceback"
        attempt.detail = error.message
    elif want_fixed and run.result.status == "fixed":
        attempt.outcome, attempt.detail = "contained", "retried, then fixed"
    elif not want_fixed and attempt.label.startswith("bad_tool_call") and "\n" not in run.result.summary:
        attempt.outcome, attempt.detail = "one line", f"{run.result.status}: {run.result.summary}"
    elif not want_fixed:
        attempt.outcome = "hang"
        attempt.detail = (
            f"went on without saying what the endpoint sent: {run.result.status}: {run.result.summary}"
        )
    else:
        attempt.outcome, attempt.detail = "traceback", f"{run.result.status}: {run.result.summary}"


async def _engine_run(trap, answers, **settings) -> RunRecord:
    with FaultServer(answers) as server:
        return await run_engine(trap, lambda script: server, [], limit=60, **settings)


@pytest.mark.parametrize("fault", FOREVER)
async def test_a_fault_that_never_ends_ends_the_run_in_one_line(trap, fault):
    watch = Watch(trap)
    attempt = Attempt("fault", "model", f"{fault}, every time")
    run = await _engine_run(trap, [fault], modelTimeout=2, maxSteps=3)
    _judge(attempt, run, want_fixed=False)
    problems = failures(record([attempt]) + watch.check(fault, "fault"))
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("fault", TRANSIENT)
async def test_a_passing_fault_is_retried_and_the_fix_lands(trap, fault):
    watch = Watch(trap)
    attempt = Attempt("fault", "model", f"{fault}, once")
    run = await _engine_run(trap, [fault, *FIX_TURNS], modelTimeout=2, maxSteps=4)
    _judge(attempt, run, want_fixed=True)
    problems = failures(record([attempt]) + watch.check(fault, "fault"))
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("fault", ["malformed_line", "html_200", "empty_choices"])
def test_the_command_line_says_one_line_and_exits_2(trap, fault):
    watch = Watch(trap)
    attempt = Attempt("fault", "fixloop fix", f"{fault} through the CLI")
    with FaultServer([fault]) as server:
        done = fixloop_cli(trap, TARGET, base_url=server.base_url, timeout=90)
    lines = [line for line in done.stderr.splitlines() if line.startswith("fixloop: ")]
    if "Traceback" in done.stderr or done.returncode != 2 or len(lines) != 1:
        attempt.outcome, attempt.detail = "traceback", f"exit {done.returncode}: {done.stderr[-600:]}"
    else:
        attempt.outcome, attempt.detail = "one line", lines[0]
    problems = failures(record([attempt]) + watch.check(fault, "fault"))
    assert not problems, "\n".join(problems)
