"""`python` in a bench case's test command: the copy's own venv, else $FIXLOOP_BENCH_PYTHON, else the
interpreter running the bench; a bad $FIXLOOP_BENCH_PYTHON is a one-line case error."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from fixloop.bench.cases import PYTHON_ENV, BenchCase, CaseError, bench_env, resolve_test_command


def case(tmp_path: Path) -> BenchCase:
    return BenchCase(name="c", folder=tmp_path, failing_test_ids=("test_c.py::test_c",))


def interpreter(path: Path) -> Path:
    """A file where an interpreter would be (resolving the command only looks for it)."""
    path.parent.mkdir(parents=True)
    path.write_text("")
    return path


def test_without_a_choice_python_is_the_bench_own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(PYTHON_ENV, raising=False)
    assert resolve_test_command(case(tmp_path), tmp_path) == (sys.executable, "-m", "pytest")


def test_the_chosen_interpreter_runs_the_tests_and_leads_the_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    chosen = interpreter(tmp_path / "env" / "bin" / "python")
    monkeypatch.setenv(PYTHON_ENV, str(chosen))
    assert resolve_test_command(case(tmp_path), tmp_path) == (str(chosen), "-m", "pytest")
    assert bench_env(tmp_path)["PATH"].split(":")[0] == str(chosen.parent)


def test_the_copy_own_venv_wins_over_the_chosen_interpreter(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    own = interpreter(tmp_path / ".venv" / "bin" / "python")
    monkeypatch.setenv(PYTHON_ENV, sys.executable)
    assert resolve_test_command(case(tmp_path), tmp_path)[0] == str(own)


def test_a_chosen_interpreter_that_is_not_there_is_a_case_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(PYTHON_ENV, str(tmp_path / "nope"))
    with pytest.raises(CaseError, match=f"^{PYTHON_ENV}=.* is not an interpreter: name a python"):
        resolve_test_command(case(tmp_path), tmp_path)
