"""Fixes of different tests run independently at the same time; the same test twice is refused."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lsp_harness import CANCEL, FIX, TEST_FILE, command, fix_turns
from test_cancel_really_stops_the_run import until

TEST_ADD = f"{TEST_FILE}::test_add"
TEST_SLOW = f"{TEST_FILE}::test_slow"


@pytest.mark.asyncio
async def test_the_same_test_twice_is_refused(lsp, project: Path, scripted_model) -> None:
    model = scripted_model([{"fault": "stall", "seconds": 120}])
    client = await lsp(project, base_url=model.base_url)
    first = asyncio.create_task(command(client, FIX, {"testId": TEST_ADD}))
    await until(lambda: len(model.requests) == 1)
    second = await command(client, FIX, {"testId": TEST_ADD})
    assert second["status"] == "error" and second["error"]["kind"] == "AlreadyRunning"
    assert f"{TEST_ADD} is already being fixed" in second["summary"]
    await command(client, CANCEL, {})
    assert (await asyncio.wait_for(first, 10))["status"] == "cancelled"


@pytest.mark.asyncio
async def test_two_tests_are_fixed_independently(lsp, project: Path, scripted_model) -> None:
    # Whichever run asks the model first stalls; the other gets the fix and finishes meanwhile.
    model = scripted_model([{"fault": "stall", "seconds": 120}, *fix_turns([TEST_ADD, TEST_SLOW])])
    client = await lsp(project, base_url=model.base_url)
    runs = [asyncio.create_task(command(client, FIX, {"testId": test})) for test in (TEST_ADD, TEST_SLOW)]
    done, pending = await asyncio.wait(runs, timeout=90, return_when=asyncio.FIRST_COMPLETED)
    (finished,) = done
    assert finished.result()["status"] == "fixed", finished.result()
    (stalled,) = pending
    assert len(client.progress_reports) == 2
    await command(client, CANCEL, {})
    assert (await asyncio.wait_for(stalled, 10))["status"] == "cancelled"
    assert len(client.edits) == 1
