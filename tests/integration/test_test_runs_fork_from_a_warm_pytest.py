"""A fix's test runs fork from a warm pytest (pytest imported once) and behave as runs started cold: the
same outcomes and output, each run's own environment, folder and import path, the environment's own
startup changes, its confinement and its sweep of what the tests leave behind; a hanging run is cut and
the next one still runs; a test that kills the warm process only costs that run; `close()` ends them all."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from fixloop.pytest_runner import PytestRunner
from fixloop.pytest_runner.runner import ImportRedirect
from fixloop.pytest_runner.warm import warm_capable, zygote_env
from fixloop.shadow import ShadowWorkspace
from support import project_python, write_project

pytestmark = pytest.mark.skipif(not warm_capable(("python", "-m", "pytest")), reason="Linux only")

TESTS = {
    "calc.py": "def add(a, b):\n    return a - b\n",
    "tests/test_calc.py": """
    import os
    import signal
    import sys
    import tempfile

    from calc import add


    def test_add():
        assert add(2, 3) == 5


    def test_env_is_the_runs():
        assert os.environ["RUN_VALUE"] == "given"
        assert tempfile.gettempdir() == os.environ["TMPDIR"]
        assert sys.path.index(os.getcwd()) < sys.path.index(os.path.dirname(os.__file__))
        assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL  # as in a fresh interpreter
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
        run_folder = os.path.dirname(os.environ["FIXLOOP_REPORT_FILE"])  # a new one each run
        assert os.environ["HOME"].startswith(run_folder) and tempfile.gettempdir().startswith(run_folder)
    """,
}


def runner_for(root: Path, scratch: Path, **options) -> PytestRunner:
    env = {"RUN_VALUE": "given", **options.pop("env", {})}
    command = (project_python(), "-m", "pytest")
    return PytestRunner(
        root, command, options.pop("timeout", 60), env=env, scratch=scratch, warm=True, **options
    )


def processes_under(folder: Path) -> list[int]:
    """Live processes working inside `folder`."""
    found = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            if (entry / "cwd").resolve().is_relative_to(folder):
                found.append(int(entry.name))
        except OSError:
            continue
    return found


async def test_warm_runs_give_what_cold_runs_give_and_share_one_process(tmp_path: Path) -> None:
    project = write_project(tmp_path / "project", TESTS)
    cold = PytestRunner(project, (project_python(), "-m", "pytest"), 60, env={"RUN_VALUE": "given"})
    warm = runner_for(project, tmp_path / "scratch")
    try:
        expected = await cold.run([])
        first, second = await warm.run([]), await warm.run([])
        assert warm.warm is not None and len(warm.warm.idle) == 1  # one zygote served both runs
    finally:
        await warm.close()
    assert first.results.keys() == second.results.keys() == expected.results.keys()
    assert {i: o.outcome for i, o in first.results.items()} == {
        i: o.outcome for i, o in expected.results.items()
    }
    assert first.failed_ids() == ["tests/test_calc.py::test_add"]
    assert "assert -1 == 5" in first.output


async def test_concurrent_runs_each_get_a_warm_process_and_close_ends_them(tmp_path: Path) -> None:
    project = write_project(tmp_path / "project", TESTS)
    runner = runner_for(project, tmp_path / "scratch")
    runs = await asyncio.gather(*(runner.run(["tests/test_calc.py::test_add"]) for _ in range(3)))
    assert [run.failed_ids() for run in runs] == [["tests/test_calc.py::test_add"]] * 3
    assert runner.warm is not None and len(runner.warm.idle) == 3
    assert processes_under(project)
    await runner.close()
    await asyncio.sleep(0.2)
    assert processes_under(project) == []


async def test_a_hanging_run_is_cut_and_the_next_run_still_runs(tmp_path: Path) -> None:
    project = write_project(
        tmp_path / "project",
        {
            **TESTS,
            "tests/test_hang.py": "import time\n\n\ndef test_hang():\n    time.sleep(600)\n",
        },
    )
    runner = runner_for(project, tmp_path / "scratch", timeout=3)
    try:
        hung = await runner.run(["tests/test_hang.py::test_hang"])
        after = await runner.run(["tests/test_calc.py::test_add"])
    finally:
        await runner.close()
    assert hung.timed_out and hung.hung_test == "tests/test_hang.py::test_hang"
    assert after.failed_ids() == ["tests/test_calc.py::test_add"]


async def test_what_the_tests_leave_behind_is_killed_when_the_run_ends(tmp_path: Path) -> None:
    marker = tmp_path / "survivor"
    project = write_project(
        tmp_path / "project",
        {
            "tests/test_daemon.py": f"""
            import os
            import time


            def test_leaves_a_forked_daemon():
                if os.fork() == 0:
                    os.setsid()
                    if os.fork() == 0:
                        time.sleep(3)
                        open({str(marker)!r}, "w").close()
                    os._exit(0)
            """,
        },
    )
    runner = runner_for(project, tmp_path / "scratch")
    try:
        run = await runner.run([])
        assert run.passed_ids() == ["tests/test_daemon.py::test_leaves_a_forked_daemon"]
        await asyncio.sleep(4)
    finally:
        await runner.close()
    assert not marker.exists()


async def test_a_test_that_kills_the_warm_process_costs_only_its_run(tmp_path: Path) -> None:
    project = write_project(
        tmp_path / "project",
        {
            **TESTS,
            "tests/test_kill.py": """
            import os
            import signal


            def test_kills_the_zygote():
                leader = os.getppid()
                with open(f"/proc/{leader}/stat") as stat:
                    zygote = int(stat.read().rsplit(")", 1)[1].split()[1])
                os.kill(zygote, signal.SIGKILL)
            """,
        },
    )
    runner = runner_for(project, tmp_path / "scratch")
    try:
        await runner.run(["tests/test_kill.py::test_kills_the_zygote"])
        after = await runner.run(["tests/test_calc.py::test_add"])
    finally:
        await runner.close()
    assert after.failed_ids() == ["tests/test_calc.py::test_add"]


async def test_shadow_runs_keep_the_import_hook_and_the_environments_own_startup(tmp_path: Path) -> None:
    project = write_project(
        tmp_path / "project",
        {"tests/test_site.py": "import os\n\n\ndef test_site():\n    assert os.environ['SITE_RAN']\n"},
    )
    theirs = write_project(
        tmp_path / "site", {"sitecustomize.py": "import os\nos.environ['SITE_RAN'] = 'yes'\n"}
    )
    with ShadowWorkspace.create(project) as shadow:
        runner = runner_for(
            shadow.root,
            shadow.scratch,
            env={"PYTHONPATH": str(theirs)},
            confine_writes=shadow.container,
            redirect=ImportRedirect(shadow.real_top, shadow.top),
        )
        try:
            runs = [await runner.run(["tests/test_site.py"]) for _ in range(2)]
        finally:
            await runner.close()
    assert [run.passed_ids() for run in runs] == [["tests/test_site.py::test_site"]] * 2, runs[0].output


def test_only_python_dash_m_pytest_is_warmed_and_a_zygote_keeps_nothing_of_one_run() -> None:
    assert warm_capable(("/venv/bin/python", "-m", "pytest"))
    assert not warm_capable(("poetry", "run", "pytest"))
    assert not warm_capable(("python", "-m", "pytest", "-x"))
    workdir = Path("/scratch/pytest-1")
    env = {
        "FIXLOOP_RUN_MARK": "abc",
        "FIXLOOP_REPORT_FILE": "/scratch/pytest-1/report.jsonl",
        "PYTHONPATH": f"{workdir}{os.pathsep}/theirs",
        "HOME": "/scratch/home",
    }
    assert zygote_env(env, workdir) == {"PYTHONPATH": "/theirs", "HOME": "/scratch/home"}
    assert "PYTHONPATH" not in zygote_env({"PYTHONPATH": str(workdir)}, workdir)
