"""`fixloop bench` with nothing to run or a bad option, case or subset: one line on stderr, exit 2, no run."""

from __future__ import annotations

from pathlib import Path

import pytest

from fixloop.cli import main
from support import PROJECTS_DIR, write_project

PROJECTS = str(PROJECTS_DIR)


@pytest.fixture
def folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("FIXLOOP_MODEL", "scripted")
    monkeypatch.setenv("FIXLOOP_BASE_URL", "http://127.0.0.1:9/v1")
    (tmp_path / "empty").mkdir()
    (tmp_path / "nope.txt").write_text("demo\nno_such_case\n")
    write_project(tmp_path / "broken", {"case.json": '{"failing_test_ids": "tests/test_x.py::test_y"}'})
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--case", "nope"], "no case named nope; the cases found are bill_splitter"),
        ([PROJECTS, "--case", "demo,nope"], "no case named nope; the cases found are careless_fix"),
        (["empty"], "no bench cases in empty: a case is a folder with a case.json"),
        (["missing"], "missing is not a folder"),
        (["broken"], "case.json: failing_test_ids must be a non-empty list of strings"),
        ([PROJECTS, "--subset", "nope.txt"], "nope.txt: no case named no_such_case"),
        ([PROJECTS, "--mode", "react,guess"], "unknown mode guess: choose from react, oneshot, sample"),
        ([PROJECTS, "--jobs", "0"], "--jobs must be at least 1, got 0"),
        ([PROJECTS, "--report", "out.txt"], "--report out.txt: name an .html or .md file"),
        ([PROJECTS, "--results", "empty"], "--results empty is not a file"),
        ([PROJECTS, "--shard", "3/2"], "--shard 3/2: K must be between 1 and N"),
        ([PROJECTS, "--shard", "half"], "--shard 'half': write K/N"),
        ([PROJECTS, "--run-timeout", "0"], "--run-timeout must be a positive number of seconds, got 0"),
        (["report"], "bench report: name the results files to merge"),
        (["report", "nope.jsonl"], "bench report: nope.jsonl is not a file"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    folders: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
):
    assert main(["bench", *argv]) == 2
    out, err = capsys.readouterr()
    assert err.count("\n") == 1 and err.startswith("fixloop: ") and message in err, err
    assert "fixed 0" not in out and "Traceback" not in err


def test_no_model_configured_is_refused_before_any_run(folders: Path, capsys, monkeypatch):
    monkeypatch.delenv("FIXLOOP_MODEL")
    (folders / "demo.txt").write_text("demo\n")
    assert main(["bench", PROJECTS, "--subset", "demo.txt", "--results", "r.jsonl"]) == 2
    assert "no model configured" in capsys.readouterr().err
    assert not (folders / "r.jsonl").exists()
