"""Projects set up by the real tools (venv + pip, uv, poetry, hatchling…) are fixed by `fixloop fix` as they
are: the tests run with the project's interpreter, and in the shadow they import the shadow's code; a run
that imported the user's real files is an environment error (the control switches the redirection off)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from fixloop.errors import TestEnvironmentError
from fixloop.interpreter import choose_interpreter, shown
from fixloop.pytest_runner import PytestRunner
from fixloop.pytest_runner.runner import ImportRedirect
from fixloop.shadow import ShadowWorkspace
from tool_made_projects import BUILDERS, WORDS_BUG, WORDS_FIX, ToolMadeProject, fix_turns

NAMES = sorted(BUILDERS)


def fixloop_fix(
    made: ToolMadeProject, *args: str, base_url: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`fixloop fix` as a user runs it: fixloop from its own environment, nothing about the project set."""
    full_env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("FIXLOOP_", "OPENAI_"))
        and k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTEST_DISABLE_PLUGIN_AUTOLOAD")
    }
    full_env.update(
        FIXLOOP_BASE_URL=base_url,
        FIXLOOP_MODEL="scripted",
        FIXLOOP_MUTANTS="off",
        FIXLOOP_POOL_SHARE="0",
        FIXLOOP_API_KEY="none",
        **made.env,
        **(env or {}),
    )
    python = ["--python", str(made.settings["python"])] if "python" in made.settings else []
    command = [sys.executable, "-m", "fixloop", "fix", made.test_id, "--root", str(made.workspace), *python]
    return subprocess.run([*command, *args], capture_output=True, text=True, env=full_env, timeout=300)


@pytest.mark.parametrize("name", NAMES)
def test_the_failing_test_is_fixed_from_the_command_line(tool_made, scripted_model, name: str) -> None:
    made = tool_made.get(name)
    model = scripted_model(fix_turns(made))
    done = fixloop_fix(made, base_url=model.base_url)
    assert done.returncode == 0, done.stderr[-3000:]
    said = f"tests run with {shown(made.python, made.workspace)}: {made.reason}"
    assert said in done.stderr  # the live view
    transcript = Path(re.search(r"transcript: (\S+\.jsonl)", done.stderr).group(1)).read_text()
    assert transcript.count(json.dumps(said)[1:-1]) == 1  # and the transcript, once
    assert done.stdout.startswith("--- a/"), done.stdout
    subprocess.run(
        ["git", "apply", "--check", "-"], cwd=made.workspace, input=done.stdout, text=True, check=True
    )
    assert (
        subprocess.run(
            ["git", "status", "--porcelain"], cwd=made.workspace, capture_output=True, text=True
        ).stdout
        == ""
    )


@pytest.mark.parametrize("name", NAMES)
async def test_shadow_runs_import_the_shadow_and_the_control_catches_the_real_files(
    tool_made, monkeypatch, name: str
) -> None:
    made = tool_made.get(name)
    monkeypatch.delenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", raising=False)  # xdist must load, as for a user
    env = {**os.environ, **made.env}
    env.pop("VIRTUAL_ENV", None)
    python = str(made.settings.get("python", ""))
    interpreter = choose_interpreter(made.project, made.workspace, python=python, env=env)
    assert interpreter.python == made.python
    with ShadowWorkspace.create(made.project) as shadow:
        words = shadow.root / made.words_file
        words.write_text(words.read_text().replace(WORDS_BUG, WORDS_FIX))
        redirect = ImportRedirect(shadow.real_top, shadow.top)
        runner = PytestRunner(shadow.root, interpreter.command, 120, env=made.env, redirect=redirect)
        run = await runner.run([made.project_test_id])  # raises TestEnvironmentError on any real import
        assert run.passed_ids() == [made.project_test_id], run.output  # the shadow's fixed code ran
        assert runner.redirected, "nothing needed redirecting: this set-up proves nothing"

        control = PytestRunner(
            shadow.root,
            interpreter.command,
            120,
            redirect=redirect,
            env={**made.env, "FIXLOOP_NO_IMPORT_REDIRECT": "1"},
        )
        with pytest.raises(TestEnvironmentError, match=f"imported your real files .*{made.package}"):
            await control.run([made.project_test_id])


def test_a_run_that_tests_the_real_files_is_an_environment_error(tool_made, scripted_model) -> None:
    made = tool_made.get("setuptools_src")
    model = scripted_model(fix_turns(made))
    done = fixloop_fix(made, base_url=model.base_url, env={"FIXLOOP_NO_IMPORT_REDIRECT": "1"})
    assert done.returncode == 2, done.stderr[-3000:]
    assert "imported your real files (textstats" in done.stderr
    assert "the environment, not the model" in done.stderr
    assert model.requests == [], "the model must not be asked when no verdict can be trusted"


def test_a_project_interpreter_without_pytest_is_one_line_naming_it_and_the_install(
    fixture_project, scripted_model
) -> None:
    root = fixture_project("demo")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root / ".venv")], check=True)
    made = ToolMadeProject(
        "demo",
        root,
        root,
        "tests/test_mathutils.py::test_factorial_of_five",
        "",
        root / ".venv/bin/python",
        "",
        "",
    )
    done = fixloop_fix(made, base_url=scripted_model([]).base_url)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines()[-1] == (
        "fixloop: pytest is not installed in .venv/bin/python (the project's .venv): install it with "
        f"`{root / '.venv/bin/python'} -m pip install pytest`"
    )


def test_tests_that_import_an_installed_copy_are_named_as_the_reason(tool_made, scripted_model) -> None:
    made = tool_made.get("installed_copy")
    done = fixloop_fix(made, base_url=scripted_model(fix_turns(made)).base_url)
    assert done.returncode == 1, done.stderr[-3000:]
    said = " ".join(done.stderr.split())  # the live view wraps long lines
    assert "the tests import textstats from an installed copy (" in said
    assert "not from src/textstats: a fix there will not reach them; install the project editable" in said
