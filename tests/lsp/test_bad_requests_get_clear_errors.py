"""Each bad request gets a clear one-line error (status "error" plus showMessage), never a hang."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsp_harness import FIX, TEST_FILE, command, open_document, uri
from lsprotocol import types


def errors_shown(client) -> list[str]:
    return [m.message for m in client.messages if m.type == types.MessageType.Error]


@pytest.mark.asyncio
async def test_no_model_configured(lsp, project: Path) -> None:
    client = await lsp(project, base_url=None, model=None)
    result = await command(client, FIX, {"testId": f"{TEST_FILE}::test_add"})
    assert result["status"] == "error"
    assert result["error"]["kind"] == "ConfigError"
    assert "no model configured" in result["summary"]
    assert any("no model configured" in m for m in errors_shown(client))
    (values,) = [v for t, v in client.progress_reports.items()]
    assert values[0].kind == "begin" and values[-1].kind == "end"
    assert "no model configured" in values[-1].message


@pytest.mark.asyncio
async def test_position_not_inside_a_test(lsp, project: Path) -> None:
    client = await lsp(project, base_url="http://127.0.0.1:9/v1")
    doc = open_document(client, project, TEST_FILE)
    result = await command(client, FIX, {"uri": doc, "position": {"line": 0, "character": 0}})
    assert result["status"] == "error"
    assert "line 1 of tests/test_calc.py is not inside a test function" in result["summary"]
    assert errors_shown(client)


@pytest.mark.asyncio
async def test_test_id_in_a_missing_file(lsp, project: Path) -> None:
    client = await lsp(project, base_url="http://127.0.0.1:9/v1")
    result = await command(client, FIX, {"testId": "tests/test_nope.py::test_x"})
    assert result["status"] == "error"
    assert result["error"]["kind"] == "TestRunError"
    assert "unknown test id tests/test_nope.py::test_x" in result["summary"]


@pytest.mark.asyncio
async def test_file_outside_the_workspace(lsp, project: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere" / "test_other.py"
    elsewhere.parent.mkdir()
    elsewhere.write_text("def test_x():\n    assert False\n")
    client = await lsp(project, base_url="http://127.0.0.1:9/v1")
    result = await command(client, FIX, {"uri": uri(elsewhere), "position": {"line": 1, "character": 0}})
    assert result["status"] == "error"
    assert result["error"]["kind"] == "PathError"
    assert "outside the workspace" in result["summary"]


@pytest.mark.asyncio
@pytest.mark.parametrize(
    "arguments",
    [
        [],
        ["tests/test_calc.py::test_add"],
        [{"testId": 3}],
        [{}],
        [{"uri": "file:///x.py", "position": {"line": -1}}],
    ],
)
async def test_malformed_arguments(lsp, project: Path, arguments: list) -> None:
    client = await lsp(project, base_url="http://127.0.0.1:9/v1")
    result = await command(client, FIX, *arguments)
    assert result["status"] == "error"
    assert result["error"]["kind"] == "BadArguments"


@pytest.mark.asyncio
async def test_unreachable_model(lsp, project: Path) -> None:
    client = await lsp(project, base_url="http://127.0.0.1:9/v1")
    result = await command(client, FIX, {"testId": f"{TEST_FILE}::test_add"})
    assert result["status"] == "error"
    assert result["error"]["kind"] == "ModelError", result
    assert errors_shown(client)


@pytest.mark.asyncio
async def test_test_id_that_does_not_exist(lsp, project: Path, scripted_model) -> None:
    client = await lsp(project, base_url=scripted_model([]).base_url)  # a live endpoint: its check passes
    result = await command(client, FIX, {"testId": f"{TEST_FILE}::test_nope"})
    assert result["status"] == "error"
    assert result["error"]["kind"] == "TestRunError"
    assert "test_nope" in result["summary"]


@pytest.mark.asyncio
async def test_a_passing_parametrized_test_has_nothing_to_fix(lsp, project: Path, scripted_model) -> None:
    client = await lsp(project, base_url=scripted_model([]).base_url)
    result = await command(client, FIX, {"testId": f"{TEST_FILE}::test_mul[2-3-6]"})
    assert result["status"] == "error"
    assert result["error"]["kind"] == "NothingToFix", result
    assert any(m.type == types.MessageType.Info for m in client.messages)


@pytest.mark.asyncio
async def test_a_client_that_can_neither_apply_nor_show_a_fix_is_refused_up_front(
    lsp, project: Path, scripted_model
) -> None:
    model = scripted_model([])
    client = await lsp(project, base_url=model.base_url, capabilities=types.ClientCapabilities())
    result = await command(client, FIX, {"testId": f"{TEST_FILE}::test_add"})
    assert result["status"] == "error" and result["error"]["kind"] == "UnsupportedClient"
    assert "neither apply workspace edits nor show messages" in result["summary"]
    assert model.requests == []  # refused before the run: no model turn, no test run
