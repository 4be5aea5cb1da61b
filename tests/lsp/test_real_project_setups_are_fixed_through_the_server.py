"""Projects set up by the real tools are fixed through the language server as they are: each run says which
interpreter it used and why; in a multi-root workspace every command, setting and diagnostic belongs to one
folder, and two folders with the same test id are fixed independently."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lsp_harness import FIX, RUN_TESTS, command, server_env, start, stop, uri

from fixloop.interpreter import shown
from tool_made_projects import BUILDERS, TARGET, WORDS_BUG, WORDS_FIX, ToolMadeProject, fix_turns

SINGLE_FOLDER = sorted(name for name in BUILDERS if name != "multi_root")


def env_for(tmp_path: Path, made: ToolMadeProject, base_url: str | None) -> dict[str, str]:
    env = server_env(tmp_path, base_url, **made.env)
    for name in ("VIRTUAL_ENV", "PYTHONPATH", "PYTEST_DISABLE_PLUGIN_AUTOLOAD"):
        env.pop(name, None)
    return env


def the_edit_fixes_words(client, made: ToolMadeProject, folder: Path) -> None:
    """One edit, on the words module of `folder`, that turns the bug into the fix."""
    (params,) = client.edits
    (change,) = params.edit.document_changes
    words = folder / made.project.relative_to(made.workspace) / made.words_file
    assert change.text_document.uri == uri(words)
    (text_edit,) = change.edits
    assert text_edit.new_text in WORDS_FIX and WORDS_BUG not in text_edit.new_text


@pytest.mark.asyncio
@pytest.mark.parametrize("name", SINGLE_FOLDER)
async def test_the_failing_test_is_fixed_through_the_server(
    tool_made, scripted_model, tmp_path: Path, name: str
) -> None:
    made = tool_made.get(name)
    model = scripted_model(fix_turns(made))
    client = await start(made.workspace, env_for(tmp_path, made, model.base_url))
    try:
        result = await command(client, FIX, {"testId": made.test_id, "root": uri(made.workspace)}, wait=240)
        assert result["status"] == "fixed", result
        assert result["testIds"] == [made.test_id]
        the_edit_fixes_words(client, made, made.workspace)
        log = "\n".join(m.message for m in client.log_messages)
        assert f"tests run with {shown(made.python, made.workspace)}: {made.reason}" in log
    finally:
        await stop(client)


@pytest.mark.asyncio
async def test_two_folders_with_the_same_test_id_are_fixed_independently(
    tool_made, scripted_model, tmp_path: Path
) -> None:
    beta = tool_made.get("multi_root")
    alpha = beta.workspace.parent / "alpha"
    models = [scripted_model(fix_turns(beta)) for _ in range(2)]
    # One model per folder: each run's requests go to its own endpoint, set per folder.
    configuration = {
        alpha: {"fixloop": {"baseUrl": models[0].base_url}},
        beta.workspace: {"fixloop": {"baseUrl": models[1].base_url, **beta.settings}},
    }
    client = await start(
        alpha,
        env_for(tmp_path, beta, None),
        folders=[alpha, beta.workspace],
        folder_configuration=configuration,
    )
    try:
        results = await asyncio.gather(
            *(
                command(client, FIX, {"testId": beta.test_id, "root": uri(folder)}, wait=240)
                for folder in (alpha, beta.workspace)
            )
        )
        assert [r["status"] for r in results] == ["fixed", "fixed"], results
        assert all(len(model.requests) == len(fix_turns(beta)) for model in models)
        edited = sorted(params.edit.document_changes[0].text_document.uri for params in client.edits)
        assert edited == sorted(uri(folder / beta.words_file) for folder in (alpha, beta.workspace))
        log = "\n".join(m.message for m in client.log_messages)
        assert "tests run with .venv/bin/python: the project's .venv" in log  # alpha
        assert f"tests run with {shown(beta.python, beta.workspace)}: the python setting" in log  # beta
    finally:
        await stop(client)


@pytest.mark.asyncio
async def test_run_tests_publishes_each_folders_failures_on_its_own_files(tool_made, tmp_path: Path) -> None:
    beta = tool_made.get("multi_root")
    alpha = beta.workspace.parent / "alpha"
    client = await start(
        alpha,
        env_for(tmp_path, beta, None),
        folders=[alpha, beta.workspace],
        folder_configuration={beta.workspace: {"fixloop": dict(beta.settings)}},
    )
    try:
        summary = await command(
            client, RUN_TESTS, {"root": uri(beta.workspace), "testIds": ["tests/test_counting.py"]}
        )
        assert summary["failed"] == [beta.test_id], summary
        published = {u for u, diagnostics in client.diagnostics.items() if diagnostics}
        assert published == {uri(beta.workspace / "tests/test_counting.py")}
    finally:
        await stop(client)


@pytest.mark.asyncio
async def test_a_monorepo_package_runs_in_its_project_with_workspace_relative_ids(
    tool_made, tmp_path: Path
) -> None:
    made = tool_made.get("monorepo")
    client = await start(made.workspace, env_for(tmp_path, made, None))
    try:
        test_file = made.workspace / "packages/app/tests/test_counting.py"
        summary = await command(client, RUN_TESTS, {"uri": uri(test_file)})
        assert summary["failed"] == [made.test_id], summary
        assert sorted(summary["passed"]) == sorted(
            f"packages/app/tests/test_counting.py::{name}"
            for name in ("test_most_common_ignores_case", "test_word_count_simple")
        )
        (diagnostic,) = client.diagnostics[uri(test_file)]
        assert diagnostic.data == {"testId": f"packages/app/tests/test_counting.py::{TARGET}"}
    finally:
        await stop(client)
