"""Real fixture projects through the server: a parametrized id, and CRLF + non-ASCII text in an open buffer
(the edit's UTF-16 positions must reproduce the recorded fix byte for byte)."""

from __future__ import annotations

import pytest
from lsp_harness import FIX, apply_text_edits, command, open_document

from support import fix_script, load_fix


@pytest.mark.asyncio
@pytest.mark.parametrize("name", ["parametrized", "unicode_crlf"])
async def test_recorded_fix_arrives_as_the_edit(lsp, fixture_project, scripted_model, name: str) -> None:
    fix = load_fix(name)
    root = fixture_project(name)
    model = scripted_model(fix_script(name))
    client = await lsp(root, base_url=model.base_url, capabilities="visual-studio-code")
    (edit,) = fix["edits"]
    with (root / edit["path"]).open(encoding="utf-8", newline="") as file:
        before = file.read()
    doc = open_document(client, root, edit["path"], text=before, version=2)
    result = await command(client, FIX, {"testId": fix["test_ids"][0]})
    assert result["status"] == "fixed", result
    (params,) = client.edits
    (change,) = params.edit.document_changes
    assert change.text_document.uri == doc and change.text_document.version == 2
    assert apply_text_edits(before, change.edits) == before.replace(edit["old_text"], edit["new_text"])
