"""A test's project is the nearest pytest root above its file inside the workspace folder (pytest's
configfile rules first, then the nearest packaging file); node ids and paths map between the two."""

from __future__ import annotations

from pathlib import Path

import pytest

from fixloop.errors import PathError
from fixloop.project_root import locate, project_root, top_level_modules
from support import write_project


def test_the_nearest_folder_with_pytest_configuration_is_the_project(tmp_path: Path) -> None:
    write_project(
        tmp_path,
        {
            "pytest.ini": "[pytest]\n",
            "packages/a/pyproject.toml": "[tool.pytest.ini_options]\ntestpaths = ['tests']\n",
            "packages/a/tests/test_a.py": "",
            "packages/b/setup.cfg": "[tool:pytest]\n",
            "packages/b/tests/unit/test_b.py": "",
            "packages/c/tox.ini": "[pytest]\n",
            "packages/c/test_c.py": "",
            "packages/d/pyproject.toml": "[project]\nname = 'd'\n",  # packaging only: pytest goes on up
            "packages/d/tests/test_d.py": "",
            "tests/test_top.py": "",
        },
    )
    assert project_root(tmp_path, tmp_path / "packages/a/tests/test_a.py") == tmp_path / "packages/a"
    assert project_root(tmp_path, tmp_path / "packages/b/tests/unit/test_b.py") == tmp_path / "packages/b"
    assert project_root(tmp_path, tmp_path / "packages/c/test_c.py") == tmp_path / "packages/c"
    assert project_root(tmp_path, tmp_path / "packages/d/tests/test_d.py") == tmp_path
    assert project_root(tmp_path, tmp_path / "tests/test_top.py") == tmp_path


def test_without_pytest_configuration_the_nearest_packaging_file_decides(tmp_path: Path) -> None:
    write_project(
        tmp_path,
        {
            "services/api/pyproject.toml": "[project]\nname = 'api'\n",
            "services/api/tests/test_api.py": "",
            "scripts/test_tool.py": "",
        },
    )
    assert project_root(tmp_path, tmp_path / "services/api/tests/test_api.py") == tmp_path / "services/api"
    assert project_root(tmp_path, tmp_path / "scripts/test_tool.py") == tmp_path  # none: the workspace


def test_nothing_above_the_workspace_folder_counts(tmp_path: Path) -> None:
    write_project(tmp_path, {"pytest.ini": "[pytest]\n", "work/tests/test_x.py": ""})
    assert project_root(tmp_path / "work", tmp_path / "work/tests/test_x.py") == tmp_path / "work"


def test_ids_and_paths_map_between_the_workspace_and_the_project(tmp_path: Path) -> None:
    write_project(
        tmp_path,
        {"packages/app/pyproject.toml": "[tool.pytest.ini_options]\n", "packages/app/tests/test_app.py": ""},
    )
    target = locate(tmp_path, ["packages/app/tests/test_app.py::test_x[1-2]"])
    assert target.root == tmp_path / "packages/app" and target.prefix == "packages/app/"
    assert target.test_ids == ("tests/test_app.py::test_x[1-2]",)
    assert target.to_workspace("app/words.py") == "packages/app/app/words.py"
    assert target.to_project("packages/app/app/words.py") == "app/words.py"
    assert target.to_project("packages/core/core.py") is None


def test_tests_of_two_projects_are_refused_in_one_run(tmp_path: Path) -> None:
    write_project(
        tmp_path,
        {"a/pytest.ini": "[pytest]\n", "a/test_a.py": "", "b/pytest.ini": "[pytest]\n", "b/test_b.py": ""},
    )
    with pytest.raises(PathError, match=r"^the tests belong to different projects \(a, b\): fix one"):
        locate(tmp_path, ["a/test_a.py::test_x", "b/test_b.py::test_y"])


def test_the_projects_top_level_modules_are_the_names_it_can_be_imported_as(tmp_path: Path) -> None:
    write_project(
        tmp_path,
        {
            "src/pkg/__init__.py": "",
            "src/pkg/sub/__init__.py": "",
            "src/pkg/attr.py": "",
            "lib/tool.py": "",
            "setup.py": "",
            "tests/requests.py": "",
            "conftest.py": "",
        },
    )
    assert top_level_modules(tmp_path) == {"pkg": "src/pkg", "tool": "lib/tool.py"}
