"""The tamper guard treats every pytest configuration file, conftest.py and interpreter start-up hook as
test configuration, and names code under test that reaches into pytest or the report plugin."""

from __future__ import annotations

import pytest

from fixloop.project import is_test_config, is_whole_test_config
from fixloop.result import FileChange
from fixloop.verify import tamper_reasons


def never_a_test(rel: str) -> bool:
    return False


CONFIG_AND_STARTUP = [
    "pytest.toml",
    ".pytest.toml",
    "pytest.ini",
    ".pytest.ini",
    "sub/pytest.ini",
    "sitecustomize.py",
    "usercustomize.py",
    "src/evil.pth",
]


@pytest.mark.parametrize("path", CONFIG_AND_STARTUP)
def test_a_new_config_or_startup_file_is_rejected_by_name(path):
    (reason,) = tamper_reasons([FileChange(path, None, "[pytest]\naddopts = -p x\n")], never_a_test)
    assert reason.startswith(f"{path}: ")
    assert "configuration" in reason or "start-up hook" in reason
    assert is_test_config(path) and is_whole_test_config(path)


@pytest.mark.parametrize(
    ("path", "old", "new"),
    [
        ("pyproject.toml", "[project]\n", "[project]\n[tool.pytest]\naddopts = ['-p', 'x']\n"),
        ("pyproject.toml", "[tool.pytest.ini_options]\nx = 1\n", "[tool.pytest.ini_options]\nx = 2\n"),
        ("tox.ini", "[tox]\n", "[tox]\n[pytest]\naddopts = -p x\n"),
        ("setup.cfg", "[metadata]\n", "[metadata]\n[tool:pytest]\naddopts = -p x\n"),
    ],
)
def test_a_changed_pytest_section_is_rejected(path, old, new):
    (reason,) = tamper_reasons([FileChange(path, old, new)], never_a_test)
    assert "pytest configuration section changed" in reason
    assert is_test_config(path) and not is_whole_test_config(path)


def test_other_sections_of_shared_config_files_may_change():
    change = FileChange("pyproject.toml", "[project]\nversion = '1'\n", "[project]\nversion = '2'\n")
    assert tamper_reasons([change], never_a_test) == []


@pytest.mark.parametrize(
    ("line", "named"),
    [
        ("import _pytest.reports", "_pytest"),
        ("from _pytest.runner import CallInfo", "_pytest"),
        ("pytest.TestReport.from_item_and_call = x", "pytest's internals"),
        ("def pytest_runtest_makereport(item, call):", "defines a pytest hook"),
        ("@pytest.hookimpl(hookwrapper=True)", "pytest's internals"),
        ("pytest_plugins = ['x']", "loads pytest plugins"),
        ("import pluggy", "pluggy"),
        ("sys.modules['json'] = fake", "rewrites sys.modules"),
        ("sys.modules.pop('x')", "rewrites sys.modules"),
        ("r = sys.modules.get('fixloop_pytest_report')", "report plugin"),
        ("os.environ.pop('FIXLOOP_REPORT_FILE')", "report plugin"),
        ("builtins.AssertionError = Warning", "replaces a builtin"),
        ("caller = sys._getframe(1)", "callers' frames"),
        ("from pytest import TestReport", "pytest"),
    ],
)
def test_code_under_test_reaching_into_the_runner_is_named(line, named):
    change = FileChange("calc/core.py", "def f():\n    return 1\n", f"{line}\n\ndef f():\n    return 1\n")
    (reason,) = tamper_reasons([change], never_a_test)
    assert reason.startswith("calc/core.py: line 1 ") and named in reason


def test_the_same_names_in_unchanged_lines_are_left_alone():
    text = "import _pytest\nsys.modules['x'] = y\n\ndef f():\n    return 1\n"
    change = FileChange("calc/core.py", text, text.replace("return 1", "return 2"))
    assert tamper_reasons([change], never_a_test) == []
