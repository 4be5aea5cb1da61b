"""The command line's manners: every option explained (with its environment variable where it is a setting),
examples in `fix --help`, `-v` after the command, `--json` printing a FixResult on every outcome, "already
passes" with its own exit code, and `fixloop doctor` saying ✓ or ✗ with the fix for each thing a fix needs."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from fixloop.cli import EXIT_NOTHING_TO_FIX, build_parser, main
from fixloop.config import setting_names
from support import fix_script, load_fix

TARGET = load_fix("demo")["test_ids"][0]
PASSING = load_fix("demo")["passing"][0]


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    found: dict[str, argparse.ArgumentParser] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found[name] = sub
                found.update({f"{name} {inner}": p for inner, p in _subparsers(sub).items()})
    return found


def test_every_option_has_help_and_settings_name_their_environment_variable():
    settings = set(setting_names())
    commands = _subparsers(build_parser())
    assert {"serve", "fix", "doctor", "models", "bench", "demo", "model pull", "model list"} <= set(commands)
    for name, parser in commands.items():
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction) or action.dest == "help":
                continue
            assert action.help and action.help != argparse.SUPPRESS, f"fixloop {name} {action.dest}: no help"
            if action.dest in settings and action.option_strings:
                assert "[env: FIXLOOP_" in action.help, f"fixloop {name} {action.option_strings}: no env"


def test_fix_help_ends_with_examples_and_exit_codes(capsys):
    with pytest.raises(SystemExit):
        main(["fix", "--help"])
    out = capsys.readouterr().out
    tail = out[out.index("examples:") :]
    assert "fixloop fix tests/test_x.py::test_y --apply" in tail and "3 nothing to fix" in tail


@pytest.mark.parametrize(
    "argv", [["-v", "doctor"], ["doctor", "-v"], ["model", "list", "-v"], ["fix", "t.py::t", "-v"]]
)
def test_verbose_is_taken_before_or_after_the_command(argv):
    assert build_parser().parse_args(argv).verbose is True
    assert build_parser().parse_args([arg for arg in argv if arg != "-v"]).verbose is False


def _json_run(argv: list[str], capsys) -> tuple[int, dict, str]:
    code = main([*argv, "--json", "-q"])
    out, err = capsys.readouterr()
    return code, json.loads(out), err


def test_json_is_a_fix_result_for_every_error(
    tmp_path: Path, fixture_project, scripted_model, monkeypatch, capsys
):
    monkeypatch.setenv("FIXLOOP_MODEL", "scripted")
    monkeypatch.setenv("FIXLOOP_BASE_URL", scripted_model([]).base_url)
    root = fixture_project("demo")
    dead = "http://127.0.0.1:9/v1"
    cases = [
        (["fix", TARGET, "--root", str(tmp_path / "nowhere")], 2, "PathError", "is not a directory"),
        (["fix", "tests/test_nope.py::test_x", "--root", str(root)], 2, "TestRunError", "test_nope.py"),
        (["fix", TARGET, "--root", str(root), "--max-steps", "0"], 2, "ConfigError", "maxSteps"),
        (["fix", TARGET, "--root", str(root), "--base-url", dead], 2, "ModelError", f"cannot reach {dead}"),
    ]
    for argv, exit_code, kind, text in cases:
        code, result, err = _json_run(argv, capsys)
        assert code == exit_code, (argv, err)
        assert result["status"] == "error" and result["error"]["kind"] == kind, (argv, result)
        assert text in result["error"]["message"] and result["summary"] == result["error"]["message"]
        assert err.count("\n") == 1 and err.startswith("fixloop: "), err
        assert result["testIds"] and result["runId"] and result["diff"] == ""


def test_json_is_a_fix_result_for_a_bad_option_too(capsys):
    with pytest.raises(SystemExit) as exited:
        main(["fix", TARGET, "--max-steps", "many", "--json"])
    out, err = capsys.readouterr()
    result = json.loads(out)
    assert exited.value.code == 2 and result["status"] == "error" and result["testIds"] == [TARGET]
    message = "argument --max-steps: invalid int value: 'many'"
    assert result["error"] == {"kind": "UsageError", "message": message}
    assert err.rstrip().endswith(f"fixloop fix: error: {message}")


def test_tests_that_already_pass_exit_3_with_a_result(fixture_project, scripted_model, monkeypatch, capsys):
    server = scripted_model(fix_script("demo"))
    monkeypatch.setenv("FIXLOOP_MODEL", "scripted")
    monkeypatch.setenv("FIXLOOP_BASE_URL", server.base_url)
    code, result, err = _json_run(["fix", PASSING, "--root", str(fixture_project("demo"))], capsys)
    assert code == EXIT_NOTHING_TO_FIX == 3
    assert result["error"]["kind"] == "NothingToFix" and "already passes" in result["error"]["message"]
    assert "nothing to fix" in err and server.requests == []


def _doctor(capsys, *argv: str) -> tuple[int, dict[str, str]]:
    code = main(["doctor", *argv])
    lines = capsys.readouterr().out.splitlines()
    return code, {line.split(":", 1)[0][2:]: line for line in lines}


def test_doctor_passes_where_everything_is_there(tmp_path, scripted_model, monkeypatch, capsys):
    server = scripted_model([])
    monkeypatch.setenv("FIXLOOP_MODEL", "scripted")
    monkeypatch.setenv("FIXLOOP_BASE_URL", server.base_url)
    code, checks = _doctor(capsys, "--root", str(tmp_path))
    assert code == 0, checks
    assert list(checks) == [
        "python",
        "pytest",
        "git",
        "protections",
        "endpoint",
        "model",
        "key",
        "local model",
    ]
    assert all(line[0] in "✓–" for line in checks.values()), checks
    assert "'scripted' is listed" in checks["model"] and checks["local model"].startswith("– ")


def test_doctor_names_each_missing_thing_with_its_fix(tmp_path, scripted_model, monkeypatch, capsys):
    monkeypatch.delenv("FIXLOOP_MODEL", raising=False)
    monkeypatch.setenv("FIXLOOP_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("PATH", str(tmp_path))  # no git, no python on PATH: fixloop's own interpreter
    code, checks = _doctor(capsys, "--root", str(tmp_path))
    assert code == 1
    assert checks["git"].startswith("✗ git: not found") and "— fix: install git" in checks["git"]
    assert checks["endpoint"].startswith("✗ endpoint: cannot reach http://127.0.0.1:9/v1: connection refused")
    assert checks["model"].startswith("✗ model: no model configured — fix: set FIXLOOP_MODEL")
    assert checks["python"].startswith("✓ python:") and checks["pytest"].startswith("✓ pytest:")

    server = scripted_model({"model": "served", "turns": []}, flavour="openai")
    monkeypatch.setenv("FIXLOOP_BASE_URL", server.base_url)
    code, checks = _doctor(capsys, "--root", str(tmp_path), "--model", "served")
    assert code == 1 and checks["key"].startswith("✗ key: none set") and "— fix:" in checks["key"]
    assert checks["endpoint"].startswith("✓ endpoint:")


def test_doctor_checks_the_local_model(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("FIXLOOP_MODELS_DIR", str(tmp_path / "models"))
    code, checks = _doctor(capsys, "--root", str(tmp_path), "--model", "local")
    assert code == 1
    assert (
        checks["local model"].startswith("✗ local model:")
        and "fix: fixloop model pull" in checks["local model"]
    )
    assert checks["key"].startswith("✓ key: none needed")
