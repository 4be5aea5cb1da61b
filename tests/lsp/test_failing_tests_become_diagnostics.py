"""runTests publishes one diagnostic per failing test, cleared when it passes; also on save when enabled."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lsp_harness import ADD_LINE, FIXED_CALC, RUN_TESTS, TEST_FILE, command, open_document, uri
from lsprotocol import types


@pytest.mark.asyncio
async def test_run_tests_publishes_failures_at_the_assertion(lsp, project: Path) -> None:
    client = await lsp(project)
    doc = uri(project / TEST_FILE)
    summary = await command(client, RUN_TESTS, {"uri": doc})
    assert summary["status"] == "ok"
    assert set(summary["failed"]) == {f"{TEST_FILE}::test_add", f"{TEST_FILE}::test_slow"}
    diagnostics = {d.data["testId"]: d for d in client.diagnostics[doc]}
    assert set(diagnostics) == set(summary["failed"])
    add = diagnostics[f"{TEST_FILE}::test_add"]
    assert add.source == "fixloop" and add.code == "failing-test"
    assert add.severity == types.DiagnosticSeverity.Error
    assert add.range.start.line == ADD_LINE - 1
    assert "test_add failed" in add.message and "assert" in add.message
    assert not (project / ".pytest_cache").exists()
    assert not list(project.rglob("__pycache__"))


@pytest.mark.asyncio
async def test_diagnostics_clear_when_the_tests_pass(lsp, project: Path) -> None:
    client = await lsp(project)
    doc = uri(project / TEST_FILE)
    await command(client, RUN_TESTS, {})
    assert len(client.diagnostics[doc]) == 2
    (project / "calc.py").write_text(FIXED_CALC)
    summary = await command(client, RUN_TESTS, {"testIds": [f"{TEST_FILE}::test_add"]})
    assert summary["failed"] == []
    assert [d.data["testId"] for d in client.diagnostics[doc]] == [f"{TEST_FILE}::test_slow"]
    await command(client, RUN_TESTS, {"uri": doc})
    assert list(client.diagnostics[doc]) == []


@pytest.mark.asyncio
async def test_saving_a_test_file_reruns_it_when_enabled(lsp, project: Path) -> None:
    client = await lsp(project, init_options={"runTestsOnSave": True})
    doc = open_document(client, project, TEST_FILE)
    published = client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    for _ in range(3):  # a burst of saves runs the tests once
        client.text_document_did_save(
            types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=doc))
        )
    params = await asyncio.wait_for(published, 60)
    assert params.uri == doc
    failing = {f"{TEST_FILE}::test_add", f"{TEST_FILE}::test_slow"}
    assert {d.data["testId"] for d in params.diagnostics} == failing


@pytest.mark.asyncio
async def test_saving_does_nothing_when_disabled(lsp, project: Path) -> None:
    client = await lsp(project)
    doc = open_document(client, project, TEST_FILE)
    client.text_document_did_save(
        types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=doc))
    )
    await asyncio.sleep(1.5)
    assert doc not in client.diagnostics


@pytest.mark.asyncio
async def test_run_tests_rejects_bad_arguments(lsp, project: Path) -> None:
    client = await lsp(project)
    result = await command(client, RUN_TESTS, {"testIds": "tests/test_calc.py"})
    assert result["status"] == "error" and result["error"]["kind"] == "BadArguments"
