"""A local endpoint's prompt cache is warmed as the language server starts, before any fix is asked for;
the first fix then finds it warm and sends no second warm-up."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lsp_harness import FIX, TEST_FILE, command, fix_turns


@pytest.mark.asyncio
async def test_the_prefix_is_sent_at_initialized_and_not_again_by_the_fix(
    lsp, project: Path, scripted_model
) -> None:
    model = scripted_model(fix_turns([f"{TEST_FILE}::test_add"]))
    client = await lsp(project, base_url=model.base_url)
    for _ in range(100):
        if model.warmups:
            break
        await asyncio.sleep(0.1)
    assert len(model.warmups) == 1 and model.requests == []  # before any fix
    (warm,) = model.warmups
    assert warm["max_tokens"] == 1 and [m["role"] for m in warm["messages"]] == ["system"]
    result = await command(client, FIX, {"testId": f"{TEST_FILE}::test_add"})
    assert result["status"] == "fixed", result
    assert len(model.warmups) == 1  # the fix found the cache warm
    first = model.requests[0]
    assert first["messages"][0] == warm["messages"][0] and first["tools"] == warm["tools"]
