"""One rule says what is test code: the gate, the tools, the warm start and the edit annotation share it."""

from __future__ import annotations

import pytest

from fixloop.project import is_test_path, module_map, module_names, outside_sources

# (path relative to the project root, is it test code?)
CLASSIFIED = [
    ("tests/test_calc.py", True),
    ("test_calc.py", True),
    ("calc_test.py", True),
    ("pkg/test_x.py", True),
    ("pkg/x_test.py", True),
    ("conftest.py", True),
    ("pkg/conftest.py", True),
    ("tests/conftest.py", True),
    ("tests/helpers.py", True),
    ("tests/data/input.json", True),
    ("test/test_x.py", True),
    ("test/helpers.py", True),
    ("src/pkg/tests/test_unit.py", True),
    ("src/pkg/tests/__init__.py", True),
    ("pkg/test/fixtures.txt", True),
    ("tests\\test_windows.py", True),
    ("tests/deep/er/module.py", True),
    ("calc.py", False),
    ("src/pkg/latest.py", False),
    ("src/calc.py", False),
    ("src/testing_utils.py", False),
    ("testing/helpers.py", False),
    ("pkg/testing/helpers.py", False),
    ("pkg/test_data.txt", False),
    ("test_notes.md", False),
    ("contest.py", False),
    ("conftest.txt", False),
    ("pkg/mytests/x.py", False),
    ("pkg/tests_util.py", False),
    ("tested.py", False),
    ("attest.py", False),
    ("pkg/testsuite/x.py", False),
    ("docs/tests.md", False),
    ("", False),
]


@pytest.mark.parametrize(("path", "expected"), CLASSIFIED)
def test_a_path_is_test_code_by_the_gates_rule(path: str, expected: bool) -> None:
    assert is_test_path(path) is expected


def test_the_table_pins_enough_paths() -> None:
    assert len(CLASSIFIED) >= 30


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("src/pkg/m.py", False),
        (".venv/lib/x.py", True),
        ("build/lib/pkg/m.py", True),
        ("dist/pkg/m.py", True),
        ("node_modules/x/y.py", True),
        (".hidden/m.py", True),
        ("env/lib/python3.11/site-packages/m.py", True),
        ("pkg/__pycache__/m.py", True),
        ("m.py", False),
    ],
)
def test_sources_never_come_from_environments_caches_or_build_outputs(path: str, expected: bool) -> None:
    assert outside_sources(path) is expected


def test_a_module_is_the_file_nearest_the_root() -> None:
    assert module_names("src/pkg/m.py") == {"src.pkg.m", "pkg.m", "m"}
    assert module_names("pkg/__init__.py") == {"pkg"}
    files = ["src/pkg/m.py", "pkg/m.py", "vendor/other/pkg/m.py"]
    assert module_map(files)["pkg.m"] == "pkg/m.py"
