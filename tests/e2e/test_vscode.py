"""VS Code (code-server's real workbench and extension host) in headless Chromium, with the built .vsix:
the bundled extension fixes a test from the Test Explorer with nothing but a system Python; "fixloop: Fix
failing test" from the palette streams the model's thoughts; the editor's context menu, the refactor
preview, Undo and Cancel work; in a two-folder workspace a fix carries and lands in its own folder;
fromEnvironment with an interpreter lacking fixloop says how to go on.
One code-server serves the module (each test opens its own folder). Screenshots go to each test's tmp dir."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from editors_support import (
    CALC_BUGGY,
    CALC_FIXED,
    FAILING_TEST,
    TEST_CALC,
    TEST_CALC_STRENGTHENED,
    E2EEnv,
    fix_and_test_turns,
    fix_turns,
    pytest_passes,
    stalled_turns,
    write_project,
)
from vscode_support import (
    SYSTEM_PATH,
    CodeServer,
    drive,
    python_without_fixloop,
    require_fresh_bundle,
    running_code_server,
)

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(240)]


@pytest.fixture(scope="module")
def code_server(e2e_env: E2EEnv, tmp_path_factory: pytest.TempPathFactory) -> Iterator[CodeServer]:
    """One fresh code-server for the module, the fixloop .vsix and the harness test controller installed."""
    with running_code_server(e2e_env, tmp_path_factory.mktemp("code-server")) as server:
        yield server


@pytest.fixture(scope="module")
def system_python() -> str:
    python = shutil.which("python3", path=SYSTEM_PATH)
    if python is None:
        pytest.skip(f"no python3 in {SYSTEM_PATH}")
    return python


@pytest.fixture(scope="module")
def project_python(system_python: str, tmp_path_factory: pytest.TempPathFactory) -> str:
    """The project's own environment, as a pytest project has one: a venv with pytest, and no fixloop."""
    venv = tmp_path_factory.mktemp("project-venv")
    subprocess.run([system_python, "-m", "venv", str(venv)], check=True, timeout=120)
    python = str(venv / "bin" / "python")
    subprocess.run([python, "-m", "pip", "install", "-q", "--disable-pip-version-check", "pytest"],
                   check=True, timeout=300)  # fmt: skip
    return python


def project_with_settings(tmp_path: Path, **settings: Any) -> Path:
    project = write_project(tmp_path / "project")
    (project / ".vscode").mkdir()
    (project / ".vscode" / "settings.json").write_text(json.dumps(settings, indent=2))
    return project


def dev_settings(base_url: str) -> dict[str, Any]:
    """The server from this checkout (the venv's editable fixloop), so these tests follow server/ as it is."""
    return {
        "fixloop.serverPython": sys.executable,
        "fixloop.importStrategy": "fromEnvironment",
        "fixloop.baseUrl": base_url,
        "fixloop.model": "scripted",
        "fixloop.testCommand": [sys.executable, "-m", "pytest"],
    }


def test_the_bundled_extension_fixes_a_failed_test_from_the_test_results_with_only_a_system_python(
    code_server: CodeServer,
    tmp_path: Path,
    scripted_model_process: Any,
    system_python: str,
    project_python: str,
) -> None:
    bundle = require_fresh_bundle()
    assert python_without_fixloop(system_python) and python_without_fixloop(project_python)
    model = scripted_model_process(fix_turns())
    project = project_with_settings(
        tmp_path,
        **{
            "fixloop.serverPython": system_python,  # importStrategy: the default, useBundled
            "fixloop.baseUrl": model.base_url,
            "fixloop.model": "scripted",
            "fixloop.testCommand": [project_python, "-m", "pytest"],
            "testing.automaticallyOpenPeekView": "failureInVisibleDocument",
        },
    )
    (project / ".e2e-test-controller").write_text("")  # the harness controller reports test_add failed
    result = drive(code_server, "explorer", project, tmp_path, calcPath=str(project / "calc.py"),
                   calcFixed=CALC_FIXED)  # fmt: skip

    assert f"bundled fixloop {bundle['fixloop']}" in result["texts"]["status"]
    assert system_python in result["texts"]["status"]
    assert "Fix with fixloop" in result["texts"]["itemMenu"]  # the failed test's menu in the Test Explorer
    assert any("Fix with fixloop" in menu for menu in result["menus"])  # the failure message's, used
    assert "fixed test_add" in result["texts"]["result"] and "1 file changed" in result["texts"]["result"]
    assert (project / "calc.py").read_text() == CALC_FIXED
    assert pytest_passes(project, FAILING_TEST)
    log = code_server.fixloop_log()
    assert f"fixloop at {code_server.extensions_dir}" in log  # the fixloop inside the installed extension
    assert '"testId":"tests/test_calc.py::test_add"' in code_server.trace_file.read_text().replace(" ", "")


def test_fix_from_the_palette_streams_thoughts_and_the_test_passes(
    code_server: CodeServer, tmp_path: Path, scripted_model_process: Any
) -> None:
    model = scripted_model_process(fix_turns(delay=1.5))
    project = project_with_settings(tmp_path, **dev_settings(model.base_url))
    thought = "add() subtracts instead of adding"
    result = drive(code_server, "fix", project, tmp_path, thought=thought, calcPath=str(project / "calc.py"),
                   calcFixed=CALC_FIXED)  # fmt: skip

    assert thought in result["texts"]["progress"]
    assert "Cancel" in result["texts"]["progress"]  # the notification is cancellable
    assert "fixing test_add" in result["texts"]["statusDuringRun"]  # the language status item
    assert "fixed test_add in" in result["texts"]["result"] and "1 file changed" in result["texts"]["result"]
    assert "Undo" in result["texts"]["result"]
    seen = " | ".join(toast["text"] for toast in result["toastTimeline"])
    assert "review and save" not in seen  # the server's own result message is not shown twice
    assert (project / "calc.py").read_text() == CALC_FIXED
    assert (project / "tests" / "test_calc.py").read_text() == TEST_CALC
    assert pytest_passes(project, FAILING_TEST)
    transcript = result["texts"]["transcript"].replace("\u00a0", " ")
    assert "tests/test_calc.py::test_add" in transcript and "Action (step 1):** `read_file`" in transcript
    assert "Result: fixed" in result["texts"]["transcriptEnd"].replace("\u00a0", " ")
    trace = code_server.trace_file.read_text()
    assert "$/progress" in trace and thought in trace  # the real client's protocol trace
    assert "workspace/applyEdit" in trace
    assert f'"root": "{project.as_uri()}"' in trace  # the command carries its workspace folder
    for shot in result["screenshots"].values():
        assert Path(shot["file"]).stat().st_size > 10_000


def test_a_fix_from_the_editor_menu_that_changes_a_test_file_goes_through_the_refactor_preview(
    code_server: CodeServer, tmp_path: Path, scripted_model_process: Any
) -> None:
    model = scripted_model_process(fix_and_test_turns())
    settings = {**dev_settings(model.base_url), "fixloop.allowTestEdits": True}
    project = project_with_settings(tmp_path, **settings)
    result = drive(code_server, "preview", project, tmp_path, calcPath=str(project / "calc.py"),
                   calcFixed=CALC_FIXED)  # fmt: skip

    assert any("Fix with fixloop" in menu for menu in result["menus"])  # the editor's context menu
    assert "fixed test_add" in result["texts"]["result"] and "2 files changed" in result["texts"]["result"]
    assert (project / "calc.py").read_text() == CALC_FIXED
    assert (project / "tests" / "test_calc.py").read_text() == TEST_CALC_STRENGTHENED
    assert pytest_passes(project, FAILING_TEST)


def test_in_a_two_folder_workspace_the_fix_carries_and_lands_in_its_own_folder(
    code_server: CodeServer, tmp_path: Path, scripted_model_process: Any
) -> None:
    model = scripted_model_process(fix_turns())
    alpha, beta = (write_project(tmp_path / name) for name in ("alpha", "beta"))
    workspace = tmp_path / "two.code-workspace"
    folders = [{"path": str(alpha)}, {"path": str(beta)}]
    workspace.write_text(json.dumps({"folders": folders, "settings": dev_settings(model.base_url)}))
    drive(code_server, "multiroot", tmp_path, tmp_path, workspace=str(workspace),
          openPath=str(beta / "tests" / "test_calc.py"), openRow="test_calc.py",
          calcPath=str(beta / "calc.py"), calcFixed=CALC_FIXED)  # fmt: skip

    assert (beta / "calc.py").read_text() == CALC_FIXED
    assert (alpha / "calc.py").read_text() == CALC_BUGGY  # same test id, other folder: untouched
    assert f'"root": "{beta.as_uri()}"' in code_server.trace_file.read_text()


def test_fix_of_the_last_failing_test_then_undo_in_the_result_toast(
    code_server: CodeServer, tmp_path: Path, scripted_model_process: Any
) -> None:
    model = scripted_model_process(fix_turns())
    project = project_with_settings(tmp_path, **dev_settings(model.base_url))
    result = drive(code_server, "undo", project, tmp_path)

    assert "Undo" in result["texts"]["result"] and "fixed test_add" in result["texts"]["result"]
    assert "return a - b" in result["texts"]["calcEditor"].replace("\u00a0", " ")
    assert "return a + b" not in result["texts"]["calcEditor"].replace("\u00a0", " ")
    assert (project / "calc.py").read_text() == CALC_BUGGY


def test_after_undo_try_another_fix_goes_on_with_the_reason_given(
    code_server: CodeServer, tmp_path: Path, scripted_model_process: Any
) -> None:
    reason = "keep the operands in the order b, a"
    other = {"path": "calc.py", "old_text": "return a - b", "new_text": "return b + a"}
    another = [
        {
            "content": "Swapping the operands.",
            "tool_calls": [{"name": "edit_file", "arguments": other}],
            "expect": {
                "messages_contain": ["The user rejected the fix you proposed", f"The user's reason: {reason}"]
            },
        },
        {"content": "Done.", "tool_calls": [{"name": "submit", "arguments": {"summary": "b + a"}}]},
    ]
    model = scripted_model_process([*fix_turns(), *another])
    project = project_with_settings(tmp_path, **dev_settings(model.base_url))
    result = drive(code_server, "another", project, tmp_path, reason=reason)

    assert "What was wrong with the fix?" in result["texts"]["reasonPrompt"]
    assert "fixed test_add" in result["texts"]["secondResult"]
    assert "return b + a" in result["texts"]["calcAfterAnother"].replace("\u00a0", " ")


def test_cancel_from_the_notification_stops_a_run_started_from_the_code_lens(
    code_server: CodeServer, tmp_path: Path, scripted_model_process: Any
) -> None:
    model = scripted_model_process(stalled_turns(60))
    project = project_with_settings(tmp_path, **dev_settings(model.base_url))
    result = drive(code_server, "cancel", project, tmp_path)

    assert "fix" in result["texts"]["codeLens"]  # started from the code lens
    progress = result["texts"]["progress"]
    assert re.search("baseline:|suspects:", progress) and "Cancel" in progress
    assert result["steps"]["cancelled"] - result["steps"]["cancel_clicked"] < 15
    assert result["texts"]["dirtyTabs"] == []
    seen = " | ".join(toast["text"] for toast in result["toastTimeline"])
    assert "cancelled the fix of" not in seen  # the server's own message is not shown twice
    assert (project / "calc.py").read_text() == CALC_BUGGY
    assert not pytest_passes(project, FAILING_TEST)


def test_from_environment_with_an_interpreter_lacking_fixloop_offers_the_bundled_one(
    code_server: CodeServer, tmp_path: Path, system_python: str
) -> None:
    if not python_without_fixloop(system_python):
        pytest.skip(f"{system_python} has fixloop installed")
    settings = {"fixloop.serverPython": system_python, "fixloop.importStrategy": "fromEnvironment"}
    project = project_with_settings(tmp_path, **settings)
    result = drive(code_server, "missing", project, tmp_path)

    hint = result["texts"]["hint"]
    assert f"fixloop is not installed for {system_python}" in hint
    assert "Use bundled fixloop" in hint and "useBundled" in hint
    assert "pip install fixloop" not in hint
    assert "not installed" in result["texts"]["status"]
