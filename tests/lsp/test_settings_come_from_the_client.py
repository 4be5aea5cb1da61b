"""Settings from initializationOptions, workspace/configuration and didChangeConfiguration; a bad value is
reported once via showMessage and the default is kept."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsp_harness import FIX, TEST_FILE, command
from lsprotocol import types


def warnings_shown(client) -> list[str]:
    return [m.message for m in client.messages if m.type == types.MessageType.Warning]


@pytest.mark.asyncio
async def test_a_bad_setting_is_reported_once_and_the_default_kept(lsp, project: Path) -> None:
    client = await lsp(project, model=None, init_options={"maxSteps": "many", "model": "m"})
    await command(client, FIX, {"testId": "tests/test_nope.py::test_x"})
    await command(client, FIX, {"testId": "tests/test_nope.py::test_x"})
    shown = [m for m in warnings_shown(client) if "maxSteps" in m]
    assert len(shown) == 1 and "must be a whole number" in shown[0]


@pytest.mark.asyncio
async def test_workspace_configuration_is_read(lsp, project: Path) -> None:
    # No model in the environment: it comes from the client's `fixloop` section.
    client = await lsp(
        project,
        base_url="http://127.0.0.1:9/v1",
        model=None,
        configuration={"fixloop": {"model": "from-config"}},
    )
    result = await command(client, FIX, {"testId": f"{TEST_FILE}::test_add"})
    assert result["error"]["kind"] == "ModelError"  # got past "no model configured"


@pytest.mark.asyncio
async def test_did_change_configuration_applies(lsp, project: Path) -> None:
    client = await lsp(project, base_url="http://127.0.0.1:9/v1", model=None, capabilities="neovim@v0.7.0")
    first = await command(client, FIX, {"testId": f"{TEST_FILE}::test_add"})
    assert first["error"]["kind"] == "ConfigError"
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"fixloop": {"model": "pushed"}})
    )
    second = await command(client, FIX, {"testId": f"{TEST_FILE}::test_add"})
    assert second["error"]["kind"] == "ModelError"
