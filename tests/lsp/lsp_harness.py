"""Harness for the language-server tests: a tiny buggy project, model scripts, and a pytest-lsp client
that applies edits, answers showMessageRequest and decodes code actions correctly."""

from __future__ import annotations

import asyncio
import os
import re
import sys
import uuid
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.uris import from_fs_path
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities, make_test_lsp_client

from support import commit_all

SERVER = [sys.executable, "-m", "fixloop.lsp"]
FIX = "fixloop.server.fixFailingTest"
RUN_TESTS = "fixloop.server.runTests"
CANCEL = "fixloop.server.cancel"
TIMEOUT = 60.0

CALC = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"
FIXED_CALC = CALC.replace("return a - b", "return a + b")
TESTS = """import time

import pytest

from calc import add, mul


def test_add():
    assert add(2, 3) == 5


@pytest.mark.parametrize("a,b,expected", [(1, 1, 1), (2, 3, 6)])
def test_mul(a, b, expected):
    assert mul(a, b) == expected


def test_add_zero():
    x = 1
    assert add(0, 0) == 0


def test_slow():
    time.sleep(float(__import__("os").environ.get("SLOW_TEST_SECONDS", "0")))
    assert add(1, 1) == 2
"""
TEST_FILE = "tests/test_calc.py"
ADD_LINE = 9  # 1-based line of `assert add(2, 3) == 5`
ADD_DEF = 8


def make_project(root: Path, git: bool = True) -> Path:
    """calc.py with a sign bug; test_add and test_slow fail, test_mul and test_add_zero pass."""
    (root / "tests").mkdir(parents=True)
    (root / "calc.py").write_text(CALC)
    (root / "conftest.py").write_text("")
    (root / TEST_FILE).write_text(TESTS)
    if git:
        commit_all(root)
    return root


def fix_turns(
    test_ids: list[str], old: str = "return a - b", new: str = "return a + b"
) -> list[dict[str, Any]]:
    """A model that reads calc.py, fixes the sign, runs the tests and submits."""
    return [
        {
            "content": "The failure points into calc.py; let me read it.",
            "tool_calls": [{"name": "read_file", "arguments": {"path": "calc.py"}}],
        },
        {
            "content": "add subtracts; fixing the sign.",
            "tool_calls": [
                {"name": "edit_file", "arguments": {"path": "calc.py", "old_text": old, "new_text": new}}
            ],
        },
        {
            "content": "Now let me run the failing tests.",
            "tool_calls": [{"name": "run_tests", "arguments": {"test_ids": test_ids}}],
        },
        {
            "content": "The tests pass.",
            "tool_calls": [{"name": "submit", "arguments": {"summary": "add adds"}}],
        },
    ]


def server_env(
    tmp: Path, base_url: str | None, model: str | None = "scripted", **extra: str
) -> dict[str, str]:
    """The server's whole environment (pytest-lsp replaces it): no ambient model settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FIXLOOP_", "OPENAI_"))}
    for name in ("XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME"):
        env[name] = str(tmp / "xdg")
    if base_url:
        env["FIXLOOP_BASE_URL"] = base_url
    if model:
        env["FIXLOOP_MODEL"] = model
    env["FIXLOOP_API_KEY"] = "test-key"
    env["FIXLOOP_MUTANTS"] = "off"  # the fixture bugs are one-token bugs: the model's path is under test
    env["FIXLOOP_POOL_SHARE"] = "0"  # the first verified fix ends the search
    # the projects need no third-party pytest plugin, and loading this venv's (xdist, pytest-lsp, asyncio…)
    # costs each of the server's pytest runs about a second of CPU; tests of a user's plugins set it back
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    env.update(extra)
    return env


def make_client() -> LanguageClient:
    """pytest-lsp's client plus an applyEdit handler (it has none, lsp-facts §0.11), a showMessageRequest
    handler, and the CodeAction decoding fix for lsprotocol 2025.0.0 (§0.12)."""
    client = make_test_lsp_client()
    converter = client.protocol._converter

    def action_or_command(obj: Any, _: Any) -> Any:
        kind = types.Command if isinstance(obj.get("command"), str) else types.CodeAction
        return converter.structure(obj, kind)

    converter.register_structure_hook(types.Command | types.CodeAction, action_or_command)
    client.edits = []  # type: ignore[attr-defined]
    client.apply_answer = types.ApplyWorkspaceEditResult(applied=True)  # type: ignore[attr-defined]
    client.message_requests = []  # type: ignore[attr-defined]
    client.message_answer = "Apply"  # type: ignore[attr-defined]

    @client.feature(types.WORKSPACE_APPLY_EDIT)
    def apply_edit(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        client.edits.append(params)  # type: ignore[attr-defined]
        return client.apply_answer  # type: ignore[attr-defined]

    @client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
    def message_request(params: types.ShowMessageRequestParams) -> types.MessageActionItem | None:
        client.message_requests.append(params)  # type: ignore[attr-defined]
        answer = client.message_answer  # type: ignore[attr-defined]
        return types.MessageActionItem(title=answer) if answer else None

    return client


async def start(
    root: Path,
    env: dict[str, str],
    capabilities: str | types.ClientCapabilities = "visual-studio-code",
    init_options: Any = None,
    configuration: dict[str, Any] | None = None,
    command: list[str] | None = None,
    folders: list[Path] | None = None,
    folder_configuration: dict[Path, dict[str, Any]] | None = None,
) -> LanguageClient:
    """A client initialized on `root` (or on several workspace folders); `configuration` answers
    workspace/configuration for every folder, `folder_configuration` for one folder (its scopeUri)."""
    config = ClientServerConfig(server_command=command or SERVER, client_factory=make_client, server_env=env)
    client: LanguageClient = await config.start()  # type: ignore[assignment]
    if configuration is not None:
        client.set_configuration(configuration)
    for folder, value in (folder_configuration or {}).items():
        client.set_configuration(value, scope_uri=uri(folder))
    caps = client_capabilities(capabilities) if isinstance(capabilities, str) else capabilities
    folders = folders or [root]
    await asyncio.wait_for(
        client.initialize_session(
            types.InitializeParams(
                capabilities=caps,
                root_uri=uri(root),
                workspace_folders=[
                    types.WorkspaceFolder(uri=uri(folder), name=folder.name) for folder in folders
                ],
                initialization_options=init_options,
            )
        ),
        TIMEOUT,
    )
    return client


async def stop(client: LanguageClient) -> None:
    try:
        await asyncio.wait_for(client.shutdown_session(), 15)
    except (TimeoutError, RuntimeError):
        pass
    await client.stop()


def uri(path: Path) -> str:
    return from_fs_path(str(path)) or path.as_uri()


async def command(
    client: LanguageClient, name: str, *arguments: Any, token: str | None = None, wait: float = TIMEOUT
) -> Any:
    if token is not None:
        client.progress_reports.setdefault(token, [])
    params = types.ExecuteCommandParams(command=name, arguments=list(arguments), work_done_token=token)
    return await asyncio.wait_for(client.workspace_execute_command_async(params), wait)


def open_document(
    client: LanguageClient, root: Path, rel: str, text: str | None = None, version: int = 1
) -> str:
    doc_uri = uri(root / rel)
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=doc_uri,
                language_id="python",
                version=version,
                text=(root / rel).read_text() if text is None else text,
            )
        )
    )
    return doc_uri


def apply_text_edits(text: str, edits: list[Any]) -> str:
    """Apply LSP TextEdits as a client does: lines end at \\r\\n, \\n or \\r, columns are UTF-16 units."""
    starts = [0] + [m.end() for m in re.finditer(r"\r\n|\r|\n", text)]

    def offset(position: types.Position) -> int:
        start = starts[position.line]
        units = 0
        index = start
        while units < position.character:
            units += 2 if ord(text[index]) > 0xFFFF else 1
            index += 1
        return index

    for edit in sorted(edits, key=lambda e: offset(e.range.start), reverse=True):
        text = text[: offset(edit.range.start)] + edit.new_text + text[offset(edit.range.end) :]
    return text


def progress_values(client: LanguageClient, token: str | None = None) -> list[Any]:
    if token is not None:
        return list(client.progress_reports.get(token, []))
    tokens = [t for t in client.progress_reports if str(t).startswith("fixloop-")]
    assert len(tokens) == 1, f"expected one server-created progress token, got {tokens}"
    return list(client.progress_reports[tokens[0]])


def new_token() -> str:
    return f"client-{uuid.uuid4().hex[:8]}"
