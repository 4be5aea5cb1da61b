"""VS Code (code-server's real workbench and extension host) in headless Chromium, with the built .vsix:
"fixloop: Fix failing test" from the palette streams the model's thoughts in a notification, the fix is
applied and saved, and the real test passes; Cancel in the notification stops the run and changes no
file; a serverPython without fixloop shows the install hint. Screenshots go to each test's tmp dir."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from editors_support import (
    CALC_BUGGY,
    CALC_FIXED,
    E2E_DIR,
    FAILING_TEST,
    FAILING_TEST_LINE,
    TEST_CALC,
    TEST_CALC_STRENGTHENED,
    E2EEnv,
    fix_and_test_turns,
    fix_turns,
    isolated_env,
    pytest_passes,
    require,
    stalled_turns,
    write_project,
)

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(240)]

USER_SETTINGS = {
    "security.workspace.trust.enabled": False,
    "workbench.startupEditor": "none",
    "workbench.tips.enabled": False,
    "workbench.secondarySideBar.defaultVisibility": "hidden",
    "telemetry.telemetryLevel": "off",
    "update.mode": "none",
    "extensions.autoCheckUpdates": False,
    "extensions.autoUpdate": False,
    "chat.disableAIFeatures": True,
    "git.enabled": False,
    "remote.autoForwardPorts": False,
    "files.autoSave": "off",
    "fixloop.trace.server": "verbose",
}


@dataclass
class CodeServer:
    url: str
    trace_file: Path
    log_file: Path
    env: E2EEnv


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def code_server(e2e_env: E2EEnv, tmp_path_factory: pytest.TempPathFactory) -> Iterator[CodeServer]:
    """One code-server for the module (each test opens its own folder in its own window)."""
    for path, what in (
        (e2e_env.node, "Node 24"),
        (e2e_env.code_server_entry, "code-server"),
        (e2e_env.playwright_core, "playwright-core"),
        (e2e_env.chromium, "Chromium"),
        (e2e_env.vsix, "the fixloop .vsix"),
    ):
        require(path, what)
    run = tmp_path_factory.mktemp("code-server")
    data, extensions = run / "data", run / "extensions"
    (data / "User").mkdir(parents=True)
    (data / "User" / "settings.json").write_text(json.dumps(USER_SETTINGS, indent=2))
    trace_file, log_file = run / "lsp-trace.log", run / "code-server.log"
    env = isolated_env(
        run / "home",
        EXTENSIONS_GALLERY="{}",  # no marketplace requests
        FIXLOOP_LSP_TRACE_FILE=str(trace_file),
        FIXLOOP_API_KEY="none",
        FIXLOOP_MODEL="scripted",
    )
    env["PATH"] = f"{e2e_env.node.parent}{os.pathsep}{env['PATH']}"
    base = [
        str(e2e_env.node),
        str(e2e_env.code_server_entry),
        "--user-data-dir",
        str(data),
        "--extensions-dir",
        str(extensions),
    ]
    subprocess.run(
        [*base, "--install-extension", str(e2e_env.vsix)],
        env=env,
        check=True,
        capture_output=True,
        timeout=120,
    )
    port = free_port()
    with log_file.open("w") as log:
        process = subprocess.Popen(
            [
                *base,
                "--bind-addr",
                f"127.0.0.1:{port}",
                "--auth",
                "none",
                "--disable-telemetry",
                "--disable-update-check",
                "--disable-workspace-trust",
                "--disable-getting-started-override",
                "--disable-proxy",
            ],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"{url}/healthz", timeout=2).read()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"code-server did not start:\n{log_file.read_text()[-3000:]}")
                time.sleep(0.3)
        yield CodeServer(url, trace_file, log_file, e2e_env)
    finally:
        os.killpg(process.pid, 15)
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, 9)


def project_with_settings(tmp_path: Path, **settings: Any) -> Path:
    project = write_project(tmp_path / "project")
    (project / ".vscode").mkdir()
    (project / ".vscode" / "settings.json").write_text(json.dumps(settings, indent=2))
    return project


def drive(server: CodeServer, scenario: str, project: Path, out: Path, **extra: Any) -> dict[str, Any]:
    config = {
        "url": server.url,
        "folder": str(project),
        "out": str(out),
        "playwrightCore": str(server.env.playwright_core),
        "chromium": str(server.env.chromium),
        "timeoutMs": 60_000,
        "testLine": FAILING_TEST_LINE + 2,  # 1-based line of the failing assert
        **extra,
    }
    config_file = out / f"{scenario}-config.json"
    config_file.write_text(json.dumps(config))
    started = time.monotonic()
    done = subprocess.run(
        [str(server.env.node), str(E2E_DIR / "vscode" / "drive.mjs"), scenario, str(config_file)],
        env=isolated_env(out / "browser-home"),  # Chromium writes crash reports and dconf under HOME
        capture_output=True,
        text=True,
        timeout=200,
    )
    result_file = out / f"{scenario}-result.json"
    if not result_file.exists():
        pytest.fail(f"drive.mjs exited {done.returncode} without a result:\n{done.stderr[-3000:]}")
    result = json.loads(result_file.read_text())
    result["wall_seconds"] = round(time.monotonic() - started, 1)
    result_file.write_text(json.dumps(result, indent=2))
    assert done.returncode == 0 and result["ok"], (
        f"{scenario} failed: {result['errors']}\ntoasts: {result['texts'].get('toastsAtFailure')}\n"
        f"screenshots: {result['screenshots']}\nserver log: {server.log_file}\ntrace: {server.trace_file}"
    )
    return result


def model_settings(base_url: str) -> dict[str, Any]:
    return {
        "fixloop.serverPython": sys.executable,
        "fixloop.baseUrl": base_url,
        "fixloop.model": "scripted",
        "fixloop.testCommand": [sys.executable, "-m", "pytest"],
    }


def test_fix_from_the_palette_streams_thoughts_and_the_test_passes(
    code_server: CodeServer, tmp_path: Path, scripted_model_process: Any
) -> None:
    model = scripted_model_process(fix_turns(delay=1.5))
    project = project_with_settings(tmp_path, **model_settings(model.base_url))
    thought = "add() subtracts instead of adding"
    result = drive(
        code_server,
        "fix",
        project,
        tmp_path,
        thought=thought,
        calcPath=str(project / "calc.py"),
        calcFixed=CALC_FIXED,
    )

    assert thought in result["texts"]["progress"]
    assert "Cancel" in result["texts"]["progress"]  # the notification is cancellable
    assert "fixing test_add" in result["texts"]["statusDuringRun"]  # the status bar item
    assert "fixed test_add in" in result["texts"]["result"] and "1 file changed" in result["texts"]["result"]
    assert "Undo" in result["texts"]["result"]
    seen = " | ".join(toast["text"] for toast in result["toastTimeline"])
    assert "review and save" not in seen  # the server's own result message is not shown twice
    assert (project / "calc.py").read_text() == CALC_FIXED
    assert (project / "tests" / "test_calc.py").read_text() == TEST_CALC
    assert pytest_passes(project, FAILING_TEST)
    transcript = result["texts"]["transcript"]
    assert "tests/test_calc.py::test_add" in transcript and "edit_file" in transcript
    trace = code_server.trace_file.read_text()
    assert "$/progress" in trace and thought in trace  # the real client's protocol trace
    assert "workspace/applyEdit" in trace
    for shot in result["screenshots"].values():
        assert Path(shot["file"]).stat().st_size > 10_000


def test_a_fix_that_changes_a_test_file_goes_through_the_refactor_preview(
    code_server: CodeServer, tmp_path: Path, scripted_model_process: Any
) -> None:
    model = scripted_model_process(fix_and_test_turns())
    settings = {**model_settings(model.base_url), "fixloop.allowTestEdits": True}
    project = project_with_settings(tmp_path, **settings)
    result = drive(
        code_server, "preview", project, tmp_path, calcPath=str(project / "calc.py"), calcFixed=CALC_FIXED
    )

    assert "fixed test_add" in result["texts"]["result"] and "2 files changed" in result["texts"]["result"]
    assert (project / "calc.py").read_text() == CALC_FIXED
    assert (project / "tests" / "test_calc.py").read_text() == TEST_CALC_STRENGTHENED
    assert pytest_passes(project, FAILING_TEST)


def test_fix_of_the_last_failing_test_then_undo_in_the_result_toast(
    code_server: CodeServer, tmp_path: Path, scripted_model_process: Any
) -> None:
    model = scripted_model_process(fix_turns())
    project = project_with_settings(tmp_path, **model_settings(model.base_url))
    result = drive(code_server, "undo", project, tmp_path)

    assert "Undo" in result["texts"]["result"] and "fixed test_add" in result["texts"]["result"]
    assert "return a - b" in result["texts"]["calcEditor"].replace("\u00a0", " ")
    assert "return a + b" not in result["texts"]["calcEditor"].replace("\u00a0", " ")
    assert (project / "calc.py").read_text() == CALC_BUGGY


def test_cancel_from_the_notification_stops_a_run_started_from_the_code_lens(
    code_server: CodeServer, tmp_path: Path, scripted_model_process: Any
) -> None:
    model = scripted_model_process(stalled_turns(60))
    project = project_with_settings(tmp_path, **model_settings(model.base_url))
    result = drive(code_server, "cancel", project, tmp_path)

    assert "fix" in result["texts"]["codeLens"]  # started from the code lens
    assert "baseline" in result["texts"]["progress"] and "Cancel" in result["texts"]["progress"]
    assert result["steps"]["cancelled"] - result["steps"]["cancel_clicked"] < 15
    assert result["texts"]["dirtyTabs"] == []
    seen = " | ".join(toast["text"] for toast in result["toastTimeline"])
    assert "cancelled the fix of" not in seen  # the server's own message is not shown twice
    assert (project / "calc.py").read_text() == CALC_BUGGY
    assert not pytest_passes(project, FAILING_TEST)


def test_missing_fixloop_install_shows_the_install_hint(code_server: CodeServer, tmp_path: Path) -> None:
    python = shutil.which("python3", path="/usr/bin:/bin") or "/usr/bin/python3"
    if subprocess.run([python, "-c", "import fixloop"], capture_output=True).returncode == 0:
        pytest.skip(f"{python} has fixloop installed")
    project = project_with_settings(tmp_path, **{"fixloop.serverPython": python})
    result = drive(code_server, "missing", project, tmp_path)

    assert f"{python} -m pip install fixloop" in result["texts"]["hint"]
    assert "not installed" in result["texts"]["status"]
