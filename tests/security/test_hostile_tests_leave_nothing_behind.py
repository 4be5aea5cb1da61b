"""Tests that misbehave — daemons in new sessions, double forks, killing pytest's parent, writing to HOME
and TMPDIR, reading the user's home, printing terminal escapes — leave no process and no file behind, and
a regex that backtracks without end neither hangs the run nor ignores Ctrl-C."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
from hostile import (
    HOME_SECRET,
    PROCESS_MARK,
    TARGET,
    Attempt,
    Watch,
    calls_turn,
    failures,
    fix_turns,
    judge_run,
    record,
    run_engine,
)

LINGER = f'[sys.executable, "-c", "import time; time.sleep(300)", "{PROCESS_MARK}"]'
TRAP_FILES = {
    "tests/test_hostile.py": f'''\
        import os
        import signal
        import subprocess
        import sys
        import tempfile
        import time


        def test_daemon_in_a_new_session():
            subprocess.Popen({LINGER}, start_new_session=True)


        def test_daemon_with_an_empty_environment():
            subprocess.Popen({LINGER}, start_new_session=True, env={{}})


        def test_double_fork():
            if os.fork() == 0:
                os.setsid()
                if os.fork() == 0:
                    os.execv(sys.executable, {LINGER})
                os._exit(0)
            time.sleep(0.2)


        def test_a_child_that_ignores_sigterm():
            subprocess.Popen([sys.executable, "-c",
                              "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
                              "time.sleep(300)", "{PROCESS_MARK}"])


        def test_kills_its_parent_after_starting_a_daemon():
            subprocess.Popen({LINGER}, start_new_session=True)
            time.sleep(0.2)
            os.kill(os.getppid(), signal.SIGKILL)


        def test_kills_its_whole_group_after_starting_a_daemon():
            subprocess.Popen({LINGER}, start_new_session=True)
            time.sleep(0.2)
            os.killpg(0, signal.SIGKILL)


        def test_writes_to_home_and_temp():
            with open(os.path.expanduser("~/pwned.txt"), "w") as file:
                file.write("x")
            tempfile.mkstemp()
            os.makedirs(os.path.join(tempfile.gettempdir(), "pwned-dir"), exist_ok=True)


        def test_uses_tmp_path(tmp_path):
            (tmp_path / "scratch.txt").write_text("x")


        def test_reads_the_users_ssh_key():
            with open(os.path.expanduser("~/.ssh/id_rsa")) as file:
                secret = file.read()
            assert False, secret


        def test_prints_terminal_escapes():
            print("\\x1b]0;owned\\x07\\x1b[2J\\x1b[31mred\\x00nul")
            assert False, "\\x1b[2Jcleared\\x1b]52;c;cGF5bG9hZA==\\x07"


        def test_hangs():
            time.sleep(300)


        def _users_repository():
            with open(".git/objects/info/alternates") as file:  # the shadow borrows the user's objects
                return os.path.dirname(os.path.dirname(file.read().strip()))


        def test_writes_into_the_users_repository():
            with open(os.path.join(_users_repository(), "PWNED.txt"), "w") as file:
                file.write("x")


        def test_plants_a_git_filter_for_fixloops_own_git():
            outside = os.path.join(os.path.dirname(_users_repository()), "outside")
            with open(".git/config", "a") as file:
                file.write(f'[filter "evil"]\\n\\tclean = touch {{outside}}/FILTER_RAN && cat\\n')
            os.makedirs(".git/info", exist_ok=True)
            with open(".git/info/attributes", "w") as file:
                file.write("* filter=evil\\n")


        def test_deletes_and_writes_outside():
            outside = os.path.join(os.path.dirname(_users_repository()), "outside")
            os.remove(os.path.join(outside, "victim", "keep.txt"))
            with open(os.path.join(outside, "dropped.txt"), "w") as file:
                file.write("x")
        ''',
}
HOSTILE = [
    "test_daemon_in_a_new_session",
    "test_daemon_with_an_empty_environment",
    "test_double_fork",
    "test_a_child_that_ignores_sigterm",
    "test_kills_its_parent_after_starting_a_daemon",
    "test_kills_its_whole_group_after_starting_a_daemon",
    "test_writes_to_home_and_temp",
    "test_uses_tmp_path",
    "test_reads_the_users_ssh_key",
    "test_prints_terminal_escapes",
    "test_hangs",
    "test_plants_a_git_filter_for_fixloops_own_git",
]


def running(names: list[str]) -> list[Attempt]:
    """One attempt per hostile test of tests/test_hostile.py: the model asks run_tests to run it."""
    ids = {name: {"test_ids": [f"tests/test_hostile.py::{name}"]} for name in names}
    return [Attempt("hostile test", "run_tests", name, ids[name], expect="answer") for name in names]


async def test_hostile_tests_leave_no_process_and_no_file(trap, scripted_model):
    attempts = running(HOSTILE)
    watch = Watch(trap)
    run = await run_engine(
        trap, scripted_model, [calls_turn(attempts), *fix_turns()], maxSteps=6, testTimeout=3, limit=120
    )
    judge_run(run, attempts)
    for attempt in attempts:
        if "\x1b" in attempt.detail or "\x00" in attempt.detail:
            attempt.detail = f"terminal escapes reached the model: {attempt.detail!r}"
            attempt.outcome = "leak"
    record(attempts)
    problems = failures(attempts + watch.check("hostile tests", "hostile test"))
    assert not problems, "\n".join(problems)
    assert not (trap.home / "pwned.txt").exists()
    assert run.result is not None and run.result.status == "fixed"


def _landlock() -> bool:
    """Whether this kernel confines writes (checked in a child: confinement cannot be undone)."""
    probe = (
        "import sys; from fixloop.pytest_runner.reaper import confine_writes; "
        "sys.exit(0 if confine_writes(['/tmp']) else 1)"
    )
    env = {**os.environ, "FIXLOOP_NO_SANDBOX": ""}
    return subprocess.run([sys.executable, "-c", probe], env=env).returncode == 0


@pytest.mark.skipif(not _landlock(), reason="the kernel has no Landlock: tests run without write confinement")
async def test_tests_cannot_write_outside_the_shadow(trap, scripted_model):
    """Code under test that finds the user's repository (through the shadow's git alternates) and the
    folders around it can neither write nor delete there."""
    names = ["test_writes_into_the_users_repository", "test_deletes_and_writes_outside"]
    attempts = running(names)
    watch = Watch(trap)
    run = await run_engine(trap, scripted_model, [calls_turn(attempts), *fix_turns()], maxSteps=6)
    judge_run(run, attempts)
    record(attempts)
    problems = failures(attempts + watch.check("writes outside", "hostile test"))
    assert not problems, "\n".join(problems)
    assert run.result is not None and run.result.status == "fixed"


def test_ctrl_c_stops_a_runaway_search_and_removes_everything(trap, scripted_model):
    """`fixloop fix` interrupted while search runs a runaway pattern: exit 130 at once, nothing left."""
    server = scripted_model([{"tool_calls": [{"name": "search", "arguments": {"pattern": "(a+)+$"}}]}])
    watch = Watch(trap)
    attempt = Attempt("hostile test", "search", "Ctrl-C during a runaway search")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FIXLOOP_", "OPENAI_"))}
    env.update(
        FIXLOOP_BASE_URL=server.base_url,
        FIXLOOP_MODEL="scripted",
        FIXLOOP_MUTANTS="off",
        FIXLOOP_POOL_SHARE="0",
        FIXLOOP_API_KEY="none",
    )
    process = subprocess.Popen(
        [sys.executable, "-m", "fixloop", "fix", TARGET, "--root", str(trap.project)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    deadline = time.monotonic() + 60
    while not server.requests and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(1.0)  # the search is running now
    process.send_signal(signal.SIGINT)
    try:
        out, err = process.communicate(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()
        out, err = process.communicate()
        attempt.outcome, attempt.detail = "hang", "still running 15 s after Ctrl-C"
    else:
        if process.returncode != 130 or "Traceback" in err:
            attempt.outcome, attempt.detail = "traceback", f"exit {process.returncode}: {err[-500:]}"
        else:
            attempt.outcome, attempt.detail = "refused", err.strip().splitlines()[-1]
    problems = failures(record([attempt]) + watch.check("ctrl-c", "hostile test"))
    assert not problems, "\n".join(problems)
    assert HOME_SECRET not in out + err
