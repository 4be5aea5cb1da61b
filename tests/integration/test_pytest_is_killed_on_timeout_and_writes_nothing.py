"""The pytest runner kills the whole process group on timeout or cancel, and never writes into the project."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest

from fixloop.pytest_runner import Frame, PytestRunner
from support import write_project


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie still answers signal 0; it is dead for our purposes.
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().split(") ", 1)[1][0] != "Z"
    except OSError:
        return False


async def wait_for_file(path: Path, seconds: float) -> str:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().strip():
            return path.read_text().strip()
        await asyncio.sleep(0.1)
    raise AssertionError(f"{path} was not written within {seconds}s")


async def wait_dead(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        await asyncio.sleep(0.05)
    return not alive(pid)


HANGING = {
    "tests/test_hang.py": """
        import os
        import subprocess
        import sys
        import time


        def test_quick():
            assert True


        def test_hangs():
            child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
            with open(os.environ["PID_FILE"], "w") as f:
                f.write(str(child.pid))
            time.sleep(120)


        def test_never_reached():
            assert True
    """
}


async def test_timeout_kills_the_group_and_keeps_results_so_far(tmp_path: Path) -> None:
    root = write_project(tmp_path / "proj", HANGING)
    pid_file = tmp_path / "grandchild.pid"
    runner = PytestRunner(root, timeout=10, env={"PID_FILE": str(pid_file)})
    started = time.monotonic()
    run = await runner.run()
    assert time.monotonic() - started < 20
    assert run.timed_out
    assert run.hung_test == "tests/test_hang.py::test_hangs"
    assert run.passed_ids() == ["tests/test_hang.py::test_quick"]
    assert "tests/test_hang.py::test_never_reached" not in run.results
    assert "timed out in tests/test_hang.py::test_hangs" in run.summary()
    hung = run.outcome("tests/test_hang.py::test_hangs")
    assert hung is not None and hung.outcome == "failed"
    assert hung.message == "Timeout: the test did not finish within 10s"
    assert hung.frames[-1] == Frame("tests/test_hang.py", 15, "test_hangs")  # the time.sleep line
    assert hung.location == "tests/test_hang.py:15"
    assert "tests/test_hang.py:15: in test_hangs\n    time.sleep(120)" in hung.traceback
    grandchild = int(pid_file.read_text())
    assert await wait_dead(grandchild, 3), "the test's own subprocess outlived the timeout"


async def test_cancel_kills_the_group_within_a_second_and_reraises(tmp_path: Path) -> None:
    root = write_project(tmp_path / "proj", HANGING)
    pid_file = tmp_path / "grandchild.pid"
    runner = PytestRunner(root, timeout=120, env={"PID_FILE": str(pid_file)})
    task = asyncio.create_task(runner.run(["tests/test_hang.py::test_hangs"]))
    grandchild = int(await wait_for_file(pid_file, 60))
    task.cancel()
    cancelled_at = time.monotonic()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert time.monotonic() - cancelled_at < 1.5
    assert await wait_dead(grandchild, 1.5)


async def test_the_project_is_left_without_caches_or_bytecode(tmp_path: Path) -> None:
    root = write_project(
        tmp_path / "proj",
        {
            "pkg/__init__.py": "",
            "pkg/mod.py": "def one():\n    return 1\n",
            "tests/conftest.py": "import pytest\n",
            "tests/test_mod.py": "from pkg.mod import one\n\n\ndef test_one():\n    assert one() == 2\n",
        },
    )
    before = sorted(p.relative_to(root).as_posix() for p in root.rglob("*"))
    run = await PytestRunner(root, timeout=120).run()
    assert run.failed_ids() == ["tests/test_mod.py::test_one"]
    after = sorted(p.relative_to(root).as_posix() for p in root.rglob("*"))
    assert after == before


async def test_test_output_is_captured_not_inherited(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    root = write_project(
        tmp_path / "proj",
        {
            "tests/test_noisy.py": """
                import os
                import sys


                def test_noisy():
                    os.write(1, b"MARKER-ON-FD-1\\n")
                    sys.stderr.write("MARKER-ON-STDERR\\n")
                    print("x" * 50_000)
            """
        },
    )
    runner = PytestRunner(root, command=("python", "-m", "pytest", "-s"), timeout=120)
    run = await runner.run()
    assert run.passed_ids() == ["tests/test_noisy.py::test_noisy"]
    seen = capfd.readouterr()
    assert "MARKER" not in seen.out and "MARKER" not in seen.err
    assert len(run.output) <= 8 * 1024
    assert "1 passed" in run.output.splitlines()[-1]


async def test_a_test_that_kills_the_interpreter_is_reported_failed(tmp_path: Path) -> None:
    root = write_project(
        tmp_path / "proj",
        {
            "tests/test_dies.py": """
                import os


                def test_fine():
                    pass


                def test_dies():
                    os._exit(3)


                def test_after():
                    pass
            """
        },
    )
    run = await PytestRunner(root, timeout=120).run()
    assert not run.timed_out
    assert run.exit_code == 3
    assert run.passed_ids() == ["tests/test_dies.py::test_fine"]
    died = run.outcome("tests/test_dies.py::test_dies")
    assert died is not None and died.outcome == "failed"
    assert died.message == "pytest died while this test was running (exit code 3)"
    assert run.failed_ids() == ["tests/test_dies.py::test_dies"]


async def test_a_hang_while_collecting_names_the_line(tmp_path: Path) -> None:
    root = write_project(
        tmp_path / "proj",
        {
            "slow_import.py": """
                import time

                while True:
                    time.sleep(0.1)
            """,
            "tests/test_import.py": """
                import slow_import


                def test_never():
                    pass
            """,
        },
    )
    run = await PytestRunner(root, timeout=6).run()
    assert run.timed_out
    assert run.hung_test is None
    assert run.results == {}
    assert run.errors == ("timed out while collecting tests, at slow_import.py:4 in <module>",)
