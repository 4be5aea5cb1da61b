"""window/workDoneProgress/cancel, $/cancelRequest and fixloop.server.cancel each stop the model call or
the pytest process within about a second, clean the shadow, end the progress and report "cancelled"."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from lsp_harness import CANCEL, FIX, TEST_FILE, command, progress_values
from lsprotocol import types
from pygls.exceptions import JsonRpcException

STALL = [{"fault": "stall", "seconds": 120}]
LIMIT = 2.0  # seconds from the cancel to the answer; the run itself stops well within it (see the report)


def pytest_processes(marker: str) -> list[int]:
    """Live pytest processes of the run: a cold run's command line mentions `marker` (the shadow's
    --rootdir); a run forked from a warm pytest keeps that one's command line, but works inside `marker`."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            text = cmdline.read_bytes().decode(errors="replace")
            cold = marker in text and "\0no:cacheprovider\0" in text  # the runner's pytest, not git
            warm = "zygote.py" in text and (cmdline.parent / "cwd").resolve().is_relative_to(marker)
            if cold or warm:
                found.append(int(cmdline.parent.name))
        except OSError:
            continue
    return found


def shadows(tmp_path: Path) -> list[Path]:
    root = tmp_path / "xdg" / "fixloop" / "shadows"
    return [p for p in root.iterdir() if p.is_dir()] if root.is_dir() else []


async def until(predicate, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out waiting"
        await asyncio.sleep(0.05)


async def start_stalled_fix(lsp, project: Path, scripted_model, test: str = "test_add"):
    model = scripted_model(STALL)
    client = await lsp(project, base_url=model.base_url)
    task = asyncio.create_task(command(client, FIX, {"testId": f"{TEST_FILE}::{test}"}))
    await until(lambda: len(model.requests) >= 1)  # the run is inside the model call
    return client, task


@pytest.mark.asyncio
async def test_work_done_cancel_stops_the_model_call(
    lsp, project: Path, scripted_model, tmp_path: Path
) -> None:
    client, task = await start_stalled_fix(lsp, project, scripted_model)
    (token,) = client.progress_reports
    started = time.monotonic()
    client.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=token))
    result = await asyncio.wait_for(task, 30)
    assert time.monotonic() - started < LIMIT
    assert result["status"] == "cancelled"
    assert progress_values(client)[-1].kind == "end"
    assert progress_values(client)[-1].message == "cancelled"
    assert shadows(tmp_path) == []


@pytest.mark.asyncio
async def test_cancel_request_kills_pytest(lsp, project: Path, scripted_model, tmp_path: Path) -> None:
    model = scripted_model(STALL)
    client = await lsp(project, base_url=model.base_url, env={"SLOW_TEST_SECONDS": "120"})
    params = types.ExecuteCommandParams(command=FIX, arguments=[{"testId": f"{TEST_FILE}::test_slow"}])
    request = asyncio.create_task(
        client.protocol.send_request_async(types.WORKSPACE_EXECUTE_COMMAND, params, msg_id="fix-slow")
    )
    marker = str(tmp_path / "xdg")  # the shadow lives there, so pytest's --rootdir names it
    await until(lambda: pytest_processes(marker) != [])
    started = time.monotonic()
    client.cancel_request(types.CancelParams(id="fix-slow"))
    with pytest.raises(JsonRpcException) as raised:
        await asyncio.wait_for(request, 30)
    assert raised.value.code == -32800
    await until(lambda: pytest_processes(marker) == [] and progress_values(client)[-1].kind == "end", 10)
    assert time.monotonic() - started < LIMIT
    assert progress_values(client)[-1].message == "cancelled"
    try:
        await until(lambda: shadows(tmp_path) == [], 5)
    except AssertionError:
        raise AssertionError(f"shadow left behind: {shadows(tmp_path)}") from None
    assert model.requests == []  # it never got as far as the model


@pytest.mark.asyncio
async def test_cancel_command_by_run_id(lsp, project: Path, scripted_model) -> None:
    client, task = await start_stalled_fix(lsp, project, scripted_model)
    (run_line,) = [m.message for m in client.log_messages if m.message.startswith("fixloop run ")]
    run_id = run_line.split()[2].rstrip(":")
    assert await command(client, CANCEL, {"runId": "nope"}) == {
        "status": "error",
        "cancelled": [],
        "summary": "no fix with run id nope is running",
    }
    assert await command(client, CANCEL, {"runId": run_id}) == {"status": "ok", "cancelled": [run_id]}
    result = await asyncio.wait_for(task, 10)
    assert result["status"] == "cancelled" and result["runId"] == run_id
    assert await command(client, CANCEL) == {"status": "ok", "cancelled": []}
