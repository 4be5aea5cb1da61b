"""Projects set up by the real tools (venv + pip, uv, poetry, hatchling…) are fixed by `fixloop fix` as they
are: the tests run with the project's interpreter, and in the shadow they import the shadow's code."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from tool_made_projects import ToolMadeProject, fix_turns

NAMES = ["setuptools_src"]


def fixloop_fix(made: ToolMadeProject, *args: str, base_url: str,
                env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`fixloop fix` as a user runs it: fixloop from its own environment, nothing about the project set."""
    full_env = {k: v for k, v in os.environ.items()
                if not k.startswith(("FIXLOOP_", "OPENAI_")) and k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    full_env.update(FIXLOOP_BASE_URL=base_url, FIXLOOP_MODEL="scripted", FIXLOOP_API_KEY="none",
                    **made.env, **(env or {}))
    return subprocess.run([sys.executable, "-m", "fixloop", "fix", made.test_id, "--root", str(made.workspace),
                           *args], capture_output=True, text=True, env=full_env, timeout=300)


@pytest.mark.parametrize("name", NAMES)
def test_the_failing_test_is_fixed_from_the_command_line(tool_made, scripted_model, name: str) -> None:
    made = tool_made.get(name)
    model = scripted_model(fix_turns(made))
    done = fixloop_fix(made, base_url=model.base_url)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.startswith("--- a/"), done.stdout
    subprocess.run(["git", "apply", "--check", "-"], cwd=made.workspace, input=done.stdout, text=True,
                   check=True)
    assert subprocess.run(["git", "status", "--porcelain"], cwd=made.workspace, capture_output=True,
                          text=True).stdout == ""
