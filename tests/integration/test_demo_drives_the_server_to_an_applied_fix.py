"""`fixloop demo`: the built-in LSP client drives `fixloop serve` to a verified, applied fix."""

from __future__ import annotations

import io
import tempfile
from pathlib import Path

import pytest
from lsprotocol import types

from fixloop import bundled, demo
from fixloop.errors import ConfigError
from scripted_model import ScriptedModelServer
from support import fix_script, load_fix

FIX_TURNS = fix_script("demo")  # read mathutils.py, make the recorded fix, run the test, submit


def _edit(line: int, start: int, end: int, text: str) -> types.TextEdit:
    return types.TextEdit(
        range=types.Range(
            start=types.Position(line=line, character=start), end=types.Position(line=line, character=end)
        ),
        new_text=text,
    )


def test_text_edits_use_utf16_columns_and_apply_last_first() -> None:
    text = "a = '😀x'\nb = 1\r\nc = 2\n"
    edits = [_edit(0, 7, 8, "y"), _edit(1, 4, 5, "42"), _edit(2, 0, 0, "# c\n")]
    assert demo.apply_text_edits(text, edits) == "a = '😀y'\nb = 42\r\n# c\nc = 2\n"


def test_workspace_edit_writes_the_files(tmp_path: Path) -> None:
    target = tmp_path / "m.py"
    target.write_text("x = 1\n")
    uri = demo._uri(target)
    edit = types.WorkspaceEdit(
        document_changes=[
            types.TextDocumentEdit(
                text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=None),
                edits=[_edit(0, 4, 5, "2")],
            )
        ]
    )
    assert demo.apply_workspace_edit(edit) == (True, None)
    assert target.read_text() == "x = 2\n"
    plain = types.WorkspaceEdit(changes={uri: [_edit(0, 0, 1, "y")]})
    assert demo.apply_workspace_edit(plain) == (True, None)
    assert target.read_text() == "y = 2\n"


def test_progress_lines_are_deduplicated_and_stamped() -> None:
    out = io.StringIO()
    view = demo.DemoView(out)
    view.progress({"kind": "begin", "title": "fixloop: fix t", "message": "starting"})
    view.progress({"kind": "report", "message": "thinking"})
    view.progress({"kind": "report", "message": "thinking"})
    view.progress({"kind": "report", "message": "thinking about"})
    view.progress({"kind": "report", "message": "thinking about it"})
    view.progress({"kind": "report", "message": "next line"})
    view.progress({"kind": "report", "message": "→ read_file a.py"})
    view.progress({"kind": "end", "message": "fixed and applied: ok"})
    lines = out.getvalue().splitlines()
    assert [line.split("] ", 1)[1] for line in lines] == [
        "fixloop: fix t: starting",
        "thinking about it",
        "next line",
        "→ read_file a.py",
        "fixed and applied: ok",
    ]
    assert all(line.startswith("[") for line in lines)


def test_the_demo_project_is_found_and_targets_its_failing_test() -> None:
    project = demo.demo_project()
    assert (project / "tests").is_dir()
    target = demo.demo_target(project)
    assert target == {"testId": demo.DEMO_TEST} or "uri" in target


def test_a_wrong_demo_override_names_the_variable(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(demo.DEMO_ENV, str(tmp_path / "nowhere"))
    with pytest.raises(ConfigError, match="FIXLOOP_DEMO_PROJECT"):
        demo.demo_project()


def test_an_install_without_the_bundled_projects_says_how_to_install(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(bundled, "_PACKAGED", tmp_path / "a")
    monkeypatch.setattr(bundled, "_CHECKOUT", tmp_path / "b")
    with pytest.raises(ConfigError, match="Install section"):
        demo.demo_project()


async def test_demo_fixes_the_project_through_the_language_server(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME"):
        monkeypatch.setenv(name, str(tmp_path / "xdg"))
    monkeypatch.setenv("FIXLOOP_API_KEY", "test-key")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    with ScriptedModelServer(FIX_TURNS) as model:
        code = await demo.run_demo("scripted", model.base_url)
        asked = len(model.requests)
    out = capsys.readouterr().out
    assert code == 0, out
    assert asked == len(FIX_TURNS)  # one search that ends at its first verified fix: no pool, no ranking
    assert "language server up" in out
    assert "→ read_file mathutils.py" in out
    assert out.index("→ read_file") < out.index("→ edit_file") < out.index("the verified fix:")
    fix = load_fix("demo")["edits"][0]
    assert f"+        {fix['new_text']}" in out
    assert "its tests now: 3 passed" in out
    copies = list(tmp_path.glob("fixloop-demo-*/project/mathutils.py"))
    assert len(copies) == 1 and fix["new_text"] in copies[0].read_text()


def test_the_demo_is_one_candidate_round_without_the_one_token_round_or_the_pools_further_search() -> None:
    options = demo.demo_options("local", None)
    assert options == {"model": "local", "mutants": False, "poolShare": 0}
    assert demo.demo_options("scripted", "http://127.0.0.1:9")["baseUrl"] == "http://127.0.0.1:9"
